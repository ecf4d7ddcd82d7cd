// SPDX-License-Identifier: GPL-2.0-or-later
// The select plugin's decision for one select_p_job_test call of a layout job
// (select_cons_tres_topoaware(8)): which blocks of the engine (the topoaware named policy,
// policies.hpp, over placement.hpp's Placer) to offer cons_tres
// and in what order, when a strict job waits and when it takes the best available, when the job
// goes to plain cons_tres (and on which nodes: MissingNodes=), and for will-run which start time to
// answer. Slurm is reached only through SelectBackend, which the C adapter implements with
// cons_tres and Slurm's bitmaps; everything here is unit-tested without a slurmctld.
//
// Run-now (a start now or nothing):
//  - mode in effect: strict while now < deadline (the job's eligible time + its maximum wait), else
//    prefer; the engine is asked in that mode for blocks among the usable nodes with free GPUs now;
//  - each ideal (or, prefer, fallback) block goes to cons_tres; the first it accepts is the answer;
//    a refused block's nodes are left out of the next one; at most max_tries blocks, and no new one
//    after max_time_ms (the first is always tried);
//  - strict with too few free nodes but preemptee candidates listed: plain cons_tres (it may
//    preempt, and the nodes it frees are its to pick);
//  - strict otherwise (no ideal block, or cons_tres refused them all): wait, with the reason and
//    the time when the maximum wait ends;
//  - prefer, strict past its deadline, or an engine error: plain cons_tres, without the Slurm nodes
//    missing from the topology unless MissingNodes=fallback and the topology's nodes cannot hold
//    the job (NoNodes); if cons_tres fails too, the job waits (Slurm's "Resources").
// Will-run (backfill: when could it start, on which nodes):
//  - the first block among the nodes free now (it starts now, as run-now would take it);
//  - then, when the adapter gives the nodes' job end times (all_free_at), the block of the earliest
//    job end at which the engine finds one among the nodes free by then (the end times searched in
//    order, then by bisection), which is where cons_tres's own will-run would look: nodes free
//    sooner. Without end times: up to min(max_tries, kMaxWillRunTries) - 1 blocks as if every
//    usable node were free. At most min(max_tries, kMaxWillRunTries) blocks in all;
//  - a future block is backfill's plan, which holds its nodes from now on: at the start it will be
//    planned at (block_start below: no earlier than the block found), a block that holds fewer of
//    the nodes free now, among the nodes busy now and free by then, else those with the free nodes
//    of their leaf groups (an ideal block of either step first, then the first step's fallback;
//    strict: ideal only; the nodes free now stay to the smaller jobs backfill would start on them;
//    run-now places at the start);
//  - the earliest start among the blocks cons_tres accepts; a block that starts now ends the search,
//    and so does one planned no later than plain cons_tres possibly could be (earliest_free_at: a
//    lower bound of plain's start); then plain cons_tres is not asked, since the block wins ties.
//    Each cons_tres will-run simulates job ends, the largest cost of a call;
//  - else plain cons_tres's answer, which a strict job may take only once its maximum wait is over
//    (its start is moved to the deadline); the block wins ties;
//  - a block that does not start now is answered with the start Slurm's own will-run would give a
//    job that fits then (the backend's block_start; at most plain's answer when it was asked):
//    backfill plans the job when it would without topoaware, and leaves smaller jobs the same room
//    before it. The block changes where, not when.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config.hpp"
#include "placement.hpp"
#include "policies.hpp"

namespace topoaware {

// Blocks handed to cons_tres's will-run per call: each one simulates job ends, which is costly.
inline constexpr uint32_t kMaxWillRunTries = 3;

// The keys a log line is said once under (per job, for a few minutes, by the adapter); 0: always
// (debug lines). Kept as in the plugin's log history: 3 engine error, 5 MissingNodes=fallback used,
// 6 strict may preempt, 7 plain cons_tres preempts, 16 + PlaceStatus a wait.
enum SelectLogKey : int {
  kLogAlways = 0,
  kLogEngineError = 3,
  kLogMissingFallback = 5,
  kLogMayPreempt = 6,
  kLogPreempts = 7,
  kLogWaitBase = 16
};

enum class SelectLogLevel : uint8_t { Error, Info, Debug };

struct SelectLog {
  SelectLogLevel level;
  int key;
  // Follows the job's name in the log line: starts with ": " or " (".
  std::string text;
};

struct SelectRequest {
  Job job;                   // nodes, GPUs per node, layout
  bool strict = false;       // the job's mode (topoaware.conf default or --topo-mode)
  int64_t now = 0;           // seconds since the epoch
  int64_t deadline = 0;      // eligible time + maximum wait
  bool will_run = false;     // backfill's question; else run-now
  bool may_preempt = false;  // slurmctld listed preemptee candidates
  // Slurm's view: usable node-table indices (bit i of word i/64) and free GPUs per index now and,
  // for will-run, with every usable node's jobs ended.
  const uint64_t *usable = nullptr;
  size_t nbits = 0;
  const uint16_t *free_now = nullptr;
  const uint16_t *free_all = nullptr;  // will-run only
  // Will-run, optional (both or neither), per node-table index, seconds since the epoch:
  // all_free_at: when every job on the node has ended (its free_all GPUs are free from then on;
  // <= now: no job on it); earliest_free_at: no allocation plain cons_tres could make for this job
  // holds the node before then (INT64_MAX: never). The adapter reads them from the running jobs'
  // end times, as cons_tres's will-run does.
  const int64_t *all_free_at = nullptr;
  const int64_t *earliest_free_at = nullptr;
};

struct SelectSettings {
  uint32_t max_tries = kDefaultMaxTries;     // MaxTriesPerCall
  uint32_t max_time_ms = kDefaultMaxTimeMs;  // MaxTimePerCall
  MissingNodes missing = MissingNodes::Avoid;
  uint32_t missing_count = 0;  // Slurm nodes not in the topology
};

// What the adapter does for the policy. Calls are synchronous, from the calling thread.
struct SelectBackend {
  // cons_tres on exactly these node-table indices: true if the job fits there (run-now: now;
  // will-run: *start is when). The adapter keeps the last accepted allocation.
  std::function<bool(const std::vector<int> &nodes, int64_t *start)> try_block;
  // Will-run: the last accepted block becomes the best one (the adapter copies it).
  std::function<void()> keep_best;
  // cons_tres on the usable nodes, without those missing from the topology unless any_node; true
  // if it fits (*start as above; *preempted: jobs it would preempt). The adapter keeps the answer.
  std::function<bool(bool any_node, int64_t *start, int *preempted)> try_plain;
  std::function<uint64_t()> clock_ms;  // monotonic milliseconds
  std::function<int64_t()> wall_s;     // seconds since the epoch
  // Will-run, optional: the start Slurm's own will-run would answer for a job that fits from
  // fits_at on (never earlier; never earlier for a later fits_at), so that a block is planned
  // when plain cons_tres would plan the job; empty: fits_at. Asked for future blocks only (the
  // one found, the one answered, plain's lower bound), at most a few times per call.
  std::function<int64_t(int64_t fits_at)> block_start;
};

enum class SelectVerdict : uint8_t {
  Block,  // the block cons_tres accepted (run-now: the last; will-run: the best kept)
  Plain,  // plain cons_tres's answer
  Wait,   // no answer: Slurm's "Resources" (the status book says why)
};

struct SelectAnswer {
  SelectVerdict verdict = SelectVerdict::Wait;
  int64_t start = 0;           // will-run: the start time answered
  const char *placement = "";  // run-now answers: "ideal" | "fallback" | "cons_tres"
  std::string note;            // run-now answers: how it was placed (status file)
  std::string wait;            // the reason kept in the status book; "" = nothing to book
  bool wait_hint = false;      // the reason is will-run's (a plan, not a refusal)
  int tries = 0;               // blocks handed to cons_tres
  std::vector<SelectLog> logs;
};

// "no block that keeps ...": the reason of a wait for the engine's status (the status file's
// words, kept stable).
std::string select_wait_reason(PlaceStatus status, bool engine_error, bool strict, const SelectSettings &settings);

// "2026-01-31T12:00:00" in local time, as Slurm's own logs.
std::string local_time_string(int64_t t);

// engine: the named policy whose blocks are offered (make_placement_policy "topoaware"), asked in
// Slurm's view (PlacementPolicy::place_slurm); map: its topology's hosts in Slurm's node table.
SelectAnswer select_decide(PlacementPolicy &engine, const NodeMap &map, const SelectRequest &req,
                           const SelectSettings &settings, const SelectBackend &backend);

}  // namespace topoaware
