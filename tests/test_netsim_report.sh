#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# placement_sim --snapshots and bench/netsim_report.py on a small run (docs/design.md,
# "How placement is judged"):
# the snapshots hold every running multi-node job once, each host at most once, slurm-tree's nodes
# in node-index order; netsim accepts them; a job inside one leaf group takes exactly its NIC bound
# alone (the normalisation the report divides by); the report's slurm-tree row is 1 against itself.
# Then its helpers: bench/netsim_spread.py (one policy against its own second run),
# bench/netsim_losers.py (losers, ties and winners with their placements' shape) and
# bench/netsim_order_only.py (stock Slurm's nodes in topoaware's rank order).
set -u
if ! grep -q '^#define HAVE_SIMGRID 1' "$top_builddir/config.h" 2>/dev/null; then
  echo "SKIP: libsimgrid-dev not installed (configure did not find SimGrid >= 3.32; bench/netsim is not built)"
  exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
sim="$top_builddir/bench/placement_sim" bin="$top_builddir/bench/netsim/netsim"
for p in "$sim" "$bin"; do [ -x "$p" ] || { echo "FAIL: $p not built"; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$sim" --config ft2-2to1:256 --seeds 1 --jobs 120 --policies topoaware --out "$tmp/out" \
  --snapshots "$tmp/snap" --snapshot-count 2 >"$tmp/sim.txt" || { echo "FAIL: placement_sim"; exit 1; }
d="$tmp/snap/ft2-2to1-256"
[ -f "$d/topology.json" ] || { echo "FAIL: no topology.json"; exit 1; }
n=$(ls "$d"/s1/slurm-tree/snap*.json "$d"/s1/topoaware/snap*.json 2>/dev/null | wc -l)
[ "$n" = 4 ] || { echo "FAIL: expected 2 snapshots per policy, found $n files"; exit 1; }
python3 "$top_srcdir/bench/netsim_report.py" --snapshots "$tmp/snap" --netsim "$bin" --runs "$tmp/out/runs.csv" \
  --out "$tmp/rep" --traffic legacy >"$tmp/rep.txt" || { cat "$tmp/rep.txt"; echo "FAIL: netsim_report.py"; exit 1; }
cat "$tmp/rep.txt"
python3 - "$d" "$tmp/rep" <<'PY'
import csv, glob, json, sys
d, rep = sys.argv[1], sys.argv[2]
topo = json.load(open(d + "/topology.json"))
idx = {h["name"]: i for i, h in enumerate(topo["hosts"])}
fails = checked = 0
for f in sorted(glob.glob(d + "/s1/*/snap*.json")):
    if f.endswith(".result.json"):
        continue
    s = json.load(open(f))
    res = {j["name"]: j for j in json.load(open(f[:-5] + ".pair.legacy.result.json"))["jobs"]}
    seen = set()
    for j in s["jobs"]:
        nodes = [idx[n] for n in j["nodes"]]
        if seen & set(nodes) or len(nodes) < 2 or len(nodes) != j["layout"]["pp"] * j["layout"]["dp"]:
            print("FAIL: %s %s: nodes overlap, single node or wrong count" % (f, j["name"])); fails += 1
        seen |= set(nodes)
        if s["policy"] == "slurm-tree" and nodes != sorted(nodes):
            print("FAIL: %s %s: slurm-tree nodes not in node-index order" % (f, j["name"])); fails += 1
        if len({n // 32 for n in nodes}) == 1:  # one leaf of 32 hosts: uncontended
            for r in ("adaptive", "dmodk"):
                got, want = res[j["name"]][r]["alone_s"], j["nic_bound_s"]
                checked += 1
                if abs(got - want) > 0.01 * want:
                    print("FAIL: %s %s %s alone %.4f s, NIC bound %.4f s" % (f, j["name"], r, got, want)); fails += 1
rows = {r["policy"]: r for r in csv.DictReader(open(rep + "/summary.csv"))}
for k in ("adaptive_stretch_vs_tree", "dmodk_stretch_vs_tree", "adaptive_p95_vs_tree"):
    if abs(float(rows["slurm-tree"][k]) - 1) > 1e-9:
        print("FAIL: slurm-tree %s = %s, not 1" % (k, rows["slurm-tree"][k])); fails += 1
if "topoaware" not in rows:
    print("FAIL: no topoaware row"); fails += 1
# Per class: every job of topoaware paired with the same trace job under slurm-tree; the "all" class's
# node-weighted ratio and pair count recomputed here from jobs.csv.
jobs = list(csv.DictReader(open(rep + "/jobs.csv")))
def per_job(policy, routing):
    acc = {}
    for r in jobs:
        if r["policy"] == policy:
            e = acc.setdefault(r["job"], [int(r["nodes"]), 0.0, 0])
            e[1] += float(r[routing + "_shared_s"]); e[2] += 1
    return {k: (v[0], v[1] / v[2]) for k, v in acc.items()}
classes = {(r["routing"], r["class"]): r for r in csv.DictReader(open(rep + "/classes.csv")) if r["policy"] == "topoaware"}
for rt in ("adaptive", "dmodk"):
    a, t = per_job("topoaware", rt), per_job("slurm-tree", rt)
    both = [k for k in a if k in t and t[k][1] > 0]
    want = sum(a[k][0] * a[k][1] for k in both) / sum(t[k][0] * t[k][1] for k in both)
    row = classes.get((rt, "all"))
    if not row or int(row["pairs"]) != len(both) or abs(float(row["weighted"]) - want) > 1e-6 * want:
        print("FAIL: classes.csv %s all: %s, expected %d pairs, weighted %.6f" % (rt, row, len(both), want)); fails += 1
    sized = sum(int(r["pairs"]) for (x, c), r in classes.items() if x == rt and c.startswith("nodes "))
    if sized != len(both):
        print("FAIL: %s: the size classes hold %d pairs, not %d" % (rt, sized, len(both))); fails += 1
print("%d single-leaf jobs checked against their NIC bound" % checked)
if checked == 0:
    print("FAIL: no single-leaf job in the snapshots"); fails += 1
sys.exit(1 if fails else 0)
PY

# bench/netsim_spread.py pairs each policy's jobs across two runs: a run against itself is a tie in
# every class; with one slurm-tree job made 2x slower in the second run, that job alone is a loser.
cp -r "$tmp/rep" "$tmp/rep2"
python3 - "$tmp/rep2/jobs.csv" <<'PY' || { echo "FAIL: could not prepare the second run"; exit 1; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
job = next(r["job"] for r in rows if r["policy"] == "slurm-tree" and float(r["adaptive_shared_s"]) > 0)
for r in rows:
    if r["policy"] == "slurm-tree" and r["job"] == job:
        for k in r:
            if k.endswith("_shared_s"):
                r[k] = repr(2 * float(r[k]))
w = csv.DictWriter(open(sys.argv[1], "w", newline=""), fieldnames=list(rows[0].keys()))
w.writeheader(); w.writerows(rows)
PY
for b in rep rep2; do
  python3 "$top_srcdir/bench/netsim_spread.py" "$tmp/rep" "$tmp/$b" --out "$tmp/spread-$b" >"$tmp/spread-$b.txt" ||
    { cat "$tmp/spread-$b.txt"; echo "FAIL: netsim_spread.py $b"; exit 1; }
done
python3 - "$tmp/spread-rep/spread.csv" "$tmp/spread-rep2/spread.csv" <<'PY' || exit 1
import csv, sys
fails = 0
same = list(csv.DictReader(open(sys.argv[1])))
for r in same:
    if abs(float(r["weighted"]) - 1) > 1e-9 or float(r["worse"]) != 0:
        print("FAIL: a run against itself: %s" % r); fails += 1
one = {(r["policy"], r["routing"], r["class"]): r for r in csv.DictReader(open(sys.argv[2]))}
for rt in ("adaptive", "dmodk"):
    a = one[("slurm-tree (rerun)", rt, "all")]
    if abs(float(a["worse"]) * int(a["pairs"]) - 1) > 1e-6 or not float(a["weighted"]) > 1:
        print("FAIL: one slower job, %s all: worse %s of %s pairs, weighted %s" % (rt, a["worse"], a["pairs"], a["weighted"])); fails += 1
    t = one[("topoaware (rerun)", rt, "all")]
    if float(t["worse"]) != 0 or abs(float(t["weighted"]) - 1) > 1e-9:
        print("FAIL: topoaware changed by a slurm-tree job: %s" % t); fails += 1
print("netsim_spread: %d rows against itself, the slower job found" % len(same))
sys.exit(1 if fails else 0)
PY

# bench/netsim_losers.py: every paired job of the report falls in exactly one group of its class.
python3 "$top_srcdir/bench/netsim_losers.py" "$tmp/rep" --snapshots "$tmp/snap" --routing adaptive >"$tmp/losers.txt" ||
  { cat "$tmp/losers.txt"; echo "FAIL: netsim_losers.py"; exit 1; }
cat "$tmp/losers.txt"
python3 - "$tmp/losers.txt" "$tmp/rep/classes.csv" <<'PY' || exit 1
import csv, sys
grouped = sum(int(l.split()[4]) for l in open(sys.argv[1]) if not l.startswith(("#", "cluster")))
pairs = next(int(r["pairs"]) for r in csv.DictReader(open(sys.argv[2]))
             if r["policy"] == "topoaware" and r["routing"] == "adaptive" and r["class"] == "all")
if grouped != pairs:
    print("FAIL: netsim_losers grouped %d jobs, the report paired %d" % (grouped, pairs)); sys.exit(1)
print("netsim_losers: %d jobs grouped, as the report paired" % grouped)
PY

# bench/netsim_order_only.py: slurm-tree's nodes judged in topoaware's rank order. Every slurm-tree
# job pairs with its reordered self; a job under one leaf switch keeps its times exactly (its
# traffic never leaves the leaf, whatever the order); the "all" ratio is recomputed from jobs.csv.
# --neighbours the same with each job's entries also counting the earlier jobs' ring edges.
for mode in order-only order-only-neighbours; do
python3 "$top_srcdir/bench/netsim_order_only.py" "$tmp/rep" --snapshots "$tmp/snap" --netsim "$bin" --traffic legacy \
  $([ $mode = order-only ] || echo --neighbours) >"$tmp/$mode.txt" || { cat "$tmp/$mode.txt"; echo "FAIL: netsim_order_only.py ($mode)"; exit 1; }
python3 - "$tmp/rep" "$d/topology.json" "$mode" <<'PY' || { cat "$tmp/$mode.txt"; exit 1; }
import csv, json, sys
rep, topo, mode = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
policy, order = ("slurm-tree+order", "topoaware") if mode == "order-only" else ("slurm-tree+order+neighbours", "topoaware-neighbours")
lg = {h["name"]: h["leaf_group"] for h in topo["hosts"]}
fails = 0
base = [r for r in csv.DictReader(open(rep + "/jobs.csv")) if r["policy"] == "slurm-tree"]
new = {(r["seed"], r["snap"], r["job"]): r for r in csv.DictReader(open(rep + "/" + mode + "/jobs.csv"))}
if {r["policy"] for r in new.values()} != {policy} or len(new) != len(base):
    print("FAIL: " + mode + "/jobs.csv: %d rows of %s for %d slurm-tree rows" % (len(new), {r["policy"] for r in new.values()}, len(base))); fails += 1
snaps = {}
one_leaf = 0
for r in base:
    n = new.get((r["seed"], r["snap"], r["job"]))
    if n is None or n["nodes"] != r["nodes"]:
        print("FAIL: %s snapshot %s: not judged again on its own nodes" % (r["job"], r["snap"])); fails += 1
        continue
    f = "%s/%s/snapshots/%s/s%s/%s/snap%03d.json" % (rep, mode, r["cluster"], r["seed"], policy, int(r["snap"]))
    s = snaps.setdefault(f, {j["name"]: j for j in json.load(open(f))["jobs"]})
    if s[r["job"]].get("order") != order:
        print("FAIL: %s in %s: order %s, not %s" % (r["job"], f, s[r["job"]].get("order"), order)); fails += 1
    if len({lg[h] for h in s[r["job"]]["nodes"]}) == 1:
        one_leaf += 1
        for rt in ("adaptive", "dmodk"):
            a, b = float(r[rt + "_shared_s"]), float(n[rt + "_shared_s"])
            if abs(a - b) > 1e-9 * max(a, 1e-12):
                print("FAIL: %s (one leaf) %s: %.9f s reordered, %.9f s as placed" % (r["job"], rt, b, a)); fails += 1
if one_leaf == 0:
    print("FAIL: no slurm-tree job under one leaf switch"); fails += 1
classes = {(c["routing"], c["class"]): c for c in csv.DictReader(open(rep + "/" + mode + "/classes.csv")) if c["policy"] == policy}
for rt in ("adaptive", "dmodk"):
    per = {}
    for r in base:
        n = new[(r["seed"], r["snap"], r["job"])]
        e = per.setdefault((r["seed"], r["job"]), [int(r["nodes"]), 0.0, 0.0, 0])
        e[1] += float(n[rt + "_shared_s"]); e[2] += float(r[rt + "_shared_s"]); e[3] += 1
    both = [e for e in per.values() if e[2] > 0]
    want = sum(e[0] * e[1] / e[3] for e in both) / sum(e[0] * e[2] / e[3] for e in both)
    c = classes.get((rt, "all"))
    if not c or int(c["pairs"]) != len(both) or abs(float(c["weighted"]) - want) > 1e-6 * want:
        print("FAIL: " + mode + " classes.csv %s all: %s, expected %d pairs, weighted %.6f" % (rt, c, len(both), want)); fails += 1
print("netsim_order_only (%s): %d slurm-tree jobs judged again in the order %s, %d under one leaf unchanged" % (mode, len(base), order, one_leaf))
sys.exit(1 if fails else 0)
PY
done
