/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The NVLink domains job_submit/topoaware checks tp against (ta_submit_nvlink.h).
 *
 * One thread reads the topology file when asked: at plugin init (which waits for it at most
 * TA_NV_WAIT_MS) and when a submission finds the file changed (path's device, inode, size or
 * modification time differ from what was read: one stat per submission). It keeps only the domains
 * (topoaware_nvlink_from_topo: host name -> domain), frees the topology, and swaps the result in
 * under ta_nv_lock. The check holds ta_nv_lock only for the hash look-ups of the partition's nodes.
 * Until the first read is done, no domain is known: a tp above a node's GPUs is refused with a
 * note saying so (rather than accepted blindly; the select plugin places it anyway only inside a
 * domain). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "ta_submit_nvlink.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"

#define TA "job_submit/topoaware"
#define TA_NV_WAIT_MS 200 /* the longest init waits for the first read */

typedef struct {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int ok; /* the stat succeeded */
} ta_file_id_t;

static pthread_mutex_t ta_nv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ta_nv_cond = PTHREAD_COND_INITIALIZER; /* a read ended */
static topoaware_nvlink_t *ta_nv;   /* the domains read; NULL before the first read or after a failed one */
static ta_file_id_t ta_nv_id;       /* the file they were read from (ok 0: none read) */
static int ta_nv_state = TA_NVLINK_MISSING;
static int ta_nv_running;           /* a thread was started and not joined */
static int ta_nv_busy;              /* it is reading */
static pthread_t ta_nv_thread;
static char ta_nv_path[4096];
static ta_file_id_t ta_nv_want;     /* the identity of the file the thread is reading */

static ta_file_id_t ta_file_id(const char *path)
{
	ta_file_id_t id;
	struct stat st;

	memset(&id, 0, sizeof(id));
	if (stat(path, &st) != 0)
		return id;
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	id.size = st.st_size;
	id.mtime = st.st_mtim;
	id.ok = 1;
	return id;
}

static int ta_same_id(const ta_file_id_t *a, const ta_file_id_t *b)
{
	return a->ok == b->ok && (!a->ok || (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
					     a->mtime.tv_sec == b->mtime.tv_sec &&
					     a->mtime.tv_nsec == b->mtime.tv_nsec));
}

/* 0 if the file can be read and never holds `needle`; 1 otherwise (found, or unreadable: the
 * parse then says why). A byte scan in 1 MB pieces, nothing kept. */
static int ta_file_may_hold(const char *path, const char *needle)
{
	enum { piece = 1 << 20 };
	size_t nlen = strlen(needle), have = 0;
	char *buf;
	FILE *f = fopen(path, "re");

	if (!f)
		return 1;
	buf = xmalloc(piece + nlen);
	for (;;) {
		size_t got = fread(buf + have, 1, piece, f);

		if (got == 0)
			break;
		have += got;
		if (memmem(buf, have, needle, nlen)) {
			xfree(buf);
			fclose(f);
			return 1;
		}
		/* keep the last nlen - 1 bytes: the needle may straddle two pieces */
		if (have >= nlen) {
			memmove(buf, buf + have - (nlen - 1), nlen - 1);
			have = nlen - 1;
		}
	}
	xfree(buf);
	if (ferror(f)) {
		fclose(f);
		return 1;
	}
	fclose(f);
	return 0;
}

static void *ta_nv_main(void *arg)
{
	char err[TOPOAWARE_ERR_LEN];
	topoaware_topo_t *topo = NULL;
	topoaware_nvlink_t *nv = NULL, *old;
	int state = TA_NVLINK_MISSING;

	(void)arg;
	/* topology.json names "nvlink_domains" only when it has some: a fabric without them (most) is
	 * not parsed here at all, which at a million hosts would be a second copy of the select
	 * plugin's load in slurmctld's memory. */
	if (!ta_file_may_hold(ta_nv_path, "\"nvlink_domains\"")) {
		verbose("%s: %s: no multi-node NVLink domain", TA, ta_nv_path);
		state = TA_NVLINK_LOADED;
	} else if ((topo = topoaware_topo_load(ta_nv_path, err, sizeof(err)))) {
		nv = topoaware_nvlink_from_topo(topo, err, sizeof(err));
		topoaware_topo_free(topo);
	}
	if (state == TA_NVLINK_LOADED) {
		/* nothing to keep: ta_nvlink_count reports the state with no domain */
	} else if (nv) {
		state = TA_NVLINK_LOADED;
		verbose("%s: %s: %u multi-node NVLink domain(s)", TA, ta_nv_path, topoaware_nvlink_domains(nv));
	} else {
		/* Not an error of slurmctld's: layouts are still checked, without multi-node domains. */
		info("%s: NVLink domains not known: %s", TA, err);
	}
	pthread_mutex_lock(&ta_nv_lock);
	old = ta_nv;
	ta_nv = nv;
	ta_nv_id = ta_nv_want;
	ta_nv_state = state;
	ta_nv_busy = 0;
	pthread_cond_broadcast(&ta_nv_cond);
	pthread_mutex_unlock(&ta_nv_lock);
	topoaware_nvlink_free(old);
	return NULL;
}

/* Starts a read of the file with identity `id` (ta_nv_lock held, no read under way). */
static void ta_nv_launch(const ta_file_id_t *id)
{
	if (ta_nv_running) { /* the previous thread has ended (not busy): joining it does not wait */
		pthread_join(ta_nv_thread, NULL);
		ta_nv_running = 0;
	}
	ta_nv_want = *id;
	ta_nv_busy = 1;
	if (pthread_create(&ta_nv_thread, NULL, ta_nv_main, NULL) != 0) {
		ta_nv_busy = 0;
		error("%s: cannot start the thread that reads %s; NVLink domains not known", TA, ta_nv_path);
		return;
	}
	ta_nv_running = 1;
}

void ta_nvlink_start(const char *path)
{
	struct timespec until;
	ta_file_id_t id;

	if (!path || !*path || strlen(path) >= sizeof(ta_nv_path))
		return;
	pthread_mutex_lock(&ta_nv_lock);
	snprintf(ta_nv_path, sizeof(ta_nv_path), "%s", path);
	id = ta_file_id(path);
	if (!id.ok) {
		info("%s: %s: %m; no multi-node NVLink domain is known until it exists", TA, path);
		ta_nv_state = TA_NVLINK_MISSING;
		ta_nv_id = id;
		pthread_mutex_unlock(&ta_nv_lock);
		return;
	}
	ta_nv_state = TA_NVLINK_LOADING;
	ta_nv_launch(&id);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += TA_NV_WAIT_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (ta_nv_busy)
		if (pthread_cond_timedwait(&ta_nv_cond, &ta_nv_lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&ta_nv_lock);
}

void ta_nvlink_stop(void)
{
	pthread_mutex_lock(&ta_nv_lock);
	if (ta_nv_running) {
		pthread_mutex_unlock(&ta_nv_lock);
		pthread_join(ta_nv_thread, NULL); /* a read under way is finished, never cut off */
		pthread_mutex_lock(&ta_nv_lock);
		ta_nv_running = 0;
	}
	topoaware_nvlink_free(ta_nv);
	ta_nv = NULL;
	ta_nv_state = TA_NVLINK_MISSING;
	memset(&ta_nv_id, 0, sizeof(ta_nv_id));
	pthread_mutex_unlock(&ta_nv_lock);
}

int ta_nvlink_count(uint32_t n, int (*in_set)(uint32_t i, void *arg), const char *(*name)(uint32_t i, void *arg),
		    void *arg, uint32_t **counts, uint32_t *ndomains, const char **why)
{
	ta_file_id_t id;
	int state;

	*counts = NULL;
	*ndomains = 0;
	if (why)
		*why = "";
	if (!ta_nv_path[0]) {
		if (why)
			*why = "no topology file is configured";
		return TA_NVLINK_MISSING;
	}
	id = ta_file_id(ta_nv_path); /* outside ta_nv_lock: a slow file system delays only this call */
	pthread_mutex_lock(&ta_nv_lock);
	if (!ta_nv_busy && !ta_same_id(&id, &ta_nv_id)) {
		if (id.ok) {
			ta_nv_launch(&id); /* the answer below is the previous file's until it is read */
			if (ta_nv_state == TA_NVLINK_MISSING && !ta_nv)
				ta_nv_state = TA_NVLINK_LOADING;
		} else {
			topoaware_nvlink_t *old = ta_nv;

			ta_nv = NULL;
			ta_nv_id = id;
			ta_nv_state = TA_NVLINK_MISSING;
			topoaware_nvlink_free(old); /* a hash table: freed quickly */
		}
	}
	state = ta_nv ? TA_NVLINK_LOADED : ta_nv_state;
	if (ta_nv && topoaware_nvlink_domains(ta_nv)) {
		uint32_t nd = topoaware_nvlink_domains(ta_nv);
		uint32_t *c = xcalloc(nd, sizeof(*c));

		for (uint32_t i = 0; i < n; i++) {
			int d;

			if (!in_set(i, arg))
				continue;
			d = topoaware_nvlink_domain_of(ta_nv, name(i, arg));
			if (d >= 0 && (uint32_t)d < nd)
				c[d]++;
		}
		*counts = c;
		*ndomains = nd;
	}
	pthread_mutex_unlock(&ta_nv_lock);
	if (why && state == TA_NVLINK_LOADING)
		*why = "the topology file's NVLink domains are still being read; submit again in a moment";
	else if (why && state == TA_NVLINK_MISSING)
		*why = "no NVLink domain is known: the topology file is missing or unreadable (see slurmctld's log)";
	return state;
}
