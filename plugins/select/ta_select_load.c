/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One load of the topology (select_cons_tres_topoaware(8), "Topology file"), in the loader thread
 * (ta_select_loader.c): the file is parsed only when it changed (path, device, inode, size and
 * modification time), Slurm's node names are mapped onto it and the nodes missing from it found,
 * all with no lock held; under ctx->lock only pointers are swapped and the outcome logged. A file
 * that does not load keeps the last good topology; with none in memory, the last copy that loaded
 * (kept beside slurmctld's state) serves. A topology that holds none of slurmctld's nodes counts as
 * one that does not load (topoaware_placer_check): used, it would offer every layout job no node. */
#include "ta_select_load.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/common/hostlist.h"

#include "ta_select_writer.h"

void ta_load_names_free(char **names, uint32_t n)
{
	for (uint32_t i = 0; names && i < n; i++)
		xfree(names[i]);
	xfree(names);
}

void ta_load_retired_free(ta_retired_t *r)
{
	topoaware_placer_free(r->placer);
	FREE_NULL_BITMAP(r->known);
	xfree(r->free_now);
	xfree(r->free_all);
	ta_load_names_free(r->names, r->n);
	topoaware_parts_free(r->parts);
	memset(r, 0, sizeof(*r));
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

/* The topology in use (or why none is) into the status book. ctx->lock held. */
static void ta_book_topology(ta_ctx_t *ctx, const char *file, const char *hash, const char *why)
{
	if (ctx->status && topoaware_status_set_topology(ctx->status, file, hash, why))
		error("%s: out of memory for the status book; the status file shows an older topology", TA);
}

/* `topo` mapped onto the load's node names and checked: NULL with why in err if it cannot be mapped,
 * or (*unusable set) if it holds none of the names. No lock held. */
static topoaware_placer_t *ta_map_checked(const topoaware_topo_t *topo, const ta_load_t *l, char *err, size_t errlen,
					  int *unusable)
{
	topoaware_placer_t *placer;

	*unusable = 0;
	if (!topo || !l->n)
		return NULL;
	if (!(placer = topoaware_placer_create(topo, (const char *const *)l->names, l->n, err, errlen)))
		return NULL;
	if (topoaware_placer_check(placer, err, errlen)) {
		topoaware_placer_free(placer);
		*unusable = 1;
		return NULL;
	}
	return placer;
}

void ta_load_prepare(ta_ctx_t *ctx, ta_load_t *l)
{
	const ta_file_id_t *id = &ctx->topo_id;
	const topoaware_topo_t *use;
	int have_st, unusable;

	memset(&l->st, 0, sizeof(l->st));
	have_st = stat(l->path, &l->st) == 0;
	l->same = ctx->topo && have_st && !strcmp(l->path, ctx->topo_path) && l->st.st_dev == id->dev &&
		  l->st.st_ino == id->ino && l->st.st_size == id->size &&
		  l->st.st_mtim.tv_sec == id->mtime.tv_sec && l->st.st_mtim.tv_nsec == id->mtime.tv_nsec;
	l->err[0] = l->map_err[0] = l->save_err[0] = '\0';
	pthread_mutex_lock(&ctx->lock);
	snprintf(l->last_good, sizeof(l->last_good), "%s", ctx->last_good_path);
	pthread_mutex_unlock(&ctx->lock);
	if (!l->same)
		l->topo = topoaware_topo_load(l->path, l->err, sizeof(l->err));
	/* Mapped before it is kept as the last good copy: a topology that holds none of slurmctld's
	 * nodes goes the way of a broken file (the previous topology stays, else plain cons_tres). */
	l->placer = ta_map_checked(l->topo, l, l->map_err, sizeof(l->map_err), &unusable);
	if (unusable) {
		snprintf(l->err, sizeof(l->err), "%s", l->map_err);
		l->map_err[0] = '\0';
		topoaware_topo_free(l->topo);
		l->topo = NULL;
	}
	if (l->topo && l->last_good[0] &&
	    topoaware_topo_save(l->topo, l->last_good, l->save_err, sizeof(l->save_err)))
		error("%s: cannot keep a copy of topology %s as %s: %s (a restarted slurmctld cannot fall back to it)",
		      TA, l->path, l->last_good, l->save_err);
	/* Nothing in memory (slurmctld started, or from 23.11 any scontrol reconfigure, which starts a
	 * new slurmctld) and the configured file broken: the last copy that loaded, if any, and if it
	 * holds slurmctld's nodes (they may have been renamed since). */
	if (!l->topo && !l->same && !ctx->topo && l->last_good[0] && access(l->last_good, F_OK) == 0)
		l->fallback = topoaware_topo_load(l->last_good, l->save_err, sizeof(l->save_err));
	if (l->fallback) {
		l->placer = ta_map_checked(l->fallback, l, l->map_err, sizeof(l->map_err), &unusable);
		if (unusable) {
			error("%s: the last topology that loaded, kept as %s, cannot serve either: %s", TA, l->last_good,
			      l->map_err);
			l->map_err[0] = '\0';
			topoaware_topo_free(l->fallback);
			l->fallback = NULL;
		}
	}
	/* The topology in use, mapped onto a node table that may have changed: if it holds none of the
	 * new nodes, no placer (layout jobs go to plain cons_tres; ta_load_apply_locked says why). */
	if (!l->topo && !l->fallback && ctx->topo)
		l->placer = ta_map_checked(ctx->topo, l, l->map_err, sizeof(l->map_err), &unusable);
	use = l->topo ? l->topo : l->fallback ? l->fallback : ctx->topo;
	/* Everything proportional to the topology or the node table is made here, before ctx->lock:
	 * the partitions' decisions too (topoaware_parts_decide compares every Slurm topology they use
	 * with the topology in use). */
	l->parts_err[0] = '\0';
	if (l->parts && use && topoaware_parts_decide(l->parts, use, l->parts_err, sizeof(l->parts_err))) {
		topoaware_parts_free(l->parts);
		l->parts = NULL;
	}
	if (l->placer) {
		ta_map_missing(l->placer, l->names, l->n, &l->known, &l->missing_list, &l->named);
		l->free_now = xcalloc(l->n, sizeof(*l->free_now));
		l->free_all = xcalloc(l->n, sizeof(*l->free_all));
	}
}

/* What is logged and booked for the outcome; the fallback copy becomes l->topo. ctx->lock held. */
static void ta_load_report_locked(ta_ctx_t *ctx, ta_load_t *l)
{
	if (l->topo) {
		TA_LOG(ctx, TOPOAWARE_LOG_INFO, "%s: topology %s loaded (%u hosts, %s)", TA, l->path,
		       topoaware_topo_hosts(l->topo), topoaware_topo_hash(l->topo));
		ta_book_topology(ctx, l->path, topoaware_topo_hash(l->topo), "");
	} else if (l->same) {
		TA_LOG(ctx, TOPOAWARE_LOG_INFO, "%s: topology %s unchanged (%u hosts, %s)", TA, l->path,
		       topoaware_topo_hosts(ctx->topo), topoaware_topo_hash(ctx->topo));
		ta_book_topology(ctx, l->path, topoaware_topo_hash(ctx->topo), "");
	} else if (ctx->topo) {
		error("%s: cannot load topology %s: %s; keeping the previous topology %s (%s)", TA, l->path, l->err,
		      ctx->topo_path, topoaware_topo_hash(ctx->topo));
		ta_book_topology(ctx, ctx->topo_path, topoaware_topo_hash(ctx->topo), l->err);
	} else if (l->fallback) {
		error("%s: cannot load topology %s: %s; using the last topology that loaded, kept as %s (%u hosts, %s), "
		      "until %s loads (fix it, then scontrol reconfigure)",
		      TA, l->path, l->err, l->last_good, topoaware_topo_hosts(l->fallback),
		      topoaware_topo_hash(l->fallback), l->path);
		ta_book_topology(ctx, l->last_good, topoaware_topo_hash(l->fallback), l->err);
		l->topo = l->fallback; /* in use from here: its identity is the copy's, so a fixed file loads */
		l->fallback = NULL;
		snprintf(l->path, sizeof(l->path), "%s", l->last_good);
		if (stat(l->path, &l->st) != 0)
			memset(&l->st, 0, sizeof(l->st));
	} else {
		error("%s: no topology: %s: %s; jobs with a tp/pp/dp layout are placed by plain select/cons_tres until "
		      "a topology loads (scontrol reconfigure)",
		      TA, l->path, l->err);
		ta_book_topology(ctx, "", "", l->err);
	}
}

/* The partitions' decisions into use, and one line per partition (and per disagreement) logged:
 * once per load, never per job. Without a topology nothing was decided: every partition is as
 * without partition topologies. ctx->lock held. */
static void ta_parts_apply_locked(ta_ctx_t *ctx, ta_load_t *l)
{
	topoaware_parts_t *old = ctx->parts;

	if (l->parts_err[0])
		error("%s: cannot compare the partitions' Slurm topologies with topology %s: %s; every partition is "
		      "placed by it",
		      TA, ctx->topo_path, l->parts_err);
	/* The table that goes out of use is freed in ta_load_release, with no lock held. Without a
	 * topology there is no old table either (one is only kept with a topology). */
	ctx->parts = ctx->topo ? l->parts : NULL;
	l->parts = ctx->topo ? old : l->parts;
	for (uint32_t i = 0; ctx->parts && i < topoaware_parts_lines(ctx->parts); i++) {
		if (topoaware_parts_line_disagrees(ctx->parts, i))
			/* At every LogLevel, like nodes missing from the topology: a configuration problem. */
			info("%s: %s", TA, topoaware_parts_line(ctx->parts, i));
		else
			TA_LOG(ctx, TOPOAWARE_LOG_INFO, "%s: %s", TA, topoaware_parts_line(ctx->parts, i));
	}
}

void ta_load_apply_locked(ta_ctx_t *ctx, ta_load_t *l)
{
	topoaware_topo_t *old_topo = NULL;
	topoaware_placer_t *placer = l->placer;
	bitstr_t *known = l->known;
	uint16_t *free_now = l->free_now, *free_all = l->free_all;
	char **names = l->names;
	uint32_t n = l->n;

	ta_load_report_locked(ctx, l);
	/* Swapped here; the old placer, topology and node names go to `l`, freed after ctx->lock is
	 * released (the old placer refers to the old topology: freed first). */
	l->placer = ctx->placer;
	l->known = ctx->known;
	l->free_now = ctx->free_now;
	l->free_all = ctx->free_all;
	ctx->placer = NULL;
	ctx->known = NULL;
	ctx->free_now = ctx->free_all = NULL;
	ctx->nodes = 0;
	if (l->topo) {
		old_topo = ctx->topo;
		/* The running jobs' ring edges were counted on the old topology's cables: the next
		 * job_begin counts them again on the new one (ta_book_rings_locked). */
		l->rings = ctx->rings;
		ctx->rings = NULL;
		ctx->topo = l->topo;
		snprintf(ctx->topo_path, sizeof(ctx->topo_path), "%s", l->path);
		ctx->topo_id.dev = l->st.st_dev;
		ctx->topo_id.ino = l->st.st_ino;
		ctx->topo_id.size = l->st.st_size;
		ctx->topo_id.mtime = l->st.st_mtim;
	}
	l->topo = old_topo;
	if (!placer && ctx->topo && n) {
		error("%s: cannot map Slurm's nodes onto topology %s: %s; layout jobs go to plain select/cons_tres",
		      TA, ctx->topo_path, l->map_err);
		ta_book_topology(ctx, ctx->topo_path, topoaware_topo_hash(ctx->topo), l->map_err);
	}
	l->names = ctx->map_names;
	l->n = ctx->map_n;
	ctx->map_names = names;
	ctx->map_n = n;
	ta_parts_apply_locked(ctx, l);
	if (placer) {
		ctx->placer = placer;
		ctx->known = known;
		ctx->nodes = n;
		ctx->free_now = free_now;
		ctx->free_all = free_all;
		if (l->named)
			/* At every LogLevel (a topology problem), once per load. */
			info("%s: %u of %u Slurm nodes are not in topology %s: %.2000s; %s", TA, l->named, n,
			     ctx->topo_path, l->missing_list,
			     topoaware_conf_missing_nodes(ctx->conf) == TOPOAWARE_MISSING_FALLBACK
				     ? "MissingNodes=fallback: plain select/cons_tres may give them to layout jobs that "
				       "the topology's nodes cannot hold now"
				     : "MissingNodes=avoid: they are never chosen for layout jobs (run topoaware discover "
				       "again to add them)");
	}
	ta_writer_wake_locked(ctx); /* the new topology into the status file soon */
}

void ta_load_release(ta_load_t *l)
{
	ta_retired_t r = { l->placer, l->known, l->free_now, l->free_all, l->names, l->n, NULL };

	ta_load_retired_free(&r);
	topoaware_parts_free(l->parts);
	l->parts = NULL;
	topoaware_ring_book_free(l->rings); /* refers to l->topo: freed first */
	l->rings = NULL;
	topoaware_topo_free(l->topo);
	topoaware_topo_free(l->fallback);
	xfree(l->missing_list);
	l->placer = NULL;
	l->known = NULL;
	l->free_now = l->free_all = NULL;
	l->names = NULL;
	l->n = 0;
	l->topo = l->fallback = NULL;
}
