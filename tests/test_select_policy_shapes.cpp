// SPDX-License-Identifier: GPL-2.0-or-later
// The select plugin's decision (corelib/select_policy.hpp) on shapes other than the 16-node, tp=8
// fabric of tests/test_select_policy.cpp: pods of a 3-level tree, rail-optimized scalable units,
// 4-GPU nodes with TP smaller than a node, shared nodes, pipeline stages, a block cons_tres refuses
// and a job that does not fit. Decisions only: verdict, placement, the nodes offered and their
// leaf groups and pods, never the wording of logs or reasons.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine_topologies.hpp"
#include "policies.hpp"
#include "select_policy.hpp"
#include "select_standin.hpp"
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

using standin::kNow;

// A classified topology with node-table index = host index.
struct Shape : standin::Cluster {
  explicit Shape(Topology t) : standin::Cluster(std::move(t)) {}
  std::set<int> groups(const std::vector<int> &nodes) const {
    std::set<int> g;
    for (int i : nodes) g.insert(index.host_leaf_group(i));
    return g;
  }
  std::set<int> pods(const std::vector<int> &nodes) const {
    std::set<int> p;
    for (int i : nodes) p.insert(index.host_pod(i));
    return p;
  }
};

// cons_tres: accepts every block but those holding a refused node; plain fits when asked to.
struct Fake : standin::ConsTres {
  Fake() { plain_ok = false; }
};

Job job_of(const char *layout, uint32_t gpus) {
  Job j;
  j.layout = parse_layout(layout);
  j.gpus_per_node = gpus;
  j.nodes = uint32_t(j.layout.world() / gpus);
  return j;
}

// Every node with all its GPUs free.
struct Call : standin::Call {
  Call(Shape &shape, const char *layout, uint32_t gpus, bool strict)
      : standin::Call(shape, job_of(layout, gpus), strict, uint16_t(gpus), uint16_t(gpus)) {}
  void busy(int first, int count, uint16_t free_gpus = 0) {
    for (int i = first; i < first + count; ++i) free_now[size_t(i)] = free_gpus;
  }
};

// 3-level tree, 2 pods x 2 leaf groups x 4 hosts (pod 0: hosts 0-7, pod 1: 8-15). A job of two DP
// rings of 4 (pp=2) goes whole into one pod, each ring on one leaf group.
void test_pods_pp2(void **) {
  Shape s(enginetest::make_topology(2, 2, 4));
  {
    Call c(s, "tp=8,pp=2,dp=4", 8, false);
    Fake f;
    const SelectAnswer a = c.run(f);
    assert_true(a.verdict == SelectVerdict::Block);
    assert_string_equal(a.placement, "ideal");
    assert_int_equal(f.blocks.size(), 1);
    const std::vector<int> &b = f.blocks[0];
    assert_int_equal(b.size(), 8);
    assert_int_equal(s.pods(b).size(), 1);
    // Rank order: ring 0 is nodes 0-3, ring 1 nodes 4-7, each inside one leaf group.
    assert_int_equal(s.groups({b[0], b[1], b[2], b[3]}).size(), 1);
    assert_int_equal(s.groups({b[4], b[5], b[6], b[7]}).size(), 1);
  }
  {
    // Pod 0 keeps a leaf group free, pod 1 two half groups: the job cannot stay in one pod.
    // Strict waits; prefer takes a fallback block over both pods, on free nodes only.
    Call c(s, "tp=8,pp=2,dp=4", 8, true);
    c.busy(0, 4);
    c.busy(8, 2);
    c.busy(12, 2);
    Fake f;
    const SelectAnswer a = c.run(f);
    assert_true(a.verdict == SelectVerdict::Wait);
    assert_int_equal(f.blocks.size(), 0);
    c.req.strict = false;
    Fake g;
    const SelectAnswer p = c.run(g);
    assert_true(p.verdict == SelectVerdict::Block);
    assert_string_equal(p.placement, "fallback");
    assert_int_equal(g.blocks.size(), 1);
    const std::vector<int> &b = g.blocks[0];
    assert_int_equal(s.pods(b).size(), 2);
    for (int i : b) assert_true(c.free_now[size_t(i)] == 8);
  }
  {
    // Once the maximum wait is over, strict behaves as prefer.
    Call c(s, "tp=8,pp=2,dp=4", 8, true);
    c.busy(0, 4);
    c.busy(8, 2);
    c.busy(12, 2);
    c.req.deadline = kNow - 1;
    Fake f;
    const SelectAnswer a = c.run(f);
    assert_true(a.verdict == SelectVerdict::Block);
    assert_string_equal(a.placement, "fallback");
  }
}

// Rail-optimized: 4 scalable units of 4 hosts, 4 rail leaves each; a unit is one leaf group. A
// 3-node ring takes the unit with exactly 3 free (no hole) over a wholly free one.
void test_rails_tightest_unit(void **) {
  Shape s(enginetest::make_topology(0, 4, 4, 4));
  assert_int_equal(s.index.leaf_group_count(), 4);
  Call c(s, "tp=8,dp=3", 8, false);
  c.busy(0, 2);  // unit 0: 2 free
  c.busy(4, 1);  // unit 1: 3 free
  Fake f;
  const SelectAnswer a = c.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_string_equal(a.placement, "ideal");
  assert_true((f.blocks[0] == std::vector<int>{5, 6, 7}));
}

// 4-GPU nodes and TP of 2: a DP ring of 8 ranks is 4 nodes (tp=2 x dp=8 = 16 GPUs); busy nodes
// of the first leaf group send it to the next one whole.
void test_four_gpu_nodes_tp2(void **) {
  Shape s(enginetest::make_topology(0, 4, 4));
  Call c(s, "tp=2,dp=8", 4, true);
  c.busy(1, 1);
  Fake f;
  const SelectAnswer a = c.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_string_equal(a.placement, "ideal");
  assert_int_equal(f.blocks[0].size(), 4);
  assert_int_equal(s.groups(f.blocks[0]).size(), 1);
  assert_true(s.index.host_leaf_group(f.blocks[0][0]) != s.index.host_leaf_group(1));
}

// Shared nodes: a 4-GPU job on 8-GPU nodes where some have only 4 free. Nodes with too few GPUs
// free are never offered; among a leaf group's candidates, those with fewer free GPUs first.
void test_shared_nodes(void **) {
  Shape s(enginetest::make_topology(0, 4, 4));
  Call c(s, "tp=4,dp=2", 4, false);
  for (int i = 0; i < 16; ++i) c.free_now[size_t(i)] = 8;
  c.free_now[0] = 4;
  c.free_now[2] = 4;
  c.free_now[1] = 2;  // too few for tp=4
  Fake f;
  const SelectAnswer a = c.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_string_equal(a.placement, "ideal");
  std::vector<int> b = f.blocks[0];
  std::sort(b.begin(), b.end());
  assert_true((b == std::vector<int>{0, 2}));
}

// A block cons_tres refuses: its nodes are left out of the next one, which is still ideal.
void test_refused_block_on_pods(void **) {
  Shape s(enginetest::make_topology(2, 2, 4));
  Call c(s, "tp=8,dp=4", 8, true);
  Fake f;
  f.refuse = {0};
  const SelectAnswer a = c.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_string_equal(a.placement, "ideal");
  assert_int_equal(f.blocks.size(), 2);
  assert_true(std::find(f.blocks[0].begin(), f.blocks[0].end(), 0) != f.blocks[0].end());
  for (int i : f.blocks[1]) assert_true(std::find(f.blocks[0].begin(), f.blocks[0].end(), i) == f.blocks[0].end());
  assert_int_equal(s.groups(f.blocks[1]).size(), 1);
  assert_int_equal(a.tries, 2);
}

// pp=4 under tp-pp-dp on 3 pods of 2 leaf groups of 3: segments are PP chains of 4 nodes (ideal:
// 2 leaf groups each); the 8-node job is larger than a pod of 6, so 2 pods are its ideal.
void test_pp_chains_over_pods(void **) {
  Shape s(enginetest::make_topology(3, 2, 3));
  Call c(s, "tp=8,pp=4,dp=2,rank-order=tp-pp-dp", 8, true);
  Fake f;
  const SelectAnswer a = c.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_string_equal(a.placement, "ideal");
  const std::vector<int> &b = f.blocks[0];
  assert_int_equal(b.size(), 8);
  assert_int_equal(s.pods(b).size(), 2);
  // Each PP chain (nodes 0-3, 4-7 of the order) spans at most its ideal 2 leaf groups.
  assert_true(s.groups({b[0], b[1], b[2], b[3]}).size() <= 2);
  assert_true(s.groups({b[4], b[5], b[6], b[7]}).size() <= 2);
}

// A job larger than the free nodes: prefer goes to plain cons_tres (no block offered) and waits
// when that fails too; strict waits without asking plain cons_tres when nothing may be preempted.
void test_does_not_fit(void **) {
  Shape s(enginetest::make_topology(2, 2, 4));
  Call c(s, "tp=8,dp=12", 8, false);
  c.busy(0, 6);
  Fake f;
  const SelectAnswer a = c.run(f);
  assert_true(a.verdict == SelectVerdict::Wait);
  assert_int_equal(f.blocks.size(), 0);
  assert_int_equal(f.plain_calls(), 1);
  Fake g;
  g.plain_ok = true;
  assert_true(c.run(g).verdict == SelectVerdict::Plain);
  c.req.strict = true;
  Fake h;
  h.plain_ok = true;
  assert_true(c.run(h).verdict == SelectVerdict::Wait);
  assert_int_equal(h.plain_calls(), 0);
  assert_int_equal(h.blocks.size(), 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pods_pp2),
      cmocka_unit_test(test_rails_tightest_unit),
      cmocka_unit_test(test_four_gpu_nodes_tp2),
      cmocka_unit_test(test_shared_nodes),
      cmocka_unit_test(test_refused_block_on_pods),
      cmocka_unit_test(test_pp_chains_over_pods),
      cmocka_unit_test(test_does_not_fit),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
