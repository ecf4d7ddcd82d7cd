// SPDX-License-Identifier: GPL-2.0-or-later
// Unit tests of the fabric generators and of the ibsim / ibnetdiscover writers.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cmocka_cxx.hpp"
#include "fabric_diff.hpp"
#include "generator.hpp"
#include "ibnetdiscover_parser.hpp"
#include "topology.hpp"

using namespace topoaware;

namespace {

struct Counts {
  size_t switches = 0, cas = 0, cables = 0, ports_used = 0;
};

Counts count(const Fabric &f) {
  Counts c;
  for (const auto &n : f.nodes) {
    (n.type == NodeType::Switch ? c.switches : c.cas)++;
    c.ports_used += n.ports.size();
  }
  c.cables = c.ports_used / 2;
  return c;
}

const FabricNode *by_desc(const Fabric &f, const std::string &desc) {
  for (const auto &n : f.nodes)
    if (n.desc == desc) return &n;
  return nullptr;
}

// Cables between two nodes.
int cables(const Fabric &f, const std::string &a, const std::string &b) {
  const FabricNode *na = by_desc(f, a), *nb = by_desc(f, b);
  if (!na || !nb) return -1;
  return static_cast<int>(
      std::count_if(na->ports.begin(), na->ports.end(), [&](const Port &p) { return p.remote_guid == nb->guid; }));
}

// Ports of a switch that lead to switches / to CAs.
std::pair<int, int> down_up(const Fabric &f, const FabricNode &sw,
                            const std::function<bool(const FabricNode &)> &is_up) {
  int down = 0, up = 0;
  for (const auto &p : sw.ports) {
    const FabricNode *peer = f.find(p.remote_guid);
    assert_non_null(peer);
    (is_up(*peer) ? up : down)++;
  }
  return {down, up};
}

bool starts(const std::string &s, const std::string &prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Structural invariants every generated fabric must satisfy.
void check_invariants(const Fabric &f) {
  assert_true(f.problems.empty());
  std::set<uint64_t> guids;
  for (const auto &n : f.nodes) {
    assert_true(guids.insert(n.guid).second);  // node GUIDs unique
    assert_true(n.nports >= 1 && n.nports <= 254);
    assert_false(n.desc.empty());
    assert_true(n.desc.size() <= 63);
    int last = 0;
    for (const auto &p : n.ports) {
      assert_true(p.num > last);  // sorted, no duplicate port numbers
      last = p.num;
      assert_true(p.num >= 1 && p.num <= n.nports);
      if (n.type == NodeType::Switch) {
        assert_true(p.port_guid == n.guid);
      } else {
        assert_true(p.port_guid == n.guid + static_cast<uint64_t>(p.num));
        assert_true(guids.insert(p.port_guid).second);  // CA port GUIDs unique against everything
      }
      // The other end exists and points back, with the same width and speed.
      const FabricNode *peer = f.find(p.remote_guid);
      assert_non_null(peer);
      assert_true(peer != &n);
      auto back =
          std::find_if(peer->ports.begin(), peer->ports.end(), [&](const Port &q) { return q.num == p.remote_port; });
      assert_true(back != peer->ports.end());
      assert_true(back->remote_guid == n.guid);
      assert_int_equal(back->remote_port, p.num);
      assert_int_equal(back->width, p.width);
      assert_true(back->speed == p.speed);
      // CAs only hang off switches.
      if (n.type == NodeType::Ca) assert_true(peer->type == NodeType::Switch);
    }
  }
  // Switch node GUIDs vs CA port GUIDs may not collide either.
  for (const auto &n : f.nodes)
    if (n.type == NodeType::Ca)
      for (const auto &p : n.ports) assert_true(f.find(p.port_guid) == nullptr);
}

void check_deterministic(const std::function<Fabric()> &gen) {
  Fabric a = gen(), b = gen();
  assert_true(fabric_diff(a, b).empty());
  assert_true(to_ibnetdiscover_text(a) == to_ibnetdiscover_text(b));
  // Same order too (byte-identical outputs downstream depend on it).
  assert_int_equal(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) assert_true(a.nodes[i].guid == b.nodes[i].guid);
}

void print_diffs(const std::vector<std::string> &d) {
  for (const auto &s : d) print_error("  %s\n", s.c_str());
}

// Text -> parser -> the same Fabric.
void check_round_trip(const Fabric &f, const std::string &text) {
  std::istringstream in(text);
  Fabric back = parse_ibnetdiscover(in, "generated");
  back.finish();
  auto d = fabric_diff(f, back);
  print_diffs(d);
  assert_true(d.empty());
}

void expect_invalid(const std::function<void()> &fn, const std::string &needle) {
  try {
    fn();
  } catch (const std::invalid_argument &e) {
    if (std::string(e.what()).find(needle) == std::string::npos) {
      print_error("message \"%s\" does not mention \"%s\"\n", e.what(), needle.c_str());
      fail();
    }
    return;
  }
  print_error("no std::invalid_argument for a spec that should mention \"%s\"\n", needle.c_str());
  fail();
}

FatTreeSpec ft2() {
  FatTreeSpec s;
  s.leaves = 4, s.hosts_per_leaf = 8, s.uplinks_per_leaf = 8, s.spines = 4;
  return s;
}

FatTreeSpec ft3_1to7() {
  FatTreeSpec s;
  s.levels = 3, s.leaves = 14, s.leaves_per_pod = 7, s.hosts_per_leaf = 8, s.uplinks_per_leaf = 8, s.spines = 2;
  s.cores = 4, s.core_uplinks_per_spine = 4;
  return s;
}

RailSpec rail2() {
  RailSpec s;
  s.rails = 2, s.units = 2, s.hosts_per_unit = 8, s.spines_per_rail = 2, s.uplinks_per_leaf = 8;
  return s;
}

DragonflySpec dfly(int groups, int routers, int hosts, int global) {
  DragonflySpec s;
  s.groups = groups, s.routers_per_group = routers, s.hosts_per_router = hosts, s.global_links_per_router = global;
  return s;
}

// ---------------------------------------------------------------------------------------------

void test_fat_tree_two_level(void **) {
  Fabric f = generate_fat_tree(ft2());
  check_invariants(f);
  Counts c = count(f);
  assert_int_equal(c.cas, 32);
  assert_int_equal(c.switches, 8);
  assert_int_equal(c.cables, 32 + 4 * 8);
  assert_int_equal(c.ports_used, 2 * 64);
  // Names: Slurm-style, zero-padded, the first word of the CA description is the host.
  assert_non_null(by_desc(f, "n0001 mlx5_0"));
  assert_non_null(by_desc(f, "n0032 mlx5_0"));
  assert_null(by_desc(f, "n0033 mlx5_0"));
  assert_non_null(by_desc(f, "leaf001"));
  assert_non_null(by_desc(f, "leaf004"));
  assert_non_null(by_desc(f, "spine01"));
  assert_non_null(by_desc(f, "spine04"));
  // The first node is a host CA: ibsim attaches its local port to the first node of a net file.
  assert_true(f.nodes.front().type == NodeType::Ca);
  // Hosts 1-8 on leaf001 in port order; leaf-spine: 8 uplinks over 4 spines = 2 cables each.
  const FabricNode *leaf1 = by_desc(f, "leaf001");
  assert_int_equal(leaf1->nports, 36);  // smallest standard radix that fits 16 ports
  assert_true(f.find(leaf1->ports[0].remote_guid)->desc == "n0001 mlx5_0");
  assert_true(f.find(leaf1->ports[7].remote_guid)->desc == "n0008 mlx5_0");
  for (const char *leaf : {"leaf001", "leaf002", "leaf003", "leaf004"})
    for (const char *spine : {"spine01", "spine02", "spine03", "spine04"}) assert_int_equal(cables(f, leaf, spine), 2);
  for (const auto &n : f.nodes)
    for (const auto &p : n.ports) {
      assert_int_equal(p.width, 4);
      assert_true(p.speed == LinkSpeed::HDR);
    }
  check_deterministic([] { return generate_fat_tree(ft2()); });
}

void test_fat_tree_oversubscribed(void **) {
  FatTreeSpec s;
  s.leaves = 6, s.hosts_per_leaf = 8, s.uplinks_per_leaf = 4, s.spines = 2, s.speed = "EDR", s.width = 12;
  Fabric f = generate_fat_tree(s);
  check_invariants(f);
  Counts c = count(f);
  assert_int_equal(c.cas, 48);
  assert_int_equal(c.switches, 8);
  assert_int_equal(c.cables, 48 + 6 * 4);
  auto is_switch = [](const FabricNode &n) { return n.type == NodeType::Switch; };
  for (const auto &n : f.nodes) {
    if (!starts(n.desc, "leaf")) continue;
    auto [down, up] = down_up(f, n, is_switch);
    assert_int_equal(down, 8);
    assert_int_equal(up, 4);  // 2:1
  }
  assert_int_equal(cables(f, "leaf006", "spine02"), 2);
  assert_int_equal(by_desc(f, "spine01")->ports.size(), 12);
  assert_true(f.nodes.front().ports.front().speed == LinkSpeed::EDR);
  assert_int_equal(f.nodes.front().ports.front().width, 12);
  // Two HCAs per host on the same leaf, side by side.
  FatTreeSpec m = ft2();
  m.hcas_per_host = 2, m.hosts_per_leaf = 4;
  Fabric g = generate_fat_tree(m);
  check_invariants(g);
  assert_int_equal(count(g).cas, 32);
  const FabricNode *leaf1 = by_desc(g, "leaf001");
  assert_true(g.find(leaf1->ports[0].remote_guid)->desc == "n0001 mlx5_0");
  assert_true(g.find(leaf1->ports[1].remote_guid)->desc == "n0001 mlx5_1");
  assert_true(g.find(leaf1->ports[2].remote_guid)->desc == "n0002 mlx5_0");
}

void test_fat_tree_three_level(void **) {
  Fabric f = generate_fat_tree(ft3_1to7());
  check_invariants(f);
  Counts c = count(f);
  assert_int_equal(c.cas, 14 * 8);
  assert_int_equal(c.switches, 14 + 2 * 2 + 4);
  assert_int_equal(c.cables, 112 + 14 * 8 + 4 * 4);
  // Pods: leaves 1-7 only reach spines 1-2, leaves 8-14 only spines 3-4, 4 cables per pair.
  assert_int_equal(cables(f, "leaf001", "spine01"), 4);
  assert_int_equal(cables(f, "leaf007", "spine02"), 4);
  assert_int_equal(cables(f, "leaf001", "spine03"), 0);
  assert_int_equal(cables(f, "leaf008", "spine03"), 4);
  assert_int_equal(cables(f, "leaf014", "spine04"), 4);
  // Above the pods: each spine has 28 down and 4 up = 7:1; one cable to each core.
  auto is_core = [](const FabricNode &n) { return starts(n.desc, "core"); };
  for (const char *sp : {"spine01", "spine02", "spine03", "spine04"}) {
    auto [down, up] = down_up(f, *by_desc(f, sp), is_core);
    assert_int_equal(down, 28);
    assert_int_equal(up, 4);
    for (const char *core : {"core01", "core02", "core03", "core04"}) assert_int_equal(cables(f, sp, core), 1);
  }
  assert_int_equal(by_desc(f, "core01")->ports.size(), 4);
  for (const auto &n : f.nodes)
    assert_int_equal(n.type == NodeType::Switch ? n.nports : 1, n.type == NodeType::Switch ? 36 : 1);

  // Fewer core uplinks than cores: spines cover the cores in planes.
  FatTreeSpec p = ft3_1to7();
  p.cores = 4, p.core_uplinks_per_spine = 2;
  Fabric g = generate_fat_tree(p);
  check_invariants(g);
  assert_int_equal(cables(g, "spine01", "core01"), 1);
  assert_int_equal(cables(g, "spine01", "core02"), 1);
  assert_int_equal(cables(g, "spine01", "core03"), 0);
  assert_int_equal(cables(g, "spine02", "core03"), 1);
  for (const char *core : {"core01", "core02", "core03", "core04"}) assert_int_equal(by_desc(g, core)->ports.size(), 2);
  check_deterministic([] { return generate_fat_tree(ft3_1to7()); });
}

void test_radix(void **) {
  FatTreeSpec s;  // defaults: 16 leaves x 32 hosts, 32 uplinks, 8 spines -> 64-port leaves
  Fabric f = generate_fat_tree(s);
  check_invariants(f);
  assert_int_equal(by_desc(f, "leaf001")->nports, 64);
  assert_int_equal(by_desc(f, "spine08")->ports.size(), 64);
  s.leaves = 4, s.hosts_per_leaf = 18, s.uplinks_per_leaf = 20, s.spines = 4;  // 38 ports -> 40
  assert_int_equal(by_desc(generate_fat_tree(s), "leaf001")->nports, 40);
  s.radix = 48;
  Fabric g = generate_fat_tree(s);
  for (const auto &n : g.nodes)
    if (n.type == NodeType::Switch) assert_int_equal(n.nports, 48);
  // One leaf, no uplinks: a one-switch fabric, no orphan spines.
  FatTreeSpec one;
  one.leaves = 1, one.hosts_per_leaf = 12, one.uplinks_per_leaf = 0;
  Fabric o = generate_fat_tree(one);
  check_invariants(o);
  assert_int_equal(count(o).switches, 1);
  assert_int_equal(count(o).cas, 12);
  one.leaves = 2;
  expect_invalid([&] { generate_fat_tree(one); }, "uplinks_per_leaf must be a positive number");
  s.radix = 37;
  expect_invalid([&] { generate_fat_tree(s); }, "radix 37 is too small");
  s.radix = 300;
  expect_invalid([&] { generate_fat_tree(s); }, "radix");
}

void test_rail(void **) {
  Fabric f = generate_rail(rail2());
  check_invariants(f);
  Counts c = count(f);
  assert_int_equal(c.cas, 2 * 16);
  assert_int_equal(c.switches, 4 + 4);
  assert_int_equal(c.cables, 32 + 4 * 8);
  // HCA r of every host of unit u on leaf (u, r).
  for (int h = 1; h <= 16; ++h) {
    char host[16];
    std::snprintf(host, sizeof host, "n%04d", h);
    const int su = h <= 8 ? 1 : 2;
    for (int r = 0; r < 2; ++r) {
      const FabricNode *ca = by_desc(f, std::string(host) + " mlx5_" + std::to_string(r));
      assert_non_null(ca);
      const FabricNode *leaf = f.find(ca->ports[0].remote_guid);
      assert_string_equal(leaf->desc.c_str(),
                          ("su" + std::to_string(su) + "-rail" + std::to_string(r + 1) + "-leaf").c_str());
    }
  }
  // Rail r's leaves reach only rail r's spines, 4 cables per pair.
  assert_int_equal(cables(f, "su1-rail1-leaf", "rail1-spine01"), 4);
  assert_int_equal(cables(f, "su2-rail1-leaf", "rail1-spine02"), 4);
  assert_int_equal(cables(f, "su1-rail1-leaf", "rail2-spine01"), 0);
  assert_int_equal(cables(f, "su2-rail2-leaf", "rail2-spine02"), 4);

  RailSpec big;  // SuperPOD-like default: 8 rails x 4 SUs x 32 hosts, 32 uplinks over 4 spines
  Fabric g = generate_rail(big);
  check_invariants(g);
  Counts cg = count(g);
  assert_int_equal(cg.cas, 8 * 128);
  assert_int_equal(cg.switches, 32 + 32);
  assert_int_equal(by_desc(g, "su4-rail8-leaf")->ports.size(), 64);
  assert_int_equal(by_desc(g, "rail8-spine04")->ports.size(), 32);
  assert_non_null(by_desc(g, "n0128 mlx5_7"));
  check_deterministic([] { return generate_rail(rail2()); });
}

// Spines shared by all rails (one subnet): every rail leaf spreads its uplinks over every spine,
// spine ports in (unit, rail) order; hosts stay on their rails' leaves as with a subnet per rail.
void test_rail_shared_spines(void **) {
  RailSpec s = rail2();
  s.shared_spines = 4;
  Fabric f = generate_rail(s);
  check_invariants(f);
  Counts c = count(f);
  assert_int_equal(c.cas, 2 * 16);
  assert_int_equal(c.switches, 4 + 4);
  assert_int_equal(c.cables, 32 + 4 * 8);
  assert_null(by_desc(f, "rail1-spine01"));
  for (const char *leaf : {"su1-rail1-leaf", "su1-rail2-leaf", "su2-rail1-leaf", "su2-rail2-leaf"})
    for (const char *spine : {"spine01", "spine02", "spine03", "spine04"}) assert_int_equal(cables(f, leaf, spine), 2);
  const FabricNode *leaf = f.find(by_desc(f, "n0009 mlx5_1")->ports[0].remote_guid);
  assert_string_equal(leaf->desc.c_str(), "su2-rail2-leaf");
  // Spine ports: leaf (unit u, rail r) on ports (u*R + r)*2 + 1 and + 2.
  const FabricNode *spine = by_desc(f, "spine03");
  for (const auto &p : spine->ports) {
    const FabricNode *peer = f.find(p.remote_guid);
    const int index = (peer->desc[2] - '1') * 2 + (peer->desc[8] - '1');
    assert_true(p.num == index * 2 + 1 || p.num == index * 2 + 2);
  }
  Topology t = classify(f, ClassifyOptions());
  assert_true(t.rail_optimized);
  assert_int_equal(t.max_level, 2);
  assert_int_equal(t.leaf_groups.size(), 2);
  assert_int_equal(t.pods.size(), 1);
  assert_true(t.anomalies.empty());
  // Radix: a shared spine takes every rail's leaves (4 units x 8 rails x 2 cables = 64 ports).
  RailSpec big;
  big.shared_spines = 16;
  Fabric g = generate_rail(big);
  check_invariants(g);
  assert_int_equal(count(g).switches, 32 + 16);
  assert_int_equal(by_desc(g, "spine16")->ports.size(), 4 * 8 * 2);
  assert_int_equal(by_desc(g, "spine16")->nports, 64);
  check_round_trip(f, to_ibnetdiscover_text(f));
  check_deterministic([s] { return generate_rail(s); });
  s.uplinks_per_leaf = 6;
  expect_invalid([s] { generate_rail(s); }, "uplinks_per_leaf (6) must be a multiple of shared_spines (4)");
  s = rail2();
  s.shared_spines = -1;
  expect_invalid([s] { generate_rail(s); }, "shared_spines must not be negative");
  s.shared_spines = 64, s.units = 4, s.rails = 8, s.uplinks_per_leaf = 64;  // 4*8*1 = 32 ports: fine
  generate_rail(s);
  s.units = 40;  // 320 leaves on every spine: no switch has that many ports
  expect_invalid([s] { generate_rail(s); }, "more than an InfiniBand switch can have");
}

// Links between groups, by group pair, for a dragonfly whose switches are "grpGG-swRR".
std::map<std::pair<int, int>, int> group_links(const Fabric &f) {
  std::map<std::pair<int, int>, int> m;
  for (const auto &n : f.nodes) {
    if (n.type != NodeType::Switch) continue;
    int g = std::stoi(n.desc.substr(3, n.desc.find('-') - 3));
    for (const auto &p : n.ports) {
      const FabricNode *peer = f.find(p.remote_guid);
      if (peer->type != NodeType::Switch) continue;
      int h = std::stoi(peer->desc.substr(3, peer->desc.find('-') - 3));
      if (g < h) m[{g, h}]++;
    }
  }
  return m;
}

void test_dragonfly(void **) {
  Fabric f = generate_dragonfly(dfly(5, 2, 2, 2));
  check_invariants(f);
  Counts c = count(f);
  assert_int_equal(c.cas, 20);
  assert_int_equal(c.switches, 10);
  assert_int_equal(c.cables, 20 + 5 * 1 + 10);  // hosts, one local link per group, 5*2*2/2 global
  auto gl = group_links(f);
  assert_int_equal(gl.size(), 10);  // every pair of the 5 groups
  for (const auto &[pair, n] : gl) assert_int_equal(n, 1);
  // Every router uses its 2 global ports: global links spread over the routers.
  for (const auto &n : f.nodes)
    if (n.type == NodeType::Switch) assert_int_equal(n.ports.size(), 2 + 1 + 2);

  // The default spec is balanced too (4 routers x 2 global = 8 = groups - 1).
  Fabric d = generate_dragonfly(DragonflySpec());
  check_invariants(d);
  auto gd = group_links(d);
  assert_int_equal(gd.size(), 9 * 8 / 2);
  for (const auto &[pair, n] : gd) assert_int_equal(n, 1);
  // Inside a group: all-to-all.
  assert_int_equal(cables(d, "grp01-sw01", "grp01-sw04"), 1);
  assert_int_equal(cables(d, "grp09-sw02", "grp09-sw03"), 1);

  // More global ports than groups - 1: several links per pair, still evenly.
  Fabric m = generate_dragonfly(dfly(3, 2, 1, 2));
  check_invariants(m);
  for (const auto &[pair, n] : group_links(m)) assert_int_equal(n, 2);
  // Fewer: not every pair, but connected (a ring first).
  Fabric r = generate_dragonfly(dfly(8, 1, 2, 2));
  check_invariants(r);
  auto gr = group_links(r);
  assert_int_equal(gr.size(), 8);
  for (int g = 1; g <= 7; ++g) assert_int_equal((gr[{g, g + 1}]), 1);
  assert_int_equal((gr[{1, 8}]), 1);
  check_deterministic([] { return generate_dragonfly(DragonflySpec()); });
}

void test_large_names_and_limits(void **) {
  FatTreeSpec s;  // 10,000+ hosts: five-digit names, ibsim needs its limits raised
  s.leaves = 320, s.hosts_per_leaf = 32, s.uplinks_per_leaf = 32, s.spines = 16, s.radix = 0;
  s.levels = 3, s.leaves_per_pod = 16, s.cores = 32, s.core_uplinks_per_spine = 8;
  Fabric f = generate_fat_tree(s);
  check_invariants(f);
  Counts c = count(f);
  assert_int_equal(c.cas, 10240);
  assert_int_equal(c.switches, 320 + 20 * 16 + 32);
  assert_int_equal(by_desc(f, "core32")->ports.size(), 80);  // 20 pods x 16 spines x 8 / 32
  assert_int_equal(by_desc(f, "core32")->nports, 128);
  assert_non_null(by_desc(f, "n00001 mlx5_0"));
  assert_non_null(by_desc(f, "n10240 mlx5_0"));
  assert_non_null(by_desc(f, "spine320"));
  std::string args = ibsim_args(f);
  assert_true(args.find("-N 10912") != std::string::npos);
  assert_true(args.find("-S 672") != std::string::npos);
  assert_true(args.find("-P ") != std::string::npos);
  assert_true(ibsim_args(generate_fat_tree(ft2())).empty());
  assert_true(to_ibsim_net(f).find("# ibsim-args: " + args) != std::string::npos);
}

void test_invalid_specs(void **) {
  auto ft = [](std::function<void(FatTreeSpec &)> change) {
    FatTreeSpec s = ft2();
    change(s);
    return [s] { generate_fat_tree(s); };
  };
  expect_invalid(ft([](FatTreeSpec &s) { s.leaves = 0; }), "leaves must be a positive number");
  expect_invalid(ft([](FatTreeSpec &s) { s.hosts_per_leaf = -3; }), "hosts_per_leaf");
  expect_invalid(ft([](FatTreeSpec &s) { s.uplinks_per_leaf = 6; }),
                 "uplinks_per_leaf (6) must be a multiple of spines (4)");
  expect_invalid(ft([](FatTreeSpec &s) { s.uplinks_per_leaf = 6; }), "4 or 8 would work");
  expect_invalid(ft([](FatTreeSpec &s) { s.levels = 4; }), "levels");
  expect_invalid(ft([](FatTreeSpec &s) { s.speed = "QDRX"; }), "speed \"QDRX\"");
  expect_invalid(ft([](FatTreeSpec &s) { s.width = 3; }), "width 3");
  expect_invalid(ft([](FatTreeSpec &s) { s.host_prefix = "1n"; }), "host_prefix");
  expect_invalid(ft([](FatTreeSpec &s) { s.host_prefix = "n o"; }), "host_prefix");
  expect_invalid(ft([](FatTreeSpec &s) { s.hosts_per_leaf = 300; }), "more than an InfiniBand switch can have");
  expect_invalid(ft([](FatTreeSpec &s) { s.levels = 3, s.leaves = 5, s.leaves_per_pod = 2; }), "leaves_per_pod");
  expect_invalid(
      ft([](FatTreeSpec &s) { s.levels = 3, s.leaves_per_pod = 2, s.cores = 3, s.core_uplinks_per_spine = 2; }),
      "must be a multiple of cores (3)");
  expect_invalid(ft([](FatTreeSpec &s) { s.levels = 3, s.leaves_per_pod = 2, s.cores = 0; }), "cores");
  RailSpec r = rail2();
  r.uplinks_per_leaf = 5;
  expect_invalid([r] { generate_rail(r); }, "uplinks_per_leaf (5) must be a multiple of spines_per_rail (2)");
  r = rail2();
  r.rails = 0;
  expect_invalid([r] { generate_rail(r); }, "rails");
  expect_invalid([] { generate_dragonfly(dfly(1, 4, 4, 2)); }, "groups must be at least 2");
  expect_invalid([] { generate_dragonfly(dfly(6, 1, 4, 1)); }, "routers_per_group * global_links_per_router");
  expect_invalid([] { generate_dragonfly(dfly(6, 4, 0, 1)); }, "hosts_per_router");
}

void test_ibnetdiscover_text_format(void **) {
  Fabric f = generate_fat_tree(ft2());
  std::string t = to_ibnetdiscover_text(f);
  // The exact shapes of ibnetdiscover's default output (compare the 2014 fixture).
  const FabricNode *leaf1 = by_desc(f, "leaf001");
  const FabricNode *n1 = by_desc(f, "n0001 mlx5_0");
  assert_true(leaf1->guid == 0x0002c90301000001ULL);
  assert_true(n1->guid == 0x0002c90302000000ULL);
  assert_true(
      t.find("\nvendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0x2c90301000001\nswitchguid=0x2c90301000001(2c90301000001)\n"
             "Switch\t36 \"S-0002c90301000001\"\t\t# \"leaf001\" enhanced port 0 lid 1 lmc 0\n"
             "[1]\t\"H-0002c90302000000\"[1](2c90302000001) \t\t# \"n0001 mlx5_0\" lid 9 4xHDR\n") !=
      std::string::npos);
  assert_true(t.find("[9]\t\"S-0002c90301000005\"[1]\t\t# \"spine01\" lid 5 4xHDR\n") != std::string::npos);
  assert_true(t.find("caguid=0x2c90302000000\nCa\t1 \"H-0002c90302000000\"\t\t# \"n0001 mlx5_0\"\n"
                     "[1](2c90302000001) \t\"S-0002c90301000001\"[1]\t\t# lid 9 lmc 0 \"leaf001\" lid 1 4xHDR\n") !=
              std::string::npos);
  assert_true(t.find("# Initiated from node 0002c90302000000 port 0002c90302000001\n") != std::string::npos);
  // Switches before CAs, as ibnetdiscover prints them.
  assert_true(t.find("Switch\t") < t.find("\nCa\t"));
  // The net file starts with a host CA (ibsim's local port), and switches follow.
  std::string net = to_ibsim_net(f);
  size_t first = net.find_first_of("SC", net.find("\nvendid"));
  assert_true(net.compare(first, 3, "Ca\t") == 0);
}

void test_round_trip(void **) {
  std::vector<Fabric> fabrics;
  fabrics.push_back(generate_fat_tree(ft2()));
  fabrics.push_back(generate_fat_tree(ft3_1to7()));
  fabrics.push_back(generate_rail(rail2()));
  fabrics.push_back(generate_dragonfly(dfly(5, 2, 2, 2)));
  for (const char *speed : {"SDR", "QDR", "FDR10", "FDR", "EDR", "NDR", "XDR"}) {
    FatTreeSpec s = ft2();
    s.speed = speed;
    s.width = std::string(speed) == "XDR" ? 2 : 4;
    fabrics.push_back(generate_fat_tree(s));
  }
  FatTreeSpec w = ft2();
  w.width = 12;
  w.hcas_per_host = 2;
  fabrics.push_back(generate_fat_tree(w));
  for (const auto &f : fabrics) {
    check_round_trip(f, to_ibnetdiscover_text(f));
    bool ibsim_speed = true;
    for (const auto &p : f.nodes.front().ports)
      ibsim_speed = p.speed != LinkSpeed::FDR10 && p.speed != LinkSpeed::NDR && p.speed != LinkSpeed::XDR;
    if (ibsim_speed) check_round_trip(f, to_ibsim_net(f));  // the net file is ibnetdiscover text too
    else expect_invalid([&] { to_ibsim_net(f); }, "ibsim 0.10 simulates");
  }
}

void test_ibsim_net_rejects(void **) {
  Fabric f = generate_fat_tree(ft2());
  Fabric g = f;
  g.nodes[0].desc = "n0001 \"quoted\"";
  expect_invalid([&] { to_ibsim_net(g); }, "cannot carry");
  g = f;
  g.nodes[0].desc = std::string(70, 'x');
  expect_invalid([&] { to_ibsim_net(g); }, "longer than 63");
  g = f;
  g.nodes[0].ports[0].port_guid += 7;
  expect_invalid([&] { to_ibsim_net(g); }, "node GUID + p");
}

// The generated fabrics classify as what they were generated to be (levels, pods, leaf groups,
// rails, dragonfly groups, oversubscription): the expected topology.json of `generate` rests on it.
void test_classified(void **) {
  FatTreeSpec o = ft2();
  o.leaves = 6, o.uplinks_per_leaf = 4, o.spines = 2;
  Topology t = classify(generate_fat_tree(o), ClassifyOptions());
  assert_int_equal(t.hosts.size(), 48);
  assert_int_equal(t.max_level, 2);
  assert_int_equal(t.leaf_groups.size(), 6);
  assert_true(t.anomalies.empty());
  assert_true(t.levels[0].oversub_min == 2.0 && t.levels[0].oversub_max == 2.0);

  t = classify(generate_fat_tree(ft3_1to7()), ClassifyOptions());
  assert_int_equal(t.max_level, 3);
  assert_int_equal(t.pods.size(), 2);
  assert_true(t.anomalies.empty());
  assert_true(t.levels[0].oversub_max == 1.0);
  assert_true(t.levels[1].oversub_min == 7.0 && t.levels[1].oversub_max == 7.0);  // 1:7 above the pods

  t = classify(generate_rail(RailSpec()), ClassifyOptions());
  assert_true(t.rail_optimized);
  assert_int_equal(t.hosts.size(), 128);
  assert_int_equal(t.leaf_groups.size(), 4);  // one per scalable unit, 8 rail leaves each
  for (const auto &g : t.leaf_groups) assert_int_equal(g.leaves.size(), 8);
  // Each rail is its own subnet here (rail r's leaves reach only rail r's spines), which the
  // classifier reports; nothing else may be flagged.
  for (const auto &a : t.anomalies) assert_string_equal(a.kind.c_str(), "disconnected-parts");

  t = classify(generate_dragonfly(DragonflySpec()), ClassifyOptions());
  assert_int_equal(t.dragonfly_groups.size(), 9);
  for (const auto &g : t.dragonfly_groups) {
    assert_int_equal(g.switches.size(), 4);
    assert_int_equal(g.hosts.size(), 16);
  }
  assert_true(t.anomalies.empty());
  t = classify(generate_dragonfly(dfly(5, 4, 2, 1)), ClassifyOptions());
  assert_int_equal(t.dragonfly_groups.size(), 5);
  assert_true(t.anomalies.empty());
}

// --shuffle-cabling: every leaf's hosts still fill its down ports exactly once, names unchanged,
// HCAs of a host side by side; some leaf out of name order; the same seed gives the same text, another
// seed another cabling, no seed the name order; the classified topology is the same fabric shape.
// leaf_hosts: per leaf, host names in port order.
std::map<std::string, std::vector<std::string>> leaf_hosts(const Fabric &f) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto &n : f.nodes) {
    if (n.type != NodeType::Switch) continue;
    std::vector<std::pair<int, std::string>> down;
    for (const auto &p : n.ports) {
      const FabricNode *peer = f.find(p.remote_guid);
      if (peer && peer->type != NodeType::Switch) down.push_back({p.num, peer->desc});
    }
    std::sort(down.begin(), down.end());
    for (size_t i = 0; i < down.size(); ++i) assert_int_equal(down[i].first, int(i) + 1);  // ports 1..n, once each
    for (const auto &d : down) out[n.desc].push_back(d.second);
  }
  return out;
}

void test_shuffled_cabling(void **) {
  FatTreeSpec s = ft2();
  s.hcas_per_host = 2;
  const auto plain = leaf_hosts(generate_fat_tree(s));
  s.cabling_seed = 7;
  const Fabric a = generate_fat_tree(s);
  const auto shuffled = leaf_hosts(a);
  assert_int_equal(plain.size(), shuffled.size());
  bool moved = false;
  for (const auto &[leaf, hosts] : plain) {
    std::vector<std::string> x = hosts, y = shuffled.at(leaf);
    assert_true(std::is_sorted(x.begin(), x.end()));
    moved = moved || x != y;
    for (size_t i = 0; i + 1 < y.size(); i += 2)  // mlx5_0 then mlx5_1 of one host
      assert_string_equal(y[i].substr(0, 5).c_str(), y[i + 1].substr(0, 5).c_str());
    std::sort(y.begin(), y.end());
    assert_true(x == y);  // the same hosts on the same leaf
  }
  assert_true(moved);
  assert_string_equal(to_ibsim_net(a).c_str(), to_ibsim_net(generate_fat_tree(s)).c_str());
  FatTreeSpec s2 = s;
  s2.cabling_seed = 8;
  assert_true(leaf_hosts(generate_fat_tree(s2)) != shuffled);
  check_round_trip(a, to_ibnetdiscover_text(a));
  Topology t = classify(a, ClassifyOptions());
  assert_int_equal(t.hosts.size(), 32);
  assert_int_equal(t.leaf_groups.size(), 4);
  assert_true(t.anomalies.empty());

  RailSpec r = rail2();
  const auto rail_plain = leaf_hosts(generate_rail(r));
  r.cabling_seed = 7;
  const auto rail_shuffled = leaf_hosts(generate_rail(r));
  bool rail_moved = false;
  for (const auto &[leaf, hosts] : rail_plain) {
    std::vector<std::string> y = rail_shuffled.at(leaf);
    rail_moved = rail_moved || y != hosts;
    std::sort(y.begin(), y.end());
    assert_true(y == hosts);
  }
  assert_true(rail_moved);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fat_tree_two_level),
      cmocka_unit_test(test_fat_tree_oversubscribed),
      cmocka_unit_test(test_fat_tree_three_level),
      cmocka_unit_test(test_radix),
      cmocka_unit_test(test_rail),
      cmocka_unit_test(test_rail_shared_spines),
      cmocka_unit_test(test_dragonfly),
      cmocka_unit_test(test_large_names_and_limits),
      cmocka_unit_test(test_invalid_specs),
      cmocka_unit_test(test_ibnetdiscover_text_format),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_ibsim_net_rejects),
      cmocka_unit_test(test_classified),
      cmocka_unit_test(test_shuffled_cabling),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
