#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What the rank order alone buys: stock Slurm's nodes, each job's ranks in topoaware's order.

Usage: netsim_order_only.py OUT [--snapshots DIR] [--policy slurm-tree] [--neighbours] [--netsim PATH]
                            [--parallel N] [--fairness pair|flow] [--traffic today|legacy]
OUT is a netsim_report.sh --out folder (its jobs.csv and runs.csv; its snapshots in OUT/snapshots
unless --snapshots names placement_sim's snapshot folder). Every snapshot of
POLICY (default slurm-tree) is copied to OUT/order-only/snapshots with each job's "order" set to
"topoaware", and judged by netsim, which then orders the same nodes with the rank order
(corelib/rank_order.hpp) as spank_topoaware orders a job whose nodes it did not place: stock
select/cons_tres with the SPANK plugin installed. The schedule, the nodes and the instants are
POLICY's own, so each job pairs with itself and the ratio is the order's alone; the other
policies of OUT are paired with POLICY as netsim_report pairs them. Prints the per-class table of
"POLICY+order" and of every other policy against POLICY; writes OUT/order-only/{jobs,classes}.csv.
--neighbours: order "topoaware-neighbours" instead (each job's entry choice also counts the ring
edges of the jobs ordered before it in the snapshot, as an order that knew the running jobs'
rings would), policy "POLICY+order+neighbours", folder OUT/order-only-neighbours.
netsim: --netsim, else $top_builddir/bench/netsim/netsim. Standard library only.
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # the source tree may be read-only (make distcheck)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netsim_report import class_report, judge, snapshot_work, write_jobs  # noqa: E402
from netsim_spread import read_jobs, read_runs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--snapshots", help="placement_sim's snapshot folder (default OUT/snapshots)")
    ap.add_argument("--policy", default="slurm-tree", help="the policy whose nodes are reordered (default slurm-tree)")
    ap.add_argument("--neighbours", action="store_true",
                    help="count the ring edges of the jobs ordered before each one (order topoaware-neighbours)")
    ap.add_argument("--netsim", help="netsim binary (default $top_builddir/bench/netsim/netsim)")
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--fairness", default="pair", choices=("flow", "pair"), help="as the netsim_report.sh run had it")
    ap.add_argument("--traffic", default="today", choices=("today", "legacy"), help="as the netsim_report.sh run had it")
    a = ap.parse_args()
    netsim = a.netsim or os.path.join(os.environ.get("top_builddir", "."), "bench", "netsim", "netsim")
    if not os.access(netsim, os.X_OK):
        sys.exit("netsim_order_only: %s is not an executable (--netsim or top_builddir)" % netsim)
    reordered = a.policy + ("+order+neighbours" if a.neighbours else "+order")
    order = "topoaware-neighbours" if a.neighbours else "topoaware"
    base_rows = read_jobs(a.out)
    if not any(r["policy"] == a.policy for r in base_rows):
        sys.exit("netsim_order_only: %s/jobs.csv has no job of policy %s" % (a.out, a.policy))

    # POLICY's snapshots, re-labelled and to be reordered, judged on their own topology.json.
    dest = os.path.join(a.out, "order-only-neighbours" if a.neighbours else "order-only")
    work = []
    for topo, snap in snapshot_work(a.snapshots or os.path.join(a.out, "snapshots")):
        seed_dir, policy_dir = snap.split(os.sep)[-3:-1]
        if policy_dir != a.policy:
            continue
        with open(snap) as f:
            sj = json.load(f)
        sj["policy"] = reordered
        for j in sj["jobs"]:
            j["order"] = order
        d = os.path.join(dest, "snapshots", os.path.basename(os.path.dirname(topo)), seed_dir, reordered)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, os.path.basename(snap))
        text = json.dumps(sj)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:  # an unchanged copy keeps its netsim result (run_netsim compares the times)
            with open(path, "w") as f:
                f.write(text)
        work.append((topo, path))
    if not work:
        sys.exit("netsim_order_only: no snapshot of %s under %s" % (a.policy, a.snapshots or a.out + "/snapshots"))
    print("# netsim on %d snapshots of %s, each job's nodes in the order %s" % (len(work), a.policy, order))
    rows, skipped, _ = judge(netsim, work, a.fairness, a.traffic, a.parallel)
    for cluster, err in sorted(skipped.items()):
        print("# %s skipped: %s" % (cluster, err))
    if not rows:
        sys.exit("netsim_order_only: netsim judged no job")
    write_jobs(rows, dest)

    # The same schedule as POLICY: its utilization and waits stand for the reordered runs too.
    runs = read_runs(a.out)
    runs.update({(c, s, reordered): r for (c, s, p), r in list(runs.items()) if p == a.policy})
    class_report(base_rows + rows, dest, a.policy, runs)
    print("\nwrote %s/{jobs,classes}.csv" % dest)


if __name__ == "__main__":
    main()
