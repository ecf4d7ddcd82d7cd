#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Routes from the fabric, live: opensm programs a simulated fat tree (ibsim, through the real
# libibumad/libibmad stack under umad2sim) with each of its routing engines, once (opensm -o), as a
# subnet manager does on a real fabric. For every engine:
# - `discover --routes` reads every switch's table and every port's LID; the same routes come out of
#   `discover --ibnetdiscover DUMP --lfts FTS` over the saved output of ibnetdiscover and dump_fts
#   (two readers: our SMP queries, and infiniband-diags' own queries read back from its text);
# - and the same from OpenSM's own record of what it programmed (opensm-lfts.dump);
# - every switch's table equals ibroute's for that switch (read independently, by LID);
# - every ordered pair of hosts has a route that ends at the destination (topoaware route);
# - a few paths equal ibtracert's (hop by hop: switch GUID and output port).
# Then a re-route (another engine on the same cabling): `discover --routes --compare` reports
# routes-changed, the cabling hash stays, the routes hash moves.
# Without a subnet manager, --routes refuses to write (nothing was programmed) unless --allow-partial.
set -u
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tools/lib/ibsim.sh"
. "$top_srcdir/tests/lib/ib_routes.sh"
ta_require_daemon_tests
ta_require_cmd ibsim ibsim-utils
ta_require_cmd opensm opensm
ta_require_cmd dump_fts infiniband-diags
ta_require_cmd python3 python3
[ -r "$UMAD2SIM_LIB" ] || ta_skip "$UMAD2SIM_LIB missing (package libumad2sim0)"
bin="$top_builddir/topoaware"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-ibroutes.XXXXXX")
ta_on_exit "ibsim_stop; rm -rf '$work'"
sim() { ib_sim "$@"; }

# 4 leaves x 4 hosts, 2 spines, 2 uplinks per leaf: 16 hosts, 2 ways up from every leaf.
"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 2 --net "$work/ft.net" >/dev/null ||
  ta_fail "topoaware generate failed"
ibsim_start "$work/ft.net" "$work/sim" || ta_fail "ibsim did not start"

# No subnet manager yet: no LIDs, no tables.
rc=0
sim "$bin" discover --quiet --routes --json "$work/nosm.json" 2>"$work/nosm.err" || rc=$?
[ "$rc" -eq 3 ] && grep -q 'has a subnet manager programmed it' "$work/nosm.err" && [ ! -e "$work/nosm.json" ] ||
  ta_fail "without a subnet manager: exit $rc, $(grep -v ibwarn "$work/nosm.err" | head -3)"
ta_pass "no subnet manager: --routes says so and writes nothing"

# The routes member of two topology.json files, compared (ibroute and ibtracert: tests/lib/ib_routes.sh).
same_routes() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p))["routes"] for p in sys.argv[1:3])
a.pop("hash"), b.pop("hash")
sys.exit(0 if a == b else 1)
EOF
}
# Which engine routed: opensm says "<engine> tables configured on all switches" (a failing engine
# falls back to minhop and says so).
# With log level 0x43 (routing) OpenSM also writes what it programmed to opensm-lfts.dump.
route_with() {  # engine log
  mkdir -p "$2.dumps"
  sim opensm -o -R "$1" -D 0x43 --dump_files_dir "$2.dumps" -f "$2" >"$2.out" 2>&1 &&
    grep -q "osm_ucast_mgr_process: $1 tables configured" "$2"
}
for engine in ftree updn minhop dfsssp; do
  route_with "$engine" "$work/opensm-$engine.log" || ta_fail "opensm -R $engine did not route: $(tail -3 "$work/opensm-$engine.log")"
  live="$work/live-$engine.json" saved="$work/saved-$engine.json"
  sim "$bin" discover --quiet --routes --json "$live" 2>"$work/live-$engine.err" ||
    ta_fail "$engine: discover --routes failed: $(grep -v ibwarn "$work/live-$engine.err" | head -3)"
  sim dump_fts >"$work/fts-$engine.txt" 2>/dev/null || ta_fail "$engine: dump_fts failed"
  sim ibnetdiscover >"$work/ibnd.txt" 2>/dev/null || ta_fail "$engine: ibnetdiscover failed"
  "$bin" discover --ibnetdiscover "$work/ibnd.txt" --lfts "$work/fts-$engine.txt" --json "$saved" \
    2>"$work/saved-$engine.err" || ta_fail "$engine: discover --lfts failed: $(head -3 "$work/saved-$engine.err")"
  same_routes "$live" "$saved" || ta_fail "$engine: the live routes and those read from dump_fts differ"
  "$bin" discover --ibnetdiscover "$work/ibnd.txt" --lfts "$work/opensm-$engine.log.dumps/opensm-lfts.dump" \
    --json "$work/osm-$engine.json" 2>"$work/osm-$engine.err" ||
    ta_fail "$engine: discover --lfts opensm-lfts.dump failed: $(head -3 "$work/osm-$engine.err")"
  same_routes "$live" "$work/osm-$engine.json" ||
    ta_fail "$engine: the live routes and those of OpenSM's own opensm-lfts.dump differ"
  msg=$(ib_check_ibroute "$live") || ta_fail "$engine: $msg"
  broken=0
  hosts=$(python3 -c 'import json,sys; print(" ".join(h["name"] for h in json.load(open(sys.argv[1]))["hosts"]))' "$live")
  for s in $hosts; do
    for d in $hosts; do
      [ "$s" = "$d" ] && continue
      "$bin" route -t "$live" "$s" "$d" >/dev/null 2>>"$work/broken-$engine" || broken=$((broken + 1))
    done
  done
  [ "$broken" -eq 0 ] || ta_fail "$engine: $broken host pairs have no route: $(head -3 "$work/broken-$engine")"
  for pair in "n0001 n0016" "n0006 n0011" "n0016 n0002"; do
    msg=$(ib_check_pair "$live" $pair) || ta_fail "$engine: $pair: $msg"
  done
  ta_pass "$engine: live routes = dump_fts's = OpenSM's opensm-lfts.dump = ibroute's per switch; 240 host pairs routed; paths = ibtracert's"
done

# A re-route: minhop, then ftree again over the same cables.
route_with minhop "$work/opensm-again.log" || ta_fail "opensm minhop failed"
sim "$bin" discover --quiet --routes --json "$work/before.json" 2>/dev/null || ta_fail "discover --routes failed"
route_with ftree "$work/opensm-again2.log" || ta_fail "opensm ftree failed"
rc=0
sim "$bin" discover --quiet --routes --compare "$work/before.json" --json "$work/after.json" 2>"$work/compare.err" ||
  rc=$?
[ "$rc" -eq 6 ] && grep -q 'routes-changed' "$work/compare.err" ||
  ta_fail "re-route: exit $rc, $(grep -v ibwarn "$work/compare.err" | head -5)"
grep -E 'cables|host-|switch-|shape' "$work/compare.err" | grep -v '^before\|^after' && ta_fail "re-route reported as a cabling change"
python3 - "$work/before.json" "$work/after.json" <<'EOF' || ta_fail "re-route: hashes"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["hash"] == b["hash"], "cabling hash changed"
assert a["routes"]["hash"] != b["routes"]["hash"], "routes hash did not change"
EOF
ta_pass "re-route (minhop -> ftree): routes-changed, cabling hash kept, routes hash changed"
