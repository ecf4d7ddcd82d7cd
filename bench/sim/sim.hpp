// SPDX-License-Identifier: GPL-2.0-or-later
// Trace-driven placement simulator: one synthetic trace, one scheduler (FCFS + EASY backfill),
// several node-selection policies, each run on its own copy of the cluster with the same trace.
//
// Workload (make_trace): tp = 8 on 8-GPU nodes (whole nodes, exclusive), nodes log-uniform in
// [1, cluster/4], pp uniform in {1, 2, 4, 8, 16} (<= nodes), dp = round(nodes / pp) (>= 1), so
// nodes = dp * pp; base runtimes log-uniform in [300 s, 12 h]; Poisson arrivals whose rate makes
// the offered load (sum of nodes * base runtime / (cluster nodes * trace span)) equal `load`.
// (bench/sim/replay_trace.hpp holds the other workload: the real replays' traces, with pinned jobs
// and time limits.) Runtimes: the scheduler plans with TraceJob::planned(), the time limit when the
// trace has one, else the base runtime exactly (requested = base); with `stretch`, the
// job actually runs base * slowdown(f) under the rank order the policy really uses (Slurm
// policies: node-index order; topoaware: its rank order), f = `stretch_f`, so placement feeds
// back into the schedule; the scheduler does not know the stretch (its estimate stays the base).
//
// Scheduler (identical for every policy): jobs in arrival order; the head job starts as soon as
// its policy places it; otherwise it gets a reservation: the shadow time is when enough NODES
// (by count, topology-blind, from the running jobs' estimated ends) are free, the extra nodes are
// those free at the shadow time beyond its need; a later job (up to `backfill_depth` of them)
// starts now if its policy places it and it either ends by the shadow time or fits in the extra
// nodes (which it then consumes). A policy may refuse a placement although enough nodes are free
// (Slurm --switches before its wait is over, topology/block, topoaware strict): the job then waits
// for the next event; policies with a wait limit get a retry event when it expires.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "cost.hpp"

namespace topoaware::sim {

struct TraceJob {
  int id = 0;
  double arrival = 0;
  double runtime = 0;  // base runtime (s)
  int nodes = 0;
  Layout layout;
  double estimate = 0;  // the time limit the scheduler plans with (s); 0: the base runtime
  int pinned = -1;      // >= 0: starts on this host at its arrival, outside the queue and policy
  bool plain = false;   // no layout: topoaware passes it to Slurm's own selection; no network traffic
  double planned() const { return estimate > 0 ? estimate : runtime; }
};

std::vector<TraceJob> make_trace(int cluster_nodes, int jobs, double load, uint64_t seed);
// The workload on 4-GPU trays in NVL72 NVLink domains: as make_trace (nodes log-uniform in
// [1, cluster/4], pp uniform in {1, 2, 4, 8, 16}, runtimes, arrivals), but tp = 4 (one tray) for
// half of the jobs and tp = 8, 16, 32, 64 (2, 4, 8, 16 trays of one domain) for an eighth each:
// multi-node TP is what the NVL72 is bought for, while fine-tuning and small models keep to a tray.
// A TP group is whole: a job has at least tp / 4 nodes, nodes = (tp / 4) * pp * dp.
std::vector<TraceJob> make_trace_nvl(int cluster_nodes, int jobs, double load, uint64_t seed);

// A node-selection policy. select() gets the free nodes and the job; returns true with the chosen
// hosts in `out` (in the rank order the job would run with: node-index order for Slurm-like
// policies), or false to leave the job pending now. `waited`: seconds since the job was first
// evaluated. retry_after(): seconds of waiting after which a refusal turns into an acceptance
// (0: none), so the scheduler can wake up then.
class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  virtual bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double waited,
                      std::vector<int> &out) = 0;
  virtual double retry_after() const { return 0; }
  virtual bool native_topo_order() const { return false; }  // out is topoaware's rank order
  // The select plugin's ring book: each job's rank order is decided again when it starts, on its
  // nodes, counting the ring edges of this policy's jobs still running (corelib RingEdgeBook), and
  // its own edges are taken off when it ends. Only for a policy whose hosts are c.index's.
  virtual bool books_rings() const { return false; }
};

struct PolicySpec {
  std::string kind;       // firstfit, random, slurm-tree, slurm-tree-switches, slurm-block,
                          // slurm-block-segment, topoaware, topoaware-strict, topoaware-nodomain
  double wait = 0;        // --switches=N@wait / strict max wait (s)
};
std::unique_ptr<Policy> make_policy(const Cluster &c, const PolicySpec &spec, uint64_t seed);
std::vector<PolicySpec> default_policies();

// A running multi-node or single-node job at a snapshot instant: its nodes in the rank order the
// policy runs it with (Slurm policies: node-index order; topoaware: its RankOrderer order) and
// the cost model's score of that order.
struct SnapshotJob {
  int id = 0;
  const std::vector<int> *order = nullptr;
  double hop_bytes = 0, ideal_hop_bytes = 0, ratio = 1;
};
using SnapshotHook = std::function<void(int index, double time, const std::vector<SnapshotJob> &running)>;

struct SimOptions {
  bool stretch = true;
  double stretch_f = 0.3;
  int backfill_depth = 100;
  CostParams cost;
  // The window the results are taken over; both < 0: the arrivals of jobs 10%..90%.
  double window_lo = -1, window_hi = -1;
  // Schedule states to hand to on_snapshot: the running set at each of these instants (ascending;
  // the same instants for every policy, so every policy is judged on the same moments of the trace).
  std::vector<double> snapshot_times;
  SnapshotHook on_snapshot;
  // false: a books_rings() policy runs each job in its order alone, as the engine placed it.
  bool ring_book = true;
};

// Per placed job, both rank orders.
struct JobRecord {
  int id = 0, nodes = 0;
  bool pinned = false;  // not scheduled: left out of the summary
  double arrival = 0, start = 0, end = 0, runtime = 0;  // runtime = base
  bool ideal_slurm = false, ideal_topo = false;
  double hop_slurm = 0, hop_topo = 0, ideal_hop = 0;    // per step
  double spine_slurm = 0, spine_topo = 0;
  double ratio_slurm = 1, ratio_topo = 1, ratio_native = 1;
};

struct SimResult {
  std::string policy;
  std::vector<JobRecord> jobs;  // by id
  double window_lo = 0, window_hi = 0;
  double busy_node_seconds = 0;       // inside the window
  double useful_node_seconds = 0;     // the same, each job weighted by base / actual runtime
  double free_block_node_seconds = 0; // integral of the largest free aligned block, in the window
  double decision_seconds = 0;        // wall time inside select()
  long decisions = 0;
};

// Runs the trace through one policy. optimum_hook: called before each successful placement with
// the free set and the job (for the exact optimum on small instances); may be empty.
using DecisionHook = void (*)(void *ctx, const Cluster &c, const std::vector<uint8_t> &free, const TraceJob &job,
                              const std::vector<int> &chosen, bool native_topo);
SimResult simulate(const Cluster &c, const std::vector<TraceJob> &trace, Policy &policy, const SimOptions &opt,
                   DecisionHook hook = nullptr, void *hook_ctx = nullptr);

// Largest free aligned block, in nodes: the largest run of 2^k consecutive whole free leaf
// groups starting at a multiple of 2^k (blocks as topology/block aggregates them), else the most
// free nodes in one leaf group.
int largest_free_aligned_block(const Cluster &c, const std::vector<uint8_t> &free);

// The scored summary of one run.
struct Summary {
  std::string policy;
  int multi_node_jobs = 0;
  double ideal_rate_slurm = 0, ideal_rate_topo = 0;   // of multi-node jobs in the window
  double hop_slurm = 0, hop_topo = 0, hop_ideal = 0;  // sum of per-step hop-bytes * base runtime
  double spine_slurm = 0, spine_topo = 0;
  double slowdown_native[3] = {0, 0, 0};              // f = 0.1, 0.3, 0.5; node-seconds weighted
  double slowdown_topo[3] = {0, 0, 0};
  double utilization = 0;
  double wait_mean = 0, wait_p95 = 0, bsld_mean = 0;
  double free_block_mean = 0;
  double decision_us = 0;
  int jobs_in_window = 0;
};
Summary summarize(const SimResult &r);

}  // namespace topoaware::sim
