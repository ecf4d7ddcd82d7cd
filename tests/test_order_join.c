/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's node names joined in rank order (plugins/common/ta_order_join.c): the text, and that
 * building it stays linear for jobs of 250,000 nodes (select_p_job_begin builds it under
 * slurmctld's write locks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ta_order_join.h"

static char *joined(const char *const *names, const uint32_t *order, uint32_t n) {
  size_t len = ta_order_join_len(names, order, n);
  char *out = malloc(len + 1);

  assert_non_null(out);
  memset(out, 'x', len + 1); /* the NUL must be written, not found */
  ta_order_join(out, names, order, n);
  assert_int_equal(strlen(out), len);
  return out;
}

static void test_names_in_rank_order(void **state) {
  const char *names[] = {"n1", "node22", "x"};
  const uint32_t order[] = {2, 0, 1};
  char *s;

  (void)state;
  s = joined(names, order, 3);
  assert_string_equal(s, "x,n1,node22");
  free(s);
}

static void test_one_name_and_none(void **state) {
  const char *names[] = {"only"};
  const uint32_t order[] = {0};
  char *s;

  (void)state;
  s = joined(names, order, 1);
  assert_string_equal(s, "only");
  free(s);
  assert_int_equal(ta_order_join_len(names, order, 0), 0);
  s = joined(names, order, 0);
  assert_string_equal(s, "");
  free(s);
}

/* 250,000 names of 7 characters, in reverse: 2 MB of text, joined whole and in order. How long it
 * takes is not checked here (tests check behaviour); the old xstrfmtcat per name was quadratic. */
#define BIG 250000u

static void test_a_large_job(void **state) {
  const char **names = calloc(BIG, sizeof(*names));
  uint32_t *order = calloc(BIG, sizeof(*order));
  char *s, *buf = malloc((size_t)BIG * 8);

  (void)state;
  assert_non_null(names);
  assert_non_null(order);
  assert_non_null(buf);
  for (uint32_t i = 0; i < BIG; i++) {
    snprintf(buf + (size_t)i * 8, 8, "n%06u", i + 1);
    names[i] = buf + (size_t)i * 8;
    order[i] = BIG - 1 - i;
  }
  s = joined(names, order, BIG);
  assert_int_equal(strlen(s), (size_t)BIG * 8 - 1);
  assert_memory_equal(s, "n250000,n249999,", 16);
  assert_string_equal(s + strlen(s) - 15, "n000002,n000001");
  free(s);
  free(buf);
  free(order);
  free(names);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names_in_rank_order),
      cmocka_unit_test(test_one_name_and_none),
      cmocka_unit_test(test_a_large_job),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
