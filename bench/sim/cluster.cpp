// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster.hpp"

#include <algorithm>
#include <stdexcept>

#include "generator.hpp"
#include "topology_json.hpp"

namespace topoaware::sim {

namespace {

void finish(Cluster &c) {
  c.index = std::make_unique<TopoIndex>(c.topo);
  const TopoIndex &ix = *c.index;
  c.nodes = ix.host_count();
  // Leaf groups in canonical order (pod, then leaf group index as TopoIndex lists them).
  std::vector<int> lgs;
  for (int p = 0; p < ix.pod_count(); ++p)
    for (int g : ix.pod_leaf_groups(p)) lgs.push_back(g);
  // --- topology/tree switch table, in the order topology.conf lists it: leaves, pods, root.
  c.sw.clear();
  c.host_leaf_switch.assign(size_t(c.nodes), -1);
  std::vector<int> lg_sw(size_t(ix.leaf_group_count()), -1);
  for (int g : lgs) {
    SlurmSwitch s;
    s.level = 0;
    s.nodes = ix.leaf_group_hosts(g);
    std::sort(s.nodes.begin(), s.nodes.end());
    lg_sw[size_t(g)] = int(c.sw.size());
    for (int h : s.nodes) c.host_leaf_switch[size_t(h)] = int(c.sw.size());
    c.sw.push_back(std::move(s));
  }
  const int nleaf = int(c.sw.size());
  std::vector<int> pod_sw;
  if (ix.pod_count() > 1) {
    for (int p = 0; p < ix.pod_count(); ++p) {
      SlurmSwitch s;
      s.level = 1;
      for (int g : ix.pod_leaf_groups(p)) {
        c.sw[size_t(lg_sw[size_t(g)])].parent = int(c.sw.size());
        for (int h : ix.leaf_group_hosts(g)) s.nodes.push_back(h);
      }
      std::sort(s.nodes.begin(), s.nodes.end());
      pod_sw.push_back(int(c.sw.size()));
      c.sw.push_back(std::move(s));
    }
  }
  if (nleaf > 1) {
    SlurmSwitch root;
    root.level = ix.pod_count() > 1 ? 2 : 1;
    const int r = int(c.sw.size());
    for (int h = 0; h < c.nodes; ++h) root.nodes.push_back(h);
    root.parent = r;
    if (pod_sw.empty())
      for (int i = 0; i < nleaf; ++i) c.sw[size_t(i)].parent = r;
    else
      for (int p : pod_sw) c.sw[size_t(p)].parent = r;
    c.sw.push_back(std::move(root));
  } else {
    c.sw[0].parent = 0;
  }
  // Distances (topology_tree.c:487-551): 0 to itself, 1 parent<->child, Floyd-Warshall.
  const size_t n = c.sw.size();
  c.sw_dist.assign(n, std::vector<unsigned>(n, Cluster::kInf));
  for (size_t i = 0; i < n; ++i) {
    c.sw_dist[i][i] = 0;
    const int p = c.sw[i].parent;
    if (p >= 0 && size_t(p) != i) c.sw_dist[i][size_t(p)] = c.sw_dist[size_t(p)][i] = 1;
  }
  for (size_t k = 0; k < n; ++k)
    for (size_t i = 0; i < n; ++i)
      if (c.sw_dist[i][k] != Cluster::kInf)
        for (size_t j = 0; j < n; ++j)
          if (c.sw_dist[k][j] != Cluster::kInf && c.sw_dist[i][j] > c.sw_dist[i][k] + c.sw_dist[k][j])
            c.sw_dist[i][j] = c.sw_dist[i][k] + c.sw_dist[k][j];
  // --- topology/block: one base block per leaf group, pod by pod.
  c.blocks.clear();
  c.host_block.assign(size_t(c.nodes), -1);
  size_t base = 0;
  for (int g : lgs) {
    std::vector<int> b = ix.leaf_group_hosts(g);
    std::sort(b.begin(), b.end());
    for (int h : b) c.host_block[size_t(h)] = int(c.blocks.size());
    base = base ? std::min(base, b.size()) : b.size();
    c.blocks.push_back(std::move(b));
  }
  c.bblock_node_cnt = int(base);
  size_t min_pod = size_t(-1);
  for (int p = 0; p < ix.pod_count(); ++p) min_pod = std::min(min_pod, ix.pod_leaf_groups(p).size());
  c.block_levels.assign(16, false);
  for (size_t k = 0, v = 1; v <= min_pod && k < 16; ++k, v *= 2) c.block_levels[k] = true;
}

// Two levels, one cable from every leaf to every spine (none when there is one leaf).
FatTreeSpec two_level(int leaves, int hosts_per_leaf, int uplinks) {
  FatTreeSpec s;
  s.levels = 2;
  s.leaves = leaves;
  s.hosts_per_leaf = hosts_per_leaf;
  s.spines = uplinks;
  s.uplinks_per_leaf = leaves == 1 ? 0 : uplinks;
  return s;
}

}  // namespace

std::unique_ptr<Cluster> make_cluster(const std::string &family, int nodes) {
  auto c = std::make_unique<Cluster>();
  c->family = family;
  c->name = family + "-" + std::to_string(nodes);
  Fabric f;
  if (family == "ft2-1to1" || family == "ft2-2to1") {
    f = generate_fat_tree(two_level(nodes / 32, 32, family == "ft2-1to1" ? 32 : 16));
  } else if (family == "ft2-2to1-8") {
    // The fabric of the real-slurmctld replays (bench/slurm_replay.sh): 8-host leaves with 4
    // uplinks, where a rank order meets few uplinks.
    f = generate_fat_tree(two_level(nodes / 8, 8, 4));
  } else if (family == "ft3-7to1") {
    // Pods of 8 leaves x 32 hosts; 28 leaf uplinks (32:28 ~ 1.14:1), 4 spines per pod with 8
    // core uplinks each: 56 down / 8 up = 7:1 above the pods.
    FatTreeSpec s;
    s.levels = 3;
    s.leaves = nodes / 32;
    s.hosts_per_leaf = 32;
    s.uplinks_per_leaf = 28;
    s.spines = 4;
    s.leaves_per_pod = 8;
    s.cores = 16;
    s.core_uplinks_per_spine = 8;
    f = generate_fat_tree(s);
  } else if (family == "rail8") {
    RailSpec s;
    s.rails = 8;
    s.units = nodes / 32;
    s.hosts_per_unit = 32;
    s.spines_per_rail = 16;
    s.uplinks_per_leaf = 32;
    f = generate_rail(s);
  } else if (family == "dfly") {
    DragonflySpec s;  // balanced (a = 2p = 2h): 16 routers x 8 hosts, 8 global links per router
    s.groups = nodes / 128;
    s.routers_per_group = 16;
    s.hosts_per_router = 8;
    s.global_links_per_router = 8;
    f = generate_dragonfly(s);
  } else {
    throw std::invalid_argument("unknown topology family " + family);
  }
  f.finish();
  c->topo = classify(f, {});
  finish(*c);
  if (c->nodes != nodes)
    throw std::invalid_argument(c->name + ": classified " + std::to_string(c->nodes) + " hosts, not " +
                                std::to_string(nodes));
  return c;
}

std::unique_ptr<Cluster> load_cluster(const std::string &family, int nodes, const std::string &topology_json) {
  auto c = std::make_unique<Cluster>();
  c->family = family;
  c->name = family + "-" + std::to_string(nodes);
  c->topo = load_topology_file(topology_json);
  finish(*c);
  if (c->nodes != nodes)
    throw std::invalid_argument(topology_json + ": " + std::to_string(c->nodes) + " hosts, not " + std::to_string(nodes));
  return c;
}

std::unique_ptr<Cluster> make_small_cluster(int leaves, int per_leaf) {
  auto c = std::make_unique<Cluster>();
  c->family = "small-ft2-2to1";
  c->name = "small-ft2-2to1-" + std::to_string(leaves * per_leaf);
  Fabric f = generate_fat_tree(two_level(leaves, per_leaf, per_leaf / 2));
  f.finish();
  c->topo = classify(f, {});
  finish(*c);
  return c;
}

}  // namespace topoaware::sim
