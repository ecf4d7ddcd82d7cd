#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults on real daemons under select/cons_tres_topoaware (select_cons_tres_topoaware(8), STATUS FILE).
# slurmctld stopped (SIGTERM) and killed (SIGKILL), then restarted, with a placed layout job, a
# pending strict one and a pending prefer one. Nothing may be lost: every job is there again in its
# state, the placed job keeps its nodes and its status entry (placement, nodes, node order, GPUs per
# node: what the tasks were given), the strict job keeps its deadline (the same "waits until" time)
# and no job starts early.
# Then a slurmd killed under the placed job (below).
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
sel_setup
ta_require_cmd python3 python3

printf '%s\n' "StatusInterval=1" >"$SEL_WORK/ta.conf"
# A requeued batch job may start again only after the credential lifetime (AuthInfo=cred_expire,
# default 120 s, the minimum 5): 10 s keeps the node-failure case below from waiting two minutes.
sel_start select/cons_tres_topoaware --file "topoaware.conf=$SEL_WORK/ta.conf" --conf SlurmdTimeout=10 \
  --conf AuthInfo=cred_expire=10
SEL_STATUS=$CLUSTER_DIR/state/topoaware-status.json
sel_three_jobs
b=$SEL_B c=$SEL_C p=$SEL_P B0=$SEL_B0

# restart SIGNAL: stop slurmctld with it, start it again on the same state.
restart() {
  local pid
  pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
  kill "-$1" "$pid"
  ta_wait_for 30 sh -c "! kill -0 $pid 2>/dev/null" || ta_fail "slurmctld did not end on SIG$1"
  wait "$CLUSTER_CTLD_PID" 2>/dev/null || true
  CLUSTER_CTLD_PID=""
  rm -f "$SEL_STATUS"  # what it says from now on, the new slurmctld wrote
  cluster_restart_ctld
}

for sig in TERM KILL; do
  restart "$sig"
  sel_same_jobs_after "SIG$sig and a restart"
  grep -iE 'fatal|segfault|cannot.*recover' "$CLUSTER_LOGDIR/slurmctld.out" &&
    ta_fail "slurmctld complained after SIG$sig"
  ta_pass "SIG$sig + restart: 11 jobs as before; B's entry unchanged ($SEL_B1); C waits until the same deadline"
done

# A slurmd killed under the placed layout job (not on its batch host): slurmctld marks the node DOWN
# after SlurmdTimeout, the job is requeued (Slurm's default for batch jobs on a node failure) and
# leaves the book as placed; once the slurmd is back (ReturnToService=2) the job is placed again,
# with a fresh entry. The waiting jobs are cancelled first so that B gets the free nodes back.
cluster_run scancel "$c" "$p"
batch_host=$(cluster_run scontrol -o show job "$b" | sed -n 's/.* BatchHost=\([^ ]*\).*/\1/p')
victim=""
for n in $(ta_hostnames "$(cut -d'|' -f2 <<<"$B0")"); do [ "$n" = "$batch_host" ] || { victim=$n; break; }; done
[ -n "$victim" ] || ta_fail "no node of job $b other than its batch host $batch_host"
for i in "${!CLUSTER_NODES[@]}"; do [ "${CLUSTER_NODES[$i]}" = "$victim" ] && k=$i; done
kill -9 "${CLUSTER_SLURMD_PIDS[$k]}"
wait "${CLUSTER_SLURMD_PIDS[$k]}" 2>/dev/null || true
node_down() { cluster_run sinfo -h -n "$victim" -o %t | grep -q '^down'; }
job_not_running() { [ "$(cluster_job_state "$b")" != RUNNING ]; }
ta_wait_for 90 node_down || ta_fail "node $victim is not DOWN after its slurmd was killed"
ta_wait_for 60 job_not_running || ta_fail "job $b still RUNNING on a DOWN node"
sel_entry_wait 30 "$b" '-' >/dev/null || sel_entry_wait 5 "$b" '|||8|*' >/dev/null ||
  ta_fail "job $b is still booked as placed after its node $victim failed: $(sel_entry "$b")"
ta_note "job $b after the node failure: $(cluster_run squeue -h -j "$b" -o '%T %r' 2>/dev/null || echo gone)"
"${CLUSTER_PREFIX[@]}" slurmd -D -N "$victim" >>"$CLUSTER_LOGDIR/slurmd.$victim.out" 2>&1 &
CLUSTER_SLURMD_PIDS[$k]=$!
cluster_wait_job "$b" 180 RUNNING >/dev/null || ta_fail "requeued job $b did not run again once $victim was back"
B2=$(sel_entry_wait 30 "$b" '@(ideal|fallback)|n*|n*|8|*') || ta_fail "job $b has no placed entry after its restart"
grep -iE 'fatal|segfault' "$CLUSTER_LOGDIR/slurmctld.out" && ta_fail "slurmctld complained after the node failure"
ta_pass "slurmd of $victim killed under job $b: node DOWN, job requeued and out of the book, placed again ($B2)"

cluster_run scancel "$b"
cluster_wait_job "$b" 60 >/dev/null
sel_entry_wait 30 "$b" '-' >/dev/null || ta_fail "job $b stayed in the status file after it ended"
ta_pass "B's entry leaves the status file when it ends"
