// SPDX-License-Identifier: GPL-2.0-or-later
// Rank order: small cases written out by hand, Megatron's and tp-pp-dp's formulas, order
// independence, and the error paths.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cmocka_cxx.hpp"
#include "engine_topologies.hpp"
#include "generator.hpp"
#include "rank_order.hpp"
#include "route_trace.hpp"

using namespace topoaware;
using Names = std::vector<std::string>;

namespace {

Layout L(uint32_t tp, uint32_t pp, uint32_t dp, uint32_t cp = 1, uint32_t ep = 1,
         RankOrder o = RankOrder::TpCpEpDpPp) {
  Layout l;
  l.tp = tp; l.pp = pp; l.dp = dp; l.cp = cp; l.ep = ep; l.order = o;
  return l;
}

void assert_names(const Names &got, const Names &want) {
  assert_int_equal(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) assert_string_equal(got[i].c_str(), want[i].c_str());
}

// 2 pods x 2 leaf groups x 4 hosts: n0001-4 | n0005-8 (pod 0), n0009-12 | n0013-16 (pod 1).
const Topology &pods2() {
  static const Topology t = enginetest::make_topology(2, 2, 4);
  return t;
}

void test_megatron_coords(void **) {
  const Layout l = L(2, 2, 3, 2);  // tp=2 cp=2 dp=3 pp=2: rank = tp + 2*(cp + 2*(dp + 3*pp))
  for (uint32_t r = 0; r < 24; ++r) {
    RankCoord c = rank_coord(l, r);
    assert_int_equal(c.tp + 2 * (c.cp + 2 * (c.dp + 3 * c.pp)), r);
    assert_int_equal(rank_of(l, c), r);
  }
  RankCoord c = rank_coord(l, 13);  // 13 = 1 + 2*(0 + 2*(0 + 3*1)) -> tp 1, cp 0, dp 0, pp 1
  assert_int_equal(c.tp, 1);
  assert_int_equal(c.cp, 0);
  assert_int_equal(c.dp, 0);
  assert_int_equal(c.pp, 1);
  c = rank_coord(l, 7);  // 7 = 1 + 2*(1 + 2*1): tp 1, cp 1, dp 1, pp 0
  assert_int_equal(c.cp, 1);
  assert_int_equal(c.dp, 1);
  assert_int_equal(c.pp, 0);
}

void test_tp_pp_dp_coords(void **) {
  const Layout l = L(4, 2, 2, 1, 1, RankOrder::TpPpDp);  // rank = tp + 4*(pp + 2*dp)
  RankCoord c = rank_coord(l, 5);
  assert_int_equal(c.tp, 1);
  assert_int_equal(c.pp, 1);
  assert_int_equal(c.dp, 0);
  c = rank_coord(l, 10);  // 10 = 2 + 4*(0 + 2*1)
  assert_int_equal(c.tp, 2);
  assert_int_equal(c.pp, 0);
  assert_int_equal(c.dp, 1);
  for (uint32_t r = 0; r < 16; ++r) assert_int_equal(rank_of(l, rank_coord(l, r)), r);
  // Megatron's order for the same rank 5: dp varies before pp
  c = rank_coord(L(4, 2, 2), 5);
  assert_int_equal(c.dp, 1);
  assert_int_equal(c.pp, 0);
}

void test_ep_coords(void **) {
  // tp=1 cp=2 dp=4 ep=4: q = cp + 2*dp; ep = q % 4, edp = q / 4
  const Layout l = L(1, 1, 4, 2, 4);
  RankCoord c = rank_coord(l, 5);  // cp 1, dp 2 -> q 5
  assert_int_equal(c.cp, 1);
  assert_int_equal(c.dp, 2);
  assert_int_equal(c.ep, 1);
  assert_int_equal(c.edp, 1);
}

void test_geometry(void **) {
  JobGeometry g = job_geometry(L(8, 2, 4), 8);  // DP ring of 4 nodes
  assert_int_equal(g.gpus_per_node, 8);
  assert_int_equal(g.segment_nodes, 4);
  assert_int_equal(g.segments(), 2);
  g = job_geometry(L(8, 2, 4, 1, 1, RankOrder::TpPpDp), 8);  // PP chain of 2 nodes
  assert_int_equal(g.segment_nodes, 2);
  g = job_geometry(L(4, 2, 3), 3);  // 24 GPUs on 3 nodes: ring of 12 ranks = 1.5 nodes -> 3 nodes
  assert_int_equal(g.gpus_per_node, 8);
  assert_int_equal(g.segment_nodes, 3);
  g = job_geometry(L(2, 1, 2), 1);  // the whole job in one node
  assert_int_equal(g.segment_nodes, 1);
}

void test_two_full_rings(void **) {
  TopoIndex ix(pods2());
  // tp=8 dp=2 pp=2: two DP rings of 2 nodes; given in a scrambled order
  Names got = order_node_names(ix, {"n0006", "n0001", "n0005", "n0002"}, L(8, 2, 2));
  assert_names(got, {"n0001", "n0002", "n0005", "n0006"});
  // ranks 0-7 on n0001 (dp 0, pp 0), 8-15 on n0002 (dp 1, pp 0), 16-23 on n0005 (dp 0, pp 1)
  assert_int_equal(rank_coord(L(8, 2, 2), 8).dp, 1);
  assert_int_equal(rank_coord(L(8, 2, 2), 16).pp, 1);
}

void test_remainders_combined(void **) {
  TopoIndex ix(pods2());
  // n0005-7 share a leaf group, n0001 is alone: the full ring goes first, then n0001 + n0007.
  Names got = order_node_names(ix, {"n0007", "n0001", "n0006", "n0005"}, L(8, 2, 2));
  assert_names(got, {"n0005", "n0006", "n0001", "n0007"});
  // Canonical (name) order would have put n0001 + n0005 in ring 0 and n0006 + n0007 in ring 1:
  // two rings across leaf groups instead of one.
}

void test_cross_pod(void **) {
  TopoIndex ix(pods2());
  Names got = order_node_names(ix, {"n0009", "n0004"}, L(8, 1, 2));
  assert_names(got, {"n0004", "n0009"});
  // pod 1 holds a whole ring, pod 0 two halves: pod 0's halves combine inside pod 0 first
  got = order_node_names(ix, {"n0013", "n0001", "n0014", "n0005"}, L(8, 2, 2));
  assert_names(got, {"n0001", "n0005", "n0013", "n0014"});
  got = order_node_names(ix, {"n0013", "n0001", "n0009", "n0005"}, L(8, 2, 2));
  assert_names(got, {"n0001", "n0005", "n0009", "n0013"});
}

void test_tp_pp_dp_chain(void **) {
  TopoIndex ix(pods2());
  // tp-pp-dp, tp=8 pp=2 dp=2: PP chains of 2 nodes are the segments
  const Layout l = L(8, 2, 2, 1, 1, RankOrder::TpPpDp);
  Names got = order_node_names(ix, {"n0007", "n0001", "n0006", "n0005"}, l);
  assert_names(got, {"n0005", "n0006", "n0001", "n0007"});
  // ranks 0-7 (n0005): pp 0 dp 0; 8-15 (n0006): pp 1 dp 0
  assert_int_equal(rank_coord(l, 8).pp, 1);
  assert_int_equal(rank_coord(l, 8).dp, 0);
}

void test_segment_larger_than_leaf_group(void **) {
  const Topology t = enginetest::make_topology(0, 4, 4);  // 4 groups of 4, no pods
  TopoIndex ix(t);
  // tp=8 dp=8: one ring of 8 nodes over groups holding 4, 1 and 3 of them
  Names got = order_node_names(ix, {"n0011", "n0005", "n0004", "n0010", "n0003", "n0009", "n0002", "n0001"},
                               L(8, 1, 8));
  assert_names(got, {"n0001", "n0002", "n0003", "n0004", "n0005", "n0009", "n0010", "n0011"});
}

void test_rail_groups(void **) {
  const Topology t = enginetest::make_topology(0, 2, 4, 8);  // 2 scalable units of 4 hosts, 8 rails
  TopoIndex ix(t);
  assert_int_equal(ix.leaf_group_count(), 2);
  Names got = order_node_names(ix, {"n0008", "n0002", "n0001", "n0007"}, L(8, 2, 2));
  assert_names(got, {"n0001", "n0002", "n0007", "n0008"});
}

// 4 leaves x 8 hosts, 4 uplinks per leaf to 2 spines: the fabric of the entry-class tests.
Topology fat_tree_4x8() {
  FatTreeSpec s;
  s.leaves = 4;
  s.hosts_per_leaf = 8;
  s.uplinks_per_leaf = 4;
  s.spines = 2;
  return classify(generate_fat_tree(s), ClassifyOptions{});
}

// The entry classes (of the first host of each split part) of a job on hosts 0..held-1 of every
// leaf of a 4 x 8 fat tree with 4 uplinks per leaf, with forwarding tables when `routed` (LIDs in a
// random order, so that a host's class has nothing to do with its index or name).
std::vector<uint32_t> split_entries(int held, const Layout &layout, bool routed = true) {
  Topology t = fat_tree_4x8();
  if (routed) enginetest::add_test_routes(t, 3);
  TopoIndex ix(t);
  assert_true(ix.has_entry_classes() == routed);
  for (int g = 0; g < ix.leaf_group_count(); ++g) assert_int_equal(ix.leaf_group_uplinks(g), 4);
  // The job's hosts: on each leaf, `held` of them, one of each entry class first (with routes), in
  // name order (without).
  std::vector<int> set;
  for (int g = 0; g < ix.leaf_group_count(); ++g) {
    std::vector<int> hosts = ix.leaf_group_hosts(g);
    if (routed)
      std::stable_sort(hosts.begin(), hosts.end(), [&](int a, int b) {
        const auto rank = [&](int h) {  // the first host of each class, then the others
          for (int o : ix.leaf_group_hosts(g))
            if (ix.host_uplink_mod(o) == ix.host_uplink_mod(h)) return o == h ? 0 : 1;
          return 1;
        };
        return rank(a) < rank(b);
      });
    for (int k = 0; k < held; ++k) set.push_back(hosts[size_t(k)]);
  }
  RankOrderer ro(ix);
  std::vector<int> out;
  ro.order(set, layout, out);
  const Packing &pk = ro.packing();
  std::vector<uint32_t> entries;
  size_t node = 0;
  for (uint32_t seg = 0; seg < pk.segments(); ++seg) {
    const bool split = pk.begin[seg + 1] - pk.begin[seg] > 1;
    for (uint32_t q = pk.begin[seg]; q < pk.begin[seg + 1]; ++q) {
      const int entry = out[node];
      if (split) entries.push_back(routed ? ix.host_uplink_mod(entry) : uint32_t(entry));
      for (uint32_t k = 0; k < pk.parts[q].count; ++k)
        assert_int_equal(ix.host_leaf_group(out[node + k]), ix.host_leaf_group(entry));
      node += pk.parts[q].count;
    }
  }
  std::vector<int> so = out, ss = set;
  std::sort(so.begin(), so.end());
  std::sort(ss.begin(), ss.end());
  assert_true(so == ss);
  return entries;
}

// The ports of `leaf` cabled to another switch, sorted: a host's entry class is the position of the
// port its incoming traffic takes among them.
std::vector<int> leaf_uplink_ports(const Topology &t, int leaf) {
  std::vector<int> ups;
  for (const Link &l : t.links)
    for (auto [pa, pb] : l.ports) {
      if (t.switch_index(l.a) == leaf && t.switch_index(l.b) >= 0) ups.push_back(pa);
      if (t.switch_index(l.b) == leaf && t.switch_index(l.a) >= 0) ups.push_back(pb);
    }
  std::sort(ups.begin(), ups.end());
  return ups;
}

// The routes give each host the uplink its incoming traffic takes (its entry class), not its index:
// with LIDs in a random order some host's class differs from its index mod 4.
void test_entry_classes_from_routes(void **) {
  Topology t = fat_tree_4x8();
  enginetest::add_test_routes(t, 3);
  TopoIndex ix(t);
  assert_true(ix.has_entry_classes());
  RouteTracer tr(t);
  int differ = 0;
  for (int h = 0; h < ix.host_count(); ++h) {
    differ += ix.host_uplink_mod(h) != uint32_t(h % 4);
    // The class is where a route from another leaf enters the host's leaf (ports sorted: 33..36).
    const int other = (h + 8) % 32;
    TracedRoute r = tr.trace(other, 0, h, 0);
    assert_true(r.ok());
    const std::vector<int> ups = leaf_uplink_ports(t, t.hosts[size_t(h)].leaf);
    assert_int_equal(ix.host_uplink_mod(h), std::lower_bound(ups.begin(), ups.end(), r.hops.back().in_port) - ups.begin());
  }
  assert_true(differ > 0);
}

// Rings of 8 (tp=8 pp=2 dp=8) over two leaves each, on 4 hosts of every leaf, one of each entry
// class: the 4 split parts enter by 4 distinct classes (4 distinct uplink cables), not all by one.
void test_split_entries_staggered(void **) {
  std::vector<uint32_t> classes = split_entries(4, L(8, 2, 8));
  assert_int_equal(classes.size(), 4);
  std::sort(classes.begin(), classes.end());
  assert_true(std::unique(classes.begin(), classes.end()) == classes.end());  // 4 distinct cables
}

// Hosts with 2 NICs on their leaf (4 leaves x 8 hosts, 8 uplinks each), routed as OpenSM's ftree
// routes, by leaf port order: a host's two LIDs come down two consecutive cables, so its traffic
// spans two entry classes (the stride). Rings of 8 (tp=8 pp=2 dp=8) on 4 hosts of every leaf, one
// of each class: the 4 split parts enter by windows of 2 cables that do not overlap (with a stride
// of 1, parts one class apart would share a cable for one of the two NICs).
void test_split_entries_multi_nic_stride(void **) {
  FatTreeSpec s;
  s.leaves = 4;
  s.hosts_per_leaf = 8;
  s.uplinks_per_leaf = 8;
  s.spines = 4;
  s.hcas_per_host = 2;
  Topology t = classify(generate_fat_tree(s), ClassifyOptions{});
  enginetest::add_test_routes(t, 3, true);
  TopoIndex ix(t);
  assert_true(ix.has_entry_classes());
  std::vector<int> set;
  for (int g = 0; g < ix.leaf_group_count(); ++g) {
    assert_int_equal(ix.leaf_group_uplinks(g), 8);
    assert_int_equal(ix.leaf_group_entry_stride(g), 2);
    std::vector<int> seen(8, 0);
    for (int h : ix.leaf_group_hosts(g)) {
      assert_int_equal(ix.host_uplink_mod(h) % 2, 0);  // NIC 0 on an even port position
      if (!seen[ix.host_uplink_mod(h)]++ && set.size() < size_t(4 * (g + 1))) set.push_back(h);
    }
  }
  assert_int_equal(set.size(), 16);
  RankOrderer ro(ix);
  std::vector<int> out;
  ro.order(set, L(8, 2, 8), out);
  const Packing &pk = ro.packing();
  std::vector<uint32_t> entries;
  size_t node = 0;
  for (uint32_t seg = 0; seg < pk.segments(); ++seg)
    for (uint32_t q = pk.begin[seg]; q < pk.begin[seg + 1]; ++q) {
      if (pk.begin[seg + 1] - pk.begin[seg] > 1) entries.push_back(ix.host_uplink_mod(out[node]));
      node += pk.parts[q].count;
    }
  assert_int_equal(entries.size(), 4);
  std::sort(entries.begin(), entries.end());
  assert_true(std::unique(entries.begin(), entries.end()) == entries.end());  // 4 windows of 2 cables
  TopoIndex one(fat_tree_4x8());
  assert_int_equal(one.leaf_group_entry_stride(0), 1);  // no routes: 1
}

// Hosts with R = 2, 3 or 4 NICs on their leaf (4 leaves x 8 hosts, U = 4R uplinks each to U
// spines), with tables that bring a host's NICs down NON-consecutive cables: NIC k of the host at
// position j of its leaf comes down cable (j + 4k) mod U (interleaved, as minhop, updn and dfsssp
// route a leaf with two cables per spine). The job: 6, 4 and 6 consecutive hosts of leaves 0, 1
// and 2, rings of 8 (tp=8 pp=2 dp=8): leaf 0's 6 + 2 of leaf 1's, and leaf 1's other 2 + leaf 2's
// 6, so leaf 1 holds two split parts, whose ring edges come down into it and leave it towards the
// other two parts at once. No cable may carry two of them in one direction (a part's ring edges
// come down its entry host's R cables, and leave the part before it by that host's R spines):
// stepping the search by R classes from the first NIC's class alone, as if the R cables were
// consecutive, sent two parts down the same cables. The cables are read with RouteTracer here,
// not from the rank order's own tables.
void test_split_entries_interleaved_nics(void **) {
  for (int R : {2, 3, 4}) {
    const int U = 4 * R;
    FatTreeSpec s;
    s.leaves = 4;
    s.hosts_per_leaf = 8;
    s.uplinks_per_leaf = U;
    s.spines = U;
    s.hcas_per_host = R;
    Topology t = classify(generate_fat_tree(s), ClassifyOptions{});
    std::vector<size_t> position(t.hosts.size());  // a host's position among its leaf's hosts
    std::map<int, size_t> on_leaf;
    for (size_t h = 0; h < t.hosts.size(); ++h) position[h] = on_leaf[t.hosts[h].leaf]++;
    enginetest::add_test_routes(t, 3, false, [&](size_t h, size_t p) { return (position[h] + 4 * p) % size_t(U); });
    TopoIndex ix(t);
    assert_true(ix.has_entry_classes());
    // The job's hosts: 6, 4 and 6 consecutive positions of leaves 0-2 (leaf 1's 4 hold one host of
    // each set of cables), starting at a position that changes with the trial and the leaf, so
    // that the node set's hash, hence where the search starts, changes too.
    const auto job_hosts = [&](int trial) {
      std::vector<int> set;
      for (int g = 0; g < 3; ++g) {
        assert_int_equal(ix.leaf_group_uplinks(g), U);
        for (int k = 0; k < (g == 1 ? 4 : 6); ++k)
          set.push_back(ix.leaf_group_hosts(g)[size_t((trial * (g + 1) + k) % 8)]);
      }
      return set;
    };
    // The cables (positions among the leaf's uplink ports, = spines here) traffic to each NIC of
    // host h comes down, traced from another leaf.
    RouteTracer tr(t);
    const auto cables = [&](int h) {
      const std::vector<int> ups = leaf_uplink_ports(t, t.hosts[size_t(h)].leaf);
      std::vector<int> out;
      const int other = (h + 8) % 32;
      for (size_t p = 0; p < t.hosts[size_t(h)].ports.size(); ++p) {
        const TracedRoute r = tr.trace(other, 0, h, int(p));
        assert_true(r.ok());
        out.push_back(int(std::lower_bound(ups.begin(), ups.end(), r.hops.back().in_port) - ups.begin()));
      }
      return out;
    };
    const std::vector<int> c0 = cables(job_hosts(0)[0]);
    assert_int_equal(c0.size(), size_t(R));
    assert_int_equal(c0[1], (c0[0] + 4) % U);  // the tables are interleaved, not consecutive
    RankOrderer ro(ix);
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<int> out;
      ro.order(job_hosts(trial), L(8, 2, 8), out);
      const Packing &pk = ro.packing();
      // Every ring edge between parts, NIC k to NIC k: (leaf, its port) of the cable it leaves
      // the source's leaf by, and of the one it comes down into the entry host's leaf by.
      std::map<std::pair<int, int>, int> up, down;
      std::vector<size_t> first;  // each part's first node in the order
      size_t node = 0, parts = 0;
      for (uint32_t q = 0; q < pk.parts.size(); ++q) first.push_back(node), node += pk.parts[q].count;
      for (uint32_t seg = 0; seg < pk.segments(); ++seg) {
        const uint32_t b = pk.begin[seg], e = pk.begin[seg + 1];
        if (e - b < 2) continue;
        for (uint32_t q = b; q < e; ++q) {
          ++parts;
          const uint32_t pred = q == b ? e - 1 : q - 1;
          const int from = out[first[pred] + pk.parts[pred].count - 1], to = out[first[q]];
          for (int k = 0; k < R; ++k) {
            const TracedRoute r = tr.trace(from, k, to, k);
            assert_true(r.ok() && r.hops.size() == 3);
            ++up[{r.hops.front().sw, r.hops.front().out_port}];
            ++down[{r.hops.back().sw, r.hops.back().in_port}];
          }
        }
      }
      assert_int_equal(parts, 4);
      for (const auto *m : {&up, &down})
        for (const auto &[cable, edges] : *m)
          if (edges > 1) fail_msg("R=%d, trial %d: two ring edges of the job on one cable", R, trial);
    }
  }
}

// Without recorded routes nothing is guessed: each split part starts at its leaf's first host of
// the job in canonical order (name order here).
void test_split_entries_canonical_without_routes(void **) {
  const std::vector<uint32_t> entries = split_entries(4, L(8, 2, 8), false);
  assert_int_equal(entries.size(), 4);
  for (uint32_t e : entries) assert_true(e % 8 == 0 || e % 8 == 2);  // the first host of a part
}

// Hosts 0-5 of every leaf; rings of 4 (tp=8 pp=6 dp=4): one whole ring per leaf, the four
// remainders of 2 form two rings over two leaves each. They enter by classes the job holds whole
// in the leaf (no other job's host there, so no other job's flow comes down that cable).
void test_split_entries_by_held_classes(void **) {
  Topology t = fat_tree_4x8();
  enginetest::add_test_routes(t, 3);
  TopoIndex ix(t);
  // Classes held whole on each leaf by the job's hosts (the first 6 of each leaf).
  std::vector<std::vector<int>> whole(4, std::vector<int>(4, 0));
  for (int g = 0; g < 4; ++g) {
    const auto &hosts = ix.leaf_group_hosts(g);
    for (size_t k = 0; k < hosts.size(); ++k) whole[size_t(g)][ix.host_uplink_mod(hosts[k])] += k < 6 ? 0 : 1;
  }
  bool any_whole = false;
  for (const auto &w : whole)
    for (int c : w) any_whole = any_whole || c == 0;
  assert_true(any_whole);
  RankOrderer ro(ix);
  std::vector<int> set, out;
  for (int g = 0; g < 4; ++g)
    for (int k = 0; k < 6; ++k) set.push_back(ix.leaf_group_hosts(g)[size_t(k)]);
  ro.order(set, L(8, 6, 4), out);
  const Packing &pk = ro.packing();
  size_t node = 0;
  int entries = 0;
  for (uint32_t seg = 0; seg < pk.segments(); ++seg)
    for (uint32_t q = pk.begin[seg]; q < pk.begin[seg + 1]; ++q) {
      const int e = out[node];
      const int g = ix.host_leaf_group(e);
      const bool held_class_exists = std::count(whole[size_t(g)].begin(), whole[size_t(g)].end(), 0) > 0;
      if (pk.begin[seg + 1] - pk.begin[seg] > 1) {
        ++entries;
        if (held_class_exists) assert_int_equal(whole[size_t(g)][ix.host_uplink_mod(e)], 0);
      }
      node += pk.parts[q].count;
    }
  assert_int_equal(entries, 4);
}

// A leaf holding two split parts of one job, where the job holds one entry class of that leaf
// whole and only two hosts of it: the two parts enter by different classes. Entering both by the
// held class (held classes ranked before the job's own load) put two ring edges of the job on one
// cable: every edge of a ring all-reduce runs at once, so both would get half of it, for sure.
// Leaf 1's hosts come down cable (host position / 2) (two hosts per class, the tables say so);
// the job has 2 hosts on leaf 0, 5 on leaf 1 (both of class 0, one each of classes 1, 2, 3) and 2
// on leaf 2; rings of 3 (tp=8 pp=3 dp=3): one whole ring on leaf 1, then leaf 0's 2 + one of leaf
// 1's and one of leaf 1's + leaf 2's 2.
void test_split_entries_own_load_before_held(void **) {
  Topology t = fat_tree_4x8();
  enginetest::add_test_routes(t, 3, false, [](size_t h, size_t) { return (h % 8) / 2; });
  TopoIndex ix(t);
  std::vector<int> set;
  for (int k : {0, 2}) set.push_back(ix.leaf_group_hosts(0)[size_t(k)]);
  for (int k : {0, 1, 2, 4, 6}) set.push_back(ix.leaf_group_hosts(1)[size_t(k)]);
  for (int k : {0, 2}) set.push_back(ix.leaf_group_hosts(2)[size_t(k)]);
  for (int k = 0; k < 8; ++k)
    assert_int_equal(ix.host_uplink_mod(ix.leaf_group_hosts(1)[size_t(k)]), uint32_t(k / 2));
  RankOrderer ro(ix);
  std::vector<int> out;
  ro.order(set, L(8, 3, 3), out);
  const Packing &pk = ro.packing();
  std::vector<uint32_t> leaf1_entries;  // classes of the split parts' entry hosts on leaf 1
  size_t node = 0;
  for (uint32_t seg = 0; seg < pk.segments(); ++seg)
    for (uint32_t q = pk.begin[seg]; q < pk.begin[seg + 1]; ++q) {
      if (pk.begin[seg + 1] - pk.begin[seg] > 1 && ix.host_leaf_group(out[node]) == 1)
        leaf1_entries.push_back(ix.host_uplink_mod(out[node]));
      node += pk.parts[q].count;
    }
  assert_int_equal(leaf1_entries.size(), 2);
  assert_int_not_equal(leaf1_entries[0], leaf1_entries[1]);
}

// EP groups (fixed pp, edp; all tp ranks together) whose ranks lie in more than one leaf group,
// for nodes in rank order.
int split_ep_groups(const TopoIndex &ix, const std::vector<int> &order, const Layout &l) {
  const uint32_t G = uint32_t(l.world() / order.size());
  std::map<std::pair<uint32_t, uint32_t>, std::vector<int>> lgs;
  for (uint32_t r = 0; r < l.world(); ++r) {
    const RankCoord c = rank_coord(l, r);
    lgs[{c.pp, c.edp}].push_back(ix.host_leaf_group(order[r / G]));
  }
  int split = 0;
  for (auto &[k, v] : lgs) split += std::count(v.begin(), v.end(), v.front()) != std::ptrdiff_t(v.size());
  return split;
}

void test_ep_unit(void **) {
  // Megatron's order: a group is tp*ep consecutive ranks.
  assert_int_equal(ep_unit_nodes(L(8, 2, 8, 1, 4), 8), 4);
  assert_int_equal(ep_unit_nodes(L(4, 1, 8, 1, 4), 8), 2);
  assert_int_equal(ep_unit_nodes(L(2, 1, 8, 1, 2), 8), 1);  // 4 GPUs: inside a node
  assert_int_equal(ep_unit_nodes(L(8, 1, 4, 2, 8), 8), 8);  // cp folds into q: ep consecutive q
  assert_int_equal(ep_unit_nodes(L(8, 1, 8), 8), 1);        // ep = 1
  // tp-pp-dp: ep dividing cp stays inside one (pp, dp); else ep / gcd(ep, cp) whole PP chains.
  assert_int_equal(ep_unit_nodes(L(8, 2, 8, 4, 2, RankOrder::TpPpDp), 8), 2);
  assert_int_equal(ep_unit_nodes(L(8, 2, 8, 1, 2, RankOrder::TpPpDp), 8), 4);
  assert_int_equal(ep_unit_nodes(L(8, 2, 8, 2, 4, RankOrder::TpPpDp), 8), 8);
  assert_int_equal(job_geometry(L(8, 2, 8, 1, 4), 16).ep_unit_nodes, 4);
  // The unit holds whole groups: no group of any rank straddles a unit boundary.
  for (const Layout &l : {L(8, 2, 8, 1, 4), L(4, 2, 8, 1, 4), L(8, 2, 8, 1, 2, RankOrder::TpPpDp),
                          L(8, 2, 8, 2, 4, RankOrder::TpPpDp), L(8, 2, 4, 4, 2, RankOrder::TpPpDp)}) {
    const uint32_t G = 8, u = ep_unit_nodes(l, G);
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> unit_of;  // (pp, edp) -> unit index, per tp
    for (uint32_t r = 0; r < l.world(); ++r) {
      const RankCoord c = rank_coord(l, r);
      const auto [it, fresh] = unit_of.insert({{c.pp, c.edp * l.tp + c.tp}, r / G / u});
      assert_true(fresh || it->second == r / G / u);
    }
  }
}

void test_ep_groups_kept_in_leaf_groups(void **) {
  const Topology t = enginetest::make_topology(1, 3, 8);  // one pod, 3 groups of 8
  TopoIndex ix(t);
  // One ring of 8 nodes (pp=1) over groups holding 2, 4 and 2 of them. In canonical order the
  // boundaries fall after 2 and 6 nodes: both EP groups of 4 nodes are split. With the group of 4
  // first, the first EP group is whole in one leaf group; the two pairs make the second.
  const Names set = {"n0017", "n0001", "n0010", "n0002", "n0009", "n0018", "n0011", "n0012"};
  Names got = order_node_names(ix, set, L(8, 1, 8));
  assert_names(got, {"n0001", "n0002", "n0009", "n0010", "n0011", "n0012", "n0017", "n0018"});
  got = order_node_names(ix, set, L(8, 1, 8, 1, 4));
  assert_names(got, {"n0009", "n0010", "n0011", "n0012", "n0001", "n0002", "n0017", "n0018"});
  // ep = 2: units of 2 nodes, every part a multiple: canonical order cuts none, nothing changes.
  got = order_node_names(ix, set, L(8, 1, 8, 1, 2));
  assert_names(got, {"n0001", "n0002", "n0009", "n0010", "n0011", "n0012", "n0017", "n0018"});
  // Parts of 1, 4 and 3 nodes: canonical order cuts both groups (after 1 and 5 nodes); the whole
  // group first, then 1 + 3, cuts only the second.
  const Names set2 = {"n0001", "n0009", "n0010", "n0011", "n0012", "n0017", "n0018", "n0019"};
  std::vector<int> hosts, a, b;
  for (const std::string &n : set2) hosts.push_back(ix.find_host(n));
  RankOrderer ro(ix);
  ro.order(hosts, L(8, 1, 8), a);
  ro.order(hosts, L(8, 1, 8, 1, 4), b);
  assert_int_equal(split_ep_groups(ix, a, L(8, 1, 8, 1, 4)), 2);
  assert_int_equal(split_ep_groups(ix, b, L(8, 1, 8, 1, 4)), 1);
}

void test_ep_alignment_keeps_segments(void **) {
  // Random node sets and MoE layouts: the same leaf groups per segment as without ep (only the
  // parts' order inside a segment moves), never more split EP groups, and SPANK's order (from the
  // set in any order) equals the placer's (order_placed from the pieces and packing).
  const Topology t = enginetest::make_topology(2, 4, 8);
  TopoIndex ix(t);
  std::mt19937 rng(11);
  int fewer = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const uint32_t pp = 1u << (rng() % 3), ep = 2u << (rng() % 3);
    const uint32_t dp = ep * (1 + rng() % std::max<uint32_t>(1, 48 / (pp * ep)));
    const uint32_t tp = rng() % 3 ? 8 : 4, gpn = 8, nodes = tp * pp * dp / gpn;
    if (nodes == 0 || nodes > 64) continue;
    std::vector<int> all(64);
    for (int i = 0; i < 64; ++i) all[size_t(i)] = i;
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<int> set(all.begin(), all.begin() + nodes);
    const Layout moe = L(tp, pp, dp, 1, ep), dense = L(tp, pp, dp);
    RankOrderer ro(ix);
    std::vector<int> a, b, c;
    ro.order(set, dense, a);
    ro.order(set, moe, b);
    const uint32_t seg = job_geometry(moe, nodes).segment_nodes;
    for (uint32_t s = 0; s < nodes; s += seg) {
      std::vector<int> ga, gb;
      for (uint32_t k = s; k < s + seg; ++k) ga.push_back(ix.host_leaf_group(a[k])), gb.push_back(ix.host_leaf_group(b[k]));
      std::sort(ga.begin(), ga.end());
      std::sort(gb.begin(), gb.end());
      assert_true(ga == gb);
    }
    const int sa = split_ep_groups(ix, a, moe), sb = split_ep_groups(ix, b, moe);
    assert_true(sb <= sa);
    fewer += sb < sa;
    std::vector<int> sorted = set;
    std::sort(sorted.begin(), sorted.end(), [&ix](int x, int y) { return ix.canonical_rank(x) < ix.canonical_rank(y); });
    std::vector<Piece> pieces = ro.pieces();
    Packing packing;
    pack_segments(pieces, seg, packing, *std::make_unique<PackScratch>());
    ro.order_placed(sorted.data(), sorted.size(), moe, pieces, packing, c);
    assert_true(b == c);
  }
  assert_true(fewer > 0);  // the rule changes something on these sets
}

// A 3-level fat tree with forwarding tables as OpenSM's minhop engine computes them: host LIDs in
// a seeded random order (a subnet manager's discovery order), then the switches'; for each
// destination every switch takes the port on a shortest path to it that carries the fewest LIDs so
// far (the lowest on a tie). 4 pods of 4 leaves x 8 hosts, 4 uplinks per leaf (2 cables to each of
// its pod's 2 spines), each spine 2 cables to the 4 cores: paths between pods go leaf -> spine ->
// core -> spine -> leaf, and the leaf-to-spine and spine-to-core cables they take are picked per
// destination LID, which no entry class names.
Topology fat_tree_3level_minhop(uint32_t seed) {
  FatTreeSpec s;
  s.levels = 3;
  s.leaves = 16;
  s.hosts_per_leaf = 8;
  s.uplinks_per_leaf = 4;
  s.spines = 2;
  s.leaves_per_pod = 4;
  s.cores = 4;
  s.core_uplinks_per_spine = 4;
  Topology t = classify(generate_fat_tree(s), ClassifyOptions{});
  const size_t ns = t.switches.size();
  std::vector<std::vector<std::pair<int, int>>> adj(ns);  // (port, neighbour switch)
  for (const Link &l : t.links)
    for (const auto &[pa, pb] : l.ports) {
      const int a = t.switch_index(l.a), b = t.switch_index(l.b);
      if (a < 0 || b < 0) continue;
      adj[size_t(a)].emplace_back(pa, b);
      adj[size_t(b)].emplace_back(pb, a);
    }
  std::vector<std::pair<int, int>> ports;  // (host, port index) in LID order
  for (size_t h = 0; h < t.hosts.size(); ++h)
    for (size_t p = 0; p < t.hosts[h].ports.size(); ++p) ports.emplace_back(int(h), int(p));
  std::mt19937 rng(seed);
  std::shuffle(ports.begin(), ports.end(), rng);
  const size_t nlids = ports.size() + ns + 1;
  Subnet sn;
  for (size_t i = 0; i < ns; ++i)
    sn.switches.push_back({t.switches[i].guid, uint16_t(ports.size() + i + 1), std::vector<uint8_t>(nlids, kNoRoute)});
  std::map<std::pair<int, int>, int> load;  // (switch, port) -> LIDs routed out of it
  const auto route = [&](int target, size_t lid, int last_port) {
    std::vector<int> dist(ns, -1);
    std::vector<int> queue{target};
    dist[size_t(target)] = 0;
    for (size_t i = 0; i < queue.size(); ++i)
      for (const auto &[port, v] : adj[size_t(queue[i])])
        if (dist[size_t(v)] < 0) dist[size_t(v)] = dist[size_t(queue[i])] + 1, queue.push_back(v);
    for (size_t u = 0; u < ns; ++u) {
      if (int(u) == target) {
        sn.switches[u].out[lid] = uint8_t(last_port);
        continue;
      }
      int best = -1;
      for (const auto &[port, v] : adj[u])
        if (dist[u] > 0 && dist[size_t(v)] == dist[u] - 1 &&
            (best < 0 || load[{int(u), port}] < load[{int(u), best}] ||
             (load[{int(u), port}] == load[{int(u), best}] && port < best)))
          best = port;
      if (best < 0) continue;
      ++load[{int(u), best}];
      sn.switches[u].out[lid] = uint8_t(best);
    }
  };
  for (size_t i = 0; i < ports.size(); ++i) {
    const HcaPort &hp = t.hosts[size_t(ports[i].first)].ports[size_t(ports[i].second)];
    sn.ports.push_back(PortLid{hp.ca_guid, hp.port, uint16_t(i + 1), 0});
    route(hp.sw, i + 1, hp.sw_port);
  }
  for (size_t i = 0; i < ns; ++i) route(int(i), ports.size() + i + 1, 0);
  t.routes.subnets.push_back(std::move(sn));
  t.routes.canonicalize();
  return t;
}

// The ring edges of the job (in `out`'s rank order) between split parts on each
// switch-to-switch cable, traced hop by hop through the tables with RouteTracer (the
// edges inside a leaf group cross no such cable). The edge into a part leaves the part before it
// in its ring (the last part's for the first) from that part's last host.
std::map<std::pair<int, int>, int> edges_per_cable(const TopoIndex &ix, const RankOrderer &ro, const std::vector<int> &out) {
  const Topology &t = ix.topology();
  const RouteTracer tracer(t);
  const Packing &pk = ro.packing();
  std::vector<size_t> first(pk.parts.size() + 1, 0);
  for (size_t q = 0; q < pk.parts.size(); ++q) first[q + 1] = first[q] + pk.parts[q].count;
  std::map<std::pair<int, int>, int> on;  // (switch, egress port) -> the job's edges
  for (uint32_t seg = 0; seg < pk.segments(); ++seg) {
    if (pk.begin[seg + 1] - pk.begin[seg] < 2) continue;
    for (uint32_t q = pk.begin[seg]; q < pk.begin[seg + 1]; ++q) {
      const uint32_t pred = q == pk.begin[seg] ? pk.begin[seg + 1] - 1 : q - 1;
      const TracedRoute r = tracer.trace(out[first[pred + 1] - 1], 0, out[first[q]], 0);
      assert_true(r.ok());
      for (size_t i = 0; i + 1 < r.hops.size(); ++i)  // the last hop's cable goes down to the host
        ++on[{r.hops[i].sw, r.hops[i].out_port}];
    }
  }
  return on;
}

int max_own_edges_per_cable(const TopoIndex &ix, const RankOrderer &ro, const std::vector<int> &out) {
  int most = 0;
  for (const auto &[cable, n] : edges_per_cable(ix, ro, out)) most = std::max(most, n);
  return most;
}

// On a 3-level tree the ring edges between parts in different pods cross leaf-to-spine,
// spine-to-core and core-to-spine cables as the tables say; no two of a job's own edges (all busy
// at once in an all-reduce, so two on one cable halve each other) may share one while the pieces
// have hosts whose paths avoid it. Counting only the entry leaf's cables (and the predecessor's
// cable to the same upper switch, which an edge from another pod never takes) left them on
// shared cables. Jobs: 4 to 7 hosts on each of 12 random leaves of the 16, rings of 3 to 5 nodes
// (remainders of one leaf combined with other leaves' across pods).
void test_split_entries_3level_paths(void **) {
  const Topology t = fat_tree_3level_minhop(5);
  TopoIndex ix(t);
  assert_true(ix.has_entry_classes());
  assert_true(ix.has_paths());
  assert_int_equal(ix.pod_count(), 4);
  std::mt19937 rng(11);
  int collided = 0, jobs = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<int> lgs(16);
    std::iota(lgs.begin(), lgs.end(), 0);
    std::shuffle(lgs.begin(), lgs.end(), rng);
    std::vector<int> set;
    for (int k = 0; k < 12; ++k) {
      std::vector<int> hosts = ix.leaf_group_hosts(lgs[size_t(k)]);
      std::shuffle(hosts.begin(), hosts.end(), rng);
      const int take = 4 + int(rng() % 4);
      set.insert(set.end(), hosts.begin(), hosts.begin() + take);
    }
    uint32_t dp = 3 + uint32_t(rng() % 3);
    while (set.size() % dp) set.pop_back();
    RankOrderer ro(ix);
    std::vector<int> out;
    ro.order(set, L(8, uint32_t(set.size()) / dp, dp), out);
    ++jobs;
    collided += max_own_edges_per_cable(ix, ro, out) > 1;
  }
  assert_int_equal(jobs, 40);
  // One part at a time, an earlier choice can leave a later part no free path: 1 of the 40 jobs
  // keeps a shared cable (counting only the entry leaf's cables left 12).
  assert_true(collided <= 1);
}

// Given the ring edges other jobs already put on each cable (set_neighbour_edges), a split part's
// entry is chosen where its traced path meets the fewest of them, after the job's own edges: two
// jobs' rings on one cable halve each other whenever both communicate at once. On the 3-level
// tree, pairs of jobs on the same leaves (disjoint hosts): the second job's edges share fewer
// cables with the first's than when it is ordered alone, its own edges never share more, and an
// empty neighbour count changes no order.
void test_split_entries_neighbour_edges(void **) {
  const Topology t = fat_tree_3level_minhop(5);
  TopoIndex ix(t);
  std::mt19937 rng(23);
  int shared_alone = 0, shared_counted = 0, own_alone = 0, own_counted = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<int> lgs(16);
    std::iota(lgs.begin(), lgs.end(), 0);
    std::shuffle(lgs.begin(), lgs.end(), rng);
    std::vector<int> a, b;
    for (int k = 0; k < 10; ++k) {
      std::vector<int> hosts = ix.leaf_group_hosts(lgs[size_t(k)]);
      std::shuffle(hosts.begin(), hosts.end(), rng);
      const size_t ta = 2 + rng() % 3, tb = 2 + rng() % 3;
      a.insert(a.end(), hosts.begin(), hosts.begin() + long(ta));
      b.insert(b.end(), hosts.begin() + long(ta), hosts.begin() + long(ta + tb));
    }
    const uint32_t dpa = 3 + uint32_t(rng() % 3), dpb = 3 + uint32_t(rng() % 3);
    while (a.size() % dpa) a.pop_back();
    while (b.size() % dpb) b.pop_back();
    const Layout la = L(8, uint32_t(a.size()) / dpa, dpa), lb = L(8, uint32_t(b.size()) / dpb, dpb);
    RankOrderer ro(ix);
    std::vector<uint32_t> none, neighbours;
    std::vector<int> oa, oa_none, ob_alone, ob_counted;
    ro.order(a, la, oa);
    ro.set_neighbour_edges(&none);  // nothing counted yet: the same order as without
    ro.order(a, la, oa_none);
    assert_true(oa == oa_none);
    ro.set_neighbour_edges(&neighbours);
    ro.order(a, la, oa);
    const auto ea = edges_per_cable(ix, ro, oa);
    ro.set_neighbour_edges(nullptr);
    ro.order(b, lb, ob_alone);
    const auto e_alone = edges_per_cable(ix, ro, ob_alone);
    own_alone += max_own_edges_per_cable(ix, ro, ob_alone) > 1;
    ro.set_neighbour_edges(&neighbours);
    ro.order(b, lb, ob_counted);
    const auto e_counted = edges_per_cable(ix, ro, ob_counted);
    own_counted += max_own_edges_per_cable(ix, ro, ob_counted) > 1;
    for (const auto &[cable, n] : e_alone) shared_alone += ea.count(cable) ? n : 0;
    for (const auto &[cable, n] : e_counted) shared_counted += ea.count(cable) ? n : 0;
  }
  assert_true(own_counted <= own_alone);
  assert_true(shared_alone > 0);
  assert_true(shared_counted < shared_alone);
  print_message("second job's edges on the first's cables: %d alone, %d counting them\n", shared_alone, shared_counted);
}

// RingEdgeBook, as a scheduler uses it: jobs begin (ordered counting the running jobs' edges) and
// end in a random sequence. After every step the booked counts equal those of a book rebuilt from
// the running jobs' orders as placed (ring_entry_cables: what a restarted scheduler does); every job
// ended leaves no count behind; a failed order books nothing. On the 3-level tree (minhop tables)
// and on a 2-level tree with LIDs in a random order.
void check_ring_edge_book(const Topology &t, uint32_t seed) {
  TopoIndex ix(t);
  assert_true(ix.has_paths());
  std::mt19937 rng(seed);
  RingEdgeBook book(ix);
  struct Job {
    uint32_t id;
    std::vector<int> order;
    Layout layout;
  };
  std::vector<Job> running;
  std::vector<char> busy(size_t(ix.host_count()), 0);
  uint64_t most_edges = 0;
  uint32_t next_id = 1;
  const auto check = [&] {
    RingEdgeBook rebuilt(ix);
    for (const Job &j : running) rebuilt.add_placed(j.id, j.order, j.layout);
    std::vector<uint32_t> a = book.counts(), b = rebuilt.counts();
    a.resize(ix.cable_count(), 0);
    b.resize(ix.cable_count(), 0);
    assert_true(a == b);
    assert_int_equal(book.edges(), rebuilt.edges());
    assert_int_equal(book.jobs(), rebuilt.jobs());
    most_edges = std::max(most_edges, book.edges());
  };
  for (int step = 0; step < 120; ++step) {
    if (!running.empty() && rng() % 3 == 0) {  // an end
      const size_t k = rng() % running.size();
      for (int h : running[k].order) busy[size_t(h)] = 0;
      book.remove(running[k].id);
      running.erase(running.begin() + long(k));
      check();
      continue;
    }
    std::vector<int> lgs(size_t(ix.leaf_group_count()));
    std::iota(lgs.begin(), lgs.end(), 0);
    std::shuffle(lgs.begin(), lgs.end(), rng);
    std::vector<int> set;
    for (size_t k = 0; k < lgs.size() && k < 2 + rng() % 6; ++k) {
      std::vector<int> free_hosts;
      for (int h : ix.leaf_group_hosts(lgs[k]))
        if (!busy[size_t(h)]) free_hosts.push_back(h);
      std::shuffle(free_hosts.begin(), free_hosts.end(), rng);
      const size_t take = std::min(free_hosts.size(), size_t(1 + rng() % 4));
      set.insert(set.end(), free_hosts.begin(), free_hosts.begin() + long(take));
    }
    const uint32_t dp = 2 + uint32_t(rng() % 3);
    while (set.size() % dp) set.pop_back();
    if (set.empty()) continue;
    Job j{next_id++, {}, L(8, uint32_t(set.size()) / dp, dp)};
    if (set.size() > 1 && rng() % 10 == 0) {  // a host listed twice: refused, nothing booked
      const uint64_t before = book.edges();
      std::vector<int> twice = set, out;
      twice.back() = twice.front();
      bool thrown = false;
      try {
        book.order(j.id, twice, j.layout, out);
      } catch (const LayoutError &) {
        thrown = true;
      }
      assert_true(thrown);
      assert_int_equal(book.edges(), before);
      check();
      continue;
    }
    book.order(j.id, set, j.layout, j.order);
    for (int h : j.order) busy[size_t(h)] = 1;
    running.push_back(std::move(j));
    check();
  }
  assert_true(most_edges > 20);  // the jobs did cross leaf groups on traced paths
  while (!running.empty()) {
    book.remove(running.back().id);
    running.pop_back();
    check();
  }
  assert_int_equal(book.edges(), 0);
  assert_int_equal(book.jobs(), 0);
  for (uint32_t c : book.counts()) assert_int_equal(c, 0);
}

void test_ring_edge_book(void **) {
  check_ring_edge_book(fat_tree_3level_minhop(5), 31);
  Topology t = fat_tree_4x8();
  enginetest::add_test_routes(t, 3);
  check_ring_edge_book(t, 37);
}

void test_order_independent(void **) {
  const Topology t = enginetest::make_topology(2, 4, 8);
  TopoIndex ix(t);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<int> all(64);
    for (int i = 0; i < 64; ++i) all[size_t(i)] = i;
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<int> set(all.begin(), all.begin() + 16);
    RankOrderer ro(ix);
    std::vector<int> a, b;
    ro.order(set, L(8, 4, 4), a);
    std::shuffle(set.begin(), set.end(), rng);
    ro.order(set, L(8, 4, 4), b);
    assert_true(a == b);
    std::vector<int> sa = a, ss = set;
    std::sort(sa.begin(), sa.end());
    std::sort(ss.begin(), ss.end());
    assert_true(sa == ss);  // a permutation of the set
  }
}

void test_errors(void **) {
  TopoIndex ix(pods2());
  try {
    order_node_names(ix, {"n0001", "x99"}, L(8, 1, 2));
    fail();
  } catch (const LayoutError &e) {
    assert_non_null(std::strstr(e.what(), "node x99 is not in the topology"));
  }
  try {
    order_node_names(ix, {"n0001", "n0001"}, L(8, 1, 2));
    fail();
  } catch (const LayoutError &e) {
    assert_non_null(std::strstr(e.what(), "listed twice"));
  }
  try {
    order_node_names(ix, {"n0001", "n0002", "n0003"}, L(8, 1, 2));
    fail();
  } catch (const LayoutError &e) {
    assert_non_null(std::strstr(e.what(), "do not spread evenly over 3 nodes"));
  }
  try {
    order_node_names(ix, {"n0001", "n0002"}, L(16, 1, 1));  // 8 GPUs per node
    fail();
  } catch (const LayoutError &e) {
    assert_non_null(std::strstr(e.what(), "tp=16 needs 16 GPUs"));
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_megatron_coords),  cmocka_unit_test(test_tp_pp_dp_coords),
      cmocka_unit_test(test_ep_coords),        cmocka_unit_test(test_geometry),
      cmocka_unit_test(test_two_full_rings),   cmocka_unit_test(test_remainders_combined),
      cmocka_unit_test(test_cross_pod),        cmocka_unit_test(test_tp_pp_dp_chain),
      cmocka_unit_test(test_segment_larger_than_leaf_group), cmocka_unit_test(test_rail_groups),
      cmocka_unit_test(test_order_independent), cmocka_unit_test(test_errors),
      cmocka_unit_test(test_ep_unit), cmocka_unit_test(test_ep_groups_kept_in_leaf_groups),
      cmocka_unit_test(test_ep_alignment_keeps_segments),
      cmocka_unit_test(test_entry_classes_from_routes),
      cmocka_unit_test(test_split_entries_staggered),
      cmocka_unit_test(test_split_entries_canonical_without_routes),
      cmocka_unit_test(test_split_entries_multi_nic_stride),
      cmocka_unit_test(test_split_entries_interleaved_nics),
      cmocka_unit_test(test_split_entries_by_held_classes),
      cmocka_unit_test(test_split_entries_own_load_before_held),
      cmocka_unit_test(test_split_entries_3level_paths),
      cmocka_unit_test(test_split_entries_neighbour_edges),
      cmocka_unit_test(test_ring_edge_book),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
