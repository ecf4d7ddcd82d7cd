/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When nodes free up (select_cons_tres_topoaware(8), will-run of layout jobs): what the core's
 * will-run needs from slurmctld's job list, read as cons_tres's own will-run reads it. */
#include "ta_select_ends.h"

#include <stdint.h>
#include <string.h>

#include "ta_gres.h"

/* ---- when nodes free up (will-run) --------------------------------------------------------------
 * Per node-table index, the first and the last end time of the running, suspended and completing
 * jobs on the node (0: none), read from slurmctld's job list as cons_tres's own will-run reads it.
 * Backfill asks will-run for many jobs in a row over the same running jobs: the ends are read
 * again only when a job began, ended or changed its nodes (ta_select_jobs_changed, from the entry
 * points) or the second changed (time limits edited, suspensions). */
static struct {
	uint32_t n;
	int64_t *first_end, *last_end;
	int64_t *all_free_at, *earliest_free_at; /* per call, for the core */
	uint64_t gen;
	time_t at;
	int valid;
} ta_ends;
static uint64_t ta_jobs_gen;

void ta_select_jobs_changed(void)
{
	__atomic_add_fetch(&ta_jobs_gen, 1, __ATOMIC_RELAXED);
}

void ta_ends_free_locked(void)
{
	xfree(ta_ends.first_end);
	xfree(ta_ends.last_end);
	xfree(ta_ends.all_free_at);
	xfree(ta_ends.earliest_free_at);
	memset(&ta_ends, 0, sizeof(ta_ends));
}

/* 1 with ta_ends read for the current jobs; 0 when slurmctld's job list is not reachable. */
static int ta_ends_read(time_t now)
{
	ta_list_t *jobs = ta_ctld_job_list();
	uint64_t gen = __atomic_load_n(&ta_jobs_gen, __ATOMIC_RELAXED);
	ta_list_itr_t *it;
	job_record_t *jp;

	if (!jobs || !ta_nodes)
		return 0;
	if (ta_ends.n != ta_nodes) {
		ta_ends_free_locked();
		ta_ends.n = ta_nodes;
		ta_ends.first_end = xcalloc(ta_nodes, sizeof(int64_t));
		ta_ends.last_end = xcalloc(ta_nodes, sizeof(int64_t));
		ta_ends.all_free_at = xcalloc(ta_nodes, sizeof(int64_t));
		ta_ends.earliest_free_at = xcalloc(ta_nodes, sizeof(int64_t));
	}
	if (ta_ends.valid && ta_ends.gen == gen && ta_ends.at == now)
		return 1;
	memset(ta_ends.first_end, 0, ta_nodes * sizeof(int64_t));
	memset(ta_ends.last_end, 0, ta_nodes * sizeof(int64_t));
	it = list_iterator_create(jobs);
	while ((jp = list_next(it))) {
		int64_t end, first, last;

		if (!jp->node_bitmap || !(IS_JOB_RUNNING(jp) || IS_JOB_SUSPENDED(jp) || IS_JOB_COMPLETING(jp)))
			continue;
		/* Completing, or past its end (cons_tres guesses a little later): from now on. */
		end = (IS_JOB_COMPLETING(jp) || jp->end_time < now) ? (int64_t)now : (int64_t)jp->end_time;
		first = bit_ffs(jp->node_bitmap);
		last = bit_fls(jp->node_bitmap);
		if (first < 0)
			continue;
		if (last >= (int64_t)ta_nodes)
			last = (int64_t)ta_nodes - 1;
		for (int64_t i = first; i <= last; i++) {
			if (!bit_test(jp->node_bitmap, i))
				continue;
			if (!ta_ends.first_end[i] || end < ta_ends.first_end[i])
				ta_ends.first_end[i] = end;
			if (end > ta_ends.last_end[i])
				ta_ends.last_end[i] = end;
		}
	}
	list_iterator_destroy(it);
	ta_ends.gen = gen;
	ta_ends.at = now;
	ta_ends.valid = 1;
	return 1;
}

/* GPUs per node plain cons_tres must give the job (its --gpus-per-node), 0 if it asks no such count. */
static uint32_t ta_job_node_gpus(job_record_t *job_ptr)
{
	char err[TOPOAWARE_ERR_LEN];
	uint32_t gpus = 0;

	if (!job_ptr->tres_per_node || ta_tres_gpus(job_ptr->tres_per_node, "--gpus-per-node", &gpus, err, sizeof(err)))
		return 0;
	return gpus;
}

/* For the core's will-run (topoaware_select_request_t): when every job on a usable node has ended,
 * and the earliest time plain cons_tres could give this job the node: now when its GPUs are free
 * now, else the first end of a job there, the last for an exclusive job; never when the node has
 * fewer GPUs than the job asks per node. Every estimate errs early, so that the core leaves plain
 * cons_tres out only when it truly cannot start the job sooner. 0: not known (the job list). */
int ta_ends_fill(job_record_t *job_ptr, bitstr_t *bitmap, time_t now, const int64_t **all_free_at,
		 const int64_t **earliest_free_at)
{
	int exclusive = job_ptr->details && (!job_ptr->details->share_res || job_ptr->details->whole_node);
	uint32_t per_node = ta_job_node_gpus(job_ptr);

	if (!ta_ends_read(now))
		return 0;
	for (uint32_t i = 0; i < ta_nodes; i++) {
		int64_t *all = &ta_ends.all_free_at[i], *earliest = &ta_ends.earliest_free_at[i];
		node_record_t *node_ptr = node_record_table_ptr[i];
		int has_jobs = ta_ends.last_end[i] != 0;

		*all = *earliest = INT64_MAX;
		if (!node_ptr || !bit_test(bitmap, i))
			continue;
		*all = has_jobs ? ta_ends.last_end[i] : (int64_t)now;
		if (ta_free_all[i] < per_node)
			continue; /* never */
		if (exclusive)
			*earliest = has_jobs ? ta_ends.last_end[i] : (int64_t)now;
		else
			*earliest = (ta_free[i] >= per_node || !has_jobs) ? (int64_t)now : ta_ends.first_end[i];
	}
	*all_free_at = ta_ends.all_free_at;
	*earliest_free_at = ta_ends.earliest_free_at;
	return 1;
}
