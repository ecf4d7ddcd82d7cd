// SPDX-License-Identifier: GPL-2.0-or-later
// See select_policy.hpp.
#include "select_policy.hpp"

#include <algorithm>
#include <ctime>
#include <string>

namespace topoaware {

namespace {

const char *mode_word(bool strict) { return strict ? "strict" : "prefer"; }

size_t count_bits(const std::vector<uint64_t> &words, size_t nbits) {
  size_t n = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    uint64_t w = words[i];
    if ((i + 1) * 64 > nbits && nbits % 64) w &= (uint64_t(1) << (nbits % 64)) - 1;
    n += size_t(__builtin_popcountll(w));
  }
  return n;
}

// One call's state: the usable nodes still open to blocks, the engine's last answer, the logs.
class Decision {
 public:
  Decision(PlacementPolicy &engine, const NodeMap &map, const SelectRequest &req, const SelectSettings &settings,
           const SelectBackend &backend)
      : engine_(engine),
        map_(map),
        req_(req),
        set_(settings),
        be_(backend),
        work_(req.usable, req.usable + (req.nbits + 63) / 64),
        domain_bound_(engine.index().has_domains() &&
                      tp_group_nodes(req.job.layout, req.job.gpus_per_node) > 1) {
    ask_.job = &req_.job;
    ask_.map = &map_;
    ask_.usable = work_.data();  // work_ never grows: the pointer holds for the whole call
    ask_.nbits = req_.nbits;
  }

  SelectAnswer run_now();
  SelectAnswer will_run();

 private:
  // The engine's next block among work_ with `free` GPUs: its status; engine_error_ on a bad layout.
  PlaceStatus next_block(const uint16_t *free, bool strict) {
    engine_error_ = false;
    try {
      ask_.free_gpus = free;
      ask_.mode = strict ? PlaceMode::Strict : PlaceMode::Prefer;
      return engine_.place_slurm(ask_, result_);
    } catch (const LayoutError &e) {
      engine_error_ = true;
      log(SelectLogLevel::Error, kLogEngineError,
          std::string(": placement failed: ") + e.what() + "; placed by plain select/cons_tres");
      return PlaceStatus::NoNodes;
    }
  }
  PlaceStatus future_block(bool strict, int64_t *at);
  // The start a block that fits from `fits` on is planned at (the backend's block_start, which
  // never goes back in time; fits itself without it or when it starts now). Cached per value.
  int64_t planned_start(int64_t fits) {
    if (!be_.block_start || fits <= req_.now) return fits;
    if (fits != planned_in_) {
      planned_in_ = fits;
      planned_out_ = std::max(fits, be_.block_start(fits));
    }
    return planned_out_;
  }
  PlaceStatus hold_fewer_idle(bool strict, int64_t at, PlaceStatus found);
  int64_t plain_floor(bool strict);
  // Will-run's earliest block cons_tres accepted: its start and status; settled when plain
  // cons_tres cannot start sooner, so it is not asked.
  struct BestBlock {
    bool have = false, settled = false;
    int64_t start = 0;
    PlaceStatus status = PlaceStatus::NoNodes;
  };
  bool take_block_now(bool strict, uint64_t t0);
  void block_taken(bool strict);
  SelectAnswer strict_waits();
  SelectAnswer domain_waits();
  SelectAnswer run_plain();
  // plain_floor, computed once, at the first accepted block that does not start now (an O(nodes)
  // pass a block free now never needs). Preemption may start plain cons_tres's answer sooner than
  // any end time says: then no floor is known.
  int64_t plain_floor_once(bool strict, bool timed) {
    if (!floor_known_ && timed && !req_.may_preempt) floor_ = plain_floor(strict);
    floor_known_ = true;
    return floor_;
  }
  PlaceStatus will_run_block(bool strict, bool timed, bool now_done, int64_t *at);
  void log_will_run_block(bool timed, bool now_done, int64_t at);
  void will_run_blocks(bool strict, bool timed, uint64_t t0, BestBlock &best);
  bool will_run_plain(bool strict, int64_t *plain_start);
  SelectAnswer will_run_answer(bool strict, const BestBlock &best, bool plain_ok, int64_t plain_start);
  static bool offers(PlaceStatus s) { return s == PlaceStatus::Ideal || s == PlaceStatus::Fallback; }
  bool in_work(size_t i) const { return (work_[i / 64] >> (i % 64)) & 1; }
  // Will-run with end times: node i's free GPUs at time t.
  uint16_t free_by(size_t i, int64_t t) const { return req_.all_free_at[i] <= t ? req_.free_all[i] : req_.free_now[i]; }
  // A refused block's nodes are not offered again in this call.
  void drop_block() {
    for (int i : result_.slurm) work_[size_t(i) / 64] &= ~(uint64_t(1) << (size_t(i) % 64));
  }
  bool time_left(int tries, uint64_t t0) const { return tries == 0 || be_.clock_ms() - t0 < set_.max_time_ms; }
  void log(SelectLogLevel level, int key, std::string text) { answer_.logs.push_back({level, key, std::move(text)}); }
  std::string status_word() const { return engine_error_ ? "error" : place_status_name(status_); }
  std::string shape() const {
    return std::to_string(req_.job.nodes) + " nodes x " + std::to_string(req_.job.gpus_per_node) + " GPUs";
  }

  PlacementPolicy &engine_;
  const NodeMap &map_;
  const SelectRequest &req_;
  const SelectSettings &set_;
  const SelectBackend &be_;
  std::vector<uint64_t> work_;
  SlurmPolicyRequest ask_;  // the engine's question, over work_; next_block sets its GPUs and mode
  PlaceResult result_, kept_, alt_;  // alt_: hold_fewer_idle's first-step fallback
  std::vector<int64_t> times_;   // will-run: candidate start times (future_block, plain_floor)
  std::vector<uint16_t> free_at_;  // will-run: free GPUs per node at one of them
  std::vector<uint8_t> lg_mark_;   // will-run: leaf groups with nodes that free up by a block's start
  int64_t planned_in_ = INT64_MIN, planned_out_ = 0;  // planned_start's last answer
  bool floor_known_ = false;  // plain_floor_once's answer, floor_, is known
  int64_t floor_ = INT64_MIN;
  PlaceStatus status_ = PlaceStatus::NoNodes;
  bool engine_error_ = false;
  // TP groups span nodes (multi-node NVLink domains): only the engine's blocks keep each inside one
  // domain, so such a job never goes to plain cons_tres, which knows no domains; it waits instead.
  const bool domain_bound_;
  SelectAnswer answer_;
};

// Run-now's blocks among the nodes free now, each offered to cons_tres until one is taken (true,
// answer_ holds it) or the tries, the time or the engine's blocks run out.
bool Decision::take_block_now(bool strict, uint64_t t0) {
  int &tries = answer_.tries;
  while (tries < int(set_.max_tries) && time_left(tries, t0)) {
    status_ = next_block(req_.free_now, strict);
    if (!offers(status_)) break;
    tries++;
    if (be_.try_block(result_.slurm, nullptr)) {
      block_taken(strict);
      return true;
    }
    // cons_tres said no (cores, memory, GPU topology): the next block without these nodes.
    drop_block();
  }
  return false;
}

// The answer for the block cons_tres took: ideal or fallback, a fallback's quality in the note.
void Decision::block_taken(bool strict) {
  const int tries = answer_.tries;
  const bool ideal = status_ == PlaceStatus::Ideal;
  answer_.verdict = SelectVerdict::Block;
  answer_.placement = ideal ? "ideal" : "fallback";
  if (!ideal)
    answer_.note = std::to_string(result_.quality.leaf_groups) + " leaf groups, " +
                   std::to_string(result_.quality.split_segments) + " split segments (block " +
                   std::to_string(tries) + " tried)";
  log(SelectLogLevel::Debug, kLogAlways,
      ": run-now " + std::string(mode_word(strict)) + ": " + place_status_name(status_) + " block after " +
          std::to_string(tries) + " tries (" + std::to_string(result_.quality.leaf_groups) + " leaf groups, " +
          std::to_string(result_.quality.split_segments) + " split segments)");
}

// A strict job before its deadline without a block: it waits, at most until the deadline.
SelectAnswer Decision::strict_waits() {
  const std::string reason = select_wait_reason(status_, false, true, set_);
  log(SelectLogLevel::Info, kLogWaitBase + int(status_),
      " (strict, " + shape() + ") waits: " + reason + "; at most " + std::to_string(req_.deadline - req_.now) +
          " s more, then best available");
  log(SelectLogLevel::Debug, kLogAlways,
      ": run-now strict: " + status_word() + " after " + std::to_string(answer_.tries) + " tries; waits");
  answer_.wait = reason + "; strict: waits until " + local_time_string(req_.deadline) +
                 " at most, then takes the best available";
  return answer_;
}

// A job whose TP groups span nodes without a block: it waits (plain cons_tres knows no domains).
SelectAnswer Decision::domain_waits() {
  const std::string reason =
      engine_error_ ? "its TP groups span nodes but the placement failed (see the log)"
                    : "no NVLink domains with room for its TP groups of " +
                          std::to_string(tp_group_nodes(req_.job.layout, req_.job.gpus_per_node)) + " nodes (" +
                          select_wait_reason(status_, false, false, set_) + ")";
  log(SelectLogLevel::Debug, kLogAlways,
      ": run-now: " + status_word() + " after " + std::to_string(answer_.tries) + " tries; waits: " + reason);
  answer_.wait = reason;
  return answer_;
}

// Prefer (or strict past its maximum wait, or an engine error): plain cons_tres; the nodes that
// are not in the topology only with MissingNodes=fallback and when the topology's nodes cannot
// hold the job.
SelectAnswer Decision::run_plain() {
  const int tries = answer_.tries;
  const bool any = set_.missing == MissingNodes::Fallback && !engine_error_ && status_ == PlaceStatus::NoNodes;
  int preempted = 0;
  if (be_.try_plain(any, nullptr, &preempted)) {
    const std::string reason = select_wait_reason(status_, engine_error_, false, set_);
    answer_.verdict = SelectVerdict::Plain;
    answer_.placement = "cons_tres";
    if (any && set_.missing_count) {
      answer_.note =
          "the topology's nodes cannot hold it now; MissingNodes=fallback: plain select/cons_tres on any node";
      log(SelectLogLevel::Info, kLogMissingFallback, ": " + answer_.note);
    } else if (engine_error_) {
      answer_.note = "the placement failed (see the log); plain select/cons_tres";
    } else if (tries) {
      answer_.note = "select/cons_tres refused the " + std::to_string(tries) + " blocks tried; plain select/cons_tres";
    } else {
      answer_.note = reason + "; plain select/cons_tres";
    }
    if (preempted > 0)
      log(SelectLogLevel::Info, kLogPreempts,
          ": " + reason + "; placed by plain select/cons_tres, which preempts " + std::to_string(preempted) +
              " job(s)");
    log(SelectLogLevel::Debug, kLogAlways,
        ": run-now prefer: " + status_word() + " after " + std::to_string(tries) + " tries; " + answer_.note);
    return answer_;
  }
  const std::string reason = select_wait_reason(status_, engine_error_, false, set_);
  // A prefer job that cannot run is Slurm's normal business (Resources), except when the nodes
  // left out (MissingNodes=avoid) are the cause: that one is worth a line.
  if (!engine_error_ && status_ == PlaceStatus::NoNodes && set_.missing_count && !any)
    log(SelectLogLevel::Info, kLogWaitBase + int(status_),
        " (" + std::string(mode_word(req_.strict)) + ", " + shape() + ") waits: " + reason);
  log(SelectLogLevel::Debug, kLogAlways,
      ": run-now prefer: " + status_word() + " after " + std::to_string(tries) +
          " tries; plain select/cons_tres failed too");
  answer_.wait = reason;
  return answer_;
}

SelectAnswer Decision::run_now() {
  const uint64_t t0 = be_.clock_ms();
  bool strict = req_.strict && req_.now < req_.deadline;
  if (take_block_now(strict, t0)) return answer_;
  // Strict with nothing free to choose from but jobs it may preempt: preempting is the only way
  // it runs, and the nodes it frees are cons_tres's to pick.
  if (strict && !engine_error_ && status_ == PlaceStatus::NoNodes && req_.may_preempt) {
    log(SelectLogLevel::Info, kLogMayPreempt,
        " (strict): not enough free nodes, but it may preempt: plain select/cons_tres, which may preempt");
    strict = false;
  }
  if (strict && !engine_error_) return strict_waits();
  if (domain_bound_) return domain_waits();
  return run_plain();
}

// The block of the earliest job end at which the engine offers one among the nodes of work_ that
// are free by then (free_now, or free_all from all_free_at on); *at = that time. Tried first: the
// end at which enough nodes could be free; then the last end (nothing offered with every job
// ended: nothing earlier either); between them by bisection, as more nodes free up only add
// candidates. At most 2 + log2(distinct ends) engine calls.
PlaceStatus Decision::future_block(bool strict, int64_t *at) {
  const uint32_t g = req_.job.gpus_per_node;
  size_t ready = 0;
  times_.clear();
  for (size_t i = 0; i < req_.nbits; ++i) {
    if (!in_work(i)) continue;
    if (req_.free_now[i] >= g)
      ready++;
    else if (req_.free_all[i] >= g)
      times_.push_back(std::max(req_.all_free_at[i], req_.now));
  }
  const auto at_time = [&](int64_t t) {
    free_at_.resize(req_.nbits);
    for (size_t i = 0; i < req_.nbits; ++i)
      free_at_[i] = free_by(i, t);
    *at = t;
    return next_block(free_at_.data(), strict);
  };
  std::sort(times_.begin(), times_.end());
  if (times_.empty()) return at_time(req_.now);  // nothing frees up: what is free now is all
  // the first end with enough nodes (when there is none, the last: the engine says why not)
  const size_t need = req_.job.nodes > ready ? req_.job.nodes - ready : 1;
  times_.erase(times_.begin(), times_.begin() + std::ptrdiff_t(std::min(need, times_.size()) - 1));
  times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
  PlaceStatus status = at_time(times_.front());
  if (offers(status) || engine_error_ || times_.size() == 1) return status;
  status = at_time(times_.back());
  if (!offers(status)) return status;
  size_t lo = 0, hi = times_.size() - 1;  // nothing offered at lo, a block at hi (in kept_)
  PlaceStatus kept_status = status;
  std::swap(kept_, result_);
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    status = at_time(times_[mid]);
    if (offers(status)) {
      hi = mid;
      kept_status = status;
      std::swap(kept_, result_);
    } else {
      lo = mid;
    }
  }
  std::swap(kept_, result_);
  *at = times_[hi];
  return kept_status;
}

// A future block is backfill's plan for the job: from now until its start no other job may take
// its nodes unless it ends before then, and time limits rarely let one. Nodes free now that the
// plan holds are thereby kept idle from the smaller jobs backfill would start on them (measured
// on real slurmctld: docs/design.md, "Backfill plans"). So at `at`, the start
// the plan will have (planned_start: no earlier than the end the block was found at, where just
// enough nodes are free), it holds fewer of them where the engine allows: first only nodes that
// are busy now and free by then; then those with the free nodes of their leaf groups; else the
// block found. An ideal block of either step wins over a fallback (the first step's fallback is
// kept while the second looks for one): nodes a plan holds are free when the job starts, so an
// ideal plan keeps an ideal placement within reach of run-now, which picks again among the nodes
// free then. A fallback plan holding fewer idle nodes still wins over the ideal block found
// (strict jobs take ideal ones only): an ideal plan on idle leaves keeps them idle until its
// start. At most two engine calls more, no cons_tres call more.
PlaceStatus Decision::hold_fewer_idle(bool strict, int64_t at, PlaceStatus found) {
  if (!offers(found) || engine_error_ || at <= req_.now || !req_.all_free_at) return found;
  const uint32_t g = req_.job.gpus_per_node;
  const auto idle_now = [&](size_t i) { return req_.free_now[i] >= g; };
  const auto idle_held = [&] {
    size_t n = 0;
    for (int i : result_.slurm) n += idle_now(size_t(i));
    return n;
  };
  const size_t held_idle = idle_held();
  if (!held_idle) return found;
  std::swap(kept_, result_);  // the block found, restored if no block holds fewer idle nodes
  // the leaf group of node-table index i, -1 if it has none
  const auto group = [&](size_t i) {
    const int lg = i < map_.size() ? map_.leaf_group(i) : -1;
    return lg >= 0 && size_t(lg) < lg_mark_.size() ? lg : -1;
  };
  free_at_.resize(req_.nbits);
  lg_mark_.assign(size_t(engine_.index().leaf_group_count()), 0);
  for (size_t i = 0; i < req_.nbits; ++i) {
    free_at_[i] = idle_now(i) ? 0 : free_by(i, at);
    if (free_at_[i] >= g && in_work(i) && group(i) >= 0) lg_mark_[size_t(group(i))] = 1;
  }
  const auto taken = [&](PlaceStatus s, size_t held) {
    log(SelectLogLevel::Debug, kLogAlways,
        ": will-run plan holds " + std::to_string(held) + " nodes free now instead of " + std::to_string(held_idle) +
            " (" + place_status_name(s) + ")");
    return s;
  };
  bool busy_fallback = false;  // the first step found a fallback (kept in alt_); it holds no idle node
  for (int step = 0; step < 2; ++step) {
    if (step == 1)  // with the nodes free now in the leaf groups of those that free up by then
      for (size_t i = 0; i < req_.nbits; ++i)
        if (idle_now(i) && group(i) >= 0 && lg_mark_[size_t(group(i))]) free_at_[i] = free_by(i, at);
    const PlaceStatus s = next_block(free_at_.data(), strict);
    if (!offers(s) || engine_error_) continue;
    const size_t held = idle_held();
    if (held >= held_idle) continue;
    if (s == PlaceStatus::Ideal || (step == 1 && !busy_fallback)) return taken(s, held);
    if (step == 0) {
      busy_fallback = true;
      std::swap(alt_, result_);
    }
  }
  engine_error_ = false;
  if (busy_fallback) {
    std::swap(alt_, result_);
    return taken(PlaceStatus::Fallback, 0);
  }
  std::swap(kept_, result_);
  return found;
}

// No allocation plain cons_tres could answer starts before this: the job's node count of
// earliest_free_at over the usable nodes (a strict job's plain answer moves to its deadline).
// INT64_MIN: no bound known.
int64_t Decision::plain_floor(bool strict) {
  const size_t need = req_.job.nodes;
  times_.clear();
  for (size_t i = 0; i < req_.nbits; ++i)
    if (((req_.usable[i / 64] >> (i % 64)) & 1) && req_.earliest_free_at[i] != INT64_MAX)
      times_.push_back(std::max(req_.earliest_free_at[i], req_.now));
  if (!need || times_.size() < need) return INT64_MIN;  // cons_tres has its own reasons: ask it
  std::nth_element(times_.begin(), times_.begin() + std::ptrdiff_t(need - 1), times_.end());
  return strict ? std::max(times_[need - 1], req_.deadline) : times_[need - 1];
}

// Will-run's next block: the first among the nodes free now (it starts now, as run-now would take
// it), the others in the future: at the earliest job end that frees one (timed, *at = that end),
// or as if every usable node were free.
PlaceStatus Decision::will_run_block(bool strict, bool timed, bool now_done, int64_t *at) {
  if (!now_done) return next_block(req_.free_now, strict);
  if (!timed) return next_block(req_.free_all, strict);
  // The plan holds its nodes from now until its planned start, which may be later than the
  // earliest end at which the block is found: the nodes that free up by then are candidates.
  const PlaceStatus found = future_block(strict, at);
  return hold_fewer_idle(strict, planned_start(*at), found);
}

void Decision::log_will_run_block(bool timed, bool now_done, int64_t at) {
  log(SelectLogLevel::Debug, kLogAlways,
      ": will-run " + std::string(!now_done ? "now" : timed ? "future (+" + std::to_string(at - req_.now) + " s)"
                                                            : "future") +
          " block: " + status_word() + " (" + std::to_string(result_.candidates) + " candidates of " +
          std::to_string(count_bits(work_, req_.nbits)) + " usable, " +
          std::to_string(result_.quality.leaf_groups) + " leaf groups)");
}

// Will-run's blocks offered to cons_tres, the earliest start it accepts kept in `best`.
void Decision::will_run_blocks(bool strict, bool timed, uint64_t t0, BestBlock &best) {
  const int max_tries = int(std::min(set_.max_tries, kMaxWillRunTries));
  int &tries = answer_.tries;
  bool now_done = false;
  while (tries < max_tries && time_left(tries, t0)) {
    int64_t at = req_.now;
    status_ = will_run_block(strict, timed, now_done, &at);
    log_will_run_block(timed, now_done, at);
    const bool future = now_done;
    if (!now_done) {
      now_done = true;
      if (!offers(status_)) continue;  // nothing free now: the future
    }
    if (!offers(status_)) return;
    tries++;
    int64_t start = 0;
    const bool accepted = be_.try_block(result_.slurm, &start);
    if (accepted && (!best.have || start < best.start)) {
      be_.keep_best();
      best.have = true;
      best.start = start;
      best.status = status_;
      // Nothing starts earlier than now, and plain cons_tres no earlier than its floor (planned
      // as a block would be): the block wins (ties go to it), plain is not asked.
      if (best.start <= be_.wall_s() || planned_start(best.start) <= planned_start(plain_floor_once(strict, timed))) {
        best.settled = true;
        return;
      }
    }
    // A timed future block cons_tres accepted was the earliest the engine found: later ones only
    // start later.
    if (accepted && future && timed) return;
    drop_block();
  }
}

// The unrestricted answer, without the nodes that are not in the topology unless
// MissingNodes=fallback and the topology cannot hold the job even with all its nodes free.
bool Decision::will_run_plain(bool strict, int64_t *plain_start) {
  int preempted = 0;
  const bool any =
      set_.missing == MissingNodes::Fallback && !answer_.tries && !engine_error_ && status_ == PlaceStatus::NoNodes;
  const bool plain_ok = be_.try_plain(any, plain_start, &preempted);
  if (plain_ok && strict && *plain_start < req_.deadline)
    *plain_start = req_.deadline;  // strict takes any nodes only once the maximum wait is over
  return plain_ok;
}

// The earlier of the best block and plain cons_tres's answer (ties go to the block), and its log.
SelectAnswer Decision::will_run_answer(bool strict, const BestBlock &best, bool plain_ok, int64_t plain_start) {
  std::string on;
  if (best.have && (!plain_ok || best.start <= plain_start)) {
    answer_.verdict = SelectVerdict::Block;
    // Where the block answer differs from plain cons_tres's is where, not when: its start is the
    // one cons_tres's will-run gives for a job that fits then (a later start leaves backfill the
    // same room before it as without topoaware). Never later than plain's own answer: that is
    // one of the same starts, and the block fits no later.
    answer_.start = planned_start(best.start);
    if (plain_ok) answer_.start = std::min(answer_.start, plain_start);
    on = best.status == PlaceStatus::Ideal ? "an ideal block" : "the best block available then";
  } else {
    if (plain_ok) {
      answer_.verdict = SelectVerdict::Plain;
      answer_.start = plain_start;
    }
    on = strict ? "the best available once the maximum wait is over" : "nodes chosen by select/cons_tres";
  }
  const bool answered = answer_.verdict != SelectVerdict::Wait;
  log(SelectLogLevel::Debug, kLogAlways,
      ": will-run " + std::string(mode_word(strict)) + ": " + std::to_string(answer_.tries) + " blocks tried, " +
          (answered ? "answered" : "no start found") + "; start " + std::to_string(answered ? answer_.start : 0) +
          " on " + on);
  answer_.wait_hint = true;
  if (!answered)
    answer_.wait = "backfill finds no start time for it";
  else if (answer_.start > req_.now)
    answer_.wait = "backfill plans its start for " + local_time_string(answer_.start) + " on " + on;
  return answer_;
}

SelectAnswer Decision::will_run() {
  const uint64_t t0 = be_.clock_ms();
  const bool strict = req_.strict && req_.now < req_.deadline;
  const bool timed = req_.all_free_at && req_.earliest_free_at;
  BestBlock best;
  will_run_blocks(strict, timed, t0, best);
  // Plain is not needed when the block is settled (it wins the comparison whatever plain says),
  // nor asked for a job whose TP groups span nodes.
  int64_t plain_start = 0;
  const bool plain_ok = !best.settled && !domain_bound_ && will_run_plain(strict, &plain_start);
  return will_run_answer(strict, best, plain_ok, plain_start);
}

}  // namespace

std::string select_wait_reason(PlaceStatus status, bool engine_error, bool strict, const SelectSettings &settings) {
  if (!engine_error && status == PlaceStatus::NoBlock)
    return "no block that keeps every DP ring/PP chain on its ideal leaves is free";
  if (!engine_error && status == PlaceStatus::NoNodes)
    return settings.missing_count && settings.missing == MissingNodes::Avoid
               ? "not enough nodes with free GPUs in the topology (MissingNodes=avoid: the Slurm nodes not in it "
                 "are not used)"
               : "not enough nodes with free GPUs";
  return strict ? "cons_tres refused every ideal block tried" : "select/cons_tres finds no free resources for it now";
}

std::string local_time_string(int64_t t) {
  const time_t tt = time_t(t);
  struct tm tm;
  char buf[32];
  if (!localtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm)) return std::to_string(t);
  return buf;
}

SelectAnswer select_decide(PlacementPolicy &engine, const NodeMap &map, const SelectRequest &req,
                           const SelectSettings &settings, const SelectBackend &backend) {
  Decision d(engine, map, req, settings, backend);
  return req.will_run ? d.will_run() : d.run_now();
}

}  // namespace topoaware
