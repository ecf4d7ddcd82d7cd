#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Score placement_sim's snapshots with the network judge (bench/netsim/netsim), per policy and fabric.

Input: a snapshot folder written by `placement_sim --snapshots DIR` (DIR/<cluster>/topology.json and
DIR/<cluster>/s<seed>/<policy>/snapNNN.json) and placement_sim's runs.csv (utilization, p95 wait).
Runs netsim on every snapshot (results cached next to it as snapNNN.<fairness>[.legacy].result.json) and reports,
per fabric family and policy, against slurm-tree on the same seed (same trace, same instants):
  - stretch: node-weighted step communication time, each job in units of its own uncontended time
    (nic_bound_s, written by placement_sim: every flow limited by its NIC only), i.e.
    sum(nodes * shared) / sum(nodes * nic_bound), over the jobs of all snapshots of one seed; the
    ratio policy / slurm-tree of it. The job mixes at one instant differ between policies (their
    schedules differ), hence the normalisation; `raw` is the plain ratio of sum(nodes * shared).
  - p95 over jobs of shared / nic_bound, policy / slurm-tree;
  - alone: the same stretch with every job alone on the fabric (its own placement, no neighbours);
  - both routings (adaptive, dmodk); mean over seeds and the spread (min..max of the per-seed ratios);
  - Spearman rank correlation between the cost model's per-job score (cost.ratio = hop-bytes / ideal
    hop-bytes, what the simulator stretches runtimes by) and netsim's per-job shared stretch, and
    between raw hop-bytes and raw shared time (mostly job size);
  - utilization and p95 wait from runs.csv, policy / slurm-tree.
Writes OUT/jobs.csv (one row per job and snapshot) and OUT/summary.csv; prints the table.
Standard library only.
"""
import argparse
import concurrent.futures as cf
import csv
import glob
import json
import os
import subprocess
import sys
import time

ROUTINGS = ("adaptive", "dmodk")  # the fixed columns of the stretch table
SIZE_CLASSES = ((1, 8), (9, 32), (33, 128), (129, 1 << 30))
# t quantile 0.975 by degrees of freedom: 95% intervals of a mean over few seeds.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 29: 2.045}


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def spearman(xs, ys):
    if len(xs) < 3:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / (sxx * syy) ** 0.5 if sxx > 0 and syy > 0 else float("nan")


def median(xs):
    s = sorted(xs)
    n = len(s)
    return float("nan") if not n else (s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2)


def mean_ci(vals):
    """Mean and half-width of its 95% interval (Student t) over per-seed values."""
    vals = [v for v in vals if v == v]
    n = len(vals)
    if not n:
        return float("nan"), float("nan")
    m = sum(vals) / n
    if n < 2:
        return m, float("nan")
    sd = (sum((v - m) ** 2 for v in vals) / (n - 1)) ** 0.5
    t = T975.get(n - 1) or T975[max(k for k in T975 if k <= n - 1)]
    return m, t * sd / n ** 0.5


def routings_of(rows):
    """The routings every job row was judged under (adaptive, dmodk, as-routed, ...)."""
    found = None
    for r in rows:
        rts = {k[:-len("_shared_s")] for k in r if k.endswith("_shared_s")}
        found = rts if found is None else found & rts
    return sorted(found or [])


def class_report(rows, out_dir, baseline="slurm-tree", runs=None):
    """Per job-size class, per pp and per tp: each job of a policy paired with the same trace job
    under the baseline policy (slurm-tree unless --baseline says; same seed); a job's value is its step communication time averaged over the snapshots
    it runs in (shared_s), so the ratio is topoaware-job / tree-job. Per seed: the median paired
    ratio, the share of jobs more than 5% worse, and the node-weighted ratio (sum nodes x time);
    printed as the mean over seeds with its 95% interval. Losers show: every class has its row.
    With runs (placement_sim's runs.csv): utilization and p95 wait per policy / baseline as well."""
    routings = routings_of(rows)
    per_job = {}
    for r in rows:
        k = (r["cluster"], r["seed"], r["policy"], r["job"])
        e = per_job.setdefault(k, {"nodes": r["nodes"], "pp": r["pp"], "tp": r.get("tp", 0), "n": 0,
                                   **{rt: 0.0 for rt in routings}})
        e["n"] += 1
        for rt in routings:
            e[rt] += r[rt + "_shared_s"]
    out = []
    clusters = sorted({k[0] for k in per_job})
    print("\n# per class: each job paired with itself under %s (same seed); mean over seeds [95%% interval]" % baseline)
    print("# median = median paired ratio, worse = share of jobs > 5% slower, weighted = node-weighted ratio")
    for c in clusters:
        seeds = sorted({k[1] for k in per_job if k[0] == c})
        policies = sorted({k[2] for k in per_job if k[0] == c and k[2] != baseline})
        if runs:
            print("\n## %s: utilization and p95 wait / %s, mean over seeds [95%% interval]" % (c, baseline))
            for p in policies:
                ut, pw = [], []
                for s in seeds:
                    x, t = runs.get((c, s, p)), runs.get((c, s, baseline))
                    if x and t:
                        ut.append(float(x["utilization"]) / float(t["utilization"]))
                        if float(t["wait_p95_s"]) > 0:
                            pw.append(float(x["wait_p95_s"]) / float(t["wait_p95_s"]))
                cells = []
                for vals in (ut, pw):
                    m, h = mean_ci(vals)
                    cells.append("%.3f [%s]" % (m, "-" if h != h else "%.3f..%.3f" % (m - h, m + h)))
                print("%-20s utilization %-22s p95 wait %-22s" % (p, *cells))
        for rt in routings:
            print("\n## %s, %s routing, %d seed(s)" % (c, rt, len(seeds)))
            print("%-14s %-12s %6s %-22s %-22s %-22s" % ("policy", "class", "pairs", "median", "worse", "weighted"))
            for p in policies:
                classes = [("nodes %d-%d" % (lo, hi) if hi < 1 << 30 else "nodes %d+" % lo,
                            lambda e, lo=lo, hi=hi: lo <= e["nodes"] <= hi) for lo, hi in SIZE_CLASSES]
                pps = sorted({e["pp"] for k, e in per_job.items() if k[0] == c})
                classes += [("pp %d" % v, lambda e, v=v: e["pp"] == v) for v in pps]
                tps = sorted({e["tp"] for k, e in per_job.items() if k[0] == c})
                if len(tps) > 1:
                    classes += [("tp %d" % v, lambda e, v=v: e["tp"] == v) for v in tps]
                classes.append(("all", lambda e: True))
                for name, member in classes:
                    med, worse, weighted, pairs = [], [], [], 0
                    for s in seeds:
                        ratios, num, den = [], 0.0, 0.0
                        for k, e in per_job.items():
                            if k[0] != c or k[1] != s or k[2] != p or not member(e):
                                continue
                            t = per_job.get((c, s, baseline, k[3]))
                            if not t:
                                continue
                            a_t, b_t = e[rt] / e["n"], t[rt] / t["n"]
                            # A job inside one NVLink domain sends nothing over the NICs (time 0):
                            # 0 vs 0 is a tie, more than 0 against 0 a loss (infinitely worse).
                            ratios.append(a_t / b_t if b_t > 0 else (1.0 if a_t <= 0 else float("inf")))
                            num += e["nodes"] * a_t
                            den += t["nodes"] * b_t
                        if ratios:
                            pairs += len(ratios)
                            med.append(median(ratios))
                            worse.append(sum(1 for x in ratios if x > 1.05) / len(ratios))
                            if den > 0:
                                weighted.append(num / den)
                    if not pairs:
                        continue
                    cells = []
                    rec = {"cluster": c, "routing": rt, "baseline": baseline, "policy": p, "class": name, "pairs": pairs, "seeds": len(med)}
                    for key, vals in (("median", med), ("worse", worse), ("weighted", weighted)):
                        m, h = mean_ci(vals)
                        rec[key], rec[key + "_ci95"] = m, h
                        cells.append("%.3f [%s]" % (m, "-" if h != h else "%.3f..%.3f" % (m - h, m + h)))
                    print("%-14s %-12s %6d %-22s %-22s %-22s" % (p, name, pairs, *cells))
                    out.append(rec)
    if out:
        with open(os.path.join(out_dir, "classes.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
            w.writeheader()
            w.writerows(out)


def p95(xs):
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(-(-0.95 * len(s) // 1)) - 1))]


def run_netsim(netsim, topo, snap, fairness, traffic):
    res = snap[:-len(".json")] + "." + fairness + ("" if traffic == "today" else "." + traffic) + ".result.json"
    if os.path.exists(res) and os.path.getmtime(res) >= os.path.getmtime(snap):
        with open(res) as f:
            return snap, json.load(f), 0.0
    t0 = time.time()
    p = subprocess.run([netsim, "--topology", topo, "--snapshot", snap, "--format", "json", "--fairness", fairness,
                        "--traffic", traffic],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("netsim failed on %s: %s" % (snap, p.stderr.strip()))
    with open(res + ".tmp", "w") as f:
        f.write(p.stdout)
    os.replace(res + ".tmp", res)
    return snap, json.loads(p.stdout), time.time() - t0


def snapshot_work(snapshots):
    """(topology.json, snapshot) of every snapshot under placement_sim's snapshot folder."""
    work = []
    for topo in sorted(glob.glob(os.path.join(snapshots, "*", "topology.json"))):
        cdir = os.path.dirname(topo)
        for snap in sorted(glob.glob(os.path.join(cdir, "s*", "*", "snap*.json"))):
            if not snap.endswith(".result.json"):
                work.append((topo, snap))
    return work


def judge(netsim, work, fairness, traffic, parallel):
    """netsim on every (topology, snapshot) of work, `parallel` at a time: one row per job and
    snapshot (the columns of jobs.csv), the first error of each cluster whose netsim failed, and
    the seconds netsim ran."""
    skipped = {}
    rows = []
    sim_s = 0.0
    with cf.ThreadPoolExecutor(max_workers=max(1, parallel)) as ex:
        futs = {}
        for topo, snap in work:
            futs[ex.submit(run_netsim, netsim, topo, snap, fairness, traffic)] = (topo, snap)
        for fu in cf.as_completed(futs):
            topo, snap = futs[fu]
            cluster = os.path.basename(os.path.dirname(topo))
            try:
                _, res, dt = fu.result()
            except RuntimeError as e:
                skipped.setdefault(cluster, str(e).splitlines()[-1])
                continue
            sim_s += dt
            with open(snap) as f:
                sj = json.load(f)
            byname = {j["name"]: j for j in sj["jobs"]}
            for r in res.get("jobs", []):
                j = byname[r["name"]]
                row = {"cluster": sj["cluster"], "family": sj["cluster"].rsplit("-", 1)[0], "seed": sj["seed"],
                       "policy": sj["policy"], "snap": sj["index"], "job": r["name"], "nodes": r["nodes"],
                       "tp": j["layout"]["tp"], "pp": j["layout"]["pp"], "dp": j["layout"]["dp"], "nic_bound_s": j["nic_bound_s"],
                       "cost_ratio": j["cost"]["ratio"], "hop_bytes": j["cost"]["hop_bytes"]}
                for rt, v in r.items():
                    if isinstance(v, dict) and "shared_s" in v:
                        row[rt + "_alone_s"] = v["alone_s"]
                        row[rt + "_shared_s"] = v["shared_s"]
                rows.append(row)
    return rows, skipped, sim_s


def write_jobs(rows, out_dir):
    """rows (as judge gives them) sorted into OUT_DIR/jobs.csv."""
    rows.sort(key=lambda r: (r["cluster"], r["seed"], r["policy"], r["snap"], r["job"]))
    with open(os.path.join(out_dir, "jobs.csv"), "w", newline="") as f:
        if rows:
            fields = list(dict.fromkeys(k for r in rows for k in r))  # every routing any row has
            w = csv.DictWriter(f, fieldnames=fields, restval="")
            w.writeheader()
            w.writerows(rows)


def fmt_spread(vals):
    if not vals:
        return "-"
    m = sum(vals) / len(vals)
    return "%.3f (%.3f..%.3f)" % (m, min(vals), max(vals)) if len(vals) > 1 else "%.3f" % m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--snapshots", required=True)
    ap.add_argument("--netsim", required=True)
    ap.add_argument("--runs", help="placement_sim runs.csv (utilization, p95 wait)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--fairness", default="pair", choices=("flow", "pair"))
    ap.add_argument("--traffic", default="today", choices=("today", "legacy"),
                    help="netsim --traffic: today (default) or legacy (the snapshot's bytes, all jobs in phase)")
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--baseline", action="append",
                    help="policy the per-class report pairs every job with (repeatable; default slurm-tree)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    work = snapshot_work(a.snapshots)
    if not work:
        sys.exit("netsim_report: no snapshots under %s" % a.snapshots)
    t0 = time.time()
    rows, skipped, sim_s = judge(a.netsim, work, a.fairness, a.traffic, a.parallel)
    wall = time.time() - t0
    write_jobs(rows, a.out)

    runs = {}
    if a.runs and os.path.exists(a.runs):
        with open(a.runs) as f:
            for r in csv.DictReader(f):
                runs[(r["family"] + "-" + r["nodes"], int(r["seed"]), r["policy"])] = r

    # per (cluster, seed, policy): aggregates
    agg = {}
    for r in rows:
        g = agg.setdefault((r["cluster"], r["seed"], r["policy"]), {"jobs": 0, "nb": 0.0, "stretch": {}, "raw": {},
                                                                    "alone": {}, "list": {}})
        g["jobs"] += 1
        g["nb"] += r["nodes"] * r["nic_bound_s"]
        for rt in ROUTINGS:
            g["stretch"][rt] = g["stretch"].get(rt, 0.0) + r["nodes"] * r[rt + "_shared_s"]
            g["alone"][rt] = g["alone"].get(rt, 0.0) + r["nodes"] * r[rt + "_alone_s"]
            g["list"].setdefault(rt, []).append(r[rt + "_shared_s"] / r["nic_bound_s"] if r["nic_bound_s"] > 0 else 1)
    clusters = sorted({k[0] for k in agg})
    policies = sorted({k[2] for k in agg}, key=lambda p: (p != "slurm-tree", p))
    out_rows = []
    print("# network judge: netsim --fairness %s --traffic %s on %d snapshots, %.0f s wall (%.0f s of netsim runs)"
          % (a.fairness, a.traffic, len(work), wall, sim_s))
    print("# ratios are policy / slurm-tree on the same seed (same trace, same instants); mean (min..max over seeds)")
    print("# stretch = sum(nodes x shared step comm time) / sum(nodes x uncontended time); raw = plain node-weighted")
    print("# shared time; alone = each job alone on the fabric; "
          "rho = Spearman(cost model ratio, netsim shared stretch)")
    for c in clusters:
        seeds = sorted({k[1] for k in agg if k[0] == c})
        print("\n## %s, %d seed(s)" % (c, len(seeds)))
        hdr = "%-20s %5s" % ("policy", "jobs")
        for rt in ROUTINGS:
            hdr += " %-22s %-22s %-22s %-22s" % (rt[:5] + " stretch/tr", rt[:5] + " p95/tr", rt[:5] + " raw/tr",
                                                 rt[:5] + " alone/tr")
        hdr += " %6s %6s %8s %8s %7s" % ("rho.a", "rho.d", "util/tr", "p95w/tr", "stretch")
        print(hdr)
        for p in policies:
            if not all((c, s, p) in agg for s in seeds) or not all((c, s, "slurm-tree") in agg for s in seeds):
                continue
            rec = {"cluster": c, "family": c.rsplit("-", 1)[0], "policy": p, "seeds": len(seeds)}
            line = "%-20s %5d" % (p, sum(agg[(c, s, p)]["jobs"] for s in seeds))
            for rt in ROUTINGS:
                st, pr, raw, al = [], [], [], []
                for s in seeds:
                    g, t = agg[(c, s, p)], agg[(c, s, "slurm-tree")]
                    st.append((g["stretch"][rt] / g["nb"]) / (t["stretch"][rt] / t["nb"]))
                    pr.append(p95(g["list"][rt]) / p95(t["list"][rt]))
                    raw.append(g["stretch"][rt] / t["stretch"][rt])
                    al.append((g["alone"][rt] / g["nb"]) / (t["alone"][rt] / t["nb"]))
                for name, v in (("stretch", st), ("p95", pr), ("raw", raw), ("alone", al)):
                    rec["%s_%s_vs_tree" % (rt, name)] = sum(v) / len(v)
                    rec["%s_%s_vs_tree_min" % (rt, name)] = min(v)
                    rec["%s_%s_vs_tree_max" % (rt, name)] = max(v)
                    line += " %-22s" % fmt_spread(v)
            # Jobs without a NIC bound (pure TP: placement_sim's bound leaves TP out) have no stretch.
            jr = [r for r in rows if r["cluster"] == c and r["policy"] == p and r["nic_bound_s"] > 0]
            for rt in ROUTINGS:
                rho = spearman([r["cost_ratio"] for r in jr], [r[rt + "_shared_s"] / r["nic_bound_s"] for r in jr])
                rec["spearman_cost_vs_shared_" + rt] = rho
                rec["spearman_hop_vs_shared_time_" + rt] = spearman([r["hop_bytes"] for r in jr],
                                                                     [r[rt + "_shared_s"] for r in jr])
            ut, pw = [], []
            for s in seeds:
                x, t = runs.get((c, s, p)), runs.get((c, s, "slurm-tree"))
                if x and t:
                    ut.append(float(x["utilization"]) / float(t["utilization"]))
                    pw.append(float(x["wait_p95_s"]) / float(t["wait_p95_s"]) if float(t["wait_p95_s"]) > 0 else 1)
            rec["utilization_vs_tree"] = sum(ut) / len(ut) if ut else float("nan")
            rec["wait_p95_vs_tree"] = sum(pw) / len(pw) if pw else float("nan")
            g_abs = sum(agg[(c, s, p)]["stretch"]["adaptive"] / agg[(c, s, p)]["nb"] for s in seeds) / len(seeds)
            rec["adaptive_stretch_abs"] = g_abs
            line += " %6.3f %6.3f %8.3f %8.3f %7.3f" % (rec["spearman_cost_vs_shared_adaptive"],
                                                        rec["spearman_cost_vs_shared_dmodk"],
                                                        rec["utilization_vs_tree"], rec["wait_p95_vs_tree"], g_abs)
            print(line)
            out_rows.append(rec)
        jr = [r for r in rows if r["cluster"] == c and r["nic_bound_s"] > 0]
        print("all policies pooled: Spearman(cost ratio, shared stretch) adaptive %.3f dmodk %.3f; "
              "Spearman(hop-bytes, shared time) adaptive %.3f dmodk %.3f; %d job-snapshots" % (
                  spearman([r["cost_ratio"] for r in jr], [r["adaptive_shared_s"] / r["nic_bound_s"] for r in jr]),
                  spearman([r["cost_ratio"] for r in jr], [r["dmodk_shared_s"] / r["nic_bound_s"] for r in jr]),
                  spearman([r["hop_bytes"] for r in jr], [r["adaptive_shared_s"] for r in jr]),
                  spearman([r["hop_bytes"] for r in jr], [r["dmodk_shared_s"] for r in jr]), len(jr)))
    for c, why in sorted(skipped.items()):
        print("\n# %s: not scored, netsim refused it: %s" % (c, why))
    with open(os.path.join(a.out, "summary.csv"), "w", newline="") as f:
        if out_rows:
            w = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()))
            w.writeheader()
            w.writerows(out_rows)
    for i, b in enumerate(a.baseline or ["slurm-tree"]):
        class_report(rows, a.out, b, runs)
        if i == 0 and os.path.exists(os.path.join(a.out, "classes.csv")):
            os.replace(os.path.join(a.out, "classes.csv"), os.path.join(a.out, "classes.tmp"))
        elif os.path.exists(os.path.join(a.out, "classes.csv")):
            with open(os.path.join(a.out, "classes.csv")) as src, open(os.path.join(a.out, "classes.tmp"), "a") as dst:
                next(src)
                dst.write(src.read())
            os.remove(os.path.join(a.out, "classes.csv"))
    if os.path.exists(os.path.join(a.out, "classes.tmp")):
        os.replace(os.path.join(a.out, "classes.tmp"), os.path.join(a.out, "classes.csv"))
    print("\nwrote %s/{jobs,summary,classes}.csv" % a.out)


if __name__ == "__main__":
    main()
