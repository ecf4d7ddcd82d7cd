// SPDX-License-Identifier: GPL-2.0-or-later
// Cost model (see cost.hpp for the traffic model and its sources).
#include "cost.hpp"

#include <algorithm>

namespace topoaware {

int path_level(const TopoIndex &ix, int a, int b) {
  if (a == b) return 0;
  if (ix.host_leaf_group(a) == ix.host_leaf_group(b)) return 1;
  if (ix.host_pod(a) == ix.host_pod(b)) return 2;
  return 3;
}

namespace {

// Weight of one link above a level-j switch: the level's median oversubscription (1 if unknown).
double level_weight(const TopoIndex &ix, int j) {
  double o = 1;
  for (const LevelStats &s : ix.topology().levels)
    if (s.level == j && s.oversub_median > 0) o = s.oversub_median;
  return o;
}

// What degraded uplinks add to a path between leaf groups ga and gb that tops out at `level`:
// each of its two leaf uplinks weighs (factor - 1) more than a healthy one.
double uplink_excess(const TopoIndex &ix, int level, int ga, int gb, double leaf_weight) {
  if (level < 2 || !ix.degraded()) return 0;
  return leaf_weight * (ix.leaf_group_uplink_factor(ga) - 1 + ix.leaf_group_uplink_factor(gb) - 1);
}

}  // namespace

double path_weight(const TopoIndex &ix, int level) {
  // 2 host links, then for each level j below the top two links weighted by level j's
  // oversubscription (one up, one down).
  double w = level > 0 ? 2 : 0;
  for (int j = 1; j < level; ++j) w += 2 * level_weight(ix, j);
  return w;
}

double host_path_weight(const TopoIndex &ix, int a, int b) {
  const int lvl = path_level(ix, a, b);
  return path_weight(ix, lvl) +
         uplink_excess(ix, lvl, ix.host_leaf_group(a), ix.host_leaf_group(b), level_weight(ix, 1));
}

namespace {

// Ideal weighted hop count of a group over n nodes: blocks of whole nodes, packed into
// ceil(n/L) leaf groups inside ceil(n/P) pods; `ring` adds the closing edge.
double ideal_hops(const TopoIndex &ix, uint32_t n, bool ring, uint32_t &lgs, uint32_t &pods, const double w[4]) {
  const uint32_t L = uint32_t(std::max(1, ix.max_leaf_group_size()));
  const uint32_t P = uint32_t(std::max(1, ix.max_pod_size()));
  lgs = (n + L - 1) / L;
  pods = (n + P - 1) / P;
  if (n <= 1) return 0;
  // crossings: between nodes, between leaf groups, between pods (a ring closes each cycle)
  const uint32_t node_x = ring ? n : n - 1;
  const uint32_t lg_x = lgs > 1 ? (ring ? lgs : lgs - 1) : 0;
  const uint32_t pod_x = pods > 1 ? (ring ? pods : pods - 1) : 0;
  return (node_x - lg_x) * w[1] + (lg_x - pod_x) * w[2] + pod_x * w[3];
}

}  // namespace

JobCost job_cost(const TopoIndex &ix, const std::vector<int> &ordered, const Layout &l, const CostParams &cp) {
  const JobGeometry geo = job_geometry(l, uint32_t(ordered.size()), ix.has_domains());
  const uint32_t G = geo.gpus_per_node;
  const double w[4] = {0, path_weight(ix, 1), path_weight(ix, 2), path_weight(ix, 3)};
  const double leaf_w = level_weight(ix, 1);
  JobCost jc;
  std::vector<int> stamp_lg(size_t(ix.leaf_group_count()), -1), stamp_pod(size_t(ix.pod_count()), -1);
  std::vector<int> stamp_node(ordered.size(), -1);
  int stamp = 0;
  auto host_of = [&](uint32_t rank) { return ordered[rank / G]; };

  // One group: members given by rank(i), i < d. TP ranks share nodes (tp is innermost and divides
  // G), so tp = 0 stands for all TP members: its bytes count l.tp times.
  auto group = [&](GroupStats &gs, uint32_t d, bool ring, double edge_bytes, auto rank_at) {
    ++stamp;
    uint32_t nodes = 0, lgs = 0, pods = 0;
    for (uint32_t i = 0; i < d; ++i) {
      const uint32_t r = rank_at(i);
      const int h = host_of(r);
      if (stamp_node[r / G] != stamp) { stamp_node[r / G] = stamp; ++nodes; }
      const int g = ix.host_leaf_group(h), p = ix.host_pod(h);
      if (stamp_lg[size_t(g)] != stamp) { stamp_lg[size_t(g)] = stamp; ++lgs; }
      if (stamp_pod[size_t(p)] != stamp) { stamp_pod[size_t(p)] = stamp; ++pods; }
    }
    double hops = 0, excess = 0;
    const uint32_t edges = d < 2 ? 0 : (ring ? d : d - 1);
    for (uint32_t i = 0; i < edges; ++i) {
      const int ha = host_of(rank_at(i)), hb = host_of(rank_at((i + 1) % d));
      const int lvl = path_level(ix, ha, hb);
      gs.bytes[lvl] += edge_bytes * l.tp;
      hops += w[lvl];
      excess += uplink_excess(ix, lvl, ix.host_leaf_group(ha), ix.host_leaf_group(hb), leaf_w);
    }
    uint32_t ilg = 0, ipod = 0;
    const double ideal = ideal_hops(ix, nodes, ring, ilg, ipod, w);
    gs.groups += l.tp;
    gs.at_ideal += (lgs <= ilg && pods <= ipod) ? l.tp : 0;
    gs.leaf_groups += uint64_t(lgs) * l.tp;
    gs.ideal_leaf_groups += uint64_t(ilg) * l.tp;
    gs.pods += uint64_t(pods) * l.tp;
    gs.ideal_pods += uint64_t(ipod) * l.tp;
    gs.hop_bytes += (hops + excess) * edge_bytes * l.tp;
    gs.degraded_hop_bytes += excess * edge_bytes * l.tp;
    gs.ideal_hop_bytes += ideal * edge_bytes * l.tp;
  };

  RankCoord c;
  // DP rings: fixed (cp, pp), dp = 0..DP-1; each member sends 2(d-1)/d * S to its successor.
  if (l.dp > 1) {
    const double S = cp.grad_bytes_per_rank(l);
    const double e = 2.0 * (l.dp - 1) / l.dp * S;
    for (c.pp = 0; c.pp < l.pp; ++c.pp)
      for (c.cp = 0; c.cp < l.cp; ++c.cp)
        group(jc.dp, l.dp, true, e, [&](uint32_t i) { RankCoord m = c; m.dp = i; return rank_of(l, m); });
  }
  // PP chains: fixed (cp, dp), pp = 0..PP-1; each boundary carries activations forward and
  // gradients backward for every micro-batch.
  if (l.pp > 1) {
    const double e = 2.0 * cp.micro_batches * cp.activation_bytes(l);
    for (c.dp = 0; c.dp < l.dp; ++c.dp)
      for (c.cp = 0; c.cp < l.cp; ++c.cp)
        group(jc.pp, l.pp, false, e, [&](uint32_t i) { RankCoord m = c; m.pp = i; return rank_of(l, m); });
  }
  for (int i = 0; i < 4; ++i) jc.bytes[i] = jc.dp.bytes[i] + jc.pp.bytes[i];
  jc.hop_bytes = jc.dp.hop_bytes + jc.pp.hop_bytes;
  jc.ideal_hop_bytes = jc.dp.ideal_hop_bytes + jc.pp.ideal_hop_bytes;
  jc.degraded_hop_bytes = jc.dp.degraded_hop_bytes + jc.pp.degraded_hop_bytes;
  jc.ratio = jc.ideal_hop_bytes > 0 ? jc.hop_bytes / jc.ideal_hop_bytes : 1;
  return jc;
}

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

}  // namespace topoaware
