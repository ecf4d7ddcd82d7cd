#!/bin/bash
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
sel_start select/cons_tres_topoaware --file "topoaware.conf=$SEL_WORK/ta.conf" --conf SlurmdTimeout=10
STATUS=$CLUSTER_DIR/state/topoaware-status.json

# entry JOBID: the job's status entry as one line "placement|nodes|node_order|gpus_per_node|reason"
# ("-" if the job has none, "?" while the file cannot be read).
entry() {
  python3 - "$STATUS" "$1" <<'PY' 2>/dev/null || echo "?"
import json, sys
d = json.load(open(sys.argv[1]))
for j in d["jobs"]:
    if j["job_id"] == int(sys.argv[2]):
        print("|".join(str(j.get(k, "")) for k in ("placement", "nodes", "node_order", "gpus_per_node", "reason")))
        break
else:
    print("-")
PY
}
# entry_wait SECONDS JOBID PATTERN: until the entry matches the (glob) pattern, or is the text after
# '=' for a PATTERN "=TEXT" (host lists have brackets); prints it.
entry_wait() {
  local deadline=$((SECONDS + $1)) v
  while :; do
    v=$(entry "$2")
    case $3 in
      =*) [ "$v" = "${3#=}" ] && { echo "$v"; return 0; } ;;
      # shellcheck disable=SC2053
      *) [[ $v == $3 ]] && { echo "$v"; return 0; } ;;
    esac
    [ "$SECONDS" -lt "$deadline" ] || { echo "status file: job $2 is '$v', wanted '$3'" >&2; return 1; }
    sleep 0.5
  done
}
jobs_now() { cluster_run squeue -h -o '%i %T %N' | sort; }

layout=(--exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2 -o /dev/null)
# Free per leaf 3, 3, 2 (the 4 x 4 fabric): B gets an ideal 2 + 2; the 4 nodes left (3 + 1 or
# 2 + 1 + 1) hold no ideal block, so strict C waits; prefer P asks for 8 nodes and waits too.
sel_busy n0001 n0005 n0009 n0010 n0013 n0014 n0015 n0016
b=$(cluster_run sbatch --parsable "${layout[@]}" --wrap 'sleep 900')
cluster_wait_job "$b" 60 RUNNING >/dev/null
c=$(cluster_run sbatch --parsable "${layout[@]}" --topo-mode=strict --topo-max-wait=30m --wrap 'sleep 900')
p=$(cluster_run sbatch --parsable --exclusive -N8 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=4 \
  --topo-mode=prefer -o /dev/null --wrap 'sleep 900')
B0=$(entry_wait 30 "$b" 'ideal|n*|n*|8|*') || ta_fail "placed job $b has no complete status entry"
C0=$(entry_wait 30 "$c" '|||8|*strict: waits until *') || ta_fail "strict job $c has no waiting entry"
entry_wait 30 "$p" '|||8|*' >/dev/null || ta_fail "prefer job $p has no waiting entry"
[ "$(cluster_job_state "$c")" = PENDING ] && [ "$(cluster_job_state "$p")" = PENDING ] ||
  ta_fail "premise: C and P should be pending: $(jobs_now)"
ta_note "before: B $B0"
ta_note "before: C $C0"
JOBS0=$(jobs_now)

# restart SIGNAL: stop slurmctld with it, start it again on the same state.
restart() {
  local pid
  pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
  kill "-$1" "$pid"
  ta_wait_for 30 sh -c "! kill -0 $pid 2>/dev/null" || ta_fail "slurmctld did not end on SIG$1"
  wait "$CLUSTER_CTLD_PID" 2>/dev/null || true
  CLUSTER_CTLD_PID=""
  cluster_restart_ctld
}

for sig in TERM KILL; do
  restart "$sig"
  now=$(jobs_now)
  [ "$now" = "$JOBS0" ] || ta_fail "after SIG$sig and a restart the jobs differ:
before: $JOBS0
now:    $now"
  # The status file of the new slurmctld: the placed job as it was placed (not "unknown", not
  # without nodes), the strict job waiting until the same time.
  B1=$(entry_wait 30 "$b" "=$B0") || ta_fail "after SIG$sig: placed job $b's entry changed (was: $B0)"
  deadline=${C0##*strict: waits until }
  entry_wait 30 "$c" "=${C0%%strict: waits until *}strict: waits until $deadline" >/dev/null ||
    ta_fail "after SIG$sig: strict job $c lost its deadline (was: $C0)"
  entry_wait 30 "$p" '|||8|*' >/dev/null || ta_fail "after SIG$sig: prefer job $p has no waiting entry"
  sleep 5 # several scheduling passes: no job may start early
  [ "$(jobs_now)" = "$JOBS0" ] || ta_fail "after SIG$sig a job changed state: $(jobs_now)"
  grep -iE 'fatal|segfault|cannot.*recover' "$CLUSTER_LOGDIR/slurmctld.out" &&
    ta_fail "slurmctld complained after SIG$sig"
  ta_pass "SIG$sig + restart: 11 jobs as before; B's entry unchanged ($B1); C waits until the same deadline"
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
entry_wait 30 "$b" '-' >/dev/null || entry_wait 5 "$b" '|||8|*' >/dev/null ||
  ta_fail "job $b is still booked as placed after its node $victim failed: $(entry "$b")"
ta_note "job $b after the node failure: $(cluster_run squeue -h -j "$b" -o '%T %r' 2>/dev/null || echo gone)"
"${CLUSTER_PREFIX[@]}" slurmd -D -N "$victim" >>"$CLUSTER_LOGDIR/slurmd.$victim.out" 2>&1 &
CLUSTER_SLURMD_PIDS[$k]=$!
cluster_wait_job "$b" 180 RUNNING >/dev/null || ta_fail "requeued job $b did not run again once $victim was back"
B2=$(entry_wait 30 "$b" '@(ideal|fallback)|n*|n*|8|*') || ta_fail "job $b has no placed entry after its restart"
grep -iE 'fatal|segfault' "$CLUSTER_LOGDIR/slurmctld.out" && ta_fail "slurmctld complained after the node failure"
ta_pass "slurmd of $victim killed under job $b: node DOWN, job requeued and out of the book, placed again ($B2)"

cluster_run scancel "$b"
cluster_wait_job "$b" 60 >/dev/null
entry_wait 30 "$b" '-' >/dev/null || ta_fail "job $b stayed in the status file after it ended"
ta_pass "B's entry leaves the status file when it ends"
