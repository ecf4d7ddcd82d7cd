#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Stock Slurm 26.05.3, built from the upstream tarball (tools/build-slurm.sh, once per machine): a
# 16-node localhost cluster with 8 GPUs a node runs srun and sbatch, and stock select/cons_tres places
# by topology/tree and then topology/block. It also pins down what 26.05 changed for every topology
# plugin: a job's tasks are laid out in topology order (cons_tres fills job_resrcs->node_ranks from
# topology_g_get_rank(), the step layout sorts nodes by it: src/plugins/select/cons_tres/job_test.c,
# src/common/slurm_step_layout.c), unless SelectTypeParameters has CR_NO_DIST_TOPO_BLOCK.
#
# The topology files list their leaves/blocks from the highest node numbers down, so that topology
# order and node order differ: an 8-node job on n[01-08] spans two of them, and the one listed first
# (n[05-08]) gets the first ranks by default; with CR_NO_DIST_TOPO_BLOCK, n01 gets rank 0 as before.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_release.sh"
ta_require_daemon_tests
test_start=$SECONDS
version=26.05.3

slurm_release_require "$version"
have=$(slurm_release_version)
[ "$have" = "$version" ] || ta_fail "$SLURM_RELEASE_PREFIX/sbin/slurmctld -V says '$have', expected $version"
built=$(sed -n 's/^seconds=//p' "$SLURM_RELEASE_PREFIX/.topoaware-ready")
ta_note "Slurm $have in $SLURM_RELEASE_PREFIX (built in $built s)"

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-2605.XXXXXX")
ta_on_exit "rm -rf '$work'"
cat >"$work/tree.conf" <<'EOF'
# Four leaves of four nodes, listed from the highest node numbers down (topology order != node order).
SwitchName=leaf4 Nodes=n[13-16]
SwitchName=leaf3 Nodes=n[09-12]
SwitchName=leaf2 Nodes=n[05-08]
SwitchName=leaf1 Nodes=n[01-04]
SwitchName=spine Switches=leaf[1-4]
EOF
cat >"$work/block.conf" <<'EOF'
# Four blocks of four nodes, listed from the highest node numbers down (topology order != node order).
BlockName=b1 Nodes=n[13-16]
BlockName=b2 Nodes=n[09-12]
BlockName=b3 Nodes=n[05-08]
BlockName=b4 Nodes=n[01-04]
BlockSizes=4,8,16
EOF

# start PLUGIN FILE [--conf LINE]...: a fresh 16-node cluster; prints how long it took to come up.
start() {
  local plugin=$1 file=$2 t0=$SECONDS
  shift 2
  slurm_release_cluster_start --nodes 16 --gpus 8 --topology "$file" --conf "TopologyPlugin=topology/$plugin" "$@"
  ta_note "cluster of 16 nodes up in $((SECONDS - t0)) s (topology/$plugin $*)"
}

# rank_map [srun args]: "n05 n06 ..." — the node of each SLURM_PROCID, in rank order, for one task per
# node on n[01-08].
rank_map() {
  cluster_run srun -N8 -w 'n[01-08]' --ntasks-per-node=1 "$@" sh -c 'echo "$SLURM_PROCID $SLURMD_NODENAME"' |
    sort -n | awk '{ printf "%s%s", sep, $2; sep = " " } END { print "" }'
}

# Every check the stock cluster must pass under one topology plugin.
stock_checks() {
  local plugin=$1 out distinct nodes id st env_out cvd topo
  # 1. srun -N4 hostname: four tasks on four distinct nodes (all slurmd share this host, so the node
  #    a task ran on is SLURMD_NODENAME).
  out=$(cluster_run srun -N4 --ntasks-per-node=1 sh -c 'echo "$SLURMD_NODENAME $(hostname)"')
  echo "$out" | sed "s/^/topology\/$plugin srun -N4 hostname: /"
  [ "$(echo "$out" | wc -l)" -eq 4 ] || ta_fail "srun -N4 gave $(echo "$out" | wc -l) lines, expected 4"
  distinct=$(echo "$out" | awk '{ print $1 }' | sort -u | wc -l)
  [ "$distinct" -eq 4 ] || ta_fail "srun -N4 ran on $distinct distinct nodes, expected 4"
  [ "$(echo "$out" | awk '{ print $2 }' | sort -u)" = "$(hostname)" ] || ta_fail "hostname in tasks is not $(hostname)"

  # 2. Stock cons_tres places by the topology: a 4-node job fits one leaf/block exactly.
  nodes=$(echo "$out" | awk '{ print $1 }' | sort | tr '\n' ' ')
  case $nodes in
    "n01 n02 n03 n04 "|"n05 n06 n07 n08 "|"n09 n10 n11 n12 "|"n13 n14 n15 n16 ") ;;
    *) ta_fail "topology/$plugin: srun -N4 got '$nodes', expected one whole leaf/block of 4" ;;
  esac

  # 3. GPUs: four of the eight character devices, numbered as on a GPU node.
  env_out=$(cluster_run srun -N1 --gpus-per-node=4 env)
  cvd=$(echo "$env_out" | sed -n 's/^CUDA_VISIBLE_DEVICES=//p')
  [ "$cvd" = "0,1,2,3" ] || ta_fail "CUDA_VISIBLE_DEVICES='$cvd' with --gpus-per-node=4, expected 0,1,2,3"
  [ "$(cluster_run sinfo -h -N -o '%G' | sort -u)" = "gpu:8" ] || ta_fail "not every node shows gres gpu:8"

  # 4. sbatch: a 2-node GPU job whose srun runs one task a node, each seeing its 2 GPUs.
  id=$(cluster_run sbatch --parsable -N2 --ntasks-per-node=1 --gpus-per-node=2 -o "$work/job.%j.out" \
    --wrap 'srun sh -c "echo \$SLURM_PROCID \$SLURMD_NODENAME \$CUDA_VISIBLE_DEVICES"')
  st=$(cluster_wait_job "$id" 120)
  [ "$st" = COMPLETED ] || ta_fail "sbatch job $id ended $st"
  sed "s/^/topology\/$plugin sbatch job $id: /" "$work/job.$id.out"
  [ "$(grep -c ' 0,1$' "$work/job.$id.out")" -eq 2 ] ||
    ta_fail "sbatch job $id: expected 2 tasks with CUDA_VISIBLE_DEVICES=0,1, got: $(cat "$work/job.$id.out")"

  # 5. slurmctld lists the topology it read, and logged no error about it.
  topo=$(cluster_run scontrol show topology)
  echo "$topo" | sed "s/^/topology\/$plugin scontrol show topology: /"
  case $plugin in
    tree) grep -q '^SwitchName=leaf2 .*Nodes=n\[05-08\]' <<<"$topo" || ta_fail "leaf2 is not n[05-08]" ;;
    block) grep -q '^BlockName=b3 .*Nodes=n\[05-08\]' <<<"$topo" || ta_fail "b3 is not n[05-08]" ;;
  esac
  if grep -iE 'error.*topolog|topolog.*error' "$CLUSTER_LOGDIR/slurmctld.log"; then
    ta_fail "slurmctld logged topology errors"
  fi
  ta_pass "26.05.3 topology/$plugin: srun -N4 on one leaf/block, GPUs, sbatch job, topology listed"
}

# What the source says (see the header): topology order puts n[05-08] (listed first) before n[01-04];
# CR_NO_DIST_TOPO_BLOCK gives node order. `-m cyclic` bypasses node_ranks either way.
topo_order="n05 n06 n07 n08 n01 n02 n03 n04"
node_order="n01 n02 n03 n04 n05 n06 n07 n08"

for plugin in tree block; do
  start "$plugin" "$work/$plugin.conf"
  stock_checks "$plugin"
  map=$(rank_map)
  echo "topology/$plugin, default SelectTypeParameters: SLURM_PROCID 0..7 on $map"
  [ "$map" = "$topo_order" ] || ta_fail "topology/$plugin default rank map '$map', expected '$topo_order'"
  map=$(rank_map -m cyclic)
  echo "topology/$plugin, default SelectTypeParameters, srun -m cyclic: SLURM_PROCID 0..7 on $map"
  [ "$map" = "$node_order" ] || ta_fail "topology/$plugin -m cyclic rank map '$map', expected '$node_order'"
  cluster_stop

  start "$plugin" "$work/$plugin.conf" --conf SelectTypeParameters=CR_Core_Memory,CR_NO_DIST_TOPO_BLOCK
  map=$(rank_map)
  echo "topology/$plugin, CR_NO_DIST_TOPO_BLOCK: SLURM_PROCID 0..7 on $map"
  [ "$map" = "$node_order" ] ||
    ta_fail "topology/$plugin CR_NO_DIST_TOPO_BLOCK rank map '$map', expected '$node_order'"
  cluster_stop
  ta_pass "26.05.3 topology/$plugin: tasks in topology order by default ($topo_order)," \
    "node order with CR_NO_DIST_TOPO_BLOCK"
done
ta_note "test time $((SECONDS - test_start)) s"
