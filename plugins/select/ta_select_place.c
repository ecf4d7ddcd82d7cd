/* SPDX-License-Identifier: GPL-2.0-or-later */
/* select_p_job_test of select/cons_tres_topoaware (select_cons_tres_topoaware(8)).
 *
 * For a job whose spank_job_env carries a tp/pp/dp layout (_SLURM_SPANK_OPTION_topoaware_*, parsed
 * strictly: it is user input), in RUN_NOW and WILL_RUN (backfill), the decision is the core's
 * (corelib/select_policy.hpp, through topoaware_select_decide: which blocks to offer cons_tres,
 * strict waits and their maximum, MaxTriesPerCall, MaxTimePerCall, MissingNodes=, will-run start
 * times). This file adapts: it reads the job and the nodes' free GPUs (from the gres, whole idle
 * nodes for exclusive jobs) out of Slurm's structures, runs cons_tres on the blocks and bitmaps the
 * decision asks for, and books and answers what it decided.
 *   TEST_ONLY, RESV, preemption-on-full tests: cons_tres exactly (a refusal at submit must mean
 *             "never").
 * Falls back to cons_tres (logged per job at most every 5 minutes, within the log's rate limit:
 * ta_select_memo.h) for: no topology loaded, required nodes (-w),
 * heterogeneous jobs, a layout the node count does not divide, an unreadable layout. Jobs without
 * a layout never get here past the first test. Preemption: blocks are made of free nodes only, so
 * a job with preemptee candidates is placed by topology when free nodes can hold it; otherwise the
 * plain cons_tres fallback (prefer; strict only when nothing is free) may preempt (logged). */
#include "ta_select_place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ta_cons_start.h"
#include "ta_select_book.h"
#include "ta_select_ends.h"
#include "ta_select_job.h"
#include "ta_select_loader.h"
#include "ta_select_memo.h"

static uint64_t ta_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* 1: a layout job we place; 0: not a layout job; -1: a layout job we leave to plain cons_tres,
 * *why says why (logged); 2: a layout job that waits for the topology being loaded. */
static int ta_job_read(ta_ctx_t *ctx, job_record_t *job_ptr, uint32_t min_nodes, ta_job_t *j, const char **why)
{
	const char *part = (job_ptr->part_ptr && job_ptr->part_ptr->name) ? job_ptr->part_ptr->name : NULL;

	*why = NULL;
	if (!ta_job_options(ctx, job_ptr, j))
		return 0;
	j->nodes = min_nodes;
	j->gpus_per_node = topoaware_layout_gpus_per_node(&j->opts.layout, min_nodes);

	if (!ctx->placer && ta_loader_pending_locked(ctx)) {
		*why = "the topology is being loaded (topoaware waits for it, not for plain cons_tres)";
		return 2;
	}
	if (!ctx->placer)
		*why = "no topology loaded";
	else if (job_ptr->het_job_id)
		*why = "heterogeneous jobs are not placed by topology";
	else if (job_ptr->details && job_ptr->details->req_node_bitmap)
		*why = "the job requires specific nodes (-w)";
	else if (!j->gpus_per_node)
		*why = "its node count does not divide the layout's world size";
	else if (topoaware_parts_use(ctx->parts, part) == TOPOAWARE_PART_PLAIN) {
		/* Logged once per partition when the topology loaded (ta_select_load.c), not per job. */
		*why = "its partition's Slurm topology leaves it to plain select/cons_tres";
		return -1;
	}
	if (*why) {
		const char *more = ta_memo_should_log(ctx, job_ptr->job_id, 2);

		if (more)
			TA_LOG(ctx, TOPOAWARE_LOG_INFO, "%s: %pJ: %s; placed by plain select/cons_tres%s", TA, job_ptr,
			       *why, more);
		return -1;
	}
	return 1;
}

static int ta_gres_is_gpu(void *x, void *key)
{
	gres_state_t *gs = x;
	return gs->plugin_id == *(uint32_t *)key;
}

/* GPUs configured on a node (all_free) or free now. */
static uint16_t ta_node_gpus(ta_ctx_t *ctx, node_record_t *node_ptr, int all_free)
{
	gres_state_t *gs;
	gres_node_state_t *ns;
	uint64_t v;

	if (!node_ptr->gres_list)
		return 0;
	gs = list_find_first(node_ptr->gres_list, ta_gres_is_gpu, &ctx->gpu_id);
	if (!gs || !(ns = gs->gres_data))
		return 0;
	v = ns->gres_cnt_avail;
	if (!all_free)
		v = ns->gres_cnt_alloc >= v ? 0 : v - ns->gres_cnt_alloc;
	return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

/* free[] for the nodes of `bitmap`. Now: GPUs not allocated, and for an exclusive job only
 * nodes without jobs, for a shared one only nodes without exclusive jobs. all_free: every GPU
 * of every usable node (the future, for will-run). */
static void ta_fill_free(ta_ctx_t *ctx, job_record_t *job_ptr, bitstr_t *bitmap, int all_free, uint16_t *free)
{
	int exclusive = job_ptr->details && (!job_ptr->details->share_res || job_ptr->details->whole_node);

	for (uint32_t i = 0; i < ctx->nodes; i++) {
		node_record_t *node_ptr = node_record_table_ptr[i];

		free[i] = 0;
		if (!node_ptr || !bit_test(bitmap, i))
			continue;
		if (!all_free) {
			if (exclusive && (node_ptr->run_job_cnt || node_ptr->comp_job_cnt))
				continue;
			if (node_ptr->no_share_job_cnt)
				continue;
		}
		free[i] = ta_node_gpus(ctx, node_ptr, all_free);
	}
}

/* cons_tres inside a layout call, timed apart (the counters line: layout_cons_calls, _us). */
static int ta_cons_timed(ta_ctx_t *ctx, const ta_job_test_t *t, bitstr_t *bitmap)
{
	uint64_t t0 = ta_now_ns();
	int rc = ta_family_job_test(&ctx->cons, t, bitmap);

	ta_count_cons(&ctx->counters, ta_now_ns() - t0);
	return rc;
}

/* cons_tres on `bitmap`, without the nodes that are not in the topology unless `any` (then on the
 * whole bitmap). On success the chosen nodes are in `bitmap`. */
static int ta_plain(ta_ctx_t *ctx, const ta_job_test_t *t, bitstr_t *bitmap, int any)
{
	bitstr_t *known;
	int rc;

	if (any || !ctx->known)
		return ta_cons_timed(ctx, t, bitmap);
	known = bit_copy(bitmap);
	bit_and(known, ctx->known);
	rc = ta_cons_timed(ctx, t, known);
	if (rc == SLURM_SUCCESS)
		bit_copybits(bitmap, known);
	FREE_NULL_BITMAP(known);
	return rc;
}

/* One select_p_job_test call of a layout job, as the backend of the core's decision
 * (topoaware_select_decide): cons_tres on a block or on everything, and the allocations kept. */
typedef struct {
	ta_ctx_t *ctx;
	const ta_job_test_t *t; /* Slurm's call; t->bitmap: the usable nodes */
	job_record_t *job_ptr;
	bitstr_t *last, *best, *plain; /* the last block cons_tres accepted, the best one, plain's answer */
	int64_t *ends;                 /* ta_block_start: the running jobs' ends, read once per call */
	size_t n_ends;
	int ends_read;
} ta_call_t;

static int ta_try_block(void *arg, const uint32_t *nodes, uint32_t n, int64_t *start)
{
	ta_call_t *c = arg;

	bit_clear_all(c->last);
	for (uint32_t k = 0; k < n; k++)
		bit_set(c->last, nodes[k]);
	if (ta_cons_timed(c->ctx, c->t, c->last) != SLURM_SUCCESS)
		return 0;
	if (start)
		*start = (int64_t)c->job_ptr->start_time;
	return 1;
}

static void ta_keep_best(void *arg)
{
	ta_call_t *c = arg;

	if (!c->best)
		c->best = bit_alloc(c->ctx->nodes);
	bit_copybits(c->best, c->last);
}

static int ta_try_plain(void *arg, int any, int64_t *start, int *preempted)
{
	ta_call_t *c = arg;

	c->plain = bit_copy(c->t->bitmap);
	if (ta_plain(c->ctx, c->t, c->plain, any) != SLURM_SUCCESS)
		return 0;
	if (start)
		*start = (int64_t)c->job_ptr->start_time;
	if (preempted)
		*preempted = (c->t->preemptee_job_list && *c->t->preemptee_job_list) ?
				     list_count(*c->t->preemptee_job_list) :
				     0;
	return 1;
}

static uint64_t ta_clock_ms(void *arg)
{
	return ta_ms();
}

static int64_t ta_wall_s(void *arg)
{
	return (int64_t)time(NULL);
}

static void ta_decision_log(void *arg, int level, int once_key, const char *text)
{
	ta_call_t *c = arg;
	const char *more = "";

	if (once_key && !(more = ta_memo_should_log(c->ctx, c->job_ptr->job_id, once_key)))
		return;
	if (level == TOPOAWARE_LOG_QUIET)
		error("%s: %pJ%s%s", TA, c->job_ptr, text, more);
	else
		TA_LOG(c->ctx, level, "%s: %pJ%s%s", TA, c->job_ptr, text, more);
}

static int ta_cmp_time(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The start plain cons_tres's will-run gives a job that fits from fits_at on, where it answers with
 * the last end of a batch of job ends (ta_family.batched_will_run: 22.05 .. 24.11; ta_cons_start.h):
 * over the running and suspended jobs on the usable nodes, as cons_tres lists them
 * (_build_cr_job_list; from 24.11 without those that end before backfill's window and those that
 * end after it). Backfill then plans a block when stock Slurm would plan the job, and leaves the
 * same room before it to smaller jobs (docs/design.md, "Backfill plans"). With
 * preemptee candidates cons_tres frees those first: fits_at. One pass over the job list per call
 * (the first time it is asked), as cons_tres's own will-run makes. */
static int64_t ta_block_start(void *arg, int64_t fits_at)
{
	ta_call_t *c = arg;

	if (!ta_family.batched_will_run ||
	    (c->t->preemptee_candidates && list_count(c->t->preemptee_candidates)))
		return fits_at;
	if (!c->ends_read) {
		ta_list_t *jobs = ta_ctx_job_list(c->ctx);
		ta_list_itr_t *it;
		job_record_t *jp;
		size_t cap = jobs ? (size_t)list_count(jobs) : 0;
		time_t from, until;

		c->ends_read = 1;
		if (!cap)
			return fits_at;
		ta_family_will_run_window(c->t, &from, &until);
		c->ends = xcalloc(cap, sizeof(*c->ends));
		it = list_iterator_create(jobs);
		while ((jp = list_next(it)) && c->n_ends < cap) {
			if (!(IS_JOB_RUNNING(jp) || IS_JOB_SUSPENDED(jp)) || !jp->end_time || !jp->node_bitmap ||
			    (from && jp->end_time < from) || (until && jp->end_time > until) ||
			    !bit_overlap_any(c->t->bitmap, jp->node_bitmap))
				continue;
			c->ends[c->n_ends++] = (int64_t)jp->end_time;
		}
		list_iterator_destroy(it);
		qsort(c->ends, c->n_ends, sizeof(*c->ends), ta_cmp_time);
	}
	return ta_cons_batched_start(c->ends, c->n_ends, fits_at, c->ctx->window_linear);
}

/* Run-now or will-run of a layout job we place: the core decides, this applies its answer. */
static int ta_place(ta_ctx_t *ctx, const ta_job_test_t *t, const ta_job_t *j, time_t deadline, int will_run)
{
	job_record_t *job_ptr = t->job_ptr;
	bitstr_t *bitmap = t->bitmap;
	ta_call_t c = { ctx, t, job_ptr, bit_alloc(ctx->nodes), NULL, NULL, NULL, 0, 0 };
	topoaware_select_backend_t be = { &c, ta_try_block, ta_keep_best, ta_try_plain, ta_clock_ms, ta_wall_s,
					  ta_decision_log, ta_block_start };
	topoaware_select_request_t req;
	topoaware_select_answer_t ans;
	char err[TOPOAWARE_ERR_LEN];
	int rc = SLURM_ERROR;

	memset(&req, 0, sizeof(req));
	req.nodes = j->nodes;
	req.gpus_per_node = j->gpus_per_node;
	req.layout = &j->opts.layout;
	req.mode = j->mode;
	req.now = (int64_t)time(NULL);
	req.deadline = (int64_t)deadline;
	req.will_run = will_run;
	req.may_preempt = t->preemptee_candidates && list_count(t->preemptee_candidates);
	req.usable = (const uint64_t *)(bitmap + BITSTR_OVERHEAD);
	req.nbits = ctx->nodes;
	ta_fill_free(ctx, job_ptr, bitmap, 0, ctx->free_now);
	req.free_now = ctx->free_now;
	if (will_run) {
		ta_fill_free(ctx, job_ptr, bitmap, 1, ctx->free_all);
		req.free_all = ctx->free_all;
		ta_ends_fill(ctx, job_ptr, bitmap, (time_t)req.now, &req.all_free_at, &req.earliest_free_at);
	}
	req.max_tries = topoaware_conf_max_tries(ctx->conf);
	req.max_time_ms = topoaware_conf_max_time_ms(ctx->conf);
	req.missing_mode = topoaware_conf_missing_nodes(ctx->conf);

	if (topoaware_select_decide(ctx->placer, &req, &be, &ans, err, sizeof(err)) != 0) {
		/* Cannot happen with a checked layout; never leave the job unplaced for it. */
		error("%s: %pJ: %s; placed by plain select/cons_tres", TA, job_ptr, err);
		rc = ta_cons_timed(ctx, t, bitmap);
		goto out;
	}
	if (ans.verdict == TOPOAWARE_SELECT_BLOCK) {
		bit_copybits(bitmap, will_run ? c.best : c.last);
		rc = SLURM_SUCCESS;
	} else if (ans.verdict == TOPOAWARE_SELECT_PLAIN) {
		bit_copybits(bitmap, c.plain);
		rc = SLURM_SUCCESS;
	}
	if (will_run && rc == SLURM_SUCCESS)
		job_ptr->start_time = (time_t)ans.start;
	if (!will_run && rc == SLURM_SUCCESS)
		ta_memo_decide(ctx, job_ptr->job_id, ans.placement, ans.note);
	if (ans.wait[0])
		ta_book_wait(ctx, job_ptr, j, ans.wait, ans.wait_hint);
out:
	FREE_NULL_BITMAP(c.last);
	FREE_NULL_BITMAP(c.best);
	FREE_NULL_BITMAP(c.plain);
	xfree(c.ends);
	return rc;
}

int ta_place_job_test(ta_ctx_t *ctx, const ta_job_test_t *t, int *layout)
{
	job_record_t *job_ptr = t->job_ptr;
	bitstr_t *bitmap = t->bitmap;
	uint16_t mode = t->mode;
	ta_job_t j;
	const char *why = NULL;
	int rc, r, run_now = SELECT_IS_MODE_RUN_NOW(mode);
	int will_run = !run_now && (mode & SELECT_MODE_BASE) == SELECT_MODE_WILL_RUN && !SELECT_IS_CHECK_FULL_SET(mode);
	time_t deadline;

	*layout = 0;
	/* Fast path: test-only, reservations and jobs without our options. Preemptee candidates do
	 * not end placement: slurmctld lists them for every job of a higher tier whenever a
	 * lower-tier job runs (node_scheduler.c), and cons_tres itself first tries without
	 * preempting. Our blocks hold only free nodes, so cons_tres tried on a block places there
	 * without preempting; preemption happens through the plain cons_tres fallback (ta_place). */
	if ((!run_now && !will_run) || !job_ptr || !job_ptr->details || !job_ptr->spank_job_env_size)
		goto plain;

	pthread_mutex_lock(&ctx->lock);
	r = ta_job_read(ctx, job_ptr, t->min_nodes, &j, &why);
	if (r == 1 && (uint32_t)bit_size(bitmap) != ctx->nodes) {
		r = -1; /* cannot happen: node_init maps every new node table */
		why = "Slurm's node table differs from the one the topology was mapped onto";
	}
	if (r == 0) {
		pthread_mutex_unlock(&ctx->lock);
		goto plain;
	}
	if (r == 2) {
		/* Not runnable for a moment (a new node table, the topology not mapped onto it yet). */
		if (run_now)
			ta_book_wait(ctx, job_ptr, &j, why, 0);
		pthread_mutex_unlock(&ctx->lock);
		return SLURM_ERROR;
	}
	if (r < 0) {
		/* A layout job that plain cons_tres places: recorded, so that the status file and the
		 * verbose log say so. */
		rc = ta_family_job_test(&ctx->cons, t, bitmap);
		if (run_now && rc == SLURM_SUCCESS) {
			ta_memo_decide(ctx, job_ptr->job_id, "cons_tres", why);
		} else if (run_now) {
			char reason[512];

			snprintf(reason, sizeof(reason), "%s; plain select/cons_tres finds no free resources for it now",
				 why);
			ta_book_wait(ctx, job_ptr, &j, reason, 0);
		}
		pthread_mutex_unlock(&ctx->lock);
		return rc;
	}
	*layout = 1;
	deadline = (job_ptr->details->begin_time ? job_ptr->details->begin_time : time(NULL)) + (time_t)j.max_wait;
	rc = ta_place(ctx, t, &j, deadline, !run_now);
	pthread_mutex_unlock(&ctx->lock);
	return rc;

plain:
	return ta_family_job_test(&ctx->cons, t, bitmap);
}

