// SPDX-License-Identifier: GPL-2.0-or-later
// bench/netsim: the network judge's model, without SimGrid (see bench/netsim/README.md).
//  - Snapshot: the jobs running at one moment, each with its layout, its nodes in rank order and
//    its bytes per step (JSON, schema "topoaware-netsim/1").
//  - Traffic: the flows of one training step of a job, in phases (PP, EP, DP) whose flows run at
//    once; a phase ends when its last flow ends and the next one starts then (corelib/traffic.hpp).
//  - Fabric: every NIC port and every switch-to-switch cable of topology.json as a split-duplex
//    link, under three routing models: "adaptive" (interchangeable switches of a level merged, and
//    all cables between them one link of their summed bandwidth: the perfect-spraying bound),
//    "dmodk" (a synthetic static D-mod-K: one path per destination chosen from its index in
//    topology.json, every cable its own link) and "as-routed" (every flow through the forwarding
//    tables the subnet manager programmed, recorded in topology.json: every cable its own link).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "layout.hpp"
#include "moe_draw.hpp"
#include "rank_order.hpp"
#include "route_trace.hpp"
#include "topology.hpp"
#include "traffic.hpp"

namespace topoaware::netsim {

// A job of a snapshot: its name and what the traffic needs (corelib/traffic.hpp).
struct SnapshotJob : StepJob {
  std::string name;
};

struct Snapshot {
  std::vector<SnapshotJob> jobs;
  int64_t seed = -1;  // the snapshot's "seed" field (placement_sim's trace seed), -1 when absent
};

// Parses a snapshot (see README.md for the format); host names are looked up in the topology;
// "order": "topoaware" re-orders a job's nodes with RankOrderer, "topoaware-neighbours" the same
// counting the ring edges of the jobs before it so ordered (RankOrderer::set_neighbour_edges).
// Throws std::runtime_error.
Snapshot snapshot_from_json(const std::string &text, const TopoIndex &index);

// The step traffic of a job (Flow, JobTraffic, job_traffic) is corelib's (traffic.hpp).
using Phase = TrafficPhase;
inline constexpr int kPhases = kTrafficPhases;

enum class Routing : uint8_t { Adaptive = 0, DModK = 1, AsRouted = 2 };
inline constexpr int kRoutings = 3;
// "adaptive", "dmodk", "as-routed": the keys of the JSON output and of --routing.
const char *routing_name(Routing r);
// For people: "dmodk (synthetic)" says that D-mod-K's paths are a model, not the fabric's tables.
const char *routing_label(Routing r);
// Throws std::invalid_argument on a name that is none of routing_name's.
Routing routing_from_name(const std::string &name);

// A link of the simulated fabric: one NIC cable (host side), one switch-to-switch cable (D-mod-K)
// or all cables between two switch groups (adaptive). Directions: "up" = from the host, or from
// the lower-level switch, towards the other end.
struct NetLink {
  std::string name;
  double bytes_per_s = 0;
};
struct Hop {
  int link = 0;
  bool up = true;
};

// The routed fabric. D-mod-K: the nodes of the routing graph are the switches, every cable its
// own link. Adaptive: switches of the same level that reach exactly the same leaves going down
// (the spines of a 2-level tree, the spines of one pod, the cores) are one node, and all cables
// between two nodes one link of their summed bandwidth: the bound of perfect adaptive routing or
// packet spraying (with equal cables it equals spraying every flow evenly over the spines).
// A fabric with cables between switches of one level (a dragonfly: routers of a group linked to
// each other, groups by global cables) has no up and down: it is routed by shortest (minimal)
// paths between switches. D-mod-K: at each switch, of the cables on a shortest path, cable
// floor(d / K1..K(i-1)) mod Ki. Adaptive: the parallel cables between two switches are one link,
// and each flow is split evenly over its shortest paths (minimal adaptive routing; the non-minimal
// Valiant detours of UGAL are not modelled, so a hot pair of groups is not relieved through a third).
//
// As-routed: every cable its own link (as under D-mod-K), and a flow takes the path its packets
// take through the forwarding tables recorded in topology.json (Topology::routes, RouteTracer), to
// the destination port's base LID. The topology must carry routes; a flow the tables do not
// deliver is an error.
class FabricModel {
 public:
  FabricModel(const Topology &topo, Routing routing);
  Routing routing() const { return routing_; }
  const std::vector<NetLink> &links() const { return links_; }
  // The paths from f's source NIC port to its destination's, each carrying an equal share of the
  // bytes: one path, except under adaptive routing on a fabric with cables inside a level (a
  // dragonfly), where the flow is sprayed evenly over its shortest paths (at most kMaxParts of
  // them, spread over all). Throws std::runtime_error if the fabric has no route.
  void route(const Flow &f, std::vector<std::vector<Hop>> &paths) const;
  static constexpr size_t kMaxParts = 16;
  // The fabric has cables between switches of one level: routed by shortest paths, not up/down.
  bool flat() const { return flat_; }
 private:
  struct Cable;
  // The constructor's steps (model.cpp says what each decides).
  void add_nic_links(const char *prefix);
  std::vector<Cable> switch_cables(std::vector<std::vector<int>> &sw_down);
  void add_routed_cables(const std::vector<Cable> &cables, const char *prefix);
  void add_flat_links(const std::vector<Cable> &cables, const char *prefix);
  void build_tree(const std::vector<Cable> &cables, const std::vector<std::vector<int>> &sw_down, const char *prefix);
  void tree_nodes(const std::vector<std::vector<int>> &sw_down, std::vector<int> &node_level,
                  std::vector<std::string> &node_name);
  void tree_links(const std::vector<Cable> &cables, const std::vector<std::string> &node_name, const char *prefix,
                  std::vector<std::vector<int>> &node_down);
  void route_as_routed(const Flow &f, std::vector<Hop> &out) const;
  // As-routed: the tracer over the recorded tables, and the link of the cable behind each switch
  // port, with the direction a packet leaving by that port crosses it.
  std::unique_ptr<RouteTracer> tracer_;
  std::unordered_map<uint64_t, Hop> port_link_;  // (switch << 8 | port) -> link
  struct Edge {      // one cable (D-mod-K) or one merged node pair (adaptive)
    int other = 0;   // node at the other end
    int link = 0;    // index into links_
    int port = 0;    // port on this switch (orders parallel cables)
    bool up = true;  // shortest-path routing: this way is the link's "up" direction
  };
  void build_flat(const std::vector<std::vector<Edge>> &adj);
  void route_flat(int src, int dst, uint64_t d, std::vector<std::vector<Hop>> &paths) const;
  const std::vector<int> &distances_to(int sw) const;
  const Topology *topo_;
  Routing routing_;
  std::vector<NetLink> links_;
  std::vector<std::vector<int>> nic_link_;    // [host][port] -> link
  std::vector<int> node_;                     // switch -> node of the routing graph
  std::vector<std::vector<Edge>> up_, down_;  // per node, sorted by (other, port)
  std::vector<std::vector<char>> below_;      // [node][node]: reachable going down
  bool reaches(int n, int leaf) const { return n == leaf || below_[size_t(n)][size_t(leaf)]; }
  // Shortest-path routing (flat_): every switch its own node, adj_ per switch sorted by (other,
  // port); hop counts to a destination switch, computed once per destination.
  bool flat_ = false;
  std::vector<std::vector<Edge>> adj_;
  mutable std::map<int, std::vector<int>> dist_to_;
};

// Today's traffic (--traffic today, bench/netsim/README.md "Traffic like today's"): the job's
// model is the largest of model_sizes() whose training state fits its GPUs, the jobs whose layout
// has ep > 1 (a share of them, drawn with the workload: moe_draw.hpp) are mixture-of-experts models
// with an expert all-to-all, and each job's communication starts at a random phase of its step.
// Every draw is a function of (seed, job name) only, so the same trace job gets the same model, MoE
// choice and phase under every placement policy (paired comparison).
struct ModelSize {
  const char *name;
  double dense_params;   // parameters sharded over tp*pp only (attention, embeddings, dense MLPs)
  double expert_params;  // parameters sharded over tp*pp*ep as well (MoE experts; 0 for dense)
  uint32_t layers;
  uint32_t top_k;        // experts per token (MoE)
};
// Dense models first (ascending), then MoE models (ascending).
const std::vector<ModelSize> &model_sizes();
struct TodayParams {
  double gpu_bytes = 80e9;        // HBM per GPU (H100/A100-80G class)
  double state_share = 0.75;      // of it for parameters, gradients and optimizer state
  double bytes_per_param = 16;    // bf16 weights 2 + bf16 grads 2 + fp32 master 4 + Adam m, v 8
  double comm_fraction = 0.3;     // communication time / step time
};
// Training-state bytes per GPU of model m under layout l with expert parallelism ep.
double state_bytes_per_gpu(const ModelSize &m, const Layout &l, uint32_t ep);
// The largest model of the kind (dense or MoE) whose state fits l's GPUs; nullptr if none fits.
const ModelSize *largest_fitting(const Layout &l, uint32_t ep, bool moe, const TodayParams &p = {});
// The step of a job under today's traffic: bytes and layout (ep) rewritten, and the phase in
// [0, 1) of its step at which its communication starts.
struct TodayJob {
  bool moe = false;
  const ModelSize *model = nullptr;  // nullptr: nothing fits (bytes left as the snapshot gave them)
  double phase = 0;
};
// pp_bytes (the snapshot's per-boundary activations per step) stays; dp_bytes becomes the bf16
// gradients of the model's shard; a job whose layout has ep > 1 (the user's expert-parallel size,
// drawn with the workload: moe_draw.hpp) is a MoE model when one of that ep fits, and gets
// ep_bytes = dispatch + combine, forward + backward, top_k copies of the stage's activations in
// each of its layers/pp MoE layers.
TodayJob apply_today(SnapshotJob &job, uint64_t seed, const TodayParams &p = {});

}  // namespace topoaware::netsim
