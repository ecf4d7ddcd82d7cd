#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# netsim's as-routed mode on a fabric whose cabling does not follow host names, routed by OpenSM
# under ibsim (through the real libibumad/libibmad stack, umad2sim), checked against infiniband-diags:
#   4 leaves x 4 hosts, 2 spines, 2 uplinks per leaf (one cable to each spine), HDR (25 GB/s), each
#   leaf's hosts plugged into its ports 1-4 in an order drawn from seed 1 (generate --shuffle-cabling).
# For OpenSM's ftree and minhop engines (opensm -o: LIDs and tables programmed once):
#  (a) every switch's table in topology.json (discover --routes) equals `ibroute <switch LID>`,
#      parsed here on its own (the base64 LFT decoded in python);
#  (b) for a sample of host pairs, `topoaware route --format json` takes the switches and output
#      ports `ibtracert <slid> <dlid>` reports;
#  (c) netsim --link-loads on a ring of 8 hosts that crosses leaves at every edge: the bytes
#      netsim's as-routed mode puts on every cable (each direction) equal those of the paths
#      ibtracert reports for the ring's flows, and D-mod-K's loads differ from them.
# And a hand case under ftree, where as-routed and D-mod-K disagree on the time:
#   D-mod-K (netsim's synthetic model) sends a flow up leaf001's uplink `d mod 2` (d: the
#   destination's index in topology.json; uplink 0 to spine01, 1 to spine02), so two flows from
#   leaf001 to hosts of leaf002 whose indexes differ in parity take different uplinks. OpenSM's ftree
#   balances by the LIDs it gave out as it found ports, which the shuffled cabling decoupled from
#   names: with seed 1, n0005 (LID 33) and n0006 (LID 34) both go up through spine01. The test
#   takes such a pair X, Y from ibtracert's paths (leaf002 hosts of different parity whose paths
#   from n0001 and n0002 leave leaf001 by the same port), then runs jobs A = dp=2 on (n0001, X) and
#   B = dp=2 on (n0002, Y), 1 GB each (a 2-member ring: one 1 GB flow each way):
#   - alone: 1 GB / 25 GB/s = 40 ms under every routing;
#   - shared, D-mod-K: the forward flows take different uplinks (parities differ), the return flows
#     go to n0001 and n0002 (d = 0, 1): different uplinks again: nothing shared, 40 ms;
#   - shared, as-routed: both forward flows cross the same leaf001 uplink: 12.5 GB/s each, 80 ms
#     (slowdown 2.0; the return flows share at most one cable two ways too, no worse);
#   - shared, adaptive: leaf001's two uplinks are one 50 GB/s link: 40 ms.
# Last, bench/netsim/routes.sh on the same spec (reading the tables live, and through dump_fts)
# gives the same routes as the live walk and as the saved copy in tests/fixtures/routes (which
# tests/cli_plan_flows.sh reads); on 2 rails, one subnet and OpenSM per rail (read through dump_fts
# and through OpenSM's own record, the same routes); on 2 rails that meet
# at shared spines, one of each.
set -u
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tools/lib/ibsim.sh"
. "$top_srcdir/tests/lib/ib_routes.sh"
ta_require_daemon_tests
grep -q '^#define HAVE_SIMGRID 1' "$top_builddir/config.h" 2>/dev/null ||
  ta_skip "libsimgrid-dev not installed (configure did not find SimGrid >= 3.32; bench/netsim is not built)"
ta_require_cmd ibsim ibsim-utils
ta_require_cmd opensm opensm
ta_require_cmd ibroute infiniband-diags
ta_require_cmd ibtracert infiniband-diags
ta_require_cmd python3 python3
[ -r "$UMAD2SIM_LIB" ] || ta_skip "$UMAD2SIM_LIB missing (package libumad2sim0)"
bin="$top_builddir/topoaware"
netsim="$top_builddir/bench/netsim/netsim"
[ -x "$netsim" ] || ta_fail "$netsim not built"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-ibnetsim.XXXXXX")
ta_on_exit "ibsim_stop; rm -rf '$work'"
sim() { ib_sim "$@"; }

"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 2 --shuffle-cabling 1 \
  --net "$work/ft.net" >/dev/null || ta_fail "topoaware generate failed"
ibsim_start "$work/ft.net" "$work/sim" || ta_fail "ibsim did not start"

# (a) ibroute and (b) ibtracert against topology.json: tests/lib/ib_routes.sh.

# (c) the ring's expected link loads from ibtracert's paths, against netsim's as-routed loads.
# Ring n1 n5 n2 n6 n9 n13 n10 n14 (dp=8, S = 1 GB: 2*7/8 GB a flow): every edge joins two leaves,
# and two hosts of each leaf take part, so the loads depend on which uplink each flow takes (a ring
# over all 16 hosts loads every uplink alike under any balanced routing).
ring="n0001 n0005 n0002 n0006 n0009 n0013 n0010 n0014"
ring_json=$(printf '"%s",' $ring)
cat >"$work/ring.json" <<JSON
{"jobs": [{"name": "R", "layout": "tp=1,dp=8", "nodes": [${ring_json%,}], "dp_bytes": 1e9}]}
JSON
check_loads() {  # topology.json engine
  local t=$1 engine=$2 s d slid dlid
  set -- $ring
  local first=$1
  : >"$work/flows"
  while [ $# -gt 0 ]; do
    s=$1 d=${2:-$first}
    shift
    read -r slid dlid < <(ib_lids "$t" "$s" "$d")
    echo "$s $d $(ib_tracert_hops "$slid" "$dlid" | tr '\n' ' ')" >>"$work/flows"
  done
  "$netsim" --topology "$t" --snapshot "$work/ring.json" --traffic legacy --routing as-routed,dmodk --link-loads --format json \
    >"$work/loads-$engine.json" || { echo "netsim failed"; return 1; }
  python3 - "$t" "$work/flows" "$work/loads-$engine.json" <<'EOF'
import collections, json, sys
topo, res = json.load(open(sys.argv[1])), json.load(open(sys.argv[3]))
name = {int(s["guid"], 16): s["name"] for s in topo["switches"]}
edge = 2 * 7 / 8 * 1e9
want = collections.Counter()
for line in open(sys.argv[2]):
    f = line.split()
    src, dst, hops = f[0], f[1], list(zip(f[2::2], f[3::2]))
    want[(src, "nic", "up")] += edge
    want[(dst, "nic", "down")] += edge
    for guid, port in hops[:-1]:  # the last hop leaves by the destination's cable
        want[(name[int(guid, 16)], int(port))] += edge
def loads(routing):
    got = collections.Counter()
    for l in res["link_loads"][routing]:
        ends = l["link"].split(":", 1)[1]
        if "-" not in ends:  # a NIC link "host:port index"
            host = ends.split(":")[0]
            for k, d in (("up_bytes", "up"), ("down_bytes", "down")):
                if l[k]: got[(host, "nic", d)] += l[k]
            continue
        lo, hi = ends.split("-")
        for (sw, port), k in ((lo.split(":"), "up_bytes"), (hi.split(":"), "down_bytes")):
            if l[k]: got[(sw, int(port))] += l[k]
    return got
close = lambda a, b: a.keys() == b.keys() and all(abs(a[k] - b[k]) <= 1 for k in a)
routed, dmodk = loads("as-routed"), loads("dmodk")
if not close(routed, want):
    sys.exit("as-routed link loads differ from ibtracert's paths: %s" %
             sorted(set(routed.items()) ^ set(want.items()))[:6])
if close(dmodk, want):
    sys.exit("D-mod-K's link loads equal the routed ones on the shuffled fabric")
print(sum(1 for k in want if len(k) == 2))
EOF
}

for engine in ftree minhop; do
  sim opensm -o -R "$engine" -f "$work/opensm-$engine.log" >"$work/opensm-$engine.out" 2>&1 &&
    grep -q "osm_ucast_mgr_process: $engine tables configured" "$work/opensm-$engine.log" ||
    ta_fail "opensm -R $engine did not route: $(tail -3 "$work/opensm-$engine.log")"
  t="$work/$engine.json"
  sim "$bin" discover --quiet --routes --json "$t" 2>"$work/discover-$engine.err" ||
    ta_fail "$engine: discover --routes failed: $(grep -v ibwarn "$work/discover-$engine.err" | head -3)"
  if [ "$engine" = ftree ]; then
    # The shuffle is in effect: on some leaf, port order is not name order.
    python3 -c '
import json, sys
hosts = json.load(open(sys.argv[1]))["hosts"]
leaves = {}
for h in hosts:
    leaves.setdefault(h["ports"][0]["switch"], []).append((h["ports"][0]["switch_port"], h["name"]))
sys.exit(0 if any(sorted(v) != sorted(v, key=lambda x: x[1]) for v in leaves.values()) else 1)' "$t" ||
      ta_fail "--shuffle-cabling 1: every leaf still has its hosts in name order"
  fi
  msg=$(ib_check_ibroute "$t" 6) || ta_fail "$engine: $msg"
  ta_pass "$engine: (a) the 6 switch tables of topology.json equal ibroute's"
  for pair in "n0001 n0005" "n0002 n0006" "n0005 n0001" "n0006 n0002" "n0003 n0016" "n0012 n0008" "n0016 n0009" \
    "n0007 n0004" "n0010 n0011"; do
    msg=$(ib_check_pair "$t" $pair) || ta_fail "$engine: (b) $pair: $msg"
  done
  ta_pass "$engine: (b) topoaware route = ibtracert on 9 host pairs (switches, input and output ports)"
  n=$(check_loads "$t" "$engine" 2>&1) || ta_fail "$engine: (c) $n"
  ta_pass "$engine: (c) as-routed loads on every cable direction ($n loaded) = ibtracert's paths of the 8 ring" \
    "flows; D-mod-K's loads differ"
done

# The hand case (ftree): a pair X, Y of leaf002 (n0005..n0008) with indexes of different parity
# whose paths from n0001 and n0002 leave leaf001 by the same port, per ibtracert.
# (The fabric holds minhop's tables now: ftree again, and its routes read again.)
t="$work/hand-ftree.json"
sim opensm -o -R ftree -f "$work/opensm-ftree2.log" >/dev/null 2>&1 || ta_fail "opensm -R ftree (again) failed"
sim "$bin" discover --quiet --routes --json "$t" 2>/dev/null || ta_fail "discover --routes (ftree again) failed"
declare -A up
for s in n0001 n0002; do
  for d in n0005 n0006 n0007 n0008; do
    read -r slid dlid < <(ib_lids "$t" "$s" "$d")
    ib_tracert_hops "$slid" "$dlid" >"$work/hops" || ta_fail "ibtracert $slid $dlid failed"
    up[$s.$d]=$(sed -n 1p "$work/hops")
  done
done
X="" Y=""
for x in n0005 n0007; do
  for y in n0006 n0008; do
    [ -z "$X" ] && [ "${up[n0001.$x]}" = "${up[n0002.$y]}" ] && X=$x Y=$y
    [ -z "$X" ] && [ "${up[n0001.$y]}" = "${up[n0002.$x]}" ] && X=$y Y=$x
  done
done
[ -n "$X" ] || ta_fail "hand case: ftree's uplinks from leaf001 to leaf002 follow name parity on this cabling" \
  "(${up[*]}): seed 1 no longer separates LID order from name order"
ta_note "hand case: n0001 -> $X and n0002 -> $Y leave leaf001 by the same port (${up[n0001.$X]})"
cat >"$work/hand.json" <<JSON
{"jobs": [{"name": "A", "layout": "tp=1,dp=2", "nodes": ["n0001", "$X"], "dp_bytes": 1e9},
          {"name": "B", "layout": "tp=1,dp=2", "nodes": ["n0002", "$Y"], "dp_bytes": 1e9}]}
JSON
"$netsim" --topology "$t" --snapshot "$work/hand.json" --traffic legacy >"$work/hand.txt" || ta_fail "netsim (text) failed"
grep -q 'dmodk (synthetic)' "$work/hand.txt" && grep -q 'as-routed' "$work/hand.txt" ||
  ta_fail "netsim's text does not label dmodk as synthetic next to as-routed: $(head -2 "$work/hand.txt")"
"$netsim" --topology "$t" --snapshot "$work/hand.json" --traffic legacy --format json >"$work/hand.out" || ta_fail "netsim failed"
python3 - "$work/hand.out" <<'EOF' || ta_fail "hand case"
import json, sys
res = json.load(open(sys.argv[1]))
want = {("adaptive", "alone_s"): 40, ("adaptive", "shared_s"): 40, ("dmodk", "alone_s"): 40,
        ("dmodk", "shared_s"): 40, ("as-routed", "alone_s"): 40, ("as-routed", "shared_s"): 80}
assert res["routings"] == ["adaptive", "dmodk", "as-routed"], res["routings"]
fails = 0
for j in res["jobs"]:
    for (r, k), ms in want.items():
        got = j[r][k] * 1e3
        ok = abs(got - ms) <= 0.01 * ms
        fails += not ok
        print("%s: %s %s %s = %.3f ms (expected %d ms)" % ("ok" if ok else "FAIL", j["name"], r, k, got, ms))
sys.exit(1 if fails else 0)
EOF
ta_pass "hand case: jobs A, B alone 40 ms; shared 40 ms adaptive and D-mod-K, 80 ms as-routed (one uplink)"

# Without routes, as-routed is refused by name; by default only the routings the topology supports.
"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 2 --json "$work/plain.json" >/dev/null
rc=0
"$netsim" --topology "$work/plain.json" --snapshot "$work/hand.json" --traffic legacy --routing as-routed 2>"$work/plain.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q 'has no routes' "$work/plain.err" || ta_fail "as-routed without routes: exit $rc"
"$netsim" --topology "$work/plain.json" --snapshot "$work/hand.json" --traffic legacy --format json >"$work/plain.out" &&
  python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["routings"] != ["adaptive", "dmodk"])' \
    "$work/plain.out" || ta_fail "without routes, the default routings are not adaptive and dmodk"
ta_pass "without routes: --routing as-routed refused, the default runs adaptive and dmodk only"

# bench/netsim/routes.sh (its own ibsim, OpenSM ftree once, dump_fts + ibnetdiscover, discover --lfts)
# gives the same routes as the live walk above, and as the saved copy in tests/fixtures/routes. Every
# simulator has an OpenSM cache of its own (tools/lib/ibsim.sh), so a fresh OpenSM gives the same
# LIDs each time; the saved copy was routed by an OpenSM whose cache held other LIDs for the same
# GUIDs, so against it each switch's output port is compared per destination port, not per LID.
ibsim_stop
for read in live dumps; do
  top_builddir="$top_builddir" bash "$top_srcdir/bench/netsim/routes.sh" --engine ftree --seed 1 --read "$read" \
    "$work/helper-$read.json" -- fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 2 >/dev/null \
    2>"$work/helper-$read.err" || ta_fail "bench/netsim/routes.sh --read $read failed: $(tail -3 "$work/helper-$read.err")"
done
"$bin" discover --quiet --ibnetdiscover "$top_srcdir/tests/fixtures/routes/ft16-shuffled-ftree.ibnetdiscover" \
  --lfts "$top_srcdir/tests/fixtures/routes/ft16-shuffled-ftree.dump_fts" --json "$work/fixture.json" ||
  ta_fail "discover of the saved fixture failed"
python3 - "$work/helper-live.json" "$work/helper-dumps.json" "$t" "$work/fixture.json" <<'EOF2' || ta_fail "routes.sh"
import base64, json, sys
a, b, c, d = (json.load(open(p)) for p in sys.argv[1:5])
assert a["hash"] == b["hash"] == c["hash"] == d["hash"], "cabling differs"
assert a["routes"]["hash"] == b["routes"]["hash"] == c["routes"]["hash"], "routes differ"
def out_ports(t):  # (switch GUID, destination port) -> output port, whatever the LIDs
    out = {}
    for sn in t["routes"]["subnets"]:
        owner = {p[2]: (p[0], p[1]) for p in sn["ports"]}
        owner.update({s["lid"]: (s["guid"], 0) for s in sn["switches"]})
        for s in sn["switches"]:
            lft = base64.b64decode(s["lft"])
            for lid, dest in owner.items():
                out[(s["guid"], dest)] = lft[lid] if lid < len(lft) else 255
    return out
assert out_ports(a) == out_ports(d), "routes differ from tests/fixtures/routes"
EOF2
grep -q '^opensm -o -R ftree ' "$work/helper-live.err" && grep -q '^dump_fts (6 switches)' "$work/helper-dumps.err" ||
  ta_fail "routes.sh did not time its steps: $(cat "$work/helper-live.err" "$work/helper-dumps.err")"
ta_pass "bench/netsim/routes.sh (--read live and dumps): the same cabling and routes as the live walk and as tests/fixtures/routes"

# A rail-optimized fabric is one subnet per rail: routes.sh routes each rail with its own OpenSM
# (attached through n0001's NIC on that rail) and reads one walk and one dump_fts per rail. 2 rails,
# 2 units of 4 hosts: every host's NIC r has a LID in rail r's subnet and only there, the cabling is
# the generated one, and netsim's as-routed mode follows both rails' tables for a 2-node job whose
# per-NIC rings cross the units on both rails.
rail=(rail --rails 2 --units 2 --hosts-per-unit 4 --spines-per-rail 1 --uplinks 4)
top_builddir="$top_builddir" bash "$top_srcdir/bench/netsim/routes.sh" --engine ftree --seed 1 \
  "$work/rail-routed.json" -- "${rail[@]}" >/dev/null 2>"$work/rail-routed.err" ||
  ta_fail "bench/netsim/routes.sh on 2 rails failed: $(tail -3 "$work/rail-routed.err")"
"$bin" generate "${rail[@]}" --shuffle-cabling 1 --json "$work/rail-expected.json" >/dev/null ||
  ta_fail "generate rail failed"
grep -q '2 planes, one OpenSM each' "$work/rail-routed.err" ||
  ta_fail "routes.sh did not route the rails one by one: $(cat "$work/rail-routed.err")"
# The same rails with each plane's tables from OpenSM's own record (--read opensm: dump_fts leaves
# out a top LID that starts a block of 64): the same cabling and routes as through dump_fts.
top_builddir="$top_builddir" bash "$top_srcdir/bench/netsim/routes.sh" --engine ftree --seed 1 --read opensm \
  "$work/rail-osm.json" -- "${rail[@]}" >/dev/null 2>"$work/rail-osm.err" ||
  ta_fail "bench/netsim/routes.sh --read opensm on 2 rails failed: $(tail -3 "$work/rail-osm.err")"
grep -q '^opensm-lfts.dump (' "$work/rail-osm.err" ||
  ta_fail "routes.sh --read opensm did not read OpenSM's record: $(cat "$work/rail-osm.err")"
python3 -c 'import json, sys; a, b = (json.load(open(p)) for p in sys.argv[1:3]); sys.exit(a["hash"] != b["hash"] or a["routes"] != b["routes"])' \
  "$work/rail-routed.json" "$work/rail-osm.json" ||
  ta_fail "routes.sh on 2 rails: --read opensm and --read dumps give other cabling or routes"
cat >"$work/rail-job.json" <<JSON
{"jobs": [{"name": "X", "layout": "tp=2,dp=2", "nodes": ["n0001", "n0005"], "dp_bytes": 1e9}]}
JSON
"$netsim" --topology "$work/rail-routed.json" --snapshot "$work/rail-job.json" --routing as-routed --link-loads \
  --format json >"$work/rail-loads.json" 2>"$work/rail-loads.err" ||
  ta_fail "netsim as-routed on the routed rails failed: $(tail -3 "$work/rail-loads.err")"
python3 - "$work/rail-routed.json" "$work/rail-expected.json" "$work/rail-loads.json" <<'EOF2' || ta_fail "routes.sh on rails"
import json, sys
t, want, loads = (json.load(open(p)) for p in sys.argv[1:4])
assert t["hash"] == want["hash"], "cabling differs from the generated rails"
subnets = t["routes"]["subnets"]
assert len(subnets) == 2, "%d subnets, want one per rail" % len(subnets)
rail_of_switch = {}
for n, sn in enumerate(subnets):
    for s in sn["switches"]:
        rail_of_switch[s["guid"]] = n
for h in t["hosts"]:
    for p in h["ports"]:
        where = [n for n, sn in enumerate(subnets) if any(q[0] == p["ca_guid"] for q in sn["ports"])]
        assert len(where) == 1, "%s %s has a LID in subnets %s" % (h["name"], p["device"], where)
        assert rail_of_switch[p["switch"]] == where[0], "%s %s routed in another rail's subnet" % (h["name"], p["device"])
for r in ("rail1-spine", "rail2-spine"):
    busy = [l for l in loads["link_loads"]["as-routed"] if r in l["link"] and (l["up_bytes"] or l["down_bytes"])]
    assert busy, "no as-routed load on %s: the job's ring on that rail did not cross the units" % r
EOF2
ta_pass "bench/netsim/routes.sh on 2 rails: one OpenSM and one subnet per rail, every NIC routed in its rail, netsim as-routed follows both, OpenSM's record reads the same routes"

# Rails that meet at shared spines (generate rail --spines) are one subnet: routes.sh tells so from
# the cabling and routes them with one OpenSM; every NIC of every host has its LID in that subnet,
# every switch routes them all, and a 2-node job's per-NIC rings cross the units through the spines.
shared=(rail --rails 2 --units 2 --hosts-per-unit 4 --spines 2 --uplinks 4)
top_builddir="$top_builddir" bash "$top_srcdir/bench/netsim/routes.sh" --engine ftree --seed 1 \
  "$work/shared-routed.json" -- "${shared[@]}" >/dev/null 2>"$work/shared-routed.err" ||
  ta_fail "bench/netsim/routes.sh on rails with shared spines failed: $(tail -3 "$work/shared-routed.err")"
"$bin" generate "${shared[@]}" --shuffle-cabling 1 --json "$work/shared-expected.json" >/dev/null ||
  ta_fail "generate rail --spines failed"
! grep -q 'planes, one OpenSM each' "$work/shared-routed.err" && grep -q '^opensm -o -R ftree (1 plane(s))' "$work/shared-routed.err" ||
  ta_fail "routes.sh did not route the shared-spine rails as one plane: $(cat "$work/shared-routed.err")"
"$netsim" --topology "$work/shared-routed.json" --snapshot "$work/rail-job.json" --routing as-routed --link-loads \
  --format json >"$work/shared-loads.json" 2>"$work/shared-loads.err" ||
  ta_fail "netsim as-routed on the shared-spine rails failed: $(tail -3 "$work/shared-loads.err")"
python3 - "$work/shared-routed.json" "$work/shared-expected.json" "$work/shared-loads.json" <<'EOF2' || ta_fail "routes.sh on shared-spine rails"
import base64, json, sys
t, want, loads = (json.load(open(p)) for p in sys.argv[1:4])
assert t["hash"] == want["hash"], "cabling differs from the generated rails"
subnets = t["routes"]["subnets"]
assert len(subnets) == 1, "%d subnets, want one" % len(subnets)
lids = {q[0]: q[2] for q in subnets[0]["ports"]}
nics = [p["ca_guid"] for h in t["hosts"] for p in h["ports"]]
assert len(nics) == 16 and all(g in lids for g in nics), "a NIC has no LID"
assert len(subnets[0]["switches"]) == 6, "want 4 rail leaves and 2 spines in the subnet"
for s in subnets[0]["switches"]:
    lft = base64.b64decode(s["lft"])
    assert all(lids[g] < len(lft) and lft[lids[g]] != 255 for g in nics), "%s does not route every NIC" % s["guid"]
busy = [l for l in loads["link_loads"]["as-routed"] if "spine" in l["link"] and (l["up_bytes"] or l["down_bytes"])]
assert busy, "no as-routed load through the spines: the job's rings did not cross the units"
EOF2
ta_pass "bench/netsim/routes.sh on rails with shared spines: one OpenSM, one subnet, every NIC routed by every switch"
