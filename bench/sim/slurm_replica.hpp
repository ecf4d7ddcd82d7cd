// SPDX-License-Identifier: GPL-2.0-or-later
// Replicas of Slurm's node selection for whole-node (exclusive) jobs of one node weight, no
// required nodes, no CPU/memory limits: the only case the benchmark drives. Each function follows
// its source line by line; comments name the lines. The tree replica (slurm_tree_select) chose the same
// nodes as real slurmctld 22.05 in every decision make bench-slurm checked (bench/RESULTS.md); the
// block replicas are not checked against a real slurmctld.
#pragma once

#include <cstdint>
#include <vector>

#include "cluster.hpp"

namespace topoaware::sim {

// Slurm 22.05.8 src/plugins/select/cons_tres/job_test.c, _eval_nodes_topo (lines 2153-2743),
// with _enough_nodes (253), _topo_add_dist (1381), _topo_compare_switches (1393) and
// _topo_choose_best_switch (1436). free[h] != 0: node h usable (Slurm's node_map). Returns false if
// Slurm's call fails (SLURM_ERROR). out: chosen hosts, ascending (node-table order). leaf_switches:
// leaf switches the allocation touches (the count the --switches check at line 2700 uses).
bool slurm_tree_select(const Cluster &c, const std::vector<uint8_t> &free, int nodes, std::vector<int> &out,
                       int *leaf_switches);

// Slurm 24.11.5 src/plugins/topology/block/eval_nodes_block.c, eval_nodes_block (lines 180-928 of
// the file; _choose_best_bblock at 62), with --segment=segment (0: none). Returns false if Slurm's
// call fails (the job stays pending). out ascending.
bool slurm_block_select(const Cluster &c, const std::vector<uint8_t> &free, int nodes, int segment,
                        std::vector<int> &out);

}  // namespace topoaware::sim
