// Cost model on hand-computed cases.
#include <algorithm>
#include <cmath>

#include "cmocka_cxx.hpp"
#include "cost.hpp"
#include "engine_topologies.hpp"

using namespace topoaware;

namespace {

Layout L(uint32_t tp, uint32_t pp, uint32_t dp) {
  Layout l;
  l.tp = tp; l.pp = pp; l.dp = dp;
  return l;
}

void near(double a, double b) {
  if (std::fabs(a - b) > 1e-9 * std::max(1.0, std::fabs(b))) {
    print_error("%.6g != %.6g\n", a, b);
    fail();
  }
}

// 2 leaf groups x 4 hosts, no pods, leaves 2:1 oversubscribed.
const Topology &small() {
  static const Topology t = enginetest::make_topology(0, 2, 4, 1, 2.0);
  return t;
}

CostParams params() {
  CostParams p;
  p.model_params = 8e9;  // S = 8e9 * 2 bytes / (tp 8 * pp 1) = 2e9 bytes per rank
  return p;
}

void test_weights(void **) {
  const Topology t = enginetest::make_topology(2, 2, 4, 1, 2.0, 4.0);
  TopoIndex ix(t);
  near(path_weight(ix, 0), 0);
  near(path_weight(ix, 1), 2);               // host-leaf-host
  near(path_weight(ix, 2), 2 + 2 * 2.0);     // + leaf-spine-leaf at 2:1
  near(path_weight(ix, 3), 2 + 4 + 2 * 4.0); // + spine-core-spine at 4:1
  assert_int_equal(path_level(ix, 0, 0), 0);
  assert_int_equal(path_level(ix, 0, 3), 1);
  assert_int_equal(path_level(ix, 0, 4), 2);
  assert_int_equal(path_level(ix, 0, 8), 3);
}

void test_dp_ring_in_one_leaf(void **) {
  TopoIndex ix(small());
  // tp=8 dp=4 on n0001-4: one ring pattern (x8 TP ranks), 4 edges inside the leaf.
  // edge bytes = 2(d-1)/d * S = 1.5 * 2e9 = 3e9; hops = 4 edges * weight 2.
  JobCost c = job_cost(ix, {0, 1, 2, 3}, L(8, 1, 4), params());
  assert_int_equal(c.dp.groups, 8);
  assert_int_equal(c.dp.at_ideal, 8);
  near(c.bytes[1], 4 * 3e9 * 8);
  near(c.bytes[2], 0);
  near(c.hop_bytes, 8 * 3e9 * 8);
  near(c.ratio, 1);
  near(c.slowdown(0.3), 1);
  assert_int_equal(c.pp.groups, 0);
}

void test_dp_ring_split(void **) {
  TopoIndex ix(small());
  // n0001, n0002 | n0005, n0006: edges 0-1 (leaf), 1-4 (spine), 4-5 (leaf), 5-0 (spine)
  // hops = 2 + 6 + 2 + 6 = 16 against the ideal 8: ratio 2; slowdown at f=0.3 is 1.3
  JobCost c = job_cost(ix, {0, 1, 4, 5}, L(8, 1, 4), params());
  near(c.hop_bytes, 16 * 3e9 * 8);
  near(c.ideal_hop_bytes, 8 * 3e9 * 8);
  near(c.ratio, 2);
  near(c.slowdown(0.3), 1.3);
  near(c.bytes[1], 2 * 3e9 * 8);
  near(c.bytes[2], 2 * 3e9 * 8);
  near(c.spine_bytes(), 2 * 3e9 * 8);
  assert_int_equal(c.dp.at_ideal, 0);
  assert_int_equal(c.dp.leaf_groups, 16);
  assert_int_equal(c.dp.ideal_leaf_groups, 8);
  // the same set in a bad rank order (Slurm's node-table order could give it): 0,4,1,5 -> 4 spine edges
  JobCost bad = job_cost(ix, {0, 4, 1, 5}, L(8, 1, 4), params());
  near(bad.hop_bytes, 4 * 6 * 3e9 * 8);
  near(bad.ratio, 3);
}

void test_pp_chain(void **) {
  TopoIndex ix(small());
  // tp=8 pp=2 across the spine: per micro-batch 2 x b*s*h*2 bytes / tp, 8 micro-batches
  CostParams p = params();
  const double A = 1 * 2048.0 * 12288 * 2 / 8;
  const double e = 2 * 8 * A;
  JobCost c = job_cost(ix, {0, 4}, L(8, 2, 1), p);
  assert_int_equal(c.pp.groups, 8);
  assert_int_equal(c.dp.groups, 0);
  near(c.bytes[2], e * 8);
  near(c.hop_bytes, 6 * e * 8);
  near(c.ideal_hop_bytes, 2 * e * 8);
  near(c.ratio, 3);
  near(c.slowdown(0.5), 2);
}

void test_within_node(void **) {
  TopoIndex ix(small());
  // tp=2 dp=4 on one node: everything over NVLink, nothing on the fabric, ratio 1
  JobCost c = job_cost(ix, {2}, L(2, 1, 4), params());
  near(c.bytes[0], 4 * (2.0 * 3 / 4 * (8e9 * 2 / 2)) * 2);
  near(c.hop_bytes, 0);
  near(c.ratio, 1);
}

void test_mixed_megatron(void **) {
  TopoIndex ix(small());
  // tp=8 dp=2 pp=2 on n0001,n0002 | n0005,n0006 in rank order: DP rings inside each leaf, the PP
  // chains (0->2, 1->3) cross the spine, which an ideal 4-node block (one leaf) would not.
  CostParams p = params();
  JobCost c = job_cost(ix, {0, 1, 4, 5}, L(8, 2, 2), p);
  const double S = 8e9 * 2 / 16, edp = 2.0 * 1 / 2 * S;
  const double epp = 2 * 8 * (2048.0 * 12288 * 2 / 8);
  near(c.dp.hop_bytes, 2 * (2 * 2 * edp) * 8);  // 2 rings x 2 edges x weight 2 x 8 TP
  near(c.dp.ideal_hop_bytes, c.dp.hop_bytes);
  near(c.pp.hop_bytes, 2 * 6 * epp * 8);        // 2 chains x 1 spine edge
  near(c.pp.ideal_hop_bytes, 2 * 2 * epp * 8);  // 2 chains in one leaf
  assert_int_equal(c.dp.at_ideal, 16);
  assert_int_equal(c.pp.at_ideal, 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_weights),   cmocka_unit_test(test_dp_ring_in_one_leaf),
      cmocka_unit_test(test_dp_ring_split), cmocka_unit_test(test_pp_chain),
      cmocka_unit_test(test_within_node), cmocka_unit_test(test_mixed_megatron),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
