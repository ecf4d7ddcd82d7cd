/* The status book of select/cons_tres_topoaware (topoaware-status/1, capi/status_c.h): waiting
 * verdicts of job_test, placements of job_begin (with the node order the tasks get), ends of
 * job_fini, the topology of every node_init and the job_test counters, in a bounded book. A thread
 * of this plugin writes it (atomically) at most once per StatusInterval, outside slurmctld's locks
 * and with the file I/O outside ours; the last write is forced when slurmctld stops. Errors are
 * logged once per distinct message and never stop anything. */
#include "ta_select_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "src/slurmctld/locks.h"

/* Kept in the job's spank_job_env (saved with the job; the prolog sees them as SPANK_<name>). */
#define TA_HASH_ENV "TOPOAWARE_TOPO_HASH"               /* the topology the placement used */
#define TA_PLACEMENT_ENV "TOPOAWARE_PLACEMENT"          /* ideal | fallback | cons_tres */
#define TA_PLACEMENT_NOTE_ENV "TOPOAWARE_PLACEMENT_NOTE" /* why, for fallback and cons_tres */
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

/* ---- the writer ------------------------------------------------------------------------------ */

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

/* Writes the status file if a write is due (or `force`). Called with ta_lock held; the file is
 * written with ta_lock released (never with slurmctld's locks: from the writer thread, or at
 * shutdown). */
static void ta_status_flush_locked(int force)
{
	char *text = NULL, err[TOPOAWARE_ERR_LEN], path[TA_PATH_MAX];
	size_t len = 0;
	ta_counters_t c;
	topoaware_call_counters_t cc;
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
	topoaware_status_set_counters(ta_status, &cc);
	r = topoaware_status_render(ta_status, (int64_t)time(NULL), (int64_t)topoaware_conf_status_interval(ta_conf),
				    force, &text, &len, err, sizeof(err));
	if (r < 0) {
		ta_status_error(ta_status_path, err);
		return;
	}
	if (r == 0)
		return;
	snprintf(path, sizeof(path), "%s", ta_status_path);
	pthread_mutex_unlock(&ta_lock);
	r = topoaware_status_write_text(path, text, len, err, sizeof(err));
	topoaware_status_text_free(text);
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
	slurmctld_lock_t job_read = {NO_LOCK, READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK};
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
void ta_book_writer_start_locked(void)
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
void ta_book_writer_stop(void)
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

void ta_book_writer_wake_locked(void)
{
	pthread_cond_signal(&ta_writer_cond);
}

void ta_book_path_changed_locked(void)
{
	ta_status_err[0] = '\0';
}

void ta_book_init(void)
{
	*(void **)&ta_lock_ctld = dlsym(RTLD_DEFAULT, "lock_slurmctld");
	*(void **)&ta_unlock_ctld = dlsym(RTLD_DEFAULT, "unlock_slurmctld");
	*(void **)&ta_find_job = dlsym(RTLD_DEFAULT, "find_job_record");
}

void ta_select_shutdown(void)
{
	ta_book_writer_stop();
	pthread_mutex_lock(&ta_lock);
	ta_status_flush_locked(1);
	pthread_mutex_unlock(&ta_lock);
}

/* ---- entries ------------------------------------------------------------------------------ */

/* ta_select_int.h */
void ta_book_wait(job_record_t *job_ptr, const ta_job_t *j, const char *why, int hint)
{
	topoaware_status_job_t s;

	if (!ta_status)
		return;
	memset(&s, 0, sizeof(s));
	s.job_id = job_ptr->job_id;
	s.layout = j->layout;
	s.mode = topoaware_mode_name(j->mode);
	s.gpus_per_node = j->gpus_per_node;
	s.reason = why;
	if ((hint ? topoaware_status_waiting_hint : topoaware_status_waiting)(ta_status, &s, (int64_t)time(NULL)))
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
	if (node_name2bitmap(job_ptr->nodes, false, own) != 0)
		FREE_NULL_BITMAP(*own); /* a node that is gone: no order rather than a wrong one */
	return *own;
}

/* The nodes of `nodes` in rank order ("n1,n2,..."), xmalloc'd, from the same engine function as the
 * SPANK plugin's TOPOAWARE_NODE_RANK (topoaware_node_ranks is built on topoaware_rank_order).
 * NULL with a message in err if there is no order (no topology, a node not in it). ta_lock held. */
static char *ta_node_order(bitstr_t *nodes, const topoaware_layout_t *layout, uint32_t *count, char *err,
			   size_t errlen)
{
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
	if (!ta_topo) {
		snprintf(err, errlen, "no topology loaded");
		xfree(names);
		return NULL;
	}
	order = xcalloc(n ? n : 1, sizeof(*order));
	if (n && topoaware_rank_order(ta_topo, names, n, layout, order, err, errlen) == 0) {
		for (uint32_t k = 0; k < n; k++)
			xstrfmtcat(out, "%s%s", k ? "," : "", names[order[k]]);
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

/* The job's placement into the status book and (LogLevel=verbose) the log. placement/note
 * override what run-now decided (NULL: use that). Unless `restored` (slurmctld's start), the
 * placement is also kept in the job's spank_job_env, which Slurm saves with the job: a restarted
 * slurmctld books it as it was (ta_select_job_init). ta_lock held. */
static void ta_record_placed(job_record_t *job_ptr, ta_job_t *j, const char *placement, const char *note,
			     int restored)
{
	char err[TOPOAWARE_ERR_LEN], full[TOPOAWARE_ERR_LEN + 256], decided[16], decided_note[256];
	char *order, *hosts;
	bitstr_t *nodes, *own;
	uint32_t n = 0;
	topoaware_status_job_t s;

	if (!placement) {
		if (ta_decided_take(job_ptr->job_id, decided, sizeof(decided), decided_note, sizeof(decided_note))) {
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
	order = ta_node_order(nodes, &j->opts.layout, &n, err, sizeof(err));
	FREE_NULL_BITMAP(own);
	if (!order && note && *note)
		snprintf(full, sizeof(full), "%s; no rank order: %s", note, err);
	else if (!order)
		snprintf(full, sizeof(full), "no rank order: %s", err);
	else
		snprintf(full, sizeof(full), "%s", note ? note : "");
	j->gpus_per_node = topoaware_layout_gpus_per_node(&j->opts.layout, n);
	if (ta_status) {
		memset(&s, 0, sizeof(s));
		s.job_id = job_ptr->job_id;
		s.layout = j->layout;
		s.mode = topoaware_mode_name(j->mode);
		s.gpus_per_node = j->gpus_per_node;
		s.placement = placement;
		s.nodes = hosts ? hosts : "";
		s.node_order = order ? order : "";
		s.reason = full;
		if (topoaware_status_placed(ta_status, &s, (int64_t)time(NULL)))
			error("%s: %pJ: out of memory for the status book; the status file lacks its placement", TA,
			      job_ptr);
	}
	TA_LOG(TOPOAWARE_LOG_VERBOSE, "%s: %pJ %s: %s, %u nodes x %u GPUs, %s, on %s; node order %s%s%s", TA,
	       job_ptr, restored ? "was placed" : "placed", placement, n, j->gpus_per_node, j->layout,
	       hosts ? hosts : "?", order ? order : "(none)", full[0] ? "; " : "", full);
	xfree(order);
	xfree(hosts);
}

/* The topology hash the placement used, for the nodes of a layout job: into the job's spank_job_env,
 * it reaches the job prolog and spank_topoaware as SPANK_TOPOAWARE_TOPO_HASH (spank_topoaware(8)
 * compares it with its own copy). Then the placement into the status book and the log. */
void ta_select_job_begin(job_record_t *job_ptr)
{
	ta_job_t j;

	if (!job_ptr || !job_ptr->spank_job_env_size)
		return;
	pthread_mutex_lock(&ta_lock);
	if (!ta_job_options(job_ptr, &j)) {
		pthread_mutex_unlock(&ta_lock);
		return;
	}
	if (ta_topo)
		ta_job_env_set(job_ptr, TA_HASH_ENV, topoaware_topo_hash(ta_topo));
	ta_record_placed(job_ptr, &j, NULL, NULL, 0);
	pthread_mutex_unlock(&ta_lock);
}

void ta_select_job_fini(job_record_t *job_ptr)
{
	if (!job_ptr || !job_ptr->spank_job_env_size)
		return; /* never a layout job: not in the book */
	pthread_mutex_lock(&ta_lock);
	topoaware_status_finished(ta_status, job_ptr->job_id);
	pthread_mutex_unlock(&ta_lock);
}

void ta_select_job_resized(job_record_t *ended, job_record_t *changed)
{
	ta_job_t j;

	pthread_mutex_lock(&ta_lock);
	if (ended)
		topoaware_status_finished(ta_status, ended->job_id);
	if (changed && changed->spank_job_env_size && ta_job_options(changed, &j) &&
	    topoaware_status_job_phase(ta_status, changed->job_id) == 1)
		ta_record_placed(changed, &j, "cons_tres",
				 "its node set was changed by Slurm after placement (resize or expansion)", 0);
	pthread_mutex_unlock(&ta_lock);
}

/* Running layout jobs that the book does not know: placed before this slurmctld started (a restart,
 * or SelectType switched to this plugin). Their placement as it was booked, from the job's saved
 * spank_job_env; "unknown" for jobs placed by another select plugin. */
void ta_select_job_init(List job_list)
{
	ListIterator it;
	job_record_t *job_ptr;
	ta_job_t j;

	if (!job_list)
		return;
	pthread_mutex_lock(&ta_lock);
	if (!ta_status) {
		pthread_mutex_unlock(&ta_lock);
		return;
	}
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (!job_ptr->spank_job_env_size || !(IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) ||
		    topoaware_status_job_phase(ta_status, job_ptr->job_id) == 1 || !ta_job_options(job_ptr, &j))
			continue;
		if (ta_job_env_get(job_ptr, TA_PLACEMENT_ENV))
			ta_record_placed(job_ptr, &j, ta_job_env_get(job_ptr, TA_PLACEMENT_ENV),
					 ta_job_env_get(job_ptr, TA_PLACEMENT_NOTE_ENV), 1);
		else
			ta_record_placed(job_ptr, &j, "unknown",
					 "found running when slurmctld started; placed before, not by this plugin", 1);
	}
	list_iterator_destroy(it);
	pthread_mutex_unlock(&ta_lock);
}
