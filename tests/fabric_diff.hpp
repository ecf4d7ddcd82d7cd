// SPDX-License-Identifier: GPL-2.0-or-later
// Compares two raw Fabrics node by node (keyed by GUID), for tests: the generator's Fabric against
// what a parser or a live walk made of the same fabric. Returns readable differences, empty when
// they agree. Discovery order, LIDs and sources do not matter; walk problems do.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fabric.hpp"

namespace topoaware {

inline std::vector<std::string> fabric_diff(const Fabric &want, const Fabric &got, size_t max_diffs = 20) {
  std::vector<std::string> d;
  auto add = [&](const std::string &s) {
    if (d.size() < max_diffs) d.push_back(s);
  };
  for (const auto &p : got.problems) add("walk problem: " + p.what);
  std::map<uint64_t, const FabricNode *> w, g;
  for (const auto &n : want.nodes) w[n.guid] = &n;
  for (const auto &n : got.nodes) g[n.guid] = &n;
  if (w.size() != g.size()) add("node count " + std::to_string(g.size()) + ", expected " + std::to_string(w.size()));
  for (const auto &[guid, n] : w) {
    auto it = g.find(guid);
    std::string who = guid_str(guid) + " (" + n->desc + ")";
    if (it == g.end()) {
      add("missing node " + who);
      continue;
    }
    const FabricNode *m = it->second;
    if (m->type != n->type) add(who + ": type differs");
    if (m->desc != n->desc) add(who + ": description \"" + m->desc + "\"");
    if (m->nports != n->nports)
      add(who + ": " + std::to_string(m->nports) + " ports, expected " + std::to_string(n->nports));
    if (m->ports.size() != n->ports.size())
      add(who + ": " + std::to_string(m->ports.size()) + " connected ports, expected " +
          std::to_string(n->ports.size()));
    std::map<int, const Port *> mp;
    for (const auto &p : m->ports) mp[p.num] = &p;
    for (const auto &p : n->ports) {
      std::string where = who + " port " + std::to_string(p.num);
      auto q = mp.find(p.num);
      if (q == mp.end()) {
        add(where + ": not connected");
        continue;
      }
      const Port &o = *q->second;
      if (o.remote_guid != p.remote_guid || o.remote_port != p.remote_port)
        add(where + ": leads to " + guid_str(o.remote_guid) + "[" + std::to_string(o.remote_port) + "], expected " +
            guid_str(p.remote_guid) + "[" + std::to_string(p.remote_port) + "]");
      if (o.width != p.width) add(where + ": width " + width_name(o.width) + ", expected " + width_name(p.width));
      if (o.speed != p.speed)
        add(where + ": speed " + std::string(speed_name(o.speed)) + ", expected " + speed_name(p.speed));
      // A dump prints CA port GUIDs but not switch port GUIDs (all equal to the node GUID), so a
      // switch port GUID is only compared when both sides know it.
      bool known = n->type != NodeType::Switch || (o.port_guid != 0 && p.port_guid != 0);
      if (known && o.port_guid != p.port_guid)
        add(where + ": port GUID " + guid_str(o.port_guid) + ", expected " + guid_str(p.port_guid));
    }
  }
  for (const auto &[guid, m] : g)
    if (!w.count(guid)) add("unexpected node " + guid_str(guid) + " (" + m->desc + ")");
  return d;
}

}  // namespace topoaware
