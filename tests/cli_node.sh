#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware node on every recorded machine (tests/fixtures/hwloc, through hwloc as on a live node):
# the GPUs, NICs and GPU-NIC pairs it prints are the golden ones (tests/golden/hwloc/*.pairs, the
# probe spank_topoaware runs); with a layout, a task's variables are the task plan's (rank, NIC,
# NCCL_IB_HCA, MASTER_ADDR); a bad layout is refused with the layout parser's message (exit 1) and a
# layout that does not fit the nodes with exit 2.
set -u
bin="$top_builddir/topoaware"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
n=0
for xml in "$top_srcdir"/tests/fixtures/hwloc/*.xml; do
  name=$(basename "$xml" .xml)
  golden="$top_srcdir/tests/golden/hwloc/$name.pairs"
  [ -f "$golden" ] || continue
  "$bin" node --hwloc-xml "$xml" --format json >"$tmp/$name.json" 2>"$tmp/err" || fail "$name: $(cat "$tmp/err")"
  python3 - "$tmp/$name.json" >"$tmp/$name.pairs" <<'PY' || fail "$name: JSON not as documented"
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["gpus"]:
    print("gpu %s %s %s %s" % (g["busid"], g["cuda"] or "-", g["nic"] or "-", g["locality"]))
for nic in d["nics"]:
    print("nic %s %s %d" % (nic["name"], nic["busid"] or "-", nic["port"]))
PY
  diff -u "$golden" "$tmp/$name.pairs" || fail "$name: topoaware node differs from the probe's golden pairs"
  "$bin" node --hwloc-xml "$xml" | grep -q "^NCCL_IB_HCA for tasks here: " || fail "$name: text has no NCCL_IB_HCA line"
  n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n recorded machines with golden pairs"
echo "ok: $n recorded machines: GPUs, NICs and pairs as the golden probe output, in JSON and text"

hgx="$top_srcdir/tests/fixtures/hwloc/synthetic-hgx-8gpu-8nic.xml"
"$bin" generate fat-tree --leaves 2 --hosts-per-leaf 4 --json "$tmp/t.json" >/dev/null || exit 99
out=$("$bin" node --hwloc-xml "$hgx" --tp 8 --dp 2 --nodes 'n[0001-0002]' --self n0002 --topology "$tmp/t.json" \
  --local-rank 3) || fail "node with a layout failed"
for want in 'local rank 3: rank=11 node=1 host=n0002 local=3 tp=3 cp=0 ep=0 dp=1 pp=0 gpu=0000:30:00.0 nic=mlx5_3' \
  '    RANK=11' '    TOPOAWARE_NIC=mlx5_3' '    MASTER_ADDR=n0001' '    WORLD_SIZE=16' '    NCCL_IB_HCA==mlx5_0:1,'; do
  grep -qF -- "$want" <<<"$out" || fail "node --local-rank 3 lacks '$want': $out"
done
[ "$("$bin" node --hwloc-xml "$hgx" --tp 8 --dp 2 --nodes 'n[0001-0002]' --self n0001 --topology "$tmp/t.json" \
  --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["tasks"]))')" = 8 ] ||
  fail "node without --local-rank: not the node's 8 tasks"
echo "ok: tp=8 dp=2 on n[0001-0002]: local rank 3 of n0002 gets rank 11, its GPU's NIC, the job's master; 8 tasks"

"$bin" node --hwloc-xml "$hgx" --tp abc 2>"$tmp/e1"
[ $? = 1 ] && grep -q 'tp=abc is not a whole number' "$tmp/e1" || fail "--tp abc: $(cat "$tmp/e1")"
"$bin" node --hwloc-xml "$hgx" --tp 1 --dp 3 --nodes 'n[0001-0002]' --self n0001 --topology "$tmp/t.json" 2>"$tmp/e2"
[ $? = 2 ] && grep -q 'do not split evenly' "$tmp/e2" || fail "tp=1 dp=3 on 2 nodes: $(cat "$tmp/e2")"
echo "ok: a bad layout value exits 1 with the parser's message, a layout that does not fit exits 2"
