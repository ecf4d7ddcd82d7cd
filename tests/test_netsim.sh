#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/netsim/netsim on cases known by hand: the 32-host A/B case (bench/netsim/README.md, "The hand case"):
# 4 leaves x 8 hosts, 400 Gb/s (NDR 4x) everywhere, 4 uplinks per leaf = 2 spines x 2 parallel
# cables (2:1). S = 1 GB per rank. Job X (tp=1, pp=2, dp=8 on 16 nodes; PP bytes 0) has its two DP
# rings split 2 nodes per leaf; job Y (dp=16 on the other 16 nodes, 4 per leaf, every ring edge
# between leaves) crosses the same uplinks. Expected step communication times of X:
#   alone 35 ms (1.75 GB per ring edge at 50 GB/s), both routings; packed on 2 leaves also 35 ms;
#   shared, adaptive: 6 flows on each leaf's 1600 Gb/s of uplinks -> 266.7 Gb/s -> 52.5 ms (1.5x);
#   shared, D-mod-K: each X flow shares its cable (dest index mod 4) with one Y flow -> 70 ms (2.0x).
# Y (1.875 GB per edge): alone 37.5 ms; shared 55 ms (adaptive), 72.5 ms (D-mod-K).
# Last, the as-routed mode on saved forwarding tables (below).
set -u
if ! grep -q '^#define HAVE_SIMGRID 1' "$top_builddir/config.h" 2>/dev/null; then
  echo "SKIP: libsimgrid-dev not installed (configure did not find SimGrid >= 3.32; bench/netsim is not built)"
  exit 77
fi
bin="$top_builddir/bench/netsim/netsim"
[ -x "$bin" ] || { echo "FAIL: $bin not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$top_builddir/topoaware" generate fat-tree --leaves 4 --hosts-per-leaf 8 --uplinks 4 --spines 2 --speed NDR \
  --json "$tmp/t.json" >/dev/null || exit 99

# Host of leaf L (0..3), position i (0..7).
h() { printf '"n%04d"\n' $((8 * $1 + $2 + 1)); }
list() { local out="" x; for x in "$@"; do out="$out${out:+, }$x"; done; echo "[$out]"; }
X_split=$(list $(for i in 0 2; do for L in 0 1 2 3; do h $L $i; h $L $((i + 1)); done; done))
X_packed=$(list $(for L in 0 1; do for i in 0 1 2 3 4 5 6 7; do h $L $i; done; done))
Y=$(list $(for i in 4 5 6 7; do for L in 0 1 2 3; do h $L $i; done; done))
cat > "$tmp/ab.json" <<JSON
{"schema": "topoaware-netsim/1", "jobs": [
  {"name": "X", "layout": {"tp": 1, "pp": 2, "dp": 8}, "nodes": $X_split, "dp_bytes": 1e9, "pp_bytes": 0},
  {"name": "Y", "layout": "tp=1,dp=16", "nodes": $Y, "dp_bytes": 1e9}
]}
JSON
cat > "$tmp/a.json" <<JSON
{"jobs": [{"name": "Xpacked", "layout": "tp=1,pp=2,dp=8", "nodes": $X_packed, "dp_bytes": 1e9}]}
JSON
# PP and the phase sum: X packed with 0.5 GB per PP boundary and direction: stage 0 on leaf 0,
# stage 1 on leaf 1, 8 flows each way through 1600 Gb/s of uplinks (adaptive) or 2 per cable
# (D-mod-K, destinations 0..7 mod 4): 200 Gb/s, 20 ms; then the DP phase, 35 ms: 55 ms.
# EP: ep=2 over dp=2 on two leaves, 1 GB all-to-all buffer: 0.5 GB each way, 10 ms.
cat > "$tmp/pp.json" <<JSON
{"jobs": [{"name": "XpackedPP", "layout": "tp=1,pp=2,dp=8", "nodes": $X_packed, "dp_bytes": 1e9, "pp_bytes": 5e8},
          {"name": "E", "layout": "tp=1,ep=2,dp=2", "nodes": $(list "$(h 2 0)" "$(h 3 0)"), "ep_bytes": 1e9}]}
JSON
# Per-NIC rings: a 2-rail fabric (NDR), tp=2 on 2 nodes of different units: each tp rank's DP ring
# uses its own rail, 1 GB each way per ring: 20 ms (40 ms if both rings shared one NIC). PXN: tp=1,
# dp=4 on 2 nodes of 2 GPUs: ring edges 1->2 and 3->0 leave GPU 1 for GPU 0 of the other node; sent
# on rail 0 (the destination's), 1.5 GB: 30 ms (no route at all from rail 1 to rail 0).
"$top_builddir/topoaware" generate rail --rails 2 --units 2 --hosts-per-unit 4 --spines-per-rail 1 --uplinks 4 \
  --speed NDR --json "$tmp/rail.json" >/dev/null || exit 99
cat > "$tmp/rail_snap.json" <<JSON
{"jobs": [{"name": "R", "layout": "tp=2,dp=2", "nodes": ["n0001", "n0005"], "dp_bytes": 1e9},
          {"name": "PXN", "layout": "tp=1,dp=4", "nodes": ["n0002", "n0006"], "dp_bytes": 1e9}]}
JSON
# Dragonfly (cables inside a level: shortest-path routing): 2 groups x 2 routers x 2 hosts, NDR, two
# parallel global cables between routers 1 of both groups and two between routers 2 (n1,n2 on group
# 1 router 1; n3,n4 router 2; n5,n6 group 2 router 1; n7,n8 router 2). 1 GB per ring edge, alone
# 20 ms. DF1: X (n1,n5) and Y (n2,n8). D-mod-K: X n1->n5 takes cable 4 mod 2 = 0 of the two direct
# cables; Y n2->n8 (d = 7) chooses among router 2 of group 1 and the two global cables (3 ways),
# 7 mod 3 = 1: the same cable: 40 ms for both. Adaptive: the parallel cables are one link of 800
# Gb/s and Y is sprayed over its two minimal paths (0.5 GB each; through the local cable of either
# group): nothing shared beyond capacity, 20 ms (40 ms if the halves carried the whole flow).
# DF2: A (n1,n7), B (n2,n8), both between router 1 of group 1 and router 2 of group 2. D-mod-K:
# the return flows n7->n1 (d = 0) and n8->n2 (d = 1) both cross the local cable of group 1: 40 ms;
# adaptive: each local cable direction carries two halves, 25 GB/s each: 20 ms.
"$top_builddir/topoaware" generate dragonfly --groups 2 --routers-per-group 2 --hosts-per-router 2 --global-links 2 \
  --speed NDR --json "$tmp/dfly.json" >/dev/null || exit 99
cat > "$tmp/df1.json" <<JSON
{"jobs": [{"name": "DX", "layout": "tp=1,dp=2", "nodes": ["n0001", "n0005"], "dp_bytes": 1e9},
          {"name": "DY", "layout": "tp=1,dp=2", "nodes": ["n0002", "n0008"], "dp_bytes": 1e9}]}
JSON
cat > "$tmp/df2.json" <<JSON
{"jobs": [{"name": "DA", "layout": "tp=1,dp=2", "nodes": ["n0001", "n0007"], "dp_bytes": 1e9},
          {"name": "DB", "layout": "tp=1,dp=2", "nodes": ["n0002", "n0008"], "dp_bytes": 1e9}]}
JSON
start=$(date +%s%N)
"$bin" --topology "$tmp/t.json" --snapshot "$tmp/ab.json" --traffic legacy || { echo "FAIL: netsim (text)"; exit 1; }
for c in ab a pp; do
  "$bin" --topology "$tmp/t.json" --snapshot "$tmp/$c.json" --traffic legacy --format json >"$tmp/$c.out" || { echo "FAIL: $c"; exit 1; }
done
"$bin" --topology "$tmp/rail.json" --snapshot "$tmp/rail_snap.json" --traffic legacy --format json >"$tmp/rail.out" || exit 1
"$bin" --topology "$tmp/t.json" --snapshot "$tmp/ab.json" --traffic legacy --format json --fairness pair >"$tmp/pair.out" || exit 1
"$bin" --topology "$tmp/t.json" --snapshot "$tmp/ab.json" --traffic legacy --format json --ring steps >"$tmp/steps.out" || exit 1
for c in df1 df2; do
  "$bin" --topology "$tmp/dfly.json" --snapshot "$tmp/$c.json" --traffic legacy --format json >"$tmp/$c.out" || { echo "FAIL: $c"; exit 1; }
done
"$bin" --topology "$tmp/dfly.json" --snapshot "$tmp/df2.json" --traffic legacy --format json --ring steps >"$tmp/df2steps.out" || exit 1
end=$(date +%s%N)
echo "ten runs: $(((end - start) / 1000000)) ms wall"
python3 - "$tmp/ab.out" "$tmp/a.out" "$tmp/pp.out" "$tmp/rail.out" "$tmp/df1.out" "$tmp/df2.out" \
  "$tmp/pair.out" "$tmp/steps.out" "$tmp/df2steps.out" <<'PY'
import json, sys
jobs = {j["name"]: j for f in sys.argv[1:7] for j in json.load(open(f))["jobs"]}
jobs.update({j["name"] + "/pair": j for j in json.load(open(sys.argv[7]))["jobs"]})
jobs.update({j["name"] + "/steps": j for f in sys.argv[8:10] for j in json.load(open(f))["jobs"]})
want = [("X", "adaptive", "alone_s", 35), ("X", "dmodk", "alone_s", 35),
        ("X", "adaptive", "shared_s", 52.5), ("X", "dmodk", "shared_s", 70),
        ("Xpacked", "adaptive", "alone_s", 35), ("Xpacked", "dmodk", "alone_s", 35),
        ("Y", "adaptive", "alone_s", 37.5), ("Y", "dmodk", "alone_s", 37.5),
        ("Y", "adaptive", "shared_s", 55), ("Y", "dmodk", "shared_s", 72.5),
        ("XpackedPP", "adaptive", "alone_s", 55), ("XpackedPP", "dmodk", "alone_s", 55),
        ("E", "adaptive", "alone_s", 10), ("E", "dmodk", "alone_s", 10),
        ("R", "adaptive", "alone_s", 20), ("R", "dmodk", "alone_s", 20),
        ("PXN", "adaptive", "alone_s", 30), ("PXN", "dmodk", "alone_s", 30),
        ("X/pair", "adaptive", "shared_s", 52.5), ("X/pair", "dmodk", "shared_s", 70),
        ("X/steps", "adaptive", "alone_s", 35), ("X/steps", "dmodk", "alone_s", 35),
        ("X/steps", "adaptive", "shared_s", 52.5), ("X/steps", "dmodk", "shared_s", 70),
        ("Y/steps", "adaptive", "shared_s", 55), ("Y/steps", "dmodk", "shared_s", 72.5)]
want += [(j, r, "alone_s", 20) for j in ("DX", "DY", "DA", "DB") for r in ("adaptive", "dmodk")]
want += [(j, "adaptive", "shared_s", 20) for j in ("DX", "DY", "DA", "DB", "DA/steps", "DB/steps")]
want += [(j, "dmodk", "shared_s", 40) for j in ("DX", "DY", "DA", "DB", "DA/steps", "DB/steps")]
fails = 0
for job, r, k, ms in want:
    got = jobs[job][r][k] * 1e3
    ok = abs(got - ms) <= 0.01 * ms
    fails += not ok
    print("%s: %s %s %s = %.3f ms (expected %.1f ms)" % ("ok" if ok else "FAIL", job, r, k, got, ms))
for r, s in (("adaptive", 1.5), ("dmodk", 2.0)):
    got = jobs["X"][r]["slowdown"]
    ok = abs(got - s) <= 0.01 * s
    fails += not ok
    print("%s: X slowdown %s = %.3f (expected %.1f)" % ("ok" if ok else "FAIL", r, got, s))
sys.exit(1 if fails else 0)
PY
[ $? -eq 0 ] || exit 1

# NVLink domains (NVL72-style): 3 units x 4 trays of 4 GPUs, 4 rails (NDR, 50 GB/s per NIC), one
# domain per unit (n0001-n0004, n0005-n0008, n0009-n0012). tp=16 over 4 trays, 1 GB all-reduced per
# rank: a ring of 16 ranks, edges 3-4, 7-8, 11-12, 15-0 between trays. TPin (one domain): all
# NVLink, 0 ms. TPsplit (n0003, n0004 | n0005, n0006): edges n0004->n0005 and n0006->n0003 cross
# the NICs, 2 x 15/16 GB each on rail 0 (GPU 0's), on different NICs: 37.5 ms alone and shared.
"$top_builddir/topoaware" generate rail --rails 4 --units 3 --hosts-per-unit 4 --spines-per-rail 1 --uplinks 4 \
  --speed NDR --nvlink-domain-size 4 --nvlink-gpus-per-node 4 --json "$tmp/nvl.json" >/dev/null || exit 99
cat > "$tmp/nvl_snap.json" <<JSON
{"jobs": [{"name": "TPin", "layout": "tp=16", "nodes": ["n0009", "n0010", "n0011", "n0012"], "tp_bytes": 1e9},
          {"name": "TPsplit", "layout": "tp=16", "nodes": ["n0003", "n0004", "n0005", "n0006"], "tp_bytes": 1e9}]}
JSON
"$bin" --topology "$tmp/nvl.json" --snapshot "$tmp/nvl_snap.json" --traffic legacy --format json --link-loads \
  >"$tmp/nvl.out" || { echo "FAIL: netsim (NVLink domains)"; exit 1; }
python3 - "$tmp/nvl.out" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))
jobs = {j["name"]: j for j in res["jobs"]}
fails = 0
for job, r, k, ms in [("TPin", r, k, 0) for r in ("adaptive", "dmodk") for k in ("alone_s", "shared_s")] + \
                     [("TPsplit", r, k, 37.5) for r in ("adaptive", "dmodk") for k in ("alone_s", "shared_s")]:
    got = jobs[job][r][k] * 1e3
    ok = abs(got - ms) <= 0.01 * ms + 1e-9
    fails += not ok
    print("%s: %s %s %s = %.3f ms (expected %.1f ms)" % ("ok" if ok else "FAIL", job, r, k, got, ms))
# Bytes through the NICs (host ports, named r:HOST:PORT): 3.75 GB sent, all by TPsplit's trays.
for r, loads in res["link_loads"].items():
    nic = {l["link"]: l for l in loads if l["link"].count(":") == 2 and "-" not in l["link"]}
    up = sum(l["up_bytes"] for l in nic.values())
    hosts = sorted({n.split(":")[1] for n in nic})
    ok = abs(up - 3.75e9) < 1e3 and hosts == ["n0003", "n0004", "n0005", "n0006"]
    fails += not ok
    print("%s: %s NIC bytes sent %.4g by %s (expected 3.75e9 by n0003-n0006)" % ("ok" if ok else "FAIL", r, up, hosts))
sys.exit(1 if fails else 0)
PY
[ $? -eq 0 ] || exit 1

# As-routed, on forwarding tables OpenSM's ftree programmed (saved dump_fts and ibnetdiscover output
# of a 16-host fat tree with shuffled cabling, tests/fixtures/routes: 4 leaves x 4 hosts, 2 spines,
# one HDR cable (25 GB/s) from each leaf to each spine). Its tables: leaf001 sends n0005's and
# n0006's LIDs (0x21, 0x22) out of port 5, to spine01; leaf002 sends n0001's and n0002's (0x17,
# 0x1b) out of its port 5, to spine01 too. Jobs A (n0001, n0005) and B (n0002, n0006), dp=2, 1 GB: one
# 1 GB flow each way per job, alone 40 ms under every routing. Shared: as routed, both jobs' flows
# cross leaf001 p5 up and leaf002 p5 up, 12.5 GB/s each: 80 ms; D-mod-K sends n0005 (index 4) and
# n0006 (5) up different uplinks (4 mod 2, 5 mod 2), and n0001, n0002 (0, 1) as well: 40 ms.
# Link loads of the step (both jobs): as-routed 2 GB each way on leaf001-spine01 and leaf002-spine01,
# nothing on spine02's cables; D-mod-K 1 GB each way on all four.
fx="$top_srcdir/tests/fixtures/routes"
"$top_builddir/topoaware" discover --quiet --ibnetdiscover "$fx/ft16-shuffled-ftree.ibnetdiscover" \
  --lfts "$fx/ft16-shuffled-ftree.dump_fts" --json "$tmp/routed.json" || exit 99
cat > "$tmp/routed_snap.json" <<JSON
{"jobs": [{"name": "A", "layout": "tp=1,dp=2", "nodes": ["n0001", "n0005"], "dp_bytes": 1e9},
          {"name": "B", "layout": "tp=1,dp=2", "nodes": ["n0002", "n0006"], "dp_bytes": 1e9}]}
JSON
"$bin" --topology "$tmp/routed.json" --snapshot "$tmp/routed_snap.json" --traffic legacy >"$tmp/routed.txt" || { echo "FAIL: netsim (routed, text)"; exit 1; }
head -2 "$tmp/routed.txt"
grep -q 'dmodk (synthetic)' "$tmp/routed.txt" && grep -q 'as-routed' "$tmp/routed.txt" ||
  { echo "FAIL: the text output does not head D-mod-K as synthetic beside as-routed"; exit 1; }
"$bin" --topology "$tmp/routed.json" --snapshot "$tmp/routed_snap.json" --traffic legacy --format json --link-loads >"$tmp/routed.out" ||
  { echo "FAIL: netsim (routed)"; exit 1; }
"$bin" --topology "$tmp/routed.json" --snapshot "$tmp/routed_snap.json" --traffic legacy --format json --routing as-routed \
  >"$tmp/routed_only.out" || { echo "FAIL: netsim --routing as-routed"; exit 1; }
python3 - "$tmp/routed.out" "$tmp/routed_only.out" <<'PY'
import json, sys
res, only = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
fails = 0
def check(what, ok):
    global fails
    fails += not ok
    print("%s: %s" % ("ok" if ok else "FAIL", what))
check("routings run by default: %s" % res["routings"], res["routings"] == ["adaptive", "dmodk", "as-routed"])
check("--routing as-routed runs only it: %s" % only["routings"],
      only["routings"] == ["as-routed"] and all(set(j) == {"name", "nodes", "as-routed"} for j in only["jobs"]))
want = {("as-routed", "alone_s"): 40, ("as-routed", "shared_s"): 80, ("dmodk", "alone_s"): 40,
        ("dmodk", "shared_s"): 40, ("adaptive", "shared_s"): 40}
for j in res["jobs"]:
    for (r, k), ms in want.items():
        got = j[r][k] * 1e3
        check("%s %s %s = %.3f ms (expected %d ms)" % (j["name"], r, k, got, ms), abs(got - ms) <= 0.01 * ms)
for j in only["jobs"]:
    check("%s, --routing as-routed alone: shared %.3f ms (expected 80 ms)" % (j["name"], j["as-routed"]["shared_s"] * 1e3),
          abs(j["as-routed"]["shared_s"] - 0.08) < 1e-3)
def cables(r):
    return {l["link"][2:]: (l["up_bytes"] / 1e9, l["down_bytes"] / 1e9) for l in res["link_loads"][r] if "-" in l["link"]}
check("as-routed cable loads %s" % cables("as-routed"),
      cables("as-routed") == {"leaf001:5-spine01:1": (2, 2), "leaf002:5-spine01:2": (2, 2)})
check("D-mod-K cable loads %s" % cables("dmodk"),
      cables("dmodk") == {"leaf001:5-spine01:1": (1, 1), "leaf001:6-spine02:1": (1, 1),
                          "leaf002:5-spine01:2": (1, 1), "leaf002:6-spine02:2": (1, 1)})
sys.exit(1 if fails else 0)
PY
