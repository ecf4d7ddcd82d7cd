// SPDX-License-Identifier: GPL-2.0-or-later
// Test helper for tests/ibsim_generated.sh: writes the ibsim net file or the ibnetdiscover text of
// a named generated fabric, lists where to attach one walk per subnet, and compares saved
// ibnetdiscover output (one dump per subnet, merged) with the generated Fabric.
// (Once `topoaware generate` exists the script may use it; this helper keeps the test independent.)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "empty_leaf.hpp"
#include "fabric_diff.hpp"
#include "generator.hpp"
#include "ibnetdiscover_parser.hpp"

using namespace topoaware;

namespace {

bool make(const std::string &name, Fabric *out) {
  if (name == "ft2") {  // 2-level, 4 leaves x 8 hosts, 4 spines, 1:1
    FatTreeSpec s;
    s.leaves = 4, s.hosts_per_leaf = 8, s.uplinks_per_leaf = 8, s.spines = 4;
    *out = generate_fat_tree(s);
  } else if (name == "ft2-2to1") {  // 2-level, 2:1 oversubscribed, 12x EDR links
    FatTreeSpec s;
    s.leaves = 6, s.hosts_per_leaf = 8, s.uplinks_per_leaf = 4, s.spines = 2, s.speed = "EDR", s.width = 12;
    *out = generate_fat_tree(s);
  } else if (name == "ft2-16x32") {  // a common 2-level example: 16 leaves x 32 hosts, 8 spines
    FatTreeSpec s;
    s.leaves = 16, s.hosts_per_leaf = 32, s.uplinks_per_leaf = 32, s.spines = 8;
    *out = generate_fat_tree(s);
  } else if (name == "ft3") {  // 3-level: 2 pods of 4 leaves, 2 spines per pod, 2 cores
    FatTreeSpec s;
    s.levels = 3, s.leaves = 8, s.leaves_per_pod = 4, s.hosts_per_leaf = 8, s.uplinks_per_leaf = 4, s.spines = 2;
    s.cores = 2, s.core_uplinks_per_spine = 2;
    *out = generate_fat_tree(s);
  } else if (name == "ft3-1to7") {  // 3-level, 1:1 at the leaves, 7:1 above the pods (28 down, 4 up)
    FatTreeSpec s;
    s.levels = 3, s.leaves = 14, s.leaves_per_pod = 7, s.hosts_per_leaf = 8, s.uplinks_per_leaf = 8, s.spines = 2;
    s.cores = 4, s.core_uplinks_per_spine = 4;
    *out = generate_fat_tree(s);
  } else if (name == "ft3-10k") {  // 10,240 hosts, 672 switches: beyond ibsim's default limits
    FatTreeSpec s;
    s.levels = 3, s.leaves = 320, s.leaves_per_pod = 16, s.hosts_per_leaf = 32, s.uplinks_per_leaf = 32, s.spines = 16;
    s.cores = 32, s.core_uplinks_per_spine = 8;
    *out = generate_fat_tree(s);
  } else if (name == "rail2") {  // 2 rails, 2 scalable units of 8 hosts, 2 spines per rail
    RailSpec s;
    s.rails = 2, s.units = 2, s.hosts_per_unit = 8, s.spines_per_rail = 2, s.uplinks_per_leaf = 8;
    *out = generate_rail(s);
  } else if (name == "rail8") {  // SuperPOD-like: 8 rails, 4 SUs of 32 hosts
    RailSpec s;
    *out = generate_rail(s);
  } else if (name == "dfly") {  // balanced dragonfly: 5 groups of 4 routers, 1 global link each
    DragonflySpec s;
    s.groups = 5, s.routers_per_group = 4, s.hosts_per_router = 2, s.global_links_per_router = 1;
    *out = generate_dragonfly(s);
  } else if (name == "ft2-empty-leaf") {  // 2-level, 4 leaves x 4 hosts, 2 spines; leaf004 keeps only its SHARP node
    FatTreeSpec s;
    s.leaves = 4, s.hosts_per_leaf = 4, s.uplinks_per_leaf = 4, s.spines = 2;
    *out = testing::without_hosts(generate_fat_tree(s), "leaf004");
  } else if (name == "ft3-empty-leaf") {  // ft3 with a host-less switch under spine01 alone (2 cables)
    FatTreeSpec s;
    s.levels = 3, s.leaves = 8, s.leaves_per_pod = 4, s.hosts_per_leaf = 8, s.uplinks_per_leaf = 4, s.spines = 2;
    s.cores = 2, s.core_uplinks_per_spine = 2;
    *out = testing::with_empty_leaf(generate_fat_tree(s), "empty-leaf01", {"spine01"}, 2);
  } else if (name == "ft3-empty-pod") {  // 3 pods of one leaf (14 uplinks), 7 cores; leaf003 keeps only its SHARP node
    FatTreeSpec s;
    s.levels = 3, s.leaves = 3, s.leaves_per_pod = 1, s.hosts_per_leaf = 14, s.uplinks_per_leaf = 14, s.spines = 1;
    s.cores = 7, s.core_uplinks_per_spine = 14;
    *out = testing::without_hosts(generate_fat_tree(s), "leaf003");
  } else {
    return false;
  }
  return true;
}

// One CA node id per connected component (subnet): where to attach one walk each (SIM_HOST).
std::vector<const FabricNode *> attach_points(const Fabric &f) {
  std::map<uint64_t, size_t> idx;
  for (size_t i = 0; i < f.nodes.size(); ++i) idx[f.nodes[i].guid] = i;
  std::vector<int> comp(f.nodes.size(), -1);
  std::vector<const FabricNode *> out;
  for (size_t s = 0; s < f.nodes.size(); ++s) {
    if (comp[s] >= 0) continue;
    int c = static_cast<int>(out.size());
    const FabricNode *ca = nullptr;
    std::vector<size_t> stack{s};
    comp[s] = c;
    while (!stack.empty()) {
      size_t n = stack.back();
      stack.pop_back();
      if (f.nodes[n].type == NodeType::Ca && (!ca || n < static_cast<size_t>(ca - f.nodes.data()))) ca = &f.nodes[n];
      for (const auto &p : f.nodes[n].ports) {
        size_t m = idx.at(p.remote_guid);
        if (comp[m] < 0) comp[m] = c, stack.push_back(m);
      }
    }
    out.push_back(ca);
  }
  return out;
}

int usage() {
  std::fprintf(stderr,
               "usage: gen_fabric SPEC net FILE | text FILE | attach | ibsim-args | compare DUMP...\n"
               "SPEC: ft2 ft2-2to1 ft2-16x32 ft3 ft3-1to7 ft3-10k rail2 rail8 dfly ft2-empty-leaf ft3-empty-leaf\n"
               "      ft3-empty-pod\n");
  return 2;
}

bool write_file(const std::string &path, const std::string &text) {
  std::ofstream o(path);
  o << text;
  o.close();
  if (!o) {
    std::fprintf(stderr, "gen_fabric: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) return usage();
  Fabric f;
  try {
    if (!make(argv[1], &f)) return usage();
    std::string cmd = argv[2];
    if (cmd == "net" && argc == 4) return write_file(argv[3], to_ibsim_net(f)) ? 0 : 1;
    if (cmd == "text" && argc == 4) return write_file(argv[3], to_ibnetdiscover_text(f)) ? 0 : 1;
    if (cmd == "ibsim-args" && argc == 3) {
      std::printf("%s\n", ibsim_args(f).c_str());
      return 0;
    }
    if (cmd == "attach" && argc == 3) {
      for (const FabricNode *ca : attach_points(f)) {
        if (!ca) continue;  // a component without CAs cannot be walked from a CA
        char buf[40];
        std::snprintf(buf, sizeof buf, "H-%016llx", static_cast<unsigned long long>(ca->guid));
        std::printf("%s\n", buf);
      }
      return 0;
    }
    if (cmd == "compare" && argc >= 4) {
      Fabric got;
      for (int i = 3; i < argc; ++i) got.merge(parse_ibnetdiscover_file(argv[i]));
      got.finish();
      auto diffs = fabric_diff(f, got);
      for (const auto &d : diffs) std::printf("DIFF %s\n", d.c_str());
      if (!diffs.empty()) return 1;
      size_t sw = 0, ca = 0, links = 0;
      for (const auto &n : f.nodes) {
        (n.type == NodeType::Switch ? sw : ca)++;
        links += n.ports.size();
      }
      std::printf("same fabric: %zu switches, %zu CAs, %zu links\n", sw, ca, links / 2);
      return 0;
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "gen_fabric: %s\n", e.what());
    return 1;
  }
  return usage();
}
