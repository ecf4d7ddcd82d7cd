/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The topology loader thread of select/cons_tres_topoaware (ta_select_loader.c): select_p_node_init
 * hands it the node table's names and the topology's path; it loads off slurmctld's locks
 * (ta_select_load.c). */
#ifndef TA_SELECT_LOADER_H
#define TA_SELECT_LOADER_H

#include "ta_select_ctx.h"

/* A new node table (select_p_node_init): its names to the loader with the topology's path and the
 * partitions' Slurm topologies (taken; NULL: none); waits a bounded time for the result. ctx->lock
 * held (released while waiting). */
void ta_loader_request_locked(ta_ctx_t *ctx, const char *path, topoaware_parts_t *parts);
/* 1 while a request is not applied yet. ctx->lock held. */
int ta_loader_pending_locked(const ta_ctx_t *ctx);
/* Stops the loader thread and frees its requests and names (fini). ctx->lock NOT held. */
void ta_loader_stop(ta_ctx_t *ctx);

#endif
