/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The select_p_job_test counters of select/cons_tres_topoaware and of its pass-through build
 * (select_cons_tres_topoaware(8), COUNTERS): the same code in both, which the benchmark compares. */
#include "config.h" /* Slurm's */

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "slurm/slurm.h"
#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "ta_select.h"

extern const char plugin_type[]; /* the build's type name (select_cons_tres_topoaware.c) */

/* select_p_job_test counters, the same code in both builds (the benchmark compares them): calls,
 * total and largest time by CLOCK_MONOTONIC in nanoseconds, for all calls and for layout-job
 * calls (calls in which the topoaware build ran its placement; always 0 in the pass-through).
 * slurmctld calls job_test with the job write lock held, one at a time, but keep them atomic. */
static uint64_t ta_calls, ta_ns, ta_max_ns, ta_lcalls, ta_lns, ta_lmax_ns;
/* cons_tres calls made inside layout calls and their time: what a layout call spends in cons_tres
 * against its own work (engine, bitmaps, free GPUs, booking), which the benchmark reports apart. */
static uint64_t ta_ccalls, ta_cns;
uint64_t ta_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void ta_atomic_max(uint64_t *where, uint64_t v)
{
	uint64_t max = __atomic_load_n(where, __ATOMIC_RELAXED);

	while (v > max && !__atomic_compare_exchange_n(where, &max, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Bounds of the call-time histogram (topoaware metrics: topoaware_job_test_duration_seconds):
 * from well under the engine's typical decision to the 200 ms MaxTimePerCall and beyond. */
static const uint64_t ta_le_us[TA_BUCKETS] = {50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 200000, 1000000};
static uint64_t ta_counts[TA_BUCKETS + 1], ta_lcounts[TA_BUCKETS + 1];

void ta_count(uint64_t dt, int layout)
{
	uint64_t us = dt / 1000u;
	int b = 0;

	while (b < TA_BUCKETS && us > ta_le_us[b])
		b++;
	__atomic_add_fetch(&ta_counts[b], 1, __ATOMIC_RELAXED);
	if (layout)
		__atomic_add_fetch(&ta_lcounts[b], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ta_calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ta_ns, dt, __ATOMIC_RELAXED);
	ta_atomic_max(&ta_max_ns, dt);
	if (layout) {
		__atomic_add_fetch(&ta_lcalls, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&ta_lns, dt, __ATOMIC_RELAXED);
		ta_atomic_max(&ta_lmax_ns, dt);
	}
}

void ta_count_cons(uint64_t dt)
{
	__atomic_add_fetch(&ta_ccalls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ta_cns, dt, __ATOMIC_RELAXED);
}

void ta_job_test_counters(ta_counters_t *c)
{
	c->calls = __atomic_load_n(&ta_calls, __ATOMIC_RELAXED);
	c->total_us = __atomic_load_n(&ta_ns, __ATOMIC_RELAXED) / 1000u;
	c->max_us = __atomic_load_n(&ta_max_ns, __ATOMIC_RELAXED) / 1000u;
	c->layout_calls = __atomic_load_n(&ta_lcalls, __ATOMIC_RELAXED);
	c->layout_total_us = __atomic_load_n(&ta_lns, __ATOMIC_RELAXED) / 1000u;
	c->layout_max_us = __atomic_load_n(&ta_lmax_ns, __ATOMIC_RELAXED) / 1000u;
	c->le_us = ta_le_us;
	for (int b = 0; b <= TA_BUCKETS; b++) {
		c->counts[b] = __atomic_load_n(&ta_counts[b], __ATOMIC_RELAXED);
		c->layout_counts[b] = __atomic_load_n(&ta_lcounts[b], __ATOMIC_RELAXED);
	}
}

/* The counters line (select_cons_tres_topoaware(8), parsed by the benchmark: keep it stable). */
void ta_log_counters(void)
{
	uint64_t calls = __atomic_load_n(&ta_calls, __ATOMIC_RELAXED);
	uint64_t ns = __atomic_load_n(&ta_ns, __ATOMIC_RELAXED);
	uint64_t max = __atomic_load_n(&ta_max_ns, __ATOMIC_RELAXED);
	uint64_t lcalls = __atomic_load_n(&ta_lcalls, __ATOMIC_RELAXED);
	uint64_t lns = __atomic_load_n(&ta_lns, __ATOMIC_RELAXED);
	uint64_t lmax = __atomic_load_n(&ta_lmax_ns, __ATOMIC_RELAXED);
	uint64_t ccalls = __atomic_load_n(&ta_ccalls, __ATOMIC_RELAXED);
	uint64_t cns = __atomic_load_n(&ta_cns, __ATOMIC_RELAXED);

	/* New fields go at the end: the benchmark matches the line from its start. */
	info("%s: select_p_job_test: calls=%" PRIu64 " total_us=%" PRIu64 " mean_us=%.1f max_us=%" PRIu64
	     " layout_calls=%" PRIu64 " layout_mean_us=%.1f layout_max_us=%" PRIu64 " layout_cons_calls=%" PRIu64
	     " layout_cons_us=%" PRIu64,
	     plugin_type, calls, ns / 1000u, calls ? (double)ns / (double)calls / 1000.0 : 0.0, max / 1000u, lcalls,
	     lcalls ? (double)lns / (double)lcalls / 1000.0 : 0.0, lmax / 1000u, ccalls, cns / 1000u);
}
