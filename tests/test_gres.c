/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GPU counts in Slurm's TRES request strings (plugins/common/ta_gres.c), as job_submit/topoaware
 * reads --gpus-per-node, --gpus, --gpus-per-task and --gpus-per-socket: every form Slurm's own
 * parser (_get_next_gres, src/common/gres.c) accepts, and the ones it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ta_gres.h"

static char err[512];

#define assert_contains(hay, needle)                                         \
  do {                                                                       \
    if (!strstr((hay), (needle))) {                                          \
      print_error("message '%s' lacks '%s'\n", (hay), (needle));             \
      fail();                                                                \
    }                                                                        \
  } while (0)

static void gpu(const char *e, uint64_t want, const char *want_type) {
  uint64_t c = 12345;
  const char *t = NULL;
  size_t tl = 99;
  if (ta_gres_gpu_entry(e, strlen(e), &c, &t, &tl) != TA_GRES_GPU) {
    print_error("'%s' should be a GPU entry\n", e);
    fail();
  }
  if (c != want) {
    print_error("'%s': count %llu, expected %llu\n", e, (unsigned long long)c, (unsigned long long)want);
    fail();
  }
  assert_int_equal(tl, strlen(want_type));
  assert_memory_equal(t, want_type, tl);
}

static void other(const char *e) {
  uint64_t c = 7;
  if (ta_gres_gpu_entry(e, strlen(e), &c, NULL, NULL) != TA_GRES_OTHER) {
    print_error("'%s' should not be a GPU entry\n", e);
    fail();
  }
  assert_int_equal(c, 7); /* untouched */
}

static void invalid(const char *e) {
  uint64_t c = 7;
  if (ta_gres_gpu_entry(e, strlen(e), &c, NULL, NULL) != TA_GRES_INVALID) {
    print_error("'%s' should be an invalid GPU entry\n", e);
    fail();
  }
}

static void test_prefixes(void **state) {
  gpu("gres:gpu:8", 8, ""); /* 22.05: sbatch --gpus-per-node=8 */
  gpu("gres/gpu:8", 8, ""); /* 23.11 and later */
  gpu("gpu:8", 8, "");
  gpu("gres/gpu=8", 8, ""); /* the TRES spelling */
  gpu("gpu=4", 4, "");
}

static void test_types(void **state) {
  gpu("gres:gpu:a100:8", 8, "a100");
  gpu("gres/gpu:a100:2", 2, "a100");
  /* A bare type is one GPU of that type (the defect: this used to be "cannot read the count"). */
  gpu("gres/gpu:a100", 1, "a100");
  gpu("gres:gpu:tesla", 1, "tesla");
  gpu("gpu:1g.5gb", 1, "1g.5gb"); /* MIG profile names are types */
  gpu("gpu:8x", 1, "8x");         /* not a number with a known suffix: a type, as Slurm reads it */
  gpu("gres/gpu:h100=4", 4, "h100");
  gpu("gres:gpu", 1, "");
  gpu("gpu", 1, "");
}

static void test_suffixes(void **state) {
  gpu("gres:gpu:1k", 1024, "");
  gpu("gres:gpu:1K", 1024, "");
  gpu("gres:gpu:2kib", 2048, "");
  gpu("gres:gpu:1kb", 1000, "");
  gpu("gres:gpu:a100:1m", 1u << 20, "a100");
  gpu("gres:gpu:1MB", 1000000, "");
  gpu("gres:gpu:1g", 1ull << 30, "");
  gpu("gres:gpu:1t", 1ull << 40, "");
  gpu("gres:gpu:1pb", 1000000000000000ull, "");
  gpu("gres:gpu:0", 0, "");
  gpu("gres:gpu:008", 8, "");
}

static void test_not_gpus(void **state) {
  other("gres:nic:1");
  other("gres/shard:4");
  other("gres:gpumem:1G");
  other("gpus:2");
  other("cpu=4");
  other("license/matlab:1");
  other("");
}

static void test_invalid(void **state) {
  invalid("gres:gpu:");       /* "gpu:" */
  invalid("gres:gpu::1");     /* empty type */
  invalid("gres:gpu:a100:");  /* type, no count */
  invalid("gres:gpu:a:b:2");  /* three fields */
  invalid("gres:gpu:a100:x"); /* a count that is not a number */
  invalid("gres:gpu:a100:8x");
  invalid("gres:gpu:a100:-1");
  invalid("gres/gpu=");
  invalid("gres/gpu=abc");
  invalid("gres/gpu:=2");
  invalid("gres:gpu:a100:99999999999999999999"); /* beyond 2^64 */
  invalid("gres:gpu:a100:20000000p");            /* overflows with its suffix */
}

static void test_strings(void **state) {
  uint32_t g = 99;
  assert_int_equal(ta_tres_gpus(NULL, "--gpus-per-node", &g, err, sizeof(err)), 0);
  assert_int_equal(g, 0);
  assert_int_equal(ta_tres_gpus("", "--gpus-per-node", &g, err, sizeof(err)), 0);
  assert_int_equal(ta_tres_gpus("gres:nic:1,gres:gpu:8", "--gpus-per-node", &g, err, sizeof(err)), 0);
  assert_int_equal(g, 8);
  assert_int_equal(ta_tres_gpus("gres/gpu:a100", "--gpus-per-node", &g, err, sizeof(err)), 0);
  assert_int_equal(g, 1);
  assert_int_equal(ta_tres_gpus("gres:gpu:a100:8;gres:nic:1", "--gpus-per-node", &g, err, sizeof(err)), 0);
  assert_int_equal(g, 8);

  assert_int_equal(ta_tres_gpus("gres:gpu:a100:4,gres:gpu:v100:4", "--gpus-per-node", &g, err, sizeof(err)), -1);
  assert_contains(err, "names GPUs twice");
  assert_int_equal(ta_tres_gpus("gres:gpu:a100:", "--gpus", &g, err, sizeof(err)), -1);
  assert_contains(err, "--gpus: cannot read the GPU count of 'gres:gpu:a100:'");
  assert_int_equal(ta_tres_gpus("gres:gpu:0", "--gpus-per-node", &g, err, sizeof(err)), -1);
  assert_contains(err, "asks for 0 GPUs");
  assert_int_equal(ta_tres_gpus("gres:gpu:1g", "--gpus-per-node", &g, err, sizeof(err)), -1);
  assert_contains(err, "asks for 1073741824 GPUs");

  char big[TA_GRES_MAX_LEN + 16];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  assert_int_equal(ta_tres_gpus(big, "--gpus-per-node", &g, err, sizeof(err)), -1);
  assert_contains(err, "longer than 4096 bytes");
}

/* The request string is the client's: its bytes reach slurmctld's log and the user's terminal only as
 * printable ASCII. */
static void test_messages_printable(void **state) {
  uint32_t g = 0;
  const char *bad[] = {"gpu:a:b\xba" "2:,gpu::2", "gres:gpu:\x1b[31m:0", "gpu:\n:2,gpu:1", "gpu:1,gpu:\x7f\xff:2"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    assert_int_equal(ta_tres_gpus(bad[i], "--gpus-per-node", &g, err, sizeof(err)), -1);
    for (const char *c = err; *c; c++)
      if (*c < 0x20 || *c >= 0x7f) fail_msg("case %zu: byte 0x%02x in '%s'", i, (unsigned char)*c, err);
  }
  assert_int_equal(ta_tres_gpus("gres:gpu:\x1b[31m:0", "--gpus", &g, err, sizeof(err)), -1);
  assert_contains(err, "'gres:gpu:?[31m:0'");
}

static void test_without_and_type(void **state) {
  char buf[64];
  assert_int_equal(ta_tres_without_gpu("gres:nic:1,gres:gpu:a100:8;gres:shard:2", buf, sizeof(buf)), 23);
  assert_string_equal(buf, "gres:nic:1,gres:shard:2");
  assert_int_equal(ta_tres_without_gpu("gres:gpu:8", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "");
  assert_int_equal(ta_tres_without_gpu(NULL, buf, sizeof(buf)), 0);
  assert_int_equal(ta_tres_without_gpu("gres:nic:1,gres:shard:2", buf, 8), -1);
  assert_string_equal(buf, "");

  assert_int_equal(ta_tres_gpu_type("gres:nic:1,gres/gpu:h100:8", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "h100");
  assert_int_equal(ta_tres_gpu_type("gres:gpu:8", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "");
  assert_int_equal(ta_tres_gpu_type(NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "");
  assert_int_equal(ta_tres_gpu_type("gres:gpu:a100:8", buf, 3), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prefixes), cmocka_unit_test(test_types),   cmocka_unit_test(test_suffixes),
      cmocka_unit_test(test_not_gpus), cmocka_unit_test(test_invalid), cmocka_unit_test(test_strings),
      cmocka_unit_test(test_without_and_type), cmocka_unit_test(test_messages_printable),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
