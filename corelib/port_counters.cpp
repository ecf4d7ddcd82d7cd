// SPDX-License-Identifier: GPL-2.0-or-later
// See port_counters.hpp.
#include "port_counters.hpp"

#include <algorithm>
#include <map>

namespace topoaware {
namespace {

// "leaf001 port 5" for a switch port, "n0001 mlx5_0 port 1" for a host's, the GUID otherwise.
std::string port_name(const Topology &t, const Fabric &f, uint64_t guid, int port) {
  const int s = t.switch_index(guid);
  if (s >= 0) return t.switches[size_t(s)].name + " port " + std::to_string(port);
  for (const Host &h : t.hosts)
    for (const HcaPort &p : h.ports)
      if (p.ca_guid == guid)
        return h.name + (p.device.empty() ? "" : " " + p.device) + " port " + std::to_string(port);
  const FabricNode *n = f.find(guid);
  return (n && !n->desc.empty() ? n->desc : guid_str(guid)) + " port " + std::to_string(port);
}

}  // namespace

CounterReport counter_report(const Topology &topo, const Fabric &fabric) {
  CounterReport r;
  r.ports_read = fabric.counters.size();
  r.problems = fabric.counter_problems;
  std::map<std::pair<uint64_t, int>, const PortCounters *> by_port;
  for (const PortCounters &c : fabric.counters) by_port[{c.guid, c.port}] = &c;
  std::map<std::pair<uint64_t, int>, bool> done;
  for (const auto &[key, c] : by_port) {
    if (done[key]) continue;
    done[key] = true;
    // The other end of the cable, if the walk saw it.
    std::pair<uint64_t, int> peer{0, 0};
    if (const FabricNode *n = fabric.find(key.first))
      for (const Port &p : n->ports)
        if (p.num == key.second) peer = {p.remote_guid, p.remote_port};
    CableCounters cc;
    cc.end_a = port_name(topo, fabric, key.first, key.second);
    if (peer.first) {
      cc.end_b = port_name(topo, fabric, peer.first, peer.second);
      cc.switch_cable = topo.switch_index(key.first) >= 0 && topo.switch_index(peer.first) >= 0;
    }
    std::vector<std::pair<std::string, const PortCounters *>> ends = {{cc.end_a, c}};
    if (peer.first) {
      done[peer] = true;
      const auto it = by_port.find(peer);
      if (it != by_port.end()) ends.push_back({cc.end_b, it->second});
    }
    for (const auto &[name, pc] : ends)
      for (size_t i = 0; i < 12; ++i) {
        if (!pc->values[i]) continue;
        cc.nonzero.push_back({name + ": " + kPortCounterNames[i], pc->values[i]});
        if (pc->values[i] > kPortCounterThresholds[i])
          cc.over.push_back(std::string(kPortCounterNames[i]) + " at " + name);
      }
    if (!cc.nonzero.empty()) r.cables.push_back(std::move(cc));
  }
  std::stable_sort(r.cables.begin(), r.cables.end(), [](const CableCounters &a, const CableCounters &b) {
    return a.over.size() > b.over.size();
  });
  return r;
}

void add_counter_anomalies(Topology &topo, const CounterReport &report) {
  for (const CableCounters &c : report.cables) {
    if (c.over.empty()) continue;
    std::string detail = "error counters above their thresholds: ";
    for (size_t i = 0; i < c.over.size(); ++i) detail += (i ? ", " : "") + c.over[i];
    detail += c.switch_cable ? " (a degraded switch cable: cross-leaf traffic through it suffers)"
                             : " (a degraded host cable)";
    topo.anomalies.push_back({"port-errors", c.end_a + (c.end_b.empty() ? "" : " <-> " + c.end_b), detail});
  }
}

std::string counter_report_text(const CounterReport &r) {
  std::string s = "Port counters: " + std::to_string(r.ports_read) + " ports read";
  if (r.cables.empty()) s += ", every error counter 0";
  s += "\n";
  for (const CableCounters &c : r.cables) {
    s += "  " + c.end_a + (c.end_b.empty() ? "" : " <-> " + c.end_b) +
         (c.over.empty() ? "" : "  ABOVE THRESHOLD") + "\n";
    for (const auto &[name, v] : c.nonzero) s += "    " + name + " = " + std::to_string(v) + "\n";
  }
  for (size_t i = 0; i < r.problems.size() && i < 20; ++i) s += "  not read: " + r.problems[i] + "\n";
  if (r.problems.size() > 20) s += "  ... and " + std::to_string(r.problems.size() - 20) + " more not read\n";
  return s;
}

}  // namespace topoaware
