/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The submit-time C API (capi/layout_c.h) from C, as the plugins use it, and the plugins' strict
 * reading of spank_job_env (plugins/common/ta_env.c): every error path, with the message that the
 * user will see. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout_c.h"
#include "ta_env.h"

static char err[TOPOAWARE_ERR_LEN];

#define assert_contains(hay, needle)                                         \
  do {                                                                       \
    if (!strstr((hay), (needle))) {                                          \
      print_error("message '%s' lacks '%s'\n", (hay), (needle));             \
      fail();                                                                \
    }                                                                        \
  } while (0)

/* set(name, value) must fail with a message containing `part` and leave the options unchanged. */
static void set_fails(const char *name, const char *value, const char *part) {
  topoaware_options_t o, before;
  topoaware_options_init(&o);
  assert_int_equal(topoaware_options_set(&o, "tp", "2", err, sizeof(err)), 0);
  before = o;
  err[0] = '\0';
  assert_int_equal(topoaware_options_set(&o, name, value, err, sizeof(err)), -1);
  assert_contains(err, part);
  assert_memory_equal(&o, &before, sizeof(o));
}

static void test_defaults(void **state) {
  topoaware_options_t o;
  (void)state;
  topoaware_options_init(&o);
  assert_int_equal(o.set, 0);
  assert_int_equal(o.layout.tp, 1);
  assert_int_equal(o.layout.pp, 1);
  assert_int_equal(o.layout.order, TOPOAWARE_ORDER_TP_CP_EP_DP_PP);
  assert_int_equal(o.mode, TOPOAWARE_MODE_PREFER);
  assert_int_equal(o.max_wait, 3600);
  assert_int_equal(o.nccl_hints, TOPOAWARE_HINTS_AUTO);
  assert_int_equal(topoaware_options_has_layout(&o), 0);
  assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), 0);
}

/* The select plugin's GPUs per node: the world spread evenly over the nodes, or 0. */
static void test_gpus_per_node(void **state) {
  (void)state;
  topoaware_layout_t l = {8, 1, 1, 4, 2, TOPOAWARE_ORDER_TP_PP_DP}; /* world 64 */
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 8), 8);
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 16), 4);
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 64), 1);
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 3), 0);   /* does not divide */
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 128), 0); /* more nodes than GPUs */
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 0), 0);
  assert_int_equal(topoaware_layout_gpus_per_node(NULL, 8), 0);
  l.tp = 65536; l.dp = 2; l.pp = 1; /* 131072 GPUs on one node: over 65535 */
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 1), 0);
  /* The world size: four axes at their bound make 2^64, given as UINT64_MAX, not wrapped to 0. */
  {
    topoaware_layout_t big = {65536, 65536, 1, 65536, 65536, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
    assert_true(topoaware_layout_world(&big) == UINT64_MAX);
    assert_int_equal(topoaware_layout_gpus_per_node(&big, 1), 0);
    assert_true(topoaware_layout_world(&l) == 131072); /* 65536*1*2*1 */
    assert_true(topoaware_layout_world(NULL) == 0);
  }
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 2), 0); /* 65536 per node */
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 4), 32768);
  l.order = 99; /* an order the C enum does not have: no layout */
  assert_int_equal(topoaware_layout_gpus_per_node(&l, 4), 0);
}

static void test_set_every_option(void **state) {
  topoaware_options_t o;
  (void)state;
  topoaware_options_init(&o);
  assert_int_equal(topoaware_options_set(&o, "tp", "8", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_set(&o, "pp", "4", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_set(&o, "dp", "16", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_set(&o, "cp", "2", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_set(&o, "ep", "4", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_set(&o, "rank-order", "tp-pp-dp", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_set(&o, "topo-mode", "strict", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_set(&o, "topo-max-wait", "90s", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_set(&o, "nccl-hints", "print", err, sizeof(err)), 0);
  assert_int_equal(o.layout.tp, 8);
  assert_int_equal(o.layout.pp, 4);
  assert_int_equal(o.layout.dp, 16);
  assert_int_equal(o.layout.cp, 2);
  assert_int_equal(o.layout.ep, 4);
  assert_int_equal(o.layout.order, TOPOAWARE_ORDER_TP_PP_DP);
  assert_int_equal(o.mode, TOPOAWARE_MODE_STRICT);
  assert_int_equal(o.max_wait, 90);
  assert_int_equal(o.nccl_hints, TOPOAWARE_HINTS_PRINT);
  assert_int_equal(o.set, 0x1ff);
  assert_int_equal(topoaware_options_has_layout(&o), 1);
  assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), 0);
  /* The last source wins. */
  assert_int_equal(topoaware_options_set(&o, "tp", "4", err, sizeof(err)), 0);
  assert_int_equal(o.layout.tp, 4);
  assert_int_equal(topoaware_options_set(&o, "nccl-hints", "off", err, sizeof(err)), 0);
  assert_int_equal(o.nccl_hints, TOPOAWARE_HINTS_OFF);
  assert_int_equal(topoaware_options_set(&o, "nccl-hints", "auto", err, sizeof(err)), 0);
  assert_int_equal(o.nccl_hints, TOPOAWARE_HINTS_AUTO);
  assert_int_equal(topoaware_options_set(&o, "topo-mode", "prefer", err, sizeof(err)), 0);
  assert_int_equal(o.mode, TOPOAWARE_MODE_PREFER);
  assert_int_equal(topoaware_options_set(&o, "rank-order", "tp-cp-ep-dp-pp", err, sizeof(err)), 0);
  assert_int_equal(o.layout.order, TOPOAWARE_ORDER_TP_CP_EP_DP_PP);
}

static void test_set_errors(void **state) {
  (void)state;
  set_fails("tp", "", "tp needs a value");
  set_fails("tp", "0", "at least 1");
  set_fails("pp", "-1", "not a whole number");
  set_fails("dp", "1e3", "not a whole number");
  set_fails("cp", "08", "leading zeros");
  set_fails("ep", "65537", "at most 65536");
  set_fails("tp", "99999999999999999999999999", "too large");
  set_fails("rank-order", "pp-dp-tp", "use tp-cp-ep-dp-pp");
  set_fails("topo-mode", "lenient", "use strict");
  set_fails("topo-mode", "", "use strict");
  set_fails("nccl-hints", "on", "use auto, off or print");
  set_fails("topo-max-wait", "", "needs a value");
  set_fails("topo-max-wait", "m30", "does not start with a number");
  set_fails("topo-max-wait", "030m", "leading zeros");
  set_fails("topo-max-wait", "30x", "unknown unit");
  set_fails("topo-max-wait", "30 m", "unknown unit");
  set_fails("topo-max-wait", "31d", "more than 30 days");
  set_fails("topo-max-wait", "1234567890", "too long");
  set_fails("switches", "2", "unknown option 'switches'");
  set_fails("TP", "2", "unknown option");
  /* Values longer than 255 bytes are refused without parsing them. */
  char big[400];
  memset(big, '1', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  set_fails("dp", big, "longer than 255 bytes");
  /* A NULL value or name. */
  topoaware_options_t o;
  topoaware_options_init(&o);
  assert_int_equal(topoaware_options_set(&o, "tp", NULL, err, sizeof(err)), -1);
  assert_contains(err, "needs a value");
  assert_int_equal(topoaware_options_set(&o, NULL, "2", err, sizeof(err)), -1);
  assert_contains(err, "internal error");
  assert_int_equal(topoaware_options_set(NULL, "tp", "2", err, sizeof(err)), -1);
  assert_int_equal(topoaware_options_check(NULL, err, sizeof(err)), -1);
}

static void test_wait_units(void **state) {
  topoaware_options_t o;
  char buf[32];
  (void)state;
  topoaware_options_init(&o);
  static const struct {
    const char *in;
    uint32_t s;
    const char *out;
  } cases[] = {{"0", 0, "0"},     {"30", 1800, "30m"},       {"30m", 1800, "30m"}, {"90s", 90, "90s"},
               {"2h", 7200, "2h"}, {"1d", 86400, "1d"},       {"30d", 2592000, "30d"}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    assert_int_equal(topoaware_options_set(&o, "topo-max-wait", cases[i].in, err, sizeof(err)), 0);
    assert_int_equal(o.max_wait, cases[i].s);
    assert_int_equal(topoaware_wait_string(o.max_wait, buf, sizeof(buf)), 0);
    assert_string_equal(buf, cases[i].out);
  }
  assert_int_equal(topoaware_wait_string(1800, buf, 3), -1); /* "30m" needs 4 bytes */
  assert_string_equal(buf, "30");
}

static void test_check_whole(void **state) {
  topoaware_options_t o;
  (void)state;
  /* Options that need a layout. */
  const char *alone[][2] = {{"rank-order", "tp-pp-dp"}, {"topo-mode", "strict"}, {"topo-max-wait", "10m"}};
  for (int i = 0; i < 3; i++) {
    topoaware_options_init(&o);
    assert_int_equal(topoaware_options_set(&o, alone[i][0], alone[i][1], err, sizeof(err)), 0);
    assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), -1);
    assert_contains(err, alone[i][0]);
    assert_contains(err, "no layout is given");
    assert_contains(err, "--tp=8 --pp=4 --dp=16");
  }
  /* --nccl-hints alone is fine (no layout, nothing to place). */
  topoaware_options_init(&o);
  assert_int_equal(topoaware_options_set(&o, "nccl-hints", "off", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_has_layout(&o), 0);
  /* --topo-max-wait with --topo-mode=prefer. */
  topoaware_options_init(&o);
  topoaware_options_set(&o, "tp", "8", err, sizeof(err));
  topoaware_options_set(&o, "topo-mode", "prefer", err, sizeof(err));
  topoaware_options_set(&o, "topo-max-wait", "10m", err, sizeof(err));
  assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), -1);
  assert_contains(err, "--topo-mode=prefer never waits");
  /* Without --topo-mode it is fine (it applies when the partition's default is strict). */
  topoaware_options_init(&o);
  topoaware_options_set(&o, "tp", "8", err, sizeof(err));
  topoaware_options_set(&o, "topo-max-wait", "10m", err, sizeof(err));
  assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), 0);
  /* ep must divide cp*dp. */
  topoaware_options_init(&o);
  topoaware_options_set(&o, "dp", "6", err, sizeof(err));
  topoaware_options_set(&o, "ep", "4", err, sizeof(err));
  assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), -1);
  assert_contains(err, "ep=4 must divide cp*dp = 6");
  assert_contains(err, "use ep=1, 2, 3 or 6");
  /* World size above 2^24. */
  topoaware_options_init(&o);
  topoaware_options_set(&o, "tp", "8", err, sizeof(err));
  topoaware_options_set(&o, "dp", "65536", err, sizeof(err));
  topoaware_options_set(&o, "pp", "64", err, sizeof(err));
  assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), -1);
  assert_contains(err, "exceeds the limit of 16777216");
  /* A corrupted order value (not reachable through set) is caught, not trusted. */
  topoaware_options_init(&o);
  topoaware_options_set(&o, "tp", "8", err, sizeof(err));
  o.layout.order = 7;
  assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), -1);
  assert_contains(err, "bad rank order");
  /* Raw out-of-range axes (a caller that filled the struct itself). */
  topoaware_options_init(&o);
  o.set = TOPOAWARE_OPT_TP;
  o.layout.tp = 0;
  assert_int_equal(topoaware_options_check(&o, err, sizeof(err)), -1);
  assert_contains(err, "tp=0");
}

static void test_option_bits(void **state) {
  (void)state;
  assert_int_equal(topoaware_option_bit("tp"), TOPOAWARE_OPT_TP);
  assert_int_equal(topoaware_option_bit("topo-max-wait"), TOPOAWARE_OPT_MAX_WAIT);
  assert_int_equal(topoaware_option_bit("nccl-hints"), TOPOAWARE_OPT_NCCL_HINTS);
  assert_int_equal(topoaware_option_bit("order"), 0);
  assert_int_equal(topoaware_option_bit(""), 0);
  assert_int_equal(topoaware_option_bit(NULL), 0);
  assert_string_equal(topoaware_order_name(TOPOAWARE_ORDER_TP_PP_DP), "tp-pp-dp");
  assert_string_equal(topoaware_order_name(TOPOAWARE_ORDER_TP_CP_EP_DP_PP), "tp-cp-ep-dp-pp");
  assert_string_equal(topoaware_mode_name(TOPOAWARE_MODE_STRICT), "strict");
  assert_string_equal(topoaware_mode_name(TOPOAWARE_MODE_PREFER), "prefer");
}

static void test_layout_string(void **state) {
  topoaware_layout_t l = {8, 1, 1, 16, 4, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
  char buf[128], small[10];
  (void)state;
  assert_int_equal(topoaware_layout_string(&l, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "tp=8,cp=1,ep=1,dp=16,pp=4,rank-order=tp-cp-ep-dp-pp");
  assert_int_equal(topoaware_layout_string(&l, small, sizeof(small)), -1);
  assert_int_equal(strlen(small), sizeof(small) - 1); /* truncated and terminated */
  assert_int_equal(topoaware_layout_string(NULL, buf, sizeof(buf)), -1);
  assert_int_equal(topoaware_layout_string(&l, NULL, 0), -1);
}

static topoaware_layout_t L(uint32_t tp, uint32_t pp, uint32_t dp) {
  topoaware_layout_t l = {tp, 1, 1, dp, pp, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
  return l;
}

static void test_complete_ok(void **state) {
  topoaware_layout_t l = L(8, 4, 16);
  topoaware_request_t given = {0, 0, 0, 0, 0}, out;
  (void)state;
  /* sbatch --tp=8 --pp=4 --dp=16 on 8-GPU nodes: 64 nodes x 8 GPUs x 8 tasks. */
  assert_int_equal(topoaware_complete_request(&l, &given, 8, &out, NULL, err, sizeof(err)), 0);
  assert_int_equal(out.nodes, 64);
  assert_int_equal(out.gpus_per_node, 8);
  assert_int_equal(out.ntasks, 512);
  assert_int_equal(out.ntasks_per_node, 8);
  assert_int_equal(out.gpus, 512);
  /* With -N 128: 4 GPUs per node. */
  given.nodes = 128;
  assert_int_equal(topoaware_complete_request(&l, &given, 8, &out, NULL, err, sizeof(err)), -1);
  assert_contains(err, "tp=8"); /* 4 GPUs per node cannot hold tp=8 */
  l = L(2, 4, 16); /* 128 GPUs on -N 64: 2 per node */
  given.nodes = 64;
  assert_int_equal(topoaware_complete_request(&l, &given, 8, &out, NULL, err, sizeof(err)), 0);
  assert_int_equal(out.nodes, 64);
  assert_int_equal(out.gpus_per_node, 2);
  assert_int_equal(out.ntasks_per_node, 2);
}

/* Each failing request: the message and what it is about (so the plugin picks a fitting code). */
static void complete_fails(topoaware_layout_t l, topoaware_request_t given, uint32_t node_gpus, const char *part,
                           int kind) {
  topoaware_request_t out = {0, 0, 0, 0, 0};
  err[0] = '\0';
  int got = -1;
  assert_int_equal(topoaware_complete_request(&l, &given, node_gpus, &out, &got, err, sizeof(err)), -1);
  assert_contains(err, part);
  if (got != kind) {
    print_error("'%s' is of kind %d, expected %d\n", err, got, kind);
    fail();
  }
  assert_int_equal(out.nodes, 0); /* nothing written on error */
}

static void test_complete_errors(void **state) {
  const topoaware_request_t none = {0, 0, 0, 0, 0};
  topoaware_request_t r;
  (void)state;
  /* sbatch --tp=3 --gpus-per-node=8 */
  r = none;
  r.gpus_per_node = 8;
  complete_fails(L(3, 1, 1), r, 8, "tp=3 does not divide the 8 GPUs per node", TOPOAWARE_ERR_GPUS);
  complete_fails(L(16, 1, 1), none, 8, "use tp=8 or less", TOPOAWARE_ERR_GPUS);
  r = none;
  r.gpus_per_node = 16;
  complete_fails(L(8, 1, 2), r, 8, "--gpus-per-node=16 but the partition's nodes have 8", TOPOAWARE_ERR_GPUS);
  r = none;
  r.nodes = 3;
  complete_fails(L(8, 2, 1), r, 8, "cannot split evenly", TOPOAWARE_ERR_NODES);
  r.nodes = 1;
  complete_fails(L(8, 2, 1), r, 8, "-N 1 would need 16 GPUs per node", TOPOAWARE_ERR_NODES);
  r.nodes = 4;
  complete_fails(L(8, 2, 1), r, 8, "-N 4 gives 4 GPUs per node", TOPOAWARE_ERR_NODES);
  r = none;
  r.gpus_per_node = 8;
  r.nodes = 4;
  complete_fails(L(8, 2, 1), r, 8, "-N 4 but the layout needs 16 GPUs = 2 nodes", TOPOAWARE_ERR_NODES);
  r = none;
  r.ntasks = 10;
  complete_fails(L(8, 2, 1), r, 8, "--ntasks=10 but the layout has 16 ranks", TOPOAWARE_ERR_TASKS);
  r = none;
  r.ntasks_per_node = 16;
  complete_fails(L(8, 2, 1), r, 8, "--ntasks-per-node=16 needs one GPU per task", TOPOAWARE_ERR_TASKS);
  r = none;
  r.ntasks_per_node = 4;
  r.gpus_per_node = 8;
  complete_fails(L(8, 2, 1), r, 8, "--ntasks-per-node=4 but the layout puts 8 ranks", TOPOAWARE_ERR_TASKS);
  r = none;
  r.gpus = 8;
  complete_fails(L(8, 2, 1), r, 8, "--gpus=8 but the layout needs 16 GPUs", TOPOAWARE_ERR_GPUS);
  r = none;
  r.gpus_per_node = 8;
  complete_fails(L(4, 1, 3), r, 8, "not a whole number of nodes of 8 GPUs; use dp=2 or dp=4", TOPOAWARE_ERR_LAYOUT);
  complete_fails(L(8, 1, 1), none, 0, "give --gpus-per-node or -N", TOPOAWARE_ERR_GPUS);
  /* Bad layouts are caught here too (job_submit gets layouts from the API, not only from SPANK). */
  topoaware_layout_t bad = L(8, 1, 6);
  bad.ep = 4;
  complete_fails(bad, none, 8, "ep=4 must divide", TOPOAWARE_ERR_LAYOUT);
  bad = L(8, 1, 1);
  bad.order = 3;
  complete_fails(bad, none, 8, "bad rank order", TOPOAWARE_ERR_LAYOUT);
  /* NULL arguments. */
  topoaware_request_t out;
  topoaware_layout_t l = L(8, 1, 1);
  assert_int_equal(topoaware_complete_request(NULL, &none, 8, &out, NULL, err, sizeof(err)), -1);
  assert_int_equal(topoaware_complete_request(&l, NULL, 8, &out, NULL, err, sizeof(err)), -1);
  assert_int_equal(topoaware_complete_request(&l, &none, 8, NULL, NULL, err, sizeof(err)), -1);
  assert_contains(err, "missing argument");
}

/* The partition's nodes in multi-node NVLink domains (NVL72: 18 trays of 4 GPUs; a domain of one
 * node and an empty entry count as none). */
static void test_complete_nvlink(void **state) {
  const topoaware_request_t none = {0, 0, 0, 0, 0};
  const uint32_t nvl72[] = {18, 0, 1, 18};
  topoaware_request_t out = {0, 0, 0, 0, 0};
  int kind = -1;
  topoaware_layout_t l = L(8, 1, 4);
  (void)state;
  assert_int_equal(topoaware_complete_request_nvlink(&l, &none, 4, nvl72, 4, &out, &kind, err, sizeof(err)), 0);
  assert_int_equal(out.nodes, 8);
  assert_int_equal(out.gpus_per_node, 4);
  assert_int_equal(out.ntasks_per_node, 4);
  l = L(76, 1, 1);
  assert_int_equal(topoaware_complete_request_nvlink(&l, &none, 4, nvl72, 4, &out, &kind, err, sizeof(err)), -1);
  assert_contains(err, "the largest NVLink domain here has 72 GPUs (18 nodes of 4): use tp=1, 2 or 4, or a multiple of 4 up to 72");
  assert_int_equal(kind, TOPOAWARE_ERR_GPUS);
  /* no domains: as topoaware_complete_request */
  l = L(8, 1, 4);
  assert_int_equal(topoaware_complete_request_nvlink(&l, &none, 4, NULL, 0, &out, &kind, err, sizeof(err)), -1);
  assert_contains(err, "tp=8 needs 8 GPUs in one NVLink domain but nodes have 4 GPUs; use tp=4 or less");
  assert_int_equal(topoaware_complete_request_nvlink(&l, &none, 4, nvl72 + 1, 2, &out, &kind, err, sizeof(err)), -1);
  assert_contains(err, "use tp=4 or less");
}

static void test_small_error_buffer(void **state) {
  topoaware_options_t o;
  char tiny[8];
  (void)state;
  topoaware_options_init(&o);
  memset(tiny, 'x', sizeof(tiny));
  assert_int_equal(topoaware_options_set(&o, "tp", "zero", tiny, sizeof(tiny)), -1);
  assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
  /* errlen 0: nothing is written, still an error. */
  assert_int_equal(topoaware_options_set(&o, "tp", "zero", tiny, 0), -1);
  assert_int_equal(topoaware_options_set(&o, "tp", "zero", NULL, 0), -1);
}

/* ---- spank_job_env, as slurmctld hands it to job_submit ---- */

static int env_parse(const char *const *env, uint32_t n, topoaware_options_t *o) {
  return ta_options_from_env(o, (char *const *)env, n, err, sizeof(err));
}

static void test_env_ok(void **state) {
  topoaware_options_t o;
  (void)state;
  const char *env[] = {"FOO=bar",
                       "_SLURM_SPANK_OPTION_topoaware_tp=8",
                       "_SLURM_SPANK_OPTION_topoaware_pp=2",
                       "_SLURM_SPANK_OPTION_topoaware_rank_order=tp-pp-dp",
                       "_SLURM_SPANK_OPTION_topoaware_topo_mode=strict",
                       "_SLURM_SPANK_OPTION_topoaware_topo_max_wait=2h",
                       "_SLURM_SPANK_OPTION_topoaware_nccl_hints=print",
                       "_SLURM_SPANK_OPTION_other_tp=3",
                       NULL};
  assert_int_equal(env_parse(env, 9, &o), 0);
  assert_int_equal(o.layout.tp, 8);
  assert_int_equal(o.layout.pp, 2);
  assert_int_equal(o.layout.order, TOPOAWARE_ORDER_TP_PP_DP);
  assert_int_equal(o.mode, TOPOAWARE_MODE_STRICT);
  assert_int_equal(o.max_wait, 7200);
  assert_int_equal(o.nccl_hints, TOPOAWARE_HINTS_PRINT);
  /* No topoaware entry at all: set == 0 (the job passes untouched). */
  const char *plain[] = {"A=1", "_SLURM_SPANK_OPTION_pyxis_image=x"};
  assert_int_equal(env_parse(plain, 2, &o), 0);
  assert_int_equal(o.set, 0);
  assert_int_equal(ta_options_from_env(&o, NULL, 5, err, sizeof(err)), 0);
  assert_int_equal(o.set, 0);
  /* The count bounds the walk: entries past it are not read. */
  const char *env2[] = {"_SLURM_SPANK_OPTION_topoaware_tp=2", "_SLURM_SPANK_OPTION_topoaware_tp=bad"};
  assert_int_equal(env_parse(env2, 1, &o), 0);
  assert_int_equal(o.layout.tp, 2);
}

/* An environment of more entries than are read is refused, not read in part: an option past the
 * bound would reach the job prolog without job_submit or the select plugin having seen it. */
static void test_env_too_many_entries(void **state) {
  topoaware_options_t o;
  const uint32_t n = TA_ENV_MAX_ENTRIES + 1;
  char **env = calloc(n + 1, sizeof(char *));
  uint32_t i;
  (void)state;
  assert_non_null(env);
  for (i = 0; i < n; i++) env[i] = (char *)"FILLER=1";
  env[n - 1] = (char *)"_SLURM_SPANK_OPTION_topoaware_tp=8";
  assert_int_equal(ta_options_from_env(&o, env, n, err, sizeof(err)), -1);
  assert_non_null(strstr(err, "has 65537 entries; at most 65536 are read"));
  assert_int_equal(ta_options_from_env(&o, env + 1, n - 1, err, sizeof(err)), 0); /* at the bound: read whole */
  assert_int_equal(o.layout.tp, 8);
  free(env);
}

/* Names the select plugin writes into a job's SPANK environment are refused at submission. */
static void test_env_reserved(void **state) {
  (void)state;
  const char *ok[] = {"A=1", "_SLURM_SPANK_OPTION_topoaware_tp=8", "XTOPOAWARE_NODE_ORDER=n1", "topoaware_x=1"};
  assert_int_equal(ta_env_check_reserved((char *const *)ok, 4, err, sizeof(err)), 0);
  assert_int_equal(ta_env_check_reserved(NULL, 3, err, sizeof(err)), 0);
  const char *forged[] = {"A=1", "TOPOAWARE_NODE_ORDER=n1,n2", "TOPOAWARE_TOPO_HASH=sha256:00"};
  assert_int_equal(ta_env_check_reserved((char *const *)forged, 3, err, sizeof(err)), -1);
  assert_non_null(strstr(err, "TOPOAWARE_NODE_ORDER in the job's SPANK environment"));
  assert_null(strstr(err, "n1,n2")); /* the name, not the value */
  assert_non_null(strstr(err, "--tp"));
  /* Past the count: not looked at. A name without '=' and control bytes are shown printable. */
  assert_int_equal(ta_env_check_reserved((char *const *)forged, 1, err, sizeof(err)), 0);
  const char *odd[] = {"TOPOAWARE_\x1b[2J"};
  assert_int_equal(ta_env_check_reserved((char *const *)odd, 1, err, sizeof(err)), -1);
  assert_null(strchr(err, 0x1b));
}

/* ---- the batch step's checked options (SLURM_SPANK_ + the job's SPANK environment) ---- */

/* ta_var_fn over a NULL-terminated "NAME=value" list; "TOOLONG" answers -1. */
static int fake_var(void *ctx, const char *name, char *buf, size_t len) {
  const char *const *e;
  size_t n = strlen(name);
  for (e = (const char *const *)ctx; *e; e++) {
    if (strncmp(*e, name, n) != 0 || (*e)[n] != '=') continue;
    if (strcmp(*e + n + 1, "TOOLONG") == 0) return -1;
    snprintf(buf, len, "%s", *e + n + 1);
    return 1;
  }
  return 0;
}

static void test_vars(void **state) {
  topoaware_options_t o, got;
  char key[160];
  (void)state;
  const char *env[] = {"_SLURM_SPANK_OPTION_topoaware_tp=4", /* not the prefix asked for: ignored */
                       "SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_tp=8",
                       "SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_pp=2",
                       "SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_nccl_hints=print", NULL};
  assert_int_equal(ta_options_from_vars(&o, "SLURM_SPANK_", fake_var, (void *)env, err, sizeof(err)), 0);
  assert_int_equal(o.layout.tp, 8);
  assert_int_equal(o.layout.pp, 2);
  assert_int_equal(o.nccl_hints, TOPOAWARE_HINTS_PRINT);
  assert_int_equal(ta_options_key(&o, key, sizeof(key)), 0);
  assert_string_equal(key, "tp=8,cp=1,ep=1,dp=1,pp=2");
  /* None at all: no layout, key "none". */
  const char *none[] = {"_SLURM_SPANK_OPTION_topoaware_tp=4", NULL};
  assert_int_equal(ta_options_from_vars(&o, "SLURM_SPANK_", fake_var, (void *)none, err, sizeof(err)), 0);
  assert_int_equal(o.set, 0);
  assert_int_equal(ta_options_key(&o, key, sizeof(key)), 0);
  assert_string_equal(key, "none");
  assert_int_equal(ta_options_key(&o, key, 4), -1);
  /* A bad value names the variable, as printable text; an unreadable one too. */
  const char *bad[] = {"SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_rank_order=x\x1b[1m", NULL};
  assert_int_equal(ta_options_from_vars(&o, "SLURM_SPANK_", fake_var, (void *)bad, err, sizeof(err)), -1);
  assert_contains(err, "SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_rank_order=x?[1m: ");
  const char *longv[] = {"SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_dp=TOOLONG", NULL};
  assert_int_equal(ta_options_from_vars(&o, "SLURM_SPANK_", fake_var, (void *)longv, err, sizeof(err)), -1);
  assert_contains(err, "SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_dp cannot be read");

  /* The key names a given rank order; same_layout ignores an order `got` does not give. */
  topoaware_options_init(&o);
  topoaware_options_init(&got);
  assert_int_equal(ta_options_same_layout(&o, &got), 1); /* neither has a layout */
  assert_int_equal(topoaware_options_set(&got, "tp", "2", err, sizeof(err)), 0);
  assert_int_equal(ta_options_same_layout(&o, &got), 0); /* injected into a job without one */
  assert_int_equal(ta_options_same_layout(&got, &o), 0);
  assert_int_equal(topoaware_options_set(&o, "tp", "2", err, sizeof(err)), 0);
  assert_int_equal(topoaware_options_set(&o, "rank-order", "tp-pp-dp", err, sizeof(err)), 0);
  assert_int_equal(ta_options_same_layout(&o, &got), 1); /* the admin's default order is only in `checked` */
  assert_int_equal(topoaware_options_set(&got, "rank-order", "tp-cp-ep-dp-pp", err, sizeof(err)), 0);
  assert_int_equal(ta_options_same_layout(&o, &got), 0);
  assert_int_equal(ta_options_key(&got, key, sizeof(key)), 0);
  assert_string_equal(key, "tp=2,cp=1,ep=1,dp=1,pp=1,rank-order=tp-cp-ep-dp-pp");
  assert_int_equal(topoaware_options_set(&got, "rank-order", "tp-pp-dp", err, sizeof(err)), 0);
  assert_int_equal(ta_options_same_layout(&o, &got), 1);
  assert_int_equal(topoaware_options_set(&got, "dp", "2", err, sizeof(err)), 0);
  assert_int_equal(ta_options_same_layout(&o, &got), 0);
}

static void env_fails(const char *entry, const char *part) {
  topoaware_options_t o;
  const char *env[] = {"_SLURM_SPANK_OPTION_topoaware_dp=2", entry};
  err[0] = '\0';
  assert_int_equal(env_parse(env, 2, &o), -1);
  assert_contains(err, part);
}

static void test_env_errors(void **state) {
  (void)state;
  env_fails("_SLURM_SPANK_OPTION_topoaware_tp=x", "--tp=x: tp=x is not a whole number");
  env_fails("_SLURM_SPANK_OPTION_topoaware_tp=", "--tp=: tp needs a value");
  env_fails("_SLURM_SPANK_OPTION_topoaware_tp", "has no value");
  env_fails("_SLURM_SPANK_OPTION_topoaware_dp=4", "--dp is given twice");
  env_fails("_SLURM_SPANK_OPTION_topoaware_zz=1", "unknown topoaware option 'zz'");
  env_fails("_SLURM_SPANK_OPTION_topoaware_rank-order=tp-pp-dp", "unknown topoaware option 'rank-order'");
  env_fails("_SLURM_SPANK_OPTION_topoaware_topo_mode=later", "--topo-mode=later");
  env_fails("_SLURM_SPANK_OPTION_topoaware_topo_max_wait=1y", "unknown unit");
  env_fails("_SLURM_SPANK_OPTION_topoaware_nccl_hints=yes", "use auto, off or print");
  assert_null(ta_option_from_env_name("tp_", 3));
  assert_string_equal(ta_option_from_env_name("topo_max_wait", 13), "topo-max-wait");
}

/* The one option table: every name once, its bit, --help's text; the plugins derive from it. */
static void test_option_table(void **state) {
  const topoaware_option_info_t *o;
  const char *help_order[] = {"tp", "pp", "dp", "cp", "ep", "rank-order", "topo-mode", "topo-max-wait", "nccl-hints",
                              "topo-migrate"};
  unsigned all = 0;
  uint32_t i, k;
  char buf[128];
  (void)state;
  for (i = 0; (o = topoaware_option_info(i)) != NULL; i++) {
    assert_true(i < sizeof(help_order) / sizeof(help_order[0]));
    assert_string_equal(o->name, help_order[i]);
    assert_int_equal(topoaware_option_bit(o->name), o->bit);
    assert_string_equal(topoaware_option_name(o->bit), o->name);
    /* A value's placeholder, or none for the one flag. */
    if (o->bit == TOPOAWARE_OPT_MIGRATE)
      assert_null(o->arginfo);
    else
      assert_true(o->arginfo && o->arginfo[0]);
    assert_true(strncmp(o->usage, "[topoaware] ", 12) == 0);
    assert_int_equal(o->bit & (o->bit - 1), 0); /* one bit */
    assert_int_equal(all & o->bit, 0);          /* each once */
    all |= o->bit;
    for (k = 0; k < i; k++) assert_true(strcmp(topoaware_option_info(k)->name, o->name) != 0);
    /* The job environment's spelling goes both ways. */
    assert_int_equal(ta_option_env_name(o->name, buf, sizeof(buf)), 0);
    assert_true(strncmp(buf, TA_ENV_PREFIX, strlen(TA_ENV_PREFIX)) == 0);
    assert_string_equal(ta_option_from_env_name(buf + strlen(TA_ENV_PREFIX), strlen(buf + strlen(TA_ENV_PREFIX))),
                        o->name);
  }
  assert_int_equal(i, 10);
  assert_int_equal(all, 0x3ff);
  assert_null(topoaware_option_info(i));
  assert_null(topoaware_option_name(0));
  assert_null(topoaware_option_name(1u << 20));
  /* --help's texts, exactly (spank_topoaware(8) and tests/slurm_options.sh read them). */
  assert_string_equal(topoaware_option_info(0)->usage,
                      "[topoaware] tensor parallel size: GPUs of one TP group, inside one node or one multi-node NVLink domain");
  assert_string_equal(topoaware_option_info(5)->arginfo, "ORDER");
  assert_string_equal(topoaware_option_info(8)->usage,
                      "[topoaware] NCCL and rank hints in tasks: auto (default), off or print");
  assert_int_equal(ta_option_env_name("rank-order", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "_SLURM_SPANK_OPTION_topoaware_rank_order");
  assert_int_equal(ta_option_env_name("topo-max-wait", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "_SLURM_SPANK_OPTION_topoaware_topo_max_wait");
  assert_int_equal(ta_option_env_name("order", buf, sizeof(buf)), -1);
  assert_int_equal(ta_option_env_name(NULL, buf, sizeof(buf)), -1);
  assert_int_equal(ta_option_env_name("tp", buf, strlen(TA_ENV_PREFIX) + 2), -1); /* no room for the NUL */
  assert_int_equal(ta_option_env_name("tp", buf, strlen(TA_ENV_PREFIX) + 3), 0);
  /* An unknown option's message lists the table's names. */
  topoaware_options_t opts;
  topoaware_options_init(&opts);
  assert_int_equal(topoaware_options_set(&opts, "order", "1", err, sizeof(err)), -1);
  assert_contains(err, "the options are tp, pp, dp, cp, ep, rank-order, topo-mode, topo-max-wait, nccl-hints and topo-migrate");
}

/* Values quoted in logs and messages: printable, cut without splitting a character. */
static void test_printable(void **state) {
  char buf[64], small[5];
  (void)state;
  assert_string_equal(topoaware_printable("plain", 64, buf, sizeof(buf)), "plain");
  assert_string_equal(topoaware_printable("a\x1b[2Jb\tc\n\xff", 64, buf, sizeof(buf)), "a?[2Jb c ?");
  assert_string_equal(topoaware_printable("abcdef", 3, buf, sizeof(buf)), "abc");
  assert_string_equal(topoaware_printable("ab\xe2\x82\xac", 4, buf, sizeof(buf)), "ab"); /* not half a euro */
  assert_string_equal(topoaware_printable("ab\xe2\x82\xac", 5, buf, sizeof(buf)), "ab\xe2\x82\xac");
  assert_string_equal(topoaware_printable(NULL, 64, buf, sizeof(buf)), "");
  assert_string_equal(topoaware_printable("abcdefgh", 64, small, sizeof(small)), "abcd"); /* the buffer bounds */
  assert_null(topoaware_printable("x", 1, NULL, 0));
  /* The job environment's values are quoted so in job_submit's messages. */
  {
    topoaware_options_t o;
    const char *env[] = {"_SLURM_SPANK_OPTION_topoaware_tp=8\x1b[31m", "_SLURM_SPANK_OPTION_topoaware_\x07x=1"};
    assert_int_equal(env_parse(env, 1, &o), -1);
    assert_contains(err, "--tp=8?[31m: ");
    assert_null(strchr(err, '\x1b'));
    assert_int_equal(env_parse(env + 1, 1, &o), -1);
    assert_contains(err, "unknown topoaware option '?x'");
    assert_contains(err,
                    "the options are --tp, --pp, --dp, --cp, --ep, --rank-order, --topo-mode, --topo-max-wait, "
                    "--nccl-hints and --topo-migrate");
  }
}

/* Messages quote the job's environment, which any user writes: control bytes and bytes that are not
 * UTF-8 must not reach slurmctld's log or the user's terminal (found by tests/fuzz/fuzz_options). */
static void env_message_printable(const char *entry) {
  topoaware_options_t o;
  const char *env[] = {entry};
  size_t i;
  err[0] = '\0';
  assert_int_equal(env_parse(env, 1, &o), -1);
  assert_true(err[0] != '\0');
  for (i = 0; err[i]; i++) {
    unsigned char c = (unsigned char)err[i];
    if (c < 0x20 || c == 0x7f || c >= 0xf5) fail_msg("byte 0x%02x at %zu in the message: %s", c, i, err);
  }
}

static void test_env_messages_printable(void **state) {
  (void)state;
  env_message_printable("_SLURM_SPANK_OPTION_topoaware_d\x14=2");
  env_message_printable("_SLURM_SPANK_OPTION_topoaware_\x1b[31mred=1");
  env_message_printable("_SLURM_SPANK_OPTION_topoaware_tp=\x1b[2J\xff");
  env_message_printable("_SLURM_SPANK_OPTION_topoaware_\r\x07\xff");
}

/* ---- topoaware.conf through the C API ---- */

/* Paths are data: the bytes of TopologyFile= and StatusFile= reach the plugin as written, even those
 * that are not UTF-8 text (a message would show them as '?', a path must not; found by
 * tests/fuzz/fuzz_config). */
static void test_conf_paths_verbatim(void **state) {
  char dir[] = "/tmp/test_layout_c.XXXXXX", path[256], buf[512];
  const char *topo = "/srv/\xff\xfe/topo\xc2\x80.json", *status = "/var/spool/st\xe9tus.json";
  int found = -1;
  FILE *f;
  topoaware_conf_t *c;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/topoaware.conf", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "TopologyFile=%s\nStatusFile=%s\n", topo, status);
  fclose(f);
  c = topoaware_conf_load(path, &found, err, sizeof(err));
  assert_non_null(c);
  assert_int_equal(topoaware_conf_topology(c, buf, sizeof(buf)), 0);
  assert_string_equal(buf, topo);
  assert_int_equal(topoaware_conf_status_file(c, "/var/spool/slurmctld", buf, sizeof(buf)), 0);
  assert_string_equal(buf, status);
  topoaware_conf_free(c);
  unlink(path);
  rmdir(dir);
}

static void test_conf(void **state) {
  char dir[] = "/tmp/test_layout_c.XXXXXX", path[256], buf[512];
  int found = -1;
  FILE *f;
  topoaware_conf_t *c;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/topoaware.conf", dir);
  /* Missing: defaults, found = 0, topology beside it. */
  c = topoaware_conf_load(path, &found, err, sizeof(err));
  assert_non_null(c);
  assert_int_equal(found, 0);
  assert_int_equal(topoaware_conf_mode(c, "gpu"), TOPOAWARE_MODE_PREFER);
  assert_int_equal(topoaware_conf_max_wait(c, NULL), 3600);
  assert_int_equal(topoaware_conf_topology(c, buf, sizeof(buf)), 0);
  snprintf(path, sizeof(path), "%s/topology.json", dir);
  assert_string_equal(buf, path);
  topoaware_conf_free(c);
  /* A real file. */
  snprintf(path, sizeof(path), "%s/topoaware.conf", dir);
  f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "# site defaults\nTopologyFile=/etc/slurm/fabric.json\nDefaultMode=prefer DefaultMaxWait=30m\n"
             "PartitionName=gpu DefaultMode=strict DefaultMaxWait=2h\n");
  fclose(f);
  c = topoaware_conf_load(path, &found, err, sizeof(err));
  assert_non_null(c);
  assert_int_equal(found, 1);
  assert_string_equal(topoaware_conf_loaded_path(c), path);
  assert_int_equal(topoaware_conf_mode(c, "gpu"), TOPOAWARE_MODE_STRICT);
  assert_int_equal(topoaware_conf_mode(c, "cpu"), TOPOAWARE_MODE_PREFER);
  assert_int_equal(topoaware_conf_mode(c, ""), TOPOAWARE_MODE_PREFER);
  assert_int_equal(topoaware_conf_max_wait(c, "gpu"), 7200);
  assert_int_equal(topoaware_conf_max_wait(c, "cpu"), 1800);
  assert_int_equal(topoaware_conf_topology(c, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "/etc/slurm/fabric.json");
  assert_int_equal(topoaware_conf_topology(c, buf, 4), -1);
  topoaware_conf_free(c);
  /* A bad file: NULL and the line. */
  f = fopen(path, "w");
  fprintf(f, "DefaultMode=strict\nPartitionName=gpu DefaultMode=fast\n");
  fclose(f);
  assert_null(topoaware_conf_load(path, &found, err, sizeof(err)));
  assert_contains(err, "line 2: DefaultMode:");
  assert_contains(err, "use strict");
  unlink(path);
  rmdir(dir);
  /* NULL conf: defaults, no crash. */
  assert_int_equal(topoaware_conf_mode(NULL, "gpu"), TOPOAWARE_MODE_PREFER);
  assert_int_equal(topoaware_conf_max_wait(NULL, "gpu"), 3600);
  assert_int_equal(topoaware_conf_topology(NULL, buf, sizeof(buf)), -1);
  topoaware_conf_free(NULL);
  /* The default paths follow SLURM_CONF (TOPOAWARE_CONF first); the topology is beside the conf. */
  char topo[256];
  unsetenv("TOPOAWARE_CONF");
  setenv("SLURM_CONF", "/srv/cluster/slurm.conf", 1);
  assert_int_equal(topoaware_default_paths(NULL, buf, sizeof(buf), topo, sizeof(topo)), 0);
  assert_string_equal(buf, "/srv/cluster/topoaware.conf");
  assert_string_equal(topo, "/srv/cluster/topology.json");
  /* The slurm.conf a plugin knows wins over the environment. */
  assert_int_equal(topoaware_default_paths("/opt/slurm/etc/slurm.conf", buf, sizeof(buf), topo, sizeof(topo)), 0);
  assert_string_equal(buf, "/opt/slurm/etc/topoaware.conf");
  assert_string_equal(topo, "/opt/slurm/etc/topology.json");
  setenv("TOPOAWARE_CONF", "/x/y.conf", 1);
  assert_int_equal(topoaware_default_paths("/opt/slurm/etc/slurm.conf", buf, sizeof(buf), topo, sizeof(topo)), 0);
  assert_string_equal(buf, "/x/y.conf");
  assert_string_equal(topo, "/x/topology.json");
  unsetenv("TOPOAWARE_CONF");
  unsetenv("SLURM_CONF");
  assert_int_equal(topoaware_default_paths(NULL, buf, sizeof(buf), NULL, 0), 0);
  assert_string_equal(buf, "/etc/slurm/topoaware.conf");
  assert_int_equal(topoaware_default_paths(NULL, NULL, 0, topo, sizeof(topo)), 0);
  assert_string_equal(topo, "/etc/slurm/topology.json");
  assert_int_equal(topoaware_default_paths(NULL, buf, 5, NULL, 0), -1);
  /* A missing topoaware.conf gives the same topology path as the defaults. */
  setenv("SLURM_CONF", "/nonexistent/dir/slurm.conf", 1);
  topoaware_conf_t *none = topoaware_conf_load(NULL, &found, err, sizeof(err));
  assert_non_null(none);
  assert_int_equal(found, 0);
  assert_int_equal(topoaware_conf_topology(none, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "/nonexistent/dir/topology.json");
  topoaware_conf_free(none);
  unsetenv("SLURM_CONF");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),        cmocka_unit_test(test_set_every_option),
      cmocka_unit_test(test_gpus_per_node),
      cmocka_unit_test(test_set_errors),      cmocka_unit_test(test_wait_units),
      cmocka_unit_test(test_check_whole),     cmocka_unit_test(test_option_bits),
      cmocka_unit_test(test_layout_string),   cmocka_unit_test(test_complete_ok),
      cmocka_unit_test(test_complete_nvlink),
      cmocka_unit_test(test_complete_errors), cmocka_unit_test(test_small_error_buffer),
      cmocka_unit_test(test_env_ok),          cmocka_unit_test(test_vars),
      cmocka_unit_test(test_env_errors),      cmocka_unit_test(test_option_table),
      cmocka_unit_test(test_printable),
      cmocka_unit_test(test_env_too_many_entries),
      cmocka_unit_test(test_env_reserved),
      cmocka_unit_test(test_env_messages_printable),
      cmocka_unit_test(test_conf),
      cmocka_unit_test(test_conf_paths_verbatim),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
