// SPDX-License-Identifier: GPL-2.0-or-later
// Parts of a fabric that no path joins (TopoIndex islands) and the placement over them: a job goes
// inside one part, and a job that only both parts together could hold gets no block.
#include <cstring>
#include <string>
#include <vector>

#include "cmocka_cxx.hpp"
#include "engine_topologies.hpp"
#include "nvlink.hpp"
#include "outputs.hpp"
#include "placement.hpp"

using namespace topoaware;

namespace {

// 4 leaves x 2 hosts (n0001-n0008) in two parts: spine0 cabled to leaves 0 and 1, spine1 to
// leaves 2 and 3, and nothing between the spines.
Topology two_parts() {
  Topology t = enginetest::make_topology(0, 4, 2);
  for (int s = 0; s < 2; ++s) {
    Switch sw;
    sw.level = 2;
    sw.guid = 0x200000 + uint64_t(s);
    sw.name = "spine" + std::to_string(s);
    t.switches.push_back(sw);
    for (int l = 2 * s; l < 2 * s + 2; ++l) {
      Link link;
      link.a = t.switches[size_t(l)].guid;
      link.b = sw.guid;
      link.ports.push_back({100, 1 + l});
      link.width = 4;
      link.speed = LinkSpeed::HDR;
      t.links.push_back(link);
    }
  }
  return t;
}

Job ring(uint32_t dp) {
  Job j;
  j.layout.tp = 8;
  j.layout.dp = dp;
  j.gpus_per_node = 8;
  j.nodes = dp;
  return j;
}

struct Free {
  std::vector<int> hosts;
  std::vector<uint32_t> gpus;
  explicit Free(const std::vector<int> &h) : hosts(h), gpus(h.size(), 8) {}
};

void test_index(void **) {
  const Topology t = two_parts();
  const TopoIndex ix(t);
  assert_int_equal(ix.island_count(), 2);
  for (int h = 0; h < 8; ++h) assert_int_equal(ix.host_island(h), h < 4 ? 0 : 1);
  assert_int_equal(ix.island_size(0), 4);
  assert_int_equal(ix.island_size(1), 4);
  // The leaf groups had no pod (one "no pod" pod): it is split by part.
  assert_int_equal(ix.pod_count(), 2);
  for (int g = 0; g < 4; ++g) {
    assert_int_equal(ix.leaf_group_island(g), g < 2 ? 0 : 1);
    assert_int_equal(ix.leaf_group_pod(g), g < 2 ? 0 : 1);
  }
  assert_int_equal(ix.pod_island(0), 0);
  assert_int_equal(ix.pod_island(1), 1);

  // A spine between the two spines joins the parts: one part, one pod as before.
  Topology joined = two_parts();
  Switch core;
  core.level = 3;
  core.guid = 0x300000;
  core.name = "core";
  joined.switches.push_back(core);
  for (int s = 0; s < 2; ++s) {
    Link link;
    link.a = 0x200000 + uint64_t(s);
    link.b = core.guid;
    link.ports.push_back({200, 1 + s});
    joined.links.push_back(link);
  }
  const TopoIndex jx(joined);
  assert_int_equal(jx.island_count(), 1);
  assert_int_equal(jx.pod_count(), 1);

  // No switch-to-switch link recorded at all (a hand-built topology): nothing says the leaves are
  // apart, one part.
  const Topology bare = enginetest::make_topology(0, 4, 2);
  const TopoIndex bx(bare);
  assert_int_equal(bx.island_count(), 1);
  assert_int_equal(bx.island_size(0), 8);
}

void test_placement(void **) {
  const Topology t = two_parts();
  const TopoIndex ix(t);
  Placer pl(ix);
  PlaceResult r;
  for (PlaceMode mode : {PlaceMode::Prefer, PlaceMode::Strict}) {
    // 2 nodes fit one part (one leaf even).
    const Free all({0, 1, 2, 3, 4, 5, 6, 7});
    assert_true(pl.place(all.hosts.data(), all.gpus.data(), all.hosts.size(), ring(2), mode, r) ==
                PlaceStatus::Ideal);
    assert_int_equal(r.nodes.size(), 2);
    assert_int_equal(ix.host_island(r.nodes[0]), ix.host_island(r.nodes[1]));
    // 4 nodes: a whole part.
    assert_true(pl.place(all.hosts.data(), all.gpus.data(), all.hosts.size(), ring(4), mode, r) ==
                PlaceStatus::Ideal);
    assert_int_equal(r.nodes.size(), 4);
    for (int h : r.nodes) assert_int_equal(ix.host_island(h), ix.host_island(r.nodes[0]));
    // 6 nodes need both parts: no block, no nodes offered.
    assert_true(pl.place(all.hosts.data(), all.gpus.data(), all.hosts.size(), ring(6), mode, r) ==
                PlaceStatus::NoBlock);
    assert_true(r.nodes.empty());
    assert_int_equal(r.candidates, 8);
    // 3 free in each part: 6 candidates, but no part holds 4.
    const Free three({0, 1, 2, 5, 6, 7});
    assert_true(pl.place(three.hosts.data(), three.gpus.data(), three.hosts.size(), ring(4), mode, r) ==
                PlaceStatus::NoBlock);
    assert_true(r.nodes.empty());
    // 2 nodes with one free host per leaf: across the two leaves of one part (a fallback in
    // prefer mode), never one host of each part.
    const Free spread({0, 2, 4, 6});
    const PlaceStatus s = pl.place(spread.hosts.data(), spread.gpus.data(), spread.hosts.size(), ring(2), mode, r);
    assert_true(s == (mode == PlaceMode::Strict ? PlaceStatus::NoBlock : PlaceStatus::Fallback));
    assert_int_equal(r.nodes.size(), 2);
    assert_int_equal(ix.host_island(r.nodes[0]), ix.host_island(r.nodes[1]));
    // 3 nodes: the part with 2 free cannot, the other (3 free over its 2 leaves) can.
    const Free lopsided({0, 2, 4, 5, 6});
    assert_true(pl.place(lopsided.hosts.data(), lopsided.gpus.data(), lopsided.hosts.size(), ring(3), mode, r) ==
                PlaceStatus::Ideal);
    for (int h : r.nodes) assert_int_equal(ix.host_island(h), 1);
  }
}

// With NVLink domains (2 hosts of 4 GPUs each, n[0001-0002], ...): a tp=8 job of 2 domains goes to
// one part; with one domain free in each part it gets no block (not one domain of each part).
void test_nvlink(void **) {
  Topology t = two_parts();
  apply_nvlink_domains(t, synthetic_nvlink_domains(t, 2, 4), nullptr, nullptr);
  const TopoIndex ix(t);
  assert_true(ix.has_domains());
  Placer pl(ix);
  PlaceResult r;
  Job j;
  j.layout.tp = 8;
  j.layout.dp = 2;
  j.gpus_per_node = 4;
  j.nodes = 4;
  const std::vector<uint32_t> gpus(8, 4);
  const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  assert_true(pl.place(all.data(), gpus.data(), all.size(), j, PlaceMode::Prefer, r) == PlaceStatus::Ideal);
  assert_int_equal(r.nodes.size(), 4);
  for (int h : r.nodes) assert_int_equal(ix.host_island(h), ix.host_island(r.nodes[0]));
  const std::vector<int> split = {2, 3, 4, 5};
  for (PlaceMode mode : {PlaceMode::Prefer, PlaceMode::Strict}) {
    assert_true(pl.place(split.data(), gpus.data(), split.size(), j, mode, r) == PlaceStatus::NoBlock);
    assert_true(r.nodes.empty());
  }
}

void test_summary(void **) {
  const Topology t = two_parts();
  const std::string s = to_summary(t);
  assert_non_null(std::strstr(s.c_str(), "2 parts with no path between them: 4 hosts (n[0001-0004]), 4 hosts "
                                         "(n[0005-0008])"));
  const Topology bare = enginetest::make_topology(0, 4, 2);
  assert_null(std::strstr(to_summary(bare).c_str(), "parts with no path"));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_index),
      cmocka_unit_test(test_placement),
      cmocka_unit_test(test_nvlink),
      cmocka_unit_test(test_summary),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
