// SPDX-License-Identifier: GPL-2.0-or-later
// The model of `topoaware show` (show.hpp is the public entry): what Slurm reports about jobs and
// nodes (plain values: the command gathers them with squeue and sinfo; nothing here talks to
// Slurm), the select plugin's status file (status.hpp, may be missing) and a Topology, read into
// node states, jobs with their leaf groups, rank orders and costs, and free blocks per leaf group
// and pod.
//
// The model answers: which job holds which nodes of which leaf group (and pod), which nodes are
// free and how much free capacity each leaf group and pod still has in one piece, which layout
// jobs wait and why (the plugin's reason beside Slurm's), and for each layout job its span and
// cost against its ideal, computed exactly as `topoaware plan` does (job_report.hpp, cost.hpp)
// over the rank order its tasks use: the node order the plugin recorded, checked against the rank
// order function over the job's node set (rank_order.hpp) and the topology file given.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost.hpp"
#include "layout.hpp"
#include "placement.hpp"
#include "rank_order.hpp"
#include "status.hpp"
#include "topology.hpp"

namespace topoaware {

// A job as Slurm lists it (squeue).
struct SlurmJob {
  uint32_t job_id = 0;
  std::string state;      // RUNNING, PENDING, COMPLETING, ... (squeue %T)
  std::string user, name, partition;
  uint32_t node_count = 0;  // nodes held, or asked for while pending
  std::string nodes;      // Slurm host list of the nodes it holds; "" while pending
  std::string reason;     // Slurm's reason (squeue %r): Resources, Priority, None, ...
};

// A node as Slurm lists it (sinfo -N %T): state in Slurm's long lower-case form, with its
// suffix if any ("idle", "mixed", "allocated", "down*", "drained", "idle~", ...).
struct SlurmNode {
  std::string name;
  std::string state;
  std::string reason;  // why it is down/drained, "" otherwise
};

// What a node can take now.
enum class NodeUse : uint8_t {
  Free,         // idle
  Mixed,        // some of it allocated (shared nodes)
  Allocated,    // allocated or completing
  Planned,      // idle but held by backfill for a pending job ("planned"); counted as free
  Unavailable,  // down, drained, draining, failing, powered down, reserved, ...
  Unknown,      // in the topology but not reported by Slurm
};
const char *node_use_name(NodeUse u);
NodeUse node_use_of(const std::string &slurm_state);

struct ShowInput {
  std::string topology_file;           // for messages and output
  const Status *status = nullptr;      // nullptr: the status file is not available
  std::string status_file;             // its path ("" if none is known)
  std::string status_problem;          // why it is not available: shown with what to do
  std::vector<SlurmJob> jobs;
  std::vector<SlurmNode> nodes;
  CostParams cost;                     // comm_fraction used for the slowdown
  int64_t now = 0;                     // unix time, for ages
};

enum class OrderCheck : uint8_t {
  NotApplicable,  // no layout known (or not placed)
  Match,          // the status file's node order equals the rank order of the node set
  Mismatch,       // it does not: the topology file may have changed
  Computed,       // no node order in the status file: the rank order of the node set is used
  Failed,         // the rank order cannot be computed (a node not in the topology, a bad layout)
};
const char *order_check_name(OrderCheck c);

struct ShowJob {
  SlurmJob slurm;
  bool holds_nodes = false;             // running (or completing, suspended): nodes non-empty
  std::vector<int> hosts;               // topology hosts it holds, natural name order
  std::vector<std::string> outside;     // nodes it holds that are not in the topology
  std::optional<StatusJob> status;      // its entry in the status file
  bool has_layout = false;              // a layout parsed from the status entry
  Layout layout;
  std::string layout_error;             // the status entry's layout does not parse/fit
  std::vector<int> order;               // rank order in use (node k holds ranks k*G..)
  std::vector<int> computed;            // rank order of the node set over this topology
  OrderCheck order_check = OrderCheck::NotApplicable;
  bool has_cost = false;
  JobCost cost;                         // over `order`
  JobCost slurm_order_cost;             // the same nodes in Slurm's node order (node-index order)
  PlaceQuality span;                    // over `order`
  std::vector<std::pair<int, uint32_t>> leaf_groups;  // (leaf group, nodes held), by leaf group
  std::vector<std::string> notes;       // inconsistencies found, one sentence each
  uint32_t gpus_per_node() const { return has_layout && !order.empty() ? uint32_t(layout.world() / order.size()) : 0; }
};

struct ShowNode {
  NodeUse use = NodeUse::Unknown;
  std::string state;                    // Slurm's text ("" if unknown)
  std::string reason;
  std::vector<uint32_t> jobs;           // ids of jobs holding it
};

struct ShowLeafGroup {
  int index = 0, pod = 0;
  std::vector<std::string> leaves;      // switch names (one per rail on rail-optimized fabrics)
  std::vector<int> hosts;
  // free: idle nodes, planned ones included (nothing runs there); planned: of those, the ones
  // backfill holds for a pending job.
  uint32_t free = 0, mixed = 0, allocated = 0, planned = 0, unavailable = 0, unknown = 0;
  std::vector<int> free_hosts;          // idle (and planned) nodes: the free block of this leaf group
};

struct ShowPod {
  int index = 0;
  uint32_t hosts = 0, free = 0;
  uint32_t largest_free_block = 0;      // most free nodes in one leaf group of the pod
  uint32_t whole_free_groups = 0;       // leaf groups with every node free
};

// A congested cable direction as `topoaware monitor --format json` reported it, for show
// --congestion: the sending switch port, where the cable leads, and the jobs behind it.
struct HotCable {
  int sw = -1, port = 0;           // the switch port that sends
  int peer_sw = -1, peer_host = -1;  // the other end: a switch, or a host
  int peer_port = 0;
  double utilization = 0, wait_ratio = 0;
  std::vector<uint32_t> jobs;      // layout jobs whose flows take it, most bytes first
  std::vector<uint32_t> unknown_jobs;
};

struct ShowModel {
  std::shared_ptr<const Topology> topo;  // a copy, at a fixed address: the index points into it
  std::unique_ptr<TopoIndex> index;
  std::string topology_file;
  std::string status_file, status_problem;
  std::optional<Status> status;
  bool hash_mismatch = false;           // the status file's topology hash is not this topology's
  CostParams cost;
  int64_t now = 0;
  std::vector<ShowNode> nodes;          // per topology host
  std::vector<ShowLeafGroup> leaf_groups;
  std::vector<ShowPod> pods;
  std::vector<ShowJob> jobs;            // holding nodes, by id
  std::vector<ShowJob> waiting;         // not holding nodes (pending), by id
  std::vector<SlurmNode> outside;       // Slurm nodes that are not in the topology
  std::vector<uint32_t> status_only;    // status entries for jobs Slurm does not list (ended)
  uint32_t free = 0, mixed = 0, allocated = 0, planned = 0, unavailable = 0, unknown = 0;
  uint32_t largest_free_block = 0;      // most free nodes in one leaf group
  int largest_free_group = -1;
  std::vector<std::string> notes;       // about the whole picture (status file, topology)
  std::string congestion_file;          // show --congestion: the monitor report read
  double congestion_interval = 0;
  std::vector<HotCable> hot;            // its congested directions

  const ShowJob *find(uint32_t job_id) const;
};

// Builds the model; never throws for inconsistent inputs (they become notes), only for bad
// arguments (std::invalid_argument: a host list that does not parse).
ShowModel build_show(const Topology &topo, const ShowInput &in);

// One node of a job's rank map.
struct RankMapRow {
  uint32_t node_rank = 0;
  int host = -1;
  uint64_t first_rank = 0, last_rank = 0;
  // Values of each coordinate over the node's ranks, e.g. "0-7", "1", "0,2".
  std::string tp, cp, ep, dp, pp;
};
std::vector<RankMapRow> rank_map(const ShowJob &job);

// True if something about the job says its ranks may not be where the file says: the status
// file's node order differs from the rank order of the node set, or the status file was written
// against another topology (for the command's exit status).
bool job_order_disagrees(const ShowModel &m, uint32_t job_id);

}  // namespace topoaware
