// SPDX-License-Identifier: GPL-2.0-or-later
// A simulated cluster: a generated fabric, classified exactly as `topoaware discover` would
// (generator -> Fabric -> classify -> Topology -> TopoIndex), plus the two views Slurm has of it
// (topology/tree and topology/block, build_slurm_view in corelib/policies.hpp).
// Slurm's node table is in host-name order (n0001, n0002, ...), which is topology host index
// order, so "node index" below means topology host index.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "placement.hpp"
#include "policies.hpp"
#include "topology.hpp"

namespace topoaware::sim {

// Slurm's views (SlurmFabricView, corelib/policies.hpp) are the base, so the corelib replicas take a
// Cluster as it is.
struct Cluster : SlurmFabricView {
  std::string name;          // "ft2-2to1-2048"
  std::string family;        // ft2-1to1, ft2-2to1, ft3-7to1, rail8, dfly, nvl72, nvl72-2to1
  Topology topo;
  std::unique_ptr<TopoIndex> index;
  int nodes = 0;
  int gpus_per_node = 8;
  // With multi-node NVLink domains: the same fabric as topoaware sees it from a topology.json
  // whose nvlink_domains were removed (the engine then cannot keep a TP group inside a domain).
  Topology flat_topo;
  std::unique_ptr<TopoIndex> flat_index;
};

// family: ft2-1to1 | ft2-2to1 | ft2-2to1-8 | ft3-7to1 | rail8 | dfly | nvl72 | nvl72-2to1; nodes:
// 32-node leaf groups (ft2-2to1-8: 8-node leaves, the replays' fabric; dfly: 128-node groups of 16
// routers x 8 hosts; nvl72*: GB200/GB300 NVL72 racks of 18 trays x 4 GPUs, one NVLink domain per
// rack, 4 rails of NICs, 36-tray (two-rack) leaf groups: nodes a multiple of 36). With NVLink
// domains, Slurm's block view has one base block per domain (what `discover --yaml` writes).
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
