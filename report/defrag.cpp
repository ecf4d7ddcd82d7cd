// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware defrag over show's model (defrag.hpp): the core's input from the model, the plan as text and JSON.
#include "defrag.hpp"

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

DefragOptIn opt_in(const ShowJob &j) {
  DefragOptIn o;
  if (!j.status) return o;
  o.known = true;
  o.migrate = j.status->migrate;
  o.requeue = j.status->requeue;
  o.signal = j.status->signal;
  o.signal_time = j.status->signal_time;
  o.signal_batch = j.status->signal_batch;
  return o;
}

std::string dur(int64_t s) { return s < 0 ? "unknown" : age(s); }

std::string signal_text(const DefragMove &mv) {
  if (!mv.signal) return "none";
  return fmt::format("{}{}@{}s", mv.signal_batch ? "B:" : "", mv.signal, mv.signal_time);
}

}  // namespace

std::string defrag_refusal(const ShowJob &j, const DefragJobTimes &t) { return defrag_refusal(opt_in(j), t); }

DefragPlan plan_defrag(const ShowModel &m, const std::map<uint32_t, DefragJobTimes> &times, const DefragParams &p) {
  DefragInput in;
  in.index = m.index.get();
  in.cost = m.cost;
  in.times = times;
  for (size_t h = 0; h < m.nodes.size(); ++h)
    if (m.nodes[h].use == NodeUse::Free || m.nodes[h].use == NodeUse::Planned) in.free.push_back(int(h));
  for (const ShowJob &j : m.jobs) {
    if (!movable(j)) continue;
    DefragRunning r;
    r.job_id = j.slurm.job_id;
    r.layout = j.layout;
    r.hosts = j.hosts;
    r.order = j.order;
    r.span = j.span;
    r.cost = j.cost;
    r.strict = j.status->mode == "strict";
    r.opt = opt_in(j);
    in.running.push_back(std::move(r));
  }
  for (const ShowJob &w : m.waiting) {
    if (w.slurm.state != "PENDING" || !w.has_layout || !w.status) continue;
    DefragPending d;
    d.job_id = w.slurm.job_id;
    d.layout = w.layout;
    d.gpus_per_node = w.status->gpus_per_node;
    d.mode = w.status->mode;
    d.waiting_since = w.status->since;
    in.pending.push_back(std::move(d));
  }
  DefragPlan plan = plan_defrag(in, p);
  if (m.hash_mismatch)
    plan.notes.insert(plan.notes.begin(),
                      "the status file was written with another topology: the plan is over the file given");
  return plan;
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
