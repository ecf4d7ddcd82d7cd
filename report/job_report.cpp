// SPDX-License-Identifier: GPL-2.0-or-later
// One placed layout job as plan and show describe it (job_report.hpp).
#include "job_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "hostlist.hpp"

namespace topoaware {

PlaceQuality job_span(const TopoIndex &ix, const std::vector<int> &ordered, const Layout &layout) {
  const JobGeometry geo = job_geometry(layout, uint32_t(ordered.size()), ix.has_domains());
  const uint32_t lmax = uint32_t(std::max(1, ix.max_leaf_group_size()));
  const uint32_t pmax = uint32_t(std::max(1, ix.max_pod_size()));
  const uint32_t seg = geo.segment_nodes, n = geo.nodes;
  const uint32_t ideal_seg = (seg + lmax - 1) / lmax;
  PlaceQuality q;
  q.segments = geo.segments();
  q.ideal_leaf_groups = (n + lmax - 1) / lmax;
  q.ideal_pods = (n + pmax - 1) / pmax;
  std::vector<int> lg_stamp(size_t(ix.leaf_group_count()), -1), pod_seen(size_t(ix.pod_count()), 0),
      lg_seen(size_t(ix.leaf_group_count()), 0);
  for (uint32_t s = 0; s < q.segments; ++s) {
    uint32_t span = 0;
    for (uint32_t k = s * seg; k < (s + 1) * seg; ++k) {
      const int g = ix.host_leaf_group(ordered[k]);
      if (lg_stamp[size_t(g)] != int(s)) lg_stamp[size_t(g)] = int(s), ++span;
    }
    if (span > ideal_seg) {
      q.segment_excess += span - ideal_seg;
      ++q.split_segments;
    }
  }
  for (int h : ordered) {
    const int g = ix.host_leaf_group(h), p = ix.host_pod(h);
    if (!lg_seen[size_t(g)]) lg_seen[size_t(g)] = 1, ++q.leaf_groups;
    if (!pod_seen[size_t(p)]) pod_seen[size_t(p)] = 1, ++q.pods;
  }
  return q;
}

std::vector<RankRun> rank_runs(const TopoIndex &ix, const std::vector<int> &ordered, uint32_t g) {
  std::vector<RankRun> runs;
  size_t k = 0;
  while (k < ordered.size()) {
    RankRun r;
    r.first_node = k;
    r.leaf_group = ix.host_leaf_group(ordered[k]);
    r.pod = ix.host_pod(ordered[k]);
    while (k < ordered.size() && ix.host_leaf_group(ordered[k]) == r.leaf_group) r.hosts.push_back(ordered[k++]);
    r.end_node = k;
    r.first_rank = uint64_t(r.first_node) * g;
    r.last_rank = uint64_t(r.end_node) * g - 1;
    runs.push_back(std::move(r));
  }
  return runs;
}

std::string span_text(const PlaceQuality &q) {
  return fmt::format("Span: {} leaf groups, {} pods (ideal {}); {} of {} segments above their ideal leaf groups",
                     q.leaf_groups, q.pods, q.ideal_pods, q.split_segments, q.segments);
}

std::string cost_text(const std::string &what, const JobCost &c, double f) {
  std::string s = fmt::format("{:<28} DP rings at ideal {}/{}, PP chains at ideal {}/{}, hop-bytes {:.2f}x of ideal, "
                              "spine bytes {:.3g} GB, est. slowdown {:.3f} (f={})",
                              what, c.dp.at_ideal, c.dp.groups, c.pp.at_ideal, c.pp.groups, c.ratio,
                              c.spine_bytes() / 1e9, c.slowdown(f), f);
  // Only on a fabric with degraded leaves, so that a healthy fabric's report is unchanged.
  if (c.degraded_hop_bytes > 0 && c.hop_bytes > 0)
    s += fmt::format("; {:.0f}% of the hop-bytes from degraded leaf uplinks", 100 * c.degraded_hop_bytes / c.hop_bytes);
  return s;
}

nlohmann::ordered_json cost_json(const JobCost &c, double f) {
  auto group = [](const GroupStats &g) {
    return nlohmann::ordered_json{{"groups", g.groups},
                                  {"at_ideal", g.at_ideal},
                                  {"leaf_groups", g.leaf_groups},
                                  {"ideal_leaf_groups", g.ideal_leaf_groups},
                                  {"pods", g.pods},
                                  {"ideal_pods", g.ideal_pods}};
  };
  return {{"dp", group(c.dp)},
          {"pp", group(c.pp)},
          {"bytes_by_level", {c.bytes[0], c.bytes[1], c.bytes[2], c.bytes[3]}},
          {"hop_bytes", c.hop_bytes},
          {"ideal_hop_bytes", c.ideal_hop_bytes},
          {"degraded_uplink_hop_bytes", c.degraded_hop_bytes},
          {"ratio_to_ideal", c.ratio},
          {"slowdown", c.slowdown(f)},
          {"comm_fraction", f}};
}

nlohmann::ordered_json span_json(const PlaceQuality &q) {
  return {{"leaf_groups", q.leaf_groups},     {"ideal_leaf_groups", q.ideal_leaf_groups},
          {"pods", q.pods},                   {"ideal_pods", q.ideal_pods},
          {"segments", q.segments},           {"split_segments", q.split_segments},
          {"segment_excess", q.segment_excess}, {"ideal", q.ideal()}};
}

std::string host_names(const Topology &t, const std::vector<int> &hosts) {
  std::vector<std::string> n;
  n.reserve(hosts.size());
  for (int h : hosts) n.push_back(t.hosts[size_t(h)].name);
  return hostlist_compress(n);
}

}  // namespace topoaware
