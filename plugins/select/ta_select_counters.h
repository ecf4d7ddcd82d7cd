/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The select_p_job_test counters of select/cons_tres_topoaware and of its pass-through build
 * (ta_select_counters.c; select_cons_tres_topoaware(8), COUNTERS): the same code in both, which the
 * benchmark compares. The state is part of the plugin's context (ta_select_ctx.h). */
#ifndef TA_SELECT_COUNTERS_H
#define TA_SELECT_COUNTERS_H

#include <stdint.h>

/* Bounds of the call-time histogram: counts[i] calls took at most le_us[i] (and more than
 * le_us[i - 1]); counts[TA_BUCKETS] took longer than the last bound. */
#define TA_BUCKETS 12

/* Calls, total and largest time (CLOCK_MONOTONIC, ns), for all calls and for layout-job calls
 * (calls in which the topoaware build ran its placement; always 0 in the pass-through), and the
 * cons_tres calls made inside layout calls with their time. slurmctld calls job_test with the job
 * write lock held, one at a time, but every field is read and written atomically: the status file
 * writer reads them from its own thread. final_logged: the counters line of slurmctld's stop was
 * logged (set by the entry points or the writer thread). */
typedef struct {
	uint64_t calls, ns, max_ns, lcalls, lns, lmax_ns, ccalls, cns;
	uint64_t counts[TA_BUCKETS + 1], lcounts[TA_BUCKETS + 1];
	int final_logged;
} ta_counters_t;

/* A copy of the counters in microseconds, for the status file. */
typedef struct {
	uint64_t calls, total_us, max_us;
	uint64_t layout_calls, layout_total_us, layout_max_us;
	const uint64_t *le_us; /* TA_BUCKETS bounds */
	uint64_t counts[TA_BUCKETS + 1], layout_counts[TA_BUCKETS + 1];
} ta_counters_copy_t;

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ta_now_ns(void);
/* One select_p_job_test call of dt ns (layout: a call in which the placement ran). */
void ta_count(ta_counters_t *c, uint64_t dt, int layout);
/* One cons_tres call of dt ns made inside a layout call (topoaware build only). */
void ta_count_cons(ta_counters_t *c, uint64_t dt);
void ta_counters_copy(const ta_counters_t *c, ta_counters_copy_t *out);
/* The counters line into the log. */
void ta_counters_log(ta_counters_t *c);
/* slurmctld stops: the counters line, once. 1 if this call logged it, 0 if it was logged before. */
int ta_counters_log_final(ta_counters_t *c);
/* slurmctld runs (again, after node_init): the next stop logs the line again. */
void ta_counters_running(ta_counters_t *c);

#endif
