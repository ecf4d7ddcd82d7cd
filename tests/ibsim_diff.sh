#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware diff and discover --compare on live ibsim fabrics, through the real
# libibumad/libibmad/libibnetdisc stack (umad2sim): 4 leaves x 4 hosts, 2 spines, 2 cables per
# leaf and spine. Each change is made in the running simulator (its console) or in its net file,
# the fabric is walked again, and diff must name exactly what changed:
# - the same fabric walked twice: exit 0, "no change"; discover --compare writes nothing (exit 0);
# - a leaf-spine cable unlinked: cables-lost; discover --compare writes the new file (exit 6);
# - a host recabled to another leaf (Unlink, then Link to a free port): host-moved-leaf;
# - a leaf-spine cable trained down to 2x (the net file, simulator restarted): link-slower.
set -u
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tools/lib/ibsim.sh"
ta_require_daemon_tests
ta_require_cmd ibsim ibsim-utils
[ -r "$UMAD2SIM_LIB" ] || ta_skip "$UMAD2SIM_LIB missing (package libumad2sim0)"
bin="$top_builddir/topoaware"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-ibdiff.XXXXXX")
ta_on_exit "ibsim_stop; rm -rf '$work'"
walk() { timeout 120 env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" "$bin" discover --quiet "$@"; }
# diff_expect OLD NEW RC PATTERN...: topoaware diff exits RC and its text has every pattern.
diff_expect() {
  local old=$1 new=$2 want=$3 rc p
  shift 3
  "$bin" diff "$old" "$new" >"$work/diff.out" 2>&1
  rc=$?
  [ "$rc" = "$want" ] || ta_fail "topoaware diff $old $new: exit $rc, wanted $want: $(cat "$work/diff.out")"
  for p in "$@"; do grep -qE "$p" "$work/diff.out" || ta_fail "topoaware diff lacks '$p': $(cat "$work/diff.out")"; done
}

"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 4 --net "$work/ft.net" >/dev/null ||
  ta_fail "topoaware generate failed"
ibsim_start "$work/ft.net" "$work/sim" || ta_fail "ibsim did not start"
switch_id() { sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$1\".*/\1/p" "$work/ft.net"; }
host_id() { sed -n "s/^Ca.*\"\(H-[0-9a-f]*\)\".*# \"$1 .*/\1/p" "$work/ft.net"; }
leaf1=$(switch_id leaf001) leaf3=$(switch_id leaf003) host=$(host_id n0002)
uplink=$(awk '/^Switch.*# "leaf001"/{f=1; next} f && /^\[/ && /spine/ {print $1; exit}' "$work/ft.net" | tr -d '[]')
[ -n "$leaf1" ] && [ -n "$leaf3" ] && [ -n "$host" ] && [ -n "$uplink" ] || ta_fail "cannot read $work/ft.net"

# 1. The same fabric twice.
walk --json "$work/t0.json" || ta_fail "first walk failed"
walk --json "$work/t0b.json" || ta_fail "second walk failed"
diff_expect "$work/t0.json" "$work/t0b.json" 0 '^no change$'
"$bin" diff -q "$work/t0.json" "$work/t0b.json" | grep -q . && ta_fail "diff -q printed something"
cp "$work/t0.json" "$work/current.json"
touch -d '2001-01-01' "$work/current.json"
walk --compare "$work/current.json" --json "$work/current.json" 2>"$work/cmp.err"
rc=$?
[ $rc = 0 ] && grep -q 'unchanged since' "$work/cmp.err" ||
  ta_fail "discover --compare, no change: exit $rc, $(cat "$work/cmp.err")"
[ "$(stat -c %Y "$work/current.json")" = "$(date -d 2001-01-01 +%s)" ] ||
  ta_fail "discover --compare rewrote an unchanged file"
ta_pass "the same fabric walked twice: diff exits 0 with 'no change'; discover --compare writes nothing"

# 2. A cable unlinked.
ibsim_console "Unlink \"$leaf1\"[$uplink]"
walk --compare "$work/current.json" --json "$work/current.json" 2>"$work/cmp.err"
rc=$?
[ $rc = 6 ] && grep -qE 'cables-lost +leaf001 <-> spine0[12]: 1 of 2 cables gone \(1 left\)' "$work/cmp.err" ||
  ta_fail "discover --compare after a cable was unlinked: exit $rc, $(cat "$work/cmp.err")"
[ "$(stat -c %Y "$work/current.json")" != "$(date -d 2001-01-01 +%s)" ] || ta_fail "discover --compare did not write"
diff_expect "$work/t0.json" "$work/current.json" 1 '^1 change:$' 'cables-lost +leaf001 <-> spine0[12]'
ibsim_console "ReLink \"$leaf1\"[$uplink]"
walk --json "$work/t1.json" || ta_fail "walk after ReLink failed"
diff_expect "$work/t0.json" "$work/t1.json" 0 '^no change$'
ta_pass "cable unlinked: discover --compare names it and writes (exit 6), diff exits 1 with cables-lost; relinked: same"

# 3. A host recabled to a free port of leaf003.
free=$(awk '/^Switch.*# "leaf003"/{print $2; exit}' "$work/ft.net")
ibsim_console "Unlink \"$host\"[1]"
ibsim_console "Link \"$host\"[1] \"$leaf3\"[$free]"
walk --json "$work/t2.json" || ta_fail "walk after moving n0002 failed"
diff_expect "$work/t0.json" "$work/t2.json" 1 'host-moved-leaf +n0002: 1 host from leaf001 to leaf003' \
  'host-moved-leaf-group +n0002'
# ibsim brings a cable made by its console's Link up at SDR (the leaf's spare port has no speed in the
# net file): the port's speed change is real and reported too; nothing else may be.
grep -vE '^(before|after|[0-9]+ change)|host-moved|host-port-slower +n0002: 1 host mlx5_0 port 1: 4xHDR -> ' \
  "$work/diff.out" && ta_fail "more than the host's move reported"
"$bin" diff --format json "$work/t0.json" "$work/t2.json" >"$work/diff.json"
python3 - "$work/diff.json" <<'PY' || ta_fail "diff --format json: $(cat "$work/diff.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "topoaware-diff/1" and d["same"] is False
assert {c["kind"] for c in d["changes"]} - {"host-port-slower"} == {"host-moved-leaf", "host-moved-leaf-group"}, d
assert all(c["subject"] == "n0002" for c in d["changes"])
PY
ta_pass "host recabled to leaf003 in the simulator: host-moved-leaf (text and JSON), nothing else"
ibsim_stop

# 4. A leaf-spine cable trained down to 2x: both ends' port lines in the net file, simulator restarted.
spine_line=$(awk '/^Switch.*# "leaf001"/{f=1; next} f && /^\[/ && /spine/ {print; exit}' "$work/ft.net")
spine_id=$(sed -n 's/^\[[0-9]*\][ \t]*"\(S-[0-9a-f]*\)"\[\([0-9]*\)\].*/\1 \2/p' <<<"$spine_line")
read -r sid sport <<<"$spine_id"
[ -n "$sid" ] && [ -n "$sport" ] || ta_fail "cannot read leaf001's first uplink: $spine_line"
awk -v l1="$leaf1" -v up="$uplink" -v sid="$sid" -v sp="$sport" '
  /^Switch/ { cur = $0 ~ "\"" l1 "\"" ? "leaf" : ($0 ~ "\"" sid "\"" ? "spine" : "") }
  (cur == "leaf" && $0 ~ "^\\[" up "\\]") || (cur == "spine" && $0 ~ "^\\[" sp "\\]" && $0 ~ l1) {
    sub(/4xHDR/, "2xHDR")
  }
  { print }' "$work/ft.net" >"$work/narrow.net"
[ "$(grep -c 2xHDR "$work/narrow.net")" = 2 ] || ta_fail "could not narrow one cable in the net file"
ibsim_start "$work/narrow.net" "$work/sim2" || ta_fail "ibsim did not start on the changed net file"
walk --json "$work/t3.json" || ta_fail "walk of the narrowed fabric failed"
diff_expect "$work/t0.json" "$work/t3.json" 1 '^1 change:$' \
  'link-slower +leaf001 <-> spine0[12]: 1 of 2 cables 4xHDR -> 2xHDR'
ta_pass "a cable trained down to 2x: link-slower, 1 of 2 cables 4xHDR -> 2xHDR"
