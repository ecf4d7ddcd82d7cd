// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware defrag: which moves would put layout jobs back on their ideal blocks. Works on the
// model of `topoaware show` (show_model.hpp: Slurm's jobs and nodes as plain values, the select
// plugin's status file, the topology) plus a few per-job times the command reads from Slurm; nothing
// here talks to Slurm or changes anything. A move is what Slurm can do honestly: the job
// checkpoints on its signal, is requeued, and the select plugin places it again. Every placement
// here is the engine's (placement.hpp) run on the free set the move would leave, with the job's own
// mode, so the plan predicts what select/cons_tres_topoaware will do, not a wish.
//
//  (a) running layout jobs above their ideal span (PlaceQuality::ideal() false) for which an ideal
//      block exists now (the free nodes and the job's own), or after one other running layout job
//      is moved first (that job re-placed where the engine would put it, no worse than it is now);
//  (b) pending layout jobs that are strict or large (at least a leaf group of nodes) and held by
//      fragmentation (enough free nodes, no ideal block): the single moves of running layout jobs
//      that would free the most aligned capacity (free nodes in whole segments of the waiting job),
//      best first, and whether the waiting job could then start on an ideal block.
// Free nodes are the idle ones (sinfo's idle and planned); shared (mixed) nodes are not counted.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost.hpp"
#include "placement.hpp"
#include "show_model.hpp"

namespace topoaware {

// What Slurm says about a job's time (scontrol show job): -1 when unknown or unlimited.
struct DefragJobTimes {
  int64_t time_left = -1;  // seconds to its time limit
  int64_t run_time = -1;   // seconds since its (last) start
  uint32_t restarts = 0;   // requeues so far
  int requeue = -1;        // Slurm may requeue it: 1, 0, -1 unknown
  bool batch = true;       // a batch job (only those can be requeued)
};

struct DefragParams {
  double comm_fraction = 0.3;    // f of the cost model
  size_t moves_per_waiting = 3;  // (b): best moves listed per waiting job
  size_t max_partners = 256;     // (a): other jobs tried as the enabling move, per job
};

// Why a job may or may not be moved by --apply ("" when it may).
std::string defrag_refusal(const ShowJob &job, const DefragJobTimes &times);

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
  int64_t waiting_since = 0;  // the status file's since (0 unknown)
  uint32_t aligned_now = 0;
  std::vector<DefragFreeing> moves;  // best first
};

struct DefragPlan {
  std::vector<DefragRelocation> relocations;  // by gain, best first
  std::vector<DefragWaiting> waiting;         // by job id
  std::vector<std::string> notes;
  uint32_t above_ideal = 0;  // running layout jobs above their ideal span
  uint32_t free_nodes = 0;
};

// The plan over the model; times by job id (missing: unknown). Never throws for odd inputs (a job
// whose layout or nodes do not fit is left out with a note).
DefragPlan plan_defrag(const ShowModel &m, const std::map<uint32_t, DefragJobTimes> &times,
                       const DefragParams &params = {});

// The move --apply would do first: the first step of the best applicable relocation, else the best
// applicable move of a waiting job that lets it start ideally. nullptr if none.
const DefragMove *defrag_next_move(const DefragPlan &plan);

std::string defrag_text(const ShowModel &m, const DefragPlan &plan);
nlohmann::ordered_json defrag_json(const ShowModel &m, const DefragPlan &plan);
nlohmann::ordered_json defrag_move_json(const ShowModel &m, const DefragMove &mv);

}  // namespace topoaware
