// SPDX-License-Identifier: GPL-2.0-or-later
// Exact optimum of the cost model for one placement decision on a small instance: the least
// hop-bytes (cost.hpp, under topoaware's rank order of the set) over every node set of the job's
// size drawn from the free nodes. Nodes of one leaf group are interchangeable for the cost (it
// depends only on which leaf group and pod each node is in), so the search runs over count
// vectors (nodes taken per leaf group); leaf groups of one pod with the same free count are
// interchangeable too, so their counts are enumerated in non-increasing order only.
#pragma once

#include <cstdint>
#include <vector>

#include "cluster.hpp"
#include "cost.hpp"

namespace topoaware::sim {

struct OptimumResult {
  bool done = false;        // false: search above `limit` vectors, skipped
  double hop_bytes = 0;     // least hop-bytes per step
  long vectors = 0;
};

OptimumResult exact_optimum(const Cluster &c, const std::vector<uint8_t> &free, int nodes, const Layout &layout,
                            const CostParams &params, long limit = 2000000);

}  // namespace topoaware::sim
