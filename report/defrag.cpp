// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware defrag's plan (defrag.hpp): simulations of requeue moves with the placement engine.
#include "defrag.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "job_report.hpp"
#include "show_format.hpp"

namespace topoaware {

using namespace show_fmt;
using ojson = nlohmann::ordered_json;

namespace {

// A running layout job the engine can place again: its layout, nodes and cost are known.
bool movable(const ShowJob &j) {
  return j.slurm.state == "RUNNING" && j.has_layout && j.has_cost && j.status && j.outside.empty() &&
         !j.order.empty() && j.gpus_per_node() > 0;
}

PlaceMode mode_of(const ShowJob &j) {
  return j.status && j.status->mode == "strict" ? PlaceMode::Strict : PlaceMode::Prefer;
}

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

PlaceResult replace_job(Placer &p, const ShowJob &j, const std::set<int> &free) {
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

DefragMove make_move(const ShowModel &m, const ShowJob &j, const PlaceResult &r,
                     const std::map<uint32_t, DefragJobTimes> &times, const DefragParams &p) {
  const TopoIndex &ix = *m.index;
  DefragMove mv;
  mv.job_id = j.slurm.job_id;
  mv.from = j.order;
  mv.to = r.nodes;
  mv.predicted = r.status;
  mv.span_now = j.span;
  mv.cost_now = j.cost;
  mv.slowdown_now = j.cost.slowdown(p.comm_fraction);
  if (!r.nodes.empty()) {
    mv.span_after = job_span(ix, r.nodes, j.layout);
    mv.cost_after = job_cost(ix, r.nodes, j.layout, m.cost);
    mv.slowdown_after = mv.cost_after.slowdown(p.comm_fraction);
  } else {
    mv.slowdown_after = mv.slowdown_now;
  }
  DefragJobTimes t;
  if (auto it = times.find(j.slurm.job_id); it != times.end()) t = it->second;
  mv.time_left = t.time_left;
  mv.run_time = t.run_time;
  mv.restarts = t.restarts;
  mv.checkpoint_age = t.restarts > 0 ? t.run_time : -1;
  if (j.status) {
    mv.signal = j.status->signal;
    mv.signal_time = j.status->signal_time;
    mv.signal_batch = j.status->signal_batch;
  }
  if (t.time_left > 0 && mv.slowdown_now > 0 && !r.nodes.empty())
    mv.gain_seconds = double(t.time_left) * (1 - mv.slowdown_after / mv.slowdown_now);
  mv.refusal = defrag_refusal(j, t);
  mv.migratable = mv.refusal.empty();
  return mv;
}

std::string dur(int64_t s) { return s < 0 ? "unknown" : age(s); }

std::string signal_text(const DefragMove &mv) {
  if (!mv.signal) return "none";
  return fmt::format("{}{}@{}s", mv.signal_batch ? "B:" : "", mv.signal, mv.signal_time);
}

}  // namespace

std::string defrag_refusal(const ShowJob &j, const DefragJobTimes &t) {
  if (!j.status || !j.status->migrate) return "not opted in (--topo-migrate)";
  if (!t.batch) return "not a batch job";
  if (t.requeue == 0 || (t.requeue < 0 && !j.status->requeue)) return "not requeueable";
  if (!j.status->signal) return "no --signal to checkpoint on";
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

DefragPlan plan_defrag(const ShowModel &m, const std::map<uint32_t, DefragJobTimes> &times, const DefragParams &p) {
  DefragPlan plan;
  const TopoIndex &ix = *m.index;
  Placer placer(ix);
  std::set<int> free;
  for (size_t h = 0; h < m.nodes.size(); ++h)
    if (m.nodes[h].use == NodeUse::Free || m.nodes[h].use == NodeUse::Planned) free.insert(int(h));
  plan.free_nodes = uint32_t(free.size());
  if (m.hash_mismatch)
    plan.notes.push_back("the status file was written with another topology: the plan is over the file given");

  std::vector<const ShowJob *> running;
  for (const ShowJob &j : m.jobs)
    if (movable(j)) running.push_back(&j);

  auto with = [](std::set<int> s, const std::vector<int> &add) {
    s.insert(add.begin(), add.end());
    return s;
  };
  auto without = [](std::set<int> s, const std::vector<int> &drop) {
    for (int h : drop) s.erase(h);
    return s;
  };

  // (a) relocations.
  for (const ShowJob *j : running) {
    if (j->span.ideal()) continue;
    ++plan.above_ideal;
    try {
      const PlaceResult now = replace_job(placer, *j, with(free, j->hosts));
      if (now.status == PlaceStatus::Ideal) {
        DefragRelocation r;
        r.job_id = j->slurm.job_id;
        r.steps.push_back(make_move(m, *j, now, times, p));
        plan.relocations.push_back(std::move(r));
        continue;
      }
      // One other job moved first: re-placed where the engine puts it (its own mode), no worse
      // than now; then this job on what is left.
      DefragRelocation best;
      size_t tried = 0;
      for (const ShowJob *k : running) {
        if (k == j) continue;
        if (++tried > p.max_partners) break;
        const std::set<int> free1 = with(free, k->hosts);
        const PlaceResult rk = replace_job(placer, *k, free1);
        if (rk.nodes.empty() || rk.status == PlaceStatus::NoBlock) continue;
        if (!no_worse(job_span(ix, rk.nodes, k->layout), k->span)) continue;
        const PlaceResult rj = replace_job(placer, *j, with(without(free1, rk.nodes), j->hosts));
        if (rj.status != PlaceStatus::Ideal) continue;
        DefragRelocation r;
        r.job_id = j->slurm.job_id;
        r.steps.push_back(make_move(m, *k, rk, times, p));
        r.steps.push_back(make_move(m, *j, rj, times, p));
        const auto rank = [](const DefragRelocation &x) { return std::make_pair(x.applicable(), x.gain_seconds()); };
        if (best.steps.empty() || rank(best) < rank(r)) best = std::move(r);
      }
      if (!best.steps.empty()) plan.relocations.push_back(std::move(best));
    } catch (const LayoutError &e) {
      plan.notes.push_back(fmt::format("job {}: not planned: {}", j->slurm.job_id, e.what()));
    }
  }
  std::stable_sort(plan.relocations.begin(), plan.relocations.end(),
                   [](const DefragRelocation &a, const DefragRelocation &b) {
                     return std::make_tuple(!a.applicable(), !a.now(), -a.gain_seconds()) <
                            std::make_tuple(!b.applicable(), !b.now(), -b.gain_seconds());
                   });

  // (b) waiting jobs held by fragmentation.
  for (const ShowJob &w : m.waiting) {
    if (w.slurm.state != "PENDING" || !w.has_layout || !w.status) continue;
    const uint32_t gpn = w.status->gpus_per_node;
    if (!gpn || w.layout.world() % gpn) continue;
    const uint32_t nodes = uint32_t(w.layout.world() / gpn);
    DefragWaiting dw;
    dw.job_id = w.slurm.job_id;
    dw.nodes = nodes;
    dw.mode = w.status->mode;
    dw.large = nodes >= uint32_t(std::max(1, ix.max_leaf_group_size()));
    dw.waiting_since = w.status->since;
    if (dw.mode != "strict" && !dw.large) continue;
    if (free.size() < nodes) continue;  // held by capacity, not by fragmentation
    try {
      dw.segment_nodes = job_geometry(w.layout, nodes, ix.has_domains()).segment_nodes;
      if (place_on(placer, free, w.layout, nodes, gpn, PlaceMode::Strict).status == PlaceStatus::Ideal)
        continue;  // an ideal block is free: it starts at the next scheduling cycle
      dw.aligned_now = aligned(ix, free, dw.segment_nodes);
      for (const ShowJob *k : running) {
        // After the requeue the moved job waits out Slurm's credential window, so the waiting job
        // is scheduled first, on the free nodes and the moved job's; the moved job then gets what
        // the engine gives it of the rest.
        const std::set<int> free1 = with(free, k->hosts);
        DefragFreeing f;
        f.aligned_before = dw.aligned_now;
        f.aligned_after = aligned(ix, free1, dw.segment_nodes);
        const PlaceResult rw = place_on(placer, free1, w.layout, nodes, gpn, PlaceMode::Strict);
        f.starts_ideal = rw.status == PlaceStatus::Ideal;
        if (!f.starts_ideal && f.aligned_after <= f.aligned_before) continue;
        const std::set<int> rest = f.starts_ideal ? without(free1, rw.nodes) : free1;
        PlaceResult rk;
        if (rest.size() >= k->order.size()) rk = replace_job(placer, *k, rest);
        f.move = make_move(m, *k, rk, times, p);
        if (rk.nodes.empty() || rk.status == PlaceStatus::NoBlock) {
          f.move.migratable = false;
          f.move.refusal = "it would not restart at once after the move (no block left for it)";
        } else if (!no_worse(f.move.span_after, k->span)) {
          f.move.migratable = false;
          f.move.refusal = "it would restart on a worse span than now";
        } else if (f.move.migratable && !f.starts_ideal) {
          f.move.migratable = false;
          f.move.refusal = "the waiting job would still not have an ideal block";
        }
        dw.moves.push_back(std::move(f));
      }
      std::stable_sort(dw.moves.begin(), dw.moves.end(), [](const DefragFreeing &a, const DefragFreeing &b) {
        return std::make_tuple(!a.starts_ideal, -int64_t(a.aligned_after), !a.move.migratable, -a.move.gain_seconds) <
               std::make_tuple(!b.starts_ideal, -int64_t(b.aligned_after), !b.move.migratable, -b.move.gain_seconds);
      });
      if (dw.moves.size() > p.moves_per_waiting) dw.moves.resize(p.moves_per_waiting);
    } catch (const LayoutError &e) {
      plan.notes.push_back(fmt::format("job {}: not planned: {}", w.slurm.job_id, e.what()));
      continue;
    }
    plan.waiting.push_back(std::move(dw));
  }
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

namespace {

std::string move_line(const ShowModel &m, const DefragMove &mv) {
  const Topology &t = *m.topo;
  std::string s = fmt::format("move job {}: {} -> {}", mv.job_id, host_names(t, mv.from),
                              mv.to.empty() ? std::string("(no block: it would wait)") : host_names(t, mv.to));
  s += fmt::format("\n      span now: {}\n      span after: {}", span_text(mv.span_now),
                   mv.to.empty() ? std::string("-") : span_text(mv.span_after));
  s += fmt::format("\n      cost: time left {}, running {}, restarts {}, checkpoint age {}, signal {}",
                   dur(mv.time_left), dur(mv.run_time), mv.restarts, dur(mv.checkpoint_age), signal_text(mv));
  s += fmt::format("\n      gain: hop-bytes x{:.2f} -> x{:.2f} of ideal, est. slowdown {:.2f} -> {:.2f}",
                   mv.cost_now.ratio, mv.to.empty() ? mv.cost_now.ratio : mv.cost_after.ratio, mv.slowdown_now,
                   mv.slowdown_after);
  if (mv.time_left > 0) s += fmt::format(", ~{} saved over the time left", dur(int64_t(mv.gain_seconds)));
  s += mv.migratable ? "\n      --apply: yes" : "\n      --apply: no, " + mv.refusal;
  return s;
}

}  // namespace

std::string defrag_text(const ShowModel &m, const DefragPlan &plan) {
  std::string out;
  out += fmt::format("Fabric: {} ({} free nodes); {} running layout job(s) above their ideal span\n", m.topology_file,
                     plan.free_nodes, plan.above_ideal);
  for (const std::string &n : m.notes) out += "note: " + n + "\n";
  for (const std::string &n : plan.notes) out += "note: " + n + "\n";
  out += "\nRunning jobs that an ideal block would fit:\n";
  if (plan.relocations.empty()) out += "  none\n";
  for (const DefragRelocation &r : plan.relocations) {
    out += fmt::format("  job {}: {}\n", r.job_id,
                       r.now() ? "an ideal block is free now" : "an ideal block after one other move");
    for (size_t i = 0; i < r.steps.size(); ++i) out += fmt::format("    {}. {}\n", i + 1, move_line(m, r.steps[i]));
  }
  out += "\nWaiting jobs held by fragmentation:\n";
  if (plan.waiting.empty()) out += "  none\n";
  for (const DefragWaiting &w : plan.waiting) {
    out += fmt::format("  job {} ({}, {} nodes{}, segments of {} nodes): waiting {}; {} free nodes in whole segments\n",
                       w.job_id, w.mode, w.nodes, w.large ? ", large" : "", w.segment_nodes,
                       w.waiting_since ? age(m.now - w.waiting_since) : std::string("unknown"), w.aligned_now);
    if (w.moves.empty()) out += "    no single move frees aligned capacity\n";
    for (const DefragFreeing &f : w.moves)
      out += fmt::format("    - {} free nodes in whole segments after it{}\n      {}\n", f.aligned_after,
                         f.starts_ideal ? "; the waiting job then starts on an ideal block" : "", move_line(m, f.move));
  }
  return out;
}

ojson defrag_move_json(const ShowModel &m, const DefragMove &mv) {
  const Topology &t = *m.topo;
  ojson o;
  o["job_id"] = mv.job_id;
  o["from"] = host_names(t, mv.from);
  ojson from = ojson::array(), to = ojson::array();
  for (int h : mv.from) from.push_back(t.hosts[size_t(h)].name);
  for (int h : mv.to) to.push_back(t.hosts[size_t(h)].name);
  o["from_order"] = from;
  o["to"] = mv.to.empty() ? ojson(nullptr) : ojson(host_names(t, mv.to));
  o["to_order"] = to;
  o["predicted"] = place_status_name(mv.predicted);
  o["span_now"] = span_json(mv.span_now);
  o["span_after"] = mv.to.empty() ? ojson(nullptr) : span_json(mv.span_after);
  o["cost_now"] = cost_json(mv.cost_now, m.cost.comm_fraction);
  o["cost_after"] = mv.to.empty() ? ojson(nullptr) : cost_json(mv.cost_after, m.cost.comm_fraction);
  auto opt = [](int64_t v) { return v < 0 ? ojson(nullptr) : ojson(v); };
  o["time_left_s"] = opt(mv.time_left);
  o["run_time_s"] = opt(mv.run_time);
  o["restarts"] = mv.restarts;
  o["checkpoint_age_s"] = opt(mv.checkpoint_age);
  o["signal"] = mv.signal ? ojson(mv.signal) : ojson(nullptr);
  o["signal_time_s"] = mv.signal_time;
  o["signal_batch"] = mv.signal_batch;
  o["slowdown_now"] = mv.slowdown_now;
  o["slowdown_after"] = mv.slowdown_after;
  o["gain_s"] = mv.gain_seconds;
  o["migratable"] = mv.migratable;
  o["refusal"] = mv.refusal.empty() ? ojson(nullptr) : ojson(mv.refusal);
  return o;
}

ojson defrag_json(const ShowModel &m, const DefragPlan &plan) {
  ojson o;
  o["schema"] = "topoaware-defrag/1";
  o["topology_file"] = m.topology_file;
  o["free_nodes"] = plan.free_nodes;
  o["above_ideal"] = plan.above_ideal;
  ojson notes = ojson::array();
  for (const std::string &n : m.notes) notes.push_back(n);
  for (const std::string &n : plan.notes) notes.push_back(n);
  o["notes"] = notes;
  ojson rel = ojson::array();
  for (const DefragRelocation &r : plan.relocations) {
    ojson x;
    x["job_id"] = r.job_id;
    x["when"] = r.now() ? "now" : "after-one-move";
    x["applicable"] = r.applicable();
    x["gain_s"] = r.gain_seconds();
    ojson steps = ojson::array();
    for (const DefragMove &s : r.steps) steps.push_back(defrag_move_json(m, s));
    x["steps"] = steps;
    rel.push_back(x);
  }
  o["relocations"] = rel;
  ojson wait = ojson::array();
  for (const DefragWaiting &w : plan.waiting) {
    ojson x;
    x["job_id"] = w.job_id;
    x["nodes"] = w.nodes;
    x["mode"] = w.mode;
    x["large"] = w.large;
    x["segment_nodes"] = w.segment_nodes;
    x["waiting_since"] = w.waiting_since ? ojson(w.waiting_since) : ojson(nullptr);
    x["aligned_free_nodes"] = w.aligned_now;
    ojson mv = ojson::array();
    for (const DefragFreeing &f : w.moves) {
      ojson y;
      y["aligned_free_nodes_after"] = f.aligned_after;
      y["starts_ideal"] = f.starts_ideal;
      y["move"] = defrag_move_json(m, f.move);
      mv.push_back(y);
    }
    x["moves"] = mv;
    wait.push_back(x);
  }
  o["waiting"] = wait;
  return o;
}

}  // namespace topoaware
