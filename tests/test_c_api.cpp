// C API of the engine: a topology through its JSON text, Slurm's node table in its own order,
// placement and rank order through plain C types, errors as messages.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cmocka_cxx.hpp"
#include "engine_topologies.hpp"
#include "topoaware_c.h"
#include "topology_json.hpp"

namespace {

topoaware_topo_t *load(char *err, size_t len) {
  topoaware::Topology t = enginetest::make_topology(0, 8, 8);
  const std::string json = topoaware::to_json(t);
  return topoaware_topo_from_json(json.c_str(), err, len);
}

topoaware_layout_t layout(uint32_t tp, uint32_t pp, uint32_t dp) {
  topoaware_layout_t l;
  l.tp = tp; l.cp = 1; l.ep = 1; l.dp = dp; l.pp = pp;
  l.order = TOPOAWARE_ORDER_TP_CP_EP_DP_PP;
  return l;
}

void test_place_and_order(void **) {
  char err[1024] = "";
  topoaware_topo_t *topo = load(err, sizeof err);
  if (!topo) print_error("%s\n", err);
  assert_non_null(topo);
  assert_int_equal(topoaware_topo_hosts(topo), 64);
  // node table in reverse name order
  std::vector<std::string> names;
  for (int i = 64; i >= 1; --i) {
    char b[16];
    std::snprintf(b, sizeof b, "n%04d", i);
    names.push_back(b);
  }
  std::vector<const char *> cn;
  for (auto &s : names) cn.push_back(s.c_str());
  topoaware_placer_t *p = topoaware_placer_create(topo, cn.data(), uint32_t(cn.size()), err, sizeof err);
  assert_non_null(p);
  assert_int_equal(topoaware_placer_missing(p), 0);
  uint64_t words[1] = {0};
  std::vector<uint16_t> gpus(64, 8);
  // free: 5, 5 and 3 nodes on leaves 0, 1, 2 = n0001-5, n0009-13, n0017-19 = table 63-59, 55-51, 47-45
  for (int h : {0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 16, 17, 18}) words[0] |= uint64_t(1) << (63 - h);
  const topoaware_layout_t l = layout(8, 2, 4);
  uint32_t out[8];
  topoaware_place_info_t info;
  assert_int_equal(topoaware_place(p, words, 64, gpus.data(), 8, 8, &l, TOPOAWARE_MODE_STRICT, out, &info, err,
                                   sizeof err),
                   TOPOAWARE_PLACE_IDEAL);
  const uint32_t want[8] = {63, 62, 61, 60, 55, 54, 53, 52};  // n0001-4, n0009-12
  for (int i = 0; i < 8; ++i) assert_int_equal(out[i], want[i]);
  assert_int_equal(info.candidates, 13);
  assert_int_equal(info.segment_excess, 0);
  // the SPANK side: same node set in another order gives the same order and coordinates
  const char *set[8] = {"n0012", "n0001", "n0010", "n0003", "n0011", "n0002", "n0009", "n0004"};
  uint32_t order[8];
  assert_int_equal(topoaware_rank_order(topo, set, 8, &l, order, err, sizeof err), 0);
  for (int k = 0; k < 8; ++k) assert_string_equal(set[order[k]], names[want[k]].c_str());
  topoaware_rank_t ranks[8];
  uint32_t count = 0;
  assert_int_equal(topoaware_node_ranks(topo, set, 8, &l, "n0009", ranks, 8, &count, err, sizeof err), 0);
  assert_int_equal(count, 8);
  assert_int_equal(ranks[3].rank, 35);  // node 4 of the order: ranks 32-39, pp 1, dp 0
  assert_int_equal(ranks[3].node_rank, 4);
  assert_int_equal(ranks[3].local_rank, 3);
  assert_int_equal(ranks[3].tp, 3);
  assert_int_equal(ranks[3].pp, 1);
  assert_int_equal(ranks[3].dp, 0);
  // errors come back as messages
  assert_int_equal(topoaware_node_ranks(topo, set, 8, &l, "n0099", ranks, 8, &count, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "not in the job's node list"));
  const char *bad[2] = {"n0001", "x1"};
  assert_int_equal(topoaware_rank_order(topo, bad, 2, &l, order, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "x1 is not in the topology"));
  const topoaware_layout_t tp16 = layout(16, 1, 4);
  assert_int_equal(topoaware_place(p, words, 64, gpus.data(), 8, 8, &tp16, TOPOAWARE_MODE_STRICT, out, &info, err,
                                   sizeof err),
                   TOPOAWARE_PLACE_ERROR);
  assert_non_null(std::strstr(err, "tp=16 needs 16 GPUs"));
  assert_int_equal(topoaware_place(p, words, 63, gpus.data(), 8, 8, &l, TOPOAWARE_MODE_STRICT, out, &info, err,
                                   sizeof err),
                   TOPOAWARE_PLACE_ERROR);
  assert_non_null(std::strstr(err, "rebuild it after a reconfigure"));
  words[0] = 0;
  assert_int_equal(topoaware_place(p, words, 64, gpus.data(), 8, 8, &l, TOPOAWARE_MODE_PREFER, out, &info, err,
                                   sizeof err),
                   TOPOAWARE_PLACE_NO_NODES);
  topoaware_rank_t one;
  assert_int_equal(topoaware_rank_coord(&l, 64, &one, err, sizeof err), -1);
  assert_int_equal(topoaware_rank_coord(&l, 63, &one, err, sizeof err), 0);
  assert_int_equal(one.pp, 1);
  assert_int_equal(one.dp, 3);
  topoaware_placer_free(p);
  assert_int_equal(topoaware_topo_rail_optimized(topo), 0);
  topoaware_topo_free(topo);
  {
    topoaware::Topology rails = enginetest::make_topology(0, 4, 8, 4);
    const std::string json = topoaware::to_json(rails);
    topoaware_topo_t *r = topoaware_topo_from_json(json.c_str(), err, sizeof err);
    assert_non_null(r);
    assert_int_equal(topoaware_topo_rail_optimized(r), 1);
    topoaware_topo_free(r);
  }
  assert_null(topoaware_topo_from_json("{", err, sizeof err));
  assert_true(err[0] != 0);
  assert_null(topoaware_topo_load("/nonexistent/topology.json", err, sizeof err));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_place_and_order)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
