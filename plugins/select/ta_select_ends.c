/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When nodes free up (select_cons_tres_topoaware(8), will-run of layout jobs): what the core's
 * will-run needs from slurmctld's job list, read as cons_tres's own will-run reads it. */
#include "ta_select_ends.h"

#include <string.h>

#include "ta_gres.h"

/* ---- when nodes free up (will-run) --------------------------------------------------------------
 * Per node-table index, the first and the last end time of the running, suspended and completing
 * jobs on the node (0: none), read from slurmctld's job list as cons_tres's own will-run reads it.
 * Backfill asks will-run for many jobs in a row over the same running jobs: the ends are read
 * again only when a job began, ended or changed its nodes (ta_ends_jobs_changed, from the entry
 * points) or the second changed (time limits edited, suspensions). */
void ta_ends_jobs_changed(ta_ctx_t *ctx)
{
	__atomic_add_fetch(&ctx->jobs_gen, 1, __ATOMIC_RELAXED);
}

static void ta_ends_free(ta_ends_t *e)
{
	xfree(e->first_end);
	xfree(e->last_end);
	xfree(e->all_free_at);
	xfree(e->earliest_free_at);
	memset(e, 0, sizeof(*e));
}

/* 1 with ctx->ends read for the current jobs; 0 when slurmctld's job list is not reachable. */
static int ta_ends_read(ta_ctx_t *ctx, time_t now)
{
	ta_list_t *jobs = ta_ctx_job_list(ctx);
	uint64_t gen = __atomic_load_n(&ctx->jobs_gen, __ATOMIC_RELAXED);
	ta_list_itr_t *it;
	job_record_t *jp;

	if (!jobs || !ctx->nodes)
		return 0;
	if (ctx->ends.n != ctx->nodes) {
		ta_ends_free(&ctx->ends);
		ctx->ends.n = ctx->nodes;
		ctx->ends.first_end = xcalloc(ctx->nodes, sizeof(int64_t));
		ctx->ends.last_end = xcalloc(ctx->nodes, sizeof(int64_t));
		ctx->ends.all_free_at = xcalloc(ctx->nodes, sizeof(int64_t));
		ctx->ends.earliest_free_at = xcalloc(ctx->nodes, sizeof(int64_t));
	}
	if (ctx->ends.valid && ctx->ends.gen == gen && ctx->ends.at == now)
		return 1;
	memset(ctx->ends.first_end, 0, ctx->nodes * sizeof(int64_t));
	memset(ctx->ends.last_end, 0, ctx->nodes * sizeof(int64_t));
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
		if (last >= (int64_t)ctx->nodes)
			last = (int64_t)ctx->nodes - 1;
		for (int64_t i = first; i <= last; i++) {
			if (!bit_test(jp->node_bitmap, i))
				continue;
			if (!ctx->ends.first_end[i] || end < ctx->ends.first_end[i])
				ctx->ends.first_end[i] = end;
			if (end > ctx->ends.last_end[i])
				ctx->ends.last_end[i] = end;
		}
	}
	list_iterator_destroy(it);
	ctx->ends.gen = gen;
	ctx->ends.at = now;
	ctx->ends.valid = 1;
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
int ta_ends_fill(ta_ctx_t *ctx, job_record_t *job_ptr, bitstr_t *bitmap, time_t now, const int64_t **all_free_at,
		 const int64_t **earliest_free_at)
{
	int exclusive = job_ptr->details && (!job_ptr->details->share_res || job_ptr->details->whole_node);
	uint32_t per_node = ta_job_node_gpus(job_ptr);

	if (!ta_ends_read(ctx, now))
		return 0;
	for (uint32_t i = 0; i < ctx->nodes; i++) {
		int64_t *all = &ctx->ends.all_free_at[i], *earliest = &ctx->ends.earliest_free_at[i];
		node_record_t *node_ptr = node_record_table_ptr[i];
		int has_jobs = ctx->ends.last_end[i] != 0;

		*all = *earliest = INT64_MAX;
		if (!node_ptr || !bit_test(bitmap, i))
			continue;
		*all = has_jobs ? ctx->ends.last_end[i] : (int64_t)now;
		if (ctx->free_all[i] < per_node)
			continue; /* never */
		if (exclusive)
			*earliest = has_jobs ? ctx->ends.last_end[i] : (int64_t)now;
		else
			*earliest = (ctx->free_now[i] >= per_node || !has_jobs) ? (int64_t)now : ctx->ends.first_end[i];
	}
	*all_free_at = ctx->ends.all_free_at;
	*earliest_free_at = ctx->ends.earliest_free_at;
	return 1;
}
