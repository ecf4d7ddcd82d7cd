/* Placement half of select/cons_tres_topoaware (select_cons_tres_topoaware(8)).
 *
 * select_p_job_test, for a job whose spank_job_env carries a tp/pp/dp layout
 * (_SLURM_SPANK_OPTION_topoaware_*, parsed strictly: it is user input), in RUN_NOW and WILL_RUN
 * (backfill): the decision is the core's (corelib/select_policy.hpp, through
 * topoaware_select_decide: which blocks to offer cons_tres, strict waits and their maximum,
 * MaxTriesPerCall, MaxTimePerCall, MissingNodes=, will-run start times). This file adapts: it reads
 * the job and the nodes' free GPUs (from the gres, whole idle nodes for exclusive jobs) out of
 * Slurm's structures, runs cons_tres on the blocks and bitmaps the decision asks for, and logs,
 * books and answers what it decided.
 *   TEST_ONLY, RESV, preemption-on-full tests: cons_tres exactly (a refusal at submit must mean
 *             "never").
 * Falls back to cons_tres (logged once per job) for: no topology loaded, required nodes (-w),
 * heterogeneous jobs, a layout the node count does not divide, an unreadable layout. Jobs without
 * a layout never get here past the first test. Preemption: blocks are made of free nodes only, so
 * a job with preemptee candidates is placed by topology when free nodes can hold it; otherwise the
 * plain cons_tres fallback (prefer; strict only when nothing is free) may preempt (logged).
 *
 * State: topoaware.conf and the topology are (re)read in select_p_node_init (start-up and every
 * scontrol reconfigure), the node-name map is rebuilt there from the new node table; a new file
 * that does not load keeps the last good topology, a topoaware.conf that does not parse keeps the
 * last good settings. All state is behind one mutex (job_test is called by the main and the
 * backfill scheduler, node_init by reconfigure, the status writer from its own thread).
 *
 * Status file (topoaware-status/1, capi/status_c.h): waiting verdicts of job_test, placements of
 * job_begin, ends of job_fini, the topology of every node_init and the job_test counters are kept
 * in a bounded book; a thread of this plugin writes it (atomically) at most once per
 * StatusInterval, outside slurmctld's locks and with the file I/O outside ours; the last write is
 * forced when slurmctld stops. Errors are logged once per distinct message and never stop anything. */
#include "config.h" /* Slurm's */

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

/* Slurm's own plugins include this first: it renames Slurm's internal functions to the slurm_*
 * names that both libslurmfull (slurmctld, slurmd, the commands) and the public libslurm.so
 * export, so that the plugin also loads in programs linked to libslurm.so (pyslurm, DRMAA, ...). */
#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "layout_c.h"
#include "ta_env.h"
#include "status_c.h"
#include "ta_select.h"
#include "topoaware_c.h"

#define TA "select/cons_tres_topoaware"

#define TA_LOG_EVERY 300         /* a job's fallback/wait reason is logged at most every 5 minutes */
#define TA_LOG_SLOTS 256         /* jobs remembered for that (direct-mapped by job id) */
#define TA_HASH_ENV "TOPOAWARE_TOPO_HASH" /* job_begin: reaches the prolog as SPANK_TOPOAWARE_TOPO_HASH */
#define TA_PATH_MAX 4096

/* Defined here as Slurm's own select plugins define them (cons_common.c): programs linked to the
 * public libslurm.so (pyslurm, DRMAA, the Perl API) load every select plugin in PluginDir and have
 * no such variables, so a mere reference would keep the plugin from loading there. In slurmctld
 * its own definitions take precedence (these are exported for that, select.map); outside
 * slurmctld the plugin never reads them. */
node_record_t **node_record_table_ptr;
int node_record_count;

/* ---- state ---------------------------------------------------------------------------------- */

static pthread_mutex_t ta_lock = PTHREAD_MUTEX_INITIALIZER;
static topoaware_conf_t *ta_conf;       /* last good topoaware.conf (NULL: defaults) */
static topoaware_topo_t *ta_topo;       /* last good topology (NULL: none, plain cons_tres) */
static topoaware_placer_t *ta_placer;   /* ta_topo mapped onto the current node table */
static char ta_topo_path[TA_PATH_MAX];  /* the file ta_topo came from */
static uint32_t ta_nodes;               /* node table size the placer was built for */
static uint16_t *ta_free, *ta_free_all; /* scratch: free GPUs per node-table index, now and all */
static uint32_t ta_gpu_id;              /* gres plugin id of "gpu" */
static bitstr_t *ta_known;              /* nodes in the topology; NULL: all are (or no placer) */
static uint32_t ta_missing;             /* Slurm nodes not in the topology */

/* Settings of the last good topoaware.conf (topoaware.conf(5)). */
static uint32_t ta_max_tries = 4, ta_max_time_ms = 200, ta_status_interval = 2;
static int ta_log_level = TOPOAWARE_LOG_INFO, ta_missing_mode = TOPOAWARE_MISSING_AVOID;
static char ta_status_path[TA_PATH_MAX]; /* "" = no status file */
static int ta_settings_applied;          /* the above were set once (from a file or the defaults) */

/* The status book and its writer thread (uses ta_lock). */
static topoaware_status_t *ta_status;
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
#define TA_SWEEP_EVERY 5 /* seconds between two looks for cancelled pending jobs */

/* A message of the plugin's own level (LogLevel=): at or below the level it goes to Slurm's info
 * (so that it shows with the usual SlurmctldDebug=info); above, one step below in Slurm's scale
 * (info -> verbose, verbose -> debug, debug -> debug2), so that a higher SlurmctldDebug shows it
 * too. Errors always go to error(). */
#define TA_LOG(lvl, fmt, ...)                                  \
	do {                                                   \
		if (ta_log_level >= (lvl))                     \
			info(fmt, ##__VA_ARGS__);              \
		else if ((lvl) <= TOPOAWARE_LOG_INFO)          \
			verbose(fmt, ##__VA_ARGS__);           \
		else if ((lvl) == TOPOAWARE_LOG_VERBOSE)       \
			debug(fmt, ##__VA_ARGS__);             \
		else                                           \
			debug2(fmt, ##__VA_ARGS__);            \
	} while (0)

/* What run-now decided for a job that cons_tres then placed, for job_begin (which follows in the
 * same select_nodes call, under the same job write lock). Direct-mapped by job id. */
static struct {
	uint32_t job_id;
	char placement[16]; /* "ideal" | "fallback" | "cons_tres" */
	char note[256];
} ta_decided[TA_LOG_SLOTS];

static struct {
	uint32_t job_id;
	time_t when;
	int what;
} ta_logged[TA_LOG_SLOTS];

/* 1 if this (job, reason) was not logged in the last TA_LOG_EVERY seconds: a reason that changes
 * is logged at once, the same one again after 5 minutes. */
static int ta_should_log(uint32_t job_id, int what)
{
	time_t now = time(NULL);
	unsigned k = job_id % TA_LOG_SLOTS;

	if (ta_logged[k].job_id == job_id && ta_logged[k].what == what && now - ta_logged[k].when < TA_LOG_EVERY)
		return 0;
	ta_logged[k].job_id = job_id;
	ta_logged[k].what = what;
	ta_logged[k].when = now;
	return 1;
}

static uint64_t ta_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void ta_decide(uint32_t job_id, const char *placement, const char *note)
{
	unsigned k = job_id % TA_LOG_SLOTS;

	ta_decided[k].job_id = job_id;
	snprintf(ta_decided[k].placement, sizeof(ta_decided[k].placement), "%s", placement);
	snprintf(ta_decided[k].note, sizeof(ta_decided[k].note), "%s", note ? note : "");
}

/* ---- status file ---------------------------------------------------------------------------- */

/* A write error, logged once per distinct message. ta_lock held. */
static void ta_status_error(const char *path, const char *err)
{
	if (!strcmp(ta_status_err, err))
		return;
	snprintf(ta_status_err, sizeof(ta_status_err), "%s", err);
	error("%s: cannot write the status file %s: %s; retrying every StatusInterval (slurmctld is not affected, topoaware show sees old data)",
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
	r = topoaware_status_render(ta_status, (int64_t)time(NULL), (int64_t)ta_status_interval, force, &text, &len, err,
				    sizeof(err));
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

/* ta_lock held. */
static void ta_writer_start_locked(void)
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
static void ta_writer_join(void)
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

void ta_select_init(void)
{
	ta_gpu_id = gres_build_id("gpu");
	*(void **)&ta_lock_ctld = dlsym(RTLD_DEFAULT, "lock_slurmctld");
	*(void **)&ta_unlock_ctld = dlsym(RTLD_DEFAULT, "unlock_slurmctld");
	*(void **)&ta_find_job = dlsym(RTLD_DEFAULT, "find_job_record");
	pthread_mutex_lock(&ta_lock);
	if (!ta_status)
		ta_status = topoaware_status_create(TA);
	if (!ta_status)
		error("%s: out of memory for the status book; no status file", TA);
	pthread_mutex_unlock(&ta_lock);
}

void ta_select_shutdown(void)
{
	ta_writer_join();
	pthread_mutex_lock(&ta_lock);
	ta_status_flush_locked(1);
	pthread_mutex_unlock(&ta_lock);
}

void ta_select_fini(void)
{
	ta_writer_join();
	pthread_mutex_lock(&ta_lock);
	topoaware_placer_free(ta_placer);
	ta_placer = NULL;
	topoaware_topo_free(ta_topo);
	ta_topo = NULL;
	topoaware_conf_free(ta_conf);
	ta_conf = NULL;
	topoaware_status_free(ta_status);
	ta_status = NULL;
	xfree(ta_free);
	xfree(ta_free_all);
	FREE_NULL_BITMAP(ta_known);
	ta_nodes = 0;
	pthread_mutex_unlock(&ta_lock);
}

/* ---- topoaware.conf and the topology --------------------------------------------------------- */

/* topoaware.conf and the topology a missing or broken one implies, beside the slurm.conf that
 * slurmctld read (topoaware_default_paths: the same rule as the SPANK plugin and the command). */
static void ta_default_paths(char *conf, size_t conf_len, char *topo, size_t topo_len)
{
	if (topoaware_default_paths(slurm_conf.slurm_conf, conf, conf_len, topo, topo_len) != 0) {
		snprintf(conf, conf_len, "/etc/slurm/topoaware.conf");
		snprintf(topo, topo_len, "/etc/slurm/topology.json");
	}
}

/* The settings of ta_conf (NULL: the defaults) into the plugin's variables. ta_lock held. */
static void ta_apply_settings_locked(const char *conf_path)
{
	char buf[TA_PATH_MAX], shown[TA_PATH_MAX + 16];
	int r;

	ta_settings_applied = 1;
	ta_max_tries = topoaware_conf_max_tries(ta_conf);
	ta_max_time_ms = topoaware_conf_max_time_ms(ta_conf);
	ta_log_level = topoaware_conf_log_level(ta_conf);
	ta_missing_mode = topoaware_conf_missing_nodes(ta_conf);
	ta_status_interval = topoaware_conf_status_interval(ta_conf);
	r = topoaware_conf_status_file(ta_conf, slurm_conf.state_save_location, buf, sizeof(buf));
	if (r == 0) {
		if (strcmp(buf, ta_status_path))
			ta_status_err[0] = '\0'; /* a new file: its errors are new */
		snprintf(ta_status_path, sizeof(ta_status_path), "%s", buf);
		snprintf(shown, sizeof(shown), "%s", buf);
	} else {
		ta_status_path[0] = '\0';
		snprintf(shown, sizeof(shown), "none");
		if (r < 0)
			error("%s: no status file: %s", TA, buf);
	}
	TA_LOG(TOPOAWARE_LOG_INFO,
	       "%s: settings%s%s: MaxTriesPerCall=%u MaxTimePerCall=%ums LogLevel=%s MissingNodes=%s StatusFile=%s StatusInterval=%us",
	       TA, conf_path ? " from " : " (built-in defaults)", conf_path ? conf_path : "", ta_max_tries,
	       ta_max_time_ms, topoaware_log_level_name(ta_log_level), topoaware_missing_nodes_name(ta_missing_mode),
	       shown, ta_status_interval);
}

/* Which Slurm nodes the placer does not know: ta_known, ta_missing, and one log line with their
 * names. The placer lists them in node-table order. ta_lock held. */
static void ta_map_missing_locked(const char *const *names, uint32_t n)
{
	uint32_t missing = topoaware_placer_missing(ta_placer), k = 0, named = 0;
	hostlist_t hl;
	char *list;

	FREE_NULL_BITMAP(ta_known);
	ta_missing = 0;
	if (!missing)
		return;
	ta_known = bit_alloc(n);
	bit_set_all(ta_known);
	hl = hostlist_create(NULL);
	for (uint32_t i = 0; i < n && k < missing; i++) {
		const char *m = topoaware_placer_missing_name(ta_placer, k);

		if (!m || strcmp(names[i], m))
			continue;
		k++;
		bit_clear(ta_known, i);
		if (!*m)
			continue; /* a defunct slot of the node table, not a node */
		named++;
		hostlist_push_host(hl, m);
	}
	ta_missing = named;
	if (named) {
		list = hostlist_ranged_string_xmalloc(hl);
		/* At every LogLevel (a topology problem), once per load. */
		info("%s: %u of %u Slurm nodes are not in topology %s: %.2000s; %s", TA, named, n, ta_topo_path, list,
		     ta_missing_mode == TOPOAWARE_MISSING_FALLBACK
			     ? "MissingNodes=fallback: plain select/cons_tres may give them to layout jobs that the topology's nodes cannot hold now"
			     : "MissingNodes=avoid: they are never chosen for layout jobs (run topoaware discover again to add them)");
		xfree(list);
	} else {
		FREE_NULL_BITMAP(ta_known); /* only empty slots: every real node is known */
	}
	hostlist_destroy(hl);
}

/* Called with ta_lock held. */
static void ta_reload_locked(void)
{
	char path[TA_PATH_MAX], topo_path[TA_PATH_MAX], default_topo[TA_PATH_MAX], err[TOPOAWARE_ERR_LEN];
	topoaware_conf_t *conf;
	topoaware_topo_t *topo;
	topoaware_placer_t *placer;
	const char **names;
	int found = 0;
	uint32_t n = node_record_count > 0 ? (uint32_t)node_record_count : 0;

	ta_default_paths(path, sizeof(path), default_topo, sizeof(default_topo));
	conf = topoaware_conf_load(path, &found, err, sizeof(err));
	if (!conf) {
		/* At every LogLevel: an admin's mistake that changes nothing until it is fixed. */
		error("%s: %s: %s; keeping the %s settings", TA, path, err, ta_conf ? "previous" : "built-in default");
		if (!ta_settings_applied)
			ta_apply_settings_locked(NULL); /* the defaults, e.g. the default status file */
	} else {
		topoaware_conf_free(ta_conf);
		ta_conf = conf;
		ta_apply_settings_locked(found ? path : NULL);
	}
	if (!ta_conf || topoaware_conf_topology(ta_conf, topo_path, sizeof(topo_path)) != 0)
		snprintf(topo_path, sizeof(topo_path), "%s", default_topo);

	topo = topoaware_topo_load(topo_path, err, sizeof(err));
	if (topo) {
		TA_LOG(TOPOAWARE_LOG_INFO, "%s: topology %s loaded (%u hosts, %s)", TA, topo_path,
		       topoaware_topo_hosts(topo), topoaware_topo_hash(topo));
		topoaware_status_set_topology(ta_status, topo_path, topoaware_topo_hash(topo), "");
	} else if (ta_topo) {
		error("%s: cannot load topology %s: %s; keeping the previous topology %s (%s)", TA, topo_path, err,
		      ta_topo_path, topoaware_topo_hash(ta_topo));
		topoaware_status_set_topology(ta_status, ta_topo_path, topoaware_topo_hash(ta_topo), err);
	} else {
		error("%s: no topology: %s: %s; jobs with a tp/pp/dp layout are placed by plain select/cons_tres until a topology loads (scontrol reconfigure)",
		      TA, topo_path, err);
		topoaware_status_set_topology(ta_status, "", "", err);
	}

	/* A new node table needs a new map, also for the old topology; no index survives this. */
	topoaware_placer_free(ta_placer);
	ta_placer = NULL;
	if (topo) {
		topoaware_topo_free(ta_topo);
		ta_topo = topo;
		snprintf(ta_topo_path, sizeof(ta_topo_path), "%s", topo_path);
	}
	xfree(ta_free);
	xfree(ta_free_all);
	FREE_NULL_BITMAP(ta_known);
	ta_missing = 0;
	ta_nodes = 0;
	if (!ta_topo || !n)
		return;

	names = xcalloc(n, sizeof(*names));
	for (uint32_t i = 0; i < n; i++) {
		node_record_t *node_ptr = node_record_table_ptr[i];
		/* Defunct/future slots: a name no topology has, never chosen. */
		names[i] = (node_ptr && node_ptr->name) ? node_ptr->name : "";
	}
	placer = topoaware_placer_create(ta_topo, names, n, err, sizeof(err));
	if (!placer) {
		xfree(names);
		error("%s: cannot map Slurm's nodes onto topology %s: %s; layout jobs go to plain select/cons_tres",
		      TA, ta_topo_path, err);
		topoaware_status_set_topology(ta_status, ta_topo_path, topoaware_topo_hash(ta_topo), err);
		return;
	}
	ta_placer = placer;
	ta_map_missing_locked(names, n);
	xfree(names);
	ta_nodes = n;
	ta_free = xcalloc(n, sizeof(*ta_free));
	ta_free_all = xcalloc(n, sizeof(*ta_free_all));
}

void ta_select_node_init(void)
{
	pthread_mutex_lock(&ta_lock);
	ta_reload_locked();
	ta_writer_start_locked();
	pthread_cond_signal(&ta_writer_cond); /* the new topology into the file soon */
	pthread_mutex_unlock(&ta_lock);
}

/* ---- the job -------------------------------------------------------------------------------- */

typedef struct {
	topoaware_options_t opts;
	int mode;          /* enum topoaware_mode in effect */
	uint32_t max_wait; /* seconds */
	uint32_t nodes, gpus_per_node;
	char layout[160];  /* canonical layout text */
} ta_job_t;

/* The layout options and the defaults that apply. 1: a layout job; 0: none or unusable (logged). */
static int ta_job_options(job_record_t *job_ptr, ta_job_t *j)
{
	char err[TOPOAWARE_ERR_LEN];
	const char *part = (job_ptr->part_ptr && job_ptr->part_ptr->name) ? job_ptr->part_ptr->name : NULL;

	if (!job_ptr->spank_job_env || !job_ptr->spank_job_env_size)
		return 0;
	if (ta_options_from_env(&j->opts, job_ptr->spank_job_env, job_ptr->spank_job_env_size, err, sizeof(err)) !=
		    0 ||
	    (topoaware_options_has_layout(&j->opts) && topoaware_options_check(&j->opts, err, sizeof(err)) != 0)) {
		if (ta_should_log(job_ptr->job_id, 1))
			error("%s: %pJ: unusable layout options (%s); placed by plain select/cons_tres", TA, job_ptr,
			      err);
		return 0;
	}
	if (!topoaware_options_has_layout(&j->opts))
		return 0;
	j->mode = (j->opts.set & TOPOAWARE_OPT_TOPO_MODE) ? j->opts.mode : topoaware_conf_mode(ta_conf, part);
	j->max_wait =
		(j->opts.set & TOPOAWARE_OPT_MAX_WAIT) ? j->opts.max_wait : topoaware_conf_max_wait(ta_conf, part);
	if (topoaware_layout_string(&j->opts.layout, j->layout, sizeof(j->layout)) != 0)
		j->layout[0] = '\0';
	j->nodes = j->gpus_per_node = 0;
	return 1;
}

/* 1: a layout job we place; 0: not a layout job; -1: a layout job we leave to plain cons_tres,
 * *why says why (logged). */
static int ta_job_read(job_record_t *job_ptr, uint32_t min_nodes, ta_job_t *j, const char **why)
{
	uint64_t world;

	*why = NULL;
	if (!ta_job_options(job_ptr, j))
		return 0;
	world = (uint64_t)j->opts.layout.tp * j->opts.layout.cp * j->opts.layout.dp * j->opts.layout.pp;
	j->nodes = min_nodes;
	if (j->nodes && world % j->nodes == 0 && world / j->nodes <= UINT16_MAX)
		j->gpus_per_node = (uint32_t)(world / j->nodes);

	if (!ta_placer)
		*why = "no topology loaded";
	else if (job_ptr->het_job_id)
		*why = "heterogeneous jobs are not placed by topology";
	else if (job_ptr->details && job_ptr->details->req_node_bitmap)
		*why = "the job requires specific nodes (-w)";
	else if (!j->gpus_per_node)
		*why = "its node count does not divide the layout's world size";
	if (*why) {
		if (ta_should_log(job_ptr->job_id, 2))
			TA_LOG(TOPOAWARE_LOG_INFO, "%s: %pJ: %s; placed by plain select/cons_tres", TA, job_ptr, *why);
		return -1;
	}
	return 1;
}

/* A waiting verdict into the status book (hint: from will-run). */
static void ta_book_wait(job_record_t *job_ptr, const ta_job_t *j, const char *why, int hint)
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
	if (hint)
		topoaware_status_waiting_hint(ta_status, &s, (int64_t)time(NULL));
	else
		topoaware_status_waiting(ta_status, &s, (int64_t)time(NULL));
}

static int ta_gres_is_gpu(void *x, void *key)
{
	gres_state_t *gs = x;
	return gs->plugin_id == *(uint32_t *)key;
}

/* GPUs configured on a node (all_free) or free now. */
static uint16_t ta_node_gpus(node_record_t *node_ptr, int all_free)
{
	gres_state_t *gs;
	gres_node_state_t *ns;
	uint64_t v;

	if (!node_ptr->gres_list)
		return 0;
	gs = list_find_first(node_ptr->gres_list, ta_gres_is_gpu, &ta_gpu_id);
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
static void ta_fill_free(job_record_t *job_ptr, bitstr_t *bitmap, int all_free, uint16_t *free)
{
	int exclusive = job_ptr->details && (!job_ptr->details->share_res || job_ptr->details->whole_node);

	for (uint32_t i = 0; i < ta_nodes; i++) {
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
		free[i] = ta_node_gpus(node_ptr, all_free);
	}
}

/* cons_tres on `bitmap`, without the nodes that are not in the topology unless `any` (then on the
 * whole bitmap). On success the chosen nodes are in `bitmap`. */
static int ta_plain(ta_job_test_fn cons_job_test, job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
		    uint32_t max_nodes, uint32_t req_nodes, uint16_t mode, List preemptee_candidates,
		    List *preemptee_job_list, bitstr_t *exc_core_bitmap, int any)
{
	bitstr_t *known;
	int rc;

	if (any || !ta_known)
		return (*cons_job_test)(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
					preemptee_job_list, exc_core_bitmap);
	known = bit_copy(bitmap);
	bit_and(known, ta_known);
	rc = (*cons_job_test)(job_ptr, known, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
			      preemptee_job_list, exc_core_bitmap);
	if (rc == SLURM_SUCCESS)
		bit_copybits(bitmap, known);
	FREE_NULL_BITMAP(known);
	return rc;
}

/* One select_p_job_test call of a layout job, as the backend of the core's decision
 * (topoaware_select_decide): cons_tres on a block or on everything, and the allocations kept. */
typedef struct {
	ta_job_test_fn cons_job_test;
	job_record_t *job_ptr;
	bitstr_t *bitmap; /* the usable nodes */
	uint32_t min_nodes, max_nodes, req_nodes;
	uint16_t mode;
	List preemptee_candidates;
	List *preemptee_job_list;
	bitstr_t *exc_core_bitmap;
	bitstr_t *last, *best, *plain; /* the last block cons_tres accepted, the best one, plain's answer */
} ta_call_t;

static int ta_try_block(void *arg, const uint32_t *nodes, uint32_t n, int64_t *start)
{
	ta_call_t *c = arg;

	bit_clear_all(c->last);
	for (uint32_t k = 0; k < n; k++)
		bit_set(c->last, nodes[k]);
	if ((*c->cons_job_test)(c->job_ptr, c->last, c->min_nodes, c->max_nodes, c->req_nodes, c->mode,
				c->preemptee_candidates, c->preemptee_job_list, c->exc_core_bitmap) != SLURM_SUCCESS)
		return 0;
	if (start)
		*start = (int64_t)c->job_ptr->start_time;
	return 1;
}

static void ta_keep_best(void *arg)
{
	ta_call_t *c = arg;

	if (!c->best)
		c->best = bit_alloc(ta_nodes);
	bit_copybits(c->best, c->last);
}

static int ta_try_plain(void *arg, int any, int64_t *start, int *preempted)
{
	ta_call_t *c = arg;

	c->plain = bit_copy(c->bitmap);
	if (ta_plain(c->cons_job_test, c->job_ptr, c->plain, c->min_nodes, c->max_nodes, c->req_nodes, c->mode,
		     c->preemptee_candidates, c->preemptee_job_list, c->exc_core_bitmap, any) != SLURM_SUCCESS)
		return 0;
	if (start)
		*start = (int64_t)c->job_ptr->start_time;
	if (preempted)
		*preempted = (c->preemptee_job_list && *c->preemptee_job_list) ? list_count(*c->preemptee_job_list) : 0;
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

	if (once_key && !ta_should_log(c->job_ptr->job_id, once_key))
		return;
	if (level == TOPOAWARE_LOG_QUIET)
		error("%s: %pJ%s", TA, c->job_ptr, text);
	else
		TA_LOG(level, "%s: %pJ%s", TA, c->job_ptr, text);
}

/* Run-now or will-run of a layout job we place: the core decides, this applies its answer. */
static int ta_place(ta_job_test_fn cons_job_test, job_record_t *job_ptr, const ta_job_t *j, bitstr_t *bitmap,
		    uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
		    List preemptee_candidates, List *preemptee_job_list, bitstr_t *exc_core_bitmap, time_t deadline,
		    int will_run)
{
	ta_call_t c = { cons_job_test, job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
			preemptee_candidates, preemptee_job_list, exc_core_bitmap, bit_alloc(ta_nodes), NULL, NULL };
	topoaware_select_backend_t be = { &c, ta_try_block, ta_keep_best, ta_try_plain, ta_clock_ms, ta_wall_s,
					  ta_decision_log };
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
	req.may_preempt = preemptee_candidates && list_count(preemptee_candidates);
	req.usable = (const uint64_t *)(bitmap + BITSTR_OVERHEAD);
	req.nbits = ta_nodes;
	ta_fill_free(job_ptr, bitmap, 0, ta_free);
	req.free_now = ta_free;
	if (will_run) {
		ta_fill_free(job_ptr, bitmap, 1, ta_free_all);
		req.free_all = ta_free_all;
	}
	req.max_tries = ta_max_tries;
	req.max_time_ms = ta_max_time_ms;
	req.missing_mode = ta_missing_mode;

	if (topoaware_select_decide(ta_placer, &req, &be, &ans, err, sizeof(err)) != 0) {
		/* Cannot happen with a checked layout; never leave the job unplaced for it. */
		error("%s: %pJ: %s; placed by plain select/cons_tres", TA, job_ptr, err);
		rc = (*cons_job_test)(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
				      preemptee_job_list, exc_core_bitmap);
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
		ta_decide(job_ptr->job_id, ans.placement, ans.note);
	if (ans.wait[0])
		ta_book_wait(job_ptr, j, ans.wait, ans.wait_hint);
out:
	FREE_NULL_BITMAP(c.last);
	FREE_NULL_BITMAP(c.best);
	FREE_NULL_BITMAP(c.plain);
	return rc;
}

int ta_select_job_test(ta_job_test_fn cons_job_test, job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
		       uint32_t max_nodes, uint32_t req_nodes, uint16_t mode, List preemptee_candidates,
		       List *preemptee_job_list, bitstr_t *exc_core_bitmap, int *layout)
{
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
	 * without preempting; preemption happens through the plain cons_tres fallback (ta_run_now). */
	if ((!run_now && !will_run) || !job_ptr || !job_ptr->details || !job_ptr->spank_job_env_size)
		goto plain;

	pthread_mutex_lock(&ta_lock);
	r = ta_job_read(job_ptr, min_nodes, &j, &why);
	if (r == 1 && (uint32_t)bit_size(bitmap) != ta_nodes) {
		r = -1; /* cannot happen: node_init maps every new node table */
		why = "Slurm's node table differs from the one the topology was mapped onto";
	}
	if (r == 0) {
		pthread_mutex_unlock(&ta_lock);
		goto plain;
	}
	if (r < 0) {
		/* A layout job that plain cons_tres places: recorded, so that the status file and the
		 * verbose log say so. */
		rc = (*cons_job_test)(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
				      preemptee_job_list, exc_core_bitmap);
		if (run_now && rc == SLURM_SUCCESS) {
			ta_decide(job_ptr->job_id, "cons_tres", why);
		} else if (run_now) {
			char reason[512];

			snprintf(reason, sizeof(reason), "%s; plain select/cons_tres finds no free resources for it now",
				 why);
			ta_book_wait(job_ptr, &j, reason, 0);
		}
		pthread_mutex_unlock(&ta_lock);
		return rc;
	}
	*layout = 1;
	deadline = (job_ptr->details->begin_time ? job_ptr->details->begin_time : time(NULL)) + (time_t)j.max_wait;
	rc = ta_place(cons_job_test, job_ptr, &j, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
		      preemptee_job_list, exc_core_bitmap, deadline, !run_now);
	pthread_mutex_unlock(&ta_lock);
	return rc;

plain:
	return (*cons_job_test)(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
				preemptee_job_list, exc_core_bitmap);
}

/* ---- allocations ---------------------------------------------------------------------------- */

/* The job's nodes in rank order ("n1,n2,..."), xmalloc'd, from the same engine function as the
 * SPANK plugin's TOPOAWARE_NODE_RANK (topoaware_node_ranks is built on topoaware_rank_order).
 * NULL with a message in err if there is no order (no topology, a node not in it). ta_lock held. */
static char *ta_node_order(job_record_t *job_ptr, const topoaware_layout_t *layout, uint32_t *count, char *err,
			   size_t errlen)
{
	const char **names;
	uint32_t *order, n = 0;
	char *out = NULL;
	int first, last;

	*count = 0;
	if (!job_ptr->node_bitmap || (first = bit_ffs(job_ptr->node_bitmap)) < 0) {
		snprintf(err, errlen, "the job has no nodes");
		return NULL;
	}
	last = bit_fls(job_ptr->node_bitmap);
	names = xcalloc((size_t)(last - first + 1), sizeof(*names));
	for (int i = first; i <= last; i++) {
		node_record_t *node_ptr;

		if (!bit_test(job_ptr->node_bitmap, i) || i >= node_record_count ||
		    !(node_ptr = node_record_table_ptr[i]) || !node_ptr->name)
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

/* The job's placement into the status book and (LogLevel=verbose) the log. placement/note
 * override what run-now decided (NULL: use that). ta_lock held. */
static void ta_record_placed(job_record_t *job_ptr, ta_job_t *j, const char *placement, const char *note)
{
	unsigned k = job_ptr->job_id % TA_LOG_SLOTS;
	char err[TOPOAWARE_ERR_LEN], full[TOPOAWARE_ERR_LEN + 256];
	char *order, *hosts;
	uint32_t n = 0;
	uint64_t world = (uint64_t)j->opts.layout.tp * j->opts.layout.cp * j->opts.layout.dp * j->opts.layout.pp;
	topoaware_status_job_t s;

	if (!placement) {
		if (ta_decided[k].job_id == job_ptr->job_id) {
			placement = ta_decided[k].placement;
			note = ta_decided[k].note;
		} else {
			placement = "cons_tres";
			note = "placed by select/cons_tres without a decision of this plugin (e.g. a preemption)";
		}
	}
	err[0] = '\0';
	/* job_ptr->nodes is set only after select_p_job_begin (node_scheduler.c): from the bitmap. */
	hosts = job_ptr->node_bitmap ? bitmap2node_name(job_ptr->node_bitmap) : NULL;
	order = ta_node_order(job_ptr, &j->opts.layout, &n, err, sizeof(err));
	if (!order && note && *note)
		snprintf(full, sizeof(full), "%s; no rank order: %s", note, err);
	else if (!order)
		snprintf(full, sizeof(full), "no rank order: %s", err);
	else
		snprintf(full, sizeof(full), "%s", note ? note : "");
	j->gpus_per_node = n && world % n == 0 ? (uint32_t)(world / n) : 0;
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
		topoaware_status_placed(ta_status, &s, (int64_t)time(NULL));
	}
	TA_LOG(TOPOAWARE_LOG_VERBOSE, "%s: %pJ placed: %s, %u nodes x %u GPUs, %s, on %s; node order %s%s%s", TA,
	       job_ptr, placement, n, j->gpus_per_node, j->layout, hosts ? hosts : "?", order ? order : "(none)",
	       full[0] ? "; " : "", full);
	xfree(order);
	xfree(hosts);
}

/* The topology hash the placement used, for the nodes of a layout job: appended to the job's
 * spank_job_env (xmalloc'd, as Slurm frees it), it reaches the job prolog and spank_topoaware as
 * SPANK_TOPOAWARE_TOPO_HASH (spank_topoaware(8) compares it with its own copy). Then the
 * placement into the status book and the log. */
void ta_select_job_begin(job_record_t *job_ptr)
{
	ta_job_t j;
	const char *hash;
	size_t plen = strlen(TA_HASH_ENV "=");
	uint32_t i;
	unsigned k;

	if (!job_ptr || !job_ptr->spank_job_env_size)
		return;
	pthread_mutex_lock(&ta_lock);
	if (!ta_job_options(job_ptr, &j)) {
		pthread_mutex_unlock(&ta_lock);
		return;
	}
	hash = ta_topo ? topoaware_topo_hash(ta_topo) : NULL;
	if (hash) {
		for (i = 0; i < job_ptr->spank_job_env_size; i++)
			if (job_ptr->spank_job_env[i] && !strncmp(job_ptr->spank_job_env[i], TA_HASH_ENV "=", plen))
				break;
		if (i == job_ptr->spank_job_env_size) {
			xrecalloc(job_ptr->spank_job_env, i + 2, sizeof(char *));
			job_ptr->spank_job_env_size = i + 1;
		} else {
			xfree(job_ptr->spank_job_env[i]);
		}
		job_ptr->spank_job_env[i] = xstrdup_printf("%s=%s", TA_HASH_ENV, hash);
	}
	ta_record_placed(job_ptr, &j, NULL, NULL);
	k = job_ptr->job_id % TA_LOG_SLOTS;
	if (ta_decided[k].job_id == job_ptr->job_id)
		ta_decided[k].job_id = 0;
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
		ta_record_placed(changed, &j, "cons_tres", "its node set was changed by Slurm after placement (resize or expansion)");
	pthread_mutex_unlock(&ta_lock);
}

/* Running layout jobs that the book does not know: placed before this slurmctld started. */
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
		ta_record_placed(job_ptr, &j, "unknown", "found running when slurmctld started; placed before");
	}
	list_iterator_destroy(it);
	pthread_mutex_unlock(&ta_lock);
}
