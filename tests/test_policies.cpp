// SPDX-License-Identifier: GPL-2.0-or-later
// corelib's named placement policies through their one interface, on a fragmented 8 x 8 fat tree
// (leaves 0, 1, 2 have 5, 5, 3 free: hosts 3-7, 11-15, 21-23): each policy's choice, refusals and unknown names.
#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmocka_cxx.hpp"
#include "generator.hpp"
#include "policies.hpp"

using namespace topoaware;

namespace {

struct Fixture {
  Topology topo;
  std::unique_ptr<TopoIndex> ix;
  SlurmFabricView view;
};

const Fixture &fx() {
  static Fixture *f = [] {
    auto *x = new Fixture;
    FatTreeSpec s;
    s.levels = 2;
    s.leaves = 8;
    s.hosts_per_leaf = 8;
    s.spines = 4;
    s.uplinks_per_leaf = 4;
    Fabric fab = generate_fat_tree(s);
    fab.finish();
    x->topo = classify(fab, {});
    x->ix = std::make_unique<TopoIndex>(x->topo);
    build_slurm_view(*x->ix, x->view);
    return x;
  }();
  return *f;
}

std::vector<uint8_t> free_553() {
  std::vector<uint8_t> f(64, 0);
  for (int h : {3, 4, 5, 6, 7, 11, 12, 13, 14, 15, 21, 22, 23}) f[size_t(h)] = 1;
  return f;
}

PolicyRequest request(uint32_t pp, uint32_t dp) {
  PolicyRequest r;
  r.job.nodes = pp * dp;
  r.job.gpus_per_node = 8;
  r.job.layout.tp = 8;
  r.job.layout.pp = pp;
  r.job.layout.dp = dp;
  return r;
}

std::vector<int> run(const char *name, const PolicyRequest &req, const std::vector<uint8_t> &free, bool *ok) {
  auto p = make_placement_policy(name, *fx().ix, fx().view);
  assert_non_null(p.get());
  assert_string_equal(p->name(), name);
  PolicyChoice c;
  *ok = p->place(req, free, c);
  return c.nodes;
}

void test_names(void **) {
  const auto &n = placement_policy_names();
  assert_int_equal(n.size(), 4);
  for (const auto &name : n) assert_non_null(make_placement_policy(name, *fx().ix, fx().view).get());
  assert_null(make_placement_policy("best-fit", *fx().ix, fx().view).get());
  // Without a Slurm view (slurmctld builds none): only the policies that need none.
  assert_non_null(make_placement_policy("first-fit", *fx().ix).get());
  assert_non_null(make_placement_policy("topoaware", *fx().ix).get());
  assert_null(make_placement_policy("slurm-tree", *fx().ix).get());
  assert_null(make_placement_policy("slurm-block", *fx().ix).get());
}

void test_view(void **) {
  const SlurmFabricView &v = fx().view;
  assert_int_equal(v.sw.size(), 9);  // 8 leaves + root
  assert_int_equal(v.blocks.size(), 8);
  assert_int_equal(v.bblock_node_cnt, 8);
  for (int b = 0; b < 8; ++b)
    for (int h : v.blocks[size_t(b)]) assert_int_equal(h / 8, b);
}

void test_choices_on_553(void **) {
  const auto free = free_553();
  const PolicyRequest req = request(2, 4);
  bool ok = false;
  // first-fit: the first 8 free hosts in node-table order.
  assert_true(run("first-fit", req, free, &ok) == std::vector<int>({3, 4, 5, 6, 7, 11, 12, 13}) && ok);
  // slurm-tree: 5 + 3, the tightest leaf for the remainder (as real slurmctld 22.05 chose).
  assert_true(run("slurm-tree", req, free, &ok) == std::vector<int>({3, 4, 5, 6, 7, 21, 22, 23}) && ok);
  // slurm-block: no base block holds 8 free and no aligned pair of blocks is whole: refused.
  run("slurm-block", req, free, &ok);
  assert_false(ok);
  // topoaware, strict: the job's own ideal, 4 + 4 on the two leaves with 5 free, each DP ring of 4
  // inside one leaf.
  PolicyRequest strict = req;
  strict.mode = PlaceMode::Strict;
  std::vector<int> t = run("topoaware", strict, free, &ok);
  assert_true(ok);
  assert_int_equal(t.size(), 8);
  std::set<int> leaves;
  for (int h : t) leaves.insert(h / 8);
  assert_true(leaves == std::set<int>({0, 1}));
  for (size_t r = 0; r < 8; r += 4)  // consecutive ranks of one ring share a leaf
    for (size_t k = 1; k < 4; ++k) assert_int_equal(t[r + k] / 8, t[r] / 8);
  // topoaware, prefer: trades that for the free pool (holes rank above split rings) and takes 5 + 3
  // like Slurm's tree best fit, leaving one leaf with 5 free instead of two with 1.
  t = run("topoaware", req, free, &ok);
  assert_true(ok);
  std::vector<int> per_leaf(8, 0);
  for (int h : t) per_leaf[size_t(h / 8)]++;
  std::sort(per_leaf.rbegin(), per_leaf.rend());
  assert_int_equal(per_leaf[0], 5);
  assert_int_equal(per_leaf[1], 3);
}

void test_too_few_nodes_refused(void **) {
  const auto free = free_553();
  for (const auto &name : placement_policy_names()) {
    bool ok = true;
    run(name.c_str(), request(2, 8), free, &ok);  // 16 > 13 free
    assert_false(ok);
  }
}

// Slurm's view (the select plugin's question): topoaware answers it as the engine does on the
// same bitmap, here with node-table index = 63 - host so that the two numberings differ; the
// Slurm-like policies refuse it (they stand for cons_tres itself).
void test_slurm_view(void **) {
  const auto free = free_553();
  std::vector<std::string> names;
  for (int i = 63; i >= 0; --i) names.push_back(fx().topo.hosts[size_t(i)].name);
  const NodeMap map(*fx().ix, names);
  uint64_t usable = 0;
  std::vector<uint16_t> gpus(64, 0);
  for (int h = 0; h < 64; ++h)
    if (free[size_t(h)]) usable |= uint64_t(1) << (63 - h), gpus[size_t(63 - h)] = 8;
  PolicyRequest req = request(2, 4);
  SlurmPolicyRequest q;
  q.job = &req.job;
  q.map = &map;
  q.usable = &usable;
  q.nbits = 64;
  q.free_gpus = gpus.data();
  for (PlaceMode mode : {PlaceMode::Strict, PlaceMode::Prefer}) {
    q.mode = mode;
    PlaceResult via_policy, direct;
    auto p = make_placement_policy("topoaware", *fx().ix);
    const PlaceStatus s = p->place_slurm(q, via_policy);
    Placer placer(*fx().ix);
    assert_int_equal(int(s), int(placer.place_slurm(map, &usable, 64, gpus.data(), req.job, mode, direct)));
    // strict: 4 + 4, ideal; prefer: 5 + 3 as in test_choices_on_553, one DP ring split
    assert_int_equal(int(s), int(mode == PlaceMode::Strict ? PlaceStatus::Ideal : PlaceStatus::Fallback));
    assert_true(via_policy.nodes == direct.nodes && via_policy.slurm == direct.slurm);
    assert_int_equal(via_policy.nodes.size(), 8);
    for (size_t i = 0; i < 8; ++i) assert_int_equal(via_policy.slurm[i], 63 - via_policy.nodes[i]);
    // and as place() answers on the same free hosts
    PolicyRequest r = req;
    r.mode = mode;
    PolicyChoice c;
    assert_true(p->place(r, free, c));
    assert_true(c.nodes == via_policy.nodes);
    assert_int_equal(c.candidates, via_policy.candidates);
    assert_int_equal(c.quality.leaf_groups, via_policy.quality.leaf_groups);
  }
  for (const char *name : {"first-fit", "slurm-tree", "slurm-block"}) {
    PlaceResult out;
    bool threw = false;
    try {
      make_placement_policy(name, *fx().ix, fx().view)->place_slurm(q, out);
    } catch (const std::logic_error &) {
      threw = true;
    }
    assert_true(threw);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_view),
      cmocka_unit_test(test_choices_on_553),
      cmocka_unit_test(test_too_few_nodes_refused),
      cmocka_unit_test(test_slurm_view),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
