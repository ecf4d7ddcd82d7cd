// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware plan: where would the engine place a job with this layout now, and what does it cost
// against the ideal and against first-fit by node index (Slurm's default without topology)?
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "cli_commands.hpp"
#include "cost.hpp"
#include "hostlist.hpp"
#include "job_report.hpp"
#include "layout.hpp"
#include "placement.hpp"
#include "policies.hpp"
#include "rank_order.hpp"
#include "route_trace.hpp"
#include "text.hpp"
#include "topology_json.hpp"
#include "traffic.hpp"

namespace topoaware {

void add_plan_command(CLI::App &app, PlanOptions &o) {
  auto *plan = app.add_subcommand("plan", "Show where a job with a parallel layout would be placed now, and its cost");
  o.command = plan;
  plan->add_option("--topology", o.topology, "topology.json to plan on (FILE)")->required()->check(CLI::ExistingFile);
  plan->add_option("--tp", o.tp, "Tensor parallel size (inside one node, or one multi-node NVLink domain)");
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
  plan->add_option("--policy", o.policy,
                   "Stock Slurm placement to compare with: slurm-tree (topology/tree) or slurm-block (topology/block)")
      ->check(CLI::IsMember({"slurm-tree", "slurm-block"}));
  plan->add_option("--comm-fraction", o.comm_fraction,
                   "Share of step time that is communication (for the slowdown estimate)")
      ->check(CLI::Range(0.0, 1.0));
  plan->add_option("--format", o.format, "text, json, dot or svg")
      ->check(CLI::IsMember({"text", "json", "dot", "svg"}));
  plan->add_flag("--flows", o.flows,
                 "Also list the job's flows of one step that leave a leaf and the cables they take (from the "
                 "forwarding tables in topology.json; without them the cables are unknown)");
}

namespace {

struct Plan {
  Layout layout;
  uint32_t nodes = 0;
  PlaceResult result;
  std::vector<int> first_fit;  // in node-index order (Slurm's rank order)
  JobCost cost, ff_cost, tree_cost;
  bool has_ff = false;
  bool has_tree = false;  // the stock Slurm policy (--policy) placed the job
  std::string policy;     // slurm-tree or slurm-block
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

// --flows: the planned job's step traffic (corelib/traffic.hpp) between NIC ports on different
// switches, each flow traced through the recorded forwarding tables to the destination's base LID.
// Without tables nothing is guessed: the cables are reported unknown.
// The flows of one phase between the same two NIC ports (the tp ranks of a node that share a
// NIC) take the same path: one entry with their count and summed bytes.
struct CrossFlow {
  TrafficPhase phase;
  Flow flow;          // bytes: of all `count` flows
  int count = 0;
  TracedRoute route;  // empty without routes
};
struct CableUse {
  int flows = 0;
  double bytes = 0;
  int per_phase[kTrafficPhases] = {};
};
struct FlowsReport {
  bool routed = false;  // topology.json has forwarding tables
  double dp_bytes = 0, pp_bytes = 0;
  std::vector<CrossFlow> flows;
  // (switch, out port) -> use; a cable is named by the port a packet leaves by, so each direction
  // of a cable is its own entry.
  std::map<std::pair<int, int>, CableUse> cables;
  int untraced = 0;
};

FlowsReport plan_flows(const Topology &t, const Plan &p, const CostParams &params) {
  FlowsReport r;
  StepJob job;
  job.layout = p.layout;
  job.nodes = p.result.nodes;
  // The cost model's bytes (as the trace simulator's snapshots): the gradient all-reduced per rank,
  // and all micro-batches' activations per PP boundary and direction. EP has no byte count there.
  r.dp_bytes = job.dp_bytes = params.grad_bytes_per_rank(p.layout);
  r.pp_bytes = job.pp_bytes = params.micro_batches * params.activation_bytes(p.layout);
  const JobTraffic traffic = job_traffic(t, job);
  const RouteTracer tracer(t);
  r.routed = tracer.has_routes();
  for (int ph = 0; ph < kTrafficPhases; ++ph) {
    std::map<std::tuple<int, int, int, int>, size_t> at;  // NIC pair -> index into r.flows
    for (const Flow &f : traffic.phase[ph]) {
      const HcaPort &a = t.hosts[size_t(f.src_host)].ports[size_t(f.src_port)];
      const HcaPort &b = t.hosts[size_t(f.dst_host)].ports[size_t(f.dst_port)];
      if (a.sw == b.sw) continue;  // through one switch: no cable between switches
      auto [it, fresh] = at.insert({{f.src_host, f.src_port, f.dst_host, f.dst_port}, r.flows.size()});
      if (fresh) {
        r.flows.push_back({TrafficPhase(ph), f, 0, {}});
        r.flows.back().flow.bytes = 0;
        if (r.routed) r.flows.back().route = tracer.trace(f.src_host, f.src_port, f.dst_host, f.dst_port, 0);
      }
      CrossFlow &c = r.flows[it->second];
      ++c.count;
      c.flow.bytes += f.bytes;
      if (!r.routed) continue;
      if (!c.route.ok()) ++r.untraced;
      for (size_t i = 0; c.route.ok() && i + 1 < c.route.hops.size(); ++i) {
        CableUse &u = r.cables[{c.route.hops[i].sw, c.route.hops[i].out_port}];
        ++u.flows;
        u.bytes += f.bytes;
        ++u.per_phase[ph];
      }
    }
  }
  return r;
}

std::string port_name(const Topology &t, int host, int port) { return t.hosts[size_t(host)].name + ":" + std::to_string(port); }

std::string cable_name(const Topology &t, const RouteTracer &tracer, int sw, int port) {
  const RouteTracer::Peer peer = tracer.peer(sw, port);
  std::string out = t.switches[size_t(sw)].name + " p" + std::to_string(port) + " -> ";
  if (peer.kind == RouteTracer::Peer::Switch)
    return out + t.switches[size_t(peer.index)].name + " p" + std::to_string(peer.port);
  return out + "?";
}

// Cables by flows, then bytes, then name: the most shared first.
std::vector<std::pair<std::pair<int, int>, CableUse>> cables_by_use(const FlowsReport &r) {
  std::vector<std::pair<std::pair<int, int>, CableUse>> v(r.cables.begin(), r.cables.end());
  std::stable_sort(v.begin(), v.end(), [](const auto &x, const auto &y) {
    return x.second.flows != y.second.flows ? x.second.flows > y.second.flows : x.second.bytes > y.second.bytes;
  });
  return v;
}

std::string flows_text(const Topology &t, const FlowsReport &r) {
  std::string out = "\nFlows of one step that leave a leaf (NIC port to NIC port; DP ring edge 2(d-1)/d x " +
                    fmt::format("{:.3g} GB, PP {:.3g} GB per boundary and direction; EP all-to-all not listed: the "
                                "cost model has no bytes for it):\n",
                                r.dp_bytes / 1e9, r.pp_bytes / 1e9);
  int count[kTrafficPhases] = {};
  double bytes[kTrafficPhases] = {};
  for (const CrossFlow &c : r.flows) count[int(c.phase)] += c.count, bytes[int(c.phase)] += c.flow.bytes;
  for (int ph = 0; ph < kTrafficPhases; ++ph)
    if (count[ph])
      out += fmt::format("  {}: {} flows, {:.1f} GB\n", phase_name(TrafficPhase(ph)), count[ph], bytes[ph] / 1e9);
  if (r.flows.empty()) return out + "  none: every flow stays inside a node or a leaf\n";
  const RouteTracer tracer(t);
  if (!r.routed) {
    out += "Cables: unknown. topology.json has no forwarding tables (topoaware discover --routes, or --ibnetdiscover "
           "with --lfts); which uplink a flow takes is the subnet manager's choice, and is not guessed here.\n";
  } else {
    out += "Cables they take (the forwarding tables in topology.json, to each port's base LID), most shared first:\n";
    for (const auto &[key, u] : cables_by_use(r)) {
      std::string phases;
      for (int ph = 0; ph < kTrafficPhases; ++ph)
        if (u.per_phase[ph]) phases += fmt::format("{}{} {}", phases.empty() ? "" : ", ", phase_name(TrafficPhase(ph)), u.per_phase[ph]);
      out += fmt::format("  {:<34} {:>4} flows ({})  {:.1f} GB\n", cable_name(t, tracer, key.first, key.second), u.flows,
                         phases, u.bytes / 1e9);
    }
    if (r.untraced)
      out += fmt::format("  {} flows are not delivered by the tables (below): their cables are unknown\n", r.untraced);
  }
  out += "Flows (those of one phase between the same two NIC ports together):\n";
  for (const CrossFlow &c : r.flows) {
    const HcaPort &a = t.hosts[size_t(c.flow.src_host)].ports[size_t(c.flow.src_port)];
    const HcaPort &b = t.hosts[size_t(c.flow.dst_host)].ports[size_t(c.flow.dst_port)];
    const std::string path = r.routed ? route_to_text(t, c.route)
                                      : t.switches[size_t(a.sw)].name + " -> ? -> " + t.switches[size_t(b.sw)].name;
    out += fmt::format("  {} {:>12} -> {:<12} {:>3} x {:.3g} GB  {}\n", phase_name(c.phase),
                       port_name(t, c.flow.src_host, c.flow.src_port), port_name(t, c.flow.dst_host, c.flow.dst_port),
                       c.count, c.flow.bytes / c.count / 1e9, path);
  }
  return out;
}

nlohmann::ordered_json flows_json(const Topology &t, const FlowsReport &r) {
  nlohmann::ordered_json j;
  j["routed"] = r.routed;
  j["routes_hash"] = r.routed ? nlohmann::ordered_json(t.routes.hash) : nlohmann::ordered_json(nullptr);
  j["dp_bytes"] = r.dp_bytes;
  j["pp_bytes"] = r.pp_bytes;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CrossFlow &c : r.flows) {
    nlohmann::ordered_json f;
    f["phase"] = phase_name(c.phase);
    f["src"] = t.hosts[size_t(c.flow.src_host)].name;
    f["src_port"] = c.flow.src_port;
    f["dst"] = t.hosts[size_t(c.flow.dst_host)].name;
    f["dst_port"] = c.flow.dst_port;
    f["flows"] = c.count;
    f["bytes"] = c.flow.bytes;
    if (!r.routed) {
      f["hops"] = nullptr;  // unknown: no tables
    } else {
      nlohmann::ordered_json hops = nlohmann::ordered_json::array();
      for (const RouteHop &h : c.route.hops)
        hops.push_back({{"switch", t.switches[size_t(h.sw)].name}, {"in", h.in_port}, {"out", h.out_port}});
      f["hops"] = hops;
      if (!c.route.ok()) f["error"] = c.route.error;
    }
    list.push_back(f);
  }
  j["flows"] = list;
  nlohmann::ordered_json cables = r.routed ? nlohmann::ordered_json::array() : nlohmann::ordered_json(nullptr);
  const RouteTracer tracer(t);
  for (const auto &[key, u] : cables_by_use(r)) {
    const RouteTracer::Peer peer = tracer.peer(key.first, key.second);
    nlohmann::ordered_json phases;
    for (int ph = 0; ph < kTrafficPhases; ++ph) phases[phase_name(TrafficPhase(ph))] = u.per_phase[ph];
    cables.push_back({{"from", t.switches[size_t(key.first)].name},
                      {"from_port", key.second},
                      {"to", peer.kind == RouteTracer::Peer::Switch ? t.switches[size_t(peer.index)].name : "?"},
                      {"to_port", peer.port},
                      {"flows", u.flows},
                      {"bytes", u.bytes},
                      {"phases", phases}});
  }
  j["cables"] = cables;
  return j;
}

// The stock Slurm placement plan compares with (--policy), as the cost lines name it.
std::string stock_name(const std::string &policy) {
  return policy == "slurm-block" ? "Slurm topology/block" : "Slurm topology/tree";
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
    if (p.has_tree) out += cost_lines((stock_name(p.policy) + ":").c_str(), p.tree_cost);
    if (p.ff_cost.hop_bytes > 0)
      out += fmt::format("  topoaware moves {:.2f} of first-fit's hop-bytes\n", p.cost.hop_bytes / p.ff_cost.hop_bytes);
    if (p.has_tree && p.tree_cost.hop_bytes > 0)
      out += fmt::format("  topoaware moves {:.2f} of {}'s hop-bytes\n", p.cost.hop_bytes / p.tree_cost.hop_bytes,
                         stock_name(p.policy));
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
    if (p.has_tree) j[p.policy == "slurm-block" ? "slurm_block_cost" : "slurm_tree_cost"] = cost_json(p.tree_cost, f);
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

// The layout of the options, checked alone (its fit to the nodes' GPUs is checked by the caller).
Layout options_layout(const PlanOptions &o) {
  Layout l;
  if (!o.tp.empty()) l.tp = parse_axis("tp", o.tp);
  if (!o.pp.empty()) l.pp = parse_axis("pp", o.pp);
  if (!o.dp.empty()) l.dp = parse_axis("dp", o.dp);
  if (!o.cp.empty()) l.cp = parse_axis("cp", o.cp);
  if (!o.ep.empty()) l.ep = parse_axis("ep", o.ep);
  if (!o.order.empty()) l.order = parse_rank_order(o.order);
  validate_layout(l);
  return l;
}

// The hosts the plan may take: every host, or only --free's, less --busy's.
std::vector<bool> usable_hosts(const PlanOptions &o, const Topology &topo, const TopoIndex &idx) {
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
  return usable;
}

// The baselines on the same free hosts, for comparison: Slurm without topology (the lowest node
// indices, ranks in node-index order), and stock Slurm with topology/tree or topology/block (the
// topology.conf topoaware writes; whole nodes, ranks in node-index order).
void place_baselines(const PlanOptions &o, const TopoIndex &idx, const PolicyRequest &pr,
                     const std::vector<uint8_t> &free, const CostParams &params, Plan &p) {
  const Layout &l = p.layout;
  PolicyChoice ff;
  make_placement_policy("first-fit", idx)->place(pr, free, ff);
  p.first_fit = std::move(ff.nodes);
  p.ff_cost = job_cost(idx, p.first_fit, l, params);
  p.has_ff = true;
  SlurmFabricView view;
  build_slurm_view(idx, view);
  p.policy = o.policy;
  auto tree = make_placement_policy(o.policy, idx, view);
  PolicyRequest tr;
  tr.job = pr.job;
  PolicyChoice choice;
  if (tree->place(tr, free, choice)) {
    p.tree_cost = job_cost(idx, choice.nodes, l, params);
    p.has_tree = true;
  }
}

// The plan in the format asked for (--flows adds the job's flows to text and JSON).
std::string plan_output(const PlanOptions &o, const Topology &topo, const TopoIndex &idx, const Plan &p,
                        const std::vector<bool> &usable, const CostParams &params) {
  std::string out;
  if (o.flows && (o.format == "dot" || o.format == "svg"))
    throw std::invalid_argument("--flows is listed with --format text or json");
  if (o.format == "json") {
    out = json_report(topo, idx, p, o.comm_fraction);
    if (o.flows && !p.result.nodes.empty()) {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(out);
      j["flows"] = flows_json(topo, plan_flows(topo, p, params));
      out = j.dump(1) + "\n";
    }
  } else if (o.format == "dot") {
    out = dot_report(topo, idx, p, usable);
  } else if (o.format == "svg") {
    out = dot_to_svg(dot_report(topo, idx, p, usable));
  } else {
    out = text_report(topo, idx, p, o.comm_fraction);
    if (o.flows && !p.result.nodes.empty()) out += flows_text(topo, plan_flows(topo, p, params));
  }
  return out;
}

}  // namespace

int run_plan(const PlanOptions &o) {
  Topology topo = load_topology_file(o.topology);
  TopoIndex idx(topo);
  Plan p;
  Layout &l = p.layout;
  l = options_layout(o);
  // Multi-node NVLink domains: a TP group may span the nodes of one (the same check as job_submit's).
  std::vector<uint32_t> domains;
  for (const NvlinkDomain &d : topo.nvlink_domains)
    if (d.hosts.size() >= 2) domains.push_back(uint32_t(d.hosts.size()));
  validate_tp_fits(l, o.gpus_per_node, domains);
  Request req = complete_request(l, Request{}, o.gpus_per_node, domains);
  p.nodes = req.nodes;
  const std::vector<bool> usable = usable_hosts(o, topo, idx);

  // Every answer comes from a named policy (corelib/policies.hpp) on the same free hosts.
  const std::vector<uint8_t> free(usable.begin(), usable.end());
  const size_t nfree = size_t(std::count(usable.begin(), usable.end(), true));
  PolicyRequest pr;
  pr.job.nodes = req.nodes;
  pr.job.gpus_per_node = req.gpus_per_node;
  pr.job.layout = l;
  pr.mode = o.mode == "strict" ? PlaceMode::Strict : PlaceMode::Prefer;
  PolicyChoice engine;
  make_placement_policy("topoaware", idx)->place(pr, free, engine);
  p.result.status = engine.status;
  p.result.nodes = std::move(engine.nodes);
  p.result.quality = engine.quality;
  p.result.candidates = engine.candidates;
  CostParams params;
  params.comm_fraction = o.comm_fraction;
  if (!p.result.nodes.empty()) p.cost = job_cost(idx, p.result.nodes, l, params);
  if (nfree >= req.nodes) place_baselines(o, idx, pr, free, params, p);
  std::cout << plan_output(o, topo, idx, p, usable, params);
  // Strict mode with no ideal block is an answer, not an error; no nodes at all is exit 4.
  return p.result.nodes.empty() ? 4 : 0;
}

}  // namespace topoaware
