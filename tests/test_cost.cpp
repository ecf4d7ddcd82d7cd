// SPDX-License-Identifier: GPL-2.0-or-later
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

// 4 leaves x 4 hosts under 2 spines, 2 cables of 4xHDR from every leaf to every spine (800 Gb/s
// of uplinks per leaf), leaves 2:1 oversubscribed.
Topology four_leaves(double oversub = 2.0, LinkSpeed speed = LinkSpeed::HDR) {
  Topology t = enginetest::make_topology(0, 4, 4, 1, oversub);
  enginetest::add_spines(t, 2, 2, 4, speed);
  return t;
}

void test_uplink_factors(void **) {
  {
    const Topology t = four_leaves();
    TopoIndex ix(t);
    assert_false(ix.degraded());
    for (int g = 0; g < 4; ++g) near(ix.leaf_group_uplink_factor(g), 1);
  }
  {
    Topology t = four_leaves();
    enginetest::degrade_leaf(t, 0, 2);  // 4x -> 2x: 400 of 800 Gb/s
    TopoIndex ix(t);
    assert_true(ix.degraded());
    near(ix.leaf_group_uplink_factor(0), 2);
    for (int g = 1; g < 4; ++g) near(ix.leaf_group_uplink_factor(g), 1);
  }
  {
    Topology t = four_leaves(2.0, LinkSpeed::NDR);
    enginetest::degrade_leaf(t, 1, 4, LinkSpeed::HDR);  // NDR -> HDR
    TopoIndex ix(t);
    near(ix.leaf_group_uplink_factor(1), 2);
    near(ix.leaf_group_uplink_factor(0), 1);
  }
  {
    Topology t = four_leaves();
    // leaf 3 lost one of its four cables; one of leaf 2's reads as unknown width (counts as usual)
    for (Link &l : t.links) {
      if (l.a == t.switches[3].guid && l.b == 0x200000) l.ports.pop_back();
      if (l.a == t.switches[2].guid && l.b == 0x200001) l.width = 0;
    }
    TopoIndex ix(t);
    near(ix.leaf_group_uplink_factor(3), 4.0 / 3);
    near(ix.leaf_group_uplink_factor(2), 1);
  }
  {
    // rail-optimized: a leaf group is as good as its worst rail
    Topology t = enginetest::make_topology(0, 3, 4, 2);
    enginetest::add_spines(t, 2, 2);
    enginetest::degrade_leaf(t, 3, 2);  // group 1, rail 1
    TopoIndex ix(t);
    near(ix.leaf_group_uplink_factor(0), 1);
    near(ix.leaf_group_uplink_factor(1), 2);
    near(ix.leaf_group_uplink_factor(2), 1);
  }
  {
    // no uplinks at all (one switch, or links the model has no leaf-spine view of): nothing judged
    TopoIndex ix(small());
    assert_false(ix.degraded());
    near(ix.leaf_group_uplink_factor(0), 1);
  }
}

void test_degraded_leaf_cost(void **) {
  const Topology nominal = four_leaves();
  Topology t = four_leaves();
  enginetest::degrade_leaf(t, 0, 2);
  TopoIndex nix(nominal), ix(t);
  // Weights: host-leaf-host 2; host-leaf-spine-leaf-host 2 + 2 x 2:1 = 6, and each uplink of the
  // degraded leaf weighs 2 x 2 instead of 2.
  near(host_path_weight(ix, 0, 1), 2);
  near(host_path_weight(ix, 4, 8), 6);
  near(host_path_weight(ix, 0, 4), 8);
  near(host_path_weight(ix, 4, 0), 8);
  near(host_path_weight(nix, 0, 4), 6);
  // tp=8 dp=8 on leaves 0 and 1: 6 edges inside leaves (2) and 2 across (6), the ideal span; each
  // crossing also uses one uplink of leaf 0: +2 each, 28 against 24.
  const std::vector<int> on01 = {0, 1, 2, 3, 4, 5, 6, 7}, on12 = {4, 5, 6, 7, 8, 9, 10, 11};
  const double e = 2.0 * 7 / 8 * (8e9 * 2 / 8);
  JobCost healthy_fabric = job_cost(nix, on01, L(8, 1, 8), params());
  near(healthy_fabric.ratio, 1);
  near(healthy_fabric.hop_bytes, 24 * e * 8);
  near(healthy_fabric.degraded_hop_bytes, 0);
  JobCost across = job_cost(ix, on01, L(8, 1, 8), params());
  near(across.hop_bytes, 28 * e * 8);
  near(across.ideal_hop_bytes, 24 * e * 8);
  near(across.degraded_hop_bytes, 4 * e * 8);
  near(across.ratio, 28.0 / 24);
  assert_int_equal(across.dp.at_ideal, across.dp.groups);  // the span is ideal; the cable is not
  // The same job on two healthy leaves costs what it costs on the healthy fabric.
  JobCost healthy_pair = job_cost(ix, on12, L(8, 1, 8), params());
  near(healthy_pair.hop_bytes, healthy_fabric.hop_bytes);
  near(healthy_pair.ratio, 1);
  assert_true(across.ratio > healthy_pair.ratio);
  // A job inside the degraded leaf never uses its uplinks.
  JobCost inside = job_cost(ix, {0, 1, 2, 3}, L(8, 1, 4), params());
  JobCost inside_nominal = job_cost(nix, {0, 1, 2, 3}, L(8, 1, 4), params());
  near(inside.hop_bytes, inside_nominal.hop_bytes);
  near(inside.ratio, 1);
  near(inside.degraded_hop_bytes, 0);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_weights),   cmocka_unit_test(test_dp_ring_in_one_leaf),
      cmocka_unit_test(test_dp_ring_split), cmocka_unit_test(test_pp_chain),
      cmocka_unit_test(test_within_node), cmocka_unit_test(test_mixed_megatron),
      cmocka_unit_test(test_uplink_factors), cmocka_unit_test(test_degraded_leaf_cost),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
