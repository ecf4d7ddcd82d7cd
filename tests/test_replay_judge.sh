#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/slurm_replay/analyze.py --netsim (bench/README.md, "bench-slurm"): the
# network judge over a replay's real allocations, on a replay folder written by hand (the 64-node
# fabric of bench/slurm_replay.sh, two layout jobs, a bare and a whole run). Checks: one snapshot
# per interval between job starts and ends; bare's tasks in node-index order, whole's in the order
# `topoaware plan` gives the same node set (spank_topoaware's); a job's time is the mean of its
# snapshots' results weighted by their duration; a job whose placement slurmctld logged with its
# node order (LogLevel=verbose) is judged in that order; alone, a job takes its NIC bound (the
# normalisation of the stretch); metrics.json and jobs.csv carry the judge's numbers. And the
# nodes free during backfill cycles that plans starting later hold (whole's slurmctld.log), and
# the main scheduler's runs (whole's sdiag.txt); the mean wait a job and a node asked; the share of
# the idle nodes backfill's tests of small jobs may use.
set -u
if ! grep -q '^#define HAVE_SIMGRID 1' "$top_builddir/config.h" 2>/dev/null; then
  echo "SKIP: libsimgrid-dev not installed (configure did not find SimGrid >= 3.32; bench/netsim is not built)"
  exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
bin="$top_builddir/topoaware" netsim="$top_builddir/bench/netsim/netsim" tool="$top_builddir/bench/slurm_replay_tool"
for p in "$bin" "$netsim" "$tool"; do [ -x "$p" ] || { echo "FAIL: $p not built"; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
d=$tmp/replay
mkdir -p "$d/bare.r1" "$d/whole.r1"
"$bin" generate fat-tree --leaves 8 --hosts-per-leaf 8 --uplinks 4 --spines 4 --json "$d/topology.json" >/dev/null ||
  { echo "FAIL: topoaware generate"; exit 1; }
cat >"$d/trace.txt" <<'T'
# idx arrival_s runtime_s nodes tp pp dp kind node
0 0.0 100 4 8 1 4 layout -
1 0.0 30 4 8 1 4 layout -
2 0.0 30 2 8 2 1 plain -
T
job() {  # id idx kind submit start end nodelist
  echo "JobId=$1 JobName=ta.$2.$3 JobState=COMPLETED SubmitTime=2026-01-01T00:00:$4 StartTime=2026-01-01T00:0$5" \
       "EndTime=2026-01-01T00:0$6 NodeList=$7"
}
for run in bare.r1 whole.r1; do
  {
    job 1 0 layout 00 0:00 1:40 'n[0010,0001-0002,0009]'
    job 2 1 layout 00 1:10 1:40 'n[0003-0004,0013-0014]'
    job 3 2 plain 00 0:00 0:30 'n[0005-0006]'
  } >"$d/$run/jobs.txt"
done
# Two backfill cycles of whole: at 0:05 (6 nodes busy) a plan for 1:40 holds two free nodes and
# two busy ones, and a job starting at once holds one more (not counted); at 1:15 (8 busy) a plan
# holds two free nodes and a busy one. Backfill tests the 2-node job 3 at 0:05 on two busy nodes and
# two idle ones (2 of the 58 idle nodes open to it), and later in the future (not counted).
{
  echo "[2026-01-01T00:00:05.100] sched/backfill: _dump_job_sched: JobId=9 to start at 2026-01-01T00:01:40," \
       "end at 2026-01-01T00:02:40 on nodes n[0001-0002,0011-0012] in partition debug"
  echo "[2026-01-01T00:00:05.101] sched/backfill: _dump_job_sched: JobId=8 to start at 2026-01-01T00:00:05," \
       "end at 2026-01-01T00:01:05 on nodes n0020 in partition debug"
  echo "[2026-01-01T00:01:15.300] sched/backfill: _dump_job_sched: JobId=9 to start at 2026-01-01T00:01:40," \
       "end at 2026-01-01T00:02:40 on nodes n[0003,0015-0016] in partition debug"
  echo "[2026-01-01T00:00:05.200] sched/backfill: _dump_job_test: Test JobId=3 at 2026-01-01T00:00:05 on" \
       "n[0005-0006,0011-0012]"
  echo "[2026-01-01T00:00:05.201] sched/backfill: _dump_job_test: Test JobId=3 at 2026-01-01T00:01:40 on" \
       "n[0001-0064]"
  # The select plugin's placement of job 2 (LogLevel=verbose), in an order that counted job 1's
  # ring: the judge must take it, not the order of the nodes alone.
  echo "[2026-01-01T00:01:10.000] select/cons_tres_topoaware: JobId=2 placed: ideal, 4 nodes x 8 GPUs," \
       "tp=8,cp=1,ep=1,dp=4,pp=1,rank-order=tp-cp-ep-dp-pp, on n[0003-0004,0013-0014]; node order n0004,n0003,n0014,n0013"
} >"$d/whole.r1/slurmctld.log"
printf 'Jobs started:   3\n\nMain schedule statistics (microseconds):\n\tLast cycle:   39\n\tTotal cycles: 7\n\nBackfilling stats\n\tTotal cycles: 5\n' \
  >"$d/whole.r1/sdiag.txt"
# Legacy traffic (the trace's bytes, every job in phase): the checks below count on known bytes.
python3 "$top_srcdir/bench/slurm_replay/analyze.py" --out "$d" --topoaware "$bin" --tool "$tool" \
  --netsim "$netsim" --traffic legacy >"$tmp/report.txt" 2>&1 || { cat "$tmp/report.txt"; echo "FAIL: analyze.py"; exit 1; }
grep -E 'netsim' "$tmp/report.txt"
python3 - "$d" "$bin" <<'PY'
import csv, glob, json, subprocess, sys
d, binary = sys.argv[1], sys.argv[2]
fails = 0
def fail(msg):
    global fails
    print("FAIL: " + msg)
    fails += 1
plan = json.loads(subprocess.run([binary, "plan", "--topology", d + "/topology.json", "--tp", "8", "--pp", "1",
                                  "--dp", "4", "--gpus-per-node", "8", "--free", "n[0001-0002,0009-0010]",
                                  "--format", "json"], capture_output=True, text=True, check=True).stdout)
want_order = {"bare.r1": ["n0001", "n0002", "n0009", "n0010"],
              "whole.r1": [h["host"] for h in plan["rank_order"]]}
metrics = json.load(open(d + "/metrics.json"))
rows = {(r["run"], r["jobid"]): r for r in csv.DictReader(open(d + "/jobs.csv"))}
for run in ("bare.r1", "whole.r1"):
    snaps = sorted(f for f in glob.glob("%s/%s/netsim/snap*.json" % (d, run)) if not f.endswith(".result.json"))
    if len(snaps) != 2:  # [0, 70): job 1; [70, 100): jobs 1 and 2 (the plain job is not judged)
        fail("%s: %d snapshots, expected 2" % (run, len(snaps)))
        continue
    docs = [json.load(open(s)) for s in snaps]
    res = [{j["name"]: j for j in json.load(open(s[:-5] + ".pair.legacy.result.json"))["jobs"]} for s in snaps]
    # snapshot jobs are named by their trace index (jobs 1 and 2 are trace jobs 0 and 1)
    if [sorted(j["name"] for j in x["jobs"]) for x in docs] != [["0"], ["0", "1"]]:
        fail("%s: snapshot jobs %s" % (run, [[j["name"] for j in x["jobs"]] for x in docs]))
        continue
    if docs[0]["jobs"][0]["nodes"] != want_order[run]:
        fail("%s: job 1 ordered %s, expected %s" % (run, docs[0]["jobs"][0]["nodes"], want_order[run]))
    job2 = [j["nodes"] for j in docs[1]["jobs"] if j["name"] == "1"][0]
    plan2 = json.loads(subprocess.run([binary, "plan", "--topology", d + "/topology.json", "--tp", "8", "--pp", "1",
                                       "--dp", "4", "--gpus-per-node", "8", "--free", "n[0003-0004,0013-0014]",
                                       "--format", "json"], capture_output=True, text=True, check=True).stdout)
    want2 = {"bare.r1": ["n0003", "n0004", "n0013", "n0014"], "whole.r1": ["n0004", "n0003", "n0014", "n0013"]}[run]
    if run == "whole.r1" and want2 == [h["host"] for h in plan2["rank_order"]]:
        fail("premise: the logged order of job 2 is its order alone")
    if job2 != want2:
        fail("%s: job 2 ordered %s, expected %s" % (run, job2, want2))
    # Alone (snapshot 0) job 1 runs at its NIC bound: 8 ranks x 2(4-1)/4 x 175e9*2/8 B over 25 GB/s = 21 s.
    for rt in ("adaptive", "dmodk"):
        got = res[0]["0"][rt]["shared_s"]
        if abs(got - 21.0) > 0.01 * 21:
            fail("%s: job 1 alone, %s: %.3f s, expected its NIC bound 21 s" % (run, rt, got))
    r = rows.get((run, "1"))
    if not r or abs(float(r["netsim_nic_bound_s"]) - 21.0) > 1e-6 * 21:
        fail("%s: jobs.csv NIC bound of job 1: %s" % (run, r and r["netsim_nic_bound_s"]))
        continue
    # In node-index order, job 1's ring edge n0002 -> n0009 and job 2's n0004 -> n0013 leave leaf 1
    # for hosts of equal index mod 4: D-mod-K puts both on its uplink 0, so job 1 is slower beside
    # job 2 (and the weighting below matters).
    if run == "bare.r1" and not res[1]["0"]["dmodk"]["shared_s"] > 1.2 * res[0]["0"]["dmodk"]["shared_s"]:
        fail("bare.r1: job 1 not slowed by job 2 under D-mod-K: %s" % res[1]["0"]["dmodk"])
    for rt in ("adaptive", "dmodk"):  # 70 s alone, 30 s beside job 2
        want = (70 * res[0]["0"][rt]["shared_s"] + 30 * res[1]["0"][rt]["shared_s"]) / 100
        if abs(float(r["netsim_%s_s" % rt]) - want) > 1e-4 * want:
            fail("%s: job 1 %s time %s, expected the duration-weighted mean %.6g" % (run, rt, r["netsim_%s_s" % rt], want))
    m = metrics[run]
    if m.get("net_jobs") != 2 or m.get("net_snapshots") != 2 or not m.get("net_dmodk", 0) >= 0.999:
        fail("%s: metrics %s" % (run, {k: v for k, v in m.items() if k.startswith("net")}))
w = metrics["whole.r1"]
if (w.get("plan_cycles"), w.get("plan_free_now"), w.get("plan_held_free_now")) != (2, 57.0, 2.0):
    fail("whole.r1: backfill plans: %s cycles, %s free nodes, %s of them held; expected 2, 57, 2"
         % (w.get("plan_cycles"), w.get("plan_free_now"), w.get("plan_held_free_now")))
# waits 0, 70 and 0 s of jobs of 4, 4 and 2 nodes: 23.3 s a job, 28 s a node asked
if abs(w.get("wait_mean", 0) - 70 / 3) > 1e-9 or abs(w.get("wait_node_mean", 0) - 28.0) > 1e-9:
    fail("whole.r1: mean wait %s, per node asked %s; expected 23.33, 28" % (w.get("wait_mean"), w.get("wait_node_mean")))
if w.get("small_tests") != 1 or abs(w.get("small_open", 0) - 2 / 58) > 1e-9:
    fail("whole.r1: small jobs' backfill tests %s, idle nodes open %s; expected 1, 2/58"
         % (w.get("small_tests"), w.get("small_open")))
if w.get("main_cycles") != 7:
    fail("whole.r1: main scheduler runs %s, expected 7 (sdiag.txt)" % w.get("main_cycles"))
if "plan_cycles" in metrics["bare.r1"]:
    fail("bare.r1 has no slurmctld.log, yet plan metrics: %s" % metrics["bare.r1"]["plan_cycles"])
pj = metrics["whole.r1"].get("net_paired")
if not pj or pj["jobs"] != 2:
    fail("no job-by-job whole/bare comparison: %s" % pj)
print("replay judge: %d failures" % fails)
sys.exit(1 if fails else 0)
PY
