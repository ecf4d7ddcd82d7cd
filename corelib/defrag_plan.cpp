// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware defrag's decisions (defrag_plan.hpp): simulations of requeue moves with the placement engine.
#include "defrag_plan.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace topoaware {

namespace {

PlaceMode mode_of(const DefragRunning &j) { return j.strict ? PlaceMode::Strict : PlaceMode::Prefer; }

// The engine on a set of whole free nodes (each with the job's GPUs per node).
PlaceResult place_on(Placer &p, const std::set<int> &hosts, const Layout &layout, uint32_t nodes, uint32_t gpn,
                     PlaceMode mode) {
  std::vector<int> h(hosts.begin(), hosts.end());
  std::vector<uint32_t> g(h.size(), gpn);
  Job job;
  job.nodes = nodes;
  job.gpus_per_node = gpn;
  job.layout = layout;
  PlaceResult r;
  p.place(h.data(), g.data(), h.size(), job, mode, r);
  return r;
}

PlaceResult replace_job(Placer &p, const DefragRunning &j, const std::set<int> &free) {
  return place_on(p, free, j.layout, uint32_t(j.order.size()), j.gpus_per_node(), mode_of(j));
}

// A placement no worse than the job's span now: no more segment excess, pods or leaf groups.
bool no_worse(const PlaceQuality &after, const PlaceQuality &now) {
  return after.segment_excess <= now.segment_excess && after.pods <= std::max(now.pods, now.ideal_pods) &&
         (after.segment_excess < now.segment_excess || after.leaf_groups <= now.leaf_groups);
}

uint32_t aligned(const TopoIndex &ix, const std::set<int> &free, uint32_t seg) {
  std::vector<uint32_t> per(size_t(ix.leaf_group_count()), 0);
  for (int h : free) ++per[size_t(ix.host_leaf_group(h))];
  uint32_t n = 0;
  for (uint32_t c : per) n += seg ? c / seg * seg : c;
  return n;
}

DefragMove make_move(const DefragInput &in, const DefragRunning &j, const PlaceResult &r, const DefragParams &p) {
  const TopoIndex &ix = *in.index;
  DefragMove mv;
  mv.job_id = j.job_id;
  mv.from = j.order;
  mv.to = r.nodes;
  mv.predicted = r.status;
  mv.span_now = j.span;
  mv.cost_now = j.cost;
  mv.slowdown_now = j.cost.slowdown(p.comm_fraction);
  if (!r.nodes.empty()) {
    mv.span_after = job_span(ix, r.nodes, j.layout);
    mv.cost_after = job_cost(ix, r.nodes, j.layout, in.cost);
    mv.slowdown_after = mv.cost_after.slowdown(p.comm_fraction);
  } else {
    mv.slowdown_after = mv.slowdown_now;
  }
  DefragJobTimes t;
  if (auto it = in.times.find(j.job_id); it != in.times.end()) t = it->second;
  mv.time_left = t.time_left;
  mv.run_time = t.run_time;
  mv.restarts = t.restarts;
  mv.checkpoint_age = t.restarts > 0 ? t.run_time : -1;
  if (j.opt.known) {
    mv.signal = j.opt.signal;
    mv.signal_time = j.opt.signal_time;
    mv.signal_batch = j.opt.signal_batch;
  }
  if (t.time_left > 0 && mv.slowdown_now > 0 && !r.nodes.empty())
    mv.gain_seconds = double(t.time_left) * (1 - mv.slowdown_after / mv.slowdown_now);
  mv.refusal = defrag_refusal(j.opt, t);
  mv.migratable = mv.refusal.empty();
  return mv;
}

std::string not_planned(uint32_t job_id, const char *why) {
  return "job " + std::to_string(job_id) + ": not planned: " + why;
}

std::set<int> with(std::set<int> s, const std::vector<int> &add) {
  s.insert(add.begin(), add.end());
  return s;
}

std::set<int> without(std::set<int> s, const std::vector<int> &drop) {
  for (int h : drop) s.erase(h);
  return s;
}

// One plan's shared state: the engine, the nodes free now and the running jobs it may move.
class Defrag {
 public:
  Defrag(const DefragInput &in, const DefragParams &p)
      : in_(in), p_(p), ix_(*in.index), placer_(ix_), free_(in.free.begin(), in.free.end()) {
    for (const DefragRunning &j : in.running)
      if (!j.order.empty() && j.gpus_per_node() > 0) running_.push_back(&j);
  }

  uint32_t free_count() const { return uint32_t(free_.size()); }
  void relocations(DefragPlan &plan);
  void waiting_jobs(DefragPlan &plan);

 private:
  DefragRelocation after_partner(const DefragRunning &j);
  bool freeing_moves(const DefragPending &w, uint32_t nodes, DefragWaiting &dw);
  void judge_move(DefragFreeing &f, const PlaceResult &rk, const DefragRunning &k) const;

  const DefragInput &in_;
  const DefragParams &p_;
  const TopoIndex &ix_;
  Placer placer_;
  const std::set<int> free_;
  std::vector<const DefragRunning *> running_;
};

// (a) relocations: each running job above its ideal span re-placed ideally, alone or after one
// other job moved first; the applicable ones first, those that can start now, then by gain.
void Defrag::relocations(DefragPlan &plan) {
  for (const DefragRunning *j : running_) {
    if (j->span.ideal()) continue;
    ++plan.above_ideal;
    try {
      const PlaceResult now = replace_job(placer_, *j, with(free_, j->hosts));
      if (now.status == PlaceStatus::Ideal) {
        DefragRelocation r;
        r.job_id = j->job_id;
        r.steps.push_back(make_move(in_, *j, now, p_));
        plan.relocations.push_back(std::move(r));
        continue;
      }
      DefragRelocation best = after_partner(*j);
      if (!best.steps.empty()) plan.relocations.push_back(std::move(best));
    } catch (const LayoutError &e) {
      plan.notes.push_back(not_planned(j->job_id, e.what()));
    }
  }
  std::stable_sort(plan.relocations.begin(), plan.relocations.end(),
                   [](const DefragRelocation &a, const DefragRelocation &b) {
                     return std::make_tuple(!a.applicable(), !a.now(), -a.gain_seconds()) <
                            std::make_tuple(!b.applicable(), !b.now(), -b.gain_seconds());
                   });
}

// One other job moved first: re-placed where the engine puts it (its own mode), no worse than
// now; then job j on what is left. The best such pair (applicable first, then by gain), or none.
DefragRelocation Defrag::after_partner(const DefragRunning &j) {
  DefragRelocation best;
  size_t tried = 0;
  for (const DefragRunning *k : running_) {
    if (k == &j) continue;
    if (++tried > p_.max_partners) break;
    const std::set<int> free1 = with(free_, k->hosts);
    const PlaceResult rk = replace_job(placer_, *k, free1);
    if (rk.nodes.empty() || rk.status == PlaceStatus::NoBlock) continue;
    if (!no_worse(job_span(ix_, rk.nodes, k->layout), k->span)) continue;
    const PlaceResult rj = replace_job(placer_, j, with(without(free1, rk.nodes), j.hosts));
    if (rj.status != PlaceStatus::Ideal) continue;
    DefragRelocation r;
    r.job_id = j.job_id;
    r.steps.push_back(make_move(in_, *k, rk, p_));
    r.steps.push_back(make_move(in_, j, rj, p_));
    const auto rank = [](const DefragRelocation &x) { return std::make_pair(x.applicable(), x.gain_seconds()); };
    if (best.steps.empty() || rank(best) < rank(r)) best = std::move(r);
  }
  return best;
}

// (b) waiting jobs held by fragmentation (strict or large ones with enough free nodes but no
// ideal block), each with the moves that would free one.
void Defrag::waiting_jobs(DefragPlan &plan) {
  for (const DefragPending &w : in_.pending) {
    const uint32_t gpn = w.gpus_per_node;
    if (!gpn || w.layout.world() % gpn) continue;
    const uint32_t nodes = uint32_t(w.layout.world() / gpn);
    DefragWaiting dw;
    dw.job_id = w.job_id;
    dw.nodes = nodes;
    dw.mode = w.mode;
    dw.large = nodes >= uint32_t(std::max(1, ix_.max_leaf_group_size()));
    dw.waiting_since = w.waiting_since;
    if (dw.mode != "strict" && !dw.large) continue;
    if (free_.size() < nodes) continue;  // held by capacity, not by fragmentation
    try {
      if (!freeing_moves(w, nodes, dw)) continue;
    } catch (const LayoutError &e) {
      plan.notes.push_back(not_planned(w.job_id, e.what()));
      continue;
    }
    plan.waiting.push_back(std::move(dw));
  }
}

// The moves of one running job each that would give waiting job w an ideal block or more aligned
// nodes, best first, at most moves_per_waiting; false when an ideal block is free already.
bool Defrag::freeing_moves(const DefragPending &w, uint32_t nodes, DefragWaiting &dw) {
  const uint32_t gpn = w.gpus_per_node;
  dw.segment_nodes = job_geometry(w.layout, nodes, ix_.has_domains()).segment_nodes;
  if (place_on(placer_, free_, w.layout, nodes, gpn, PlaceMode::Strict).status == PlaceStatus::Ideal)
    return false;  // an ideal block is free: it starts at the next scheduling cycle
  dw.aligned_now = aligned(ix_, free_, dw.segment_nodes);
  for (const DefragRunning *k : running_) {
    // After the requeue the moved job waits out Slurm's credential window, so the waiting job
    // is scheduled first, on the free nodes and the moved job's; the moved job then gets what
    // the engine gives it of the rest.
    const std::set<int> free1 = with(free_, k->hosts);
    DefragFreeing f;
    f.aligned_before = dw.aligned_now;
    f.aligned_after = aligned(ix_, free1, dw.segment_nodes);
    const PlaceResult rw = place_on(placer_, free1, w.layout, nodes, gpn, PlaceMode::Strict);
    f.starts_ideal = rw.status == PlaceStatus::Ideal;
    if (!f.starts_ideal && f.aligned_after <= f.aligned_before) continue;
    const std::set<int> rest = f.starts_ideal ? without(free1, rw.nodes) : free1;
    PlaceResult rk;
    if (rest.size() >= k->order.size()) rk = replace_job(placer_, *k, rest);
    judge_move(f, rk, *k);
    dw.moves.push_back(std::move(f));
  }
  std::stable_sort(dw.moves.begin(), dw.moves.end(), [](const DefragFreeing &a, const DefragFreeing &b) {
    return std::make_tuple(!a.starts_ideal, -int64_t(a.aligned_after), !a.move.migratable, -a.move.gain_seconds) <
           std::make_tuple(!b.starts_ideal, -int64_t(b.aligned_after), !b.move.migratable, -b.move.gain_seconds);
  });
  if (dw.moves.size() > p_.moves_per_waiting) dw.moves.resize(p_.moves_per_waiting);
  return true;
}

// The moved job k's move (re-placed as rk): refused when k would not restart at once, would
// restart on a worse span, or the waiting job would still have no ideal block.
void Defrag::judge_move(DefragFreeing &f, const PlaceResult &rk, const DefragRunning &k) const {
  f.move = make_move(in_, k, rk, p_);
  if (rk.nodes.empty() || rk.status == PlaceStatus::NoBlock) {
    f.move.migratable = false;
    f.move.refusal = "it would not restart at once after the move (no block left for it)";
  } else if (!no_worse(f.move.span_after, k.span)) {
    f.move.migratable = false;
    f.move.refusal = "it would restart on a worse span than now";
  } else if (f.move.migratable && !f.starts_ideal) {
    f.move.migratable = false;
    f.move.refusal = "the waiting job would still not have an ideal block";
  }
}

}  // namespace

std::string defrag_refusal(const DefragOptIn &opt, const DefragJobTimes &t) {
  if (!opt.known || !opt.migrate) return "not opted in (--topo-migrate)";
  if (!t.batch) return "not a batch job";
  if (t.requeue == 0 || (t.requeue < 0 && !opt.requeue)) return "not requeueable";
  if (!opt.signal) return "no --signal to checkpoint on";
  return "";
}

double DefragRelocation::gain_seconds() const {
  double g = 0;
  for (const DefragMove &s : steps) g += s.gain_seconds;
  return g;
}

bool DefragRelocation::applicable() const {
  for (const DefragMove &s : steps)
    if (!s.migratable) return false;
  return !steps.empty();
}

DefragPlan plan_defrag(const DefragInput &in, const DefragParams &p) {
  DefragPlan plan;
  Defrag d(in, p);
  plan.free_nodes = d.free_count();
  d.relocations(plan);
  d.waiting_jobs(plan);
  return plan;
}

const DefragMove *defrag_next_move(const DefragPlan &plan) {
  for (const DefragRelocation &r : plan.relocations)
    if (r.applicable()) return &r.steps.front();
  for (const DefragWaiting &w : plan.waiting)
    for (const DefragFreeing &f : w.moves)
      if (f.starts_ideal && f.move.migratable) return &f.move;
  return nullptr;
}

}  // namespace topoaware
