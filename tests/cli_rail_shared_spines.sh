#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A rail-optimized fabric whose rails meet at shared spines (generate rail --spines: one subnet),
# read back from its ibnetdiscover dump: the classifier finds the same rails, scalable units (leaf
# groups), levels and oversubscription as with a subnet per rail, one connected fabric, and plan
# places jobs on whole units; --spines and --spines-per-rail exclude each other.
set -u
bin="$top_builddir/topoaware"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }

# 4 rails, 4 units of 8 hosts, 4 uplinks per leaf over 4 shared spines (2:1), cabled out of name order.
gen=(rail --rails 4 --units 4 --hosts-per-unit 8 --uplinks 4 --spines 4 --shuffle-cabling 3)
"$bin" generate "${gen[@]}" --ibnetdiscover "$tmp/dump" --json "$tmp/expected.json" --net "$tmp/net" || exit 99
"$bin" discover --quiet --ibnetdiscover "$tmp/dump" --json "$tmp/t.json" || { bad "discover --ibnetdiscover"; exit 1; }
"$bin" convert "$tmp/t.json" --json "$tmp/converted.json" || bad "convert"

if python3 - "$tmp/t.json" "$tmp/expected.json" "$tmp/converted.json" <<'EOF'; then ok "classified: 4 rails, 4 units of 4 leaves, 4 spines, one pod, 2:1, one subnet"; else bad "classification"; fi
import json, sys
t = json.load(open(sys.argv[1]))
assert t == json.load(open(sys.argv[2])), "the dump reads back as something else than generate's topology.json"
assert t == json.load(open(sys.argv[3])), "convert changed the topology"
assert t["rail_optimized"] and t["max_level"] == 2, (t["rail_optimized"], t["max_level"])
assert t["anomalies"] == [], t["anomalies"]  # no disconnected-parts: one subnet
sw = {s["guid"]: s for s in t["switches"]}
spines = [s for s in t["switches"] if s["level"] == 2]
assert len(spines) == 4 and len([s for s in t["switches"] if s["level"] == 1]) == 16
assert len(t["leaf_groups"]) == 4 and all(len(g["leaves"]) == 4 and g["nhosts"] == 8 for g in t["leaf_groups"])
assert len(t["pods"]) == 1, t["pods"]
lv = t["levels"][0]
assert lv["oversubscription"]["min"] == lv["oversubscription"]["max"] == 2.0, lv
# Rail r of every host is the same rail leaf of its unit: the r-th leaf of the group, the one
# whose description says rail r+1 (descriptions are checked, not used by the classifier).
leaf_of_port = {}
for l in t["links"]:
    for a, b in ((l["a"], l["b"]), (l["b"], l["a"])):
        if a in sw:
            leaf_of_port[b] = a
for h in t["hosts"]:
    rails = sorted(p["rail"] for p in h["ports"])
    assert rails == [0, 1, 2, 3], (h["name"], rails)
    g = t["leaf_groups"][h["leaf_group"]]
    for p in h["ports"]:
        leaf = leaf_of_port[p["ca_guid"]] if p["ca_guid"] in leaf_of_port else None
        assert leaf in g["leaves"], (h["name"], p)
        assert sw[leaf]["desc"].endswith("-rail%d-leaf" % (p["rail"] + 1)), (h["name"], p, sw[leaf]["desc"])
# Every leaf reaches every spine: rails meet there.
up = {}
for l in t["links"]:
    a, b = sw.get(l["a"]), sw.get(l["b"])
    if a and b:
        leaf, spine = (a, b) if a["level"] == 1 else (b, a)
        up.setdefault(leaf["guid"], set()).add(spine["guid"])
assert all(len(v) == 4 for v in up.values()) and len(up) == 16, up
EOF

out=$("$bin" convert "$tmp/t.json" -f summary)
grep -q "^  Levels:    2$" <<<"$out" && grep -q "^  Rail-optimized: yes$" <<<"$out" &&
  grep -q "^Leaf groups: 4 (hosts per group: 8; leaves per group: 4)$" <<<"$out" &&
  grep -q "^Pods: 1 (leaf groups per pod: 4; upper switches per pod: 4)$" <<<"$out" &&
  grep -q "^Anomalies: none$" <<<"$out" && ok "summary" || bad "summary: $out"

# The same fabric with a subnet per rail: the same units, but each leaf reaches its rail's spine only.
"$bin" generate rail --rails 4 --units 4 --hosts-per-unit 8 --uplinks 4 --spines-per-rail 1 --json "$tmp/planes.json" ||
  exit 99
python3 - "$tmp/t.json" "$tmp/planes.json" <<'EOF' && ok "a subnet per rail: same units, a spine per rail" || bad "subnet per rail"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert [g["hosts"] for g in a["leaf_groups"]] == [g["hosts"] for g in b["leaf_groups"]]
sw = {s["guid"]: s for s in b["switches"]}
up = {}
for l in b["links"]:
    if l["a"] in sw and l["b"] in sw:
        leaf, spine = (l["a"], l["b"]) if sw[l["a"]]["level"] == 1 else (l["b"], l["a"])
        up.setdefault(leaf, set()).add(spine)
assert len(up) == 16 and all(len(v) == 1 for v in up.values()), up
EOF

# Placement: a job of one unit takes a whole free unit; two units' worth takes two whole units;
# with a unit partly busy, the job of one unit goes to a free one.
plan() { "$bin" plan --topology "$tmp/t.json" "$@"; }
out=$(plan --tp 8 --dp 8)
grep -q "^Placement: ideal" <<<"$out" && grep -q "^Nodes: n\[0001-0008\]" <<<"$out" &&
  ok "8 nodes on one unit" || bad "one unit: $out"
out=$(plan --tp 8 --pp 2 --dp 8)
grep -q "^Placement: ideal" <<<"$out" && grep -q "^Nodes: n\[0001-0016\]" <<<"$out" &&
  grep -q "^Span: 2 leaf groups, 1 pods" <<<"$out" && ok "16 nodes on two units" || bad "two units: $out"
out=$(plan --tp 8 --pp 2 --dp 4 --busy 'n[0001-0003]')
grep -q "^Nodes: n\[0009-0016\]" <<<"$out" && grep -q "DP rings at ideal 16/16, PP chains at ideal 32/32" <<<"$out" &&
  ok "a partly busy unit is skipped for a whole one" || bad "busy unit: $out"

# The two spine options exclude each other; a shared-spine count that does not divide the uplinks is refused.
"$bin" generate rail --spines 4 --spines-per-rail 2 >/dev/null 2>&1 && bad "--spines with --spines-per-rail accepted" ||
  ok "--spines excludes --spines-per-rail"
err=$("$bin" generate rail --rails 2 --units 2 --hosts-per-unit 4 --uplinks 6 --spines 4 --json "$tmp/x.json" 2>&1) &&
  bad "6 uplinks over 4 spines accepted" ||
  { grep -q "must be a multiple of shared_spines (4)" <<<"$err" && ok "uplinks not a multiple of --spines refused" ||
      bad "uplinks/spines message: $err"; }

err=$("$bin" generate rail --spines 0 --json "$tmp/x.json" 2>&1) && bad "--spines 0 accepted" ||
  { grep -q -- "--spines must be a positive number" <<<"$err" && ok "--spines 0 refused" || bad "--spines 0: $err"; }

[ $fails -eq 0 ] || exit 1
echo "all rail shared-spine checks passed"
