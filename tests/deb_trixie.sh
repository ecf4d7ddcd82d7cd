#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages built and installed inside Debian trixie (Slurm 24.11.5, tests/lib/trixie.sh),
# against the upstream Slurm 24.11.5 source tree (the release of trixie's slurm-wlm 24.11.5-4+deb13u1,
# whose own source package is not reachable): the build dependencies are installed into the shared
# root once (cached, its own marker), the tarball's sha256 is checked against
# tools/slurm-releases.txt and it is configured once inside the root. The packages are built inside
# the root once per source hash (trixie_topoaware_build, a build shared with tools/trixie-tests.sh)
# and installed with apt-get in an overlay of the root (the shared root never holds them), and a
# localhost 24.11 cluster runs from the installed files: stock cons_tres + topology/tree places a
# tp/pp/dp job (noted), select/cons_tres_topoaware places it on 2 + 2 leaves under topology/tree and
# inside one block under topology/block (an idle cluster there: see below); job_submit/topoaware
# refuses a bad layout and takes a good one (gres/gpu:8 in 24.11's requests); tasks get their
# coordinates from spank_topoaware.so.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/trixie.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/deb_checks.sh"
ta_require_daemon_tests
ta_require_cmd debootstrap debootstrap
src=$(cd "${top_srcdir:-$(dirname "$0")/..}" && pwd)
b=$(cd "${top_builddir:-.}" && pwd)

prep() { # prep WHAT FUNCTION ARGS...: 0 goes on, 2 skips, anything else fails
  local what=$1 rc=0 t0=$SECONDS; shift
  "$@" || rc=$?
  case $rc in
    0) ta_note "$what: $((SECONDS - t0)) s" ;;
    2) ta_skip "$TRIXIE_WHY" ;;
    *) ta_fail "$what: $TRIXIE_WHY" ;;
  esac
}
prep "trixie root" trixie_root_prepare
# The packages: the build of this source tree for the root's Slurm, made once per source hash and
# shared with tools/trixie-tests.sh (build dependencies and the Slurm tree prepared first).
prep "packages built in the root (cached per source hash)" trixie_topoaware_build "$src" "$b"
[ "$TRIXIE_TA_SECONDS" -eq 0 ] || ta_note "dpkg-buildpackage inside the root: $TRIXIE_TA_SECONDS s"
version=$(trixie_slurm_version)
ta_note "Slurm $version in $TRIXIE_ROOT, source tree $TRIXIE_SLURM_SRC, build $TRIXIE_TA_BUILD"
# The plugins this test runs are the ones built in the root for that release, not this build's
# (cluster_start skips a cluster whose slurmctld is not the release the plugins are for).
export TOPOAWARE_SLURM_RELEASE=$version

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-debtrixie.XXXXXX")
ta_on_exit "rm -rf '$work'"
trixie_overlay "$work" || ta_fail "$TRIXIE_WHY"
root=$TRIXIE_ROOT
deb_stage_in_root "$root" "$TRIXIE_TA_BUILD"
plugindir=$DEB_PLUGINDIR
deb_check_packages "$root/build" "$plugindir" "$version"

deb_install_in_root "$root"
for f in spank_topoaware.so job_submit_topoaware.so select_cons_tres_topoaware.so; do
  [ -f "$root$plugindir/$f" ] || ta_fail "installed, but $plugindir/$f is missing"
done
ta_pass "installed in the $TRIXIE_SUITE root with apt-get (Slurm $version): $(basename "$DEB_CMD")," \
  "$(basename "$DEB_PLUGINS")"

deb_fabric "$root" /tmp/ta-fabric /usr/bin/topoaware "$plugindir"
f=/tmp/ta-fabric
# run SELECTTYPE TOPOLOGYPLUGIN CONF TAG: a 16-node cluster from the installed files; places the
# tp=8 pp=2 dp=2 job and keeps its nodes in $work/B.TAG; the cluster stays up.
run() {
  trixie_cluster_start --nodes 16 --width 4 --gpus 8 --plugstack "$root$f/plugstack.conf" \
    --topology "$root$f/$3" --file "topology.json=$root$f/topology.json" \
    --conf "SelectType=$1" --conf "TopologyPlugin=$2" --conf JobSubmitPlugins=topoaware
  deb_place "$work/B.$4"
  ta_note "$1 + $2: the tp=8 pp=2 dp=2 job got $(echo $(cat "$work/B.$4")) ($(deb_leaf_counts "$work/B.$4"))"
}
( trap trixie_cluster_stop EXIT; run select/cons_tres topology/tree topology.conf stock )

run select/cons_tres_topoaware topology/tree topology.conf tree
grep -q 'select/cons_tres_topoaware: topology .*topology.json loaded (16 hosts' "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "slurmctld $version did not load the topology with the installed select plugin"
[ "$(deb_leaf_counts "$work/B.tree")" = "2 2" ] ||
  ta_fail "Slurm $version, select/cons_tres_topoaware + topology/tree: the job got $(echo $(cat "$work/B.tree"))," \
    "expected 2 + 2 leaves"
ta_pass "Slurm $version: installed select/cons_tres_topoaware places tp=8 pp=2 dp=2 on 2 + 2 leaves" \
  "($(echo $(cat "$work/B.tree")); stock cons_tres + tree: $(deb_leaf_counts "$work/B.stock"))"
deb_refuse
deb_task_env
trixie_cluster_stop

# topology/block takes a 4-node job only inside one free block of 4 (BlockSizes=4,8,16), which the
# busy nodes above leave nowhere: on an idle cluster, both plugins agree on one block (one leaf).
( trap trixie_cluster_stop EXIT
  trixie_cluster_start --nodes 16 --width 4 --gpus 8 --plugstack "$root$f/plugstack.conf" \
    --topology "$root$f/block.conf" --file "topology.json=$root$f/topology.json" \
    --conf SelectType=select/cons_tres_topoaware --conf TopologyPlugin=topology/block --conf JobSubmitPlugins=topoaware
  deb_place "$work/B.block" idle
  [ "$(deb_leaf_counts "$work/B.block")" = 4 ] ||
    ta_fail "Slurm $version, select/cons_tres_topoaware + topology/block: the job got $(echo $(cat "$work/B.block"))," \
      "not one block"
)
ta_pass "Slurm $version: installed select/cons_tres_topoaware + topology/block places it inside one block" \
  "($(echo $(cat "$work/B.block")))"
