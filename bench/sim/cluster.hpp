// SPDX-License-Identifier: GPL-2.0-or-later
// A simulated cluster: a generated fabric, classified exactly as `topoaware discover` would
// (generator -> Fabric -> classify -> Topology -> TopoIndex), plus the two views Slurm has of it:
//  - the topology/tree switch table (topology.conf written as topoaware writes it: one leaf
//    switch per leaf group, one switch per pod when there are several pods, one root), with
//    Slurm's switch distances (topology_tree.c: parent<->child 1, then shortest paths) and parents;
//  - the topology/block records (one base block per leaf group in canonical order, BlockSizes =
//    base * 2^k up to the largest power of two every pod can hold, as to_topology_conf_block()).
// Slurm's node table is in host-name order (n0001, n0002, ...), which is topology host index
// order, so "node index" below means topology host index.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "placement.hpp"
#include "topology.hpp"

namespace topoaware::sim {

struct SlurmSwitch {
  int level = 0;             // 0 = leaf (Slurm's numbering)
  int parent = -1;           // itself for a root, as topology_tree.c leaves it
  std::vector<int> nodes;    // host indices below, ascending (the switch's node_bitmap)
};

struct Cluster {
  std::string name;          // "ft2-2to1-2048"
  std::string family;        // ft2-1to1, ft2-2to1, ft3-7to1, rail8, dfly
  Topology topo;
  std::unique_ptr<TopoIndex> index;
  int nodes = 0;
  // topology/tree
  std::vector<SlurmSwitch> sw;
  std::vector<std::vector<unsigned>> sw_dist;  // INFINITE = kInf
  static constexpr unsigned kInf = 0xffffffffu;
  std::vector<int> host_leaf_switch;           // host -> index into sw (level 0)
  // topology/block
  std::vector<std::vector<int>> blocks;        // base blocks (host indices ascending)
  std::vector<int> host_block;
  int bblock_node_cnt = 0;
  std::vector<bool> block_levels;              // bit k: BlockSizes holds base * 2^k
};

// family: ft2-1to1 | ft2-2to1 | ft2-2to1-8 | ft3-7to1 | rail8 | dfly; nodes: 32-node leaf groups
// (ft2-2to1-8: 8-node leaves, the replays' fabric; dfly: 128-node groups of 16 routers x 8 hosts).
// Throws std::invalid_argument if the size does not fit the family.
std::unique_ptr<Cluster> make_cluster(const std::string &family, int nodes);
// A cluster from a topology.json, e.g. one `topoaware discover --routes` wrote over a fabric that a
// subnet manager routed (bench/netsim/routes.sh): the rank order then takes its entry classes from
// the recorded routes, and the network judge follows the same tables. `family` labels the results.
// Throws std::runtime_error (unreadable file) or std::invalid_argument (not `nodes` hosts).
std::unique_ptr<Cluster> load_cluster(const std::string &family, int nodes, const std::string &topology_json);
// Small instance for the exact optimum: `leaves` leaves of `per_leaf` hosts, 2:1, 2 levels.
std::unique_ptr<Cluster> make_small_cluster(int leaves, int per_leaf);

}  // namespace topoaware::sim
