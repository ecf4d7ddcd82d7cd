/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The status file writer of select/cons_tres_topoaware (topoaware-status/1, capi/status_c.h): a
 * thread of this plugin writes the status book (ta_select_book.c) atomically at most once per
 * StatusInterval, outside slurmctld's locks and with the file I/O outside ours, and forgets the
 * waiting entries of jobs cancelled while pending; the last write is forced when slurmctld stops.
 * Errors are logged once per distinct message and never stop anything. */
#include "ta_select_writer.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "ta_select_family.h"

#define TA_SWEEP_EVERY 5 /* seconds between two looks for cancelled pending jobs */
#define TA_SWEEP_PIECE 1024 /* entries looked at per hold of the locks (a job lookup each) */

/* A write error, logged once per distinct message. ctx->lock held. */
static void ta_status_error(ta_ctx_t *ctx, const char *path, const char *err)
{
	if (!strcmp(ctx->writer.err, err))
		return;
	snprintf(ctx->writer.err, sizeof(ctx->writer.err), "%s", err);
	error("%s: cannot write the status file %s: %s; retrying every StatusInterval (slurmctld is not affected, "
	      "topoaware show sees old data)",
	      TA, path, err);
}

/* Brings the writer's copy of the book up to date and writes the status file from it if a write is
 * due (or `force`). Called with ctx->lock held, which job_test waits on: under it only the changes
 * since the last call are handed over (O(1)); they are applied to the copy, the text built and the
 * file written with the lock released (never with slurmctld's locks: from the writer thread, or at
 * shutdown once the thread ended; so the copy is only ever used by one thread). Runs every tick,
 * so that the changes never pile up in the book; with no status file it keeps no copy and the book
 * no changes. */
static void ta_status_flush_locked(ta_ctx_t *ctx, int force)
{
	char *text = NULL, err[TOPOAWARE_ERR_LEN], path[TA_PATH_MAX];
	size_t len = 0;
	ta_counters_copy_t c;
	topoaware_call_counters_t cc;
	topoaware_status_changes_t *changes = NULL;
	ta_writer_t *w = &ctx->writer;
	int64_t now;
	int r, full = 0, wrote = 0, write = ctx->status_path[0] != '\0';

	if (!ctx->status)
		return;
	if (!write) {
		/* No status file: no copy to keep up, and the book keeps no changes for it. */
		topoaware_status_t *copy = w->copy;

		topoaware_status_stop_changes(ctx->status);
		w->copy = NULL;
		if (copy) {
			pthread_mutex_unlock(&ctx->lock);
			topoaware_status_free(copy); /* as large as the book: not under the lock */
			pthread_mutex_lock(&ctx->lock);
		}
		return;
	}
	if (!w->copy) {
		if (!(w->copy = topoaware_status_create(TA))) {
			ta_status_error(ctx, ctx->status_path, "out of memory for the writer's copy of the status book");
			return;
		}
		full = 1; /* a new copy starts from every entry (O(1) at start-up: the book records from the start) */
	}
	ta_counters_copy(&ctx->counters, &c);
	cc.calls = c.calls;
	cc.total_us = c.total_us;
	cc.max_us = c.max_us;
	cc.layout_calls = c.layout_calls;
	cc.layout_total_us = c.layout_total_us;
	cc.layout_max_us = c.layout_max_us;
	cc.buckets = TA_BUCKETS;
	cc.le_us = c.le_us;
	cc.counts = c.counts;
	cc.layout_counts = c.layout_counts;
	topoaware_status_set_counters(ctx->status, &cc);
	now = (int64_t)time(NULL);
	r = topoaware_status_take(ctx->status, now, write, (int64_t)topoaware_conf_status_interval(ctx->conf), force,
				  full, &changes, err, sizeof(err));
	if (r < 0) {
		ta_status_error(ctx, ctx->status_path, err);
		if (full) { /* a new copy that got nothing: made again, with a full take, next time */
			topoaware_status_free(w->copy); /* empty */
			w->copy = NULL;
		}
		return;
	}
	snprintf(path, sizeof(path), "%s", ctx->status_path);
	pthread_mutex_unlock(&ctx->lock);
	if (topoaware_status_apply(w->copy, changes, err, sizeof(err)) != 0) {
		/* Out of step: a new copy from every entry next time; this write is not made. */
		topoaware_status_free(w->copy);
		w->copy = NULL;
		r = -1;
	} else if (r == 1) {
		r = topoaware_status_render(w->copy, now, 0, 1, &text, &len, err, sizeof(err));
		if (r == 1) {
			r = topoaware_status_write_text(path, text, len, err, sizeof(err));
			topoaware_status_text_free(text);
			wrote = r == 0;
		} else {
			r = -1;
		}
	}
	pthread_mutex_lock(&ctx->lock);
	if (r < 0) {
		if (ctx->status)
			topoaware_status_write_failed(ctx->status);
		ta_status_error(ctx, path, err);
	} else if (wrote && ctx->writer.err[0]) {
		info("%s: status file %s written again", TA, path);
		ctx->writer.err[0] = '\0';
	}
}

/* A waiting entry whose job is no longer pending (cancelled, or gone): Slurm tells a select
 * plugin nothing when a pending job is cancelled. Runs with slurmctld's job read lock held. */
static int ta_job_gone(uint32_t job_id, void *arg)
{
	ta_ctx_t *ctx = arg;
	job_record_t *job_ptr = ctx->writer.find_job(job_id);

	return !job_ptr || !IS_JOB_PENDING(job_ptr);
}

/* Forgets the waiting entries of jobs that are not pending any more, TA_SWEEP_PIECE entries at a
 * time with the locks let go in between, so that a book of 100,000 entries never holds slurmctld's
 * job read lock (which the scheduler's write lock waits on) or ctx->lock for long. Called WITHOUT
 * ctx->lock: the order is always slurmctld's locks first, then ctx->lock (as in every select_p_*
 * call). */
static void ta_sweep(ta_ctx_t *ctx)
{
	/* Designated: 26.05 added a sixth lock (select_node, src/slurmctld/locks.h); NO_LOCK is 0. */
	slurmctld_lock_t job_read = { .job = READ_LOCK };
	ta_writer_t *w = &ctx->writer;
	time_t now = time(NULL);
	uint32_t next = 0;
	int stop = 0;

	if (!w->lock_ctld || !w->unlock_ctld || !w->find_job || now - w->last_sweep < TA_SWEEP_EVERY)
		return;
	w->last_sweep = now;
	do {
		w->lock_ctld(job_read);
		pthread_mutex_lock(&ctx->lock);
		stop = !ctx->status || w->stop;
		if (!stop)
			topoaware_status_forget_waiting(ctx->status, ta_job_gone, ctx, &next, TA_SWEEP_PIECE);
		pthread_mutex_unlock(&ctx->lock);
		w->unlock_ctld(job_read);
	} while (next && !stop);
}

static void *ta_writer_main(void *arg)
{
	ta_ctx_t *ctx = arg;

	pthread_mutex_lock(&ctx->lock);
	while (!ctx->writer.stop) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1; /* due writes are at most ~1 s late */
		pthread_cond_timedwait(&ctx->writer.cond, &ctx->lock, &ts);
		if (ctx->writer.stop)
			break;
		if (!ta_family.saves_state && ta_ctx_stopping(ctx)) {
			/* 25.05+: no state save marks slurmctld's stop (and fini() is not called). */
			pthread_mutex_unlock(&ctx->lock);
			ta_counters_log_final(&ctx->counters);
			pthread_mutex_lock(&ctx->lock);
			ta_status_flush_locked(ctx, 1);
			break;
		}
		if (!ctx->status)
			continue;
		pthread_mutex_unlock(&ctx->lock);
		ta_sweep(ctx);
		pthread_mutex_lock(&ctx->lock);
		if (!ctx->writer.stop)
			ta_status_flush_locked(ctx, 0);
	}
	pthread_mutex_unlock(&ctx->lock);
	return NULL;
}

void ta_writer_start_locked(ta_ctx_t *ctx)
{
	pthread_attr_t attr;

	if (ctx->writer.running || ctx->writer.shut || !ctx->status)
		return;
	ctx->writer.stop = 0;
	if (pthread_attr_init(&attr) == 0) {
		if (pthread_create(&ctx->writer.thread, &attr, ta_writer_main, ctx) == 0)
			ctx->writer.running = 1;
		else
			error("%s: cannot start the status file writer: %m; no status file", TA);
		pthread_attr_destroy(&attr);
	}
}

void ta_writer_end(ta_ctx_t *ctx)
{
	pthread_t t;

	pthread_mutex_lock(&ctx->lock);
	if (!ctx->writer.running) {
		pthread_mutex_unlock(&ctx->lock);
		return;
	}
	ctx->writer.stop = 1;
	t = ctx->writer.thread;
	pthread_cond_signal(&ctx->writer.cond);
	pthread_mutex_unlock(&ctx->lock);
	pthread_join(t, NULL);
	pthread_mutex_lock(&ctx->lock);
	ctx->writer.running = 0;
	pthread_mutex_unlock(&ctx->lock);
}

void ta_writer_wake_locked(ta_ctx_t *ctx)
{
	pthread_cond_signal(&ctx->writer.cond);
}

void ta_writer_path_changed_locked(ta_ctx_t *ctx)
{
	ctx->writer.err[0] = '\0';
}

void ta_writer_init(ta_ctx_t *ctx)
{
	*(void **)&ctx->writer.lock_ctld = dlsym(RTLD_DEFAULT, "lock_slurmctld");
	*(void **)&ctx->writer.unlock_ctld = dlsym(RTLD_DEFAULT, "unlock_slurmctld");
	*(void **)&ctx->writer.find_job = dlsym(RTLD_DEFAULT, "find_job_record");
}

void ta_writer_shutdown(ta_ctx_t *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->writer.shut = 1; /* no writer starts again: the last write below uses its copy alone */
	pthread_mutex_unlock(&ctx->lock);
	ta_writer_end(ctx);
	pthread_mutex_lock(&ctx->lock);
	ta_status_flush_locked(ctx, 1);
	pthread_mutex_unlock(&ctx->lock);
}
