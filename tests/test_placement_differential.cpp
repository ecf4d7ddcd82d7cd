// SPDX-License-Identifier: GPL-2.0-or-later
// The engine's decisions against the engine before its speed work (tests/placement_reference.cpp,
// the code of commit 71100c4 kept verbatim): on random fabrics, free sets, free GPUs, node tables
// and jobs, both entry points (host list and Slurm bitmap) and both modes must give the same
// status, span and nodes in the same rank order; the rank order alone too, on random node sets
// in random order. Any change of the placement rule must update the reference with it.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "cmocka_cxx.hpp"
#include "engine_topologies.hpp"
#include "placement.hpp"
#include "placement_reference.hpp"

using namespace topoaware;

namespace {

struct Fabric {
  int pods, groups, hosts, rails;
  bool uplinks;
};

// One spine above every leaf with K cables each, K varying between leaves (2..17), and forwarding
// tables over them, so that the rank order's entry choice runs (without uplinks or routes it keeps
// canonical order).
void add_uplinks(Topology &t) {
  Switch spine;
  spine.level = 2;
  spine.guid = 0x900000;
  spine.name = "spine";
  const size_t leaves = t.switches.size();
  t.switches.push_back(spine);
  for (size_t i = 0; i < leaves; ++i) {
    Link l;
    l.a = t.switches[i].guid;
    l.b = spine.guid;
    const int k = 2 + int(i * 7 % 16);
    for (int c = 0; c < k; ++c) l.ports.emplace_back(100 + c, int(i) * 32 + c);
    t.links.push_back(l);
  }
}

bool same_quality(const PlaceQuality &a, const PlaceQuality &b) {
  return a.segments == b.segments && a.segment_excess == b.segment_excess && a.split_segments == b.split_segments &&
         a.leaf_groups == b.leaf_groups && a.ideal_leaf_groups == b.ideal_leaf_groups &&
         a.fresh_groups == b.fresh_groups && a.holes == b.holes && a.pods == b.pods && a.ideal_pods == b.ideal_pods;
}

void expect_same(const PlaceResult &a, PlaceStatus sa, const PlaceResult &b, PlaceStatus sb, bool slurm,
                 const char *what, int trial) {
  const bool ok = sa == sb && a.status == b.status && a.candidates == b.candidates && a.nodes == b.nodes &&
                  same_quality(a.quality, b.quality) && (!slurm || a.slurm == b.slurm);
  if (!ok)
    fail_msg("%s, trial %d: status %s vs %s, %zu vs %zu nodes, candidates %u vs %u", what, trial,
             place_status_name(sa), place_status_name(sb), a.nodes.size(), b.nodes.size(), a.candidates,
             b.candidates);
}

// A job of 1..max_nodes nodes: tp 8 on 8 GPUs (whole nodes) or tp 2/4 with several TP groups per
// node (so that nodes with more free GPUs than needed compete), pp and dp powers of two, both
// rank orders.
Job random_job(std::mt19937 &rng, uint32_t max_nodes) {
  Job j;
  const uint32_t gpn = (rng() % 3 == 0) ? 4u : 8u;
  j.layout.tp = gpn == 8 ? (rng() % 4 == 0 ? 4u : 8u) : (rng() % 2 ? 2u : 4u);
  j.layout.order = rng() % 4 == 0 ? RankOrder::TpPpDp : RankOrder::TpCpEpDpPp;
  for (;;) {
    j.layout.pp = 1u << (rng() % 5);
    j.layout.dp = 1u + rng() % std::max<uint32_t>(1, max_nodes);
    const uint64_t world = j.layout.world();
    if (world % gpn) continue;
    j.nodes = uint32_t(world / gpn);
    if (j.nodes >= 1 && j.nodes <= max_nodes) break;
  }
  j.gpus_per_node = gpn;
  return j;
}

void test_engine_matches_reference(void **) {
  const Fabric fabrics[] = {{0, 8, 8, 1, false}, {4, 4, 8, 1, true},  {3, 5, 7, 1, true},
                            {2, 4, 8, 2, true},  {6, 16, 32, 1, true}, {0, 24, 32, 1, false}};
  std::mt19937 rng(20261203);
  int trial = 0, placed = 0, partial_groups = 0;
  for (const Fabric &f : fabrics) {
    Topology t = enginetest::make_topology(f.pods, f.groups, f.hosts, f.rails);
    if (f.uplinks) add_uplinks(t), enginetest::add_test_routes(t, uint32_t(trial + 11));
    TopoIndex ix(t);
    assert_true(ix.has_entry_classes() == f.uplinks);
    const int n = ix.host_count();
    // Slurm's node table: the topology's names shuffled, plus two unknown ones
    std::vector<std::string> names;
    for (const Host &h : t.hosts) names.push_back(h.name);
    names.push_back("login1");
    names.push_back("gpu-extra");
    std::shuffle(names.begin(), names.end(), rng);
    NodeMap map(ix, names);
    Placer fast(ix);
    reference::RefPlacer ref(ix);
    const int trials = n > 1024 ? 300 : 1500;
    for (int k = 0; k < trials; ++k, ++trial) {
      // fragmented free set: runs of busy and free nodes, free GPUs mostly all, some partial
      const double busy = std::uniform_real_distribution<double>(0.0, 0.8)(rng);
      std::vector<uint64_t> words((names.size() + 63) / 64, 0);
      std::vector<uint16_t> gpus(names.size(), 0);
      std::vector<int> hosts;
      std::vector<uint32_t> hgpus;
      for (size_t i = 0; i < names.size();) {
        const size_t run = 1 + rng() % 12;
        const bool b = std::bernoulli_distribution(busy)(rng);
        for (size_t r = 0; r < run && i < names.size(); ++r, ++i) {
          if (b) continue;
          words[i / 64] |= uint64_t(1) << (i % 64);
          gpus[i] = uint16_t(std::bernoulli_distribution(0.7)(rng) ? 8 : rng() % 9);
          const int h = map.host(i);
          if (h >= 0) {
            hosts.push_back(h);
            hgpus.push_back(gpus[i]);
          }
        }
      }
      // a few bits past the table's end must be ignored
      if (names.size() % 64) words.back() |= ~uint64_t(0) << (names.size() % 64);
      const Job job = random_job(rng, uint32_t(std::max(1, n / (rng() % 2 ? 2 : 8))));
      for (const PlaceMode mode : {PlaceMode::Prefer, PlaceMode::Strict}) {
        PlaceResult a, b;
        const PlaceStatus sa = fast.place_slurm(map, words.data(), names.size(), gpus.data(), job, mode, a);
        const PlaceStatus sb = ref.place_slurm(map, words.data(), names.size(), gpus.data(), job, mode, b);
        expect_same(a, sa, b, sb, true, "place_slurm", trial);
        placed += sa != PlaceStatus::NoNodes;
        if (a.quality.holes) ++partial_groups;
        // the host-list entry point, in a random order
        std::vector<size_t> perm(hosts.size());
        for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
        std::shuffle(perm.begin(), perm.end(), rng);
        std::vector<int> ph;
        std::vector<uint32_t> pg;
        for (size_t i : perm) {
          ph.push_back(hosts[i]);
          pg.push_back(hgpus[i]);
        }
        const PlaceStatus ta = fast.place(ph.data(), pg.data(), ph.size(), job, mode, a);
        const PlaceStatus tb = ref.place(ph.data(), pg.data(), ph.size(), job, mode, b);
        expect_same(a, ta, b, tb, false, "place", trial);
      }
    }
  }
  assert_true(placed > trial / 2);      // the generator places most jobs...
  assert_true(partial_groups > trial / 20);  // ...and takes leaf groups in part (best fit by free GPUs)
}

void test_rank_order_matches_reference(void **) {
  std::mt19937 rng(7);
  for (const Fabric &f : {Fabric{4, 4, 8, 1, true}, Fabric{2, 4, 8, 2, true}, Fabric{6, 16, 32, 1, true},
                          Fabric{3, 5, 7, 1, false}}) {
    Topology t = enginetest::make_topology(f.pods, f.groups, f.hosts, f.rails);
    if (f.uplinks) add_uplinks(t), enginetest::add_test_routes(t, 5);
    TopoIndex ix(t);
    assert_true(ix.has_entry_classes() == f.uplinks);
    RankOrderer fast(ix);
    reference::RefOrderer ref(ix);
    std::vector<int> all(size_t(ix.host_count()));
    for (size_t i = 0; i < all.size(); ++i) all[i] = int(i);
    for (int k = 0; k < 500; ++k) {
      std::shuffle(all.begin(), all.end(), rng);
      const Job job = random_job(rng, uint32_t(all.size()));
      std::vector<int> set(all.begin(), all.begin() + job.nodes), a, b;
      if (k % 2)  // canonical order, as the placer hands it over
        std::sort(set.begin(), set.end(), [&ix](int x, int y) { return ix.canonical_rank(x) < ix.canonical_rank(y); });
      fast.order(set, job.layout, a);
      ref.order(set, job.layout, b);
      if (a != b) fail_msg("rank order differs, trial %d (%u nodes)", k, job.nodes);
    }
    // the same errors: a duplicate, sorted or not
    std::vector<int> dup = {0, 1, 1, 2};
    Layout l;
    l.tp = 8;
    l.dp = 4;
    std::vector<int> out;
    bool threw = false;
    try {
      fast.order(dup, l, out);
    } catch (const LayoutError &) {
      threw = true;
    }
    assert_true(threw);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_engine_matches_reference),
      cmocka_unit_test(test_rank_order_matches_reference),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
