#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The spread each policy has against itself: the per-class table of netsim_report.py, every job of
one run paired with the same trace job of a second run of the same policy.

Usage: netsim_spread.py RUN_A RUN_B [--out DIR]
RUN_A and RUN_B are two netsim_report.sh --out folders of the same configurations, seeds and
policies that differ only in the --jitter draw (--jitter SEC:1, --jitter SEC:2): each policy's job
runtimes moved by a few seconds, so its schedule diverges from itself as two runs of a real
cluster do. A job that is more than 5% slower in RUN_B than in RUN_A is then a "loser" of nothing
but that divergence: which neighbours share its cables at the snapshot instants. The share of such
jobs per class is the floor under the loser share of netsim_report's policy-against-slurm-tree
table. Prints, per policy P, the table of "P (rerun)" against P; writes DIR/spread.csv.
Standard library only.
"""
import argparse
import csv
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # the source tree may be read-only (make distcheck)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from netsim_report import class_report  # noqa: E402

NUMERIC_INT = ("seed", "snap", "nodes", "tp", "pp", "dp")


def read_jobs(run):
    path = os.path.join(run, "jobs.csv")
    if not os.path.exists(path):
        sys.exit("netsim_spread: no %s (a netsim_report.sh --out folder?)" % path)
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            row = dict(r)
            for k in NUMERIC_INT:
                if k in row:
                    row[k] = int(row[k])
            for k in list(row):
                if k.endswith("_s") or k in ("cost_ratio", "hop_bytes"):
                    row[k] = float(row[k]) if row[k] != "" else 0.0
            rows.append(row)
    return rows


def read_runs(run, suffix=""):
    runs = {}
    path = os.path.join(run, "runs.csv")
    if os.path.exists(path):
        with open(path) as f:
            for r in csv.DictReader(f):
                runs[(r["family"] + "-" + r["nodes"], int(r["seed"]), r["policy"] + suffix)] = r
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_a")
    ap.add_argument("run_b")
    ap.add_argument("--out", help="folder for spread.csv (default RUN_B)")
    a = ap.parse_args()
    out = a.out or a.run_b
    os.makedirs(out, exist_ok=True)
    rows_a, rows_b = read_jobs(a.run_a), read_jobs(a.run_b)
    policies = sorted({r["policy"] for r in rows_a} & {r["policy"] for r in rows_b})
    if not policies:
        sys.exit("netsim_spread: the two runs share no policy")
    runs = read_runs(a.run_a)  # utilization and p95 wait of both runs, the second's relabelled
    runs.update(read_runs(a.run_b, " (rerun)"))
    records = []
    for p in policies:
        rerun = p + " (rerun)"
        rows = [r for r in rows_a if r["policy"] == p]
        for r in rows_b:
            if r["policy"] == p:
                rows.append(dict(r, policy=rerun))
        print("\n# %s against itself: %s (rerun) = %s" % (p, p, a.run_b))
        with tempfile.TemporaryDirectory() as tmp:  # class_report writes its classes.csv there
            class_report(rows, tmp, p, runs)
            with open(os.path.join(tmp, "classes.csv")) as f:
                records += list(csv.DictReader(f))
    with open(os.path.join(out, "spread.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(records[0].keys()))
        w.writeheader()
        w.writerows(records)
    print("\nwrote %s/spread.csv" % out)


if __name__ == "__main__":
    main()
