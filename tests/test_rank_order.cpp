// Rank order: small cases written out by hand, Megatron's and tp-pp-dp's formulas, order
// independence, and the error paths.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cmocka_cxx.hpp"
#include "engine_topologies.hpp"
#include "generator.hpp"
#include "rank_order.hpp"

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

// The entry hosts (first host of each split part) of a job on hosts 0..held-1 of every leaf of a
// 4 x 8 fat tree with 4 uplinks per leaf.
std::vector<int> split_entries(int held, const Layout &layout) {
  FatTreeSpec s;
  s.leaves = 4;
  s.hosts_per_leaf = 8;
  s.uplinks_per_leaf = 4;
  s.spines = 2;
  const Topology t = classify(generate_fat_tree(s), ClassifyOptions{});
  TopoIndex ix(t);
  for (int g = 0; g < ix.leaf_group_count(); ++g) assert_int_equal(ix.leaf_group_uplinks(g), 4);
  std::vector<int> set;
  for (int leaf = 0; leaf < 4; ++leaf)
    for (int k = 0; k < held; ++k) set.push_back(leaf * 8 + k);
  RankOrderer ro(ix);
  std::vector<int> out;
  ro.order(set, layout, out);
  const Packing &pk = ro.packing();
  std::vector<int> entries;
  size_t node = 0;
  for (uint32_t seg = 0; seg < pk.segments(); ++seg) {
    const bool split = pk.begin[seg + 1] - pk.begin[seg] > 1;
    for (uint32_t q = pk.begin[seg]; q < pk.begin[seg + 1]; ++q) {
      const int entry = out[node];
      if (split) entries.push_back(entry);
      for (uint32_t k = 0; k < pk.parts[q].count; ++k)
        assert_int_equal(ix.host_leaf_group(out[node + k]), ix.host_leaf_group(entry));
      node += pk.parts[q].count;
    }
  }
  std::vector<int> so = out, ss = set;
  std::sort(so.begin(), so.end());
  assert_true(so == ss);
  return entries;
}

// Under D-mod-K (cable = destination index mod K) a flow into a leaf comes down the spine cable
// of its destination's residue class (h, h + 4 on 4 uplinks). Hosts 0-3 of every leaf hold no
// class whole; rings of 8 (tp=8 pp=2 dp=8) over two leaves each: the 4 split parts enter at 4
// distinct residues, not all at the same position.
void test_split_entries_staggered(void **) {
  std::vector<int> residues;
  for (int e : split_entries(4, L(8, 2, 8))) residues.push_back(e % 4);
  assert_int_equal(residues.size(), 4);
  std::sort(residues.begin(), residues.end());
  assert_true(std::unique(residues.begin(), residues.end()) == residues.end());  // 4 distinct cables
}

// Hosts 0-5 of every leaf hold classes 0 and 1 whole (hosts 0, 1, 4, 5) and 2 and 3 in part;
// rings of 4 (tp=8 pp=6 dp=4): one whole ring per leaf, the four remainders of 2 form two rings
// over two leaves each. They enter by the classes the job holds, whose cables no other job's
// flows come down.
void test_split_entries_by_held_classes(void **) {
  const std::vector<int> entries = split_entries(6, L(8, 6, 4));
  assert_int_equal(entries.size(), 4);
  for (int e : entries) assert_true(e % 4 == 0 || e % 4 == 1);
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
      cmocka_unit_test(test_split_entries_staggered),
      cmocka_unit_test(test_split_entries_by_held_classes),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
