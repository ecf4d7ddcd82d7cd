// SPDX-License-Identifier: GPL-2.0-or-later
// Cost model of a placed job (for `topoaware plan`, `topoaware show` and the benchmark; not on
// the scheduler's hot path). For an ordered node list (rank_order.hpp) and a layout:
//  - span of every DP ring and PP chain: nodes, leaf groups and pods, against the ideal
//    ceil(group nodes / nodes per leaf group) leaf groups and ceil(group nodes / nodes per pod) pods;
//  - bytes per step that top out at each level: 0 inside a node (NVLink), 1 through a leaf group,
//    2 through a spine (inside a pod; the top of a 2-level tree), 3 above the pods;
//  - hop-bytes weighted by each level's oversubscription, against the same job placed ideally;
//  - the estimated step time: runtime' = runtime * (1 + f * (cost / ideal - 1)).
//
// Traffic model and its sources:
//  - DP: ring all-reduce; each member sends 2(d-1)/d * S bytes to its ring successor per step
//    (S = gradient bytes per rank, d = ring size): Patarasuk & Yuan, "Bandwidth optimal all-reduce
//    algorithms for clusters of workstations", JPDC 69(2), 2009; NCCL's performance notes use the
//    same 2(n-1)/n factor for all-reduce bus bandwidth. The ring visits members in dp order.
//  - PP: each boundary between consecutive stages carries, per micro-batch, the activations
//    forward and their gradients backward, both of size b*s*h values (1F1B schedule, Narayanan et
//    al., "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC'21);
//    with Megatron's scatter/gather optimization (same paper, sec. 4.1) each of the TP ranks sends
//    1/tp of it, which is how it is counted here (per rank, per direction: b*s*h*bytes / tp).
//  - TP stays inside a node (validated); CP and EP traffic are not modelled (see known gaps).
//  - A path that tops out at level l crosses 2l links; the host links weigh 1 and a link above a
//    level-j switch weighs that level's median oversubscription (Topology::levels; 1 if unknown),
//    so hop-bytes grow where the fabric is thin.
//  - Degraded leaves: the two leaf uplinks of a path that leaves its leaf group (the one up from
//    the source's leaf, the one down into the destination's) weigh the level's oversubscription
//    times that leaf group's uplink factor, nominal / real uplink bandwidth from each cable's
//    width and speed (TopoIndex::leaf_group_uplink_factor: 2 for a leaf whose uplinks lost half
//    their bandwidth, 4x -> 2x or NDR -> HDR or half its cables gone). The ideal placement is
//    priced on healthy leaves, so a job across a degraded leaf costs more than the same span on
//    healthy ones; a job inside one leaf group never uses the uplinks and costs the same. A
//    fabric without degraded leaves (every factor 1) is priced exactly as before.
//  - f, the communication fraction of the step that placement can slow down, is a parameter:
//    0.3-0.5 is usual for large 3D-parallel training (docs/design.md, "Cost model").
#pragma once

#include <cstdint>
#include <vector>

#include "layout.hpp"
#include "placement.hpp"
#include "rank_order.hpp"

namespace topoaware {

struct CostParams {
  // Model size and shapes. Defaults: GPT-3 175B as trained in Narayanan et al. 2021 (hidden
  // 12288, sequence 2048); micro-batch 1 and 8 micro-batches per step are example values.
  double model_params = 175e9;
  double grad_value_bytes = 2;       // bf16 gradients
  double activation_value_bytes = 2; // bf16 activations
  double seq_len = 2048, hidden = 12288, micro_batch = 1;
  double micro_batches = 8;          // per step and pipeline
  double comm_fraction = 0.3;        // f

  double grad_bytes_per_rank(const Layout &l) const { return model_params * grad_value_bytes / (double(l.tp) * l.pp); }
  double activation_bytes(const Layout &l) const {
    return micro_batch * seq_len * hidden * activation_value_bytes / double(l.tp);
  }
};

struct GroupStats {
  uint32_t groups = 0;            // rings (DP) or chains (PP), counted once per distinct node pattern x tp
  uint32_t at_ideal = 0;          // groups on their ideal leaf groups and pods
  uint64_t leaf_groups = 0, ideal_leaf_groups = 0;  // sums over groups
  uint64_t pods = 0, ideal_pods = 0;
  double bytes[4] = {0, 0, 0, 0}; // per step, by top level of the path
  double hop_bytes = 0, ideal_hop_bytes = 0;
  double degraded_hop_bytes = 0;  // part of hop_bytes added by degraded leaf uplinks
};

struct JobCost {
  GroupStats dp, pp;
  double bytes[4] = {0, 0, 0, 0};
  double hop_bytes = 0, ideal_hop_bytes = 0;
  double degraded_hop_bytes = 0;  // part of hop_bytes added by degraded leaf uplinks
  double ratio = 1;  // hop_bytes / ideal_hop_bytes (1 when the ideal moves nothing)
  double slowdown(double f) const { return 1 + f * (ratio - 1); }
  double spine_bytes() const { return bytes[2] + bytes[3]; }
};

// ordered: the job's nodes in rank order (node k holds ranks k*G..), e.g. from RankOrderer or the
// placement engine; node-table order gives Slurm's own rank order. Throws LayoutError if the layout
// does not fit the node count.
JobCost job_cost(const TopoIndex &index, const std::vector<int> &ordered, const Layout &layout,
                 const CostParams &params);

// Span of an ordered node list (node k holds ranks k*G..): segments are consecutive runs of
// job_geometry(layout).segment_nodes nodes, each against its ideal ceil(segment / largest leaf
// group) leaf groups; the job against ceil(nodes / largest leaf group) leaf groups and
// ceil(nodes / largest pod) pods. For the engine's own order this equals PlaceResult::quality
// except fresh_groups and holes, which need the free set at decision time (left 0 here).
// Throws LayoutError if the layout does not fit the node count.
PlaceQuality job_span(const TopoIndex &index, const std::vector<int> &ordered, const Layout &layout);

// Weighted links of a path topping out at `level` (0: none), on healthy leaves.
double path_weight(const TopoIndex &index, int level);
// Weighted links of the path from host a to host b, the leaf uplinks by their real bandwidth.
double host_path_weight(const TopoIndex &index, int a, int b);
// Level at which a path from host a to host b tops out (0 if a == b).
int path_level(const TopoIndex &index, int a, int b);

}  // namespace topoaware
