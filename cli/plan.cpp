// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware plan: where would the engine place a job with this layout now, and what does it cost
// against the ideal and against first-fit by node index (Slurm's default without topology)?
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_commands.hpp"
#include "cost.hpp"
#include "hostlist.hpp"
#include "job_report.hpp"
#include "layout.hpp"
#include "placement.hpp"
#include "rank_order.hpp"
#include "text.hpp"
#include "topology_json.hpp"

namespace topoaware {

void add_plan_command(CLI::App &app, PlanOptions &o) {
  auto *plan = app.add_subcommand("plan", "Show where a job with a parallel layout would be placed now, and its cost");
  o.command = plan;
  plan->add_option("--topology", o.topology, "topology.json to plan on (FILE)")->required()->check(CLI::ExistingFile);
  plan->add_option("--tp", o.tp, "Tensor parallel size (inside one node)");
  plan->add_option("--pp", o.pp, "Pipeline parallel size");
  plan->add_option("--dp", o.dp, "Data parallel size");
  plan->add_option("--cp", o.cp, "Context parallel size");
  plan->add_option("--ep", o.ep, "Expert parallel size (divides cp*dp)");
  plan->add_option("--rank-order", o.order, "tp-cp-ep-dp-pp (Megatron, default) or tp-pp-dp");
  plan->add_option("--gpus-per-node", o.gpus_per_node, "GPUs of each node")->check(CLI::Range(1, 1024));
  plan->add_option("--free", o.free, "Slurm host list of the hosts free now (default: all)");
  plan->add_option("--busy", o.busy, "Slurm host list of the hosts busy now");
  plan->add_option("--mode", o.mode, "strict (only an ideal block) or prefer (best available)")
      ->check(CLI::IsMember({"strict", "prefer"}));
  plan->add_option("--comm-fraction", o.comm_fraction,
                   "Share of step time that is communication (for the slowdown estimate)")
      ->check(CLI::Range(0.0, 1.0));
  plan->add_option("--format", o.format, "text, json, dot or svg")
      ->check(CLI::IsMember({"text", "json", "dot", "svg"}));
}

namespace {

struct Plan {
  Layout layout;
  uint32_t nodes = 0;
  PlaceResult result;
  std::vector<int> first_fit;  // in node-index order (Slurm's rank order)
  JobCost cost, ff_cost;
  bool has_ff = false;
};

// Leaf groups whose uplinks carry less than the fabric's nominal bandwidth, as (name of the
// first leaf, real / nominal); empty on a healthy fabric.
std::vector<std::pair<std::string, double>> degraded_leaf_groups(const Topology &t, const TopoIndex &idx) {
  std::vector<std::pair<std::string, double>> out;
  for (int g = 0; idx.degraded() && g < idx.leaf_group_count(); ++g) {
    const double factor = idx.leaf_group_uplink_factor(g);
    if (factor <= 1 || idx.leaf_group_size(g) == 0) continue;
    const int leaf = size_t(g) < t.leaf_groups.size() ? t.leaf_groups[size_t(g)].leaves.front()
                                                      : idx.host_leaf(idx.leaf_group_hosts(g).front());
    out.emplace_back(leaf >= 0 ? t.switches[size_t(leaf)].name : "?", 1 / factor);
  }
  return out;
}

std::string text_report(const Topology &t, const TopoIndex &idx, const Plan &p, double f) {
  std::string out;
  const Layout &l = p.layout;
  out += fmt::format("Job: tp={} cp={} ep={} dp={} pp={} ({}), {} GPUs on {} nodes\n", l.tp, l.cp, l.ep, l.dp, l.pp,
                     rank_order_name(l.order), l.world(), p.nodes);
  out += fmt::format("Placement: {} ({} usable nodes with enough free GPUs)\n", place_status_name(p.result.status),
                     p.result.candidates);
  if (p.result.nodes.empty()) return out + "No nodes: the job does not fit the free nodes now.\n";
  out += fmt::format("Nodes: {}\n", host_names(t, p.result.nodes));
  const auto &q = p.result.quality;
  out += span_text(q) + "\n";
  const auto degraded = degraded_leaf_groups(t, idx);
  if (!degraded.empty()) {
    out += "Degraded leaf uplinks (jobs that cross leaf groups avoid them when the choice is otherwise equal):";
    for (const auto &[name, frac] : degraded) out += fmt::format(" {} at {:.2f} of nominal", name, frac);
    out += "\n";
  }
  // Which ranks share a node, a leaf group, a pod: the nodes in rank order, runs of one leaf group.
  uint32_t g = p.layout.world() / p.nodes;
  out += "\nRank layout (node k holds ranks k*" + std::to_string(g) + " ..):\n";
  for (const RankRun &r : rank_runs(idx, p.result.nodes, g))
    out += fmt::format("  ranks {:>6}-{:<6} leaf group {:<4} pod {:<3} {}\n", r.first_rank, r.last_rank, r.leaf_group,
                       r.pod, host_names(t, r.hosts));
  auto cost_lines = [&](const char *what, const JobCost &c) { return "  " + cost_text(what, c, f) + "\n"; };
  out += "\nCost per training step (cost model of topoaware(1); bytes per step):\n";
  out += cost_lines("topoaware:", p.cost);
  if (p.has_ff) {
    out += cost_lines("first-fit by node index:", p.ff_cost);
    if (p.ff_cost.hop_bytes > 0)
      out += fmt::format("  topoaware moves {:.2f} of first-fit's hop-bytes\n", p.cost.hop_bytes / p.ff_cost.hop_bytes);
  }
  return out;
}

std::string json_report(const Topology &t, const TopoIndex &idx, const Plan &p, double f) {
  nlohmann::ordered_json j;
  j["topology_hash"] = t.hash;
  j["layout"] = to_string(p.layout);
  j["nodes"] = p.nodes;
  j["status"] = place_status_name(p.result.status);
  j["candidates"] = p.result.candidates;
  nlohmann::ordered_json order = nlohmann::ordered_json::array();
  uint32_t g = p.nodes ? p.layout.world() / p.nodes : 0;
  for (size_t k = 0; k < p.result.nodes.size(); k++) {
    int h = p.result.nodes[k];
    order.push_back({{"host", t.hosts[h].name},
                     {"first_rank", k * g},
                     {"leaf_group", idx.host_leaf_group(h)},
                     {"pod", idx.host_pod(h)}});
  }
  j["rank_order"] = order;
  nlohmann::ordered_json degraded = nlohmann::ordered_json::array();
  for (const auto &[name, frac] : degraded_leaf_groups(t, idx))
    degraded.push_back({{"leaf", name}, {"uplink_fraction", frac}});
  j["degraded_leaf_uplinks"] = degraded;
  if (!p.result.nodes.empty()) {
    j["cost"] = cost_json(p.cost, f);
    if (p.has_ff) j["first_fit_cost"] = cost_json(p.ff_cost, f);
  }
  return j.dump(1) + "\n";
}

// The placement as a picture: pods as clusters, one box per leaf group with its free/busy/used
// counts; leaf groups the job uses are filled and labelled with their rank ranges.
std::string dot_report(const Topology &t, const TopoIndex &idx, const Plan &p, const std::vector<bool> &usable) {
  std::vector<int> used(idx.leaf_group_count(), 0), free(idx.leaf_group_count(), 0);
  std::vector<std::pair<uint32_t, uint32_t>> ranks(idx.leaf_group_count(), {UINT32_MAX, 0});
  uint32_t g = p.nodes ? p.layout.world() / p.nodes : 0;
  for (size_t k = 0; k < p.result.nodes.size(); k++) {
    int lg = idx.host_leaf_group(p.result.nodes[k]);
    used[lg]++;
    ranks[lg].first = std::min<uint32_t>(ranks[lg].first, k * g);
    ranks[lg].second = std::max<uint32_t>(ranks[lg].second, (k + 1) * g - 1);
  }
  for (int h = 0; h < idx.host_count(); h++)
    if (usable[h]) free[idx.host_leaf_group(h)]++;
  std::string out = "graph placement {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n";
  out += fmt::format("  label=\"{}\";\n", dot_escape(fmt::format("{} on {} nodes: {}", to_string(p.layout), p.nodes,
                                                                  place_status_name(p.result.status))));
  for (int pod = 0; pod < idx.pod_count(); pod++) {
    out += fmt::format("  subgraph cluster_pod{} {{\n    label=\"pod {}\";\n", pod, pod);
    for (int lg : idx.pod_leaf_groups(pod)) {
      int size = idx.leaf_group_size(lg);
      std::string first = t.switches[t.leaf_groups.size() > size_t(lg) ? t.leaf_groups[lg].leaves.front() : 0].name;
      std::string label = fmt::format("{}\n{} hosts: {} free", first, size, free[lg] - used[lg]);
      std::string color = "white";
      if (used[lg]) {
        label += fmt::format("\njob: {} nodes, ranks {}-{}", used[lg], ranks[lg].first, ranks[lg].second);
        color = "lightblue";
      } else if (free[lg] == 0) {
        color = "gray80";
      }
      out += fmt::format("    lg{} [label=\"{}\", fillcolor=\"{}\"];\n", lg, dot_escape(label), color);
    }
    out += "  }\n";
  }
  // Consecutive leaf groups of the rank order: the path the job's neighbours take.
  int prev = -1;
  std::set<std::pair<int, int>> edges;
  for (int h : p.result.nodes) {
    int lg = idx.host_leaf_group(h);
    if (prev >= 0 && prev != lg && edges.insert({prev, lg}).second)
      out += fmt::format("  lg{} -- lg{} [color=blue, penwidth=2];\n", prev, lg);
    prev = lg;
  }
  return out + "}\n";
}

}  // namespace

int run_plan(const PlanOptions &o) {
  Topology topo = load_topology_file(o.topology);
  TopoIndex idx(topo);
  Plan p;
  Layout &l = p.layout;
  if (!o.tp.empty()) l.tp = parse_axis("tp", o.tp);
  if (!o.pp.empty()) l.pp = parse_axis("pp", o.pp);
  if (!o.dp.empty()) l.dp = parse_axis("dp", o.dp);
  if (!o.cp.empty()) l.cp = parse_axis("cp", o.cp);
  if (!o.ep.empty()) l.ep = parse_axis("ep", o.ep);
  if (!o.order.empty()) l.order = parse_rank_order(o.order);
  validate_layout(l);
  validate_tp_fits(l, o.gpus_per_node);
  Request req = complete_request(l, Request{}, o.gpus_per_node);
  p.nodes = req.nodes;

  if (!o.free.empty() && !o.busy.empty()) throw std::invalid_argument("give --free or --busy, not both");
  std::vector<bool> usable(topo.hosts.size(), o.free.empty());
  auto mark = [&](const std::string &list, bool value, const char *opt) {
    for (const auto &name : hostlist_expand(list)) {
      int h = idx.find_host(name);
      if (h < 0) throw std::invalid_argument(std::string(opt) + ": " + name + " is not a host of " + o.topology);
      usable[h] = value;
    }
  };
  if (!o.free.empty()) mark(o.free, true, "--free");
  if (!o.busy.empty()) mark(o.busy, false, "--busy");

  std::vector<int> hosts;
  std::vector<uint32_t> gpus;
  for (size_t h = 0; h < usable.size(); h++)
    if (usable[h]) hosts.push_back(int(h)), gpus.push_back(req.gpus_per_node);
  Placer placer(idx);
  Job job;
  job.nodes = req.nodes;
  job.gpus_per_node = req.gpus_per_node;
  job.layout = l;
  placer.place(hosts.data(), gpus.data(), hosts.size(), job, o.mode == "strict" ? PlaceMode::Strict : PlaceMode::Prefer,
               p.result);
  CostParams params;
  params.comm_fraction = o.comm_fraction;
  if (!p.result.nodes.empty()) p.cost = job_cost(idx, p.result.nodes, l, params);
  if (hosts.size() >= req.nodes) {
    // Slurm without topology: the lowest node indices, ranks in node-index order.
    p.first_fit.assign(hosts.begin(), hosts.begin() + req.nodes);
    p.ff_cost = job_cost(idx, p.first_fit, l, params);
    p.has_ff = true;
  }
  std::string out;
  if (o.format == "json") out = json_report(topo, idx, p, o.comm_fraction);
  else if (o.format == "dot") out = dot_report(topo, idx, p, usable);
  else if (o.format == "svg") out = dot_to_svg(dot_report(topo, idx, p, usable));
  else out = text_report(topo, idx, p, o.comm_fraction);
  std::cout << out;
  // Strict mode with no ideal block is an answer, not an error; no nodes at all is exit 4.
  return p.result.nodes.empty() ? 4 : 0;
}

}  // namespace topoaware
