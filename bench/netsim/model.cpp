// SPDX-License-Identifier: GPL-2.0-or-later
// bench/netsim: snapshot, step traffic and the routed fabric (see model.hpp and README.md).
#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "hostlist.hpp"

namespace topoaware::netsim {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string &what) { throw std::runtime_error("snapshot: " + what); }

double bytes_field(const json &j, const char *key, const std::string &job) {
  if (!j.contains(key)) return 0;
  const json &v = j.at(key);
  if (!v.is_number() || v.get<double>() < 0 || !std::isfinite(v.get<double>()))
    bad("job '" + job + "': '" + key + "' must be a number of bytes >= 0");
  return v.get<double>();
}

Layout layout_field(const json &j, const std::string &job) {
  if (!j.contains("layout")) bad("job '" + job + "': no 'layout'");
  const json &v = j.at("layout");
  Layout l;
  try {
    if (v.is_string()) {
      l = parse_layout(v.get<std::string>());
    } else if (v.is_object()) {
      for (const auto &[k, x] : v.items()) {
        const std::string val = x.is_string() ? x.get<std::string>() : x.is_number_unsigned() ? x.dump() : "?";
        set_layout_option(l, k == "rank_order" ? "rank-order" : k, val);
      }
      validate_layout(l);
    } else {
      bad("job '" + job + "': 'layout' must be \"tp=..,pp=..,dp=..\" or {\"tp\": .., \"pp\": .., \"dp\": ..}");
    }
  } catch (const LayoutError &e) {
    bad("job '" + job + "': " + e.what());
  }
  return l;
}

}  // namespace

Snapshot snapshot_from_json(const std::string &text, const TopoIndex &index) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {
    bad(std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("jobs") || !doc.at("jobs").is_array()) bad("expected {\"jobs\": [...]}");
  if (doc.contains("schema") && doc.at("schema") != "topoaware-netsim/1")
    bad("unknown schema " + doc.at("schema").dump() + " (this is topoaware-netsim/1)");
  Snapshot snap;
  std::vector<char> used(size_t(index.host_count()), 0);
  RankOrderer orderer(index);
  // "topoaware-neighbours": the ring edges that the jobs before it in the snapshot (so ordered)
  // put on each cable, counted by the entry choice after the job's own.
  std::vector<uint32_t> neighbour_edges;
  for (const json &j : doc.at("jobs")) {
    if (!j.is_object()) bad("every job must be an object");
    SnapshotJob job;
    job.name = j.value("name", "job" + std::to_string(snap.jobs.size() + 1));
    job.layout = layout_field(j, job.name);
    if (!j.contains("nodes")) bad("job '" + job.name + "': no 'nodes'");
    std::vector<std::string> names;
    const json &n = j.at("nodes");
    if (n.is_string()) {
      names = hostlist_expand(n.get<std::string>());
    } else if (n.is_array()) {
      for (const json &x : n) {
        if (!x.is_string()) bad("job '" + job.name + "': 'nodes' must hold host names");
        names.push_back(x.get<std::string>());
      }
    } else {
      bad("job '" + job.name + "': 'nodes' must be a host list string or an array of names");
    }
    for (const std::string &name : names) {
      const int h = index.find_host(name);
      if (h < 0) bad("job '" + job.name + "': host '" + name + "' is not in the topology");
      if (used[size_t(h)]) bad("job '" + job.name + "': host '" + name + "' is used twice in the snapshot");
      used[size_t(h)] = 1;
      job.nodes.push_back(h);
    }
    try {
      // On a fabric with NVLink domains a TP group may span trays even where they are not in one
      // domain (Slurm's own selection puts them anywhere; NCCL then crosses the NICs): judged, not refused.
      (void)job_geometry(job.layout, uint32_t(job.nodes.size()), index.has_domains());
      const std::string order = j.value("order", "given");
      if (order == "topoaware" || order == "topoaware-neighbours") {
        std::vector<int> out;
        orderer.set_neighbour_edges(order == "topoaware" ? nullptr : &neighbour_edges);
        orderer.order(job.nodes, job.layout, out);
        job.nodes = out;
      } else if (order != "given") {
        bad("job '" + job.name + "': 'order' must be \"given\", \"topoaware\" or \"topoaware-neighbours\"");
      }
    } catch (const LayoutError &e) {
      bad("job '" + job.name + "': " + e.what());
    }
    job.dp_bytes = bytes_field(j, "dp_bytes", job.name);
    job.pp_bytes = bytes_field(j, "pp_bytes", job.name);
    job.ep_bytes = bytes_field(j, "ep_bytes", job.name);
    job.tp_bytes = bytes_field(j, "tp_bytes", job.name);
    snap.jobs.push_back(std::move(job));
  }
  if (doc.contains("seed") && doc.at("seed").is_number_integer()) snap.seed = doc.at("seed").get<int64_t>();
  return snap;
}

const char *routing_name(Routing r) {
  switch (r) {
    case Routing::Adaptive:
      return "adaptive";
    case Routing::DModK:
      return "dmodk";
    case Routing::AsRouted:
      return "as-routed";
  }
  return "?";
}

const char *routing_label(Routing r) { return r == Routing::DModK ? "dmodk (synthetic)" : routing_name(r); }

Routing routing_from_name(const std::string &name) {
  for (int r = 0; r < kRoutings; ++r)
    if (name == routing_name(Routing(r))) return Routing(r);
  throw std::invalid_argument("unknown routing '" + name + "' (adaptive, dmodk or as-routed)");
}

namespace {

// Down-reachability over a graph whose nodes have levels: below[n][m] = m is reachable from n
// going down only. `down[n]` lists the lower ends of n's downward edges.
std::vector<std::vector<char>> reach_below(const std::vector<int> &level, const std::vector<std::vector<int>> &down) {
  const size_t N = level.size();
  std::vector<int> order(N);
  for (size_t n = 0; n < N; ++n) order[n] = int(n);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return level[size_t(x)] < level[size_t(y)]; });
  std::vector<std::vector<char>> below(N, std::vector<char>(N, 0));
  for (int n : order)
    for (int c : down[size_t(n)]) {
      below[size_t(n)][size_t(c)] = 1;
      for (size_t m = 0; m < N; ++m)
        if (below[size_t(c)][m]) below[size_t(n)][m] = 1;
    }
  return below;
}

}  // namespace

// A switch-to-switch cable, oriented lower level -> higher level (inside a level, lower switch
// index first), with the ports at both ends.
struct FabricModel::Cable {
  int lo, hi, plo, phi;
  double bw;
};

FabricModel::FabricModel(const Topology &topo, Routing routing) : topo_(&topo), routing_(routing) {
  const char *prefix = routing == Routing::Adaptive ? "a:" : routing == Routing::DModK ? "d:" : "r:";
  if (routing == Routing::AsRouted && topo.routes.empty())
    throw std::runtime_error(
        "netsim: as-routed needs the forwarding tables in topology.json (topoaware discover --routes, or "
        "--ibnetdiscover with --lfts)");
  add_nic_links(prefix);
  std::vector<std::vector<int>> sw_down(topo.switches.size());
  const std::vector<Cable> cables = switch_cables(sw_down);
  if (routing == Routing::AsRouted) {
    add_routed_cables(cables, prefix);
    return;
  }
  if (flat_) {
    add_flat_links(cables, prefix);
    return;
  }
  build_tree(cables, sw_down, prefix);
}

// One link per NIC port (nic_link_), whatever the routing: a host's bandwidth is its ports'.
void FabricModel::add_nic_links(const char *prefix) {
  const Topology &topo = *topo_;
  nic_link_.resize(topo.hosts.size());
  for (size_t h = 0; h < topo.hosts.size(); ++h)
    for (size_t p = 0; p < topo.hosts[h].ports.size(); ++p) {
      const HcaPort &port = topo.hosts[h].ports[p];
      nic_link_[h].push_back(int(links_.size()));
      links_.push_back(
          {prefix + topo.hosts[h].name + ":" + std::to_string(p), port.width * lane_gbps(port.speed) * 1e9 / 8});
    }
}

// Every switch-to-switch cable, oriented; sw_down: the switches one level below each switch.
// Sets flat_ when a cable joins two switches of one level (no up/down: shortest paths).
std::vector<FabricModel::Cable> FabricModel::switch_cables(std::vector<std::vector<int>> &sw_down) {
  const Topology &topo = *topo_;
  std::vector<Cable> cables;
  for (const Link &lk : topo.links) {
    const int a = topo.switch_index(lk.a), b = topo.switch_index(lk.b);
    if (a < 0 || b < 0) continue;  // a host cable: modelled from the host's ports
    const Switch &sa = topo.switches[size_t(a)], &sb = topo.switches[size_t(b)];
    if (sa.level == sb.level) flat_ = true;  // e.g. dragonfly routers: no up/down, shortest paths
    // Oriented lower level -> higher level; inside a level, lower switch index first.
    const bool a_low = sa.level != sb.level ? sa.level < sb.level : a < b;
    for (const auto &[pa, pb] : lk.ports)
      cables.push_back({a_low ? a : b, a_low ? b : a, a_low ? pa : pb, a_low ? pb : pa, lk.gbps() * 1e9 / 8});
    if (sa.level != sb.level) sw_down[size_t(a_low ? b : a)].push_back(a_low ? a : b);
  }
  return cables;
}

// As-routed: every cable its own link, named as under D-mod-K; a packet leaving the lower end's
// port crosses it "up". The tables, not this model, choose among the cables.
void FabricModel::add_routed_cables(const std::vector<Cable> &cables, const char *prefix) {
  const Topology &topo = *topo_;
  for (const Cable &c : cables) {
    const int id = int(links_.size());
    links_.push_back({prefix + topo.switches[size_t(c.lo)].name + ":" + std::to_string(c.plo) + "-" +
                          topo.switches[size_t(c.hi)].name + ":" + std::to_string(c.phi),
                      c.bw});
    port_link_[uint64_t(c.lo) << 8 | uint64_t(c.plo & 0xff)] = {id, true};
    port_link_[uint64_t(c.hi) << 8 | uint64_t(c.phi & 0xff)] = {id, false};
  }
  tracer_ = std::make_unique<RouteTracer>(topo);
}

// A flat fabric: every switch is a node; D-mod-K: every cable a link; adaptive: parallel cables
// one link (their bandwidth summed), as adaptive routing spreads over them.
void FabricModel::add_flat_links(const std::vector<Cable> &cables, const char *prefix) {
  const Topology &topo = *topo_;
  std::vector<std::vector<Edge>> adj(topo.switches.size());
  std::map<std::pair<int, int>, int> merged;
  for (const Cable &c : cables) {
    const std::string &lo = topo.switches[size_t(c.lo)].name, &hi = topo.switches[size_t(c.hi)].name;
    int id = int(links_.size());
    if (routing_ == Routing::Adaptive) {
      auto [it, fresh] = merged.insert({{c.lo, c.hi}, id});
      if (!fresh) {
        links_[size_t(it->second)].bytes_per_s += c.bw;
        continue;
      }
      links_.push_back({prefix + lo + "-" + hi, c.bw});
    } else {
      links_.push_back({prefix + lo + ":" + std::to_string(c.plo) + "-" + hi + ":" + std::to_string(c.phi), c.bw});
    }
    adj[size_t(c.lo)].push_back({c.hi, id, c.plo, true});
    adj[size_t(c.hi)].push_back({c.lo, id, c.phi, false});
  }
  build_flat(adj);
}

// An up/down fabric: the routing graph's nodes, its links, each node's edges sorted by (other,
// port) and what every node reaches going down.
void FabricModel::build_tree(const std::vector<Cable> &cables, const std::vector<std::vector<int>> &sw_down,
                             const char *prefix) {
  std::vector<int> node_level;
  std::vector<std::string> node_name;
  tree_nodes(sw_down, node_level, node_name);
  const size_t N = node_level.size();
  up_.resize(N);
  down_.resize(N);
  std::vector<std::vector<int>> node_down(N);
  tree_links(cables, node_name, prefix, node_down);
  auto by_other_port = [](const Edge &x, const Edge &y) {
    return x.other != y.other ? x.other < y.other : x.port < y.port;
  };
  for (size_t n = 0; n < N; ++n) {
    std::sort(up_[n].begin(), up_[n].end(), by_other_port);
    std::sort(down_[n].begin(), down_[n].end(), by_other_port);
  }
  below_ = reach_below(node_level, node_down);
}

// The nodes of the routing graph (node_, each node's level and name). D-mod-K: every switch.
// Adaptive: switches above the leaves on one level that reach the same switches below are one
// node (named after the first, "+" marking the group), as adaptive routing spreads over them;
// every leaf stays its own node.
void FabricModel::tree_nodes(const std::vector<std::vector<int>> &sw_down, std::vector<int> &node_level,
                             std::vector<std::string> &node_name) {
  const Topology &topo = *topo_;
  const size_t S = topo.switches.size();
  std::vector<int> sw_level(S);
  for (size_t s = 0; s < S; ++s) sw_level[s] = topo.switches[s].level;
  node_.resize(S);
  if (routing_ == Routing::DModK) {
    for (size_t s = 0; s < S; ++s) {
      node_[s] = int(s);
      node_level.push_back(sw_level[s]);
      node_name.push_back(topo.switches[s].name);
    }
    return;
  }
  const auto sw_below = reach_below(sw_level, sw_down);
  std::map<std::pair<int, std::vector<char>>, int> groups;
  for (size_t s = 0; s < S; ++s) {
    std::pair<int, std::vector<char>> key{sw_level[s], sw_below[s]};
    if (sw_level[s] <= 1) key = {-1 - int(s), {}};  // every leaf (and unreached switch) is its own node
    auto [it, fresh] = groups.insert({key, int(node_level.size())});
    if (fresh) {
      node_level.push_back(sw_level[s]);
      node_name.push_back(topo.switches[s].name);
    } else if (node_name[size_t(it->second)].find('+') == std::string::npos) {
      node_name[size_t(it->second)] += "+";
    }
    node_[s] = it->second;
  }
}

// The links between the nodes: D-mod-K, one per cable; adaptive, one per (lower node, upper
// node) pair, its cables' bandwidth summed. Fills up_, down_ and node_down (each node's children).
void FabricModel::tree_links(const std::vector<Cable> &cables, const std::vector<std::string> &node_name,
                             const char *prefix, std::vector<std::vector<int>> &node_down) {
  std::map<std::pair<int, int>, int> merged;  // (lower node, upper node) -> link (adaptive)
  for (const Cable &c : cables) {
    const int lo = node_[size_t(c.lo)], hi = node_[size_t(c.hi)];
    int id;
    if (routing_ == Routing::Adaptive) {
      auto it = merged.find({lo, hi});
      if (it != merged.end()) {
        links_[size_t(it->second)].bytes_per_s += c.bw;
        continue;
      }
      id = int(links_.size());
      merged[{lo, hi}] = id;
      links_.push_back({prefix + node_name[size_t(lo)] + "-" + node_name[size_t(hi)], c.bw});
    } else {
      id = int(links_.size());
      links_.push_back({prefix + node_name[size_t(lo)] + ":" + std::to_string(c.plo) + "-" + node_name[size_t(hi)] +
                            ":" + std::to_string(c.phi),
                        c.bw});
    }
    up_[size_t(lo)].push_back({hi, id, c.plo});
    down_[size_t(hi)].push_back({lo, id, c.phi});
    node_down[size_t(hi)].push_back(lo);
  }
}

void FabricModel::route(const Flow &f, std::vector<std::vector<Hop>> &paths) const {
  const HcaPort &ps = topo_->hosts[size_t(f.src_host)].ports[size_t(f.src_port)];
  const HcaPort &pd = topo_->hosts[size_t(f.dst_host)].ports[size_t(f.dst_port)];
  if (ps.sw < 0 || pd.sw < 0) throw std::runtime_error("netsim: a NIC port is not cabled to a switch");
  const uint64_t d = uint64_t(f.dst_host);  // the destination "LID": its canonical host index
  const Hop nic_up{nic_link_[size_t(f.src_host)][size_t(f.src_port)], true};
  const Hop nic_down{nic_link_[size_t(f.dst_host)][size_t(f.dst_port)], false};
  paths.clear();
  if (routing_ == Routing::AsRouted) {
    paths.emplace_back();
    paths.back().push_back(nic_up);
    route_as_routed(f, paths.back());
    paths.back().push_back(nic_down);
    return;
  }
  if (flat_) {
    route_flat(ps.sw, pd.sw, d, paths);
    for (std::vector<Hop> &p : paths) {
      p.insert(p.begin(), nic_up);
      p.push_back(nic_down);
    }
    return;
  }
  const int lb = node_[size_t(pd.sw)];
  paths.emplace_back();
  std::vector<Hop> &out = paths.back();
  out.push_back(nic_up);
  int cur = node_[size_t(ps.sw)];
  uint64_t div = 1;
  std::vector<const Edge *> c;
  // Up: the edges whose far end reaches the destination leaf, else all (climb further). D-mod-K
  // takes cable floor(d / K1..K(l-1)) mod Kl; adaptive has one edge per node pair, and in a fat
  // tree one upper node (group) per level.
  while (!reaches(cur, lb)) {
    c.clear();
    for (const Edge &e : up_[size_t(cur)])
      if (reaches(e.other, lb)) c.push_back(&e);
    if (c.empty())
      for (const Edge &e : up_[size_t(cur)]) c.push_back(&e);
    if (c.empty()) throw std::runtime_error("netsim: no route up towards " + topo_->switches[size_t(pd.sw)].name);
    const uint64_t K = c.size();
    const Edge *e = c[size_t((d / div) % K)];
    if (div < (uint64_t(1) << 40)) div *= K;
    out.push_back({e->link, true});
    cur = e->other;
  }
  // Down: the edges towards the destination leaf; cable d mod k.
  while (cur != lb) {
    c.clear();
    for (const Edge &e : down_[size_t(cur)])
      if (reaches(e.other, lb)) c.push_back(&e);
    if (c.empty()) throw std::runtime_error("netsim: no route down towards " + topo_->switches[size_t(pd.sw)].name);
    const Edge *e = c[size_t(d % c.size())];
    out.push_back({e->link, false});
    cur = e->other;
  }
  out.push_back(nic_down);
}

void FabricModel::route_as_routed(const Flow &f, std::vector<Hop> &out) const {
  // Path bits 0: the destination port's base LID, which NCCL's queue pairs address unless they are
  // told to use the other LIDs of an LMC > 0 port.
  const TracedRoute r = tracer_->trace(f.src_host, f.src_port, f.dst_host, f.dst_port, 0);
  auto what = [&]() {
    return topo_->hosts[size_t(f.src_host)].name + " port " + std::to_string(f.src_port) + " -> " +
           topo_->hosts[size_t(f.dst_host)].name + " port " + std::to_string(f.dst_port);
  };
  if (!r.ok()) throw std::runtime_error("netsim: as-routed: the flow " + what() + " is not delivered: " + r.error);
  // Every hop but the last leaves by a switch-to-switch cable; the last one by the destination's
  // NIC cable (the tracer checked that it reaches the destination port).
  for (size_t i = 0; i + 1 < r.hops.size(); ++i) {
    auto it = port_link_.find(uint64_t(r.hops[i].sw) << 8 | uint64_t(r.hops[i].out_port & 0xff));
    if (it == port_link_.end())
      throw std::runtime_error("netsim: as-routed: the flow " + what() + " leaves " +
                               topo_->switches[size_t(r.hops[i].sw)].name + " by port " +
                               std::to_string(r.hops[i].out_port) + ", which is no switch-to-switch cable");
    out.push_back(it->second);
  }
}

void FabricModel::build_flat(const std::vector<std::vector<Edge>> &adj) {
  adj_ = adj;
  for (std::vector<Edge> &edges : adj_)
    std::sort(edges.begin(), edges.end(),
              [](const Edge &x, const Edge &y) { return x.other != y.other ? x.other < y.other : x.port < y.port; });
  node_.resize(adj_.size());
  for (size_t s = 0; s < adj_.size(); ++s) node_[s] = int(s);
}

const std::vector<int> &FabricModel::distances_to(int sw) const {
  auto [it, fresh] = dist_to_.insert({sw, {}});
  if (!fresh) return it->second;
  std::vector<int> &dist = it->second;
  dist.assign(adj_.size(), -1);
  std::vector<int> queue{sw};
  dist[size_t(sw)] = 0;
  for (size_t q = 0; q < queue.size(); ++q)
    for (const Edge &e : adj_[size_t(queue[q])])
      if (dist[size_t(e.other)] < 0) {
        dist[size_t(e.other)] = dist[size_t(queue[q])] + 1;
        queue.push_back(e.other);
      }
  return dist;
}

void FabricModel::route_flat(int src, int dst, uint64_t d, std::vector<std::vector<Hop>> &paths) const {
  const std::vector<int> &dist = distances_to(dst);
  if (dist[size_t(src)] < 0)
    throw std::runtime_error("netsim: no route from " + topo_->switches[size_t(src)].name + " to " +
                             topo_->switches[size_t(dst)].name);
  const auto on_path = [&](int from, const Edge &e) { return dist[size_t(e.other)] == dist[size_t(from)] - 1; };
  if (routing_ == Routing::DModK) {
    paths.emplace_back();
    uint64_t div = 1;
    std::vector<const Edge *> c;
    for (int cur = src; cur != dst;) {
      c.clear();
      for (const Edge &e : adj_[size_t(cur)])
        if (on_path(cur, e)) c.push_back(&e);
      const uint64_t K = c.size();
      const Edge *e = c[size_t((d / div) % K)];
      if (div < (uint64_t(1) << 40)) div *= K;
      paths.back().push_back({e->link, e->up});
      cur = e->other;
    }
    return;
  }
  // Adaptive: the shortest paths counted from each switch on them (capped), then kMaxParts of them
  // taken evenly spread over their enumeration order (all of them when there are fewer).
  constexpr uint64_t kCap = uint64_t(1) << 40;
  std::map<int, uint64_t> count;
  std::function<uint64_t(int)> paths_from = [&](int s) -> uint64_t {
    if (s == dst) return 1;
    auto it = count.find(s);
    if (it != count.end()) return it->second;
    uint64_t n = 0;
    for (const Edge &e : adj_[size_t(s)])
      if (on_path(s, e)) n = std::min(kCap, n + paths_from(e.other));
    count[s] = n;
    return n;
  };
  const uint64_t total = paths_from(src);
  const uint64_t parts = std::min<uint64_t>(total, kMaxParts);
  for (uint64_t i = 0; i < parts; ++i) {
    uint64_t idx = i * total / parts;
    paths.emplace_back();
    for (int cur = src; cur != dst;)
      for (const Edge &e : adj_[size_t(cur)]) {
        if (!on_path(cur, e)) continue;
        const uint64_t n = paths_from(e.other);
        if (idx >= n) {
          idx -= n;
          continue;
        }
        paths.back().push_back({e.link, e.up});
        cur = e.other;
        break;
      }
  }
}

const std::vector<ModelSize> &model_sizes() {
  // Public model shapes (rounded): GPT-3 XL 1.3B, Llama-2 7B/13B, Code Llama 34B, Llama-2/3 70B,
  // GPT-3 175B, Llama-3.1 405B; MoE: Mixtral 8x7B (46.7B total), Mixtral 8x22B (141B total),
  // DeepSeek-V3 (671B total, ~14B outside the experts).
  static const std::vector<ModelSize> sizes = {
      {"1.3B", 1.3e9, 0, 24, 0},         {"7B", 7e9, 0, 32, 0},
      {"13B", 13e9, 0, 40, 0},           {"34B", 34e9, 0, 48, 0},
      {"70B", 70e9, 0, 80, 0},           {"175B", 175e9, 0, 96, 0},
      {"405B", 405e9, 0, 126, 0},        {"8x7B-MoE", 1.6e9, 45.1e9, 32, 2},
      {"8x22B-MoE", 5e9, 136e9, 56, 2}, {"671B-MoE", 14e9, 657e9, 61, 8},
  };
  return sizes;
}

double state_bytes_per_gpu(const ModelSize &m, const Layout &l, uint32_t ep) {
  const double shard = double(l.tp) * l.pp;
  return TodayParams{}.bytes_per_param * (m.dense_params / shard + m.expert_params / (shard * std::max(1u, ep)));
}

const ModelSize *largest_fitting(const Layout &l, uint32_t ep, bool moe, const TodayParams &p) {
  const ModelSize *best = nullptr;
  const double shard = double(l.tp) * l.pp;
  for (const ModelSize &m : model_sizes()) {
    if ((m.expert_params > 0) != moe) continue;
    const double bytes =
        p.bytes_per_param * (m.dense_params / shard + m.expert_params / (shard * std::max(1u, ep)));
    if (bytes <= p.state_share * p.gpu_bytes) best = &m;  // ascending: the last that fits
  }
  return best;
}

TodayJob apply_today(SnapshotJob &job, uint64_t seed, const TodayParams &p) {
  TodayJob t;
  t.phase = unit_draw(seed, job.name, 1);
  Layout &l = job.layout;
  // The user's ep (the snapshot's layout; the workload drew it, moe_draw.hpp): a MoE model of that
  // ep if one fits the GPUs, else a dense one (ep 1).
  uint32_t ep = l.ep;
  if (ep > 1) t.model = largest_fitting(l, ep, true, p);
  t.moe = t.model != nullptr;
  if (!t.moe) {
    ep = 1;
    t.model = largest_fitting(l, 1, false, p);
  }
  if (!t.model) return t;
  const double shard = double(l.tp) * l.pp;
  job.dp_bytes = 2 * (t.model->dense_params / shard + t.model->expert_params / (shard * ep));  // bf16 grads
  l.ep = ep;
  job.ep_bytes = t.moe ? 2.0 * 2.0 * t.model->top_k * (double(t.model->layers) / l.pp) * job.pp_bytes : 0;
  // Megatron TP: per layer two all-reduces of the activations forward and two backward (all-gather +
  // reduce-scatter pairs under sequence parallelism move the same bytes), for each of the stage's
  // layers/pp layers and every micro-batch: pp_bytes is micro-batches x one activation.
  job.tp_bytes = l.tp > 1 ? 4.0 * (double(t.model->layers) / l.pp) * job.pp_bytes : 0;
  return t;
}

}  // namespace topoaware::netsim
