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
      (void)job_geometry(job.layout, uint32_t(job.nodes.size()));
      const std::string order = j.value("order", "given");
      if (order == "topoaware") {
        std::vector<int> out;
        orderer.order(job.nodes, job.layout, out);
        job.nodes = out;
      } else if (order != "given") {
        bad("job '" + job.name + "': 'order' must be \"given\" or \"topoaware\"");
      }
    } catch (const LayoutError &e) {
      bad("job '" + job.name + "': " + e.what());
    }
    job.dp_bytes = bytes_field(j, "dp_bytes", job.name);
    job.pp_bytes = bytes_field(j, "pp_bytes", job.name);
    job.ep_bytes = bytes_field(j, "ep_bytes", job.name);
    snap.jobs.push_back(std::move(job));
  }
  return snap;
}

const char *phase_name(Phase p) {
  switch (p) {
    case Phase::PP:
      return "pp";
    case Phase::EP:
      return "ep";
    case Phase::DP:
      return "dp";
  }
  return "?";
}

const char *routing_name(Routing r) { return r == Routing::Adaptive ? "adaptive" : "dmodk"; }

JobTraffic job_traffic(const Topology &topo, const SnapshotJob &job) {
  const Layout &l = job.layout;
  const uint32_t G = job_geometry(l, uint32_t(job.nodes.size())).gpus_per_node;
  JobTraffic t;
  auto add = [&](Phase ph, uint32_t a, uint32_t b, double bytes) {
    const int ha = job.nodes[a / G], hb = job.nodes[b / G];
    if (ha == hb || bytes <= 0) return -1;  // same node: NVLink
    const size_t ra = topo.hosts[size_t(ha)].ports.size(), rb = topo.hosts[size_t(hb)].ports.size();
    if (ra == 0 || rb == 0) throw std::runtime_error("host without a NIC port in the topology");
    Flow f;
    f.src_host = ha;
    f.dst_host = hb;
    f.dst_port = int(size_t(b % G) * rb / G);
    // PXN (NCCL >= 2.12): with as many NICs on both sides, the data crosses NVLink to the GPU on
    // the destination's rail and leaves through that rail's NIC, so rails never cross.
    f.src_port = ra == rb ? f.dst_port : int(size_t(a % G) * ra / G);
    f.bytes = bytes;
    t.phase[int(ph)].push_back(f);
    return int(t.phase[int(ph)].size()) - 1;
  };
  RankCoord c;
  for (c.tp = 0; c.tp < l.tp; ++c.tp) {
    // DP rings: fixed (tp, cp, pp), members in dp order, closed.
    if (l.dp > 1 && job.dp_bytes > 0) {
      const double e = 2.0 * (l.dp - 1) / l.dp * job.dp_bytes;
      t.ring_steps = 2 * (l.dp - 1);
      for (c.pp = 0; c.pp < l.pp; ++c.pp)
        for (c.cp = 0; c.cp < l.cp; ++c.cp) {
          t.rings.emplace_back();
          for (uint32_t i = 0; i < l.dp; ++i) {
            RankCoord a = c, b = c;
            a.dp = i;
            b.dp = (i + 1) % l.dp;
            t.rings.back().push_back(add(Phase::DP, rank_of(l, a), rank_of(l, b), e));
          }
        }
    }
    // PP boundaries: fixed (tp, cp, dp), stage s to s+1 forward and back.
    if (l.pp > 1 && job.pp_bytes > 0)
      for (c.dp = 0; c.dp < l.dp; ++c.dp)
        for (c.cp = 0; c.cp < l.cp; ++c.cp)
          for (uint32_t s = 0; s + 1 < l.pp; ++s) {
            RankCoord a = c, b = c;
            a.pp = s;
            b.pp = s + 1;
            add(Phase::PP, rank_of(l, a), rank_of(l, b), job.pp_bytes);
            add(Phase::PP, rank_of(l, b), rank_of(l, a), job.pp_bytes);
          }
    // EP all-to-all: groups of EP consecutive q = cp + CP*dp at fixed (tp, pp).
    if (l.ep > 1 && job.ep_bytes > 0) {
      const uint32_t Q = l.cp * l.dp;
      auto rank_q = [&](uint32_t pp, uint32_t q) {
        RankCoord m = c;
        m.pp = pp;
        m.cp = q % l.cp;
        m.dp = q / l.cp;
        return rank_of(l, m);
      };
      for (uint32_t pp = 0; pp < l.pp; ++pp)
        for (uint32_t g = 0; g < Q; g += l.ep)
          for (uint32_t x = 0; x < l.ep; ++x)
            for (uint32_t y = 0; y < l.ep; ++y)
              if (x != y) add(Phase::EP, rank_q(pp, g + x), rank_q(pp, g + y), job.ep_bytes / l.ep);
    }
  }
  return t;
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

FabricModel::FabricModel(const Topology &topo, Routing routing) : topo_(&topo), routing_(routing) {
  const size_t S = topo.switches.size();
  const char *prefix = routing == Routing::Adaptive ? "a:" : "d:";
  nic_link_.resize(topo.hosts.size());
  for (size_t h = 0; h < topo.hosts.size(); ++h)
    for (size_t p = 0; p < topo.hosts[h].ports.size(); ++p) {
      const HcaPort &port = topo.hosts[h].ports[p];
      nic_link_[h].push_back(int(links_.size()));
      links_.push_back(
          {prefix + topo.hosts[h].name + ":" + std::to_string(p), port.width * lane_gbps(port.speed) * 1e9 / 8});
    }
  // Switch-to-switch cables, oriented lower level -> higher level.
  struct Cable {
    int lo, hi, plo, phi;
    double bw;
  };
  std::vector<Cable> cables;
  std::vector<std::vector<int>> sw_down(S);
  std::vector<int> sw_level(S);
  for (size_t s = 0; s < S; ++s) sw_level[s] = topo.switches[s].level;
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
  if (flat_) {
    // Every switch is a node; D-mod-K: every cable a link; adaptive: parallel cables one link.
    std::vector<std::vector<Edge>> adj(S);
    std::map<std::pair<int, int>, int> merged;
    for (const Cable &c : cables) {
      const std::string &lo = topo.switches[size_t(c.lo)].name, &hi = topo.switches[size_t(c.hi)].name;
      int id = int(links_.size());
      if (routing == Routing::Adaptive) {
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
    return;
  }
  // Nodes of the routing graph.
  node_.resize(S);
  std::vector<int> node_level;
  std::vector<std::string> node_name;
  if (routing == Routing::DModK) {
    for (size_t s = 0; s < S; ++s) {
      node_[s] = int(s);
      node_level.push_back(sw_level[s]);
      node_name.push_back(topo.switches[s].name);
    }
  } else {
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
  const size_t N = node_level.size();
  up_.resize(N);
  down_.resize(N);
  std::map<std::pair<int, int>, int> merged;  // (lower node, upper node) -> link (adaptive)
  std::vector<std::vector<int>> node_down(N);
  for (const Cable &c : cables) {
    const int lo = node_[size_t(c.lo)], hi = node_[size_t(c.hi)];
    int id;
    if (routing == Routing::Adaptive) {
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
  auto by_other_port = [](const Edge &x, const Edge &y) {
    return x.other != y.other ? x.other < y.other : x.port < y.port;
  };
  for (size_t n = 0; n < N; ++n) {
    std::sort(up_[n].begin(), up_[n].end(), by_other_port);
    std::sort(down_[n].begin(), down_[n].end(), by_other_port);
  }
  below_ = reach_below(node_level, node_down);
}

void FabricModel::route(const Flow &f, std::vector<std::vector<Hop>> &paths) const {
  const HcaPort &ps = topo_->hosts[size_t(f.src_host)].ports[size_t(f.src_port)];
  const HcaPort &pd = topo_->hosts[size_t(f.dst_host)].ports[size_t(f.dst_port)];
  if (ps.sw < 0 || pd.sw < 0) throw std::runtime_error("netsim: a NIC port is not cabled to a switch");
  const uint64_t d = uint64_t(f.dst_host);  // the destination "LID": its canonical host index
  const Hop nic_up{nic_link_[size_t(f.src_host)][size_t(f.src_port)], true};
  const Hop nic_down{nic_link_[size_t(f.dst_host)][size_t(f.dst_port)], false};
  paths.clear();
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

}  // namespace topoaware::netsim
