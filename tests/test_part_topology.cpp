// SPDX-License-Identifier: GPL-2.0-or-later
// Unit tests of the partition rule (corelib/part_topology.hpp): which of topoaware's levels apply to
// a partition from the kind of Slurm topology it uses, and the disagreements with topology.json.
#include <string>

#include "cmocka_cxx.hpp"
#include "part_topology.hpp"

using namespace topoaware;

namespace {

// n01..n08 under two leaves (leaf groups n01-n04 and n05-n08); with `domains`, NVLink domains of
// two hosts each.
Topology eight(bool domains) {
  Topology t;
  for (int i = 1; i <= 8; i++) {
    Host h;
    h.name = std::string("n0") + std::to_string(i);
    h.leaf_group = i <= 4 ? 0 : 1;
    h.leaf = h.leaf_group;
    h.nvlink_domain = domains ? (i - 1) / 2 : -1;
    t.hosts.push_back(h);
  }
  for (int g = 0; g < 2; g++) {
    Switch s;
    s.name = "leaf" + std::to_string(g + 1);
    s.level = 1;
    s.leaf_group = g;
    for (int k = 0; k < 4; k++) s.hosts.push_back(4 * g + k);
    t.switches.push_back(s);
    LeafGroup lg;
    lg.leaves = {g};
    lg.hosts = s.hosts;
    t.leaf_groups.push_back(lg);
  }
  if (domains)
    for (int d = 0; d < 4; d++) {
      NvlinkDomain nd;
      nd.clique_id = static_cast<uint32_t>(d);
      nd.gpus_per_node = 4;
      nd.hosts = {2 * d, 2 * d + 1};
      t.nvlink_domains.push_back(nd);
    }
  return t;
}

SlurmTopo slurm(SlurmTopoKind kind, std::vector<SlurmTopoRecord> recs, const std::string &name = "fabric") {
  SlurmTopo s;
  s.name = name;
  s.kind = kind;
  s.records = std::move(recs);
  return s;
}

PartitionTopoVerdict decide(const Topology &t, const SlurmTopo &s, const std::string &nodes = "n[01-08]") {
  return decide_partition_topology(t, {"p", nodes, &s});
}

std::string all(const PartitionTopoVerdict &v) {
  std::string s;
  for (const auto &d : v.disagreements) s += d + "\n";
  return s;
}

void test_tree_agrees(void **) {
  const auto s = slurm(SlurmTopoKind::Tree, {{"leaf001", "n[01-04]", 0, false, 0},
                                             {"leaf002", "n[05-08]", 0, false, 0},
                                             {"spine", "n[01-08]", 1, false, 0}});
  const auto v = decide(eight(false), s);
  assert_true(v.use == PartitionTopoUse::Place);
  assert_contains(v.rule, "tree: placed by topology.json");
  assert_int_equal(v.disagreements.size(), 0);
}

void test_tree_disagrees(void **) {
  // n04 hangs under Slurm's second switch: that switch mixes two leaf groups, and the first leaf
  // group is split over two switches.
  const auto s = slurm(SlurmTopoKind::Tree, {{"s1", "n[01-03]", 0, false, 0}, {"s2", "n[04-08]", 0, false, 0}});
  const auto v = decide(eight(false), s);
  assert_true(v.use == PartitionTopoUse::Place);
  assert_int_equal(v.disagreements.size(), 2);
  assert_contains(all(v), "1 Slurm switch holds hosts of several topology.json leaf groups (s2)");
  assert_contains(all(v), "1 topology.json leaf group is split over several Slurm switches (leaves leaf1)");
}

void test_block_agrees(void **) {
  const auto s = slurm(SlurmTopoKind::Block, {{"b1", "n[01-02]", 0, false, 2},
                                              {"b2", "n[03-04]", 0, false, 2},
                                              {"b3", "n[05-06]", 0, false, 2},
                                              {"b4", "n[07-08]", 0, false, 2},
                                              {"b1-4", "n[01-08]", 0, true, 8}},
                       "nvlink");
  const auto v = decide(eight(true), s);
  assert_true(v.use == PartitionTopoUse::Place);
  assert_contains(v.rule, "block:");
  assert_contains(v.rule, "keeps the job inside them");
  assert_int_equal(v.disagreements.size(), 0);
  // Without NVLink domains the units are the leaf groups: blocks of 4 as the leaves agree.
  const auto leaves = slurm(SlurmTopoKind::Block, {{"b1", "n[01-04]", 0, false, 4}, {"b2", "n[05-08]", 0, false, 4}});
  assert_int_equal(decide(eight(false), leaves).disagreements.size(), 0);
}

void test_block_disagrees(void **) {
  // Base blocks of 4 over NVLink domains of 2; one of them straddles the leaves too.
  const auto s = slurm(SlurmTopoKind::Block, {{"b1", "n[01-04]", 0, false, 4}, {"b2", "n[05-08]", 0, false, 4}});
  const auto v = decide(eight(true), s);
  assert_true(v.use == PartitionTopoUse::Place);
  assert_contains(all(v), "2 base blocks span several topology.json NVLink domains (b[1-2])");
  assert_contains(all(v), "base blocks hold 4 nodes, topology.json's NVLink domains 2");
  const auto odd = slurm(SlurmTopoKind::Block, {{"b1", "n[01-03]", 0, false, 3}, {"b2", "n[04-08]", 0, false, 5}});
  const auto w = decide(eight(false), odd);
  assert_contains(all(w), "1 base block spans several topology.json leaf groups (b2)");
  assert_contains(all(w), "base blocks of several sizes");
}

void test_flat(void **) {
  SlurmTopo s = slurm(SlurmTopoKind::Flat, {}, "none");
  assert_true(decide(eight(false), s).use == PartitionTopoUse::Plain);
  // The cluster's default and only topology, flat: Slurm knows none, topology.json decides.
  s.name = "";
  s.cluster_default = true;
  s.only_one = true;
  const auto v = decide(eight(false), s);
  assert_true(v.use == PartitionTopoUse::Place);
  assert_contains(v.rule, "Slurm has no topology");
  // The default, but other partitions name topologies: this one asked for none.
  s.only_one = false;
  assert_true(decide(eight(false), s).use == PartitionTopoUse::Plain);
}

void test_ring_torus(void **) {
  for (auto k : {SlurmTopoKind::Ring, SlurmTopoKind::Torus}) {
    const auto v = decide(eight(false), slurm(k, {}));
    assert_true(v.use == PartitionTopoUse::Plain);
    assert_contains(v.rule, slurm_topo_kind_name(k));
  }
}

void test_unknown_and_failed(void **) {
  // Today's behaviour, said once.
  auto v = decide(eight(false), slurm(SlurmTopoKind::Unknown, {}));
  assert_true(v.use == PartitionTopoUse::Place);
  assert_contains(v.rule, "does not know");
  SlurmTopo s = slurm(SlurmTopoKind::Block, {});
  s.lookup_error = "Requested topology configuration is not available";
  v = decide(eight(false), s);
  assert_true(v.use == PartitionTopoUse::Place);
  assert_contains(v.rule, "cannot be read (Requested topology");
  v = decide_partition_topology(eight(false), {"p", "n[01-08]", nullptr});
  assert_true(v.use == PartitionTopoUse::Place);
  assert_contains(v.rule, "cannot be read (none)");
}

void test_nodes_missing(void **) {
  const auto tree = slurm(SlurmTopoKind::Tree, {{"leaf1", "n[01-04]", 0, false, 0}, {"leaf2", "n[05-08]", 0, false, 0}});
  // None of the partition's nodes: plain cons_tres, whatever the Slurm topology.
  auto v = decide(eight(false), tree, "gpu[1-4]");
  assert_true(v.use == PartitionTopoUse::Plain);
  assert_contains(v.rule, "none of its 4 nodes are in topology.json");
  // Some: placed, and the missing ones named.
  v = decide(eight(false), tree, "n[01-08],x[1-2]");
  assert_true(v.use == PartitionTopoUse::Place);
  assert_contains(all(v), "2 of its 10 nodes are not in topology.json (x[1-2])");
  // A Slurm topology of other hosts altogether.
  const auto other = slurm(SlurmTopoKind::Block, {{"b1", "x[1-4]", 0, false, 4}});
  v = decide(eight(false), other);
  assert_true(v.use == PartitionTopoUse::Plain);
  assert_contains(v.rule, "none of the Slurm topology's hosts");
  // A host list that does not parse is a note, never an exception.
  v = decide(eight(false), tree, "n[01-");
  assert_contains(all(v), "unreadable host list");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tree_agrees),  cmocka_unit_test(test_tree_disagrees),
      cmocka_unit_test(test_block_agrees), cmocka_unit_test(test_block_disagrees),
      cmocka_unit_test(test_flat),         cmocka_unit_test(test_ring_torus),
      cmocka_unit_test(test_unknown_and_failed), cmocka_unit_test(test_nodes_missing),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
