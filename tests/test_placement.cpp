// SPDX-License-Identifier: GPL-2.0-or-later
// Placement engine: hand-made cases (the 5/5/3 case of docs/design.md, best fit, pods, strict vs
// prefer), Slurm bitmap input, and a seeded randomized property test of the invariants.
#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cmocka_cxx.hpp"
#include "engine_topologies.hpp"
#include "placement.hpp"

using namespace topoaware;

namespace {

Layout L(uint32_t tp, uint32_t pp, uint32_t dp) {
  Layout l;
  l.tp = tp; l.pp = pp; l.dp = dp;
  return l;
}

Job J(uint32_t tp, uint32_t pp, uint32_t dp, uint32_t gpn = 8) {
  Job j;
  j.layout = L(tp, pp, dp);
  j.gpus_per_node = gpn;
  j.nodes = uint32_t(j.layout.world() / gpn);
  return j;
}

struct Free {
  std::vector<int> hosts;
  std::vector<uint32_t> gpus;
  void add(int first, int count, uint32_t g = 8) {
    for (int h = first; h < first + count; ++h) {
      hosts.push_back(h);
      gpus.push_back(g);
    }
  }
};

std::vector<int> range(int first, int count) {
  std::vector<int> v;
  for (int h = first; h < first + count; ++h) v.push_back(h);
  return v;
}

// 8 leaves x 8 hosts, 2-level, as in docs/design.md, "Stock Slurm on a fragmented fabric".
const Topology &tree64() {
  static const Topology t = enginetest::make_topology(0, 8, 8);
  return t;
}

void test_five_five_three(void **) {
  TopoIndex ix(tree64());
  Placer pl(ix);
  Free f;
  f.add(0, 5);   // leaf 0: n0001-5
  f.add(8, 5);   // leaf 1: n0009-13
  f.add(16, 3);  // leaf 2: n0017-19
  PlaceResult r;
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 2, 4), PlaceMode::Strict, r) ==
              PlaceStatus::Ideal);
  // 4 + 4, each DP ring inside one leaf (Slurm's best fit takes 5 + 3)
  std::vector<int> want = range(0, 4);
  for (int h : range(8, 4)) want.push_back(h);
  assert_true(r.nodes == want);
  assert_int_equal(r.quality.segment_excess, 0);
  assert_int_equal(r.quality.leaf_groups, 2);
  assert_int_equal(r.candidates, 13);
  // prefer mode: Slurm's 5 + 3 (both leaves used up, no hole left; one ring split)
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 2, 4), PlaceMode::Prefer, r) ==
              PlaceStatus::Fallback);
  std::vector<int> got = r.nodes;
  std::sort(got.begin(), got.end());
  std::vector<int> slurm = range(0, 5);
  for (int h : range(16, 3)) slurm.push_back(h);
  assert_true(got == slurm);
  assert_int_equal(r.quality.holes, 0);
}

void test_strict_refuses_fragments_prefer_takes_best(void **) {
  TopoIndex ix(tree64());
  Placer pl(ix);
  Free f;
  for (int leaf = 0; leaf < 8; ++leaf) f.add(leaf * 8, 3);  // 3 free on every leaf
  PlaceResult strict, prefer;
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 2, 4), PlaceMode::Strict, strict) ==
              PlaceStatus::NoBlock);
  assert_int_equal(strict.nodes.size(), 8);  // the best fallback is still given
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 2, 4), PlaceMode::Prefer, prefer) ==
              PlaceStatus::Fallback);
  assert_true(strict.nodes == prefer.nodes);
  // best fragmented: each ring of 4 on 2 leaves (3 + 1), not more: excess 1 per ring
  assert_int_equal(prefer.quality.segment_excess, 2);
  assert_int_equal(prefer.quality.split_segments, 2);
}

void test_best_fit_keeps_free_leaf(void **) {
  TopoIndex ix(tree64());
  Placer pl(ix);
  Free f;
  f.add(0, 8);   // leaf 0 entirely free
  f.add(12, 4);  // leaf 1 half used: n0013-16 free
  PlaceResult r;
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 1, 4), PlaceMode::Strict, r) ==
              PlaceStatus::Ideal);
  assert_true(r.nodes == range(12, 4));  // the broken leaf is used, the whole one stays free
  // 8 nodes in rings of 4: the whole leaf holds both; breaking it plus leaf 1 would use two
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 2, 4), PlaceMode::Strict, r) ==
              PlaceStatus::Ideal);
  assert_true(r.nodes == range(0, 8));
}

void test_partial_groups_first(void **) {
  TopoIndex ix(tree64());
  Placer pl(ix);
  Free f;
  f.add(0, 8);   // whole leaf 0
  f.add(12, 4);  // leaf 1: 4 free
  f.add(20, 4);  // leaf 2: 4 free
  PlaceResult r;
  // a ring of 4 fits a broken leaf: it goes there (tightest), leaf 0 stays whole
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 1, 4), PlaceMode::Prefer, r) ==
              PlaceStatus::Ideal);
  assert_true(r.nodes == range(12, 4));
  assert_int_equal(r.quality.fresh_groups, 0);
  // two rings of 4 (pp=2): the two broken leaves would keep each DP ring whole but split every PP
  // chain over two leaf groups; the whole leaf holds the job on its ideal single leaf group.
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 2, 4), PlaceMode::Strict, r) ==
              PlaceStatus::Ideal);
  assert_true(r.nodes == range(0, 8));
  assert_int_equal(r.quality.leaf_groups, 1);
  // a ring of 8 with no leaf holding it (5, 3, 7 free): Slurm-style best fit on two leaf groups,
  // all 7 of the largest, then 1 from the tightest (the 3), in prefer mode
  Free g;
  g.add(0, 5);
  g.add(8, 3);
  g.add(16, 7);
  assert_true(pl.place(g.hosts.data(), g.gpus.data(), g.hosts.size(), J(8, 1, 8), PlaceMode::Prefer, r) ==
              PlaceStatus::Fallback);
  assert_int_equal(r.quality.leaf_groups, 2);
  assert_int_equal(r.quality.holes, 1);
}

void test_gpus_per_node(void **) {
  TopoIndex ix(tree64());
  Placer pl(ix);
  Free f;
  f.add(0, 4, 4);  // n0001-4 have only 4 GPUs free
  f.add(4, 4, 8);
  f.add(8, 4, 8);
  PlaceResult r;
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 1, 4), PlaceMode::Prefer, r) ==
              PlaceStatus::Ideal);
  assert_true(r.nodes == range(4, 4));
  assert_int_equal(r.candidates, 8);
  // a job of 4 GPUs per node prefers, inside a leaf group, the nodes with 4 free (best fit on GPUs)
  Free one;
  one.add(0, 4, 4);
  one.add(4, 4, 8);
  assert_true(pl.place(one.hosts.data(), one.gpus.data(), one.hosts.size(), J(4, 1, 4, 4), PlaceMode::Prefer, r) ==
              PlaceStatus::Ideal);
  assert_true(r.nodes == range(0, 4));
  // not enough nodes with 8 GPUs free
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 1, 12), PlaceMode::Prefer, r) ==
              PlaceStatus::NoNodes);
  assert_true(r.nodes.empty());
}

void test_bad_job(void **) {
  TopoIndex ix(tree64());
  Placer pl(ix);
  Free f;
  f.add(0, 8);
  PlaceResult r;
  Job j = J(8, 1, 4);
  j.gpus_per_node = 4;  // 32 GPUs on 4 nodes is 8 per node
  try {
    pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), j, PlaceMode::Prefer, r);
    fail();
  } catch (const LayoutError &e) {
    assert_non_null(std::strstr(e.what(), "but the job asks for 4"));
  }
}

void test_pods(void **) {
  const Topology t = enginetest::make_topology(2, 4, 4);  // 2 pods x 4 groups x 4 hosts
  TopoIndex ix(t);
  Placer pl(ix);
  Free f;
  f.add(0, 12);   // pod 0: 3 groups free
  f.add(16, 16);  // pod 1: all free
  PlaceResult r;
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 2, 4), PlaceMode::Strict, r) ==
              PlaceStatus::Ideal);
  for (int h : r.nodes) assert_int_equal(ix.host_pod(h), 0);  // the smallest sufficient pod
  assert_int_equal(r.quality.pods, 1);
  // 24 nodes cannot fit one pod (16 hosts): two pods are ideal
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 6, 4), PlaceMode::Strict, r) ==
              PlaceStatus::Ideal);
  assert_int_equal(r.quality.pods, 2);
  assert_int_equal(r.quality.ideal_pods, 2);
  // 8 nodes with only 4 free per pod: rings whole, but two pods where one would do
  Free g;
  g.add(0, 4);
  g.add(16, 4);
  assert_true(pl.place(g.hosts.data(), g.gpus.data(), g.hosts.size(), J(8, 2, 4), PlaceMode::Strict, r) ==
              PlaceStatus::NoBlock);
  assert_int_equal(r.quality.segment_excess, 0);
  assert_int_equal(r.quality.pods, 2);
}

void test_rail_units(void **) {
  const Topology t = enginetest::make_topology(0, 4, 8, 8);  // 4 scalable units x 8 hosts, 8 rails
  TopoIndex ix(t);
  Placer pl(ix);
  Free f;
  f.add(0, 6);
  f.add(8, 8);
  PlaceResult r;
  assert_true(pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 1, 4), PlaceMode::Strict, r) ==
              PlaceStatus::Ideal);
  assert_true(r.nodes == range(0, 4));
}

// 4 leaves x 4 hosts under 2 spines (4 cables of 4xHDR up from every leaf); `bad` >= 0: that
// leaf's cables trained down to 2x, half its uplink bandwidth.
Topology spined(int bad) {
  Topology t = enginetest::make_topology(0, 4, 4);
  enginetest::add_spines(t, 2, 2);
  if (bad >= 0) enginetest::degrade_leaf(t, bad, 2);
  return t;
}

std::vector<int> sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

void test_degraded_leaf_avoided(void **) {
  const Topology nominal = spined(-1), bad0 = spined(0), bad2 = spined(2);
  TopoIndex nix(nominal), ix0(bad0), ix2(bad2);
  Free all;
  all.add(0, 16);
  PlaceResult r;
  // 8 nodes (one DP ring of 8): two whole leaves. Healthy fabric: leaves 0 and 1; leaf 0 at half
  // its uplinks: the healthy pair 1 and 2, just as ideal.
  Placer np(nix), p0(ix0), p2(ix2);
  for (PlaceMode m : {PlaceMode::Prefer, PlaceMode::Strict}) {
    assert_true(np.place(all.hosts.data(), all.gpus.data(), all.hosts.size(), J(8, 1, 8), m, r) == PlaceStatus::Ideal);
    assert_true(sorted(r.nodes) == range(0, 8));
    assert_true(p0.place(all.hosts.data(), all.gpus.data(), all.hosts.size(), J(8, 1, 8), m, r) == PlaceStatus::Ideal);
    assert_true(sorted(r.nodes) == range(4, 8));
    assert_true(r.quality.degraded_uplinks == 0);
    // pp=2 x dp=4 (two rings of 4 nodes): the same
    assert_true(p0.place(all.hosts.data(), all.gpus.data(), all.hosts.size(), J(8, 2, 4), m, r) == PlaceStatus::Ideal);
    assert_true(sorted(r.nodes) == range(4, 8));
  }
  // A job that fits one leaf never uses its uplinks: among equally tight leaves it takes the
  // degraded one and keeps the healthy ones for jobs that cross.
  assert_true(np.place(all.hosts.data(), all.gpus.data(), all.hosts.size(), J(8, 1, 4), PlaceMode::Prefer, r) ==
              PlaceStatus::Ideal);
  assert_true(sorted(r.nodes) == range(0, 4));
  assert_true(p2.place(all.hosts.data(), all.gpus.data(), all.hosts.size(), J(8, 1, 4), PlaceMode::Prefer, r) ==
              PlaceStatus::Ideal);
  assert_true(sorted(r.nodes) == range(8, 4));
  // Health only breaks ties: free 4, 4, 2, 2 with leaf 0 degraded still takes leaves 0 and 1
  // (the healthy alternative would touch three leaves and leave no fewer holes).
  Free f;
  f.add(0, 4);
  f.add(4, 4);
  f.add(8, 2);
  f.add(12, 2);
  assert_true(p0.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), J(8, 1, 8), PlaceMode::Prefer, r) ==
              PlaceStatus::Ideal);
  assert_true(sorted(r.nodes) == range(0, 8));
  assert_true(r.quality.degraded_uplinks > 0.99 && r.quality.degraded_uplinks < 1.01);
}

void test_slurm_bitmap(void **) {
  TopoIndex ix(tree64());
  // Slurm's node table: reverse name order plus one node unknown to the topology
  std::vector<std::string> names;
  for (int h = 63; h >= 0; --h) names.push_back(tree64().hosts[size_t(h)].name);
  names.push_back("login1");
  NodeMap map(ix, names);
  assert_int_equal(map.missing().size(), 1);
  assert_string_equal(map.missing()[0].c_str(), "login1");
  std::vector<uint64_t> words(2, 0);
  std::vector<uint16_t> gpus(names.size(), 8);
  // usable: hosts 8..15 (table indices 48..55) and login1 (64)
  for (int i = 48; i < 56; ++i) words[size_t(i / 64)] |= uint64_t(1) << (i % 64);
  words[1] |= 1;
  Placer pl(ix);
  PlaceResult r;
  assert_true(pl.place_slurm(map, words.data(), names.size(), gpus.data(), J(8, 2, 4), PlaceMode::Strict, r) ==
              PlaceStatus::Ideal);
  assert_true(r.nodes == range(8, 8));
  for (size_t i = 0; i < r.nodes.size(); ++i) assert_int_equal(r.slurm[i], 63 - r.nodes[i]);
}

// Invariants over many random free sets: never a busy node or one with too few GPUs, exactly the
// nodes asked, TP never split, deterministic and order-independent, rank order recomputable from
// the set, strict ideal whenever one leaf group alone could hold the job.
void test_random_invariants(void **) {
  const Topology t = enginetest::make_topology(4, 4, 8);  // 4 pods x 4 groups x 8 hosts = 128
  TopoIndex ix(t);
  Placer pl(ix);
  RankOrderer ro(ix);
  std::mt19937 rng(20240601);
  int ideal = 0, runs = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Free f;
    std::vector<uint32_t> free_of(128, 0);
    const double p = std::uniform_real_distribution<double>(0.2, 1.0)(rng);
    for (int h = 0; h < 128; ++h) {
      if (std::bernoulli_distribution(p)(rng)) {
        const uint32_t g = std::bernoulli_distribution(0.8)(rng) ? 8 : uint32_t(rng() % 8);
        f.hosts.push_back(h);
        f.gpus.push_back(g);
        free_of[size_t(h)] = g;
      }
    }
    const uint32_t pp = 1u << (rng() % 4), dp = 1u << (rng() % 4);
    const Job job = J(8, pp, dp);
    PlaceResult a, b;
    const PlaceMode mode = trial % 2 ? PlaceMode::Strict : PlaceMode::Prefer;
    const PlaceStatus s = pl.place(f.hosts.data(), f.gpus.data(), f.hosts.size(), job, mode, a);
    ++runs;
    uint32_t enough = 0;
    std::vector<uint32_t> per_lg(16, 0);
    for (size_t i = 0; i < f.hosts.size(); ++i)
      if (f.gpus[i] >= 8) {
        ++enough;
        ++per_lg[size_t(ix.host_leaf_group(f.hosts[i]))];
      }
    if (s == PlaceStatus::NoNodes) {
      assert_true(enough < job.nodes);
      continue;
    }
    assert_int_equal(a.nodes.size(), job.nodes);
    std::set<int> uniq(a.nodes.begin(), a.nodes.end());
    assert_int_equal(uniq.size(), job.nodes);
    for (int h : a.nodes) assert_true(free_of[size_t(h)] >= 8);
    assert_true((s == PlaceStatus::Ideal) == a.quality.ideal());
    if (mode == PlaceMode::Prefer) assert_true(s != PlaceStatus::NoBlock);
    if (mode == PlaceMode::Strict) assert_true(s != PlaceStatus::Fallback);
    // one leaf group alone holds the job: an ideal block exists and must be found
    if (*std::max_element(per_lg.begin(), per_lg.end()) >= job.nodes) assert_true(s == PlaceStatus::Ideal);
    ideal += s == PlaceStatus::Ideal;
    // same input, shuffled: same output
    std::vector<size_t> perm(f.hosts.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    Free g;
    for (size_t i : perm) {
      g.hosts.push_back(f.hosts[i]);
      g.gpus.push_back(f.gpus[i]);
    }
    assert_true(pl.place(g.hosts.data(), g.gpus.data(), g.hosts.size(), job, mode, b) == s);
    assert_true(a.nodes == b.nodes);
    // the SPANK side recomputes the same order from the set alone
    std::vector<int> set = a.nodes, again;
    std::shuffle(set.begin(), set.end(), rng);
    ro.order(set, job.layout, again);
    assert_true(again == a.nodes);
  }
  assert_true(ideal > runs / 4);  // the generator does produce both outcomes
  assert_true(ideal < runs);
}

// The ranking of placements as a function of their qualities (placement_rank).
void test_placement_rank(void **) {
  PlaceQuality base;
  base.ideal_pods = 1;
  base.ideal_leaf_groups = 2;
  base.pods = 1;
  base.leaf_groups = 2;
  // a hole left in a leaf group ranks worse than a split ring (holes come first)
  PlaceQuality hole = base, split = base;
  hole.holes = 1;
  split.segment_excess = 1;
  split.split_segments = 1;
  assert_true(placement_rank(split, false) < placement_rank(hole, false));
  // a pod above the ideal ranks worse than anything inside the ideal pods
  PlaceQuality pods = base, holes3 = base;
  pods.pods = 2;
  holes3.holes = 3;
  holes3.segment_excess = 2;
  assert_true(placement_rank(holes3, false) < placement_rank(pods, false));
  // leaf groups above ceil(N / largest group) rank before holes
  PlaceQuality wide = base;
  wide.leaf_groups = 3;
  assert_true(placement_rank(hole, false) < placement_rank(wide, false));
  // strict: an ideal placement first, even with more holes; prefer: fewer holes first
  assert_true(split.ideal() == false && hole.ideal());
  assert_true(placement_rank(hole, true) < placement_rank(split, true));
  assert_true(placement_rank(split, false) < placement_rank(hole, false));
  // degraded uplinks only break ties
  PlaceQuality healthy = base, degraded = base;
  degraded.degraded_uplinks = 1.5;
  assert_true(placement_rank(healthy, false) < placement_rank(degraded, false));
  assert_true(placement_rank(degraded, false) < placement_rank(hole, false));
  // the prefix is the (pods, leaf groups, holes) part
  assert_true(placement_rank_prefix(hole) == std::make_tuple(0u, 0u, 1u));
  assert_true(placement_rank_prefix(pods) == std::make_tuple(1u, 0u, 0u));
  assert_true(placement_rank_prefix(wide) == std::make_tuple(0u, 1u, 0u));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_five_five_three),
      cmocka_unit_test(test_strict_refuses_fragments_prefer_takes_best),
      cmocka_unit_test(test_best_fit_keeps_free_leaf),
      cmocka_unit_test(test_partial_groups_first),
      cmocka_unit_test(test_gpus_per_node),
      cmocka_unit_test(test_bad_job),
      cmocka_unit_test(test_pods),
      cmocka_unit_test(test_rail_units),
      cmocka_unit_test(test_degraded_leaf_avoided),
      cmocka_unit_test(test_slurm_bitmap),
      cmocka_unit_test(test_random_invariants),
      cmocka_unit_test(test_placement_rank),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
