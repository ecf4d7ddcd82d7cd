/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading the topology off slurmctld's locks (select_cons_tres_topoaware(8), "Topology file").
 *
 * select_p_node_init runs with slurmctld's write locks held (start-up, scontrol reconfigure), and
 * parsing a large topology.json (seconds for a million hosts) there would stop every RPC. So
 * node_init only copies the node table's names and hands them to this file's thread with the
 * topology's path; the thread parses the file (only when it changed: path, device, inode, size and
 * modification time), maps the names onto it and swaps the result in under ta_lock. node_init
 * waits for that at most TA_LOAD_WAIT_MS (a topology of usual size is in place when it returns);
 * past that the load goes on in the background and is swapped in when done. Meanwhile the previous
 * mapping serves if the node table did not change; otherwise layout jobs wait (they are not given to
 * plain cons_tres for a topology that is about to arrive). A newer request supersedes an older one. */
#include "ta_select_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/hostlist.h"

#define TA_LOAD_WAIT_MS 200 /* the longest node_init waits for the load, slurmctld's locks held */

static pthread_t ta_loader;
static pthread_cond_t ta_loader_cond = PTHREAD_COND_INITIALIZER; /* a request, or stop */
static pthread_cond_t ta_loaded_cond = PTHREAD_COND_INITIALIZER; /* a request was applied */
static int ta_loader_running, ta_loader_stop;
static uint64_t ta_gen_requested, ta_gen_taken, ta_gen_done;

/* The latest request (ta_lock). ta_req_names NULL with ta_req_same: the node table is the one the
 * current placer was built for (ta_map_names, which the loader copies off the locks). */
static char ta_req_path[TA_PATH_MAX];
static char **ta_req_names;
static uint32_t ta_req_n;
static int ta_req_same;

/* What node_init took out of use, left for the loader to free with no lock held (ta_lock). */
typedef struct {
	topoaware_placer_t *placer;
	bitstr_t *known;
	uint16_t *free_now, *free_all;
	char **names;
	uint32_t n;
} ta_retired_t;
static ta_retired_t ta_retired;

/* The names the current placer was built for, and the identity of ta_topo's file (written by the
 * loader only, under ta_lock). */
static char **ta_map_names;
static uint32_t ta_map_n;
static struct {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} ta_topo_id;

static void ta_names_free(char **names, uint32_t n)
{
	for (uint32_t i = 0; names && i < n; i++)
		xfree(names[i]);
	xfree(names);
}

static const char *ta_node_name(uint32_t i)
{
	node_record_t *node_ptr = node_record_table_ptr[i];

	/* Defunct/future slots of the node table: a name no topology has, never chosen. */
	return (node_ptr && node_ptr->name) ? node_ptr->name : "";
}

/* 1 if slurmctld's node table has exactly the names `names` (slurmctld's locks held). */
static int ta_table_equal(char **names, uint32_t n_names, uint32_t n)
{
	if (n != n_names || !names)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(ta_node_name(i), names[i]))
			return 0;
	return 1;
}

/* Frees what node_init took out of use (taken from ta_retired under ta_lock). No lock held. */
static void ta_retired_free(topoaware_placer_t *placer, bitstr_t *known, uint16_t *free_now, uint16_t *free_all,
			    char **names, uint32_t n)
{
	topoaware_placer_free(placer);
	FREE_NULL_BITMAP(known);
	xfree(free_now);
	xfree(free_all);
	ta_names_free(names, n);
}

/* Which Slurm nodes `placer` does not know: *known (NULL: every real node is) and, xmalloc'd in
 * *list, their names (*named of them). The placer lists them in node-table order. No lock held: the
 * placer is not in use yet. */
static void ta_map_missing(const topoaware_placer_t *placer, char **names, uint32_t n, bitstr_t **known,
			   char **list, uint32_t *named)
{
	uint32_t missing = topoaware_placer_missing(placer), k = 0;
	ta_hostlist_t *hl;

	*known = NULL;
	*list = NULL;
	*named = 0;
	if (!missing)
		return;
	*known = bit_alloc(n);
	bit_set_all(*known);
	hl = hostlist_create(NULL);
	for (uint32_t i = 0; i < n && k < missing; i++) {
		const char *m = topoaware_placer_missing_name(placer, k);

		if (!m || strcmp(names[i], m))
			continue;
		k++;
		bit_clear(*known, i);
		if (!*m)
			continue; /* a defunct slot of the node table, not a node */
		(*named)++;
		hostlist_push_host(hl, m);
	}
	if (*named)
		*list = hostlist_ranged_string_xmalloc(hl);
	else
		FREE_NULL_BITMAP(*known); /* only empty slots: every real node is known */
	hostlist_destroy(hl);
}

/* The topology in use (or why none is) into the status book. ta_lock held. */
static void ta_book_topology(const char *file, const char *hash, const char *why)
{
	if (ta_status && topoaware_status_set_topology(ta_status, file, hash, why))
		error("%s: out of memory for the status book; the status file shows an older topology", TA);
}

/* One request, with no lock held: parse (if the file changed), map, then swap in under ta_lock
 * unless a newer request came meanwhile (it follows). Takes `names`. */
static void ta_load(const char *path, char **names, uint32_t n, uint64_t gen)
{
	char err[TOPOAWARE_ERR_LEN], map_err[TOPOAWARE_ERR_LEN], save_err[TOPOAWARE_ERR_LEN];
	char last_good[TA_PATH_MAX];
	topoaware_topo_t *topo = NULL, *fallback = NULL, *old_topo = NULL;
	topoaware_placer_t *placer = NULL, *old_placer;
	const topoaware_topo_t *use;
	bitstr_t *known = NULL, *old_known;
	uint16_t *free_now = NULL, *free_all = NULL, *old_free, *old_free_all;
	char **old_names, *missing_list = NULL;
	uint32_t old_n, named = 0;
	struct stat st;
	int same, have_st;

	/* Only this thread replaces ta_topo and its identity (and fini, after joining it). */
	memset(&st, 0, sizeof(st));
	have_st = stat(path, &st) == 0;
	same = ta_topo && have_st && !strcmp(path, ta_topo_path) && st.st_dev == ta_topo_id.dev &&
	       st.st_ino == ta_topo_id.ino && st.st_size == ta_topo_id.size &&
	       st.st_mtim.tv_sec == ta_topo_id.mtime.tv_sec && st.st_mtim.tv_nsec == ta_topo_id.mtime.tv_nsec;
	err[0] = map_err[0] = save_err[0] = '\0';
	pthread_mutex_lock(&ta_lock);
	snprintf(last_good, sizeof(last_good), "%s", ta_last_good_path);
	pthread_mutex_unlock(&ta_lock);
	if (!same)
		topo = topoaware_topo_load(path, err, sizeof(err));
	if (topo && last_good[0] && topoaware_topo_save(topo, last_good, save_err, sizeof(save_err)))
		error("%s: cannot keep a copy of topology %s as %s: %s (a restarted slurmctld cannot fall back to it)",
		      TA, path, last_good, save_err);
	/* Nothing in memory (slurmctld started, or from 23.11 any scontrol reconfigure, which starts a
	 * new slurmctld) and the configured file broken: the last copy that loaded, if any. */
	if (!topo && !same && !ta_topo && last_good[0] && access(last_good, F_OK) == 0)
		fallback = topoaware_topo_load(last_good, save_err, sizeof(save_err));
	use = topo ? topo : fallback ? fallback : ta_topo;
	if (use && n)
		placer = topoaware_placer_create(use, (const char *const *)names, n, map_err, sizeof(map_err));
	/* Everything proportional to the topology or the node table is made here, before ta_lock. */
	if (placer) {
		ta_map_missing(placer, names, n, &known, &missing_list, &named);
		free_now = xcalloc(n, sizeof(*free_now));
		free_all = xcalloc(n, sizeof(*free_all));
	}

	pthread_mutex_lock(&ta_lock);
	if (gen != ta_gen_requested || ta_loader_stop) {
		pthread_mutex_unlock(&ta_lock);
		ta_retired_free(placer, known, free_now, free_all, names, n);
		topoaware_topo_free(topo);
		topoaware_topo_free(fallback);
		xfree(missing_list);
		return;
	}
	if (topo) {
		TA_LOG(TOPOAWARE_LOG_INFO, "%s: topology %s loaded (%u hosts, %s)", TA, path, topoaware_topo_hosts(topo),
		       topoaware_topo_hash(topo));
		ta_book_topology(path, topoaware_topo_hash(topo), "");
	} else if (same) {
		TA_LOG(TOPOAWARE_LOG_INFO, "%s: topology %s unchanged (%u hosts, %s)", TA, path,
		       topoaware_topo_hosts(ta_topo), topoaware_topo_hash(ta_topo));
		ta_book_topology(path, topoaware_topo_hash(ta_topo), "");
	} else if (ta_topo) {
		error("%s: cannot load topology %s: %s; keeping the previous topology %s (%s)", TA, path, err,
		      ta_topo_path, topoaware_topo_hash(ta_topo));
		ta_book_topology(ta_topo_path, topoaware_topo_hash(ta_topo), err);
	} else if (fallback) {
		error("%s: cannot load topology %s: %s; using the last topology that loaded, kept as %s (%u hosts, %s), "
		      "until %s loads (fix it, then scontrol reconfigure)",
		      TA, path, err, last_good, topoaware_topo_hosts(fallback), topoaware_topo_hash(fallback), path);
		ta_book_topology(last_good, topoaware_topo_hash(fallback), err);
		topo = fallback; /* in use from here: its identity is the copy's, so a fixed file loads */
		fallback = NULL;
		path = last_good;
		if (stat(path, &st) != 0)
			memset(&st, 0, sizeof(st));
	} else {
		error("%s: no topology: %s: %s; jobs with a tp/pp/dp layout are placed by plain select/cons_tres until "
		      "a topology loads (scontrol reconfigure)",
		      TA, path, err);
		ta_book_topology("", "", err);
	}
	/* Swapped under ta_lock; the old placer, topology and node names are freed after it is released
	 * (the old placer refers to the old topology: freed first). */
	old_placer = ta_placer;
	old_known = ta_known;
	old_free = ta_free;
	old_free_all = ta_free_all;
	ta_placer = NULL;
	ta_known = NULL;
	ta_free = ta_free_all = NULL;
	ta_nodes = 0;
	if (topo) {
		old_topo = ta_topo;
		ta_topo = topo;
		snprintf(ta_topo_path, sizeof(ta_topo_path), "%s", path);
		ta_topo_id.dev = st.st_dev;
		ta_topo_id.ino = st.st_ino;
		ta_topo_id.size = st.st_size;
		ta_topo_id.mtime = st.st_mtim;
	}
	if (!placer && use && n) {
		error("%s: cannot map Slurm's nodes onto topology %s: %s; layout jobs go to plain select/cons_tres",
		      TA, ta_topo_path, map_err);
		ta_book_topology(ta_topo_path, topoaware_topo_hash(ta_topo), map_err);
	}
	old_names = ta_map_names;
	old_n = ta_map_n;
	ta_map_names = names;
	ta_map_n = n;
	if (placer) {
		ta_placer = placer;
		ta_known = known;
		ta_nodes = n;
		ta_free = free_now;
		ta_free_all = free_all;
		if (named)
			/* At every LogLevel (a topology problem), once per load. */
			info("%s: %u of %u Slurm nodes are not in topology %s: %.2000s; %s", TA, named, n, ta_topo_path,
			     missing_list,
			     topoaware_conf_missing_nodes(ta_conf) == TOPOAWARE_MISSING_FALLBACK
				     ? "MissingNodes=fallback: plain select/cons_tres may give them to layout jobs that "
				       "the topology's nodes cannot hold now"
				     : "MissingNodes=avoid: they are never chosen for layout jobs (run topoaware discover "
				       "again to add them)");
	}
	ta_gen_done = gen;
	pthread_cond_broadcast(&ta_loaded_cond);
	ta_writer_wake_locked(); /* the new topology into the status file soon */
	pthread_mutex_unlock(&ta_lock);
	ta_retired_free(old_placer, old_known, old_free, old_free_all, old_names, old_n);
	topoaware_topo_free(old_topo);
	xfree(missing_list);
}

/* Takes the latest request and carries it out with ta_lock released, after freeing what node_init
 * took out of use. ta_lock held. */
static void ta_load_latest_locked(void)
{
	char path[TA_PATH_MAX];
	char **names = ta_req_names;
	uint32_t n = ta_req_n;
	uint64_t gen = ta_gen_requested;
	int same = ta_req_same;
	ta_retired_t retired = ta_retired;

	snprintf(path, sizeof(path), "%s", ta_req_path);
	ta_req_names = NULL;
	ta_req_n = 0;
	ta_req_same = 0;
	memset(&ta_retired, 0, sizeof(ta_retired));
	ta_gen_taken = gen;
	pthread_mutex_unlock(&ta_lock);
	ta_retired_free(retired.placer, retired.known, retired.free_now, retired.free_all, retired.names, retired.n);
	if (same) {
		/* The node table the current placer was built for: only this thread replaces ta_map_names
		 * (under ta_lock), so reading them here without it is safe. */
		n = ta_map_n;
		names = xcalloc(n ? n : 1, sizeof(*names));
		for (uint32_t i = 0; i < n; i++)
			names[i] = xstrdup(ta_map_names[i]);
	}
	ta_load(path, names, n, gen);
	pthread_mutex_lock(&ta_lock);
}

static void *ta_loader_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ta_lock);
	while (!ta_loader_stop) {
		if (ta_gen_taken != ta_gen_requested)
			ta_load_latest_locked();
		else
			pthread_cond_wait(&ta_loader_cond, &ta_lock);
	}
	pthread_mutex_unlock(&ta_lock);
	return NULL;
}

/* Moves what the previous request or mapping leaves behind to ta_retired for the loader to free
 * off the locks (a slot still full is freed here: only when no loader thread could take it). */
static void ta_retire_names_locked(char **names, uint32_t n)
{
	if (ta_retired.names)
		ta_names_free(ta_retired.names, ta_retired.n);
	ta_retired.names = names;
	ta_retired.n = n;
}

void ta_load_request_locked(const char *path, uint32_t n)
{
	struct timespec until;

	/* slurmctld's write locks are held: only the node table's names are read here, and copied only
	 * when they differ from the ones the current placer was built for (start-up, nodes added or
	 * removed); a reconfigure over the same nodes copies nothing. */
	ta_retire_names_locked(ta_req_names, ta_req_n);
	ta_req_names = NULL;
	ta_req_n = 0;
	ta_req_same = ta_map_names && ta_table_equal(ta_map_names, ta_map_n, n);
	if (!ta_req_same) {
		ta_req_names = xcalloc(n ? n : 1, sizeof(*ta_req_names));
		for (uint32_t i = 0; i < n; i++)
			ta_req_names[i] = xstrdup(ta_node_name(i));
		ta_req_n = n;
		/* The current mapping serves until the new one is in only while the node table is the
		 * same; otherwise it goes out of use now and the loader frees it. */
		if (ta_retired.placer || ta_retired.known || ta_retired.free_now || ta_retired.free_all) {
			topoaware_placer_free(ta_retired.placer);
			FREE_NULL_BITMAP(ta_retired.known);
			xfree(ta_retired.free_now);
			xfree(ta_retired.free_all);
		}
		ta_retired.placer = ta_placer;
		ta_retired.known = ta_known;
		ta_retired.free_now = ta_free;
		ta_retired.free_all = ta_free_all;
		ta_placer = NULL;
		ta_known = NULL;
		ta_free = ta_free_all = NULL;
		ta_nodes = 0;
	}
	snprintf(ta_req_path, sizeof(ta_req_path), "%s", path);
	ta_gen_requested++;

	if (!ta_loader_running) {
		ta_loader_stop = 0;
		if (pthread_create(&ta_loader, NULL, ta_loader_main, NULL) == 0) {
			ta_loader_running = 1;
		} else {
			/* No thread: load here, as the only way to get a topology at all. */
			error("%s: cannot start the topology loader thread: %m; loading in select_p_node_init", TA);
			ta_load_latest_locked();
			return;
		}
	}
	pthread_cond_signal(&ta_loader_cond);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)TA_LOAD_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (ta_gen_done != ta_gen_requested)
		if (pthread_cond_timedwait(&ta_loaded_cond, &ta_lock, &until) == ETIMEDOUT)
			break;
	if (ta_gen_done != ta_gen_requested)
		info("%s: topology %s is still loading after %d ms; it is swapped in when ready (%s)", TA, path,
		     TA_LOAD_WAIT_MS,
		     ta_placer ? "the previous one serves meanwhile" : "layout jobs wait for it meanwhile");
}

int ta_load_pending_locked(void)
{
	return ta_gen_done != ta_gen_requested;
}

void ta_load_stop(void)
{
	pthread_t t;

	pthread_mutex_lock(&ta_lock);
	if (!ta_loader_running) {
		pthread_mutex_unlock(&ta_lock);
		return;
	}
	ta_loader_stop = 1;
	t = ta_loader;
	pthread_cond_signal(&ta_loader_cond);
	pthread_mutex_unlock(&ta_lock);
	pthread_join(t, NULL);
	pthread_mutex_lock(&ta_lock);
	ta_loader_running = 0;
	ta_names_free(ta_req_names, ta_req_n);
	ta_req_names = NULL;
	ta_req_n = 0;
	ta_names_free(ta_map_names, ta_map_n);
	ta_map_names = NULL;
	ta_map_n = 0;
	ta_retired_free(ta_retired.placer, ta_retired.known, ta_retired.free_now, ta_retired.free_all, ta_retired.names,
			ta_retired.n);
	memset(&ta_retired, 0, sizeof(ta_retired));
	pthread_mutex_unlock(&ta_lock);
}
