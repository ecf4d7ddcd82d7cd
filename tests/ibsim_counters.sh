#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware discover --counters on a live ibsim fabric through the real libibumad/libibmad stack
# (umad2sim): opensm programs LIDs and routes once (opensm -o), as a subnet manager does on a real
# fabric, so the PMA PortCounters queries (by LID) reach every connected port. ibsim answers them
# (zero counts), and its console sets counters (PerformanceSet):
# - healthy fabric: every connected port read, every counter 0, no port-errors anomaly;
# - SymbolErrorCounter 50 on a leaf's uplink (threshold 10): the cable is named with both ends and
#   becomes a port-errors anomaly in the summary and topology.json; LinkDownedCounter 3 on a host
#   port (threshold 10) is reported but is no anomaly;
# - without a subnet manager (no routes): the ports are reported as not read, and the walk still writes.
set -u
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tools/lib/ibsim.sh"
ta_require_daemon_tests
ta_require_cmd ibsim ibsim-utils
ta_require_cmd opensm opensm
[ -r "$UMAD2SIM_LIB" ] || ta_skip "$UMAD2SIM_LIB missing (package libumad2sim0)"
bin="$top_builddir/topoaware"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-ibcounters.XXXXXX")
ta_on_exit "ibsim_stop; rm -rf '$work'"
walk() { timeout 120 env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" "$bin" discover --quiet "$@"; }

"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 2 --net "$work/ft.net" >/dev/null ||
  ta_fail "topoaware generate failed"
switch_id() { sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$1\".*/\1/p" "$work/ft.net"; }
leaf1=$(switch_id leaf001)
uplink=$(awk '/^Switch.*# "leaf001"/{f=1; next} f && /^\[/ && /spine/ {print $1; exit}' "$work/ft.net" | tr -d '[]')

# 3 first: no subnet manager yet.
ibsim_start "$work/ft.net" "$work/sim" || ta_fail "ibsim did not start"
# (ibsim gives ports the net file's LIDs, but without a subnet manager no switch forwards by LID:
# only the local port answers.)
walk --counters --timeout 100 --json "$work/nosm.json" 2>"$work/nosm.err" || ta_fail "walk --counters failed"
grep -q '^Port counters: 1 ports read' "$work/nosm.err" &&
  [ "$(grep -c 'not read: .*no answer to the PortCounters query' "$work/nosm.err")" -ge 20 ] ||
  ta_fail "without a subnet manager: $(grep -v ibwarn "$work/nosm.err" | head -5)"
[ -s "$work/nosm.json" ] || ta_fail "without routes the walk wrote no topology"
ta_pass "no subnet manager: the ports that cannot be reached are reported as not read; the topology is written"

# Those lost queries count as PortRcvSwitchRelayErrors on leaf001: a fresh simulator for the rest.
ibsim_stop
ibsim_start "$work/ft.net" "$work/sim2" || ta_fail "ibsim did not start again"
timeout 60 env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" opensm -o -f "$work/opensm.log" \
  >"$work/opensm.out" 2>&1 || ta_fail "opensm -o failed: $(tail -5 "$work/opensm.out")"
walk --counters -f summary --json "$work/ok.json" >"$work/ok.summary" 2>"$work/ok.err" ||
  ta_fail "walk --counters failed"
# 16 hosts + 4 leaves x (4 hosts + 2 uplinks) + 2 spines x 4 = 48 connected ports.
grep -q '^Port counters: 48 ports read, every error counter 0$' "$work/ok.err" ||
  ta_fail "healthy fabric: $(grep -v ibwarn "$work/ok.err" | head -5)"
grep -q 'port-errors' "$work/ok.summary" "$work/ok.json" && ta_fail "a port-errors anomaly on a healthy fabric"
ta_pass "healthy fabric: 48 connected ports read, every error counter 0, no anomaly"

ibsim_console "PerformanceSet \"$leaf1\"[$uplink] PortCounters.SymbolErrorCounter=50"
ibsim_console "PerformanceSet \"$leaf1\"[1] PortCounters.LinkDownedCounter=3"
walk --counters -f summary --json "$work/bad.json" >"$work/bad.summary" 2>"$work/bad.err" || ta_fail "walk failed"
grep -qE "^  leaf001 port $uplink <-> spine0[12] port [0-9]+  ABOVE THRESHOLD$" "$work/bad.err" &&
  grep -q "^    leaf001 port $uplink: SymbolErrorCounter = 50$" "$work/bad.err" &&
  grep -qE '^  leaf001 port 1 <-> n0001 mlx5_0 port 1$' "$work/bad.err" &&
  grep -q '^    leaf001 port 1: LinkDownedCounter = 3$' "$work/bad.err" ||
  ta_fail "counter report: $(grep -v ibwarn "$work/bad.err")"
grep -qE "\[port-errors\] leaf001 port $uplink <-> spine0[12] port [0-9]+: .*SymbolErrorCounter at leaf001" \
  "$work/bad.summary" || ta_fail "no port-errors anomaly in the summary: $(grep -A3 Anomalies "$work/bad.summary")"
[ "$(grep -c 'port-errors' "$work/bad.summary")" = 1 ] || ta_fail "LinkDownedCounter 3 (below 10) made an anomaly"
[ "$(python3 -c 'import json,sys; print([a["kind"] for a in json.load(open(sys.argv[1]))["anomalies"]])' \
  "$work/bad.json")" = "['port-errors']" ] || ta_fail "topology.json lacks the port-errors anomaly"
ta_pass "SymbolErrorCounter 50 on leaf001's uplink: the cable with both ends, a port-errors anomaly in summary" \
  "and topology.json; LinkDownedCounter 3 on a host port reported, no anomaly"
