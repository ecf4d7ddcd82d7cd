/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The topology loader thread (select_cons_tres_topoaware(8), "Topology file").
 *
 * select_p_node_init runs with slurmctld's write locks held (start-up, scontrol reconfigure), and
 * parsing a large topology.json (seconds for a million hosts) there would stop every RPC. So
 * node_init only copies the node table's names and hands them to this file's thread with the
 * topology's path; the thread loads it (ta_select_load.c: parsed only when it changed, mapped onto
 * the names, swapped in under ctx->lock). node_init waits for that at most TA_LOAD_WAIT_MS (a
 * topology of usual size is in place when it returns); past that the load goes on in the background
 * and is swapped in when done. Meanwhile the previous mapping serves if the node table did not
 * change; otherwise layout jobs wait (they are not given to plain cons_tres for a topology that is
 * about to arrive). A newer request supersedes an older one. */
#include "ta_select_loader.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ta_select_load.h"

#define TA_LOAD_WAIT_MS 200 /* the longest node_init waits for the load, slurmctld's locks held */

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

/* One request, with no lock held: prepare, then apply under ctx->lock unless a newer request came
 * meanwhile (it follows). Takes `names`. */
static void ta_load(ta_ctx_t *ctx, const char *path, char **names, uint32_t n, topoaware_parts_t *parts,
		    uint64_t gen)
{
	ta_load_t *l = xmalloc(sizeof(*l)); /* large (paths, messages): not on the thread's stack */

	snprintf(l->path, sizeof(l->path), "%s", path);
	l->names = names;
	l->n = n;
	l->parts = parts;
	ta_load_prepare(ctx, l);
	pthread_mutex_lock(&ctx->lock);
	if (gen == ctx->loader.gen_requested && !ctx->loader.stop) {
		ta_load_apply_locked(ctx, l);
		ctx->loader.gen_done = gen;
		pthread_cond_broadcast(&ctx->loader.loaded_cond);
	}
	pthread_mutex_unlock(&ctx->lock);
	ta_load_release(l);
	xfree(l);
}

/* Takes the latest request and carries it out with ctx->lock released, after freeing what node_init
 * took out of use. ctx->lock held. */
static void ta_load_latest_locked(ta_ctx_t *ctx)
{
	ta_loader_t *ld = &ctx->loader;
	char path[TA_PATH_MAX];
	char **names = ld->names;
	uint32_t n = ld->n;
	topoaware_parts_t *parts = ld->parts;
	uint64_t gen = ld->gen_requested;
	int same = ld->same;
	ta_retired_t retired = ld->retired;

	snprintf(path, sizeof(path), "%s", ld->path);
	ld->names = NULL;
	ld->n = 0;
	ld->parts = NULL;
	ld->same = 0;
	memset(&ld->retired, 0, sizeof(ld->retired));
	ld->gen_taken = gen;
	pthread_mutex_unlock(&ctx->lock);
	ta_load_retired_free(&retired);
	if (same) {
		/* The node table the current placer was built for: only this thread replaces
		 * ctx->map_names (under ctx->lock), so reading them here without it is safe. */
		n = ctx->map_n;
		names = xcalloc(n ? n : 1, sizeof(*names));
		for (uint32_t i = 0; i < n; i++)
			names[i] = xstrdup(ctx->map_names[i]);
	}
	ta_load(ctx, path, names, n, parts, gen);
	pthread_mutex_lock(&ctx->lock);
}

static void *ta_loader_main(void *arg)
{
	ta_ctx_t *ctx = arg;

	pthread_mutex_lock(&ctx->lock);
	while (!ctx->loader.stop) {
		if (ctx->loader.gen_taken != ctx->loader.gen_requested)
			ta_load_latest_locked(ctx);
		else
			pthread_cond_wait(&ctx->loader.cond, &ctx->lock);
	}
	pthread_mutex_unlock(&ctx->lock);
	return NULL;
}

/* Moves what the previous request leaves behind to the retired slot for the loader to free off the
 * locks (a slot still full is freed here: only when no loader thread could take it). */
static void ta_retire_names_locked(ta_loader_t *ld, char **names, uint32_t n)
{
	if (ld->retired.names)
		ta_load_names_free(ld->retired.names, ld->retired.n);
	ld->retired.names = names;
	ld->retired.n = n;
}

void ta_loader_request_locked(ta_ctx_t *ctx, const char *path, topoaware_parts_t *parts)
{
	ta_loader_t *ld = &ctx->loader;
	uint32_t n = node_record_count > 0 ? (uint32_t)node_record_count : 0;
	struct timespec until;

	/* slurmctld's write locks are held: only the node table's names are read here, and copied only
	 * when they differ from the ones the current placer was built for (start-up, nodes added or
	 * removed); a reconfigure over the same nodes copies nothing. */
	ta_retire_names_locked(ld, ld->names, ld->n);
	ld->names = NULL;
	ld->n = 0;
	/* A request not taken yet: its partitions are superseded too, freed by the loader. */
	if (ld->retired.parts)
		topoaware_parts_free(ld->retired.parts);
	ld->retired.parts = ld->parts;
	ld->parts = parts;
	ld->same = ctx->map_names && ta_table_equal(ctx->map_names, ctx->map_n, n);
	if (!ld->same) {
		ld->names = xcalloc(n ? n : 1, sizeof(*ld->names));
		for (uint32_t i = 0; i < n; i++)
			ld->names[i] = xstrdup(ta_node_name(i));
		ld->n = n;
		/* The current mapping serves until the new one is in only while the node table is the
		 * same; otherwise it goes out of use now and the loader frees it. */
		if (ld->retired.placer || ld->retired.known || ld->retired.free_now || ld->retired.free_all) {
			topoaware_placer_free(ld->retired.placer);
			FREE_NULL_BITMAP(ld->retired.known);
			xfree(ld->retired.free_now);
			xfree(ld->retired.free_all);
		}
		ld->retired.placer = ctx->placer;
		ld->retired.known = ctx->known;
		ld->retired.free_now = ctx->free_now;
		ld->retired.free_all = ctx->free_all;
		ctx->placer = NULL;
		ctx->known = NULL;
		ctx->free_now = ctx->free_all = NULL;
		ctx->nodes = 0;
	}
	snprintf(ld->path, sizeof(ld->path), "%s", path);
	ld->gen_requested++;

	if (!ld->running) {
		ld->stop = 0;
		if (pthread_create(&ld->thread, NULL, ta_loader_main, ctx) == 0) {
			ld->running = 1;
		} else {
			/* No thread: load here, as the only way to get a topology at all. */
			error("%s: cannot start the topology loader thread: %m; loading in select_p_node_init", TA);
			ta_load_latest_locked(ctx);
			return;
		}
	}
	pthread_cond_signal(&ld->cond);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)TA_LOAD_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (ld->gen_done != ld->gen_requested)
		if (pthread_cond_timedwait(&ld->loaded_cond, &ctx->lock, &until) == ETIMEDOUT)
			break;
	if (ld->gen_done != ld->gen_requested)
		info("%s: topology %s is still loading after %d ms; it is swapped in when ready (%s)", TA, path,
		     TA_LOAD_WAIT_MS,
		     ctx->placer ? "the previous one serves meanwhile" : "layout jobs wait for it meanwhile");
}

int ta_loader_pending_locked(const ta_ctx_t *ctx)
{
	return ctx->loader.gen_done != ctx->loader.gen_requested;
}

void ta_loader_stop(ta_ctx_t *ctx)
{
	ta_loader_t *ld = &ctx->loader;
	pthread_t t;

	pthread_mutex_lock(&ctx->lock);
	if (!ld->running) {
		pthread_mutex_unlock(&ctx->lock);
		return;
	}
	ld->stop = 1;
	t = ld->thread;
	pthread_cond_signal(&ld->cond);
	pthread_mutex_unlock(&ctx->lock);
	pthread_join(t, NULL);
	pthread_mutex_lock(&ctx->lock);
	ld->running = 0;
	ta_load_names_free(ld->names, ld->n);
	ld->names = NULL;
	ld->n = 0;
	topoaware_parts_free(ld->parts);
	ld->parts = NULL;
	topoaware_parts_free(ctx->parts);
	ctx->parts = NULL;
	ta_load_names_free(ctx->map_names, ctx->map_n);
	ctx->map_names = NULL;
	ctx->map_n = 0;
	ta_load_retired_free(&ld->retired);
	pthread_mutex_unlock(&ctx->lock);
}
