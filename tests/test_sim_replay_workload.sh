#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# placement_sim --workload replay runs the very traces bench/slurm_replay.sh replays through real
# slurmctld: every job of a snapshot is the trace line of the same index (slurm_replay_tool trace,
# seed 2) with its layout and node count, a layout job (plain and single-node jobs send nothing),
# arrived by the snapshot's time; no host is in two jobs; a host pinned by the fragmented start is
# in no job before its pinned job ends; every multi-node trace job is counted in runs.csv.
# --jitter: the same SEED gives the same runs, another SEED another schedule.
set -u
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
sim="$top_builddir/bench/placement_sim" tool="$top_builddir/bench/slurm_replay_tool"
for p in "$sim" "$tool"; do [ -x "$p" ] || { echo "FAIL: $p not built"; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tool" trace --seed 2 --nodes 64 --per-leaf 8 --span 240 --load 1.0 --frag >"$tmp/trace.txt" ||
  { echo "FAIL: slurm_replay_tool trace"; exit 1; }
"$sim" --config ft2-2to1-8:64:1.0 --workload replay --seeds 2 --policies topoaware --out "$tmp/out" \
  --snapshots "$tmp/snap" --snapshot-count 12 >"$tmp/sim.txt" || { cat "$tmp/sim.txt"; echo "FAIL: placement_sim"; exit 1; }
grep -q 'replay traces' "$tmp/sim.txt" || { cat "$tmp/sim.txt"; echo "FAIL: not the replay workload"; exit 1; }
python3 - "$tmp/trace.txt" "$tmp/snap/ft2-2to1-8-64" "$tmp/out/runs.csv" <<'PY'
import csv, glob, json, sys
trace_path, d, runs = sys.argv[1:4]
trace = {}
for line in open(trace_path):
    if line.startswith("#"):
        continue
    idx, arr, rt, n, tp, pp, dp, kind, node = line.split()
    trace[int(idx)] = dict(arr=float(arr), rt=float(rt), n=int(n), tp=int(tp), pp=int(pp), dp=int(dp), kind=kind,
                           node=node)
topo = json.load(open(d + "/topology.json"))
names = [h["name"] for h in topo["hosts"]]
fails = jobs = 0
for f in sorted(glob.glob(d + "/s2/*/snap*.json")):
    s = json.load(open(f))
    seen = set()
    for j in s["jobs"]:
        jobs += 1
        t = trace[int(j["name"][1:])]
        lay = j["layout"]
        if t["kind"] != "layout" or t["n"] != len(j["nodes"]) or (lay["tp"], lay["pp"], lay["dp"]) != (t["tp"], t["pp"], t["dp"]):
            print("FAIL: %s %s is not trace job %s" % (f, j["name"], t)); fails += 1
        if t["arr"] > s["time"]:
            print("FAIL: %s %s runs before its arrival" % (f, j["name"])); fails += 1
        if seen & set(j["nodes"]):
            print("FAIL: %s %s shares hosts" % (f, j["name"])); fails += 1
        seen |= set(j["nodes"])
    for t in trace.values():
        # frag hosts are named n0001.. in leaf order, the generated fabric's hosts in the same order
        if t["kind"] == "frag" and s["time"] < t["rt"]:
            host = names[int(t["node"][1:]) - 1]
            if host in seen:
                print("FAIL: %s: pinned host %s (%s) given to a job at %.1f s" % (f, host, t["node"], s["time"])); fails += 1
rows = [r for r in csv.DictReader(open(runs)) if r["seed"] == "2"]
want = sum(1 for t in trace.values() if t["kind"] != "frag" and t["n"] > 1)
for r in rows:
    if int(r["multi_node_jobs"]) != want:
        print("FAIL: %s counted %s multi-node jobs, the trace has %d" % (r["policy"], r["multi_node_jobs"], want)); fails += 1
print("%d job-snapshots checked against %d trace jobs" % (jobs, len(trace)))
if jobs == 0:
    print("FAIL: no job in the snapshots"); fails += 1
sys.exit(1 if fails else 0)
PY

# (decision_us, the last column, is a timing)
for run in 1a:1 1b:1 2:2; do
  "$sim" --config ft2-2to1-8:64:1.0 --workload replay --seeds 3 --policies slurm-tree --jitter "3:${run#*:}" \
    --out "$tmp/j${run%:*}" >/dev/null || { echo "FAIL: placement_sim --jitter 3:${run#*:}"; exit 1; }
  sed 's/,[^,]*$//' "$tmp/j${run%:*}/runs.csv" >"$tmp/jitter.${run%:*}"
done
cmp -s "$tmp/jitter.1a" "$tmp/jitter.1b" || { echo "FAIL: --jitter 3:1 not repeatable"; exit 1; }
! cmp -s "$tmp/jitter.1a" "$tmp/jitter.2" || { echo "FAIL: --jitter 3:2 gave the schedules of 3:1"; exit 1; }
echo "PASS"
