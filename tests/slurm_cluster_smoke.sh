#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The localhost cluster harness itself (tests/lib/slurm_cluster.sh) against real slurmctld/slurmd:
# 16 nodes x 8 GPUs come up; multi-node steps land on distinct nodes; GPU steps see the GPUs Slurm
# gave them; topology/tree loads a hand-written topology.conf. Every later plugin test relies on this.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
ta_require_daemon_tests
ta_require_cmd slurmctld slurmctld
ta_require_cmd slurmd slurmd
ta_require_cmd srun slurm-client

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-smoke.XXXXXX")
ta_on_exit "rm -rf '$work'"

# Two leaves of 8 nodes under one spine. Node names follow the harness (n01..n16).
cat >"$work/topology.conf" <<'EOF'
SwitchName=leaf1 Nodes=n[01-08]
SwitchName=leaf2 Nodes=n[09-16]
SwitchName=spine Switches=leaf[1-2]
EOF

cluster_start --nodes 16 --gpus 8 --topology "$work/topology.conf" --conf TopologyPlugin=topology/tree

# 1. srun -N4: four tasks, one per node. All slurmd share one host, so `hostname` is the same
#    everywhere; the node each task ran on is SLURMD_NODENAME.
out=$(cluster_run srun -N4 --ntasks-per-node=1 sh -c 'echo "$SLURMD_NODENAME $(hostname)"')
echo "$out" | sed 's/^/srun -N4: /'
[ "$(echo "$out" | wc -l)" -eq 4 ] || ta_fail "srun -N4 gave $(echo "$out" | wc -l) lines, expected 4"
distinct=$(echo "$out" | awk '{print $1}' | sort -u | wc -l)
[ "$distinct" -eq 4 ] || ta_fail "srun -N4 ran on $distinct distinct nodes, expected 4"
echo "$out" | awk '{print $1}' | grep -qvE '^n(0[1-9]|1[0-6])$' && ta_fail "srun -N4 ran on unknown nodes"
[ "$(echo "$out" | awk '{print $2}' | sort -u)" = "$(hostname)" ] || ta_fail "hostname in tasks is not $(hostname)"
ta_pass "srun -N4 hostname: 4 tasks on 4 distinct nodes"

# 2. GPUs: four of the eight device files, numbered as a GPU node would number them.
env_out=$(cluster_run srun -N1 --gpus-per-node=4 env)
cvd=$(echo "$env_out" | sed -n 's/^CUDA_VISIBLE_DEVICES=//p')
[ "$cvd" = "0,1,2,3" ] || ta_fail "CUDA_VISIBLE_DEVICES='$cvd' with --gpus-per-node=4, expected 0,1,2,3"
grep -q '^SLURM_STEP_GPUS=' <<<"$env_out" || ta_fail "no SLURM_STEP_GPUS in the step's environment"
ta_pass "srun -N1 --gpus-per-node=4: CUDA_VISIBLE_DEVICES=$cvd"

# Every node reports its 8 GPUs (a node with Gres=gpu:8 but no usable files would be INVAL).
gres=$(cluster_run sinfo -h -N -o '%N %G' | awk '{print $2}' | sort -u)
[ "$gres" = "gpu:8" ] || ta_fail "sinfo shows gres '$gres', expected gpu:8 on every node"

# 3. topology/tree: slurmctld read our topology.conf.
topo=$(cluster_run scontrol show topology)
echo "$topo" | sed 's/^/scontrol show topology: /'
for sw in leaf1 leaf2 spine; do
  grep -q "SwitchName=$sw " <<<"$topo" || ta_fail "scontrol show topology does not list $sw"
done
echo "$topo" | grep -E '^SwitchName=leaf1 ' | grep -q 'Nodes=n\[01-08\]' || ta_fail "leaf1 does not hold n[01-08]"
echo "$topo" | grep -E '^SwitchName=spine ' | grep -q 'Switches=leaf\[1-2\]' ||
  ta_fail "spine does not connect leaf[1-2]"
if grep -iE 'error.*topology|topology.*error' "$CLUSTER_LOGDIR/slurmctld.log"; then
  ta_fail "slurmctld logged topology errors"
fi
# And it places by it: an 8-node job fits one leaf exactly, so it must get one leaf's nodes.
nodes=$(cluster_run srun -N8 --ntasks-per-node=1 sh -c 'echo $SLURMD_NODENAME' | sort | tr '\n' ' ')
case $nodes in
  "n01 n02 n03 n04 n05 n06 n07 n08 "|"n09 n10 n11 n12 n13 n14 n15 n16 ") ;;
  *) ta_fail "srun -N8 under topology/tree got nodes '$nodes', expected one whole leaf" ;;
esac
ta_pass "topology/tree: topology.conf accepted, listed and used (-N8 got one leaf)"
