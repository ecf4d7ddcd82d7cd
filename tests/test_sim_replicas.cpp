// SPDX-License-Identifier: GPL-2.0-or-later
// Benchmark simulator: the Slurm replicas against hand-worked cases (and the stock cons_tres +
// topology/tree allocation observed on a real slurmctld, docs/design.md "Stock Slurm on a
// fragmented fabric"), topoaware beside them, the exact optimum,
// the workload generator and the EASY backfill scheduler. Behaviour only, never timings.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "cluster.hpp"
#include "engine_topologies.hpp"
#include "generator.hpp"
#include "rank_order.hpp"
#include "topology_json.hpp"
#include "optimum.hpp"
#include "replay_trace.hpp"
#include "sim.hpp"
#include "policies.hpp"
#include "cmocka_cxx.hpp"

using namespace topoaware;
using namespace topoaware::sim;

namespace {

// 8 leaves x 8 nodes; leaves 1, 2, 3 have 5, 5, 3 free (hosts 3-7, 11-15, 21-23), the rest busy.
std::vector<uint8_t> free_553(const Cluster &c) {
  std::vector<uint8_t> f(size_t(c.nodes), 0);
  for (int h : {3, 4, 5, 6, 7, 11, 12, 13, 14, 15, 21, 22, 23}) f[size_t(h)] = 1;
  return f;
}

const Cluster &small() {
  static auto c = make_small_cluster(8, 8);
  return *c;
}

TraceJob job(int id, double arrival, double runtime, int pp, int dp) {
  TraceJob j;
  j.id = id;
  j.arrival = arrival;
  j.runtime = runtime;
  j.layout.tp = 8;
  j.layout.pp = uint32_t(pp);
  j.layout.dp = uint32_t(dp);
  j.nodes = pp * dp;
  return j;
}

void test_cluster_views(void **) {
  const Cluster &c = small();
  assert_int_equal(c.nodes, 64);
  assert_int_equal(c.blocks.size(), 8);
  assert_int_equal(c.bblock_node_cnt, 8);
  // 8 leaves + root; every leaf 2 hops from every other leaf
  assert_int_equal(c.sw.size(), 9);
  assert_int_equal(c.sw_dist[0][7], 2);
  assert_int_equal(c.sw[8].parent, 8);
  for (int b = 0; b < 8; ++b)
    for (int h : c.blocks[size_t(b)]) assert_int_equal(h / 8, b);  // node-index order = leaf order
}

// Observed on slurmctld 22.05 (docs/design.md, "Stock Slurm on a fragmented fabric"): stock
// cons_tres + topology/tree on 8x8 with 5,5,3 free gave an 8-node job
// n[004-008,022-024] (hosts 3-7 and 21-23): 5 + 3, the tightest fit for the remainder.
void test_tree_matches_observed_slurm(void **) {
  const Cluster &c = small();
  std::vector<int> out;
  int leaves = 0;
  assert_true(slurm_tree_select(c, free_553(c), 8, out, &leaves));
  assert_true(out == (std::vector<int>{3, 4, 5, 6, 7, 21, 22, 23}));
  assert_int_equal(leaves, 2);
  // not enough nodes: Slurm's call fails
  assert_false(slurm_tree_select(c, free_553(c), 14, out, &leaves));
  // fits one leaf: the tightest leaf (leaf 3, 3 free) for 3 nodes
  assert_true(slurm_tree_select(c, free_553(c), 3, out, &leaves));
  assert_true(out == (std::vector<int>{21, 22, 23}));
}

// tests/slurm_select_place.sh runs real slurmctld 22.05.8 (cons_tres + topology/tree) on 4
// leaves x 4 nodes with 3, 3, 2, 0 free (n0002-4, n0006-8, n0011-12) and asserts that a 4-node
// job gets n[0002-0004,0011]: 3 + 1. The replica must give the same nodes.
void test_tree_matches_real_slurmctld(void **) {
  auto c = make_small_cluster(4, 4);
  std::vector<uint8_t> f(16, 0);
  for (int h : {1, 2, 3, 5, 6, 7, 10, 11}) f[size_t(h)] = 1;
  std::vector<int> out;
  int leaves = 0;
  assert_true(slurm_tree_select(*c, f, 4, out, &leaves));
  assert_true(out == (std::vector<int>{1, 2, 3, 10}));
  assert_int_equal(leaves, 2);
}

void test_tree_switches_wait(void **) {
  const Cluster &c = small();
  PolicySpec ps{"slurm-tree-switches", 300};
  auto p = make_policy(c, ps, 1);
  std::vector<int> out;
  const TraceJob j = job(0, 0, 100, 2, 4);  // ideal: 1 leaf of 8
  assert_false(p->select(free_553(c), 13, j, 10, out));   // 2 leaves > 1, waited 10 < 300
  assert_true(p->select(free_553(c), 13, j, 300, out));   // waited long enough: takes it
  assert_int_equal(out.size(), 8);
}

void test_block_and_segment(void **) {
  const Cluster &c = small();
  std::vector<int> out;
  // no segment: an 8-node job needs one base block (8 nodes) with 8 free: none -> pending
  assert_false(slurm_block_select(c, free_553(c), 8, 0, out));
  // --segment=4: each segment in the block with the fewest usable nodes that holds it; ties go
  // to the last block ("<="): leaf 1 first (4 of 11-15), then leaf 0 (4 of 3-7)
  assert_true(slurm_block_select(c, free_553(c), 8, 4, out));
  assert_true(out == (std::vector<int>{3, 4, 5, 6, 11, 12, 13, 14}));
  // segment larger than a base block: unsupported in 24.11
  assert_false(slurm_block_select(c, free_553(c), 16, 16, out));
  // on an empty cluster a 16-node job takes an aligned pair of base blocks (the last pair: "<=")
  std::vector<uint8_t> all(64, 1);
  assert_true(slurm_block_select(c, all, 16, 0, out));
  std::set<int> blocks;
  for (int h : out) blocks.insert(c.host_block[size_t(h)]);
  assert_int_equal(blocks.size(), 2);
  assert_int_equal(*blocks.begin() % 2, 0);
  assert_int_equal(*blocks.rbegin(), *blocks.begin() + 1);
}

void test_topoaware_and_optimum(void **) {
  const Cluster &c = small();
  const TraceJob j = job(0, 0, 100, 2, 4);
  // Strict mode insists on the job's own ideal: 4 + 4, each DP ring of 4 inside one leaf. Prefer
  // mode trades that for the free pool (corelib/placement.cpp: holes left rank above split rings) and
  // takes 5 + 3 like Slurm's tree best-fit, leaving one leaf with 5 free instead of two with 1.
  auto ta = make_policy(c, {"topoaware-strict", 0}, 1);
  auto prefer = make_policy(c, {"topoaware", 0}, 1);
  auto tree = make_policy(c, {"slurm-tree", 0}, 1);
  std::vector<int> a, b, pa;
  assert_true(ta->select(free_553(c), 13, j, 0, a));
  assert_true(tree->select(free_553(c), 13, j, 0, b));
  assert_true(prefer->select(free_553(c), 13, j, 0, pa));
  assert_int_equal(pa.size(), 8);
  {
    std::vector<int> prefer_leaf(8, 0);
    for (int h : pa) prefer_leaf[size_t(h / 8)]++;
    std::sort(prefer_leaf.rbegin(), prefer_leaf.rend());
    assert_int_equal(prefer_leaf[0], 5);
    assert_int_equal(prefer_leaf[1], 3);
  }
  std::vector<int> per_leaf(8, 0);
  for (int h : a) per_leaf[size_t(h / 8)]++;
  std::sort(per_leaf.rbegin(), per_leaf.rend());
  assert_int_equal(per_leaf[0], 4);
  assert_int_equal(per_leaf[1], 4);
  CostParams p;
  const OptimumResult o = exact_optimum(c, free_553(c), 8, j.layout, p);
  assert_true(o.done);
  const double hop_ta = job_cost(*c.index, a, j.layout, p).hop_bytes;
  std::vector<int> bs = b;
  const double hop_tree = job_cost(*c.index, bs, j.layout, p).hop_bytes;
  assert_true(std::abs(hop_ta - o.hop_bytes) <= 1e-9 * o.hop_bytes);
  assert_true(hop_tree > o.hop_bytes);
}

void test_trace(void **) {
  const auto t1 = make_trace(2048, 500, 0.9, 7), t2 = make_trace(2048, 500, 0.9, 7);
  double work = 0;
  for (size_t i = 0; i < t1.size(); ++i) {
    assert_int_equal(t1[i].nodes, t2[i].nodes);
    assert_true(t1[i].arrival == t2[i].arrival);
    assert_int_equal(t1[i].nodes, int(t1[i].layout.dp * t1[i].layout.pp));
    assert_true(t1[i].nodes >= 1 && t1[i].nodes <= 512);
    assert_true(t1[i].layout.pp <= 16 && t1[i].layout.tp == 8);
    assert_true(t1[i].runtime >= 300 && t1[i].runtime <= 43200);
    if (i) assert_true(t1[i].arrival >= t1[i - 1].arrival);
    work += t1[i].nodes * t1[i].runtime;
  }
  const double load = work / (2048 * t1.back().arrival);
  assert_true(load > 0.6 && load < 1.3);  // Poisson noise around 0.9
}

// EASY backfill on 64 nodes: job 0 (48 nodes, 100 s) runs; job 1 (32) waits for it (shadow
// 100 s, 32 extra nodes then); job 2 (8, 50 s) ends before the shadow: backfilled; job 3 (8,
// 1000 s) ends after it but fits the extra nodes: backfilled; job 4 (16, 1000 s) would delay job 1
// (extra 24 left < 16? no: 24 >= 16) -> backfilled as well; job 5 (8, 1000 s) finds no free node.
void test_easy_backfill(void **) {
  const Cluster &c = small();
  std::vector<TraceJob> t = {job(0, 0, 100, 1, 48), job(1, 1, 100, 1, 32), job(2, 2, 50, 1, 8),
                             job(3, 3, 1000, 1, 8)};
  auto ff = make_policy(c, {"firstfit", 0}, 1);
  SimOptions o;
  o.stretch = false;
  SimResult r = simulate(c, t, *ff, o);
  assert_true(r.jobs[0].start == 0);
  assert_true(r.jobs[2].start == 2);
  assert_true(r.jobs[3].start == 3);
  assert_true(r.jobs[1].start == 100);
  // a backfill candidate that would delay the head is held back: 24 nodes for 1000 s when only
  // 32 - 8 = 24 extra nodes remain... use 40 nodes: more than the free 8 -> waits; and a 16-node
  // job ending after the shadow with extra nodes used up waits too
  std::vector<TraceJob> t2 = {job(0, 0, 100, 1, 48), job(1, 1, 100, 1, 56), job(2, 2, 1000, 1, 16)};
  SimResult r2 = simulate(c, t2, *ff, o);
  assert_true(r2.jobs[1].start == 100);  // extra at shadow = 64 - 56 = 8 < 16
  assert_true(r2.jobs[2].start >= 200);  // not before job 1 ends
  // stretch: a placement costlier than ideal runs longer than its base runtime
  o.stretch = true;
  std::vector<TraceJob> t3 = {job(0, 0, 100, 1, 60), job(1, 1, 100, 2, 2)};
  SimResult r3 = simulate(c, t3, *ff, o);
  assert_true(r3.jobs[0].end - r3.jobs[0].start >= 100);
}

// The replays' workload (bench/slurm_replay.sh): deterministic; the fragmented start pins 2..5
// distinct hosts of every leaf at time 0; trace jobs in arrival order inside the span, at most
// half the cluster, nodes = pp x dp; the time limit is the runtime plus 15 s in whole minutes.
void test_replay_trace(void **) {
  ReplayTraceSpec s;
  s.seed = 2;
  s.span = 240;
  s.load = 1.0;
  s.frag = true;
  double load = 0;
  const auto a = make_replay_trace(s, &load), b = make_replay_trace(s);
  assert_int_equal(a.size(), b.size());
  std::vector<int> per_leaf(8, 0);
  std::set<int> pinned;
  size_t k = 0;
  for (; k < a.size() && a[k].kind == "frag"; ++k) {
    assert_true(a[k].node >= 0 && a[k].node < 64 && a[k].arrival == 0 && a[k].nodes == 1);
    assert_true(pinned.insert(a[k].node).second);
    ++per_leaf[size_t(a[k].node / 8)];
  }
  for (int n : per_leaf) assert_true(n >= 2 && n <= 5);
  assert_true(k < a.size());
  for (size_t i = k; i < a.size(); ++i) {
    assert_true(a[i].kind == "layout" || a[i].kind == "plain");
    assert_true(a[i].node == -1 && a[i].arrival == b[i].arrival && a[i].nodes == b[i].nodes);
    assert_int_equal(a[i].nodes, a[i].pp * a[i].dp);
    assert_true(a[i].nodes >= 1 && a[i].nodes <= 32 && a[i].arrival <= 240);
    assert_true(a[i].runtime >= 10 && a[i].runtime <= 80);
    if (i > k) assert_true(a[i].arrival >= a[i - 1].arrival);
  }
  assert_true(load > 0.5 && load < 1.6);  // Poisson noise around 1.0
  assert_int_equal(replay_time_limit_minutes(45), 1);
  assert_int_equal(replay_time_limit_minutes(45.1), 2);
  assert_int_equal(replay_time_limit_minutes(10), 1);
  assert_int_equal(replay_time_limit_minutes(80), 2);
}

// Pinned jobs and time limits in the scheduler. A pinned job starts on its host at its arrival
// without the policy (first fit would take host 0), and a queued job does not get that host while
// it runs. Backfill plans with the time limit, not the (unknown) runtime: job 2 ends at 52 s,
// before the head job's shadow (100 s), but its limit of 120 s does not, and no node is spare.
std::vector<std::vector<int>> g_chosen;
void record_choice(void *, const Cluster &, const std::vector<uint8_t> &, const TraceJob &,
                   const std::vector<int> &chosen, bool) {
  g_chosen.push_back(chosen);
}

void test_pinned_and_limits(void **) {
  const Cluster &c = small();
  TraceJob p = job(0, 0, 30, 1, 1);
  p.pinned = 5;
  std::vector<TraceJob> t = {p, job(1, 1, 10, 1, 8)};
  auto ff = make_policy(c, {"firstfit", 0}, 1);
  SimOptions o;
  o.stretch = false;
  g_chosen.clear();
  SimResult r = simulate(c, t, *ff, o, record_choice, nullptr);
  assert_true(r.jobs[0].start == 0 && r.jobs[0].end == 30 && r.jobs[0].pinned && !r.jobs[1].pinned);
  assert_true(r.jobs[1].start == 1);
  assert_int_equal(g_chosen.size(), 1);  // the policy saw job 1 only
  assert_true(g_chosen[0] == (std::vector<int>{0, 1, 2, 3, 4, 6, 7, 8}));
  std::vector<TraceJob> t2 = {job(0, 0, 100, 1, 48), job(1, 1, 100, 1, 64), job(2, 2, 50, 1, 8)};
  SimResult r2 = simulate(c, t2, *ff, o);
  assert_true(r2.jobs[2].start == 2);  // ends by the shadow: backfilled
  t2[2].estimate = 120;
  SimResult r3 = simulate(c, t2, *ff, o);
  assert_true(r3.jobs[1].start == 100);
  assert_true(r3.jobs[2].start >= 200);  // its limit would delay job 1: after job 1
}


// The ring book in the simulator (as the select plugin keeps it): on a 2-level 2:1 tree with
// forwarding tables, each topoaware job's order is what a RingEdgeBook fed the same starts and ends
// in time order gives (the jobs still running, in start order), snapshots list jobs in start
// order, and some jobs get another order than alone (else the book would not be exercised).
// Without the book every order is the job's alone.
struct SeenOrders {
  std::map<int, std::vector<int>> order;  // job id -> order seen at a snapshot
};

void run_booked(const Cluster &c, const std::vector<TraceJob> &t, bool ring_book, SimResult &r, SeenOrders &seen) {
  auto pol = make_policy(c, {"topoaware", 0}, 1);
  SimOptions o;
  o.stretch = false;
  o.ring_book = ring_book;
  o.window_lo = 0;
  o.window_hi = 1e6;
  for (double x = 0.5; x < 2000; x += 1) o.snapshot_times.push_back(x);
  o.on_snapshot = [&](int, double, const std::vector<SnapshotJob> &running) {
    for (const SnapshotJob &s : running) seen.order[s.id] = *s.order;
  };
  r = simulate(c, t, *pol, o);
}

void test_ring_book(void **) {
  FatTreeSpec spec;
  spec.leaves = 8;
  spec.hosts_per_leaf = 8;
  spec.uplinks_per_leaf = 4;
  spec.spines = 2;
  Topology topo = classify(generate_fat_tree(spec), ClassifyOptions{});
  enginetest::add_test_routes(topo, 3);
  char path[] = "/tmp/test_sim_ring_book.XXXXXX";
  const int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  { std::ofstream(path) << to_json(topo); }
  const auto cp = load_cluster("ft2-test", 64, path);
  std::remove(path);
  const Cluster &c = *cp;
  assert_true(c.index->has_entry_classes());  // the tables reach the rank order

  // Jobs of 6-16 nodes that span leaves, arriving faster than they end, some ending early.
  std::mt19937 rng(11);
  std::vector<TraceJob> t;
  const int shapes[][2] = {{3, 2}, {2, 4}, {4, 3}, {1, 6}, {2, 5}, {4, 4}, {3, 4}};
  for (int i = 0; i < 40; ++i) {
    const auto &s = shapes[rng() % 7];
    t.push_back(job(i, 3.0 * i, 20 + double(rng() % 60), s[0], s[1]));
  }
  SimResult on, off;
  SeenOrders seen_on, seen_off;
  run_booked(c, t, true, on, seen_on);
  run_booked(c, t, false, off, seen_off);

  // The reference: one book fed every start and end in time order (ends first at one instant, as
  // the scheduler frees nodes before it starts jobs), each start on the job's nodes sorted.
  struct Event { double at; int end; int job; };
  std::vector<Event> ev;
  for (const JobRecord &j : on.jobs) {
    ev.push_back({j.start, 0, j.id});
    ev.push_back({j.end, 1, j.id});
  }
  std::sort(ev.begin(), ev.end(), [](const Event &a, const Event &b) {
    return a.at != b.at ? a.at < b.at : a.end != b.end ? a.end > b.end : a.job < b.job;
  });
  RingEdgeBook book(*c.index);
  RankOrderer alone(*c.index);
  int differs = 0, checked = 0;
  std::vector<int> want, solo;
  for (const Event &e : ev) {
    if (e.end) {
      book.remove(uint32_t(e.job));
      continue;
    }
    const auto it = seen_on.order.find(e.job);
    assert_true(it != seen_on.order.end());
    std::vector<int> nodes = it->second;
    std::sort(nodes.begin(), nodes.end());
    book.order(uint32_t(e.job), nodes, t[size_t(e.job)].layout, want);
    assert_true(want == it->second);
    alone.order(nodes, t[size_t(e.job)].layout, solo);
    differs += solo != want;
    ++checked;
  }
  assert_int_equal(checked, 40);
  assert_true(differs > 0);
  assert_true(book.edges() == 0);  // every job ended

  // Without the book: each order alone, on the same node choice the engine made.
  assert_int_equal(seen_off.order.size(), 40);
  for (const auto &[id, order] : seen_off.order) {
    std::vector<int> nodes = order;
    std::sort(nodes.begin(), nodes.end());
    alone.order(nodes, t[size_t(id)].layout, solo);
    assert_true(solo == order);
  }
}

// Snapshots list the running jobs in start order (the ring book's), not by id: job 1 (24 nodes)
// waits for job 0 (48 of 64 nodes) to end at 100 s; job 2 (8 nodes) is backfilled at 2 s, since
// the 56 nodes free at 100 s still hold job 1. At 150 s job 2 (started at 2) is listed first.
void test_snapshot_start_order(void **) {
  const Cluster &c = small();
  std::vector<TraceJob> t = {job(0, 0, 100, 1, 48), job(1, 1, 100, 1, 24), job(2, 2, 200, 1, 8)};
  auto ff = make_policy(c, {"firstfit", 0}, 1);
  SimOptions o;
  o.stretch = false;
  o.snapshot_times = {150};
  std::vector<int> ids;
  o.on_snapshot = [&](int, double, const std::vector<SnapshotJob> &running) {
    for (const SnapshotJob &s : running) ids.push_back(s.id);
  };
  const SimResult r = simulate(c, t, *ff, o);
  assert_true(r.jobs[2].start == 2 && r.jobs[1].start == 100);
  assert_true(ids == (std::vector<int>{2, 1}));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cluster_views),      cmocka_unit_test(test_tree_matches_observed_slurm),
      cmocka_unit_test(test_tree_matches_real_slurmctld),
      cmocka_unit_test(test_tree_switches_wait), cmocka_unit_test(test_block_and_segment),
      cmocka_unit_test(test_topoaware_and_optimum), cmocka_unit_test(test_trace),
      cmocka_unit_test(test_easy_backfill),     cmocka_unit_test(test_replay_trace),
      cmocka_unit_test(test_pinned_and_limits),   cmocka_unit_test(test_ring_book),
      cmocka_unit_test(test_snapshot_start_order),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
