// SPDX-License-Identifier: GPL-2.0-or-later
// The other outputs of a Topology: Slurm topology.conf (tree and block), Graphviz DOT, summary.
#pragma once

#include <string>
#include <vector>

#include "topology.hpp"

namespace topoaware {

// topology/tree: one SwitchName= line per switch that has compute hosts or switches below it;
// leaves list Nodes= (compressed host lists), upper levels list Switches=.
std::string to_topology_conf_tree(const Topology &topo);
// topology/block (Slurm >= 23.11): one BlockName= per leaf group, BlockSizes= from the block size
// and its powers of two up to the largest that all pods can hold.
std::string to_topology_conf_block(const Topology &topo);
// Slurm topology.yaml (25.05 and later): the tree as topology "fabric" (cluster_default) and a
// block topology: "nvlink", one block per NVLink domain (base = the smallest domain, leaving out
// domains under half the median), or "leaves", the blocks of to_topology_conf_block. BlockSizes:
// the base doubled while the aggregate fits in the blocks written; `block_sizes` (checked with
// check_block_sizes) overrides them, and blocks smaller than its first value are left out.
// Throws std::invalid_argument for bad block sizes or a fabric with no leaf to write.
std::string to_topology_yaml(const Topology &topo, const std::vector<int> &block_sizes = {});
void check_block_sizes(const std::vector<int> &sizes);
// A YAML double-quoted scalar: '"' and '\' escaped, control bytes as \xNN.
std::string yaml_quote(const std::string &s);
// Graphviz DOT of the switch graph: levels as ranks, hosts folded into their leaf by default.
std::string to_dot(const Topology &topo, bool show_hosts = false);
// Human summary: counts per level, speeds, oversubscription, groups, anomalies, ignored CAs.
std::string to_summary(const Topology &topo);

}  // namespace topoaware
