// SPDX-License-Identifier: GPL-2.0-or-later
// The decisions of `topoaware defrag`: which moves would put layout jobs back on their ideal
// blocks. Input is plain values (the topology index, the free nodes, the running and waiting
// layout jobs with their rank orders, spans, costs and opt-in, and a few per-job times); nothing
// here knows of Slurm, its commands or any output format (report/defrag.hpp builds the input from
// `topoaware show`'s model and prints the plan). A move is what Slurm can do honestly: the job
// checkpoints on its signal, is requeued, and the select plugin places it again. Every placement
// here is the engine's (placement.hpp) run on the free set the move would leave, with the job's
// own mode, so the plan predicts what select/cons_tres_topoaware will do, not a wish.
//
//  (a) running layout jobs above their ideal span (PlaceQuality::ideal() false) for which an ideal
//      block exists now (the free nodes and the job's own), or after one other running layout job
//      is moved first (that job re-placed where the engine would put it, no worse than it is now);
//  (b) pending layout jobs that are strict or large (at least a leaf group of nodes) and held by
//      fragmentation (enough free nodes, no ideal block): the single moves of running layout jobs
//      that would free the most aligned capacity (free nodes in whole segments of the waiting job),
//      best first, and whether the waiting job could then start on an ideal block.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cost.hpp"
#include "layout.hpp"
#include "placement.hpp"
#include "rank_order.hpp"

namespace topoaware {

// A job's time as the scheduler reports it: -1 when unknown or unlimited.
struct DefragJobTimes {
  int64_t time_left = -1;  // seconds to its time limit
  int64_t run_time = -1;   // seconds since its (last) start
  uint32_t restarts = 0;   // requeues so far
  int requeue = -1;        // the scheduler may requeue it: 1, 0, -1 unknown
  bool batch = true;       // a batch job (only those can be requeued)
};

struct DefragParams {
  double comm_fraction = 0.3;    // f of the cost model
  size_t moves_per_waiting = 3;  // (b): best moves listed per waiting job
  size_t max_partners = 256;     // (a): other jobs tried as the enabling move, per job
};

// What the job itself asked for about being moved (its status-file entry).
struct DefragOptIn {
  bool known = false;        // the job has a status entry at all
  bool migrate = false;      // --topo-migrate
  bool requeue = false;      // requeueable as the plugin saw it (used when times.requeue < 0)
  uint32_t signal = 0;       // its checkpoint signal (0: none)
  uint32_t signal_time = 0;  // seconds before the end it is sent
  bool signal_batch = false; // sent to the batch shell only
};

// A running layout job the engine can place again.
struct DefragRunning {
  uint32_t job_id = 0;
  Layout layout;
  std::vector<int> hosts;  // topology hosts it holds (any order)
  std::vector<int> order;  // rank order in use (node k holds ranks k*G..); not empty
  PlaceQuality span;       // over order
  JobCost cost;            // over order
  bool strict = false;     // its mode (placed again in it)
  DefragOptIn opt;
  uint32_t gpus_per_node() const { return order.empty() ? 0 : uint32_t(layout.world() / order.size()); }
};

// A pending layout job.
struct DefragPending {
  uint32_t job_id = 0;
  Layout layout;
  uint32_t gpus_per_node = 0;
  std::string mode;           // its mode's name, "strict" or "prefer"
  int64_t waiting_since = 0;  // 0 unknown
};

struct DefragInput {
  const TopoIndex *index = nullptr;
  CostParams cost;
  std::vector<int> free;               // hosts free now (whole nodes), any order
  std::vector<DefragRunning> running;  // the order of partners tried and of moves listed
  std::vector<DefragPending> pending;
  std::map<uint32_t, DefragJobTimes> times;  // by job id (missing: unknown)
};

// Why a job may or may not be moved by --apply ("" when it may).
std::string defrag_refusal(const DefragOptIn &opt, const DefragJobTimes &times);

// One move: requeue `job_id` (after its checkpoint signal) and let the select plugin place it again.
struct DefragMove {
  uint32_t job_id = 0;
  std::vector<int> from;  // its nodes now (rank order)
  std::vector<int> to;    // where the engine places it after the move (rank order)
  PlaceStatus predicted = PlaceStatus::NoNodes;
  PlaceQuality span_now, span_after;
  JobCost cost_now, cost_after;
  double slowdown_now = 1, slowdown_after = 1;
  // Cost of the move: the job's remaining time, its run time since the last start, restarts;
  // checkpoint age: the run time when it was restarted before (it resumed from a checkpoint then),
  // -1 unknown; checkpoint window: its --signal time (s).
  int64_t time_left = -1, run_time = -1, checkpoint_age = -1;
  uint32_t restarts = 0, signal = 0, signal_time = 0;
  bool signal_batch = false;
  // Gain: estimated seconds saved over the remaining time, time_left * (1 - after/now) (0 if the
  // time left is unknown), from the cost model's slowdown.
  double gain_seconds = 0;
  bool migratable = false;  // --apply may do it (opted in, requeueable, a signal)
  std::string refusal;      // why not, when !migratable
};

// (a) A running job above its ideal span and the moves that put it on an ideal block.
struct DefragRelocation {
  uint32_t job_id = 0;
  std::vector<DefragMove> steps;  // 1 move (ideal block free now) or 2 (the enabling move first)
  bool now() const { return steps.size() == 1; }
  double gain_seconds() const;
  bool applicable() const;  // every step migratable
};

// (b) A waiting job held by fragmentation and the single moves that help it most.
struct DefragFreeing {
  DefragMove move;
  uint32_t aligned_before = 0, aligned_after = 0;  // free nodes in whole segments of the waiting job
  bool starts_ideal = false;                       // the waiting job then has an ideal block
};
struct DefragWaiting {
  uint32_t job_id = 0;
  uint32_t nodes = 0;
  std::string mode;    // strict | prefer
  bool large = false;  // at least a leaf group of nodes
  uint32_t segment_nodes = 0;
  int64_t waiting_since = 0;  // 0 unknown
  uint32_t aligned_now = 0;
  std::vector<DefragFreeing> moves;  // best first
};

struct DefragPlan {
  std::vector<DefragRelocation> relocations;  // by gain, best first
  std::vector<DefragWaiting> waiting;         // in the input's order
  std::vector<std::string> notes;
  uint32_t above_ideal = 0;  // running layout jobs above their ideal span
  uint32_t free_nodes = 0;
};

// The plan. Never throws for odd inputs (a job whose layout or nodes do not fit is left out with
// a note).
DefragPlan plan_defrag(const DefragInput &in, const DefragParams &params = {});

// The move --apply would do first: the first step of the best applicable relocation, else the best
// applicable move of a waiting job that lets it start ideally. nullptr if none.
const DefragMove *defrag_next_move(const DefragPlan &plan);

}  // namespace topoaware
