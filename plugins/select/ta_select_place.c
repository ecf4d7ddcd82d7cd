/* Placement half of select/cons_tres_topoaware (select_cons_tres_topoaware(8)).
 *
 * select_p_job_test, for a job whose spank_job_env carries a tp/pp/dp layout
 * (_SLURM_SPANK_OPTION_topoaware_*, parsed strictly: it is user input):
 *   RUN_NOW   ask the engine for the best block among the usable nodes (free GPUs per node from
 *             the node's gres, whole idle nodes for exclusive jobs), narrow a copy of the bitmap to
 *             it and call cons_tres; if cons_tres cannot place the job there (cores, memory, GPUs),
 *             drop that block's nodes and ask again, at most TA_MAX_TRIES blocks and TA_MAX_CALL_MS
 *             per call. Then the mode decides: prefer = plain cons_tres on the original bitmap;
 *             strict = fail (the job stays pending, reason Resources) until TA max wait has
 *             passed since the job became eligible (details->begin_time), then prefer.
 *   WILL_RUN  (backfill) the same choice in the future: the engine places the job as if every
 *             usable node were free (ideal blocks only, for strict), cons_tres's will-run gives
 *             each of up to TA_MAX_WILL_RUN_TRIES such blocks its start time; plain cons_tres
 *             gives the unrestricted start time. prefer: the block if it starts no later than the
 *             unrestricted answer, else the unrestricted one. strict: the earliest of (best block)
 *             and (unrestricted, but not before the max wait ends). Backfill then reserves the
 *             nodes and time we answered, which run-now will honour.
 *   TEST_ONLY, RESV, preemption-on-full tests: cons_tres exactly (a refusal at submit must mean
 *             "never").
 * Falls back to cons_tres (logged once per job) for: no topology loaded, required nodes (-w),
 * heterogeneous jobs, preemptee candidates, a layout the node count does not divide, an
 * unreadable layout. Jobs without a layout never get here past the first test.
 *
 * State: topoaware.conf and the topology are (re)read in select_p_node_init (start-up and every
 * scontrol reconfigure), the node-name map is rebuilt there from the new node table; a new file
 * that does not load keeps the last good topology. All state is behind one mutex (job_test is
 * called by the main and the backfill scheduler, node_init by reconfigure). */
#include "config.h" /* Slurm's */

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "layout_c.h"
#include "ta_env.h"
#include "ta_select.h"
#include "topoaware_c.h"

#define TA "select/cons_tres_topoaware"

/* Limits per select_p_job_test call (select_cons_tres_topoaware(8)). */
#define TA_MAX_TRIES 4           /* blocks handed to cons_tres in run-now mode */
#define TA_MAX_WILL_RUN_TRIES 3  /* blocks handed to cons_tres's will-run (each simulates job ends) */
#define TA_MAX_CALL_MS 200       /* no new block is tried after this much time in one call */
#define TA_LOG_EVERY 300         /* a job's fallback/wait reason is logged at most every 5 minutes */
#define TA_LOG_SLOTS 256         /* jobs remembered for that (direct-mapped by job id) */
#define TA_HASH_ENV "TOPOAWARE_TOPO_HASH" /* job_begin: reaches the prolog as SPANK_TOPOAWARE_TOPO_HASH */
#define TA_PATH_MAX 4096

/* ---- state ---------------------------------------------------------------------------------- */

static pthread_mutex_t ta_lock = PTHREAD_MUTEX_INITIALIZER;
static topoaware_conf_t *ta_conf;       /* last good topoaware.conf (NULL: defaults) */
static topoaware_topo_t *ta_topo;       /* last good topology (NULL: none, plain cons_tres) */
static topoaware_placer_t *ta_placer;   /* ta_topo mapped onto the current node table */
static char ta_topo_path[TA_PATH_MAX];  /* the file ta_topo came from */
static uint32_t ta_nodes;               /* node table size the placer was built for */
static uint16_t *ta_free;               /* scratch: free GPUs per node-table index */
static uint32_t *ta_out;                /* scratch: the engine's block */
static uint32_t ta_gpu_id;              /* gres plugin id of "gpu" */

static struct {
	uint32_t job_id;
	time_t when;
	int what;
} ta_logged[TA_LOG_SLOTS];

/* 1 if this (job, reason) was not logged in the last TA_LOG_EVERY seconds. */
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

void ta_select_init(void)
{
	ta_gpu_id = gres_build_id("gpu");
}

void ta_select_fini(void)
{
	pthread_mutex_lock(&ta_lock);
	topoaware_placer_free(ta_placer);
	ta_placer = NULL;
	topoaware_topo_free(ta_topo);
	ta_topo = NULL;
	topoaware_conf_free(ta_conf);
	ta_conf = NULL;
	xfree(ta_free);
	xfree(ta_out);
	ta_nodes = 0;
	pthread_mutex_unlock(&ta_lock);
}

/* topoaware.conf: $TOPOAWARE_CONF, else beside the slurm.conf slurmctld read. */
static void ta_conf_path(char *buf, size_t len)
{
	const char *env = getenv("TOPOAWARE_CONF");
	const char *sc = slurm_conf.slurm_conf;
	const char *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if (sc && (slash = strrchr(sc, '/'))) {
		snprintf(buf, len, "%.*s/topoaware.conf", (int)(slash - sc), sc);
		return;
	}
	if (topoaware_conf_default_path(buf, len) != 0)
		snprintf(buf, len, "/etc/slurm/topoaware.conf");
}

/* Called with ta_lock held. */
static void ta_reload_locked(void)
{
	char path[TA_PATH_MAX], topo_path[TA_PATH_MAX], err[TOPOAWARE_ERR_LEN];
	topoaware_conf_t *conf;
	topoaware_topo_t *topo;
	topoaware_placer_t *placer;
	const char **names;
	int found = 0;
	uint32_t n = node_record_count > 0 ? (uint32_t)node_record_count : 0;

	ta_conf_path(path, sizeof(path));
	conf = topoaware_conf_load(path, &found, err, sizeof(err));
	if (!conf) {
		error("%s: %s: %s; keeping the %s settings", TA, path, err,
		      ta_conf ? "previous" : "built-in default");
	} else {
		topoaware_conf_free(ta_conf);
		ta_conf = conf;
		if (found)
			verbose("%s: read %s", TA, path);
	}
	if (!ta_conf || topoaware_conf_topology(ta_conf, topo_path, sizeof(topo_path)) != 0) {
		/* Defaults without a file: topology.json beside topoaware.conf (topoaware.conf(5)). */
		const char *slash = strrchr(path, '/');
		snprintf(topo_path, sizeof(topo_path), "%.*s/topology.json", slash ? (int)(slash - path) : 1,
			 slash ? path : ".");
	}

	topo = topoaware_topo_load(topo_path, err, sizeof(err));
	if (topo) {
		info("%s: topology %s loaded (%u hosts, %s)", TA, topo_path, topoaware_topo_hosts(topo),
		     topoaware_topo_hash(topo));
	} else if (ta_topo) {
		error("%s: cannot load topology %s: %s; keeping the previous topology %s (%s)", TA, topo_path, err,
		      ta_topo_path, topoaware_topo_hash(ta_topo));
	} else {
		error("%s: no topology: %s: %s; jobs with a tp/pp/dp layout are placed by plain select/cons_tres until a topology loads (scontrol reconfigure)",
		      TA, topo_path, err);
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
	xfree(ta_out);
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
	xfree(names);
	if (!placer) {
		error("%s: cannot map Slurm's nodes onto topology %s: %s; layout jobs go to plain select/cons_tres",
		      TA, ta_topo_path, err);
		return;
	}
	{
		uint32_t missing = topoaware_placer_missing(placer);
		if (missing)
			info("%s: %u of %u Slurm nodes are not in topology %s (first: %s); they are never chosen for layout jobs",
			     TA, missing, n, ta_topo_path, topoaware_placer_missing_name(placer, 0));
	}
	ta_placer = placer;
	ta_nodes = n;
	ta_free = xcalloc(n, sizeof(*ta_free));
	ta_out = xcalloc(n, sizeof(*ta_out));
}

void ta_select_node_init(void)
{
	pthread_mutex_lock(&ta_lock);
	ta_reload_locked();
	pthread_mutex_unlock(&ta_lock);
}

/* ---- the job -------------------------------------------------------------------------------- */

typedef struct {
	topoaware_options_t opts;
	int mode;          /* enum topoaware_mode in effect */
	uint32_t max_wait; /* seconds */
	uint32_t nodes, gpus_per_node;
} ta_job_t;

/* 1: a layout job we place; 0: not a layout job, or one we leave to cons_tres (logged). */
static int ta_job_read(job_record_t *job_ptr, uint32_t min_nodes, ta_job_t *j)
{
	char err[TOPOAWARE_ERR_LEN];
	const char *part = (job_ptr->part_ptr && job_ptr->part_ptr->name) ? job_ptr->part_ptr->name : NULL;
	const char *why = NULL;
	uint64_t world;

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
	world = (uint64_t)j->opts.layout.tp * j->opts.layout.cp * j->opts.layout.dp * j->opts.layout.pp;
	j->nodes = min_nodes;

	if (!ta_placer)
		why = "no topology loaded";
	else if (job_ptr->het_job_id)
		why = "heterogeneous jobs are not placed by topology";
	else if (job_ptr->details && job_ptr->details->req_node_bitmap)
		why = "the job requires specific nodes (-w)";
	else if (!j->nodes || world % j->nodes || world / j->nodes > UINT16_MAX)
		why = "its node count does not divide the layout's world size";
	if (why) {
		if (ta_should_log(job_ptr->job_id, 2))
			info("%s: %pJ: %s; placed by plain select/cons_tres", TA, job_ptr, why);
		return 0;
	}
	j->gpus_per_node = (uint32_t)(world / j->nodes);
	return 1;
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

/* ta_free[] for the nodes of `bitmap`. Now: GPUs not allocated, and for an exclusive job only
 * nodes without jobs, for a shared one only nodes without exclusive jobs. all_free: every GPU
 * of every usable node (the future, for will-run). */
static void ta_fill_free(job_record_t *job_ptr, bitstr_t *bitmap, int all_free)
{
	int exclusive = job_ptr->details && (!job_ptr->details->share_res || job_ptr->details->whole_node);

	for (uint32_t i = 0; i < ta_nodes; i++) {
		node_record_t *node_ptr = node_record_table_ptr[i];

		ta_free[i] = 0;
		if (!node_ptr || !bit_test(bitmap, i))
			continue;
		if (!all_free) {
			if (exclusive && (node_ptr->run_job_cnt || node_ptr->comp_job_cnt))
				continue;
			if (node_ptr->no_share_job_cnt)
				continue;
		}
		ta_free[i] = ta_node_gpus(node_ptr, all_free);
	}
}

/* The engine's next block within `work` into `block`. Returns the engine's status. */
static int ta_next_block(job_record_t *job_ptr, const ta_job_t *j, bitstr_t *work, int mode, bitstr_t *block,
			 topoaware_place_info_t *inf)
{
	char err[TOPOAWARE_ERR_LEN];
	int st = topoaware_place(ta_placer, (const uint64_t *)(work + BITSTR_OVERHEAD), ta_nodes, ta_free, j->nodes,
				 j->gpus_per_node, &j->opts.layout, mode, ta_out, inf, err, sizeof(err));

	if (st == TOPOAWARE_PLACE_ERROR) {
		if (ta_should_log(job_ptr->job_id, 3))
			error("%s: %pJ: placement failed: %s; placed by plain select/cons_tres", TA, job_ptr, err);
		return st;
	}
	if (st == TOPOAWARE_PLACE_NO_NODES)
		return st;
	bit_clear_all(block);
	for (uint32_t k = 0; k < j->nodes; k++)
		bit_set(block, ta_out[k]);
	return st;
}

static void ta_log_wait(job_record_t *job_ptr, const ta_job_t *j, const char *why, time_t left)
{
	if (ta_should_log(job_ptr->job_id, 4))
		info("%s: %pJ (strict, %u nodes x %u GPUs) waits: %s; at most %ld s more, then best available", TA,
		     job_ptr, j->nodes, j->gpus_per_node, why, (long)left);
}

static int ta_run_now(ta_job_test_fn cons_job_test, job_record_t *job_ptr, const ta_job_t *j, bitstr_t *bitmap,
		      uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
		      List preemptee_candidates, List *preemptee_job_list, bitstr_t *exc_core_bitmap,
		      time_t deadline, int *placed)
{
	bitstr_t *work = bit_copy(bitmap), *block = bit_alloc(ta_nodes);
	uint64_t t0 = ta_ms();
	int rc = SLURM_ERROR, st = TOPOAWARE_PLACE_NO_NODES, tries = 0;
	topoaware_place_info_t inf = {0};
	time_t now = time(NULL);
	int emode = (j->mode == TOPOAWARE_MODE_STRICT && now < deadline) ? TOPOAWARE_MODE_STRICT : TOPOAWARE_MODE_PREFER;

	*placed = 0;
	ta_fill_free(job_ptr, bitmap, 0);
	while (tries < TA_MAX_TRIES && (tries == 0 || ta_ms() - t0 < TA_MAX_CALL_MS)) {
		st = ta_next_block(job_ptr, j, work, emode, block, &inf);
		if (st != TOPOAWARE_PLACE_IDEAL && st != TOPOAWARE_PLACE_FALLBACK)
			break;
		tries++;
		rc = (*cons_job_test)(job_ptr, block, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
				      preemptee_job_list, exc_core_bitmap);
		if (rc == SLURM_SUCCESS) {
			bit_copybits(bitmap, block);
			*placed = 1;
			debug("%s: %pJ: %s block after %d tries (%u leaf groups, %u split segments)", TA, job_ptr,
			      topoaware_place_status_name(st), tries, inf.leaf_groups, inf.split_segments);
			goto out;
		}
		/* cons_tres said no (cores, memory, GPU topology): the next block without these nodes. */
		for (uint32_t k = 0; k < j->nodes; k++)
			bit_clear(work, ta_out[k]);
	}
	if (emode == TOPOAWARE_MODE_STRICT && st != TOPOAWARE_PLACE_ERROR) {
		ta_log_wait(job_ptr, j,
			    st == TOPOAWARE_PLACE_NO_BLOCK ? "no block that keeps every DP ring/PP chain on its ideal leaves is free"
			    : st == TOPOAWARE_PLACE_NO_NODES ? "not enough nodes with free GPUs"
							     : "cons_tres refused every ideal block tried",
			    deadline - now);
		rc = SLURM_ERROR;
		*placed = 1; /* decided: wait */
		goto out;
	}
	rc = SLURM_ERROR; /* prefer: plain cons_tres on the original bitmap (caller) */
out:
	FREE_NULL_BITMAP(work);
	FREE_NULL_BITMAP(block);
	return rc;
}

static int ta_will_run(ta_job_test_fn cons_job_test, job_record_t *job_ptr, const ta_job_t *j, bitstr_t *bitmap,
		       uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
		       List preemptee_candidates, List *preemptee_job_list, bitstr_t *exc_core_bitmap,
		       time_t deadline)
{
	bitstr_t *work = bit_copy(bitmap), *block = bit_alloc(ta_nodes), *try = bit_alloc(ta_nodes);
	bitstr_t *best = NULL, *plain = bit_copy(bitmap);
	time_t best_start = 0, plain_start = 0, now = time(NULL);
	uint64_t t0 = ta_ms();
	int strict = j->mode == TOPOAWARE_MODE_STRICT && now < deadline;
	int tries = 0, rc_plain;

	ta_fill_free(job_ptr, bitmap, 1);
	while (tries < TA_MAX_WILL_RUN_TRIES && (tries == 0 || ta_ms() - t0 < TA_MAX_CALL_MS)) {
		int st = ta_next_block(job_ptr, j, work, strict ? TOPOAWARE_MODE_STRICT : TOPOAWARE_MODE_PREFER,
				       block, NULL);
		if (st != TOPOAWARE_PLACE_IDEAL && st != TOPOAWARE_PLACE_FALLBACK)
			break;
		tries++;
		bit_copybits(try, block);
		if ((*cons_job_test)(job_ptr, try, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
				     preemptee_job_list, exc_core_bitmap) == SLURM_SUCCESS &&
		    (!best || job_ptr->start_time < best_start)) {
			if (!best)
				best = bit_alloc(ta_nodes);
			bit_copybits(best, try);
			best_start = job_ptr->start_time;
		}
		for (uint32_t k = 0; k < j->nodes; k++)
			bit_clear(work, ta_out[k]);
	}
	rc_plain = (*cons_job_test)(job_ptr, plain, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
				    preemptee_job_list, exc_core_bitmap);
	if (rc_plain == SLURM_SUCCESS) {
		plain_start = job_ptr->start_time;
		if (strict && plain_start < deadline)
			plain_start = deadline; /* strict takes any nodes only once the max wait is over */
	}

	FREE_NULL_BITMAP(work);
	FREE_NULL_BITMAP(block);
	FREE_NULL_BITMAP(try);
	if (best && (rc_plain != SLURM_SUCCESS || best_start <= plain_start)) {
		bit_copybits(bitmap, best);
		job_ptr->start_time = best_start;
		FREE_NULL_BITMAP(best);
		FREE_NULL_BITMAP(plain);
		return SLURM_SUCCESS;
	}
	FREE_NULL_BITMAP(best);
	if (rc_plain == SLURM_SUCCESS) {
		bit_copybits(bitmap, plain);
		job_ptr->start_time = plain_start;
	}
	FREE_NULL_BITMAP(plain);
	return rc_plain;
}

int ta_select_job_test(ta_job_test_fn cons_job_test, job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
		       uint32_t max_nodes, uint32_t req_nodes, uint16_t mode, List preemptee_candidates,
		       List *preemptee_job_list, bitstr_t *exc_core_bitmap)
{
	ta_job_t j;
	int rc, placed = 0, run_now = SELECT_IS_MODE_RUN_NOW(mode);
	int will_run = !run_now && (mode & SELECT_MODE_BASE) == SELECT_MODE_WILL_RUN && !SELECT_IS_CHECK_FULL_SET(mode);
	time_t deadline;

	/* Fast path: test-only, reservations, preemption tests and jobs without our options. */
	if ((!run_now && !will_run) || !job_ptr || !job_ptr->details || !job_ptr->spank_job_env_size ||
	    (preemptee_candidates && list_count(preemptee_candidates)))
		goto plain;

	pthread_mutex_lock(&ta_lock);
	if (!ta_job_read(job_ptr, min_nodes, &j) || (uint32_t)bit_size(bitmap) != ta_nodes) {
		pthread_mutex_unlock(&ta_lock);
		goto plain;
	}
	deadline = (job_ptr->details->begin_time ? job_ptr->details->begin_time : time(NULL)) + (time_t)j.max_wait;
	if (run_now) {
		rc = ta_run_now(cons_job_test, job_ptr, &j, bitmap, min_nodes, max_nodes, req_nodes, mode,
				preemptee_candidates, preemptee_job_list, exc_core_bitmap, deadline, &placed);
		pthread_mutex_unlock(&ta_lock);
		if (placed)
			return rc;
		goto plain;
	}
	rc = ta_will_run(cons_job_test, job_ptr, &j, bitmap, min_nodes, max_nodes, req_nodes, mode,
			 preemptee_candidates, preemptee_job_list, exc_core_bitmap, deadline);
	pthread_mutex_unlock(&ta_lock);
	return rc;

plain:
	return (*cons_job_test)(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
				preemptee_job_list, exc_core_bitmap);
}

/* The topology hash the placement used, for the nodes of a layout job: appended to the job's
 * spank_job_env (xmalloc'd, as Slurm frees it), it reaches the job prolog and spank_topoaware as
 * SPANK_TOPOAWARE_TOPO_HASH (spank_topoaware(8) compares it with its own copy). */
void ta_select_job_begin(job_record_t *job_ptr)
{
	topoaware_options_t opts;
	char err[TOPOAWARE_ERR_LEN];
	const char *hash;
	size_t plen = strlen(TA_HASH_ENV "=");
	uint32_t i;

	if (!job_ptr || !job_ptr->spank_job_env_size)
		return;
	if (ta_options_from_env(&opts, job_ptr->spank_job_env, job_ptr->spank_job_env_size, err, sizeof(err)) != 0 ||
	    !topoaware_options_has_layout(&opts))
		return;
	pthread_mutex_lock(&ta_lock);
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
	pthread_mutex_unlock(&ta_lock);
}
