// SPDX-License-Identifier: GPL-2.0-or-later
// Layout parsing, validation and request completion: every error path, and the messages say
// what would work.
#include <cstring>
#include <string>
#include <vector>

#include "cmocka_cxx.hpp"
#include "layout.hpp"

using namespace topoaware;

namespace {

// Runs f, which must throw LayoutError whose message contains `part`.
template <class F>
void expect_error(F f, const char *part) {
  try {
    f();
  } catch (const LayoutError &e) {
    if (!std::strstr(e.what(), part)) {
      print_error("message '%s' lacks '%s'\n", e.what(), part);
      fail();
    }
    return;
  }
  print_error("no error, expected one containing '%s'\n", part);
  fail();
}

Layout L(uint32_t tp, uint32_t pp, uint32_t dp, uint32_t cp = 1, uint32_t ep = 1) {
  Layout l;
  l.tp = tp;
  l.pp = pp;
  l.dp = dp;
  l.cp = cp;
  l.ep = ep;
  return l;
}

void test_parse_axis_ok(void **) {
  assert_int_equal(parse_axis("tp", "8"), 8);
  assert_int_equal(parse_axis("tp", "1"), 1);
  assert_int_equal(parse_axis("dp", "65536"), 65536);
}

void test_parse_axis_errors(void **) {
  expect_error([] { parse_axis("tp", ""); }, "tp needs a value");
  expect_error([] { parse_axis("tp", "0"); }, "at least 1");
  expect_error([] { parse_axis("tp", "-8"); }, "not a whole number");
  expect_error([] { parse_axis("tp", "+8"); }, "not a whole number");
  expect_error([] { parse_axis("tp", " 8"); }, "not a whole number");
  expect_error([] { parse_axis("tp", "8 "); }, "not a whole number");
  expect_error([] { parse_axis("tp", "0x8"); }, "leading zeros");
  expect_error([] { parse_axis("tp", "08"); }, "leading zeros");
  expect_error([] { parse_axis("tp", "8.0"); }, "not a whole number");
  expect_error([] { parse_axis("tp", "eight"); }, "decimal digits only");
  expect_error([] { parse_axis("dp", "65537"); }, "at most 65536");
  expect_error([] { parse_axis("dp", "99999999999999999999999"); }, "too large");
}

void test_rank_order_names(void **) {
  assert_true(parse_rank_order("tp-cp-ep-dp-pp") == RankOrder::TpCpEpDpPp);
  assert_true(parse_rank_order("tp-pp-dp") == RankOrder::TpPpDp);
  assert_string_equal(rank_order_name(RankOrder::TpPpDp), "tp-pp-dp");
  expect_error([] { parse_rank_order("tp-dp-pp"); }, "use tp-cp-ep-dp-pp");
  expect_error([] { parse_rank_order(""); }, "unknown rank order");
}

void test_parse_layout(void **) {
  Layout l = parse_layout("tp=8,pp=4,dp=16");
  assert_true(l == L(8, 4, 16));
  l = parse_layout("tp=2,cp=2,ep=4,dp=8,pp=2,rank-order=tp-pp-dp");
  assert_int_equal(l.cp, 2);
  assert_int_equal(l.ep, 4);
  assert_true(l.order == RankOrder::TpPpDp);
  assert_true(parse_layout(to_string(l)) == l);  // canonical text round-trips
  expect_error([] { parse_layout(""); }, "empty layout");
  expect_error([] { parse_layout("tp=8,,dp=2"); }, "not key=value");
  expect_error([] { parse_layout("tp=8,"); }, "not key=value");
  expect_error([] { parse_layout("tp8"); }, "not key=value");
  expect_error([] { parse_layout("tp=8,tp=4"); }, "given twice");
  expect_error([] { parse_layout("tp=8,xp=4"); }, "unknown layout key 'xp'");
  expect_error([] { parse_layout("tp=8, dp=4"); }, "unknown layout key ' dp'");
  expect_error([] { parse_layout("tp=8,dp=-4"); }, "dp=-4 is not a whole number");
}

void test_set_option(void **) {
  Layout l;
  set_layout_option(l, "ep", "2");
  set_layout_option(l, "order", "tp-pp-dp");
  assert_int_equal(l.ep, 2);
  assert_true(l.order == RankOrder::TpPpDp);
  expect_error([&] { set_layout_option(l, "mode", "strict"); }, "unknown layout key");
}

void test_validate_layout(void **) {
  validate_layout(L(8, 4, 16));
  validate_layout(L(1, 1, 16, 2, 32));  // ep = cp*dp
  expect_error([] { validate_layout(L(8, 1, 6, 1, 4)); }, "ep=4 must divide cp*dp = 6");
  expect_error([] { validate_layout(L(8, 1, 6, 1, 4)); }, "use ep=1, 2, 3 or 6");
  expect_error([] { validate_layout(L(0, 1, 1)); }, "tp=0: must be at least 1");
  expect_error([] { validate_layout(L(1, 1, 70000)); }, "dp=70000 is too large");
  expect_error([] { validate_layout(L(1024, 1024, 32)); }, "exceeds the limit of 16777216");
  // Four axes at their bound multiply to exactly 2^64: the world size must not wrap to 0 (which
  // passed the limit and reached the engine as a layout of no GPUs).
  assert_int_equal(L(65536, 65536, 65536, 65536).world(), UINT64_MAX);
  assert_int_equal(L(65536, 65536, 65536, 32768).world(), uint64_t(1) << 63);
  expect_error([] { validate_layout(L(65536, 65536, 65536, 65536)); }, "= 2^64 or more GPUs exceeds the limit");
}

void test_validate_tp(void **) {
  validate_tp_fits(L(8, 1, 1), 8);
  validate_tp_fits(L(2, 1, 1), 8);
  expect_error([] { validate_tp_fits(L(16, 1, 1), 8); },
               "tp=16 needs 16 GPUs in one NVLink domain but nodes have 8 GPUs; use tp=8 or less");
  expect_error([] { validate_tp_fits(L(3, 1, 1), 8); }, "tp=3 does not divide the 8 GPUs per node");
  expect_error([] { validate_tp_fits(L(3, 1, 1), 8); }, "use tp=1, 2, 4 or 8");
  expect_error([] { validate_tp_fits(L(1, 1, 1), 0); }, "nodes have no GPUs");
}

void test_complete_derives(void **) {
  // sbatch --tp=8 --pp=4 --dp=16 on 8-GPU nodes: 64 nodes x 8 GPUs x 8 tasks, 512 tasks.
  Request r = complete_request(L(8, 4, 16), Request{}, 8);
  assert_int_equal(r.nodes, 64);
  assert_int_equal(r.gpus_per_node, 8);
  assert_int_equal(r.ntasks_per_node, 8);
  assert_int_equal(r.ntasks, 512);
  assert_int_equal(r.gpus, 512);
  // world smaller than a node: one node with 4 GPUs
  r = complete_request(L(2, 1, 2), Request{}, 8);
  assert_int_equal(r.nodes, 1);
  assert_int_equal(r.gpus_per_node, 4);
  // world 12 with tp=4 on 8-GPU nodes: 3 nodes x 4 GPUs (whole TP groups, whole nodes)
  r = complete_request(L(4, 1, 3), Request{}, 8);
  assert_int_equal(r.nodes, 3);
  assert_int_equal(r.gpus_per_node, 4);
  // consistent request given in full is accepted as is
  Request full{64, 8, 512, 8, 512};
  r = complete_request(L(8, 4, 16), full, 8);
  assert_int_equal(r.nodes, 64);
  // -N alone gives the GPUs per node
  Request n;
  n.nodes = 64;
  r = complete_request(L(4, 4, 16), n, 8);
  assert_int_equal(r.gpus_per_node, 4);
  assert_int_equal(r.ntasks, 256);
}

void test_complete_errors(void **) {
  const Layout big = L(8, 4, 16);
  expect_error([&] { Request q; q.nodes = 10; complete_request(big, q, 8); }, "-N 10 cannot split evenly");
  expect_error([&] { Request q; q.nodes = 10; complete_request(big, q, 8); }, "; use -N 64");
  expect_error([&] { Request q; q.nodes = 10; complete_request(L(4, 4, 16), q, 8); }, "use -N 32 or -N 64");
  expect_error([&] { Request q; q.nodes = 32; complete_request(big, q, 8); },
               "-N 32 would need 16 GPUs per node");
  expect_error([&] { Request q; q.nodes = 32; complete_request(big, q, 8); }, "use -N 64");
  expect_error([&] { Request q; q.nodes = 32; q.gpus_per_node = 8; complete_request(big, q, 8); },
               "-N 32 but the layout needs 512 GPUs = 64 nodes x 8 GPUs; use -N 64");
  expect_error(
      [&] {
        Request q;
        q.nodes = 256;
        complete_request(L(8, 1, 128), q, 0);
      },
      "-N 256 gives 4 GPUs per node, which does not hold whole TP groups of tp=8");
  expect_error([&] { Request q; q.gpus_per_node = 16; complete_request(big, q, 8); },
               "--gpus-per-node=16 but the partition's nodes have 8 GPUs");
  expect_error([&] { Request q; q.gpus_per_node = 4; complete_request(big, q, 8); },
               "tp=8 needs 8 GPUs in one NVLink domain but the job asks for 4 GPUs per node (--gpus-per-node=4)");
  expect_error(
      [&] {
        Request q;
        q.gpus_per_node = 6;
        complete_request(L(4, 1, 6), q, 8);
      },
      "tp=4 does not divide the 6");
  expect_error([&] { Request q; q.ntasks_per_node = 16; complete_request(big, q, 8); },
               "--ntasks-per-node=16 needs one GPU per task but nodes have 8");
  expect_error([&] { Request q; q.ntasks_per_node = 4; complete_request(big, q, 8); }, "--ntasks-per-node=4)");
  expect_error([&] { Request q; q.ntasks_per_node = 4; q.gpus_per_node = 8; complete_request(big, q, 8); },
               "--ntasks-per-node=4 but the layout puts 8 ranks on each node");
  expect_error([&] { Request q; q.ntasks = 256; complete_request(big, q, 8); },
               "--ntasks=256 but the layout has 512 ranks");
  expect_error(
      [&] {
        Request q;
        q.gpus = 256;
        complete_request(big, q, 8);
      },
      "--gpus=256 but the layout needs 512 GPUs");
  expect_error([&] { complete_request(big, Request{}, 0); }, "give --gpus-per-node or -N");
  expect_error([&] { complete_request(L(16, 1, 1), Request{}, 8); }, "tp=16 needs 16 GPUs");
  expect_error([&] { complete_request(L(8, 1, 6, 1, 4), Request{}, 8); }, "ep=4 must divide");
  // world not a multiple of the GPUs per node: suggests dp values that are
  expect_error([&] { Request q; q.gpus_per_node = 8; complete_request(L(2, 1, 3), q, 8); },
               "not a whole number of nodes of 8 GPUs; use dp=4");
  expect_error([&] { Request q; q.gpus_per_node = 8; complete_request(L(2, 1, 5), q, 8); }, "use dp=4 or dp=8");
  // A partition of mixed nodes (count 0) bounds nothing: more than 1024 GPUs per node is refused
  // with the option to change, before it reaches Slurm's 16-bit task count.
  expect_error([&] { Request q; q.gpus_per_node = 65536; complete_request(L(8, 1, 8192), q, 0); },
               "65536 GPUs per node (one task each) is more than the 1024 per node topoaware accepts; use "
               "--gpus-per-node=N with the GPUs of one node, at most 1024");
  expect_error([&] { Request q; q.nodes = 2; complete_request(L(8, 1, 8192), q, 0); },
               "32768 GPUs per node (one task each) is more than the 1024 per node topoaware accepts; use -N 64 or more");
  expect_error([&] { Request q; q.ntasks_per_node = 2048; complete_request(L(8, 1, 256), q, 0); },
               "use --ntasks-per-node=1024 or less");
  {
    Request q;
    q.gpus_per_node = 1024;  // at the bound: accepted
    assert_int_equal(complete_request(L(8, 1, 256), q, 0).nodes, 2);
  }
}

// Multi-node NVLink domains (NVL72: 18 trays of 4 GPUs in one domain).
void test_validate_tp_nvlink(void **) {
  const std::vector<uint32_t> nvl72{18, 18}, pairs{2, 2, 2};
  validate_tp_fits(L(8, 1, 1), 4, nvl72);   // 2 nodes of one domain
  validate_tp_fits(L(72, 1, 1), 4, nvl72);  // the whole domain
  validate_tp_fits(L(12, 1, 1), 4, nvl72);  // 3 nodes: 18 splits into 6 groups
  validate_tp_fits(L(16, 1, 1), 4, nvl72);  // 4 nodes: 4 groups in a domain, 2 trays left for other jobs
  validate_tp_fits(L(4, 1, 1), 4, nvl72);   // inside a node, as always
  validate_tp_fits(L(8, 1, 1), 4, pairs);
  assert_int_equal(tp_group_nodes(L(16, 1, 1), 4), 4);
  assert_int_equal(tp_group_nodes(L(4, 1, 1), 4), 1);
  assert_int_equal(tp_group_nodes(L(2, 1, 1), 4), 1);
  // tp=76 is 19 nodes: more than a domain; the sizes that fit are named.
  expect_error([&] { validate_tp_fits(L(76, 1, 1), 4, nvl72); },
               "tp=76 spans 19 nodes of 4 GPUs, which must lie in one NVLink domain; the largest NVLink domain "
               "here has 72 GPUs (18 nodes of 4): use tp=1, 2 or 4, or a multiple of 4 up to 72 (whole nodes of "
               "one NVLink domain)");
  expect_error([&] { validate_tp_fits(L(10, 1, 1), 4, nvl72); }, "not a multiple of 4");
  // tp=16 where domains are 2 nodes: at most tp=8.
  expect_error([&] { validate_tp_fits(L(16, 1, 1), 4, pairs); },
               "the largest NVLink domain here has 8 GPUs (2 nodes of 4): use tp=1, 2 or 4, or a multiple of 4 up "
               "to 8");
  expect_error([&] { validate_tp_fits(L(144, 1, 1), 4, nvl72); }, "tp=144 spans 36 nodes of 4 GPUs");
  // not a multiple of a node: a node would hold parts of two groups
  expect_error([&] { validate_tp_fits(L(6, 1, 1), 4, nvl72); },
               "tp=6 is more than the 4 GPUs of a node but not a multiple of 4");
  // the partition's share of a domain counts (9 nodes of a domain: tp=36 fits, tp=40 does not)
  validate_tp_fits(L(12, 1, 1), 4, {9});
  validate_tp_fits(L(8, 1, 1), 4, {9});  // 4 pairs, one tray left for another job
  validate_tp_fits(L(36, 1, 1), 4, {9});
  expect_error([&] { validate_tp_fits(L(40, 1, 1), 4, {9}); }, "(9 nodes of 4): use tp=1, 2 or 4, or a multiple of 4 up to 36");
  // no multi-node domain: today's message
  expect_error([&] { validate_tp_fits(L(8, 1, 1), 4, {}); },
               "tp=8 needs 8 GPUs in one NVLink domain but nodes have 4 GPUs; use tp=4 or less");
}

void test_complete_nvlink(void **) {
  const std::vector<uint32_t> nvl72{18, 18};
  // tp=8, dp=4 on 4-GPU trays: 8 nodes x 4 GPUs (each TP group 2 nodes of a domain)
  Request r = complete_request(L(8, 1, 4), Request{}, 4, nvl72);
  assert_int_equal(r.nodes, 8);
  assert_int_equal(r.gpus_per_node, 4);
  assert_int_equal(r.ntasks, 32);
  assert_int_equal(r.ntasks_per_node, 4);
  // tp=72: one node per ... 18 nodes, the whole domain
  r = complete_request(L(72, 1, 1), Request{}, 4, nvl72);
  assert_int_equal(r.nodes, 18);
  // -N and --gpus-per-node given consistently
  Request q;
  q.nodes = 8;
  r = complete_request(L(8, 1, 4), q, 4, nvl72);
  assert_int_equal(r.gpus_per_node, 4);
  q = Request{};
  q.gpus_per_node = 4;
  r = complete_request(L(8, 2, 2), q, 4, nvl72);
  assert_int_equal(r.nodes, 8);
  q = Request{};
  q.ntasks_per_node = 4;
  r = complete_request(L(8, 1, 1), q, 4, nvl72);
  assert_int_equal(r.nodes, 2);
  // a TP group spanning nodes takes all GPUs of each
  expect_error([&] { Request g; g.gpus_per_node = 2; complete_request(L(8, 1, 1), g, 4, nvl72); },
               "a TP group spans the nodes of an NVLink domain only when it uses all 4 GPUs of each");
  expect_error([&] { Request g; g.nodes = 8; complete_request(L(8, 1, 1), g, 4, nvl72); },
               "-N 8 gives 1 GPUs per node, which does not hold whole TP groups of tp=8");
  expect_error([&] { complete_request(L(80, 1, 2), Request{}, 4, nvl72); }, "must lie in one NVLink domain");
  // without domains nothing changes
  expect_error([&] { complete_request(L(8, 1, 4), Request{}, 4); }, "tp=8 needs 8 GPUs in one NVLink domain");
  expect_error([&] { complete_request(L(8, 1, 4), Request{}, 4, {}); }, "use tp=4 or less");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_axis_ok),    cmocka_unit_test(test_parse_axis_errors),
      cmocka_unit_test(test_rank_order_names), cmocka_unit_test(test_parse_layout),
      cmocka_unit_test(test_set_option),       cmocka_unit_test(test_validate_layout),
      cmocka_unit_test(test_validate_tp),      cmocka_unit_test(test_complete_derives),
      cmocka_unit_test(test_complete_errors),  cmocka_unit_test(test_validate_tp_nvlink),
      cmocka_unit_test(test_complete_nvlink),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
