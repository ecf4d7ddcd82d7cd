// SPDX-License-Identifier: GPL-2.0-or-later
// One placed layout job as `topoaware plan` and `topoaware show` describe it: the span of its rank
// order (segments, leaf groups, pods against their ideal), runs of consecutive ranks on one leaf
// group, its cost against the ideal (cost.hpp), and how these read as text and JSON. Both commands
// call these, so a job planned and the same job shown running print the same numbers the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost.hpp"
#include "layout.hpp"
#include "placement.hpp"
#include "rank_order.hpp"

namespace topoaware {

// Consecutive nodes of the rank order on one leaf group.
struct RankRun {
  size_t first_node = 0, end_node = 0;  // [first_node, end_node) in the rank order
  uint64_t first_rank = 0, last_rank = 0;
  int leaf_group = -1, pod = -1;
  std::vector<int> hosts;
};
std::vector<RankRun> rank_runs(const TopoIndex &index, const std::vector<int> &ordered, uint32_t gpus_per_node);

// "Span: 2 leaf groups, 1 pods (ideal 1); 0 of 2 segments above their ideal leaf groups"
std::string span_text(const PlaceQuality &q);
// One line of the cost report, `what` in a 28-column field: DP rings and PP chains at ideal,
// hop-bytes against the ideal, spine bytes, estimated slowdown with comm fraction f.
std::string cost_text(const std::string &what, const JobCost &c, double f);
nlohmann::ordered_json cost_json(const JobCost &c, double f);
nlohmann::ordered_json span_json(const PlaceQuality &q);
// The host names of `hosts` (topology indices) as a compressed Slurm host list.
std::string host_names(const Topology &topo, const std::vector<int> &hosts);

}  // namespace topoaware
