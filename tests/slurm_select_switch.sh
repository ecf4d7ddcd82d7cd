#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Switching SelectType between select/cons_tres and select/cons_tres_topoaware with jobs running and
# queued, restarting slurmctld each way (select_cons_tres_topoaware(8), "Switching"): Slurm saves
# the select plugin's id with every job, so no job may be lost, running jobs keep their nodes, and
# queued jobs (a layout job and a plain one) still start afterwards.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
sel_setup

snapshot() { # "id state nodes" per job, sorted
  cluster_run squeue -h -o '%i %T %N' | sort
}
# Slurm's procedure for a SelectType change: the new slurm.conf everywhere, every slurmd restarted
# (slurmd and slurmstepd load only the plugin their slurm.conf names, and slurmctld sends every job's
# select data under its own plugin's id: a slurmd still on the old SelectType rejects
# REQUEST_TERMINATE_JOB as malformed and the job hangs in COMPLETING), then slurmctld restarted.
# Running jobs' slurmstepds are separate processes and survive the slurmd restart.
restart_slurmds() {
  local p n pids=()
  for p in "${CLUSTER_SLURMD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${CLUSTER_SLURMD_PIDS[@]}"; do
    ta_wait_for 30 sh -c "! kill -0 $p" || ta_fail "slurmd $p does not stop"
    wait "$p" 2>/dev/null || true
  done
  for n in "${CLUSTER_NODES[@]}"; do
    "${CLUSTER_PREFIX[@]}" slurmd -D -N "$n" >>"$CLUSTER_LOGDIR/slurmd.$n.out" 2>&1 &
    pids+=($!)
  done
  CLUSTER_SLURMD_PIDS=("${pids[@]}")
}
switch_to() {
  sed -i "s|^SelectType=.*|SelectType=$1|" "$CLUSTER_DIR/slurm.conf"
  restart_slurmds
  cluster_restart_ctld
  [ "$(cluster_run scontrol show config | sed -n 's/^SelectType *= *//p')" = "$1" ] ||
    ta_fail "slurmctld is not running $1"
  grep -qiE 'fatal|cannot.*recover|Invalid.*select' "$CLUSTER_LOGDIR/slurmctld.out" &&
    ta_fail "slurmctld complained after switching to $1"
  true
}

sel_start select/cons_tres
r1=$(cluster_run sbatch --parsable -N10 -o /dev/null --wrap 'sleep 600')
r2=$(cluster_run sbatch --parsable --exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2 \
  -o /dev/null --wrap 'sleep 600')
cluster_wait_job "$r1" 60 RUNNING >/dev/null; cluster_wait_job "$r2" 60 RUNNING >/dev/null
q1=$(cluster_run sbatch --parsable -N8 -o "$CLUSTER_DIR/q1.out" --wrap 'echo ran')
q2=$(cluster_run sbatch --parsable --exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2 \
  -o "$CLUSTER_DIR/q2.out" --wrap 'echo ran')
sleep 3
before=$(snapshot)
echo "$before" | sed 's/^/# before: /'
[ "$(echo "$before" | grep -c PENDING)" -eq 2 ] || ta_fail "expected 2 queued jobs: $before"

for sel in select/cons_tres_topoaware select/cons_tres select/cons_tres_topoaware; do
  switch_to "$sel"
  sleep 2
  now=$(snapshot)
  [ "$now" = "$before" ] || ta_fail "after switching to $sel and restarting slurmctld: jobs differ:
before: $before
now:    $now"
  ta_pass "switched to $sel with 2 running and 2 queued jobs, restarted slurmctld: all 4 jobs as before"
done

# No slurmd may have refused an RPC for the select data of a job.
if grep -h 'unknown select plugin id\|Malformed RPC' "$CLUSTER_LOGDIR"/slurmd.*.log; then
  ta_fail "a slurmd could not read a job's select data"
fi
# The queued jobs still run once the running ones end.
cluster_run scancel "$r1" "$r2"
for q in "$q1" "$q2"; do
  [ "$(cluster_wait_job "$q" 120)" = COMPLETED ] || ta_fail "queued job $q did not complete after the switches"
done
ta_pass "queued jobs from before the switches completed under select/cons_tres_topoaware"
