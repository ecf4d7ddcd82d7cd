/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The status file writer of select/cons_tres_topoaware (topoaware-status/1, capi/status_c.h): a
 * thread of this plugin writes the status book (ta_select_book.c) atomically at most once per
 * StatusInterval, outside slurmctld's locks and with the file I/O outside ours, and forgets the
 * waiting entries of jobs cancelled while pending; the last write is forced when slurmctld stops.
 * Errors are logged once per distinct message and never stop anything. */
#include "ta_select_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "src/slurmctld/locks.h"

#define TA_SWEEP_EVERY 5 /* seconds between two looks for cancelled pending jobs */

static char ta_status_err[TOPOAWARE_ERR_LEN]; /* last write error logged, "" = none */
static pthread_t ta_writer;
static pthread_cond_t ta_writer_cond = PTHREAD_COND_INITIALIZER;
static int ta_writer_running, ta_writer_stop;
static time_t ta_last_sweep;

/* slurmctld's own functions, looked up at run time in slurmctld (they live in its binary; every
 * Slurm command loads this plugin too). NULL: no sweep of cancelled pending jobs. */
static void (*ta_lock_ctld)(slurmctld_lock_t);
static void (*ta_unlock_ctld)(slurmctld_lock_t);
static job_record_t *(*ta_find_job)(uint32_t);

/* A write error, logged once per distinct message. ta_lock held. */
static void ta_status_error(const char *path, const char *err)
{
	if (!strcmp(ta_status_err, err))
		return;
	snprintf(ta_status_err, sizeof(ta_status_err), "%s", err);
	error("%s: cannot write the status file %s: %s; retrying every StatusInterval (slurmctld is not affected, "
	      "topoaware show sees old data)",
	      TA, path, err);
}

/* Writes the status file if a write is due (or `force`). Called with ta_lock held; the text is
 * rendered from a copy of the book and the file written with ta_lock released (never with
 * slurmctld's locks: from the writer thread, or at shutdown). */
static void ta_status_flush_locked(int force)
{
	char *text = NULL, err[TOPOAWARE_ERR_LEN], path[TA_PATH_MAX];
	size_t len = 0;
	ta_counters_t c;
	topoaware_call_counters_t cc;
	topoaware_status_t *snap = NULL;
	int64_t now;
	int r;

	if (!ta_status || !ta_status_path[0])
		return;
	ta_job_test_counters(&c);
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
	topoaware_status_set_counters(ta_status, &cc);
	/* Under ta_lock only a copy of the book (job_test waits on ta_lock); the JSON text is built
	 * from the copy and written with the lock released. */
	now = (int64_t)time(NULL);
	r = topoaware_status_snapshot(ta_status, now, (int64_t)topoaware_conf_status_interval(ta_conf), force, &snap,
				      err, sizeof(err));
	if (r < 0) {
		ta_status_error(ta_status_path, err);
		return;
	}
	if (r == 0)
		return;
	snprintf(path, sizeof(path), "%s", ta_status_path);
	pthread_mutex_unlock(&ta_lock);
	r = topoaware_status_render(snap, now, 0, 1, &text, &len, err, sizeof(err));
	topoaware_status_free(snap);
	if (r == 1) {
		r = topoaware_status_write_text(path, text, len, err, sizeof(err));
		topoaware_status_text_free(text);
	} else {
		r = -1;
	}
	pthread_mutex_lock(&ta_lock);
	if (r != 0) {
		if (ta_status)
			topoaware_status_write_failed(ta_status);
		ta_status_error(path, err);
	} else if (ta_status_err[0]) {
		info("%s: status file %s written again", TA, path);
		ta_status_err[0] = '\0';
	}
}

/* A waiting entry whose job is no longer pending (cancelled, or gone): Slurm tells a select
 * plugin nothing when a pending job is cancelled. Runs with slurmctld's job read lock held. */
static int ta_job_gone(uint32_t job_id, void *arg)
{
	job_record_t *job_ptr = ta_find_job(job_id);

	(void)arg;
	return !job_ptr || !IS_JOB_PENDING(job_ptr);
}

/* Forgets the waiting entries of jobs that are not pending any more. Called WITHOUT ta_lock: the
 * order is always slurmctld's locks first, then ta_lock (as in every select_p_* call). */
static void ta_sweep(void)
{
	/* Designated: 26.05 added a sixth lock (select_node, src/slurmctld/locks.h); NO_LOCK is 0. */
	slurmctld_lock_t job_read = { .job = READ_LOCK };
	time_t now = time(NULL);

	if (!ta_lock_ctld || !ta_unlock_ctld || !ta_find_job || now - ta_last_sweep < TA_SWEEP_EVERY)
		return;
	ta_last_sweep = now;
	ta_lock_ctld(job_read);
	pthread_mutex_lock(&ta_lock);
	if (ta_status && !ta_writer_stop)
		topoaware_status_forget_waiting(ta_status, ta_job_gone, NULL);
	pthread_mutex_unlock(&ta_lock);
	ta_unlock_ctld(job_read);
}

static void *ta_writer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ta_lock);
	while (!ta_writer_stop) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1; /* due writes are at most ~1 s late */
		pthread_cond_timedwait(&ta_writer_cond, &ta_lock, &ts);
		if (ta_writer_stop)
			break;
		if (!ta_cons_saves_state && ta_ctld_stopping()) {
			/* 25.05+: no state save marks slurmctld's stop (and fini() is not called). */
			pthread_mutex_unlock(&ta_lock);
			ta_entry_stopping();
			pthread_mutex_lock(&ta_lock);
			ta_status_flush_locked(1);
			break;
		}
		if (!ta_status || !ta_status_path[0])
			continue;
		pthread_mutex_unlock(&ta_lock);
		ta_sweep();
		pthread_mutex_lock(&ta_lock);
		if (!ta_writer_stop)
			ta_status_flush_locked(0);
	}
	pthread_mutex_unlock(&ta_lock);
	return NULL;
}

/* ta_lock held (ta_select_int.h). */
void ta_writer_start_locked(void)
{
	pthread_attr_t attr;

	if (ta_writer_running || !ta_status)
		return;
	ta_writer_stop = 0;
	if (pthread_attr_init(&attr) == 0) {
		if (pthread_create(&ta_writer, &attr, ta_writer_main, NULL) == 0)
			ta_writer_running = 1;
		else
			error("%s: cannot start the status file writer: %m; no status file", TA);
		pthread_attr_destroy(&attr);
	}
}

/* ta_lock NOT held. */
void ta_writer_end(void)
{
	pthread_t t;

	pthread_mutex_lock(&ta_lock);
	if (!ta_writer_running) {
		pthread_mutex_unlock(&ta_lock);
		return;
	}
	ta_writer_stop = 1;
	t = ta_writer;
	pthread_cond_signal(&ta_writer_cond);
	pthread_mutex_unlock(&ta_lock);
	pthread_join(t, NULL);
	pthread_mutex_lock(&ta_lock);
	ta_writer_running = 0;
	pthread_mutex_unlock(&ta_lock);
}

void ta_writer_wake_locked(void)
{
	pthread_cond_signal(&ta_writer_cond);
}

void ta_writer_path_changed_locked(void)
{
	ta_status_err[0] = '\0';
}

void ta_writer_init(void)
{
	*(void **)&ta_lock_ctld = dlsym(RTLD_DEFAULT, "lock_slurmctld");
	*(void **)&ta_unlock_ctld = dlsym(RTLD_DEFAULT, "unlock_slurmctld");
	*(void **)&ta_find_job = dlsym(RTLD_DEFAULT, "find_job_record");
}

void ta_select_shutdown(void)
{
	ta_writer_end();
	pthread_mutex_lock(&ta_lock);
	ta_status_flush_locked(1);
	pthread_mutex_unlock(&ta_lock);
}
