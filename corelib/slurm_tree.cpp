// SPDX-License-Identifier: GPL-2.0-or-later
// Replica of Slurm 22.05.8 _eval_nodes_topo (src/plugins/select/cons_tres/job_test.c:2153), for
// exclusive whole-node jobs, one node weight, no required nodes (req_nodes_bitmap == NULL), so
// min_nodes == req_nodes == max_nodes == nodes and CPUs never limit (avail_cpus > 0 on every
// usable node). Paths that need required nodes or several weights are left out, and say so.
#include <algorithm>

#include "policies.hpp"

namespace topoaware {

namespace {

// job_test.c:253 _enough_nodes with req_nodes == min_nodes: avail_nodes >= rem_nodes.
bool enough_nodes(int avail, int rem) { return avail >= rem; }

// job_test.c:1393 _topo_compare_switches
int compare_switches(const SlurmFabricView &c, int i, int j, int rem_nodes, const std::vector<int> &cnt) {
  while (true) {
    const bool i_fit = cnt[size_t(i)] >= rem_nodes;
    const bool j_fit = cnt[size_t(j)] >= rem_nodes;
    if (i_fit && j_fit) {
      if (cnt[size_t(i)] < cnt[size_t(j)]) return 1;
      if (cnt[size_t(i)] > cnt[size_t(j)]) return -1;
      break;
    } else if (i_fit) {
      return 1;
    } else if (j_fit) {
      return -1;
    }
    const int pi = c.sw[size_t(i)].parent, pj = c.sw[size_t(j)].parent;
    if ((pi != i || pj != j) && pi != pj) {
      i = pi;
      j = pj;
      continue;
    }
    break;
  }
  if (cnt[size_t(i)] > cnt[size_t(j)]) return 1;
  if (cnt[size_t(i)] < cnt[size_t(j)]) return -1;
  if (c.sw[size_t(i)].level < c.sw[size_t(j)].level) return 1;
  if (c.sw[size_t(i)].level > c.sw[size_t(j)].level) return -1;
  return 0;
}

// job_test.c:1436 _topo_choose_best_switch
void choose_best_switch(const SlurmFabricView &c, const std::vector<unsigned> &dist, const std::vector<int> &cnt,
                        int rem_nodes, int i, int &best) {
  if (best == -1 || dist[size_t(i)] == SlurmFabricView::kInf || !cnt[size_t(i)]) {
    if (cnt[size_t(i)] && dist[size_t(i)] < SlurmFabricView::kInf) best = i;  // first possibility
    return;
  }
  const int tcs = compare_switches(c, i, best, rem_nodes, cnt);
  if ((dist[size_t(i)] < dist[size_t(best)] && tcs >= 0) || (dist[size_t(i)] == dist[size_t(best)] && tcs > 0))
    best = i;  // closer and fits OR same distance and tightest fit
}

// job_test.c:1381 _topo_add_dist
void add_dist(const SlurmFabricView &c, std::vector<unsigned> &dist, int inx) {
  for (size_t i = 0; i < dist.size(); ++i) {
    if (c.sw_dist[size_t(inx)][i] == SlurmFabricView::kInf || dist[i] == SlurmFabricView::kInf)
      dist[i] = SlurmFabricView::kInf;
    else
      dist[i] += c.sw_dist[size_t(inx)][i];
  }
}

}  // namespace

bool slurm_tree_select(const SlurmFabricView &c, const std::vector<uint8_t> &free, int nodes, std::vector<int> &out,
                       int *leaf_switches) {
  out.clear();
  if (leaf_switches) *leaf_switches = 0;
  const size_t nsw = c.sw.size();
  int rem_nodes = nodes;  // job_test.c:2200 rem_nodes = MAX(min_nodes, req_nodes) (no gres per job)
  // 2235-2290: node_map empty -> error; one node weight list (all usable nodes share one weight).
  bool any = false;
  for (uint8_t f : free) any = any || f;
  if (!any) return false;
  // 2297-2332: per switch, usable nodes below it; the top switch is the highest-level switch
  // with enough nodes (">=" on the level and "<=" on the equal weight: the last one in table
  // order among the highest level).
  std::vector<int> cnt(nsw, 0);
  for (size_t i = 0; i < nsw; ++i)
    for (int h : c.sw[i].nodes) cnt[i] += free[size_t(h)] != 0;
  int top = -1;
  for (size_t i = 0; i < nsw; ++i) {
    if (!enough_nodes(cnt[i], rem_nodes)) continue;
    if (top == -1 || c.sw[i].level >= c.sw[size_t(top)].level) top = int(i);
  }
  // 2334: bit_clear_all(node_map) (the allocation is rebuilt in node_map below)
  if (top == -1) return false;  // 2343 unable to identify top level switch
  // 2361-2366: every switch keeps only nodes under the top switch. 2385-2425: best_nodes_bitmap =
  // all usable nodes of the lowest weight under the top switch (one weight: all of them); it is
  // sufficient because the top switch has enough nodes. 2486-2494: counts on best_nodes_bitmap.
  std::vector<uint8_t> under_top(free.size(), 0);
  for (int h : c.sw[size_t(top)].nodes) under_top[size_t(h)] = free[size_t(h)];
  for (size_t i = 0; i < nsw; ++i) {
    cnt[i] = 0;
    for (int h : c.sw[i].nodes) cnt[i] += under_top[size_t(h)] != 0;
  }
  // 2520-2561 (required leaf switches) do not apply: no required nodes, one weight.
  // 2563-2566: switches_dist starts at 0 (no switch required).
  std::vector<unsigned> dist(nsw, 0);
  std::vector<uint8_t> node_map(free.size(), 0);
  // 2568-2621: add leaf switches one at a time, best by _topo_choose_best_switch.
  int prev_rem_nodes = rem_nodes + 1;
  bool done = false;
  while (!done) {
    if (prev_rem_nodes == rem_nodes) break;  // stalled
    prev_rem_nodes = rem_nodes;
    int best = -1;
    for (size_t i = 0; i < nsw; ++i) {
      if (c.sw[i].level != 0) continue;
      choose_best_switch(c, dist, cnt, rem_nodes, int(i), best);
    }
    if (best == -1) break;
    add_dist(c, dist, best);
    // "NOTE: Ideally we would add nodes in order of resource availability rather than in order
    // of bitmap position": nodes in node-index order.
    for (int h : c.sw[size_t(best)].nodes) {
      if (!under_top[size_t(h)] || node_map[size_t(h)]) continue;
      --rem_nodes;
      node_map[size_t(h)] = 1;
      if (rem_nodes <= 0) {
        done = true;
        break;
      }
    }
    cnt[size_t(best)] = 0;  // used all
  }
  if (rem_nodes > 0) return false;  // 2687 rc = SLURM_ERROR
  for (size_t h = 0; h < node_map.size(); ++h)
    if (node_map[h]) out.push_back(int(h));
  // 2698-2707: count the leaf switches the allocation overlaps.
  if (leaf_switches) {
    std::vector<uint8_t> seen(nsw, 0);
    for (int h : out) {
      const int s = c.host_leaf_switch[size_t(h)];
      if (!seen[size_t(s)]) {
        seen[size_t(s)] = 1;
        ++*leaf_switches;
      }
    }
  }
  return true;
}

}  // namespace topoaware
