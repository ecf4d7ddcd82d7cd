// SPDX-License-Identifier: GPL-2.0-or-later
// Counter deltas into cable loads, and the running jobs behind them (congestion.hpp).
#include "congestion.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "fabric.hpp"

namespace topoaware {

namespace {

uint64_t port_key(int sw, int port) { return (uint64_t(uint32_t(sw)) << 8) | uint32_t(port & 0xff); }

// Switch GUID -> index, once (Topology::switch_index scans, and a fabric has thousands of links).
std::unordered_map<uint64_t, int> switch_indexes(const Topology &topo) {
  std::unordered_map<uint64_t, int> m;
  for (size_t i = 0; i < topo.switches.size(); ++i) m[topo.switches[i].guid] = int(i);
  return m;
}

int index_of(const std::unordered_map<uint64_t, int> &m, uint64_t guid) {
  auto it = m.find(guid);
  return it == m.end() ? -1 : it->second;
}

// Line data rate of every switch port's cable, by port_key.
std::unordered_map<uint64_t, double> port_gbps(const Topology &topo) {
  std::unordered_map<uint64_t, double> g;
  for (const Host &h : topo.hosts)
    for (const HcaPort &p : h.ports)
      if (p.sw >= 0) g[port_key(p.sw, p.sw_port)] = p.width * lane_gbps(p.speed);
  const auto sw = switch_indexes(topo);
  for (const Link &l : topo.links) {
    const int a = index_of(sw, l.a), b = index_of(sw, l.b);
    for (const auto &[pa, pb] : l.ports) {
      if (a >= 0) g[port_key(a, pa)] = l.gbps();
      if (b >= 0) g[port_key(b, pb)] = l.gbps();
    }
  }
  return g;
}

constexpr uint64_t kMax32 = 0xffffffffu;

}  // namespace

std::vector<std::pair<int, int>> sampled_ports(const Topology &topo) {
  std::set<std::pair<int, int>> s;
  for (const Host &h : topo.hosts)
    for (const HcaPort &p : h.ports)
      if (p.sw >= 0) s.insert({p.sw, p.sw_port});
  const auto sw = switch_indexes(topo);
  for (const Link &l : topo.links) {
    const int a = index_of(sw, l.a), b = index_of(sw, l.b);
    for (const auto &[pa, pb] : l.ports) {
      if (a >= 0) s.insert({a, pa});
      if (b >= 0) s.insert({b, pb});
    }
  }
  return {s.begin(), s.end()};
}

size_t CongestionReport::congested() const {
  return size_t(std::count_if(links.begin(), links.end(), [](const LinkLoad &l) { return l.congested; }));
}

CongestionReport link_loads(const Topology &topo, const CounterSnapshot &prev, const CounterSnapshot &cur,
                            const CongestionThresholds &th) {
  CongestionReport r;
  r.interval_s = cur.time_s - prev.time_s;
  const RouteTracer tracer(topo);
  const auto gbps = port_gbps(topo);
  std::unordered_map<uint64_t, const PortSample *> before;
  for (const PortSample &p : prev.ports) before[port_key(p.sw, p.port)] = &p;
  r.ports_sampled = cur.ports.size();
  for (const PortSample &c : cur.ports) {
    if (c.sw < 0 || size_t(c.sw) >= topo.switches.size()) continue;
    LinkLoad l;
    l.sw = c.sw;
    l.port = c.port;
    l.peer = tracer.peer(c.sw, c.port);
    auto g = gbps.find(port_key(c.sw, c.port));
    l.gbps = g == gbps.end() ? 0 : g->second;
    auto b = before.find(port_key(c.sw, c.port));
    const PortSample *p = b == before.end() ? nullptr : b->second;
    if (!c.ok)
      l.note = "not read: " + c.error;
    else if (!p)
      l.note = "no earlier reading";
    else if (!p->ok)
      l.note = "earlier reading failed: " + p->error;
    else if (r.interval_s <= 0)
      l.note = "no time between the readings";
    else if (p->wide != c.wide)
      l.note = "counter width changed between the readings";
    else if (c.xmit_words < p->xmit_words || c.rcv_words < p->rcv_words || c.xmit_wait < p->xmit_wait)
      l.note = "counter reset (perfquery -R, a switch restart): measured from the next interval";
    else if (!c.wide && (c.xmit_words == kMax32 || c.rcv_words == kMax32))
      l.note = "32-bit data counter saturated (the switch has no PortCountersExtended): reset it with perfquery -R";
    else {
      l.measured = true;
      const double words = double(c.xmit_words - p->xmit_words);
      const double wait = double(c.xmit_wait - p->xmit_wait);
      l.xmit_gbps = words * 32.0 / r.interval_s / 1e9;
      l.utilization = l.gbps > 0 ? l.xmit_gbps / l.gbps : 0;
      // A port that waited without sending anything is as congested as it gets.
      l.wait_ratio = words > 0 ? wait / words : (wait > 0 ? 1e9 : 0);
      if (c.xmit_wait == kMax32 && p->xmit_wait != kMax32)
        l.note = "PortXmitWait reached its maximum during the interval: the wait ratio is a lower bound";
      else if (c.xmit_wait == kMax32) {
        l.wait_ratio = 0;
        l.note = "PortXmitWait saturated: reset it with perfquery -R";
      }
      l.congested = (l.gbps > 0 && l.utilization >= th.utilization) || l.wait_ratio >= th.wait_ratio;
      // Error counters saturate rather than wrap: a lower value is a reset, counted from zero.
      for (size_t e = 0; e < 12; ++e) {
        const uint64_t d = c.errors[e] >= p->errors[e] ? c.errors[e] - p->errors[e] : c.errors[e];
        if (d) l.errors.push_back({kPortCounterNames[e], d});
      }
      r.ports_with_errors += !l.errors.empty();
      ++r.ports_measured;
    }
    if (!l.measured) r.problems.push_back(link_name(topo, l) + ": " + l.note);
    r.links.push_back(std::move(l));
  }
  return r;
}

void attribute_jobs(const Topology &topo, const std::vector<RunningJob> &jobs, CongestionReport &report) {
  const RouteTracer tracer(topo);
  std::unordered_map<uint64_t, size_t> at;
  for (size_t i = 0; i < report.links.size(); ++i) at[port_key(report.links[i].sw, report.links[i].port)] = i;
  std::vector<std::map<uint32_t, double>> on(report.links.size());
  for (const RunningJob &j : jobs) {
    JobCongestion jc;
    jc.job_id = j.job_id;
    jc.known = j.known;
    if (!j.known) {
      jc.note = j.why_unknown.empty() ? "no layout: its traffic is unknown" : j.why_unknown;
      std::set<int> leaves;
      for (int h : j.hosts)
        for (const HcaPort &p : topo.hosts[size_t(h)].ports)
          if (p.sw >= 0) leaves.insert(p.sw);
      const std::set<int> held(j.hosts.begin(), j.hosts.end());
      for (LinkLoad &l : report.links) {
        if (!l.congested) continue;
        const bool near = leaves.count(l.sw) ||
                          (l.peer.kind == RouteTracer::Peer::Switch && leaves.count(l.peer.index)) ||
                          (l.peer.kind == RouteTracer::Peer::HostPort && held.count(l.peer.index));
        const bool above = l.peer.kind == RouteTracer::Peer::Switch && topo.switches[size_t(l.sw)].level > 1 &&
                           topo.switches[size_t(l.peer.index)].level > 1 && leaves.size() > 1;
        if (near || above) l.unknown_jobs.push_back(j.job_id);
      }
      report.jobs.push_back(std::move(jc));
      continue;
    }
    JobTraffic t;
    try {
      t = job_traffic(topo, j.step);
    } catch (const std::exception &e) {
      jc.known = false;
      jc.note = std::string("its flows cannot be derived: ") + e.what();
      report.jobs.push_back(std::move(jc));
      continue;
    }
    size_t untraced = 0;
    std::set<std::string> hot;
    for (const auto &phase : t.phase)
      for (const Flow &f : phase) {
        const HcaPort &sp = topo.hosts[size_t(f.src_host)].ports[size_t(f.src_port)];
        const HcaPort &dp = topo.hosts[size_t(f.dst_host)].ports[size_t(f.dst_port)];
        // A flow between two hosts of one leaf switch loads only the leaf's host cables: it is
        // named on them, but only flows that leave a leaf count in the job's share.
        const bool cross = sp.sw != dp.sw;
        if (cross) jc.cross_leaf_bytes += f.bytes;
        const TracedRoute route = tracer.trace(f.src_host, f.src_port, f.dst_host, f.dst_port);
        if (!route.ok()) {
          untraced += cross;
          continue;
        }
        bool crosses_hot = false;
        for (const RouteHop &hop : route.hops) {
          auto it = at.find(port_key(hop.sw, hop.out_port));
          if (it == at.end()) continue;
          on[it->second][j.job_id] += f.bytes;
          if (report.links[it->second].congested) {
            crosses_hot = true;
            hot.insert(link_name(topo, report.links[it->second]));
          }
        }
        if (crosses_hot && cross) jc.congested_bytes += f.bytes;
      }
    if (untraced)
      jc.note = std::to_string(untraced) + " cross-leaf flow(s) could not be traced through the recorded routes" +
                (tracer.has_routes() ? "" : " (the topology has none: discover with --routes or --lfts)");
    jc.hot_cables.assign(hot.begin(), hot.end());
    report.jobs.push_back(std::move(jc));
  }
  for (size_t i = 0; i < report.links.size(); ++i) {
    auto &v = report.links[i].jobs;
    v.assign(on[i].begin(), on[i].end());
    std::stable_sort(v.begin(), v.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  }
  std::sort(report.jobs.begin(), report.jobs.end(),
            [](const JobCongestion &a, const JobCongestion &b) { return a.job_id < b.job_id; });
}

std::vector<uint32_t> congested_jobs(const std::vector<JobCongestion> &jobs, double min_share) {
  std::vector<uint32_t> out;
  for (const JobCongestion &j : jobs)
    if (j.known && j.cross_leaf_bytes > 0 && j.share() >= min_share) out.push_back(j.job_id);
  return out;
}

std::string link_name(const Topology &topo, const LinkLoad &l) {
  std::string s = topo.switches[size_t(l.sw)].name + " p" + std::to_string(l.port) + " -> ";
  switch (l.peer.kind) {
    case RouteTracer::Peer::Switch:
      return s + topo.switches[size_t(l.peer.index)].name + " p" + std::to_string(l.peer.port);
    case RouteTracer::Peer::HostPort: {
      const Host &h = topo.hosts[size_t(l.peer.index)];
      const HcaPort &p = h.ports[size_t(l.peer.port)];
      return s + h.name + (p.device.empty() ? "" : " " + p.device);
    }
    case RouteTracer::Peer::None:
      break;
  }
  return s + "?";
}

std::string snapshot_to_json(const CounterSnapshot &s, const std::string &topo_hash) {
  // Switches by index: the state is keyed to the topology's hash, and a topology with that hash
  // lists its switches in one canonical order.
  nlohmann::ordered_json o;
  o["schema"] = "topoaware-counters/2";
  o["topology_hash"] = topo_hash;
  o["time"] = s.time_s;
  o["duration"] = s.duration_s;
  auto &ports = o["ports"] = nlohmann::ordered_json::array();
  for (const PortSample &p : s.ports) {
    if (p.ok) {
      nlohmann::ordered_json e = {p.sw, p.port, p.wide ? 1 : 0, p.xmit_words, p.rcv_words, p.xmit_wait};
      auto &errs = e.emplace_back(nlohmann::ordered_json::array());
      for (uint64_t v : p.errors) errs.push_back(v);
      ports.push_back(std::move(e));
    }
    else
      ports.push_back({p.sw, p.port, p.error});
  }
  return o.dump() + "\n";
}

CounterSnapshot snapshot_from_json(const std::string &text, const std::string &topo_hash, bool &same_fabric) {
  CounterSnapshot s;
  same_fabric = false;
  nlohmann::json o;
  try {
    o = nlohmann::json::parse(text);
    if (!o.is_object() || o.value("schema", "") != "topoaware-counters/2")
      throw std::runtime_error("not a topoaware-counters/2 file");
    if (o.at("topology_hash").get<std::string>() != topo_hash) return s;
    s.time_s = o.at("time").get<double>();
    s.duration_s = o.at("duration").get<double>();
    for (const auto &e : o.at("ports")) {
      PortSample p;
      p.sw = e.at(0).get<int>();
      p.port = e.at(1).get<int>();
      if (e.size() == 7) {
        p.ok = true;
        p.wide = e.at(2).get<int>() != 0;
        p.xmit_words = e.at(3).get<uint64_t>();
        p.rcv_words = e.at(4).get<uint64_t>();
        p.xmit_wait = e.at(5).get<uint64_t>();
        const auto &errs = e.at(6);
        if (errs.size() != 12) throw std::runtime_error("a port entry without its 12 error counters");
        for (size_t i = 0; i < 12; ++i) p.errors[i] = errs.at(i).get<uint64_t>();
      } else if (e.size() == 3) {
        p.error = e.at(2).get<std::string>();
      } else {
        throw std::runtime_error("a port entry of " + std::to_string(e.size()) + " values");
      }
      s.ports.push_back(std::move(p));
    }
  } catch (const nlohmann::json::exception &e) {
    throw std::runtime_error(std::string("damaged counter state: ") + e.what());
  }
  same_fabric = true;
  return s;
}

}  // namespace topoaware
