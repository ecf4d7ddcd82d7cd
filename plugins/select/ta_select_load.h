/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One load of the topology (ta_select_load.c), carried out by the loader thread
 * (ta_select_loader.c): prepared with no lock held (parse, map: everything proportional to the
 * topology or the node table), applied under ctx->lock (pointer swaps and logs only), released
 * with no lock held (what it did not use, or what it took out of use). */
#ifndef TA_SELECT_LOAD_H
#define TA_SELECT_LOAD_H

#include <sys/stat.h>

#include "ta_select_ctx.h"

typedef struct {
	/* the request (set by the caller; names are the load's) */
	char path[TA_PATH_MAX];
	char **names;
	uint32_t n;
	topoaware_parts_t *parts; /* the partitions' Slurm topologies (NULL: none), decided when prepared */
	/* prepared */
	char last_good[TA_PATH_MAX];
	char err[TOPOAWARE_ERR_LEN], map_err[TOPOAWARE_ERR_LEN], save_err[TOPOAWARE_ERR_LEN];
	struct stat st;
	int same; /* the file is the one in use, unchanged: not parsed again */
	topoaware_topo_t *topo, *fallback;
	topoaware_ring_book_t *rings; /* the ring book of the topology taken out of use */
	topoaware_placer_t *placer;
	bitstr_t *known;
	uint16_t *free_now, *free_all;
	char *missing_list;
	uint32_t named;
	char parts_err[TOPOAWARE_ERR_LEN]; /* why the partitions could not be decided ("" = they were) */
} ta_load_t;

/* Parses (if the file changed) and maps `l`'s request. No lock held; only the loader thread (or
 * fini, after joining it) replaces ctx->topo, so reading it here is safe. */
void ta_load_prepare(ta_ctx_t *ctx, ta_load_t *l);
/* Swaps the prepared topology and mapping into ctx, logs and books the outcome; `l` then holds
 * what went out of use. ctx->lock held. */
void ta_load_apply_locked(ta_ctx_t *ctx, ta_load_t *l);
/* Frees what `l` holds (prepared and not applied, or taken out of use). No lock held. */
void ta_load_release(ta_load_t *l);

/* Node names and retired mappings (ta_select_loader.c frees them off the locks). */
void ta_load_names_free(char **names, uint32_t n);
void ta_load_retired_free(ta_retired_t *r);

#endif
