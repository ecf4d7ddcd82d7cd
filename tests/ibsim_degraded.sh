#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Degraded leaf uplinks in placement, on live ibsim fabrics through the real
# libibumad/libibmad/libibnetdisc stack (umad2sim): 4 leaves x 4 hosts, 2 spines, 4 uplinks per
# leaf (2 cables to each spine), all 4xHDR. The same fabric is walked twice: as built, and with
# every uplink of leaf002 trained down to 2x in the net file (half its uplink bandwidth). Then
# topoaware plan, the placement engine and the cost model of the select plugin:
# - healthy fabric: an 8-node job (one DP ring over two leaves) takes leaf001 and leaf002, a
#   4-node job (one leaf) leaf001;
# - leaf002 at 2x: the 8-node job takes two healthy leaves, the plan names leaf002 at 0.50 of
#   nominal, and the job forced onto leaf001 + leaf002 costs more than on a healthy pair (which
#   costs what it costs on the healthy fabric);
# - a 4-node job never uses its leaf's uplinks: it costs the same on leaf002 as anywhere, and the
#   engine puts it on leaf002, keeping the healthy leaves for jobs that cross.
set -u
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tools/lib/ibsim.sh"
ta_require_daemon_tests
ta_require_cmd ibsim ibsim-utils
ta_require_cmd python3 python3
[ -r "$UMAD2SIM_LIB" ] || ta_skip "$UMAD2SIM_LIB missing (package libumad2sim0)"
bin="$top_builddir/topoaware"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-ibdegraded.XXXXXX")
ta_on_exit "ibsim_stop; rm -rf '$work'"
walk() { timeout 120 env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" "$bin" discover --quiet "$@"; }
# plan TOPOLOGY NAME ARGS...: topoaware plan --format json into $work/NAME.json.
plan() {
  local topo=$1 name=$2
  shift 2
  "$bin" plan --topology "$topo" --format json "$@" >"$work/$name.json" 2>"$work/$name.err" ||
    ta_fail "topoaware plan $*: $(cat "$work/$name.err")"
}
# field NAME EXPR: a Python expression over the plan d (hosts: the chosen host names, sorted).
field() {
  python3 - "$work/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hosts = sorted(r["host"] for r in d["rank_order"])
print(eval(sys.argv[2]))
PY
}

"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 4 --net "$work/ft.net" >/dev/null ||
  ta_fail "topoaware generate failed"
switch_id() { sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$1\".*/\1/p" "$work/ft.net"; }
leaf2=$(switch_id leaf002)
[ -n "$leaf2" ] || ta_fail "cannot read $work/ft.net"
# Every uplink of leaf002 at 2x: its port lines towards the spines, and the spines' lines back.
awk -v l1="$leaf2" '
  /^Switch/ { cur = $0 ~ "\"" l1 "\"" ? "leaf" : ($0 ~ /# "spine/ ? "spine" : "") }
  (cur == "leaf" && /^\[/ && /spine/) || (cur == "spine" && /^\[/ && $0 ~ "\"" l1 "\"") { sub(/4xHDR/, "2xHDR") }
  { print }' "$work/ft.net" >"$work/narrow.net"
[ "$(grep -c 2xHDR "$work/narrow.net")" = 8 ] ||
  ta_fail "could not narrow leaf002's 4 uplinks (both ends) in the net file: $(grep -c 2xHDR "$work/narrow.net") lines"

ibsim_start "$work/ft.net" "$work/sim" || ta_fail "ibsim did not start"
walk --json "$work/healthy.json" || ta_fail "walk of the healthy fabric failed"
ibsim_stop
ibsim_start "$work/narrow.net" "$work/sim2" || ta_fail "ibsim did not start on the narrowed net file"
walk --json "$work/narrow.json" -f summary >"$work/narrow.summary" || ta_fail "walk of the narrowed fabric failed"
ibsim_stop
grep -qE 'slow-link.*leaf002' "$work/narrow.summary" ||
  ta_fail "the walk did not see leaf002's uplinks at 2x: $(cat "$work/narrow.summary")"
ta_pass "leaf002's 4 uplinks trained down to 2x in the simulator and discovered as such (slow-link)"

# An 8-node job: tp=8 dp=8 on 8-GPU nodes.
plan "$work/healthy.json" h8 --tp 8 --dp 8
[ "$(field h8 'hosts == ["n%04d" % i for i in range(1, 9)]')" = True ] ||
  ta_fail "healthy fabric: 8 nodes not on leaf001+leaf002: $(field h8 hosts)"
[ "$(field h8 'd["degraded_leaf_uplinks"]')" = "[]" ] || ta_fail "healthy fabric reported as degraded"
plan "$work/narrow.json" n8 --tp 8 --dp 8
[ "$(field n8 'd["status"]')" = ideal ] ||
  ta_fail "leaf002 at 2x: the 8-node job is not ideal: $(field n8 'd["status"]')"
[ "$(field n8 'any(h in hosts for h in ["n0005", "n0006", "n0007", "n0008"])')" = False ] ||
  ta_fail "leaf002 at 2x: the 8-node job still uses leaf002: $(field n8 hosts)"
[ "$(field n8 '[(x["leaf"], x["uplink_fraction"]) for x in d["degraded_leaf_uplinks"]]')" = "[('leaf002', 0.5)]" ] ||
  ta_fail "plan does not name leaf002 at 0.5 of nominal: $(field n8 'd["degraded_leaf_uplinks"]')"
"$bin" plan --topology "$work/narrow.json" --tp 8 --dp 8 |
  grep -q 'Degraded leaf uplinks.*leaf002 at 0.50 of nominal' ||
  ta_fail "plan's text does not name leaf002"
ta_pass "leaf002 at 2x: the 8-node job takes two healthy leaves ($(field n8 '" ".join(hosts)'))," \
  "the plan names leaf002 at 0.50 of nominal"

# The cost of a 2-leaf job across leaf002 against a healthy pair.
plan "$work/narrow.json" across --tp 8 --dp 8 --free 'n[0001-0008]'
plan "$work/narrow.json" pair --tp 8 --dp 8 --free 'n[0009-0016]'
across=$(field across 'd["cost"]["ratio_to_ideal"]') pair=$(field pair 'd["cost"]["ratio_to_ideal"]')
healthy=$(field h8 'd["cost"]["ratio_to_ideal"]')
python3 -c "import sys; a, p, h = map(float, sys.argv[1:]); sys.exit(not (a > p * 1.01 and abs(p - h) < 1e-9))" \
  "$across" "$pair" "$healthy" ||
  ta_fail "cost across leaf002 $across, on a healthy pair $pair, on the healthy fabric $healthy"
[ "$(field across 'd["cost"]["degraded_uplink_hop_bytes"] > 0')" = True ] ||
  ta_fail "no hop-bytes counted on leaf002's uplinks"
ta_pass "cost (hop-bytes / ideal) of the 8-node job: $across across leaf002, $pair on a healthy pair," \
  "$healthy on the healthy fabric"

# A one-leaf job: tp=8 dp=4.
plan "$work/narrow.json" one --tp 8 --dp 4 --free 'n[0005-0008]'
plan "$work/healthy.json" one_h --tp 8 --dp 4 --free 'n[0005-0008]'
[ "$(field one 'd["cost"]["hop_bytes"]')" = "$(field one_h 'd["cost"]["hop_bytes"]')" ] ||
  ta_fail "a one-leaf job on leaf002 costs $(field one 'd["cost"]["hop_bytes"]') at 2x," \
    "$(field one_h 'd["cost"]["hop_bytes"]') healthy"
plan "$work/healthy.json" one_all_h --tp 8 --dp 4
[ "$(field one_all_h 'hosts')" = "['n0001', 'n0002', 'n0003', 'n0004']" ] ||
  ta_fail "healthy fabric, a one-leaf job with every leaf free: $(field one_all_h hosts), wanted leaf001"
plan "$work/narrow.json" one_all --tp 8 --dp 4
[ "$(field one_all 'hosts')" = "['n0005', 'n0006', 'n0007', 'n0008']" ] ||
  ta_fail "leaf002 at 2x, a one-leaf job with every leaf free: $(field one_all hosts), wanted leaf002"
ta_pass "a one-leaf job costs the same on leaf002 at 2x; with every leaf free it goes to leaf002 (leaf001 when healthy)"
