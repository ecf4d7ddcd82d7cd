/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The start select/cons_tres of Slurm 22.05 .. 24.11 answers in a will-run
 * (plugins/common/ta_cons_start.c), worked by hand from _will_run_test's batches of job ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ta_cons_start.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* First end 1000: barrier 1020 (the next multiple of 30), first batch up to 1050. Next end 1100: the window doubles to 60 (1080), 120 (1140): batch 2 up to 1140. Next 1300:
 * 240 (1260), 480 (1500): batch 3 up to 1500. */
static const int64_t ends[] = { 1000, 1040, 1050, 1100, 1130, 1300, 1490, 1600 };

static void test_start_is_the_last_end_of_its_batch(void **state) {
  (void)state;
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1000, 0), 1050);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1040, 0), 1050);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1050, 0), 1050);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1051, 0), 1130);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1100, 0), 1130);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1131, 0), 1490);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1300, 0), 1490);
  /* 1600 > 1500: the window doubles to 960 (1980), a batch of its own */
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1491, 0), 1600);
}

static void test_never_earlier_than_it_fits(void **state) {
  (void)state;
  /* before every end (it fits at once) and after every end: the time itself */
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 900, 0), 1050);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1601, 0), 1601);
  assert_int_equal(ta_cons_batched_start(ends, 0, 1234, 0), 1234);
  assert_int_equal(ta_cons_batched_start(NULL, 3, 1234, 0), 1234);
}

static void test_first_end_off_the_barrier(void **state) {
  (void)state;
  /* first end 1001: barrier 1020 (next multiple of 30), batch 1 up to 1050 */
  const int64_t e[] = { 1001, 1050, 1051 };
  assert_int_equal(ta_cons_batched_start(e, N(e), 1001, 0), 1050);
  /* 1051: the window doubles to 60, batch 2 up to 1080 */
  assert_int_equal(ta_cons_batched_start(e, N(e), 1051, 0), 1051);
  /* a first end on a multiple of 30 goes to the next one: barrier 1020, batch 1 up to 1050 */
  const int64_t m[] = { 990, 1050, 1081 };
  assert_int_equal(ta_cons_batched_start(m, N(m), 991, 0), 1050);
  assert_int_equal(ta_cons_batched_start(m, N(m), 1051, 0), 1081);
}

static void test_linear_windows(void **state) {
  (void)state;
  /* bf_window_linear=20: barrier 1020, batch 1 up to 1050; 1100 needs 30 + 3 x 20 = 90 (1110), so
   * 1130 is a batch of its own (110: 1130); 1300 needs 110 + 9 x 20 = 290 (1310), 1490 needs
   * 290 + 9 x 20 = 470 (1490), 1600 needs 470 + 6 x 20 = 590 (1610): one end per batch. */
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1051, 20), 1100);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1101, 20), 1130);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1131, 20), 1300);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1301, 20), 1490);
  assert_int_equal(ta_cons_batched_start(ends, N(ends), 1491, 20), 1600);
}

static void test_far_ends_stay_bounded(void **state) {
  (void)state;
  /* a job without a time limit ends a year on; a window of one second step computes, not loops */
  const int64_t e[] = { 1000, 1000 + 365LL * 86400 };
  assert_int_equal(ta_cons_batched_start(e, N(e), 1001, 1), 1000 + 365LL * 86400);
  assert_int_equal(ta_cons_batched_start(e, N(e), 1001, 0), 1000 + 365LL * 86400);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_start_is_the_last_end_of_its_batch),
      cmocka_unit_test(test_never_earlier_than_it_fits),
      cmocka_unit_test(test_first_end_off_the_barrier),
      cmocka_unit_test(test_linear_windows),
      cmocka_unit_test(test_far_ends_stay_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
