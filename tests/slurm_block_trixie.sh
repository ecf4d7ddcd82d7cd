#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topology/block: a block-form topology.conf must load in a real Slurm 24.11 slurmctld (Debian trixie,
# in a debootstrap root: Slurm 22.05 on the host has no topology/block).
#
#   tests/slurm_block_trixie.sh [TOPOLOGY_CONF]     (or TOPOLOGY_CONF_BLOCK=FILE)
#
# Without a file, a hand-written one is used: 4 blocks of 4 nodes, BlockSizes=4,8,16. With a file
# (e.g. one `topoaware` generated), the cluster gets exactly the nodes that file names.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/trixie.sh"
ta_require_daemon_tests
ta_require_cmd debootstrap debootstrap

conf=${1:-${TOPOLOGY_CONF_BLOCK:-}}
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-block.XXXXXX")
ta_on_exit "rm -rf '$work'"
if [ -z "$conf" ]; then
  conf=$work/topology.conf
  cat >"$conf" <<'EOF'
# Four blocks of four nodes; jobs may take a block, two adjacent blocks or all four.
BlockName=b1 Nodes=n[01-04]
BlockName=b2 Nodes=n[05-08]
BlockName=b3 Nodes=n[09-12]
BlockName=b4 Nodes=n[13-16]
BlockSizes=4,8,16
EOF
fi
[ -r "$conf" ] || ta_fail "cannot read topology file $conf"

rc=0
trixie_root_prepare || rc=$?
case $rc in
  0) ;;
  2) ta_skip "$TRIXIE_WHY" ;;
  *) ta_fail "could not prepare the trixie root: $TRIXIE_WHY" ;;
esac
version=$(trixie_slurm_version)
ta_note "Slurm $version in $TRIXIE_ROOT"
case $version in
  2[4-9].*|[3-9][0-9].*) ;;
  *) ta_fail "the trixie root has Slurm '$version'; topology/block with BlockSizes needs 24.05 or later" ;;
esac

# Node names: those the file names (ta_hostnames expands host lists as scontrol would).
blocks=$(grep -E '^[[:space:]]*BlockName=' "$conf" | sed 's/#.*//')
[ -n "$blocks" ] || ta_fail "$conf has no BlockName= lines"
hostlists=$(echo "$blocks" | sed -n 's/.*[[:space:]]Nodes=\([^[:space:]]*\).*/\1/p' | paste -sd, -)
names=$(ta_hostnames "$hostlists" | tr '\n' ' ')
nnodes=$(echo "$names" | wc -w)
[ "$nnodes" -ge 1 ] || ta_fail "no nodes named in $conf"
nblocks=$(echo "$blocks" | wc -l)
ta_note "$conf: $nblocks blocks, $nnodes nodes"

trixie_cluster_start --names "$names" --topology "$conf" --conf TopologyPlugin=topology/block

# 1. slurmctld took the file without complaint: no error at all in its log, apart from the notes
#    about a fresh (empty) state folder.
log=$CLUSTER_LOGDIR/slurmctld.log
benign_re='Could not open (job|reservation|node|trigger|resv|part|burst_buffer)[a-z_ ]* state file'
benign_re+='|Trying backup state save file|High latency for [0-9]+ calls to gettimeofday'
errors=$(grep -E 'error|fatal' "$log" |
  grep -vE "$benign_re" || true)
if [ -n "$errors" ]; then
  echo "$errors" >&2
  ta_fail "slurmctld logged errors with this topology.conf (above)"
fi

# 2. It lists every block with its nodes.
topo=$(cluster_run scontrol show topology)
echo "$topo" | sed 's/^/scontrol show topology: /'
while read -r line; do
  name=$(echo "$line" | sed -n 's/.*BlockName=\([^[:space:]]*\).*/\1/p')
  want=$(echo "$line" | sed -n 's/.*Nodes=\([^[:space:]]*\).*/\1/p')
  got=$(echo "$topo" | grep -E "BlockName=$name( |$)" | sed -n 's/.*Nodes=\([^[:space:]]*\).*/\1/p' | head -n1)
  [ -n "$got" ] || ta_fail "scontrol show topology does not list block $name"
  want_n=$(ta_hostnames "$want" | sort | tr '\n' ' ')
  got_n=$(ta_hostnames "$got" | sort | tr '\n' ' ')
  [ "$want_n" = "$got_n" ] || ta_fail "block $name: Slurm has nodes $got, the file says $want"
done <<<"$blocks"
# BlockSizes: every size the file asks for exists as a (possibly aggregated) block.
sizes=$(sed -n 's/^[[:space:]]*BlockSizes=\([0-9,]*\).*/\1/p' "$conf" | tr ',' ' ')
for sz in $sizes; do
  grep -q "BlockSize=$sz\( \|\$\)" <<<"$topo" || ta_fail "BlockSizes has $sz but Slurm shows no block of size $sz"
done
ta_pass "topology/block in Slurm $version: all $nblocks blocks listed with their nodes${sizes:+, block sizes $sizes}"

# 3. A job of one block's size runs inside one block (the plugin really places by the file).
first=$(echo "$blocks" | head -n1 | sed -n 's/.*Nodes=\([^[:space:]]*\).*/\1/p')
bsize=$(ta_hostnames "$first" | wc -l)
got=$(cluster_run srun -N"$bsize" --ntasks-per-node=1 sh -c 'echo $SLURMD_NODENAME' | sort)
[ "$(echo "$got" | wc -l)" -eq "$bsize" ] || ta_fail "srun -N$bsize gave $(echo "$got" | wc -l) tasks"
inside=no
while read -r line; do
  members=$(ta_hostnames "$(echo "$line" | sed -n 's/.*Nodes=\([^[:space:]]*\).*/\1/p')" | sort)
  # Inside this block = no node of the job is outside it.
  [ -n "$(comm -23 <(echo "$got") <(echo "$members"))" ] || inside=yes
done <<<"$blocks"
[ "$inside" = yes ] || ta_fail "srun -N$bsize got $(echo $got), which is not inside one block"
ta_pass "srun -N$bsize ran inside one block ($(echo $got))"
