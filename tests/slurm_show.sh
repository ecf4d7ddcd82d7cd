#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware show on a real cluster: 16 nodes as 4 leaves x 4 (tests/lib/select_fabric.sh) under
# select/cons_tres_topoaware, which writes its status file (StatusInterval=0) into
# StateSaveLocation. Plain one-node jobs make the free nodes 3, 3, 2, 0 per leaf; then
#   L1: --tp=8 --pp=2 --dp=2 -N4 (its batch script records what spank_topoaware gave each task),
#   L2: --tp=8 --dp=2 -N2,
#   S:  strict --tp=8 --dp=2 -N2 once no leaf has 2 free nodes: it waits (Resources).
# `topoaware show` run as an admin would (no --topology, no --status: topoaware.conf beside
# SLURM_CONF, the status file in StateSaveLocation), as text, json and svg, and with --status
# naming the file the plugin wrote. Asserted: every job's nodes equal `scontrol show job`'s, its
# leaf groups those of the fabric; the free nodes equal sinfo's idle nodes (the "planned" ones, idle
# nodes backfill holds for S, included); the layout jobs are
# placed ideal with an order that passes the check, and cost what `topoaware plan` says of the same
# node set; S is waiting with
# Slurm's reason Resources and the plugin's reason, the one slurmctld logged; `show --job L1`
# lists the ranks in the order of the status file, of `topoaware plan`'s rank order for that
# node set, and of TOPOAWARE_NODE_RANK in L1's tasks. Then the failure paths against the same
# cluster: an unreadable status file still shows the jobs and says how to fix it; another
# topology file (different hash) is called out and `show --job` exits 5; an unknown job exits 2.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
sel_setup
ta_require_cmd python3 python3
ta_require_cmd dot graphviz
b=$(cd "${top_builddir:-.}" && pwd)
show() { cluster_run "$b/topoaware" show "$@"; }

printf '%s\n' "StatusInterval=0" >"$SEL_WORK/topoaware.conf"
sel_start select/cons_tres_topoaware --file "topoaware.conf=$SEL_WORK/topoaware.conf"
STATUS=$CLUSTER_DIR/state/topoaware-status.json

sel_busy n0001 n0005 n0009 n0010 n0013 n0014 n0015 n0016
layout=(--exclusive --gpus-per-node=8 --ntasks-per-node=8 --tp=8 -o /dev/null)
# L1 records, per task, its node and node rank as spank_topoaware set them, then sleeps.
l1_cmd="srun bash -c 'echo \$SLURMD_NODENAME \${TOPOAWARE_NODE_RANK:--} \$SLURM_LOCALID'"
l1_cmd+=" >$SEL_WORK/L1.tasks 2>&1; sleep 600"
l1=$(cluster_run sbatch --parsable "${layout[@]}" -N4 --pp=2 --dp=2 -J L1 \
  --wrap "$l1_cmd")
cluster_wait_job "$l1" 60 RUNNING >/dev/null
l2=$(cluster_run sbatch --parsable "${layout[@]}" -N2 --dp=2 -J L2 --wrap 'sleep 600')
cluster_wait_job "$l2" 60 RUNNING >/dev/null
ta_wait_for 60 test -s "$SEL_WORK/L1.tasks" || ta_fail "L1's tasks wrote nothing"
ta_wait_for 60 sh -c "[ \$(wc -l <'$SEL_WORK/L1.tasks') -ge 32 ]" || ta_fail "L1's tasks: $(cat "$SEL_WORK/L1.tasks")"

# The premise of S: two free nodes, no leaf with two of them.
cluster_run sinfo -h -N -t idle -o '%N' | sort -u >"$SEL_WORK/free"
per_leaf=$(while read -r n; do sel_leaf "$n"; done <"$SEL_WORK/free" |
  sort | uniq -c | awk '{print $1}' | sort -rn | tr '\n' ' ')
[ "$(wc -l <"$SEL_WORK/free")" -eq 2 ] && [ "$per_leaf" = "1 1 " ] ||
  ta_fail "premise: expected 2 idle nodes on 2 leaves after L1 and L2, sinfo says $(echo $(cat "$SEL_WORK/free"))"
s=$(cluster_run sbatch --parsable "${layout[@]}" -N2 --dp=2 -J S --topo-mode=strict --topo-max-wait=30m \
  --wrap 'sleep 600')
ta_wait_for 30 grep -q "JobId=$s (strict, 2 nodes x 8 GPUs) waits: " "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "slurmctld did not log why strict job $s waits"
why=$(sed -n "s/.*JobId=$s (strict, 2 nodes x 8 GPUs) waits: \(.*\); at most .*/\1/p" "$CLUSTER_LOGDIR/slurmctld.log" |
  tail -n 1)
ta_wait_for 30 grep -q "\"job_id\": $s," "$STATUS" || ta_fail "the status file has no entry for job $s"
[ "$(cluster_job_state "$s")" = PENDING ] || ta_fail "strict job $s is not pending"
ta_note "jobs: L1=$l1 L2=$l2 S=$s busy=${SEL_BUSY_IDS[*]}; S waits: $why"

# Slurm's view, for the assertions: job -> sorted node names.
declare -A NODES
for id in "$l1" "$l2" "${SEL_BUSY_IDS[@]}"; do NODES[$id]=$(sel_job_nodes "$id" | tr '\n' ' '); done
# What `topoaware plan` says of each layout job on exactly its nodes (same engine, cost model).
plan_of() { # JOBID PLAN-LAYOUT-ARGS...: the plan's JSON for the job's node set
  local id=$1 list; shift
  list=$(cluster_run scontrol -o show job "$id" | sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p')
  "$b/topoaware" plan --topology "$SEL_TOPO" --tp 8 "$@" --free "$list" --format json
}
plan_of "$l1" --pp 2 --dp 2 >"$SEL_WORK/plan.$l1.json"
plan_of "$l2" --dp 2 >"$SEL_WORK/plan.$l2.json"
expect=$SEL_WORK/expect.json
{
  echo "{\"free\": $(wc -l <"$SEL_WORK/free"), \"waiting\": $s," \
    "\"reason\": $(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$why")," \
    "\"layout\": [$l1, $l2], \"jobs\": {"
  sep=""
  for id in "${!NODES[@]}"; do
    printf '%s"%s": [%s]' "$sep" "$id" "$(for n in ${NODES[$id]}; do printf '"%s",' "$n"; done | sed 's/,$//')"
    sep=", "
  done
  echo "}}"
} >"$expect"

# 1. JSON, found as an admin's shell finds it (SLURM_CONF only).
show --format json >"$SEL_WORK/show.json" 2>"$SEL_WORK/show.err" ||
  ta_fail "topoaware show --format json failed: $(cat "$SEL_WORK/show.err")"
python3 - "$SEL_WORK/show.json" "$expect" \
  "$STATUS" "$SEL_WORK" <<'PY' || ta_fail "topoaware show --format json: see above"
import json, sys
show, exp, status = (json.load(open(p)) for p in sys.argv[1:4])
work = sys.argv[4]
leaf = lambda n: (int(n[1:]) - 1) // 4          # leaf group of nNNNN in the generated 4 x 4 fabric
assert show["schema"] == "topoaware-show/1", show["schema"]
assert show["status"]["available"], show["status"]
assert show["status"]["topology_matches"], show["status"]
assert show["nodes"]["free"] == exp["free"], (show["nodes"], exp["free"])
jobs = {str(j["job_id"]): j for j in show["jobs"]}
assert set(jobs) == set(exp["jobs"]), (sorted(jobs), sorted(exp["jobs"]))
for id, nodes in exp["jobs"].items():
    j = jobs[id]
    held = sorted(h for lg in j["leaf_groups"]
                  for h in [x for x in lg["hosts"].replace("n[", "").replace("]", "").split(",")])
    names = sorted(h["name"] for lg in show["leaf_groups"] for h in lg["hosts"] if int(id) in h["jobs"])
    assert names == sorted(nodes), (id, names, nodes)
    assert j["node_count"] == len(nodes), (id, j["node_count"])
    want = {}
    for n in nodes: want[leaf(n)] = want.get(leaf(n), 0) + 1
    got = {lg["leaf_group"]: lg["nodes"] for lg in j["leaf_groups"]}
    assert got == want, (id, got, want)
st = {j["job_id"]: j for j in status["jobs"]}
for id in exp["layout"]:
    j = jobs[str(id)]
    assert j["status"] and j["status"]["phase"] == "placed", (id, j["status"])
    assert j["order_check"] == "match", (id, j["order_check"], j["notes"])
    assert ",".join(j["node_order"]) == st[id]["node_order"], (id, j["node_order"], st[id]["node_order"])
    assert j["span"]["ideal"], (id, j["span"])
    plan = json.load(open("%s/plan.%d.json" % (work, id)))
    assert plan["status"] == "ideal" and [r["host"] for r in plan["rank_order"]] == j["node_order"], (id, plan)
    assert j["cost"] == plan["cost"], (id, j["cost"], plan["cost"])  # the same numbers as plan
for id in set(exp["jobs"]) - {str(x) for x in exp["layout"]}:
    assert jobs[id]["status"] is None and jobs[id]["layout"] is None, jobs[id]
w = {j["job_id"]: j for j in show["waiting"]}
assert list(w) == [exp["waiting"]], list(w)
w = w[exp["waiting"]]
assert w["slurm_reason"] == "Resources", w["slurm_reason"]
assert w["status"]["phase"] == "waiting" and w["status"]["mode"] == "strict", w["status"]
assert w["status"]["reason"].startswith(exp["reason"]), (w["status"]["reason"], exp["reason"])  # as logged
free = sorted(h["name"] for lg in show["leaf_groups"] for h in lg["hosts"] if h["use"] in ("free", "planned"))
assert len(free) == exp["free"], free
PY
ta_pass "show --format json (defaults from SLURM_CONF): every job's nodes and leaf groups equal scontrol's," \
  "$(wc -l <"$SEL_WORK/free") free nodes as sinfo, layout jobs placed ideal with a checked order, job $s waiting" \
  "(Resources: $why)"

# 2. Text, with --status naming the file the plugin wrote.
show --status "$STATUS" --format text >"$SEL_WORK/show.txt" 2>"$SEL_WORK/show.err" ||
  ta_fail "show --format text: $(cat "$SEL_WORK/show.err")"
sed 's/^/# /' "$SEL_WORK/show.txt"
grep -q "^Status: $STATUS (select/cons_tres_topoaware, written " "$SEL_WORK/show.txt" || ta_fail "text: no status line"
pat="^Nodes: 2 free( \([0-9] planned by backfill for pending jobs\))?, 0 mixed, 14 allocated, 0 unavailable"
grep -qE "$pat" "$SEL_WORK/show.txt" ||
  ta_fail "text: node counts"
for id in "$l1" "$l2"; do
  pat="^  $id +RUNNING +root +L[12] +[24] +[0-9:,]+ +tp=8,(pp=2,)?dp=2 +prefer +ideal +ideal +1\.00x +1\.000 "
  grep -qE "$pat" "$SEL_WORK/show.txt" ||
    ta_fail "text: no running line for layout job $id"
done
pat="^  $s +PENDING +root +S +2 +tp=8,dp=2 +strict +[0-9]+(s|m[0-9]+s) +Resources +"
grep -qE "$pat$(sed 's/[][\.*^$]/\\&/g' <<<"$why")" "$SEL_WORK/show.txt" ||
  ta_fail "text: no waiting line for job $s with its reasons"
for n in $(cat "$SEL_WORK/free"); do
  grep -qE "^  $n +(idle +free|planned +free, planned by backfill)\$" "$SEL_WORK/show.txt" ||
    ta_fail "text: free node $n not shown free"
done
ta_pass "show --status FILE --format text: running, waiting (with both reasons) and free nodes as Slurm says"

# 3. SVG.
show --format svg --output "$SEL_WORK/show.svg" 2>"$SEL_WORK/show.err" ||
  ta_fail "show --format svg: $(cat "$SEL_WORK/show.err")"
grep -q "<svg" "$SEL_WORK/show.svg" && grep -q "leaf group 3" "$SEL_WORK/show.svg" &&
  grep -q "job $l1" "$SEL_WORK/show.svg" ||
  ta_fail "show --format svg: not a picture of the leaf groups and jobs"
show --job "$l1" --format svg --output "$SEL_WORK/job.svg" 2>"$SEL_WORK/show.err" ||
  ta_fail "show --job --format svg: $(cat "$SEL_WORK/show.err")"
grep -qE "node 3: ranks 24(-|&#45;)31" "$SEL_WORK/job.svg" ||
  ta_fail "show --job --format svg: the job's nodes do not carry their ranks"
# Kept beside the test's log as examples of the output (make clean removes them).
cp "$SEL_WORK/show.txt" "$b/tests/slurm_show.example.txt"
cp "$SEL_WORK/show.svg" "$b/tests/slurm_show.example.svg"
cp "$SEL_WORK/job.svg" "$b/tests/slurm_show.example-job.svg"
ta_pass "show --format svg --output: $(wc -c <"$SEL_WORK/show.svg") bytes," \
  "leaf groups and jobs drawn; examples in $b/tests/slurm_show.example*"

# 4. The rank map of L1: the status file's order = plan's rank order of the node set = the tasks'.
show --job "$l1" >"$SEL_WORK/job.txt" 2>"$SEL_WORK/show.err" ||
  ta_fail "show --job $l1: rc $?: $(cat "$SEL_WORK/show.err")"
sed 's/^/# /' "$SEL_WORK/job.txt"
grep -q "checked: the rank order of the node set over .* is the same" "$SEL_WORK/job.txt" ||
  ta_fail "show --job: order not checked"
map=$(awk '/^  NODE +RANKS/ {on=1; next} on && NF >= 11 {print $3} on && NF < 11 {on=0}' "$SEL_WORK/job.txt" |
  tr '\n' ',' | sed 's/,$//')
ranks=$(awk '/^  NODE +RANKS/ {on=1; next} on && NF >= 11 {print $2} on && NF < 11 {on=0}' "$SEL_WORK/job.txt" |
  tr '\n' ' ')
[ "$ranks" = "0-7 8-15 16-23 24-31 " ] || ta_fail "show --job: rank ranges '$ranks'"
py='import json,sys; print([j["node_order"] for j in json.load(open(sys.argv[1]))["jobs"]'
py+=' if j["job_id"] == int(sys.argv[2])][0])'
recorded=$(python3 -c "$py" "$STATUS" "$l1")
[ "$map" = "$recorded" ] || ta_fail "show --job: map order $map, status file $recorded"
list=$(cluster_run scontrol -o show job "$l1" | sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p')
planned=$("$b/topoaware" plan --topology "$SEL_TOPO" --tp 8 --pp 2 --dp 2 --free "$list" --format json |
  python3 -c 'import json,sys; print(",".join(r["host"] for r in json.load(sys.stdin)["rank_order"]))')
[ "$map" = "$planned" ] || ta_fail "show --job: map order $map, plan's rank order of $list: $planned"
tasks=$(awk '$3 == 0 {print $2, $1}' "$SEL_WORK/L1.tasks" | sort -n | awk '{print $2}' | tr '\n' ',' | sed 's/,$//')
[ "$map" = "$tasks" ] ||
  ta_fail "show --job: map order $map, TOPOAWARE_NODE_RANK of L1's tasks:" \
    "$tasks ($(cat "$SEL_WORK/L1.tasks" | head -3))"
show --job "$l1" --format json | python3 -c '
import json, sys
j = json.load(sys.stdin)
m = j["rank_map"]
assert [r["first_rank"] for r in m] == [0, 8, 16, 24], m
assert [(r["tp"], r["dp"], r["pp"]) for r in m] == [("0-7", "0", "0"), ("0-7", "1", "0"),
                                                    ("0-7", "0", "1"), ("0-7", "1", "1")], m
# one DP ring per leaf
assert len({r["leaf_group"] for r in m[:2]}) == 1 and len({r["leaf_group"] for r in m[2:]}) == 1, m
' || ta_fail "show --job --format json: rank map"
show --job "$s" | grep -q "^Waiting for .*: $(sed 's/[][\.*^$]/\\&/g' <<<"$why")" ||
  ta_fail "show --job $s: no waiting reason"
msg="show --job $l1: ranks in the order of the status file, of"
msg+=" plan's rank order and of the tasks' TOPOAWARE_NODE_RANK ($map)"
ta_pass "$msg"

# 5. Failure paths against the same cluster.
out=$(show --status "$SEL_WORK/nothing.json" 2>"$SEL_WORK/show.err") || ta_fail "show with a missing status file failed"
grep -q "^Status: not available: $SEL_WORK/nothing.json does not exist" <<<"$out" &&
  grep -q "give --status FILE" <<<"$out" ||
  ta_fail "missing status file: no clear note: $out"
grep -qE "^  $l1 +RUNNING +root +L1 +4 " <<<"$out" || ta_fail "missing status file: job $l1 not listed: $out"
grep -q "warning: layouts unknown" "$SEL_WORK/show.err" || ta_fail "missing status file: no warning on stderr"
"$b/topoaware" generate fat-tree --leaves 2 --hosts-per-leaf 8 --json "$SEL_WORK/other.json" >/dev/null
rc=0; show --topology "$SEL_WORK/other.json" --job "$l1" >"$SEL_WORK/other.txt" 2>"$SEL_WORK/show.err" || rc=$?
[ "$rc" = 5 ] || ta_fail "show --job with another topology: exit $rc, expected 5"
grep -q "WARNING: the status file was written with topology" "$SEL_WORK/other.txt" ||
  ta_fail "another topology: not called out"
rc=0; show --job 99999 >/dev/null 2>"$SEL_WORK/show.err" || rc=$?
[ "$rc" = 2 ] && grep -q "job 99999 is not running or pending" "$SEL_WORK/show.err" ||
  ta_fail "unknown job: exit $rc: $(cat "$SEL_WORK/show.err")"
msg="a missing status file still shows the jobs and says what"
msg+=" to do; another topology exits 5; an unknown job exits 2"
ta_pass "$msg"

# 6. topoaware metrics on the same cluster, as an admin's cron would run it (no paths given): the
# plugin's status file read through topoaware.conf, running layout jobs counted, and the call-time
# histogram the plugin keeps: as many calls in it as select_p_job_test calls counted.
cluster_run "$b/topoaware" metrics -o "$SEL_WORK/ta.prom" 2>"$SEL_WORK/metrics.err" ||
  ta_fail "topoaware metrics failed: $(cat "$SEL_WORK/metrics.err")"
m() { sed -n "s/^$1 //p" "$SEL_WORK/ta.prom"; }
[ "$(m topoaware_status_up)" = 1 ] || ta_fail "metrics: status not read: $(cat "$SEL_WORK/metrics.err")"
calls=$(m 'topoaware_job_test_calls_total{jobs="all"}')
count=$(m 'topoaware_job_test_duration_seconds_count{jobs="all"}')
[ -n "$calls" ] && [ "$calls" -gt 0 ] && [ "$count" = "$calls" ] ||
  ta_fail "metrics: job_test calls $calls, histogram count $count: $(grep job_test "$SEL_WORK/ta.prom")"
running=$(m 'topoaware_layout_jobs_running{placement="ideal"}')
[ -n "$running" ] && [ "$running" -ge 1 ] ||
  ta_fail "metrics: no running ideal layout job: $(grep layout "$SEL_WORK/ta.prom")"
ta_pass "topoaware metrics: the plugin's status through topoaware.conf, $calls job_test calls in the histogram," \
  "$running ideal layout job(s) running"
