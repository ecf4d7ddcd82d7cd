#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a policy's losers have in common: the jobs of netsim_report's per-class table, split into
losers (more than 5% slower than the same trace job under the baseline), winners (more than 5%
faster) and ties, with what their placements look like under both policies.

Usage: netsim_losers.py OUT [--snapshots DIR] [--policy topoaware] [--baseline slurm-tree]
                        [--routing as-routed]
OUT is a netsim_report.sh --out folder (its jobs.csv; the snapshots in OUT/snapshots unless
--snapshots says). Per job-size class and
group: jobs; how many are slower alone too (their own placement and rank order, no neighbours);
the mean over snapshots of the leaf groups the job spans, its smallest piece (nodes in its least
used leaf group), and its neighbours that span leaf groups too and share one of its leaf groups,
with their node count in its leaf groups; each as policy / baseline. Standard library only.
"""
import argparse
import collections
import csv
import glob
import json
import os
import sys

SIZE_CLASSES = ((1, 8), (9, 32), (33, 128), (129, 1 << 30))


def leaf_groups_of(snapshots):
    """host name -> leaf group, per cluster folder."""
    out = {}
    for topo in glob.glob(os.path.join(snapshots, "*", "topology.json")):
        with open(topo) as f:
            t = json.load(f)
        out[os.path.basename(os.path.dirname(topo))] = {h["name"]: h["leaf_group"] for h in t["hosts"]}
    return out


def shapes(snapshots, lg_of):
    """(cluster, seed, policy, job) -> per snapshot: (leaf groups, smallest piece, neighbours, their nodes)."""
    out = collections.defaultdict(list)
    for f in glob.glob(os.path.join(snapshots, "*", "s*", "*", "snap*.json")):
        if f.endswith(".result.json"):
            continue
        cluster = os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(f))))
        lg = lg_of[cluster]
        with open(f) as fh:
            s = json.load(fh)
        pieces = {j["name"]: collections.Counter(lg[n] for n in j["nodes"]) for j in s["jobs"]}
        spread = [n for n, p in pieces.items() if len(p) > 1]
        for name, p in pieces.items():
            nb = [o for o in spread if o != name and not pieces[o].keys().isdisjoint(p)]
            their = sum(c for o in nb for g, c in pieces[o].items() if g in p)
            out[(cluster, s["seed"], s["policy"], name)].append((len(p), min(p.values()), len(nb), their))
    return {k: tuple(sum(x[i] for x in v) / len(v) for i in range(4)) for k, v in out.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--snapshots", help="placement_sim's snapshot folder (default OUT/snapshots)")
    ap.add_argument("--policy", default="topoaware")
    ap.add_argument("--baseline", default="slurm-tree")
    ap.add_argument("--routing", default="as-routed")
    a = ap.parse_args()
    jobs_csv, snaps = os.path.join(a.out, "jobs.csv"), a.snapshots or os.path.join(a.out, "snapshots")
    if not os.path.exists(jobs_csv) or not os.path.isdir(snaps):
        sys.exit("netsim_losers: no %s or no %s (a netsim_report.sh --out folder?)" % (jobs_csv, snaps))
    acc = collections.defaultdict(lambda: [0.0, 0.0, 0, 0])  # shared, alone, snapshots, nodes
    with open(jobs_csv) as f:
        for r in csv.DictReader(f):
            if a.routing + "_shared_s" not in r:
                sys.exit("netsim_losers: no %s routing in %s" % (a.routing, jobs_csv))
            e = acc[(r["cluster"], int(r["seed"]), r["policy"], r["job"])]
            e[0] += float(r[a.routing + "_shared_s"])
            e[1] += float(r[a.routing + "_alone_s"])
            e[2] += 1
            e[3] = int(r["nodes"])
    shape = shapes(snaps, leaf_groups_of(snaps))
    groups = collections.defaultdict(list)
    for (c, s, p, j), e in acc.items():
        b = acc.get((c, s, a.baseline, j))
        if p != a.policy or not b or b[0] <= 0 or (c, s, p, j) not in shape or (c, s, a.baseline, j) not in shape:
            continue
        ratio = (e[0] / e[2]) / (b[0] / b[2])
        alone = (e[1] / e[2]) / (b[1] / b[2]) if b[1] > 0 else 1.0
        g = "loser" if ratio > 1.05 else "winner" if ratio < 1 / 1.05 else "tie"
        groups[(c, e[3], g)].append((alone > 1.05, shape[(c, s, p, j)], shape[(c, s, a.baseline, j)]))
    print("# %s / %s, %s routing: jobs > 5%% slower (loser), > 5%% faster (winner), tie; means over jobs, "
          "each job's mean over its snapshots" % (a.policy, a.baseline, a.routing))
    print("%-28s %-12s %-6s %4s %12s %-13s %-13s %-13s %-13s" % (
        "cluster", "class", "group", "jobs", "slower alone", "leaf groups", "least piece", "neighbours",
        "their nodes"))
    for c in sorted({k[0] for k in groups}):
        for lo, hi in SIZE_CLASSES:
            name = "nodes %d-%d" % (lo, hi) if hi < 1 << 30 else "nodes %d+" % lo
            for g in ("loser", "tie", "winner"):
                v = [x for (cc, n, gg), xs in groups.items() if cc == c and lo <= n <= hi and gg == g for x in xs]
                if not v:
                    continue
                cells = ["%5.1f / %-5.1f" % (sum(x[1][i] for x in v) / len(v), sum(x[2][i] for x in v) / len(v))
                         for i in range(4)]
                print("%-28s %-12s %-6s %4d %12d %s" % (c, name, g, len(v), sum(x[0] for x in v), " ".join(cells)))


if __name__ == "__main__":
    main()
