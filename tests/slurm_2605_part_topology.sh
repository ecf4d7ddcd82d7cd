#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# select/cons_tres_topoaware on Slurm 26.05.3 follows each partition's topology (topology.yaml):
# a 16-node cluster of four NVLink domains of 4 hosts (one per leaf), topology.yaml written by
# topoaware convert --yaml with the tree ("fabric", cluster_default) changed so that n0004 hangs
# under leaf002, plus a flat topology "none"; partitions "main" (tree), "nvl" (block "nvlink") and
# "plainp" (flat). Checks, in slurmctld's log at start: one rule line per partition (tree and block
# placed, flat left to plain cons_tres), the tree's disagreements with topology.json (leaf002 mixes
# leaf groups, leaf001's group split), no disagreement for the blocks, and none of it logged again
# per job; a layout job in "nvl", with n0001 busy, gets one whole block.
# Needs the plugins built against Slurm 26.05.3 (configure --with-slurm-source=<its configured tree>,
# e.g. $TOPOAWARE_CACHE/slurm-src/26.05.3/slurm-26.05.3); other builds skip.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_release.sh"
ta_require_daemon_tests
version=26.05.3
b=${top_builddir:-.}
b=$(cd "$b" && pwd)
[ "${TOPOAWARE_SLURM_RELEASE:-}" = "$version" ] ||
  ta_skip "this build's plugins are for Slurm ${TOPOAWARE_SLURM_RELEASE:-(none)}, the test needs them built for $version (configure --with-slurm-source=<the configured $version tree>)"
[ -f "$b/plugins/select/.libs/select_cons_tres_topoaware.so" ] || ta_skip "select plugins not built"
[ -f "$b/plugins/spank/.libs/spank_topoaware.so" ] || ta_skip "spank_topoaware.so not built"
[ -x "$b/topoaware" ] || ta_fail "topoaware (the command) not built"
slurm_release_require "$version"
slurm_release_require_yaml

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-parttopo.XXXXXX")
ta_on_exit "rm -rf '$work'"
mkdir -p "$work/plugins" && chmod 0755 "$work"
for so in "$b"/plugins/select/.libs/*.so; do ln -s "$so" "$work/plugins/$(basename "$so")"; done
mkdir -m 0755 "$work/state"
echo "required $b/plugins/spank/.libs/spank_topoaware.so state_dir=$work/state" >"$work/plugstack.conf"
"$b/topoaware" generate fat-tree --leaves 4 --hosts-per-leaf 4 --nvlink-domain-size 4 --nvlink-gpus-per-node 4 \
  --json "$work/topology.json" >/dev/null || ta_fail "generate"
"$b/topoaware" convert "$work/topology.json" --yaml "$work/topology.yaml" || ta_fail "convert --yaml"
# The tree disagrees with topology.json: n0004 under leaf002.
sed -i -e 's/"n\[0001-0004\]"/"n[0001-0003]"/' -e 's/"n\[0005-0008\]"/"n[0004-0008]"/' "$work/topology.yaml"
# ... but only in the tree: the blocks keep their nodes.
sed -i -e '/block: "nvl0"/{n;s/.*/        nodes: "n[0001-0004]"/}' -e '/block: "nvl1"/{n;s/.*/        nodes: "n[0005-0008]"/}' \
  "$work/topology.yaml"
printf '%s\n' '- topology: "none"' '  cluster_default: false' '  flat: true' >>"$work/topology.yaml"
grep -q 'switch: "leaf002"' "$work/topology.yaml" && grep -q '"n\[0004-0008\]"' "$work/topology.yaml" ||
  ta_fail "topology.yaml not as expected: $(cat "$work/topology.yaml")"

slurm_release_cluster_start --nodes 16 --width 4 --gpus 4 --plugin-dir "$work/plugins" \
  --plugstack "$work/plugstack.conf" --conf "SelectType=select/cons_tres_topoaware" \
  --file "topology.yaml=$work/topology.yaml" --file "topology.json=$work/topology.json" \
  --conf "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP" \
  --conf "PartitionName=nvl Nodes=ALL Topology=nvlink MaxTime=INFINITE State=UP" \
  --conf "PartitionName=plainp Nodes=ALL Topology=none MaxTime=INFINITE State=UP"
log=$CLUSTER_LOGDIR/slurmctld.log
TA='select/cons_tres_topoaware'
lines() { grep -c -F "$1" "$log" || true; }
expect_once() {
  local n
  n=$(lines "$1")
  [ "$n" = 1 ] || { grep -F "$TA: partition" "$log" | sed 's/^/log: /'; ta_fail "'$1' logged $n times, expected once"; }
}
# The loader logs when it swaps the topology in (node_init waits up to 200 ms for it).
for _ in $(seq 50); do grep -qF "$TA: partition plainp" "$log" && break; sleep 0.2; done
grep -F "$TA: partition" "$log" | sed 's/^.*cons_tres_topoaware: //; s/^/log: /'
expect_once "$TA: partition main, Slurm topology the cluster default (tree): tree: placed by topology.json"
expect_once "$TA: partition nvl, Slurm topology nvlink (block): block: placed by topology.json"
expect_once "$TA: partition plainp, Slurm topology none (flat): flat: plain select/cons_tres"
expect_once "$TA: partition main: Slurm topology the cluster default disagrees with topology.json: 1 Slurm switch holds hosts of several topology.json leaf groups (leaf002)"
expect_once "$TA: partition main: Slurm topology the cluster default disagrees with topology.json: 1 topology.json leaf group is split over several Slurm switches (leaves leaf001)"
[ "$(lines "$TA: partition nvl: Slurm topology nvlink disagrees")" = 0 ] ||
  ta_fail "the block topology agrees with topology.json's NVLink domains, yet a disagreement was logged"

# n0001 busy: a 4-node layout job in nvl gets one whole free block (nvl1..nvl3), never n0002-n0005.
busy=$(cluster_run sbatch --parsable -p main -w n0001 --exclusive --wrap 'sleep 600')
cluster_wait_job "$busy" 60 RUNNING >/dev/null
job=$(cluster_run sbatch --parsable -p nvl -N4 --exclusive --gpus-per-node=4 --ntasks-per-node=4 --tp=4 --dp=4 \
  --wrap 'sleep 600')
cluster_wait_job "$job" 60 RUNNING >/dev/null || ta_fail "layout job $job in nvl did not start"
nodes=$(cluster_run squeue -h -j "$job" -o %N)
case $nodes in
  "n[0005-0008]"|"n[0009-0012]"|"n[0013-0016]") ;;
  *) ta_fail "layout job in nvl got $nodes, expected one whole block (n[0005-0008], n[0009-0012] or n[0013-0016])" ;;
esac
# A layout job in plainp: plain cons_tres, and not logged per job.
plain=$(cluster_run sbatch --parsable -p plainp -N2 --gpus-per-node=4 --ntasks-per-node=4 --tp=4 --dp=2 \
  --wrap 'sleep 600')
cluster_wait_job "$plain" 60 RUNNING >/dev/null || ta_fail "layout job $plain in plainp did not start"
expect_once "$TA: partition plainp, Slurm topology none (flat)"
if grep -F "JobId=$plain" "$log" | grep -F "partition's Slurm topology"; then
  ta_fail "job $plain's plain placement was logged per job"
fi
expect_once "$TA: partition main: Slurm topology the cluster default disagrees with topology.json: 1 Slurm switch"
if grep -iE 'error.*(topolog|yaml)|(topolog|yaml).*error' "$log"; then ta_fail "slurmctld logged topology errors"; fi
ta_pass "26.05.3: partition rules logged once (tree, block placed; flat plain), the tree's 2 disagreements named, the block partition's layout job got $nodes"
