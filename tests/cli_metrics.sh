#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware metrics from a status file and a topology (no cluster, no Slurm command): every line is
# Prometheus text exposition format (HELP and TYPE before each family's samples, label values
# quoted, histogram buckets cumulative and ending in +Inf = _count), and the values are the status
# file's: running layout jobs and their nodes by placement, the cost of an ideal job (ratio 1) and
# of a job split against its ideal (> 1), waiting jobs and the longest wait by mode, job_test
# counters in seconds, the topology's hash; a missing status file gives topoaware_status_up 0 and
# exit 0 (an alert, not a failed scrape); -o writes the file.
set -u
bin="$top_builddir/topoaware"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --json "$tmp/topology.json" >/dev/null || exit 99
hash=$(sed -n 's/^ *"hash": "\(sha256:[0-9a-f]*\)".*/\1/p' "$tmp/topology.json" | head -n 1)
now=$(date +%s)
# Job 12: tp=8 pp=2 dp=2 on the 4 nodes of leaf 1 (ideal).
# Job 15: the same layout over leaves 3 and 4, each DP pair split over both (fallback: above ideal).
# Job 13: strict, waiting 30 s; job 14: prefer, waiting 5 s.
cat >"$tmp/status.json" <<JSON
{"schema": "topoaware-status/1", "plugin": "select/cons_tres_topoaware", "written_at": $((now - 3)),
 "topology": {"file": "$tmp/topology.json", "hash": "$hash", "error": ""},
 "job_test": {"calls": 40, "total_us": 4000000, "max_us": 250000, "layout_calls": 20, "layout_total_us": 3000000,
              "layout_max_us": 250000, "le_us": [100, 1000, 100000], "counts": [10, 20, 9, 1],
              "layout_counts": [0, 10, 9, 1]},
 "jobs": [
  {"job_id": 12, "phase": "placed", "layout": "tp=8,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp", "mode": "prefer",
   "gpus_per_node": 8, "placement": "ideal", "nodes": "n[0001-0004]", "node_order": "n0001,n0002,n0003,n0004",
   "reason": "", "since": $((now - 70)), "updated": $now},
  {"job_id": 15, "phase": "placed", "layout": "tp=8,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp", "mode": "prefer",
   "gpus_per_node": 8, "placement": "fallback", "nodes": "n[0009,0013,0010,0014]",
   "node_order": "n0009,n0013,n0010,n0014", "reason": "no ideal block", "since": $((now - 60)), "updated": $now},
  {"job_id": 13, "phase": "waiting", "layout": "tp=8,cp=1,ep=1,dp=2,pp=1,rank-order=tp-cp-ep-dp-pp", "mode": "strict",
   "gpus_per_node": 8, "placement": "", "nodes": "", "node_order": "", "reason": "no ideal block now",
   "since": $((now - 30)), "updated": $now},
  {"job_id": 14, "phase": "waiting", "layout": "tp=8,cp=1,ep=1,dp=2,pp=1,rank-order=tp-cp-ep-dp-pp", "mode": "prefer",
   "gpus_per_node": 8, "placement": "", "nodes": "", "node_order": "", "reason": "too few nodes free",
   "since": $((now - 5)), "updated": $now}]}
JSON
"$bin" metrics --topology "$tmp/topology.json" --status "$tmp/status.json" >"$tmp/m.prom" 2>"$tmp/m.err" ||
  fail "topoaware metrics failed: $(cat "$tmp/m.err")"
python3 - "$tmp/m.prom" "$hash" "$tmp/topology.json" <<'PY' || fail "metrics: $(cat "$tmp/m.prom")"
import re, sys
text = open(sys.argv[1]).read()
want_hash, topo = sys.argv[2], sys.argv[3]
sample_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (\S+)$')
families, types, samples = set(), {}, {}
for line in text.splitlines():
    if line.startswith("# HELP "):
        families.add(line.split()[2]); continue
    if line.startswith("# TYPE "):
        _, _, name, typ = line.split()
        assert name in families, "TYPE before HELP: " + line
        types[name] = typ; continue
    m = sample_re.match(line)
    assert m, "not exposition format: " + repr(line)
    name, labels, value = m.group(1), m.group(3) or "", float(m.group(4))
    base = re.sub(r'_(bucket|sum|count)$', '', name) if re.sub(r'_(bucket|sum|count)$', '', name) in types else name
    assert base in types, "sample without TYPE: " + line
    samples[(name, labels)] = value
def v(name, labels=""):
    return samples[(name, labels)]
assert v("topoaware_status_up") == 1
assert 3 <= v("topoaware_status_age_seconds") <= 20
assert v("topoaware_topology_info", 'file="%s",hash="%s"' % (topo, want_hash)) == 1
assert v("topoaware_topology_load_error") == 0 and v("topoaware_topology_mismatch") == 0
assert v("topoaware_topology_hosts") == 16
assert v("topoaware_layout_jobs_running", 'placement="ideal"') == 1
assert v("topoaware_layout_jobs_running", 'placement="fallback"') == 1
assert v("topoaware_layout_jobs_running", 'placement="cons_tres"') == 0
assert v("topoaware_layout_nodes_running", 'placement="ideal"') == 4
# Histogram: cumulative, +Inf = count = 2; the ideal job at ratio 1, the split one above.
assert types["topoaware_layout_cost_ratio"] == "histogram"
buckets = [(float(l.split('"')[1]) if '+Inf' not in l else float("inf"), val)
           for (n, l), val in samples.items() if n == "topoaware_layout_cost_ratio_bucket"]
buckets.sort()
assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), buckets
assert buckets[-1] == (float("inf"), 2) and v("topoaware_layout_cost_ratio_count") == 2
assert v("topoaware_layout_cost_ratio_bucket", 'le="1"') == 1, buckets
assert v("topoaware_layout_cost_ratio_sum") > 2
assert v("topoaware_layout_jobs_waiting", 'mode="strict"') == 1
assert v("topoaware_layout_jobs_waiting", 'mode="prefer"') == 1
assert 30 <= v("topoaware_layout_wait_max_seconds", 'mode="strict"') <= 45
assert types["topoaware_job_test_calls_total"] == "counter"
assert v("topoaware_job_test_calls_total", 'jobs="all"') == 40
assert v("topoaware_job_test_seconds_total", 'jobs="layout"') == 3
assert v("topoaware_job_test_max_seconds", 'jobs="all"') == 0.25
h = lambda jobs, le: v("topoaware_job_test_duration_seconds_bucket", 'jobs="%s",le="%s"' % (jobs, le))
assert types["topoaware_job_test_duration_seconds"] == "histogram"
assert (h("all", "0.0001"), h("all", "0.001"), h("all", "0.1"), h("all", "+Inf")) == (10, 30, 39, 40)
assert (h("layout", "0.0001"), h("layout", "+Inf")) == (0, 20)
assert v("topoaware_job_test_duration_seconds_count", 'jobs="all"') == 40
assert v("topoaware_job_test_duration_seconds_sum", 'jobs="layout"') == 3
PY
echo "ok: metrics of a status file: exposition format, jobs by placement, cost histogram, waits, counters"

"$bin" metrics --topology "$tmp/topology.json" --status "$tmp/missing.json" -o "$tmp/out.prom" 2>"$tmp/e.err" ||
  fail "a missing status file must not fail the command: $(cat "$tmp/e.err")"
grep -qx 'topoaware_status_up 0' "$tmp/out.prom" || fail "no topoaware_status_up 0: $(cat "$tmp/out.prom")"
grep -q 'missing.json' "$tmp/e.err" || fail "no warning naming the missing status file: $(cat "$tmp/e.err")"
echo "ok: a missing status file: topoaware_status_up 0, a warning, exit 0; -o writes the file"
