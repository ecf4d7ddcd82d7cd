/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When nodes free up, for will-run (ta_select_ends.c): the running jobs' end times per node, read
 * from slurmctld's job list and kept (ctx->ends) until a job begins, ends or changes its nodes. */
#ifndef TA_SELECT_ENDS_H
#define TA_SELECT_ENDS_H

#include "ta_select_ctx.h"

/* A job began, ended or changed its nodes (any job, layout or not): the end times are read again at
 * the next will-run. Any entry point, with or without ctx->lock. */
void ta_ends_jobs_changed(ta_ctx_t *ctx);

/* For the core's will-run (topoaware_select_request_t): per node-table index of `bitmap`, when every
 * job on the node has ended and the earliest time plain cons_tres could give this job the node
 * (ctx->free_now, ctx->free_all filled for the call). 1 with the arrays (valid until the next call),
 * 0 when slurmctld's job list is not reachable (the arrays untouched). ctx->lock held. */
int ta_ends_fill(ta_ctx_t *ctx, job_record_t *job_ptr, bitstr_t *bitmap, time_t now, const int64_t **all_free_at,
		 const int64_t **earliest_free_at);

#endif
