// SPDX-License-Identifier: GPL-2.0-or-later
// bench/netsim: the network judge's model, without SimGrid (see bench/netsim/README.md).
//  - Snapshot: the jobs running at one moment, each with its layout, its nodes in rank order and
//    its bytes per step (JSON, schema "topoaware-netsim/1").
//  - Traffic: the flows of one training step of a job, in phases (PP, EP, DP) whose flows run at
//    once; a phase ends when its last flow ends and the next one starts then.
//  - Fabric: every NIC port and every switch-to-switch cable of topology.json as a split-duplex
//    link, under two routing models: "adaptive" (interchangeable switches of a level merged, and
//    all cables between them one link of their summed bandwidth: the perfect-spraying bound) and
//    "dmodk" (static D-mod-K: one path per destination, every cable its own link).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "layout.hpp"
#include "rank_order.hpp"
#include "topology.hpp"

namespace topoaware::netsim {

struct SnapshotJob {
  std::string name;
  Layout layout;
  std::vector<int> nodes;  // topology host indices, in rank order (node k holds ranks k*G..)
  double dp_bytes = 0;     // S: gradient bytes per rank all-reduced over its DP ring per step
  double pp_bytes = 0;     // bytes per rank sent over each PP boundary per step, each direction
  double ep_bytes = 0;     // bytes per rank in the EP all-to-all per step (0: none)
};

struct Snapshot {
  std::vector<SnapshotJob> jobs;
};

// Parses a snapshot (see README.md for the format); host names are looked up in the topology;
// "order": "topoaware" re-orders a job's nodes with RankOrderer. Throws std::runtime_error.
Snapshot snapshot_from_json(const std::string &text, const TopoIndex &index);

// One point-to-point transfer between two NIC ports of two different hosts.
struct Flow {
  int src_host = 0, src_port = 0;  // port: index into Host::ports
  int dst_host = 0, dst_port = 0;
  double bytes = 0;
};

enum class Phase : uint8_t { PP = 0, EP = 1, DP = 2 };
inline constexpr int kPhases = 3;
const char *phase_name(Phase p);

struct JobTraffic {
  std::vector<Flow> phase[kPhases];
  // Every DP ring, members in ring order: entry i is the index in phase[DP] of the flow from member
  // i to member i+1, or -1 when both are on one node. Used by the lock-step ring (--ring steps).
  std::vector<std::vector<int>> rings;
  uint32_t ring_steps = 0;  // 2(d-1)
};

// The step traffic of a job. DP: every ring edge between ranks on different nodes is one flow of
// 2(d-1)/d * S (the bandwidth term of ring all-reduce: 2(d-1) steps of S/d). PP: each boundary
// between consecutive stages, one flow forward and one backward of pp_bytes. EP: each member of an
// expert group sends ep_bytes/ep to every other member. Traffic inside a node (NVLink) is left
// out. A GPU's traffic arrives on NIC port floor(g * R / G) of its node (g = local GPU index,
// R = the node's ports, G = GPUs per node): NCCL's per-NIC rings on multi-NIC nodes; it leaves
// through the source node's NIC of the same index (NCCL's PXN) when both nodes have R ports, else
// through floor(g * R / G) of the source.
JobTraffic job_traffic(const Topology &topo, const SnapshotJob &job);

enum class Routing : uint8_t { Adaptive = 0, DModK = 1 };
inline constexpr int kRoutings = 2;
const char *routing_name(Routing r);

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

}  // namespace topoaware::netsim
