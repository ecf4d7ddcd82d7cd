#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware discover/convert/generate from the shell: outputs, byte-identical reruns, exit codes
# and messages for bad input, and that a failure leaves no partial output behind.
set -u
. "$top_srcdir/tests/lib/common.sh"
bin="$top_builddir/topoaware"
fx="$top_srcdir/tests/fixtures/ib"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
expect_fail() {  # expect_fail CODE NEEDLE DESCRIPTION COMMAND...: exit CODE, stderr contains NEEDLE
  local code=$1 needle=$2 what=$3; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq "$code" ] && grep -qF -- "$needle" "$tmp/err"; then
    echo "ok: $what"
  else
    echo "FAIL: $what: exit $rc (want $code), stderr:"; sed 's/^/    /' "$tmp/err"; fails=$((fails + 1))
  fi
}

# Outputs of a real dump, and the same bytes twice.
"$bin" discover --ibnetdiscover "$fx/loginoff-2014-qdr-fdr.ibnetdiscover" --nodes 'stage[1-200]' \
  --json "$tmp/a.json" --tree "$tmp/a.conf" --block "$tmp/a-block.conf" --dot "$tmp/a.dot" -f summary >"$tmp/summary"
check "summary lists the levels" grep -q "2 at level 2" "$tmp/summary"
check "tree conf has leaves" grep -q "^SwitchName=ib1 Nodes=stage\[1-24\]" "$tmp/a.conf"
check "block conf has blocks" grep -q "^BlockName=" "$tmp/a-block.conf"
check "dot is a graph" grep -q "^graph\|^digraph" "$tmp/a.dot"
"$bin" discover --ibnetdiscover "$fx/loginoff-2014-qdr-fdr.ibnetdiscover" --nodes 'stage[1-200]' -f json >"$tmp/b.json"
check "json is byte-identical on a rerun" cmp -s "$tmp/a.json" "$tmp/b.json"
"$bin" convert "$tmp/a.json" -f tree >"$tmp/c.conf"
check "convert gives the same topology.conf" cmp -s "$tmp/a.conf" "$tmp/c.conf"
"$bin" discover --ibnetdiscover "$fx/x5-2020-qdr.ibnetdiscover" --node-name-map "$fx/x5-2020-qdr.node-name-map" \
  -f tree >"$tmp/x5.conf"
check "node-name map names the x5 hosts" grep -q "Nodes=sl390lin\[101-124\]" "$tmp/x5.conf"
if [ -n "${DOT:-}" ] || command -v dot >/dev/null; then
  "$bin" convert "$tmp/a.json" -f svg >"$tmp/a.svg"
  check "svg through graphviz" grep -q "<svg" "$tmp/a.svg"
fi

# Bad input: message names the file (and line), non-zero exit, no output file left behind.
expect_fail 2 "truncated-port-line.ibnetdiscover:" "truncated dump" \
  "$bin" discover --ibnetdiscover "$top_srcdir/tests/fixtures/bad/truncated-port-line.ibnetdiscover" -o "$tmp/out.json"
check "no output after a failed parse" test ! -e "$tmp/out.json"
printf 'this is not\nan ibnetdiscover dump\n' >"$tmp/garbage.txt"
expect_fail 2 "garbage.txt:1:" "unknown format names file and line" \
  "$bin" discover --ibnetdiscover "$tmp/garbage.txt" --json "$tmp/g.json"
check "no json after unknown format" test ! -e "$tmp/g.json"
expect_fail 1 "missing.txt" "missing file" "$bin" discover --ibnetdiscover "$tmp/missing.txt"
printf '0xdeadbeef00000001 ghost\n' >"$tmp/map"
expect_fail 2 "map:1: 0xdeadbeef00000001 (ghost) is not in the fabric" "map naming an unknown GUID" \
  "$bin" discover --ibnetdiscover "$fx/x5-2020-qdr.ibnetdiscover" --node-name-map "$tmp/map"
check "--allow-unknown-guids accepts it" "$bin" discover --ibnetdiscover "$fx/x5-2020-qdr.ibnetdiscover" \
  --node-name-map "$tmp/map" --keep-unnamed --allow-unknown-guids -f summary -o "$tmp/s.txt"
expect_fail 2 "no compute hosts" "fabric without hosts" \
  "$bin" discover --ibnetdiscover "$fx/exporter-test3.ibnetdiscover-p"
cat >"$tmp/b2b.txt" <<'DUMP'
vendid=0x2c9
devid=0x1017
caguid=0x0000000000000010
Ca	1 "H-0000000000000010"		# "a1 mlx5_0"
[1](11) 	"H-0000000000000020"[1](21) 		# "a2 mlx5_0" lid 1 4xEDR

vendid=0x2c9
devid=0x1017
caguid=0x0000000000000020
Ca	1 "H-0000000000000020"		# "a2 mlx5_0"
[1](21) 	"H-0000000000000010"[1](11) 		# "a1 mlx5_0" lid 2 4xEDR
DUMP
expect_fail 2 "no switches" "fabric without switches (two HCAs back to back)" \
  "$bin" discover --ibnetdiscover "$tmp/b2b.txt"
expect_fail 1 "--nodes: " "bad host list" \
  "$bin" discover --ibnetdiscover "$fx/ibtopotool-1.ibnetdiscover" --nodes 'n[3-1]'
# A dump that records lost packets is a partial walk: exit 3 and nothing written, unless allowed.
cp "$tmp/a.json" "$tmp/keep.json"
expect_fail 3 "incomplete" "partial dump refused" \
  "$bin" discover --ibnetdiscover "$fx/ibtopotool-3.ibnetdiscover" --keep-unnamed --json "$tmp/keep.json"
check "a good file is not replaced by a partial one" cmp -s "$tmp/a.json" "$tmp/keep.json"
check "--allow-partial writes it" \
  "$bin" discover --ibnetdiscover "$fx/ibtopotool-3.ibnetdiscover" --keep-unnamed --allow-partial \
  --json "$tmp/keep.json"
check "partial topology says so" grep -q partial-walk "$tmp/keep.json"
# A hand-edited topology.json is refused by convert (and by the plugins).
sed 's/"desc": "MF0;ib1/"desc": "MF0;ibX/' "$tmp/a.json" >"$tmp/edited.json"
expect_fail 2 "does not match the content" "edited topology.json" "$bin" convert "$tmp/edited.json"

# generate: the expected JSON equals discover on the generated dump.
"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 8 --spines 2 --uplinks 4 --json "$tmp/gen.json" \
  --ibnetdiscover "$tmp/gen.txt"
"$bin" discover --ibnetdiscover "$tmp/gen.txt" -o "$tmp/gen2.json" -f json
check "generated dump discovers to the expected JSON" cmp -s "$tmp/gen.json" "$tmp/gen2.json"
expect_fail 1 "uplinks" "impossible generator spec" \
  "$bin" generate fat-tree --leaves 4 --hosts-per-leaf 8 --spines 3 --uplinks 4

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
