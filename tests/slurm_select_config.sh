#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware.conf's keys of the select plugin, its status file and its counters line in a real
# slurmctld (select_cons_tres_topoaware(8), topoaware.conf(5)). One cluster of 17 nodes: the
# 16 of the generated 4 x 4 topology plus n0017, which is in slurm.conf (and topology.conf) but not
# in topology.json; topoaware.conf is switched with scontrol reconfigure:
#   - LogLevel=verbose, MaxTriesPerCall=8, MaxTimePerCall=500ms, StatusInterval=1: the settings line,
#     n0017 logged by name as missing; a placed job's status entry (ideal, nodes, node_order equal to
#     what `topoaware plan` gives for that node set, the rank order spank_topoaware uses) and the
#     verbose placement line with the same node order; the file is 0644 and of schema topoaware-status/1;
#   - LogLevel=quiet: a strict job without an ideal block waits (Resources), its reason is in the
#     status file, and no "waits" line is logged;
#   - a topoaware.conf with a bad value (MaxTriesPerCall=0): a clear error naming the line, the
#     previous settings kept (still quiet);
#   - cancelled jobs leave the status file (placed: select_p_job_fini; pending: the writer's sweep);
#   - MissingNodes=avoid: a layout job of 17 nodes waits (the log says the topology's nodes cannot
#     hold it); MissingNodes=fallback + reconfigure: it runs through plain cons_tres, with a log line;
#   - the counters line at reconfigure and when slurmctld stops, and the status file's last write.
# Then a second cluster under select/cons_tres_passthrough runs the same small workload, and the
# counters of both builds over that workload are compared (printed as ratios).
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
sel_setup
b=$(cd "${top_builddir:-.}" && pwd)
ta_require_cmd python3 python3

TA=select/cons_tres_topoaware
layout=(--exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2 -o /dev/null)
ring4=(--exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --dp=4 -o /dev/null)

# n0017 under its own leaf in topology.conf (topology/tree needs every node under a switch).
topoconf=$SEL_WORK/topology17.conf
{
  grep '^SwitchName=leaf' "$SEL_TOPOCONF"
  echo "SwitchName=leaf5 Nodes=n0017"
  echo "SwitchName=spine Switches=leaf[1-5]"
} >"$topoconf"
printf '%s\n' "LogLevel=verbose MaxTriesPerCall=8 MaxTimePerCall=500ms" "StatusInterval=1" >"$SEL_WORK/ta.conf"

log() { cat "$CLUSTER_LOGDIR/slurmctld.log"; }
lines() { wc -l <"$CLUSTER_LOGDIR/slurmctld.log"; }
since() { tail -n +$(($1 + 1)) "$CLUSTER_LOGDIR/slurmctld.log"; }
# reconfigure [topoaware.conf lines...]: writes topoaware.conf, scontrol reconfigure, waits for the
# counters line that select_p_node_init logs; NEWLOG = the log lines since.
reconfigure() {
  local before; before=$(lines)
  [ $# -eq 0 ] || printf '%s\n' "$@" >"$CLUSTER_DIR/topoaware.conf"
  cluster_run scontrol reconfigure
  ta_wait_for 30 sh -c \
    "tail -n +$((before + 1)) '$CLUSTER_LOGDIR/slurmctld.log' | grep -q '$TA: select_p_job_test: calls='" ||
    ta_fail "no counters line after scontrol reconfigure"
  NEWLOG=$(since "$before")
  grep "$TA: " <<<"$NEWLOG" | sed 's/^/# log: /'
}
STATUS=""
# st JOBID FIELD: a field of the job's entry in the status file ("-" if the job has none).
st() {
  python3 - "$STATUS" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "topoaware-status/1", d["schema"]
for j in d["jobs"]:
    if j["job_id"] == int(sys.argv[2]):
        print(j[sys.argv[3]]); break
else:
    print("-")
PY
}
st_wait() { # st_wait SECONDS JOBID FIELD PATTERN: until the field matches the (glob) pattern
  local deadline=$((SECONDS + $1)) v
  while :; do
    v=$( [ -f "$STATUS" ] && st "$2" "$3" 2>/dev/null || echo "?")
    # shellcheck disable=SC2053
    [[ $v == $4 ]] && return 0
    [ "$SECONDS" -lt "$deadline" ] || { echo "status file: job $2 $3='$v', wanted '$4'" >&2; return 1; }
    sleep 0.5
  done
}
# counters LINE: "calls total_us layout_calls layout_total" from a counters line (layout total
# from mean x calls).
counters() {
  re='s/.*select_p_job_test: calls=\([0-9]*\) total_us=\([0-9]*\) mean_us=[0-9.]* max_us=[0-9]*'
  re+=' layout_calls=\([0-9]*\) layout_mean_us=\([0-9.]*\) layout_max_us=[0-9]*'
  re+=' layout_cons_calls=[0-9]* layout_cons_us=[0-9]*$/\1 \2 \3 \4/p'
  sed -n "$re" <<<"$1" |
    awk '{printf "%d %d %d %.0f\n", $1, $2, $3, $3 * $4}'
}
# The same small workload on either build: 3 layout jobs and 3 plain ones, all completed.
workload() {
  local ids=() id
  for _ in 1 2 3; do
    ids+=("$(cluster_run sbatch --parsable "${layout[@]}" --wrap true)")
    ids+=("$(cluster_run sbatch --parsable --exclusive -N4 -o /dev/null --wrap true)")
  done
  for id in "${ids[@]}"; do
    [ "$(cluster_wait_job "$id" 120)" = COMPLETED ] || ta_fail "workload job $id did not complete"
  done
}

# ---- select/cons_tres_topoaware, 17 nodes ------------------------------------------------------
mkdir -p "$SEL_WORK/c1"
sel_start $TA --nodes 17 --topology "$topoconf" --file "topoaware.conf=$SEL_WORK/ta.conf" --dir "$SEL_WORK/c1"
STATUS=$CLUSTER_DIR/state/topoaware-status.json
pat="$TA: settings from $CLUSTER_DIR/topoaware.conf: MaxTriesPerCall=8 MaxTimePerCall=500ms LogLevel=verbose"
pat+=" MissingNodes=avoid RankOrder=neighbours StatusFile=$STATUS StatusInterval=1s"
grep -q "$pat" <(log) ||
  ta_fail "slurmctld did not log the settings of topoaware.conf: $(log | grep "$TA: settings" || true)"
pat="$TA: 1 of 17 Slurm nodes are not in topology $CLUSTER_DIR/topology.json: n0017;"
pat+=" MissingNodes=avoid: they are never chosen"
grep -q "$pat" <(log) ||
  ta_fail "the node missing from the topology is not logged by name: $(log | grep "not in topology" || true)"
msg="MaxTriesPerCall=8 MaxTimePerCall=500ms LogLevel=verbose"
msg+=" StatusInterval=1 accepted (settings line); n0017 logged as missing"
ta_pass "$msg"

# A placed job: its status entry and the verbose placement line, node order = topoaware plan's.
sel_busy n0001 n0005 n0009 n0013 # 3 free nodes per leaf: ideal for 2 + 2, none for a ring of 4
# strict: the engine's prefer mode may take a tighter non-ideal fit (3 + 1) on this free set.
p=$(cluster_run sbatch --parsable "${layout[@]}" --topo-mode=strict --wrap 'sleep 600')
cluster_wait_job "$p" 60 RUNNING >/dev/null
st_wait 10 "$p" phase placed || ta_fail "placed job $p is not in the status file"
nodes=$(cluster_run scontrol -o show job "$p" | sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p')
[ "$(st "$p" nodes)" = "$nodes" ] || ta_fail "status file: job $p nodes '$(st "$p" nodes)', scontrol says $nodes"
[ "$(st "$p" placement)" = ideal ] || ta_fail "status file: job $p placement '$(st "$p" placement)', expected ideal"
[ "$(st "$p" gpus_per_node)" = 8 ] || ta_fail "status file: job $p gpus_per_node $(st "$p" gpus_per_node)"
order=$(st "$p" node_order)
plan=$("$b/topoaware" plan --topology "$SEL_TOPO" --free "$nodes" --tp 8 --pp 2 --dp 2 --gpus-per-node 8 --format json |
  python3 -c 'import json,sys; print(",".join(h["host"] for h in json.load(sys.stdin)["rank_order"]))')
[ -n "$order" ] && [ "$order" = "$plan" ] ||
  ta_fail "status file: node_order '$order', topoaware plan on $nodes gives '$plan'"
pat="$TA: JobId=$p placed: ideal, 4 nodes x 8 GPUs, tp=8,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp,"
pat+=" on $nodes; node order $order"
grep -qF "$pat" \
  "$CLUSTER_LOGDIR/slurmctld.log" ||
    ta_fail "LogLevel=verbose: no placement line with the node order: $(log | grep "JobId=$p" || true)"
hash=$(log | sed -n "s|.*$TA: topology $CLUSTER_DIR/topology.json loaded (16 hosts, \(sha256:[0-9a-f]*\)).*|\1|p" |
  tail -n 1)
python3 - "$STATUS" \
  "$CLUSTER_DIR/topology.json" "$hash" <<'PY' || ta_fail "status file: topology is not the one loaded ($hash)"
import json, sys
t = json.load(open(sys.argv[1]))["topology"]
assert t == {"file": sys.argv[2], "hash": sys.argv[3], "error": ""}, t
PY
perm=$(stat -c %a "$STATUS")
[ "$perm" = 644 ] || ta_fail "status file mode $perm, expected 644 (umask $(umask))"
msg="status file ($perm): job $p placed ideal on $nodes, node_order"
msg+=" $order = topoaware plan's; LogLevel=verbose logged it"
ta_pass "$msg"

# LogLevel=quiet: a strict job without an ideal block waits; the status file says why, the log not.
reconfigure "LogLevel=quiet StatusInterval=1"
grep -q "$TA: settings" <<<"$NEWLOG" && ta_fail "LogLevel=quiet logged the settings line"
w=$(cluster_run sbatch --parsable "${ring4[@]}" --topo-mode=strict --topo-max-wait=30m --wrap 'sleep 600')
st_wait 20 "$w" phase waiting || ta_fail "strict job $w is not waiting in the status file"
st_wait 20 "$w" reason \
  'no block that keeps every DP ring/PP chain on its ideal leaves is free; strict: waits until *' ||
  ta_fail "status file: reason of strict job $w is '$(st "$w" reason)'"
reason=$(st "$w" reason)
[ "$(cluster_job_state "$w")" = PENDING ] || ta_fail "strict job $w is $(cluster_job_state "$w")"
sleep 6 # a backfill cycle more
grep -q "JobId=$w .*waits" "$CLUSTER_LOGDIR/slurmctld.log" &&
  ta_fail "LogLevel=quiet, but the wait of job $w was logged"
ta_pass "LogLevel=quiet: strict job $w pending, no 'waits' line; status file reason: $reason"

# A bad value: a clear error, the previous settings kept (still quiet: a new waiting job is not logged).
reconfigure "LogLevel=info" "MaxTriesPerCall=0"
pat="error: $TA: $CLUSTER_DIR/topoaware.conf: $CLUSTER_DIR/topoaware.conf line 2: MaxTriesPerCall=0 is out of range;"
pat+=" write a whole number of blocks from 1 to 64, e.g. MaxTriesPerCall=4; keeping the previous settings"
grep -q "$pat" <<<"$NEWLOG" ||
  ta_fail "MaxTriesPerCall=0: no clear error"
kill -0 "$CLUSTER_CTLD_PID" || ta_fail "slurmctld died on a bad topoaware.conf"
w2=$(cluster_run sbatch --parsable "${ring4[@]}" --topo-mode=strict --topo-max-wait=30m --wrap 'sleep 600')
st_wait 20 "$w2" phase waiting || ta_fail "strict job $w2 is not waiting in the status file"
sleep 3
grep -q "JobId=$w2 .*waits" "$CLUSTER_LOGDIR/slurmctld.log" &&
  ta_fail "after a bad topoaware.conf the wait of job $w2 was logged: LogLevel=quiet was not kept"
msg="MaxTriesPerCall=0: 'line 2: MaxTriesPerCall=0 is out of range"
msg+=" ...; keeping the previous settings', LogLevel=quiet kept"
ta_pass "$msg"

# Cancelled jobs leave the status file: pending ones (sweep) and the placed one (job_fini).
cluster_run scancel "$w" "$w2" "$p" "${SEL_BUSY_IDS[@]}"
for j in "$w" "$w2" "$p"; do st_wait 20 "$j" phase - || ta_fail "cancelled job $j is still in the status file"; done
ta_pass "cancelled jobs ($w, $w2 pending; $p placed) are gone from the status file"

# StatusFile=none for a while: the writer keeps no copy and the book no changes. Set again, the file
# holds what is true then (a full hand-over): the job submitted meanwhile is in it (placed, or
# waiting), the one cancelled meanwhile is not, and nothing was written while there was no file.
reconfigure "LogLevel=quiet StatusInterval=1" "StatusFile=none"
w3=$(cluster_run sbatch --parsable "${ring4[@]}" --topo-mode=strict --topo-max-wait=30m --wrap 'sleep 600')
w4=$(cluster_run sbatch --parsable "${ring4[@]}" --topo-mode=strict --topo-max-wait=30m --wrap 'sleep 600')
sleep 3
cluster_run scancel "$w3"
sleep 7 # the writer's sweep of cancelled pending jobs (every 5 s) runs without a file too
[ "$(st "$w4" phase)" = - ] || ta_fail "StatusFile=none, but the status file was written (job $w4 in it)"
reconfigure "LogLevel=quiet StatusInterval=1"
st_wait 20 "$w4" phase '@(placed|waiting)' ||
  ta_fail "StatusFile set again: job $w4, submitted while StatusFile=none, is not in it"
[ "$(st "$w3" phase)" = - ] || ta_fail "StatusFile set again: job $w3, cancelled while there was no file, is in it"
cluster_run scancel "$w4"
st_wait 20 "$w4" phase - || ta_fail "cancelled job $w4 is still in the status file"
ta_pass "StatusFile=none, then set again: the file holds job $w4 (submitted meanwhile), not $w3 (cancelled meanwhile)"

# MissingNodes: a layout job of 17 nodes.
for j in "${SEL_BUSY_IDS[@]}"; do cluster_wait_job "$j" 60 >/dev/null; done
reconfigure "LogLevel=info MissingNodes=avoid StatusInterval=1"
grep -q "$TA: settings from .*MissingNodes=avoid" <<<"$NEWLOG" || ta_fail "LogLevel=info: no settings line"
before=$(lines)
m=$(cluster_run sbatch --parsable --exclusive -N17 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --dp=17 \
  -o /dev/null --wrap 'sleep 600')
wait_cmd="tail -n +$((before + 1)) '$CLUSTER_LOGDIR/slurmctld.log' | grep -q '$TA: JobId=$m (prefer, 17 nodes x 8 GPUs)"
wait_cmd+=" waits: not enough nodes with free GPUs in the topology (MissingNodes=avoid'"
ta_wait_for 30 sh -c "$wait_cmd" ||
  ta_fail "MissingNodes=avoid: no waits line for the 17-node job $m"
[ "$(cluster_job_state "$m")" = PENDING ] ||
  ta_fail "MissingNodes=avoid: the 17-node job $m is $(cluster_job_state "$m")"
st_wait 10 "$m" phase waiting || ta_fail "MissingNodes=avoid: job $m not waiting in the status file"
ta_pass "MissingNodes=avoid: a 17-node layout job waits (16 nodes in the topology), the log says why"
reconfigure "LogLevel=info MissingNodes=fallback StatusInterval=1"
grep -q "1 of 17 Slurm nodes are not in topology .*: n0017; MissingNodes=fallback" <<<"$NEWLOG" ||
  ta_fail "MissingNodes=fallback not in the missing-nodes line"
cluster_wait_job "$m" 60 RUNNING >/dev/null || ta_fail "MissingNodes=fallback: the 17-node job did not start"
pat="$TA: JobId=$m: the topology's nodes cannot hold it now; MissingNodes=fallback: plain select/cons_tres on any node"
grep -q "$pat" "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "MissingNodes=fallback: no log line for job $m"
st_wait 10 "$m" placement cons_tres || ta_fail "MissingNodes=fallback: job $m not placed cons_tres in the status file"
[ "$(st "$m" nodes)" = "n[0001-0017]" ] || ta_fail "job $m nodes $(st "$m" nodes)"
ta_pass "MissingNodes=fallback + reconfigure: the 17-node job runs on n[0001-0017]" \
  "through plain cons_tres, logged; status: cons_tres ($(st "$m" reason))"
cluster_run scancel "$m"; cluster_wait_job "$m" 60 >/dev/null

# A topology file that does not load: the status file keeps the old one and says why.
cp "$CLUSTER_DIR/topology.json" "$SEL_WORK/topology.good"
head -c 300 "$SEL_WORK/topology.good" >"$CLUSTER_DIR/topology.json"
reconfigure
python3 - "$STATUS" \
  "$CLUSTER_DIR/topology.json" "$hash" <<'PY' || ta_fail "status file: a broken topology is not reported"
import json, sys, time
for _ in range(20):
    t = json.load(open(sys.argv[1]))["topology"]
    if t["error"]:
        break
    time.sleep(0.5)
assert t["file"] == sys.argv[2] and t["hash"] == sys.argv[3] and t["error"], t
print("# status topology.error: " + t["error"])
PY
cp "$SEL_WORK/topology.good" "$CLUSTER_DIR/topology.json"
ta_pass "a broken topology file: the status file keeps the previous one's hash and gives the error"

# Counters over the common workload, then the line when slurmctld stops, and the last write.
reconfigure
c0=$(counters "$(grep "$TA: select_p_job_test: " <<<"$NEWLOG" | tail -n 1)")
[ -n "$c0" ] || ta_fail "counters line not in the documented format: $(grep 'select_p_job_test:' <<<"$NEWLOG")"
workload
sleep 2
cluster_stop
last=$(grep "$TA: select_p_job_test: " "$CLUSTER_LOGDIR/slurmctld.log" | tail -n 1)
grep -q 'Saving all slurm state' "$CLUSTER_LOGDIR/slurmctld.log" &&
  [ "$(grep -n "Saving all slurm state\|$TA: select_p_job_test: " "$CLUSTER_LOGDIR/slurmctld.log" |
         tail -n 1 | grep -c select_p_job_test)" = 1 ] ||
  ta_fail "no counters line when slurmctld stopped"
c1=$(counters "$last")
read -r n0 t0 l0 lt0 <<<"$c0"; read -r n1 t1 l1 lt1 <<<"$c1"
[ "$l1" -gt "$l0" ] && [ "$n1" -gt "$n0" ] || ta_fail "counters did not grow over the workload: $c0 -> $c1"
python3 - "$STATUS" "$n1" <<'PY' || ta_fail "the status file's last write lacks the final counters"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["job_test"]["calls"] == int(sys.argv[2]), (d["job_test"], sys.argv[2])
PY
ta_note "$last"
ta_pass "counters line at reconfigure and at shutdown ($n1 calls, $l1 layout calls); the last status write has them"
topo_calls=$((n1 - n0)) topo_us=$((t1 - t0)) topo_lcalls=$((l1 - l0)) topo_lus=$((lt1 - lt0))

# ---- select/cons_tres_passthrough: the same workload --------------------------------------------
mkdir -p "$SEL_WORK/c2"
sel_start select/cons_tres_passthrough --dir "$SEL_WORK/c2"
pat="select/cons_tres_passthrough: select_p_job_test: calls=0 total_us=0 mean_us=0.0 max_us=0"
pat+=" layout_calls=0 layout_mean_us=0.0 layout_max_us=0 layout_cons_calls=0 layout_cons_us=0"
grep -q "$pat" "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "passthrough: no counters line at start-up"
workload
sleep 2
cluster_stop
last=$(grep "select/cons_tres_passthrough: select_p_job_test: " "$CLUSTER_LOGDIR/slurmctld.log" | tail -n 1)
re='select_p_job_test: calls=[1-9][0-9]* total_us=[0-9]+ mean_us=[0-9.]+ max_us=[0-9]+'
re+=' layout_calls=0 layout_mean_us=0.0 layout_max_us=0 layout_cons_calls=0 layout_cons_us=0$'
grep -Eq "$re" <<<"$last" ||
  ta_fail "passthrough: counters line at shutdown: $last"
[ ! -e "$CLUSTER_DIR/state/topoaware-status.json" ] || ta_fail "the pass-through wrote a status file"
read -r pn pt _ _ <<<"$(counters "$last")"
ta_note "$last"
python3 - "$topo_calls" "$topo_us" "$topo_lcalls" "$topo_lus" "$pn" "$pt" <<'PY'
import sys
tc, tu, lc, lu, pc, pu = map(int, sys.argv[1:])
tm, pm = tu / max(tc, 1), pu / max(pc, 1)
lm = lu / max(lc, 1)
print(f"# workload: topoaware {tc} calls, mean {tm:.1f} us ({lc} layout calls, mean {lm:.1f} us); "
      f"passthrough {pc} calls, mean {pm:.1f} us")
print(f"# ratios topoaware/passthrough: mean {tm / max(pm, 0.001):.2f}x, layout-call mean {lm / max(pm, 0.001):.2f}x, "
      f"total {tu / max(pu, 1):.2f}x")
PY
ta_pass "passthrough: counters line at start-up and shutdown, layout_calls=0, no status file"
