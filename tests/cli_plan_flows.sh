#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware plan --flows on a routed fabric read from saved output (tests/fixtures/routes: a 16-host
# fat tree with shuffled cabling, routed by OpenSM's ftree under ibsim; 4 leaves x 4 hosts, 2 spines,
# one cable from each leaf to each spine). The cables of every listed flow are checked against a
# trace written here from the saved text alone (ibnetdiscover's cabling, dump_fts's tables), not
# through topoaware's reader or RouteTracer.
# Job: tp=8, dp=2 on n0001 (leaf001) and n0005 (leaf002), 8 GPUs per node, the cost model's
# default model (175e9 parameters, bf16 gradients): S = 175e9 * 2 / 8 = 43.75 GB per rank. Each tp
# rank's 2-member ring is one flow each way of 2(2-1)/2 S = S; the 8 rings share the single NIC of
# each node: 8 flows of 43.75 GB n0001 -> n0005 and 8 back, 350 GB per direction, on every cable of
# each of the two paths. Then tp=8, pp=2, dp=2 on one host of each leaf (PP flows too), and the same
# fabric without tables: the cables are unknown, not guessed.
set -u
. "$top_srcdir/tests/lib/common.sh"
bin="$top_builddir/topoaware"
fx="$top_srcdir/tests/fixtures/routes"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-planflows.XXXXXX")
ta_on_exit "rm -rf '$work'"
"$bin" discover --quiet --ibnetdiscover "$fx/ft16-shuffled-ftree.ibnetdiscover" \
  --lfts "$fx/ft16-shuffled-ftree.dump_fts" --json "$work/t.json" || ta_fail "discover --lfts failed"
"$bin" discover --quiet --ibnetdiscover "$fx/ft16-shuffled-ftree.ibnetdiscover" --json "$work/bare.json" ||
  ta_fail "discover failed"

# check PLAN.json NIC-PAIRS TP*PP: every flow's hops and every cable's count and bytes against the
# independent trace; S = 175e9 * 2 / (tp * pp), PP bytes per boundary and direction = 8
# micro-batches x 2048 x 12288 x 2 bytes / tp.
check() {
  python3 - "$fx/ft16-shuffled-ftree.ibnetdiscover" "$fx/ft16-shuffled-ftree.dump_fts" "$@" <<'EOF'
import collections, json, re, sys
dump, fts, plan = open(sys.argv[1]).read(), open(sys.argv[2]).read(), json.load(open(sys.argv[3]))
want_pairs, tp_pp = int(sys.argv[4]), int(sys.argv[5])
# Cabling: per switch name, port -> (peer kind, peer name, peer port); hosts by node description.
peer, host_at = {}, {}
for block in dump.split("\n\n"):
    m = re.search(r'^Switch\s+\d+ "S-[0-9a-f]+"\s+# "([^"]+)"', block, re.M)
    if not m:
        continue
    sw = m.group(1)
    for p, kind, q, name in re.findall(r'^\[(\d+)\]\s+"([SH])-[0-9a-f]+"\[(\d+)\][^#]*# "([^"]+)"', block, re.M):
        peer[(sw, int(p))] = (kind, name.split()[0], int(q))
        if kind == "H":
            host_at[name.split()[0]] = (sw, int(p))
# Tables: per switch name, LID -> out port; host LIDs from the destinations dump_fts names.
lft, lid = collections.defaultdict(dict), {}
for head, body in re.findall(r"^Unicast lids .*?\(([^)]+)\):\n(.*?)(?=^Unicast lids|\Z)", fts, re.M | re.S):
    for l, p, desc in re.findall(r"^0x([0-9a-f]+) (\d+) : \((?:Channel Adapter|Switch) portguid 0x[0-9a-f]+: '([^']+)'\)", body, re.M):
        lft[head][int(l, 16)] = int(p)
        lid[desc.split()[0]] = int(l, 16)
def trace(src, dst):
    sw, _ = host_at[src]
    hops = []
    while True:
        out = lft[sw][lid[dst]]
        hops.append((sw, out))
        kind, name, q = peer[(sw, out)]
        if kind == "H":
            assert name == dst, "%s -> %s delivered to %s" % (src, dst, name)
            return hops
        sw = name
        assert len(hops) < 10, "loop"
fl = plan["flows"]
assert fl["routed"] is True, "routed: %s" % fl["routed"]
S, P = 175e9 * 2 / tp_pp, 8 * 2048 * 12288 * 2 / 8
assert abs(fl["dp_bytes"] - S) < 1 and abs(fl["pp_bytes"] - P) < 1, (fl["dp_bytes"], fl["pp_bytes"])
assert len(fl["flows"]) == want_pairs, "%d NIC pairs listed, expected %d" % (len(fl["flows"]), want_pairs)
cables = collections.Counter()
cable_bytes = collections.Counter()
for f in fl["flows"]:
    mine = [(h["switch"], h["out"]) for h in f["hops"]]
    theirs = trace(f["src"], f["dst"])
    assert mine == theirs, "%s -> %s: plan %s, trace %s" % (f["src"], f["dst"], mine, theirs)
    assert f["flows"] == 8, "%s -> %s: %d flows (8 tp rings share one NIC)" % (f["src"], f["dst"], f["flows"])
    # dp=2: a ring edge carries 2(2-1)/2 S = S.
    assert abs(f["bytes"] - 8 * (S if f["phase"] == "dp" else P)) < 1, f
    for sw, out in theirs[:-1]:
        cables[(sw, out)] += f["flows"]
        cable_bytes[(sw, out)] += f["bytes"]
got = {(c["from"], c["from_port"]): (c["flows"], c["bytes"], c["to"], c["to_port"]) for c in fl["cables"]}
assert set(got) == set(cables), "cables: plan %s, trace %s" % (sorted(got), sorted(cables))
for k, n in cables.items():
    assert got[k][0] == n and abs(got[k][1] - cable_bytes[k]) < 1, "%s: plan %s, trace %d flows" % (k, got[k], n)
    assert peer[k][1:] == (got[k][2], got[k][3]), "%s leads to %s, plan says %s" % (k, peer[k], got[k][2:])
print(len(cables))
EOF
}

"$bin" plan --topology "$work/t.json" --tp 8 --dp 2 --free n0001,n0005 --flows --format json >"$work/dp.json" ||
  ta_fail "plan --flows (json) failed"
n=$(check "$work/dp.json" 2 8 2>&1) || ta_fail "dp: $n"
[ "$n" -eq 4 ] || ta_fail "dp: $n cable directions, expected 4 (leaf to spine and spine to leaf, on each of two paths)"
"$bin" plan --topology "$work/t.json" --tp 8 --dp 2 --free n0001,n0005 --flows >"$work/dp.txt" ||
  ta_fail "plan --flows (text) failed"
grep -q '^  dp: 16 flows, 700.0 GB$' "$work/dp.txt" && grep -qE '^  leaf001 p5 -> spine01 p1 +8 flows \(dp 8\)  350.0 GB$' "$work/dp.txt" ||
  ta_fail "dp text: $(sed -n '/^Flows of one step/,$p' "$work/dp.txt")"
ta_pass "tp=8 dp=2 on n0001, n0005: 2 NIC pairs x 8 flows of 43.75 GB, hops and 4 cable directions = the saved tables' trace"

# pp=2 too: one host on each leaf; the planner picks the rank order, the check follows every pair.
"$bin" plan --topology "$work/t.json" --tp 8 --pp 2 --dp 2 --free n0002,n0006,n0011,n0016 --flows --format json \
  >"$work/pp.json" || ta_fail "plan --flows (pp) failed"
pairs=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["flows"]["flows"]))' "$work/pp.json")
python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["flows"]["flows"]
sys.exit(0 if {x["phase"] for x in f} == {"dp", "pp"} else 1)' "$work/pp.json" || ta_fail "pp: no pp and dp flows"
# 4 nodes, every one on its own leaf: 2 DP rings of 2 (both ways) + 2 PP chains (both ways) = 8 pairs.
[ "$pairs" -eq 8 ] || ta_fail "pp: $pairs NIC pairs, expected 8"
n=$(check "$work/pp.json" 8 16 2>&1) || ta_fail "pp: $n"
ta_pass "tp=8 pp=2 dp=2 on 4 leaves: 8 NIC pairs (dp and pp), hops and $n cable directions = the saved tables' trace"

# No tables: flows listed, cables unknown (null), never guessed.
"$bin" plan --topology "$work/bare.json" --tp 8 --dp 2 --free n0001,n0005 --flows --format json >"$work/bare.out" ||
  ta_fail "plan --flows without routes failed"
python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["flows"]
assert f["routed"] is False and f["cables"] is None, f
assert len(f["flows"]) == 2 and all(x["hops"] is None for x in f["flows"]), f["flows"]' "$work/bare.out" ||
  ta_fail "without routes: $(head -c 400 "$work/bare.out")"
"$bin" plan --topology "$work/bare.json" --tp 8 --dp 2 --free n0001,n0005 --flows >"$work/bare.txt" &&
  grep -q '^Cables: unknown. topology.json has no forwarding tables' "$work/bare.txt" &&
  grep -qE '^  dp +n0001:0 -> n0005:0 +8 x 43.8 GB  leaf001 -> \? -> leaf002$' "$work/bare.txt" ||
  ta_fail "without routes (text): $(sed -n '/^Flows of one step/,$p' "$work/bare.txt")"
rc=0
"$bin" plan --topology "$work/t.json" --tp 8 --dp 2 --flows --format dot >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || ta_fail "--flows with --format dot was accepted"
ta_pass "without tables: the flows are listed with their cables unknown (null), not guessed; --flows refused with dot"
