#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topology.yaml as topoaware writes it, read back with a YAML parser (python3-yaml) and checked
# against the schema of Slurm's topology.yaml(5) / src/interfaces/topology.c: a list of topologies,
# each with exactly one type, one cluster_default; tree switches with children or nodes; block
# block_sizes the base times increasing powers of two, every block at least the base. Covers
# NVLink domains (with a short domain and hosts in none), a fabric without them (leaf blocks, the
# same blocks as the block topology.conf), --block-sizes, and names that need quoting.
set -u
bin="$top_builddir/topoaware"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3 with the yaml module (python3-yaml) not installed"; exit 77; }

check() {  # check FILE EXPECTED-BLOCK-TOPOLOGY EXPECTED-SIZES NODES-IN-BLOCKS
  python3 - "$@" <<'PY' || fail "$1: not the topology.yaml schema: $(cat "$1")"
import sys, yaml
path, want_block, want_sizes, want_nodes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
doc = yaml.safe_load(open(path))
assert isinstance(doc, list) and doc, "not a list of topologies"
types = {"tree", "block", "flat", "ring", "torus3d"}
defaults = [t["topology"] for t in doc if t.get("cluster_default")]
assert defaults == ["fabric"], defaults
names = [t["topology"] for t in doc]
assert len(set(names)) == len(names), names
for t in doc:
    assert list(t)[0] == "topology", "topology must be the first attribute"
    assert isinstance(t["cluster_default"], bool)
    kinds = [k for k in t if k in types]
    assert len(kinds) == 1, kinds
    assert set(t) <= {"topology", "cluster_default"} | types, set(t)
tree = doc[0]["tree"]
seen = set()
for s in tree["switches"]:
    assert set(s) <= {"switch", "children", "nodes"} and "switch" in s, s
    assert isinstance(s["switch"], str) and 0 < len(s["switch"]) <= 64
    assert ("children" in s) != ("nodes" in s), s
    assert s["switch"] not in seen
    seen.add(s["switch"])
if want_block == "-":
    assert len(doc) == 1, names
    sys.exit(0)
blk = doc[1]
assert blk["topology"] == want_block, blk["topology"]
sizes = blk["block"]["block_sizes"]
assert all(isinstance(x, int) for x in sizes)
assert ",".join(map(str, sizes)) == want_sizes, sizes
for a, b in zip(sizes, sizes[1:]):
    r = b // sizes[0]
    assert b > a and b % sizes[0] == 0 and r & (r - 1) == 0, sizes
blocks = blk["block"]["blocks"]
assert len({b["block"] for b in blocks}) == len(blocks)
n = 0
for b in blocks:
    assert set(b) == {"block", "nodes"} and isinstance(b["nodes"], str), b
    n += 1
assert n == want_nodes, (n, want_nodes)
PY
}

# NVL72-like: 5 leaves of 18 hosts, domains of 18; then domains of 22 (22,22,22,22,2: the last, under
# half the median domain, is left out).
"$bin" generate fat-tree --leaves 5 --hosts-per-leaf 18 --nvlink-domain-size 18 --json "$tmp/a.json" >/dev/null || exit 99
"$bin" convert "$tmp/a.json" --yaml "$tmp/a.yaml" || fail "convert --yaml"
check "$tmp/a.yaml" nvlink 18,36,72 5
"$bin" convert "$tmp/a.json" -f yaml | cmp -s - "$tmp/a.yaml" || fail "-f yaml differs from --yaml"
"$bin" generate fat-tree --leaves 5 --hosts-per-leaf 18 --nvlink-domain-size 22 --json "$tmp/b.json" >/dev/null || exit 99
"$bin" convert "$tmp/b.json" --yaml "$tmp/b.yaml" || fail "convert --yaml (short domain)"
check "$tmp/b.yaml" nvlink 22,44,88 4
grep -q '# Left out, domains smaller than the base block size: nvl4' "$tmp/b.yaml" || fail "short domain not noted"
"$bin" convert "$tmp/b.json" --yaml "$tmp/c.yaml" --block-sizes 2,8 || fail "--block-sizes"
check "$tmp/c.yaml" nvlink 2,8 5
"$bin" convert "$tmp/b.json" --yaml "$tmp/x.yaml" --block-sizes 10,30 2>"$tmp/err" && fail "accepted --block-sizes 10,30"
grep -q "not the base block size 10 times a power of two" "$tmp/err" || fail "--block-sizes 10,30: $(cat "$tmp/err")"
echo "ok: NVLink blocks, BlockSizes doubling up to what fits, short domain left out, --block-sizes"

# No domains: the leaf blocks of the block topology.conf, and the same tree.
"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --json "$tmp/p.json" >/dev/null || exit 99
"$bin" convert "$tmp/p.json" --yaml "$tmp/p.yaml" --block "$tmp/p.block" --tree "$tmp/p.tree" || fail "convert"
check "$tmp/p.yaml" leaves "$(sed -n 's/^BlockSizes=//p' "$tmp/p.block")" "$(grep -c '^BlockName=' "$tmp/p.block")"
python3 - "$tmp/p.yaml" "$tmp/p.tree" "$tmp/p.block" <<'PY' || fail "topology.yaml and topology.conf disagree"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
tree = [l.split() for l in open(sys.argv[2]) if l.startswith("SwitchName=")]
ytree = [s for s in doc[0]["tree"]["switches"]]
assert [t[0][11:] for t in tree] == [s["switch"] for s in ytree]
for t, s in zip(tree, ytree):
    kv = dict(w.split("=", 1) for w in t)
    assert kv.get("Nodes") == s.get("nodes") and kv.get("Switches") == s.get("children"), (kv, s)
blocks = [dict(w.split("=", 1) for w in l.split()) for l in open(sys.argv[3]) if l.startswith("BlockName=")]
assert [(b["BlockName"], b["Nodes"]) for b in blocks] == [(b["block"], b["nodes"]) for b in doc[1]["block"]["blocks"]]
PY
echo "ok: without domains, the tree and leaf blocks of topology.conf"

# Names YAML would misread unquoted (a leading '-', ':', '#', quotes, '!', '*', backslashes), as
# node descriptions can give them: read back as the same strings.
"$bin" generate fat-tree --leaves 2 --hosts-per-leaf 2 --ibnetdiscover "$tmp/q.ibnd" >/dev/null || exit 99
sed "s/\"n000\([0-9]\) /\"-x:#'\"!*\\\\\\\\\1 /" "$tmp/q.ibnd" >"$tmp/q2.ibnd"
"$bin" discover --ibnetdiscover "$tmp/q2.ibnd" -q --yaml "$tmp/q.yaml" --tree "$tmp/q.tree" --block "$tmp/q.block" ||
  fail "discover --yaml (odd names)"
check "$tmp/q.yaml" leaves "$(sed -n 's/^BlockSizes=//p' "$tmp/q.block")" 2
python3 - "$tmp/q.yaml" "$tmp/q.tree" <<'PY' || fail "quoted names do not read back: $(cat "$tmp/q.yaml")"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
tree = [dict(w.split("=", 1) for w in l.split()) for l in open(sys.argv[2]) if l.startswith("SwitchName=")]
leaves = [s["nodes"] for s in doc[0]["tree"]["switches"] if "nodes" in s]
assert leaves == [t["Nodes"] for t in tree if "Nodes" in t], (leaves, tree)
assert any(n.startswith("-x:#'\"!*\\") for n in leaves), leaves
PY
echo "ok: names with YAML syntax characters are quoted and read back unchanged"
