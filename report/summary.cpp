// SPDX-License-Identifier: GPL-2.0-or-later
// Human summary of a Topology, for admins reading it in a terminal or a ticket.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "hostlist.hpp"
#include "outputs.hpp"
#include "rank_order.hpp"

namespace topoaware {

namespace {

const char *level_name(int level) {
  switch (level) {
    case 0: return "unreached";
    case 1: return "leaf";
    case 2: return "spine";
    case 3: return "core";
    default: return "upper";
  }
}

// "2:1", "1.5:1", "1:1"; under-subscription (fewer down than up) as "1:2".
std::string ratio(double r) {
  if (!(r > 0)) return "n/a";
  auto num = [](double x) {
    std::string s = fmt::format("{:.2f}", x);
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  if (r >= 1) return num(r) + ":1";
  return "1:" + num(1 / r);
}

template <class T>
std::pair<T, T> min_max(const std::vector<T> &v) {
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return {*lo, *hi};
}

std::string range_text(size_t lo, size_t hi) { return lo == hi ? fmt::format("{}", lo) : fmt::format("{}-{}", lo, hi); }

// The header: how many hosts, switches (per level), links and cables, levels, rails and routes.
void add_counts(std::string &o, const Topology &topo) {
  std::unordered_set<uint64_t> sw_guids;
  for (const auto &s : topo.switches) sw_guids.insert(s.guid);

  std::map<int, int> per_level;
  for (const auto &s : topo.switches) per_level[s.level]++;
  size_t cables = 0, host_cables = 0;
  for (const auto &l : topo.links) {
    cables += static_cast<size_t>(l.cables());
    if (!(sw_guids.count(l.a) && sw_guids.count(l.b))) host_cables += static_cast<size_t>(l.cables());
  }

  o += "Fabric summary";
  if (!topo.hash.empty()) o += fmt::format(" ({})", topo.hash);
  o += "\n";
  o += fmt::format("  Hosts:     {}\n", topo.hosts.size());
  o += fmt::format("  Switches:  {}", topo.switches.size());
  if (!per_level.empty()) {
    std::vector<std::string> parts;
    for (const auto &[lvl, n] : per_level)
      parts.push_back(lvl == 0 ? fmt::format("{} unreached", n)
                               : fmt::format("{} at level {} ({})", n, lvl, level_name(lvl)));
    o += " (";
    for (size_t i = 0; i < parts.size(); ++i) o += (i ? ", " : "") + parts[i];
    o += ")";
  }
  o += "\n";
  o += fmt::format("  Links:     {} ({} cables: {} host, {} between switches)\n", topo.links.size(), cables,
                   host_cables, cables - host_cables);
  o += fmt::format("  Levels:    {}\n", topo.max_level);
  o += fmt::format("  Rail-optimized: {}\n", topo.rail_optimized ? "yes" : "no");
  if (!topo.routes.empty()) {
    size_t lids = 0;
    for (const auto &sn : topo.routes.subnets) lids += sn.ports.size();
    o += fmt::format("  Routes:    {} switch tables, {} port LIDs, {} subnet{}{}\n", topo.routes.switch_count(), lids,
                     topo.routes.subnets.size(), topo.routes.subnets.size() == 1 ? "" : "s",
                     topo.routes.hash.empty() ? std::string() : " (" + topo.routes.hash + ")");
  }
}

// Width and speed, counted in cables, fastest first.
void add_link_speeds(std::string &o, const Topology &topo) {
  std::map<std::pair<int, int>, size_t> hist;
  for (const auto &l : topo.links) hist[{static_cast<int>(l.speed), l.width}] += static_cast<size_t>(l.cables());
  if (hist.empty()) return;
  o += "\nLink speeds (cables):\n";
  for (auto it = hist.rbegin(); it != hist.rend(); ++it) {
    auto sp = static_cast<LinkSpeed>(it->first.first);
    double gbps = lane_gbps(sp) * it->first.second;
    o += fmt::format("  {:>3} {:<6} {:>8}", width_name(it->first.second), speed_name(sp), it->second);
    if (gbps > 0) o += fmt::format("   ({:g} Gb/s each)", gbps);
    o += "\n";
  }
}

// Down:up bandwidth per level, as min, median and max over the switches that have uplinks.
void add_oversubscription(std::string &o, const Topology &topo) {
  if (topo.levels.empty()) return;
  o += "\nOversubscription (down:up bandwidth, switches with uplinks):\n";
  for (const auto &lv : topo.levels) {
    o += fmt::format("  level {} ({:<6} {:>5} switch{}: ", lv.level, std::string(level_name(lv.level)) + ")",
                     lv.switches, lv.switches == 1 ? "" : "es");
    // The top level has no uplinks: nothing to oversubscribe.
    if (!(lv.oversub_max > 0))
      o += "no uplinks\n";
    else
      o += fmt::format("min {}, median {}, max {}\n", ratio(lv.oversub_min), ratio(lv.oversub_median),
                       ratio(lv.oversub_max));
  }
}

// Leaf groups and pods, each with the range of its sizes.
void add_leaf_groups_and_pods(std::string &o, const Topology &topo) {
  o += fmt::format("\nLeaf groups: {}", topo.leaf_groups.size());
  if (!topo.leaf_groups.empty()) {
    std::vector<size_t> hosts, leaves;
    for (const auto &g : topo.leaf_groups) {
      hosts.push_back(g.hosts.size());
      leaves.push_back(g.leaves.size());
    }
    auto [hlo, hhi] = min_max(hosts);
    auto [llo, lhi] = min_max(leaves);
    o += fmt::format(" (hosts per group: {}; leaves per group: {})", range_text(hlo, hhi), range_text(llo, lhi));
  }
  o += "\n";
  if (!topo.pods.empty()) {
    std::vector<size_t> groups, sws;
    for (const auto &p : topo.pods) {
      groups.push_back(p.leaf_groups.size());
      sws.push_back(p.switches.size());
    }
    auto [glo, ghi] = min_max(groups);
    auto [slo, shi] = min_max(sws);
    o += fmt::format("Pods: {} (leaf groups per pod: {}; upper switches per pod: {})\n", topo.pods.size(),
                     range_text(glo, ghi), range_text(slo, shi));
  }
}

// The parts no path joins (TopoIndex islands): the placement keeps every job inside one, so
// the largest job that can run is the largest part's.
void add_parts(std::string &o, const Topology &topo) {
  const TopoIndex ix(topo);
  if (ix.island_count() <= 1) return;
  std::vector<std::vector<std::string>> names(size_t(ix.island_count()));
  for (int h = 0; h < ix.host_count(); ++h) names[size_t(ix.host_island(h))].push_back(topo.hosts[size_t(h)].name);
  o += fmt::format("{} parts with no path between them:", ix.island_count());
  for (int i = 0; i < ix.island_count(); ++i)
    o += fmt::format("{} {} host{} ({})", i ? "," : "", ix.island_size(i), ix.island_size(i) == 1 ? "" : "s",
                     hostlist_compress(names[size_t(i)]));
  o += "; a job is placed inside one part only\n";
}

// Dragonfly groups and NVLink domains, each with the range of its sizes.
void add_dragonfly_and_nvlink(std::string &o, const Topology &topo) {
  if (!topo.dragonfly_groups.empty()) {
    std::vector<size_t> hosts, sws;
    for (const auto &d : topo.dragonfly_groups) {
      hosts.push_back(d.hosts.size());
      sws.push_back(d.switches.size());
    }
    auto [hlo, hhi] = min_max(hosts);
    auto [slo, shi] = min_max(sws);
    o += fmt::format("Dragonfly groups: {} (switches per group: {}; hosts per group: {})\n",
                     topo.dragonfly_groups.size(), range_text(slo, shi), range_text(hlo, hhi));
  }
  if (!topo.nvlink_domains.empty()) {
    std::vector<size_t> hosts, gpus;
    size_t in = 0;
    for (const auto &d : topo.nvlink_domains) {
      hosts.push_back(d.hosts.size());
      gpus.push_back(static_cast<size_t>(d.gpus_per_node));
      in += d.hosts.size();
    }
    auto [hlo, hhi] = min_max(hosts);
    auto [glo, ghi] = min_max(gpus);
    o += fmt::format("NVLink domains: {} (hosts per domain: {}; GPUs per host: {}; hosts in no domain: {})\n",
                     topo.nvlink_domains.size(), range_text(hlo, hhi), range_text(glo, ghi), topo.hosts.size() - in);
  }
}

// Ignored CAs grouped by reason, reasons in order of first appearance (the Topology's canonical
// order), a few names of each.
void add_ignored(std::string &o, const Topology &topo) {
  if (topo.ignored.empty()) return;
  std::vector<std::string> reasons;
  std::map<std::string, std::vector<const IgnoredCa *>> by_reason;
  for (const auto &c : topo.ignored) {
    if (!by_reason.count(c.reason)) reasons.push_back(c.reason);
    by_reason[c.reason].push_back(&c);
  }
  constexpr size_t kShown = 5;
  o += fmt::format("\nIgnored CAs: {}\n", topo.ignored.size());
  for (const auto &r : reasons) {
    const auto &v = by_reason[r];
    std::string names;
    for (size_t i = 0; i < v.size() && i < kShown; ++i) {
      const IgnoredCa &c = *v[i];
      names += (i ? ", " : "") + (c.name.empty() ? guid_str(c.guid) : c.name);
    }
    if (v.size() > kShown) names += fmt::format(", ... ({} more)", v.size() - kShown);
    o += fmt::format("  {} ({}): {}\n", r.empty() ? std::string("no reason given") : r, v.size(), names);
  }
}

}  // namespace

std::string to_summary(const Topology &topo) {
  std::string o;
  add_counts(o, topo);
  add_link_speeds(o, topo);
  add_oversubscription(o, topo);
  add_leaf_groups_and_pods(o, topo);
  add_parts(o, topo);
  add_dragonfly_and_nvlink(o, topo);
  o += fmt::format("\nAnomalies: {}\n",
                   topo.anomalies.empty() ? std::string("none") : std::to_string(topo.anomalies.size()));
  for (const auto &a : topo.anomalies) o += fmt::format("  [{}] {}: {}\n", a.kind, a.where, a.detail);
  add_ignored(o, topo);
  return o;
}

}  // namespace topoaware
