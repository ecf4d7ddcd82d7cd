#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware plan on a generated 2:1 fat tree (8 leaves x 16 hosts): where jobs go, strict vs
# prefer, busy nodes never used, bad layouts refused with the layout checker's message.
set -u
bin="$top_builddir/topoaware"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }
"$bin" generate fat-tree --leaves 8 --hosts-per-leaf 16 --spines 4 --uplinks 8 --json "$tmp/t.json" || exit 99
plan() { "$bin" plan --topology "$tmp/t.json" "$@"; }

out=$(plan --tp 8 --pp 2 --dp 8)
grep -q "^Placement: ideal" <<<"$out" && grep -q "^Nodes: n\[0001-0016\]" <<<"$out" &&
  ok "16 nodes on one free leaf" || bad "16 nodes on one leaf: $out"

# A partly used leaf is filled before a whole free one is broken (best fit).
out=$(plan --tp 8 --dp 4 --busy 'n[0001-0012]')
grep -q "^Nodes: n\[0013-0016\]" <<<"$out" && ok "best fit uses the remainder of a partly used leaf" ||
  bad "best fit: $out"

# Busy nodes are never chosen.
busy='n[0001-0008,0017-0024,0033-0040,0049-0056,0065-0072,0081-0088,0097-0104,0113-0120]'
out=$(plan --tp 8 --dp 16 --busy "$busy" --format json)
if python3 - "$busy" <<PY <<<"$out"
import json, re, sys
j = json.load(sys.stdin)
busy = set()  # expand "n[a-b,c-d,...]" (the only form used here)
for a, b in re.findall(r"(\d+)-(\d+)", sys.argv[1]):
    busy.update("n%04d" % i for i in range(int(a), int(b) + 1))
assert len(busy) == 64, len(busy)
hosts = [r["host"] for r in j["rank_order"]]
assert len(hosts) == 16 and len(set(hosts)) == 16, hosts
assert not (set(hosts) & busy), set(hosts) & busy
PY
then ok "no busy node chosen, 16 distinct nodes"; else bad "busy nodes"; fi

# Only 8 free per leaf: a 16-node DP ring cannot be ideal; strict says no-block, prefer falls back.
out=$(plan --tp 8 --dp 16 --busy "$busy" --mode strict)
grep -q "^Placement: no-block" <<<"$out" && ok "strict: no ideal block on fragments" || bad "strict: $out"
out=$(plan --tp 8 --dp 16 --busy "$busy" --mode prefer)
grep -q "^Placement: fallback" <<<"$out" && ok "prefer: best fallback" || bad "prefer: $out"

# Cost against first-fit is printed.
out=$(plan --tp 8 --pp 4 --dp 4 --busy 'n[0001-0005,0017-0020,0040-0050]')
grep -q "first-fit by node index" <<<"$out" && ok "cost against first-fit" || bad "first-fit cost: $out"
# ... and against stock Slurm's topology/tree best fit, which here takes one whole free leaf too.
grep -q "^  Slurm topology/tree: .*DP rings at ideal 32/32" <<<"$out" && ok "cost against Slurm tree" || bad "tree cost: $out"
grep -q "topoaware moves 1.00 of Slurm topology/tree's hop-bytes" <<<"$out" && ok "tree ratio" || bad "tree ratio: $out"
out=$(plan --tp 8 --pp 4 --dp 4 --busy 'n[0001-0005,0017-0020,0040-0050]' --format json)
grep -q '"slurm_tree_cost"' <<<"$out" && ok "json: slurm_tree_cost" || bad "json tree cost: $out"
out=$(plan --tp 8 --pp 4 --dp 4 --busy 'n[0001-0005,0017-0020,0040-0050]' --policy slurm-block)
grep -q "^  Slurm topology/block: .*DP rings at ideal 32/32" <<<"$out" && ok "--policy slurm-block" || bad "block cost: $out"
plan --tp 8 --dp 2 --policy best-fit >/dev/null 2>&1 && bad "--policy best-fit accepted" || ok "unknown --policy refused"

# Bad layouts: exit 1 with the checker's message.
err=$(plan --tp 3 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -q "tp=3 does not divide" <<<"$err" && ok "tp=3 refused" || bad "tp=3: rc=$rc $err"
err=$(plan --tp abc 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -q "tp=abc is not a whole number" <<<"$err" && ok "tp=abc refused" || bad "tp=abc: rc=$rc $err"
plan --tp 8 --dp 200 >/dev/null; rc=$?
[ $rc -eq 4 ] && ok "too big for the cluster: exit 4" || bad "too big: rc=$rc"
err=$(plan --tp 8 --busy 'x[1-2]' 2>&1 >/dev/null); rc=$?
[ $rc -ne 0 ] && grep -q "x1 is not a host" <<<"$err" && ok "unknown host in --busy" || bad "unknown host: rc=$rc $err"
if command -v dot >/dev/null; then
  plan --tp 8 --pp 2 --dp 8 --format svg | grep -q "<svg" && ok "svg picture" || bad "svg"
fi
echo "$fails failure(s)"
[ "$fails" -eq 0 ]
