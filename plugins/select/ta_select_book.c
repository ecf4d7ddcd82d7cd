/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The status book of select/cons_tres_topoaware (topoaware-status/1, capi/status_c.h): waiting
 * verdicts of job_test, placements of job_begin (with the node order the tasks get, and the
 * placement kept in the job's saved SPANK environment so that a restarted slurmctld books it as it
 * was), ends of job_fini, in a bounded book that ta_select_writer.c writes to the status file. */
#include "ta_select_book.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ta_order_join.h"
#include "ta_select_memo.h"

/* Kept in the job's spank_job_env (saved with the job; the prolog sees them as SPANK_<name>). Each
 * starts with TA_RESERVED_PREFIX (ta_env.h), which job_submit refuses from clients. */
#define TA_HASH_ENV "TOPOAWARE_TOPO_HASH"               /* the topology the placement used */
#define TA_PLACEMENT_ENV "TOPOAWARE_PLACEMENT"          /* ideal | fallback | cons_tres */
#define TA_PLACEMENT_NOTE_ENV "TOPOAWARE_PLACEMENT_NOTE" /* why, for fallback and cons_tres */
/* How the job was placed, for its steps on the nodes (spank_topoaware(8)): a step on the job's own
 * nodes with its own layout takes the rank order from here and reads no topology file. */
#define TA_ORDER_ENV "TOPOAWARE_NODE_ORDER"         /* the job's nodes in rank order, "a,b,c" */
#define TA_ORDER_LAYOUT_ENV "TOPOAWARE_ORDER_LAYOUT" /* the layout that order is for */
#define TA_RAIL_ENV "TOPOAWARE_RAIL_OPTIMIZED"       /* 1 if the fabric is rail-optimized */
/* Longer orders are not kept (an environment string of the job prolog must stay well under the
 * kernel's 128 KiB per string): the steps of such a job read the topology file. Same as the
 * core's kMaxJobOrder. */
#define TA_ORDER_MAX 65536

/* The fields of a job's status entry that every entry has. */
static void ta_status_entry(job_record_t *job_ptr, const ta_job_t *j, topoaware_status_job_t *s)
{
	memset(s, 0, sizeof(*s));
	s->job_id = job_ptr->job_id;
	s->layout = j->layout;
	s->mode = topoaware_mode_name(j->mode);
	s->gpus_per_node = j->gpus_per_node;
	if ((j->opts.set & TOPOAWARE_OPT_MIGRATE) && j->opts.migrate) {
		/* What topoaware defrag --apply needs and cannot get from squeue or scontrol: the job's
		 * --signal (job_submit/topoaware checked at submit that it has one and may be requeued). */
		s->migrate = 1;
		s->signal = job_ptr->warn_signal == NO_VAL16 ? 0 : job_ptr->warn_signal;
		s->signal_time = job_ptr->warn_time == NO_VAL16 ? 0 : job_ptr->warn_time;
		s->signal_batch = (job_ptr->warn_flags & KILL_JOB_BATCH) ? 1 : 0;
		s->requeue = job_ptr->details && job_ptr->details->requeue ? 1 : 0;
	}
}

void ta_book_wait(ta_ctx_t *ctx, job_record_t *job_ptr, const ta_job_t *j, const char *why, int hint)
{
	topoaware_status_job_t s;

	if (!ctx->status)
		return;
	ta_status_entry(job_ptr, j, &s);
	s.reason = why;
	if ((hint ? topoaware_status_waiting_hint : topoaware_status_waiting)(ctx->status, &s, (int64_t)time(NULL)))
		error("%s: %pJ: out of memory for the status book; the status file lacks why it waits", TA, job_ptr);
}

/* The job's node set: node_bitmap, or at slurmctld's start from the saved node list (select_p_job_init
 * runs before slurmctld rebuilds the jobs' node bitmaps, read_config.c _sync_jobs_to_conf). NULL if
 * the job has none; *own is set when the bitmap is the caller's to free. */
static bitstr_t *ta_job_nodes(job_record_t *job_ptr, bitstr_t **own)
{
	*own = NULL;
	if (job_ptr->node_bitmap)
		return job_ptr->node_bitmap;
	if (!job_ptr->nodes || !job_ptr->nodes[0])
		return NULL;
	if (ta_node_name2bitmap(job_ptr->nodes, false, own) != 0)
		FREE_NULL_BITMAP(*own); /* a node that is gone: no order rather than a wrong one */
	return *own;
}

/* NAME's value in the job's spank_job_env, NULL if it has none (or an empty one). */
static const char *ta_job_env_get(job_record_t *job_ptr, const char *name)
{
	size_t len = strlen(name);

	for (uint32_t i = 0; i < job_ptr->spank_job_env_size; i++) {
		const char *e = job_ptr->spank_job_env[i];

		if (e && !strncmp(e, name, len) && e[len] == '=' && e[len + 1])
			return e + len + 1;
	}
	return NULL;
}

/* The ring book of ctx->topo: the running layout jobs' ring edges per cable, which each new job's
 * rank order counts (a job placed beside others enters its leaves by cables their rings do not
 * take). Built at the first job_begin on a topology (after slurmctld's start or a new topology)
 * from every running job's order as it was placed (kept in its spank_job_env), except `skip`'s;
 * then kept up to date by job_begin, job_fini and resizes. NULL without a topology or memory.
 * ctx->lock and slurmctld's job write lock held (job_begin): the job list is stable. The build is
 * linear in the running jobs' nodes, once per topology; its time is logged. */
static topoaware_ring_book_t *ta_book_rings_locked(ta_ctx_t *ctx, uint32_t skip)
{
	ta_list_t *jobs;
	ta_list_itr_t *it;
	job_record_t *job_ptr;
	uint32_t counted = 0, failed = 0;
	uint64_t t0;
	char err[TOPOAWARE_ERR_LEN];

	if (!ctx->topo)
		return NULL;
	if (ctx->rings)
		return ctx->rings;
	if (!(ctx->rings = topoaware_ring_book_create(ctx->topo))) {
		error("%s: out of memory for the ring book; rank orders do not count the running jobs' rings", TA);
		return NULL;
	}
	if (!(jobs = ta_ctx_job_list(ctx)))
		return ctx->rings;
	t0 = ta_now_ns();
	it = list_iterator_create(jobs);
	while ((job_ptr = list_next(it))) {
		const char *order, *layout;
		ta_job_t j;

		/* Only a layout job's order is this plugin's own: job_submit refuses these names from
		 * clients, and a job that got past it (no job_submit/topoaware) must not steer others. */
		if (job_ptr->job_id == skip || !job_ptr->spank_job_env_size ||
		    !(IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) ||
		    !(order = ta_job_env_get(job_ptr, TA_ORDER_ENV)) ||
		    !(layout = ta_job_env_get(job_ptr, TA_ORDER_LAYOUT_ENV)) || !ta_job_options(ctx, job_ptr, &j))
			continue;
		if (topoaware_ring_book_add_placed(ctx->rings, job_ptr->job_id, order, layout, err, sizeof(err))) {
			failed++;
			TA_LOG(ctx, TOPOAWARE_LOG_DEBUG, "%s: %pJ: its ring edges are not counted: %s", TA, job_ptr, err);
		} else {
			counted++;
		}
	}
	list_iterator_destroy(it);
	TA_LOG(ctx, TOPOAWARE_LOG_VERBOSE,
	       "%s: ring book of topology %s: %u running jobs' orders read (%u could not be: see LogLevel=debug), "
	       "%u with edges across leaf groups, %" PRIu64 " edge-cables, in %.3f ms",
	       TA, topoaware_topo_hash(ctx->topo), counted, failed, topoaware_ring_book_jobs(ctx->rings),
	       topoaware_ring_book_edges(ctx->rings), (double)(ta_now_ns() - t0) / 1e6);
	return ctx->rings;
}

/* The nodes of `nodes` in rank order ("n1,n2,..."), xmalloc'd, from the same engine function as the
 * SPANK plugin's TOPOAWARE_NODE_RANK (topoaware_node_ranks is built on topoaware_rank_order);
 * `booked` (a job being placed): counting the running jobs' ring edges, and booking the job's own
 * (topoaware_rank_order_booked), else (a restored job without a kept order) as the job alone.
 * With RankOrder=alone a booked job's order is its order alone too, and is still booked in a ring
 * book that exists, so the book stays true to the running jobs if RankOrder changes back.
 * NULL with a message in err if there is no order (no topology, a node not in it). ctx->lock held. */
static char *ta_node_order(ta_ctx_t *ctx, bitstr_t *nodes, const topoaware_layout_t *layout, job_record_t *booked,
			   uint32_t *count, char *err, size_t errlen)
{
	const int alone = topoaware_conf_rank_order(ctx->conf) == TOPOAWARE_RANK_ORDER_ALONE;
	topoaware_ring_book_t *rings = !booked ? NULL : alone ? ctx->rings : ta_book_rings_locked(ctx, booked->job_id);
	const char **names;
	uint32_t *order, n = 0;
	char *out = NULL;
	int first, last;

	*count = 0;
	if (!nodes || (first = bit_ffs(nodes)) < 0) {
		snprintf(err, errlen, "the job has no nodes");
		return NULL;
	}
	last = bit_fls(nodes);
	names = xcalloc((size_t)(last - first + 1), sizeof(*names));
	for (int i = first; i <= last; i++) {
		node_record_t *node_ptr;

		if (!bit_test(nodes, i) || i >= node_record_count || !(node_ptr = node_record_table_ptr[i]) ||
		    !node_ptr->name)
			continue;
		names[n++] = node_ptr->name;
	}
	*count = n;
	if (!ctx->topo) {
		snprintf(err, errlen, "no topology loaded");
		xfree(names);
		return NULL;
	}
	order = xcalloc(n ? n : 1, sizeof(*order));
	if (n && (rings && !alone ? topoaware_rank_order_booked(rings, booked->job_id, names, n, layout, order, err, errlen)
				  : topoaware_rank_order(ctx->topo, names, n, layout, order, err, errlen)) == 0) {
		char lay[256], why[TOPOAWARE_ERR_LEN] = "its layout cannot be written";

		/* Linear in the text (ta_order_join.h): slurmctld's write locks are held. */
		out = xmalloc(ta_order_join_len(names, order, n) + 1);
		ta_order_join(out, names, order, n);
		if (rings && alone &&
		    (topoaware_layout_string(layout, lay, sizeof(lay)) ||
		     topoaware_ring_book_add_placed(rings, booked->job_id, out, lay, why, sizeof(why))))
			TA_LOG(ctx, TOPOAWARE_LOG_DEBUG, "%s: %pJ: its ring edges are not counted: %s", TA, booked, why);
	} else if (!n) {
		snprintf(err, errlen, "the job has no nodes");
	}
	xfree(order);
	xfree(names);
	return out;
}

/* NAME=value into the job's spank_job_env (replacing NAME's entry; value NULL: removed). Slurm saves
 * it with the job and gives it to the job prolog as SPANK_NAME. */
static void ta_job_env_set(job_record_t *job_ptr, const char *name, const char *value)
{
	size_t len = strlen(name);
	uint32_t i;

	for (i = 0; i < job_ptr->spank_job_env_size; i++)
		if (job_ptr->spank_job_env[i] && !strncmp(job_ptr->spank_job_env[i], name, len) &&
		    job_ptr->spank_job_env[i][len] == '=')
			break;
	if (!value) {
		if (i < job_ptr->spank_job_env_size)
			job_ptr->spank_job_env[i][len + 1] = '\0'; /* an empty value: the entry stays, unused */
		return;
	}
	if (i == job_ptr->spank_job_env_size) {
		xrecalloc(job_ptr->spank_job_env, i + 2, sizeof(char *));
		job_ptr->spank_job_env_size = i + 1;
	} else {
		xfree(job_ptr->spank_job_env[i]);
	}
	job_ptr->spank_job_env[i] = xstrdup_printf("%s=%s", name, value);
}

/* The order a job was placed in, as kept in its spank_job_env (xmalloc'd), if it is for `layout`;
 * else NULL. A restored job's tasks have that order: computing it again could give another one
 * (the ring book of the moment differs). */
static char *ta_kept_order(job_record_t *job_ptr, const topoaware_layout_t *layout)
{
	const char *order = ta_job_env_get(job_ptr, TA_ORDER_ENV), *kept = ta_job_env_get(job_ptr, TA_ORDER_LAYOUT_ENV);
	char lay[256];

	if (!order || !kept || topoaware_layout_string(layout, lay, sizeof(lay)) || strcmp(lay, kept))
		return NULL;
	return xstrdup(order);
}

/* The job's placement into the status book and (LogLevel=verbose) the log. placement/note
 * override what run-now decided (NULL: use that). Unless `restored` (slurmctld's start), the
 * placement is also kept in the job's spank_job_env, which Slurm saves with the job: a restarted
 * slurmctld books it as it was (ta_book_job_init). ctx->lock held. */
static void ta_record_placed(ta_ctx_t *ctx, job_record_t *job_ptr, ta_job_t *j, const char *placement, const char *note,
			     int restored)
{
	char err[TOPOAWARE_ERR_LEN], full[TOPOAWARE_ERR_LEN + 256], decided[16], decided_note[256];
	char *order, *hosts;
	bitstr_t *nodes, *own;
	uint32_t n = 0;
	topoaware_status_job_t s;

	if (!placement) {
		if (ta_memo_take(ctx, job_ptr->job_id, decided, sizeof(decided), decided_note, sizeof(decided_note))) {
			placement = decided;
			note = decided_note;
		} else {
			placement = "cons_tres";
			note = "placed by select/cons_tres without a decision of this plugin (e.g. a preemption)";
		}
	}
	if (!restored) {
		ta_job_env_set(job_ptr, TA_PLACEMENT_ENV, placement);
		ta_job_env_set(job_ptr, TA_PLACEMENT_NOTE_ENV, note && *note ? note : NULL);
	}
	err[0] = '\0';
	/* job_ptr->nodes is set only after select_p_job_begin (node_scheduler.c): from the bitmap. */
	nodes = ta_job_nodes(job_ptr, &own);
	hosts = nodes ? bitmap2node_name(nodes) : NULL;
	if (restored && (order = ta_kept_order(job_ptr, &j->opts.layout))) {
		n = nodes ? (uint32_t)bit_set_count(nodes) : 0;
		if (ctx->rings &&
		    topoaware_ring_book_add_placed(ctx->rings, job_ptr->job_id, order, ta_job_env_get(job_ptr, TA_ORDER_LAYOUT_ENV),
						   err, sizeof(err)))
			TA_LOG(ctx, TOPOAWARE_LOG_DEBUG, "%s: %pJ: its ring edges are not counted: %s", TA, job_ptr, err);
		err[0] = '\0';
	} else {
		order = ta_node_order(ctx, nodes, &j->opts.layout, restored ? NULL : job_ptr, &n, err, sizeof(err));
	}
	FREE_NULL_BITMAP(own);
	if (!order && note && *note)
		snprintf(full, sizeof(full), "%s; no rank order: %s", note, err);
	else if (!order)
		snprintf(full, sizeof(full), "no rank order: %s", err);
	else
		snprintf(full, sizeof(full), "%s", note ? note : "");
	j->gpus_per_node = topoaware_layout_gpus_per_node(&j->opts.layout, n);
	if (!restored) {
		char lay[256];
		int keep = order && strlen(order) <= TA_ORDER_MAX && ctx->topo &&
			   !topoaware_layout_string(&j->opts.layout, lay, sizeof(lay));

		ta_job_env_set(job_ptr, TA_ORDER_ENV, keep ? order : NULL);
		ta_job_env_set(job_ptr, TA_ORDER_LAYOUT_ENV, keep ? lay : NULL);
		ta_job_env_set(job_ptr, TA_RAIL_ENV, keep ? (topoaware_topo_rail_optimized(ctx->topo) ? "1" : "0") : NULL);
	}
	if (ctx->status) {
		ta_status_entry(job_ptr, j, &s);
		s.placement = placement;
		s.nodes = hosts ? hosts : "";
		s.node_order = order ? order : "";
		s.reason = full;
		if (topoaware_status_placed(ctx->status, &s, (int64_t)time(NULL)))
			error("%s: %pJ: out of memory for the status book; the status file lacks its placement", TA,
			      job_ptr);
	}
	TA_LOG(ctx, TOPOAWARE_LOG_VERBOSE, "%s: %pJ %s: %s, %u nodes x %u GPUs, %s, on %s; node order %s%s%s", TA,
	       job_ptr, restored ? "was placed" : "placed", placement, n, j->gpus_per_node, j->layout,
	       hosts ? hosts : "?", order ? order : "(none)", full[0] ? "; " : "", full);
	xfree(order);
	xfree(hosts);
}

/* The topology hash the placement used, for the nodes of a layout job: into the job's spank_job_env,
 * it reaches the job prolog and spank_topoaware as SPANK_TOPOAWARE_TOPO_HASH (spank_topoaware(8)
 * compares it with its own copy). Then the placement into the status book and the log. */
void ta_book_job_begin(ta_ctx_t *ctx, job_record_t *job_ptr)
{
	ta_job_t j;

	if (!job_ptr || !job_ptr->spank_job_env_size)
		return;
	pthread_mutex_lock(&ctx->lock);
	if (!ta_job_options(ctx, job_ptr, &j)) {
		pthread_mutex_unlock(&ctx->lock);
		return;
	}
	if (ctx->topo)
		ta_job_env_set(job_ptr, TA_HASH_ENV, topoaware_topo_hash(ctx->topo));
	ta_record_placed(ctx, job_ptr, &j, NULL, NULL, 0);
	pthread_mutex_unlock(&ctx->lock);
}

void ta_book_job_fini(ta_ctx_t *ctx, job_record_t *job_ptr)
{
	if (!job_ptr || !job_ptr->spank_job_env_size)
		return; /* never a layout job: not in the book */
	pthread_mutex_lock(&ctx->lock);
	topoaware_ring_book_remove(ctx->rings, job_ptr->job_id);
	topoaware_status_finished(ctx->status, job_ptr->job_id);
	pthread_mutex_unlock(&ctx->lock);
}

void ta_book_job_resized(ta_ctx_t *ctx, job_record_t *ended, job_record_t *changed)
{
	ta_job_t j;

	pthread_mutex_lock(&ctx->lock);
	if (ended) {
		topoaware_ring_book_remove(ctx->rings, ended->job_id);
		topoaware_status_finished(ctx->status, ended->job_id);
	}
	if (changed && changed->spank_job_env_size && ta_job_options(ctx, changed, &j) &&
	    topoaware_status_job_phase(ctx->status, changed->job_id) == 1)
		ta_record_placed(ctx, changed, &j, "cons_tres",
				 "its node set was changed by Slurm after placement (resize or expansion)", 0);
	pthread_mutex_unlock(&ctx->lock);
}

/* Running layout jobs that the book does not know: placed before this slurmctld started (a restart,
 * or SelectType switched to this plugin). Their placement as it was booked, from the job's saved
 * spank_job_env; "unknown" for jobs placed by another select plugin. */
void ta_book_job_init(ta_ctx_t *ctx, ta_list_t *job_list)
{
	ta_list_itr_t *it;
	job_record_t *job_ptr;
	ta_job_t j;

	if (!job_list)
		return;
	pthread_mutex_lock(&ctx->lock);
	if (!ctx->status) {
		pthread_mutex_unlock(&ctx->lock);
		return;
	}
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (!job_ptr->spank_job_env_size || !(IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) ||
		    topoaware_status_job_phase(ctx->status, job_ptr->job_id) == 1 || !ta_job_options(ctx, job_ptr, &j))
			continue;
		if (ta_job_env_get(job_ptr, TA_PLACEMENT_ENV))
			ta_record_placed(ctx, job_ptr, &j, ta_job_env_get(job_ptr, TA_PLACEMENT_ENV),
					 ta_job_env_get(job_ptr, TA_PLACEMENT_NOTE_ENV), 1);
		else
			ta_record_placed(ctx, job_ptr, &j, "unknown",
					 "found running when slurmctld started; placed before, not by this plugin", 1);
	}
	list_iterator_destroy(it);
	pthread_mutex_unlock(&ctx->lock);
}
