#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# NVLink domains through the command: `node --nvlink` on this machine (no NVIDIA driver here: the
# absent-library path for real, "none" with the reason, exit 0; SKIP if the driver is present, as the
# answer then depends on the hardware), and discover/convert --nvlink-domains with recorded lines of
# both formats: the domains land in topology.json, errors name file:line, unknown hosts are reported.
set -u
bin="$top_builddir/topoaware"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
u=1a2b3c4d-0000-4000-8000-00000000abcd
U=1A2B3C4D-0000-4000-8000-00000000ABCD

"$bin" generate fat-tree --leaves 2 --hosts-per-leaf 4 --ibnetdiscover "$tmp/f.ibnd" --json "$tmp/plain.json" || exit 99
# pdsh output of `topoaware node --nvlink` for some hosts, nvidia-smi's for others (interleaved).
cat >"$tmp/lines" <<L
n0001: nvlink cluster_uuid=$u clique_id=1 gpus=4
n0002: $U, 1
n0003: $U, 2
n0002: $U, 1
n0003: $U, 2
n0004: nvlink none (cannot load libnvidia-ml.so.1)
n0005: [N/A], [N/A]
gone1: nvlink cluster_uuid=$u clique_id=1 gpus=4
L
"$bin" discover --ibnetdiscover "$tmp/f.ibnd" --nvlink-domains "$tmp/lines" --json "$tmp/d.json" -q 2>"$tmp/err" \
  || fail "discover --nvlink-domains: $(cat "$tmp/err")"
grep -q "1 host(s) not in the fabric, ignored: gone1" "$tmp/err" || fail "unknown host not reported: $(cat "$tmp/err")"
grep -q "hosts report 2 to 4 GPUs" "$tmp/err" || fail "GPU count mismatch not reported: $(cat "$tmp/err")"
python3 - "$tmp/d.json" <<'PY' || fail "domains in topology.json not as given"
import json, sys
d = json.load(open(sys.argv[1]))["nvlink_domains"]
got = [(x["cluster_uuid"], x["clique_id"], x["gpus_per_node"], x["hosts"]) for x in d]
want = [("1a2b3c4d-0000-4000-8000-00000000abcd", 1, 2, "n[0001-0002]"),
        ("1a2b3c4d-0000-4000-8000-00000000abcd", 2, 2, "n0003")]
assert got == want, got
PY
# convert gives the same file from the fabric's topology.json; without domains the file is unchanged.
"$bin" convert "$tmp/plain.json" --nvlink-domains "$tmp/lines" --json "$tmp/c.json" 2>/dev/null || fail "convert"
cmp -s "$tmp/c.json" "$tmp/d.json" || fail "convert --nvlink-domains differs from discover --nvlink-domains"
"$bin" discover --ibnetdiscover "$tmp/f.ibnd" --json "$tmp/d0.json" -q || fail "discover"
cmp -s "$tmp/d0.json" "$tmp/plain.json" || fail "a fabric without domains changed"
grep -q nvlink "$tmp/plain.json" && fail "a fabric without domains mentions nvlink"
echo "ok: domains merged from both formats, unknown host and GPU count reported, no change without domains"

# generate: NVL72-style domains (18 trays of 4 GPUs per leaf here); the lines it writes discover to
# the same topology.json; summary and DOT draw the domains.
"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 18 --nvlink-domain-size 18 --ibnetdiscover "$tmp/g.ibnd" \
  --json "$tmp/g.json" --nvlink-lines "$tmp/g.lines" || fail "generate --nvlink-domain-size"
[ "$(grep -c '^n[0-9]*: nvlink cluster_uuid=.* clique_id=1 gpus=4$' "$tmp/g.lines")" = 72 ] || fail "generated lines"
"$bin" discover --ibnetdiscover "$tmp/g.ibnd" --nvlink-domains "$tmp/g.lines" --json "$tmp/g2.json" -q 2>/dev/null \
  || fail "discover of generated lines"
cmp -s "$tmp/g.json" "$tmp/g2.json" || fail "discovered domains differ from generate's expected topology.json"
"$bin" convert "$tmp/g.json" -f summary | grep -qx 'NVLink domains: 4 (hosts per domain: 18; GPUs per host: 4; hosts in no domain: 0)' \
  || fail "summary: $("$bin" convert "$tmp/g.json" -f summary)"
"$bin" convert "$tmp/g.json" -f dot >"$tmp/g.dot" || fail "dot"
[ "$(grep -c 'subgraph cluster_nvl' "$tmp/g.dot")" = 4 ] || fail "DOT has not 4 NVLink domain boxes"
grep -q 'label="NVLink domain 3 (18 x 4 GPUs)"' "$tmp/g.dot" || fail "DOT domain label"
if command -v dot >/dev/null; then
  dot -Tsvg "$tmp/g.dot" >/dev/null 2>"$tmp/err" || fail "Graphviz refuses the DOT: $(cat "$tmp/err")"
fi
"$bin" convert "$tmp/plain.json" -f dot | grep -q cluster_nvl && fail "DOT of a fabric without domains has domain boxes"
echo "ok: generate --nvlink-domain-size, its lines discover to the same file, summary and DOT draw domains"

# plan: tp=8 on trays of 4 GPUs spans pairs of trays inside one domain (domains n0001-n0018, ...); a
# job of 24 trays with 3 busy in the first domain takes a whole domain and 6 of the busy one's;
# tp=16 does not split 18 trays into whole groups and is refused with the sizes that do.
"$bin" plan --topology "$tmp/g.json" --tp 8 --dp 4 --gpus-per-node 4 >"$tmp/p1" || fail "plan tp=8"
grep -qx 'Nodes: n\[0001-0008\]' "$tmp/p1" || fail "plan tp=8: $(cat "$tmp/p1")"
grep -q '^Placement: ideal' "$tmp/p1" || fail "plan tp=8 not ideal"
"$bin" plan --topology "$tmp/g.json" --tp 8 --dp 12 --gpus-per-node 4 --busy 'n[0001-0003]' >"$tmp/p2" || fail "plan 24"
grep -qx 'Nodes: n\[0004-0009,0019-0036\]' "$tmp/p2" || fail "plan tp=8 dp=12: $(cat "$tmp/p2")"
"$bin" plan --topology "$tmp/g.json" --tp 16 --gpus-per-node 4 >"$tmp/p3" 2>&1 && fail "plan tp=16 accepted"
grep -q 'tp=16 spans 4 nodes of 4 GPUs.*72 GPUs (18 nodes of 4): use tp=1, 2, 4, 8, 12, 24, 36 or 72' "$tmp/p3" \
  || fail "plan tp=16: $(cat "$tmp/p3")"
"$bin" plan --topology "$tmp/plain.json" --tp 8 --gpus-per-node 4 >"$tmp/p4" 2>&1 && fail "tp=8 accepted without domains"
grep -q 'tp=8 needs 8 GPUs in one NVLink domain but nodes have 4 GPUs' "$tmp/p4" || fail "no domains: $(cat "$tmp/p4")"
echo "ok: plan keeps TP groups inside NVLink domains and refuses tp that no domain splits into"

bad() {  # bad LINE NEEDLE
  printf 'n0001: nvlink none\n%s\n' "$1" >"$tmp/bad"
  if "$bin" convert "$tmp/plain.json" --nvlink-domains "$tmp/bad" --json "$tmp/x.json" 2>"$tmp/err"; then
    fail "accepted \"$1\""
  fi
  grep -qF "$tmp/bad:2: $2" "$tmp/err" || fail "\"$1\": error does not name file:line and \"$2\": $(cat "$tmp/err")"
  [ ! -e "$tmp/x.json" ] || fail "wrote a topology.json after an error"
}
bad "$u, 1" 'no "host: " prefix'
bad "n0002: nvlink cluster_uuid=$u clique_id=x gpus=4" 'clique_id "x"'
bad "n0001: nvlink none" 'host n0001 is listed more than once'
bad "n0002: junk" 'expected "<cluster UUID>, <clique ID>"'
echo "ok: bad lines refused with file:line"

if [ -e /dev/nvidiactl ] || ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
  echo "SKIP: an NVIDIA driver is installed here: the absent-library path cannot be tested"
  exit 77
fi
out=$("$bin" node --nvlink 2>&1) || fail "node --nvlink failed without a driver (must exit 0)"
case "$out" in
  "nvlink none (cannot load libnvidia-ml.so.1: "*) ;;
  *) fail "node --nvlink without a driver: $out" ;;
esac
# Its output, pdsh-prefixed, reads back.
echo "n0006: $out" >"$tmp/self"
"$bin" convert "$tmp/plain.json" --nvlink-domains "$tmp/self" --json "$tmp/s.json" 2>/dev/null || fail "own line does not read"
echo "ok: node --nvlink without a driver: $out"
