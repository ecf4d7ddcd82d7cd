// SPDX-License-Identifier: GPL-2.0-or-later
#include "fabric.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

namespace topoaware {

namespace {
struct SpeedInfo {
  LinkSpeed speed;
  const char *name;
  double gbps;  // per lane, data rate as the IBTA names it
};
// IBTA Architecture Specification vol. 2, PortInfo LinkSpeedActive/ExtActive: SDR 2.5, DDR 5,
// QDR 10, FDR10 10.3125, FDR 14.0625, EDR 25.78125, HDR 53.125, NDR 106.25, XDR 212.5 Gb/s
// signalling; the usual rounded data rates are used here (what `ibstat` and vendors print).
constexpr SpeedInfo kSpeeds[] = {
    {LinkSpeed::Unknown, "?", 0},   {LinkSpeed::SDR, "SDR", 2.5},  {LinkSpeed::DDR, "DDR", 5},
    {LinkSpeed::QDR, "QDR", 10},    {LinkSpeed::FDR10, "FDR10", 10}, {LinkSpeed::FDR, "FDR", 14},
    {LinkSpeed::EDR, "EDR", 25},    {LinkSpeed::HDR, "HDR", 50},   {LinkSpeed::NDR, "NDR", 100},
    {LinkSpeed::XDR, "XDR", 200},
};
}  // namespace

double lane_gbps(LinkSpeed s) { return kSpeeds[static_cast<int>(s)].gbps; }
const char *speed_name(LinkSpeed s) { return kSpeeds[static_cast<int>(s)].name; }
LinkSpeed speed_from_name(const std::string &s) {
  for (const auto &i : kSpeeds)
    if (s == i.name && i.speed != LinkSpeed::Unknown) return i.speed;
  return LinkSpeed::Unknown;
}
std::string width_name(int lanes) { return lanes > 0 ? std::to_string(lanes) + "x" : "?"; }

std::string guid_str(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

bool parse_guid(const std::string &text, uint64_t *guid) {
  std::string t = text;
  if (t.size() > 2 && (t[0] == 'H' || t[0] == 'S' || t[0] == 'R') && t[1] == '-') t = t.substr(2);
  else if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) t = t.substr(2);
  if (t.empty() || t.size() > 16) return false;
  uint64_t v = 0;
  for (char c : t) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    v = v * 16 + static_cast<uint64_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                                                                                    : std::tolower(c) - 'a' + 10);
  }
  *guid = v;
  return true;
}

size_t Fabric::add_node(FabricNode node) {
  auto it = index_.find(node.guid);
  if (it == index_.end()) {
    index_.emplace(node.guid, nodes.size());
    nodes.push_back(std::move(node));
    return nodes.size() - 1;
  }
  FabricNode &have = nodes[it->second];
  if (have.desc.empty()) have.desc = node.desc;
  have.nports = std::max(have.nports, node.nports);
  for (auto &p : node.ports) {
    auto same = std::find_if(have.ports.begin(), have.ports.end(), [&](const Port &q) { return q.num == p.num; });
    if (same == have.ports.end()) have.ports.push_back(p);
  }
  return it->second;
}

void Fabric::merge(const Fabric &other) {
  for (const auto &n : other.nodes) add_node(n);
  problems.insert(problems.end(), other.problems.begin(), other.problems.end());
  sources.insert(sources.end(), other.sources.begin(), other.sources.end());
  counters.insert(counters.end(), other.counters.begin(), other.counters.end());
  counter_problems.insert(counter_problems.end(), other.counter_problems.begin(), other.counter_problems.end());
  routes.subnets.insert(routes.subnets.end(), other.routes.subnets.begin(), other.routes.subnets.end());
  routes.sources.insert(routes.sources.end(), other.routes.sources.begin(), other.routes.sources.end());
  route_problems.insert(route_problems.end(), other.route_problems.begin(), other.route_problems.end());
}

const FabricNode *Fabric::find(uint64_t guid) const {
  auto it = index_.find(guid);
  return it == index_.end() ? nullptr : &nodes[it->second];
}

void Fabric::finish() {
  // Reverse ends first: a port seen only from its peer is added to the node it belongs to.
  std::vector<std::pair<size_t, Port>> reverse;
  for (const auto &n : nodes)
    for (const auto &p : n.ports) {
      auto it = index_.find(p.remote_guid);
      if (it == index_.end()) continue;
      const FabricNode &peer = nodes[it->second];
      bool listed =
          std::any_of(peer.ports.begin(), peer.ports.end(), [&](const Port &q) { return q.num == p.remote_port; });
      if (!listed) {
        Port back;
        back.num = p.remote_port;
        back.remote_guid = n.guid;
        back.remote_port = p.num;
        back.width = p.width;
        back.speed = p.speed;
        reverse.emplace_back(it->second, back);
      }
    }
  for (auto &r : reverse) {
    auto &ports = nodes[r.first].ports;
    if (std::none_of(ports.begin(), ports.end(), [&](const Port &q) { return q.num == r.second.num; }))
      ports.push_back(r.second);
  }
  for (auto &n : nodes) {
    std::vector<Port> kept;
    for (auto &p : n.ports) {
      if (index_.count(p.remote_guid)) {
        kept.push_back(p);
      } else {
        problems.push_back({n.guid, p.num, "port " + std::to_string(p.num) + " of " + guid_str(n.guid) +
                                               " leads to " + guid_str(p.remote_guid) + ", which was not discovered"});
      }
    }
    std::sort(kept.begin(), kept.end(), [](const Port &a, const Port &b) { return a.num < b.num; });
    n.ports = std::move(kept);
    int maxport = n.ports.empty() ? 0 : n.ports.back().num;
    n.nports = std::max(n.nports, maxport);
  }
}

}  // namespace topoaware
