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
  c.nodes = c.index->host_count();
  build_slurm_view(*c.index, c);
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
