// SPDX-License-Identifier: GPL-2.0-or-later
// The network traffic of one training step of a job: which NIC port sends how many bytes to which,
// phase by phase, from its parallel layout and its nodes in rank order. The network judge
// (bench/netsim) simulates these flows; `topoaware plan --flows` lists those that leave a leaf and
// the cables they take. No routing here: which cables a flow crosses is the fabric's business
// (route_trace.hpp when topology.json has the forwarding tables).
#pragma once

#include <cstdint>
#include <vector>

#include "layout.hpp"
#include "topology.hpp"

namespace topoaware {

// A job as the traffic sees it: its layout, its nodes in rank order (node k holds ranks k*G ..
// k*G+G-1) and its bytes per step.
struct StepJob {
  Layout layout;
  std::vector<int> nodes;  // topology host indices, in rank order
  double dp_bytes = 0;     // S: gradient bytes per rank all-reduced over its DP ring per step
  double pp_bytes = 0;     // bytes per rank sent over each PP boundary per step, each direction
  double ep_bytes = 0;     // bytes per rank in the EP all-to-all per step (0: none)
  // S_tp: bytes per rank all-reduced over its TP group per step (Megatron's activation all-reduces,
  // or their all-gather + reduce-scatter pairs under sequence parallelism). 0: none. They leave
  // NVLink only when a TP group spans nodes that are not in one NVLink domain.
  double tp_bytes = 0;
};

// One point-to-point transfer between two NIC ports of two different hosts.
struct Flow {
  int src_host = 0, src_port = 0;  // port: index into Host::ports
  int dst_host = 0, dst_port = 0;
  double bytes = 0;
};

// Phases run one after the other inside a step; the flows of a phase run at once. TP comes last in
// the numbering (not in time: see job_traffic) so that the indices of the others stay as they were.
enum class TrafficPhase : uint8_t { PP = 0, EP = 1, DP = 2, TP = 3 };
inline constexpr int kTrafficPhases = 4;
const char *phase_name(TrafficPhase p);

struct JobTraffic {
  std::vector<Flow> phase[kTrafficPhases];
  // Every DP ring, members in ring order: entry i is the index in phase[DP] of the flow from member
  // i to member i+1, or -1 when both are on one node (a lock-step ring simulation follows these).
  std::vector<std::vector<int>> rings;
  uint32_t ring_steps = 0;  // 2(d-1)
};

// The step traffic of a job. DP: every ring edge between ranks on different nodes is one flow of
// 2(d-1)/d * S (the bandwidth term of ring all-reduce: 2(d-1) steps of S/d). PP: each boundary
// between consecutive stages, one flow forward and one backward of pp_bytes. EP: each member of an
// expert group sends ep_bytes/ep to every other member. TP: one ring per (cp, dp, pp) over the
// tp ranks in tp order, every edge between nodes one flow of 2(t-1)/t * tp_bytes (ring
// all-reduce, as DP). Traffic inside a node, and between two nodes of one multi-node NVLink
// domain (Host::nvlink_domain, GB200/GB300 NVL72), goes over NVLink and is left out. A GPU's traffic arrives on NIC port floor(g * R / G) of its node (g = local GPU index,
// R = the node's ports, G = GPUs per node): NCCL's per-NIC rings on multi-NIC nodes; it leaves
// through the source node's NIC of the same index (NCCL's PXN) when both nodes have R ports, else
// through floor(g * R / G) of the source. Throws std::runtime_error for a host without NIC ports,
// LayoutError when the nodes do not fit the layout.
JobTraffic job_traffic(const Topology &topo, const StepJob &job);

}  // namespace topoaware
