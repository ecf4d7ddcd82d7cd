/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's layout options (ta_select_job.c). ctx->lock held. */
#ifndef TA_SELECT_JOB_H
#define TA_SELECT_JOB_H

#include "ta_select_ctx.h"

typedef struct {
	topoaware_options_t opts;
	int mode;          /* enum topoaware_mode in effect */
	uint32_t max_wait; /* seconds */
	uint32_t nodes, gpus_per_node;
	char layout[160];  /* canonical layout text */
} ta_job_t;

/* The layout options of the job's spank_job_env and the defaults that apply (topoaware.conf).
 * 1: a layout job; 0: none or unusable (logged). */
int ta_job_options(ta_ctx_t *ctx, job_record_t *job_ptr, ta_job_t *j);

#endif
