// SPDX-License-Identifier: GPL-2.0-or-later
// Unit tests of topoaware diff's core (corelib/topology_diff.hpp): generated fabrics, changed the
// way real fabrics change (a cable pulled, a cable trained down to fewer lanes, a host recabled to
// another leaf, a leaf switch gone), classified, then compared.
#include <algorithm>
#include <string>

#include "cmocka_cxx.hpp"
#include "generator.hpp"
#include "topology_diff.hpp"
#include "topology_json.hpp"

using namespace topoaware;

namespace {

// 4 leaves x 4 hosts, 2 spines, 2 cables from every leaf to every spine (4 uplinks per leaf).
Fabric base_fabric() {
  FatTreeSpec s;
  s.leaves = 4;
  s.hosts_per_leaf = 4;
  s.spines = 2;
  s.uplinks_per_leaf = 4;
  Fabric f = generate_fat_tree(s);
  f.finish();
  return f;
}

Topology classified(Fabric f) {
  Topology t = classify(f, ClassifyOptions{});
  to_json(t);  // the hash
  return t;
}

FabricNode &node(Fabric &f, const std::string &desc_prefix) {
  for (auto &n : f.nodes)
    if (n.desc.rfind(desc_prefix, 0) == 0) return n;
  throw std::runtime_error("no node " + desc_prefix);
}

// Both ends of the cable at (node, port): removed, or set to width x speed.
void cable(Fabric &f, FabricNode &a, int port, bool remove, int width = 0) {
  auto pa = std::find_if(a.ports.begin(), a.ports.end(), [&](const Port &p) { return p.num == port; });
  if (pa == a.ports.end()) throw std::runtime_error("no such port");
  const uint64_t rg = pa->remote_guid;
  const int rp = pa->remote_port;
  for (auto &n : f.nodes) {
    if (n.guid != rg) continue;
    auto pb = std::find_if(n.ports.begin(), n.ports.end(), [&](const Port &p) { return p.num == rp; });
    if (remove) n.ports.erase(pb);
    else pb->width = width;
  }
  if (remove) a.ports.erase(pa);
  else pa->width = width;
}

int uplink_port(const FabricNode &leaf, const Fabric &f) {
  for (const auto &p : leaf.ports)
    for (const auto &n : f.nodes)
      if (n.guid == p.remote_guid && n.type == NodeType::Switch) return p.num;
  throw std::runtime_error("no uplink");
}

std::string kinds(const TopologyDiff &d) {
  std::string s;
  for (const auto &c : d.changes) s += c.kind + "|" + c.subject + "|" + c.detail + "\n";
  return s;
}

void test_same(void **) {
  const Topology a = classified(base_fabric()), b = classified(base_fabric());
  const TopologyDiff d = diff_topologies(a, b);
  assert_true(d.same());
  assert_contains(diff_to_text(d, a, b, "old", "new"), "no change");
  assert_contains(diff_to_json(d, a, b, "old", "new"), "\"same\": true");
}

void test_cable_lost(void **) {
  Fabric f = base_fabric();
  FabricNode &leaf = node(f, "leaf001");
  cable(f, leaf, uplink_port(leaf, f), true);
  const TopologyDiff d = diff_topologies(classified(base_fabric()), classified(f));
  assert_int_equal(d.changes.size(), 1);
  assert_string_equal(d.changes[0].kind.c_str(), "cables-lost");
  assert_contains(d.changes[0].subject, "leaf001 <-> spine0");
  assert_contains(d.changes[0].detail, "1 of 2 cables gone (1 left)");
}

void test_cable_narrower(void **) {
  Fabric f = base_fabric();
  FabricNode &leaf = node(f, "leaf002");
  cable(f, leaf, uplink_port(leaf, f), false, 2);
  const TopologyDiff d = diff_topologies(classified(base_fabric()), classified(f));
  assert_int_equal(d.changes.size(), 1);
  assert_string_equal(d.changes[0].kind.c_str(), "link-slower");
  assert_contains(d.changes[0].subject, "leaf002 <-> spine0");
  assert_contains(d.changes[0].detail, "1 of 2 cables 4xHDR -> 2xHDR");
  // And back: faster.
  const TopologyDiff back = diff_topologies(classified(f), classified(base_fabric()));
  assert_int_equal(back.changes.size(), 1);
  assert_string_equal(back.changes[0].kind.c_str(), "link-faster");
}

void test_host_recabled(void **) {
  // n0001's cable moves from leaf001 to a free port of leaf003.
  Fabric f = base_fabric();
  FabricNode &host = node(f, "n0001 ");
  FabricNode &leaf3 = node(f, "leaf003");
  const int free_port = leaf3.nports;
  cable(f, host, host.ports.front().num, true);
  Port hp = {1, host.guid + 1, leaf3.guid, free_port, 4, LinkSpeed::HDR};
  host.ports.push_back(hp);
  leaf3.ports.push_back({free_port, leaf3.guid, host.guid, 1, 4, LinkSpeed::HDR});
  f.finish();
  const TopologyDiff d = diff_topologies(classified(base_fabric()), classified(f));
  const std::string all = kinds(d);
  assert_contains(all, "host-moved-leaf|n0001|1 host from leaf001 to leaf003");
  assert_contains(all, "host-moved-leaf-group|n0001|1 host from leaf group leaf001 to leaf003");
  for (const auto &c : d.changes) assert_true(c.kind.rfind("host-moved", 0) == 0);
}

void test_leaf_gone(void **) {
  // leaf004 and its hosts gone (a switch that is down takes its hosts out of the walk).
  Fabric f = base_fabric();
  const uint64_t gone = node(f, "leaf004").guid;
  std::vector<uint64_t> drop = {gone};
  for (const auto &p : node(f, "leaf004").ports) {
    const FabricNode *n = f.find(p.remote_guid);
    if (n && n->type == NodeType::Ca) drop.push_back(n->guid);
  }
  Fabric g;
  for (auto n : f.nodes) {
    if (std::find(drop.begin(), drop.end(), n.guid) != drop.end()) continue;
    n.ports.erase(std::remove_if(n.ports.begin(), n.ports.end(),
                                 [&](const Port &p) {
                                   return std::find(drop.begin(), drop.end(), p.remote_guid) != drop.end();
                                 }),
                  n.ports.end());
    g.add_node(n);
  }
  g.finish();
  const TopologyDiff d = diff_topologies(classified(base_fabric()), classified(g));
  const std::string all = kinds(d);
  assert_contains(all, "host-gone|n[0013-0016]|4 hosts");
  assert_contains(all, "switch-gone|leaf004|level 1 switch");
  assert_contains(all, "cables-lost|leaf004 <-> spine01|2 of 2 cables gone (0 left)");
  assert_contains(all, "shape|leaf groups|4 -> 3");
  // The text lists every change, one per line, printable.
  const std::string text = diff_to_text(d, classified(base_fabric()), classified(g), "a", "b");
  assert_contains(text, std::to_string(d.changes.size()) + " changes:");
}

void test_other_details(void **) {
  // An anomaly only (no structural change): still not "the same", since the hash differs.
  Topology a = classified(base_fabric()), b = a;
  b.anomalies.push_back({"test", "leaf001", "a detail"});
  to_json(b);
  const TopologyDiff d = diff_topologies(a, b);
  assert_int_equal(d.changes.size(), 1);
  assert_string_equal(d.changes[0].kind.c_str(), "other");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same),          cmocka_unit_test(test_cable_lost), cmocka_unit_test(test_cable_narrower),
      cmocka_unit_test(test_host_recabled), cmocka_unit_test(test_leaf_gone),  cmocka_unit_test(test_other_details),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
