// SPDX-License-Identifier: GPL-2.0-or-later
// Test fabrics with leaf switches that carry no compute host: a generated fabric whose leaf loses
// its hosts (only a SHARP Aggregation Node stays on it, as on a switch with in-network computing
// enabled), or one with an extra host-less switch cabled under given switches. Used by the
// classification tests and by tests/gen_fabric for the golden fixtures.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabric.hpp"

namespace topoaware {
namespace testing {

inline FabricNode &node_described(Fabric &f, const std::string &desc) {
  for (auto &n : f.nodes)
    if (n.desc == desc) return n;
  throw std::invalid_argument("no node described \"" + desc + "\"");
}

// The fabric again, indexed afresh, without the nodes in `drop` and the ports that led to them.
inline Fabric rebuilt(const Fabric &f, const std::set<uint64_t> &drop) {
  Fabric out;
  out.sources = f.sources;
  for (FabricNode n : f.nodes) {
    if (drop.count(n.guid)) continue;
    n.ports.erase(
        std::remove_if(n.ports.begin(), n.ports.end(), [&](const Port &p) { return drop.count(p.remote_guid) > 0; }),
        n.ports.end());
    out.add_node(std::move(n));
  }
  out.finish();
  return out;
}

// The leaf described `leaf` keeps one CA, which becomes its SHARP Aggregation Node; the others
// are unplugged.
inline Fabric without_hosts(const Fabric &f, const std::string &leaf) {
  Fabric g = f;
  const FabricNode &sw = node_described(g, leaf);
  std::set<uint64_t> cas;
  for (const auto &p : sw.ports) {
    const FabricNode *peer = g.find(p.remote_guid);
    if (peer && peer->type == NodeType::Ca) cas.insert(peer->guid);
  }
  if (cas.empty()) throw std::invalid_argument(leaf + " has no CA");
  const uint64_t keep = *cas.begin();
  cas.erase(keep);
  for (auto &n : g.nodes)
    if (n.guid == keep) n.desc = "Mellanox Technologies Aggregation Node";
  return rebuilt(g, cas);
}

inline int next_free_port(const FabricNode &n) {
  int last = 0;
  for (const auto &p : n.ports) last = std::max(last, p.num);
  return last + 1;
}

// A switch described `name`, with no CA, cabled by `cables` cables to each of the switches
// `above` (GUIDs; on their next free ports, at the speed of their first cable).
inline Fabric with_empty_leaf_under(const Fabric &f, const std::string &name, const std::vector<uint64_t> &above,
                                    int cables) {
  Fabric g = f;
  uint64_t guid = 0;  // the next switch GUID: CA port GUIDs are their node GUID + port
  for (const auto &n : g.nodes)
    if (n.type == NodeType::Switch) guid = std::max(guid, n.guid);
  while (g.find(++guid) || guid == 0) {
  }
  FabricNode leaf;
  leaf.type = NodeType::Switch;
  leaf.guid = guid;
  leaf.desc = name;
  int port = 1;
  for (uint64_t up_guid : above) {
    FabricNode *up = nullptr;
    for (auto &n : g.nodes)
      if (n.guid == up_guid) up = &n;
    if (!up) throw std::invalid_argument("no switch " + guid_str(up_guid));
    leaf.nports = std::max(leaf.nports, up->nports);
    for (int c = 0; c < cables; c++) {
      Port down;
      down.num = next_free_port(*up);
      down.port_guid = up->guid;
      down.remote_guid = leaf.guid;
      down.remote_port = port;
      down.width = up->ports.empty() ? 4 : up->ports.front().width;
      down.speed = up->ports.empty() ? LinkSpeed::HDR : up->ports.front().speed;
      up->ports.push_back(down);
      up->nports = std::max(up->nports, down.num);
      Port back = down;
      back.num = port++;
      back.port_guid = leaf.guid;
      back.remote_guid = up->guid;
      back.remote_port = down.num;
      leaf.ports.push_back(back);
    }
  }
  leaf.nports = std::max(leaf.nports, port - 1);
  g.nodes.push_back(std::move(leaf));
  return rebuilt(g, {});
}

// The same under the switches described `above`.
inline Fabric with_empty_leaf(const Fabric &f, const std::string &name, const std::vector<std::string> &above,
                              int cables) {
  Fabric g = f;
  std::vector<uint64_t> guids;
  for (const std::string &desc : above) guids.push_back(node_described(g, desc).guid);
  return with_empty_leaf_under(f, name, guids, cables);
}

}  // namespace testing
}  // namespace topoaware
