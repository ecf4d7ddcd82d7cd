#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Stock Slurm 26.05.3 reads the topology.yaml topoaware writes: a 16-node localhost cluster of four
# generated NVLink domains of 4 hosts (under four leaves) with topology.yaml beside slurm.conf and no
# TopologyPlugin; partition "nvl" uses the "nvlink" block topology, the default partition the tree
# ("fabric", cluster_default). slurmctld comes up without topology errors, lists both topologies,
# and a 4-node job in "nvl" gets one whole NVLink domain.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_release.sh"
ta_require_daemon_tests
version=26.05.3
slurm_release_require "$version"
slurm_release_require_yaml
bin="$top_builddir/topoaware"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-yaml.XXXXXX")
ta_on_exit "rm -rf '$work'"
# Hosts n0001..n0016: four domains of 4, each under its own leaf.
"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --nvlink-domain-size 4 --json "$work/t.json" >/dev/null ||
  ta_fail "generate"
"$bin" convert "$work/t.json" --yaml "$work/topology.yaml" || ta_fail "convert --yaml"
grep -q '^      - 16$' "$work/topology.yaml" || ta_fail "block_sizes are not 4, 8, 16: $(cat "$work/topology.yaml")"
t0=$SECONDS
slurm_release_cluster_start --nodes 16 --width 4 --gpus 4 --file "topology.yaml=$work/topology.yaml" \
  --conf "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP" \
  --conf "PartitionName=nvl Nodes=ALL Topology=nvlink MaxTime=INFINITE State=UP"
ta_note "cluster of 16 nodes up in $((SECONDS - t0)) s with topology.yaml"
# `scontrol show topology` shows the cluster_default one; another by its name (26.05's scontrol(1)).
topo=$(cluster_run scontrol show topology)
echo "$topo" | sed 's/^/scontrol show topology: /'
grep -q 'SwitchName=leaf001 .*Nodes=n\[0001-0004\]' <<<"$topo" ||
  ta_fail "scontrol show topology (cluster_default: fabric) does not list switch leaf001 with n[0001-0004]"
blocks=$(cluster_run scontrol show topology nvlink)
echo "$blocks" | sed 's/^/scontrol show topology nvlink: /'
grep -q 'nvl2' <<<"$blocks" || ta_fail "scontrol show topology nvlink does not list block nvl2"
nvl=$(cluster_run srun -p nvl -N4 --ntasks-per-node=1 sh -c 'echo "$SLURMD_NODENAME"' | sort | tr '\n' ' ')
case $nvl in
  "n0001 n0002 n0003 n0004 "|"n0005 n0006 n0007 n0008 "|"n0009 n0010 n0011 n0012 "|"n0013 n0014 n0015 n0016 ") ;;
  *) ta_fail "srun -p nvl -N4 got '$nvl', expected one whole NVLink domain" ;;
esac
out=$(cluster_run srun -N4 --ntasks-per-node=1 sh -c 'echo "$SLURMD_NODENAME"' | sort | tr '\n' ' ')
echo "default partition (tree) srun -N4: $out"
if grep -iE 'error.*(topolog|yaml)|(topolog|yaml).*error' "$CLUSTER_LOGDIR/slurmctld.log"; then
  ta_fail "slurmctld logged topology errors"
fi
ta_pass "26.05.3 reads topoaware's topology.yaml: tree (cluster_default) and NVLink blocks; -p nvl -N4 got one domain ($nvl)"
