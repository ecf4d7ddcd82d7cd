// SPDX-License-Identifier: GPL-2.0-or-later
// Named node-selection policies behind one interface, so that the simulator, `topoaware plan` and
// tests compare topoaware's engine with what stock Slurm would choose on the same free set, and
// the select plugin's decision (select_policy.hpp) reaches the engine the same way:
//   first-fit    the first free hosts in node-table order;
//   slurm-tree   Slurm 22.05 topology/tree best fit (cons_tres _eval_nodes_topo), slurm_tree.cpp;
//   slurm-block  Slurm 24.11 topology/block (eval_nodes_block), slurm_block.cpp;
//   topoaware    the placement engine (Placer).
// The Slurm replicas cover whole-node (exclusive) jobs of one node weight, no required nodes, no
// CPU/memory limits. Each follows its source line by line; comments name the lines. The tree
// replica chose the same nodes as real slurmctld 22.05 in every decision `make bench-slurm` checked
// (bench/RESULTS.md); the block replica is not checked against a real slurmctld.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "placement.hpp"

namespace topoaware {

// Slurm's two views of a classified fabric, as topoaware writes them into topology.conf:
//  - topology/tree: one leaf switch per leaf group, one switch per pod when there are several
//    pods, one root, with Slurm's switch distances (topology_tree.c: parent<->child 1, then
//    shortest paths) and parents;
//  - topology/block: one base block per leaf group in canonical order, BlockSizes = base * 2^k up
//    to the largest power of two every pod can hold (as to_topology_conf_block()).
// Slurm's node table is taken in topology host index order.
struct SlurmSwitch {
  int level = 0;             // 0 = leaf (Slurm's numbering)
  int parent = -1;           // itself for a root, as topology_tree.c leaves it
  std::vector<int> nodes;    // host indices below, ascending (the switch's node_bitmap)
};

struct SlurmFabricView {
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

void build_slurm_view(const TopoIndex &ix, SlurmFabricView &v);

// Slurm 22.05.8 src/plugins/select/cons_tres/job_test.c, _eval_nodes_topo (lines 2153-2743),
// with _enough_nodes (253), _topo_add_dist (1381), _topo_compare_switches (1393) and
// _topo_choose_best_switch (1436). free[h] != 0: node h usable (Slurm's node_map). Returns false if
// Slurm's call fails (SLURM_ERROR). out: chosen hosts, ascending (node-table order). leaf_switches:
// leaf switches the allocation touches (the count the --switches check at line 2700 uses).
bool slurm_tree_select(const SlurmFabricView &c, const std::vector<uint8_t> &free, int nodes, std::vector<int> &out,
                       int *leaf_switches);

// Slurm 24.11.5 src/plugins/topology/block/eval_nodes_block.c, eval_nodes_block (lines 180-928 of
// the file; _choose_best_bblock at 62), with --segment=segment (0: none). Returns false if Slurm's
// call fails (the job stays pending). out ascending.
bool slurm_block_select(const SlurmFabricView &c, const std::vector<uint8_t> &free, int nodes, int segment,
                        std::vector<int> &out);

// The first `nodes` usable hosts in node-table order; false if fewer are usable.
bool first_fit_select(const std::vector<uint8_t> &free, int nodes, std::vector<int> &out);

// One placement question: a whole-node job (free[h] != 0: host h has the job's GPUs per node free).
struct PolicyRequest {
  Job job;
  PlaceMode mode = PlaceMode::Prefer;  // topoaware only
  int segment = 0;                     // slurm-block only: --segment (0: none)
};

struct PolicyChoice {
  std::vector<int> nodes;   // rank order: node-table order for the Slurm-like policies
  int leaf_switches = 0;    // slurm-tree: leaf switches touched (Slurm's --switches count)
  PlaceStatus status = PlaceStatus::NoNodes;  // topoaware: the engine's status; others Ideal/NoNodes
  // topoaware only (others leave them as they are): the engine's span of the choice and its
  // candidates (usable nodes with enough free GPUs), as `topoaware plan` reports them.
  PlaceQuality quality;
  uint32_t candidates = 0;
};

// The select plugin's question, in Slurm's view and under slurmctld's locks: bit i of usable (word
// i/64, as in Slurm's bitstr_t after its two header words) marks node-table index i usable,
// free_gpus[i] its free GPUs. Nodes missing from the topology (map) are never chosen. Pointers, so
// that a decision's many questions copy no layout.
struct SlurmPolicyRequest {
  const Job *job = nullptr;
  PlaceMode mode = PlaceMode::Prefer;
  const NodeMap *map = nullptr;
  const uint64_t *usable = nullptr;
  size_t nbits = 0;
  const uint16_t *free_gpus = nullptr;
};

class PlacementPolicy {
 public:
  explicit PlacementPolicy(const TopoIndex &ix) : index_(&ix) {}
  virtual ~PlacementPolicy() = default;
  virtual const char *name() const = 0;
  const TopoIndex &index() const { return *index_; }
  // false: refused (the job stays pending; topoaware strict NoBlock keeps its fallback in out).
  virtual bool place(const PolicyRequest &req, const std::vector<uint8_t> &free, PolicyChoice &out) = 0;
  // Slurm's view (the select plugin's decision, corelib/select_policy.hpp): the engine's whole
  // answer, nodes in rank order and as node-table indices (out.slurm). Throws LayoutError on an
  // inconsistent job. Only topoaware answers it: the Slurm replicas stand for what cons_tres does
  // itself, so the plugin never asks them, and they throw std::logic_error.
  virtual PlaceStatus place_slurm(const SlurmPolicyRequest &req, PlaceResult &out);

 private:
  const TopoIndex *index_;
};

// name: one of placement_policy_names(). ix and view must outlive the policy. nullptr if unknown.
std::unique_ptr<PlacementPolicy> make_placement_policy(const std::string &name, const TopoIndex &ix,
                                                       const SlurmFabricView &view);
// The policies that need no Slurm view of the fabric (first-fit, topoaware), e.g. in slurmctld,
// which builds none; nullptr for the others and unknown names. ix must outlive the policy.
std::unique_ptr<PlacementPolicy> make_placement_policy(const std::string &name, const TopoIndex &ix);
const std::vector<std::string> &placement_policy_names();

}  // namespace topoaware
