/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rate limit of select/cons_tres_topoaware's per-job log lines (plugins/common/ta_log_gate.c):
 * a job's line once per kind every TA_LOG_JOB_EVERY seconds, and per kind at most TA_LOG_BURST lines
 * at once and one more every TA_LOG_REFILL seconds whatever the number of jobs, the lines held back
 * counted into the next one written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ta_log_gate.h"

static ta_log_gate_t *gate(void) {
  ta_log_gate_t *g = calloc(1, sizeof(*g));
  assert_non_null(g);
  return g;
}

static int admit(ta_log_gate_t *g, uint32_t job, int kind, int64_t now) {
  uint64_t held;
  int64_t since;
  return ta_log_gate_admit(g, job, kind, now, &held, &since);
}

static void test_a_job_once_per_kind(void **state) {
  ta_log_gate_t *g = gate();
  (void)state;
  assert_true(admit(g, 7, 2, 1000));
  assert_false(admit(g, 7, 2, 1000));
  assert_false(admit(g, 7, 2, 1000 + TA_LOG_JOB_EVERY - 1));
  /* another kind (the reason changed) at once, then the first again after its time */
  assert_true(admit(g, 7, 1, 1001));
  assert_true(admit(g, 7, 2, 1001 + TA_LOG_JOB_EVERY));
  free(g);
}

/* More pending jobs than slots, each asking every pass: the slots alone would let every one
 * through at every pass (job ids 256 apart share a slot). The kind's bucket holds. */
static void test_many_jobs_bounded_per_kind(void **state) {
  ta_log_gate_t *g = gate();
  const uint32_t jobs = 5000;
  const int64_t t0 = 100000, passes = 720; /* an hour of passes every 5 s */
  uint64_t written = 0, held_reported = 0, asked = 0;
  (void)state;
  for (int64_t p = 0; p < passes; p++) {
    for (uint32_t j = 1; j <= jobs; j++) {
      uint64_t held;
      int64_t since;
      if (ta_log_gate_admit(g, j, 2, t0 + 5 * p, &held, &since)) {
        written++;
        held_reported += held;
        if (held) assert_true(since >= t0 && since <= t0 + 5 * p);
      }
      asked++;
    }
  }
  /* At most the burst and one per refill period of the hour. */
  assert_true(written <= TA_LOG_BURST + (uint64_t)(5 * passes) / TA_LOG_REFILL + 1);
  assert_true(written >= (uint64_t)(5 * (passes - 1)) / TA_LOG_REFILL);
  /* Lines held back are counted: every call not written is either reported by a later line or
   * still pending, except the repeats the per-job rule drops (a job written within 5 minutes). */
  assert_true(held_reported > 0);
  assert_true(held_reported + written <= asked);
  free(g);
}

static void test_burst_then_refill_reports_held(void **state) {
  ta_log_gate_t *g = gate();
  uint64_t held;
  int64_t since;
  (void)state;
  for (uint32_t j = 1; j <= TA_LOG_BURST; j++) assert_true(admit(g, j, 2, 500));
  for (uint32_t j = 100; j < 150; j++) assert_false(admit(g, j, 2, 501));
  assert_false(admit(g, 150, 2, 500 + TA_LOG_REFILL - 1));
  assert_true(ta_log_gate_admit(g, 151, 2, 500 + TA_LOG_REFILL, &held, &since));
  assert_int_equal(held, 51);
  assert_int_equal(since, 501);
  /* reported once: the next line that passes says nothing held */
  assert_true(ta_log_gate_admit(g, 152, 2, 500 + 2 * TA_LOG_REFILL, &held, &since));
  assert_int_equal(held, 0);
  /* a quiet while refills the whole burst, no more */
  for (uint32_t j = 200; j < 200 + TA_LOG_BURST; j++) assert_true(admit(g, j, 2, 100000));
  assert_false(admit(g, 300, 2, 100000));
  free(g);
}

static void test_kinds_apart(void **state) {
  ta_log_gate_t *g = gate();
  (void)state;
  for (uint32_t j = 1; j <= TA_LOG_BURST; j++) assert_true(admit(g, j, 2, 10));
  assert_false(admit(g, 999, 2, 10));
  /* another kind has its own bucket; kinds past the table share the last one */
  assert_true(admit(g, 999, 1, 10));
  for (uint32_t j = 1; j <= TA_LOG_BURST; j++) assert_true(admit(g, j, TA_LOG_KINDS + 5, 10));
  assert_false(admit(g, 999, TA_LOG_KINDS - 1, 10));
  free(g);
}

static void test_clock_set_back(void **state) {
  ta_log_gate_t *g = gate();
  (void)state;
  for (uint32_t j = 1; j <= TA_LOG_BURST; j++) assert_true(admit(g, j, 2, 10000));
  assert_false(admit(g, 50, 2, 10000));
  /* back an hour: neither the bucket nor a job's slot waits for the clock to catch up */
  assert_true(admit(g, 51, 2, 6400));
  assert_true(admit(g, 1, 2, 6400));
  free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a_job_once_per_kind),
      cmocka_unit_test(test_many_jobs_bounded_per_kind),
      cmocka_unit_test(test_burst_then_refill_reports_held),
      cmocka_unit_test(test_kinds_apart),
      cmocka_unit_test(test_clock_set_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
