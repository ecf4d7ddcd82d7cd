/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The select_p_job_test counters of select/cons_tres_topoaware and of its pass-through build
 * (select_cons_tres_topoaware(8), COUNTERS): the same code in both, which the benchmark compares. */
#include "ta_select_slurm.h"

#include <inttypes.h>

#include "ta_select_counters.h"

extern const char plugin_type[]; /* the build's type name (ta_select_entry.c) */

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

void ta_count(ta_counters_t *c, uint64_t dt, int layout)
{
	uint64_t us = dt / 1000u;
	int b = 0;

	while (b < TA_BUCKETS && us > ta_le_us[b])
		b++;
	__atomic_add_fetch(&c->counts[b], 1, __ATOMIC_RELAXED);
	if (layout)
		__atomic_add_fetch(&c->lcounts[b], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->ns, dt, __ATOMIC_RELAXED);
	ta_atomic_max(&c->max_ns, dt);
	if (layout) {
		__atomic_add_fetch(&c->lcalls, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->lns, dt, __ATOMIC_RELAXED);
		ta_atomic_max(&c->lmax_ns, dt);
	}
}

void ta_count_cons(ta_counters_t *c, uint64_t dt)
{
	__atomic_add_fetch(&c->ccalls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->cns, dt, __ATOMIC_RELAXED);
}

void ta_counters_copy(const ta_counters_t *c, ta_counters_copy_t *out)
{
	out->calls = __atomic_load_n(&c->calls, __ATOMIC_RELAXED);
	out->total_us = __atomic_load_n(&c->ns, __ATOMIC_RELAXED) / 1000u;
	out->max_us = __atomic_load_n(&c->max_ns, __ATOMIC_RELAXED) / 1000u;
	out->layout_calls = __atomic_load_n(&c->lcalls, __ATOMIC_RELAXED);
	out->layout_total_us = __atomic_load_n(&c->lns, __ATOMIC_RELAXED) / 1000u;
	out->layout_max_us = __atomic_load_n(&c->lmax_ns, __ATOMIC_RELAXED) / 1000u;
	out->le_us = ta_le_us;
	for (int b = 0; b <= TA_BUCKETS; b++) {
		out->counts[b] = __atomic_load_n(&c->counts[b], __ATOMIC_RELAXED);
		out->layout_counts[b] = __atomic_load_n(&c->lcounts[b], __ATOMIC_RELAXED);
	}
}

/* The counters line (select_cons_tres_topoaware(8), parsed by the benchmark: keep it stable). */
void ta_counters_log(ta_counters_t *c)
{
	uint64_t calls = __atomic_load_n(&c->calls, __ATOMIC_RELAXED);
	uint64_t ns = __atomic_load_n(&c->ns, __ATOMIC_RELAXED);
	uint64_t max = __atomic_load_n(&c->max_ns, __ATOMIC_RELAXED);
	uint64_t lcalls = __atomic_load_n(&c->lcalls, __ATOMIC_RELAXED);
	uint64_t lns = __atomic_load_n(&c->lns, __ATOMIC_RELAXED);
	uint64_t lmax = __atomic_load_n(&c->lmax_ns, __ATOMIC_RELAXED);
	uint64_t ccalls = __atomic_load_n(&c->ccalls, __ATOMIC_RELAXED);
	uint64_t cns = __atomic_load_n(&c->cns, __ATOMIC_RELAXED);

	/* New fields go at the end: the benchmark matches the line from its start. */
	info("%s: select_p_job_test: calls=%" PRIu64 " total_us=%" PRIu64 " mean_us=%.1f max_us=%" PRIu64
	     " layout_calls=%" PRIu64 " layout_mean_us=%.1f layout_max_us=%" PRIu64 " layout_cons_calls=%" PRIu64
	     " layout_cons_us=%" PRIu64,
	     plugin_type, calls, ns / 1000u, calls ? (double)ns / (double)calls / 1000.0 : 0.0, max / 1000u, lcalls,
	     lcalls ? (double)lns / (double)lcalls / 1000.0 : 0.0, lmax / 1000u, ccalls, cns / 1000u);
}

int ta_counters_log_final(ta_counters_t *c)
{
	if (c->final_logged)
		return 0;
	c->final_logged = 1;
	ta_counters_log(c);
	return 1;
}

void ta_counters_running(ta_counters_t *c)
{
	c->final_logged = 0;
}
