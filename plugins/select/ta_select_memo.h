/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What select/cons_tres_topoaware remembers per job between calls (ta_select_memo.c): when a reason
 * was last logged, and what run-now decided. ctx->lock held. */
#ifndef TA_SELECT_MEMO_H
#define TA_SELECT_MEMO_H

#include "ta_select_ctx.h"

/* 1 if this (job, reason) was not logged in the last 5 minutes: a reason that changes is logged
 * at once, the same one again after 5 minutes. */
int ta_memo_should_log(ta_ctx_t *ctx, uint32_t job_id, int what);

/* What run-now decided for a job that cons_tres then placed, kept for job_begin (which follows in
 * the same select_nodes call, under the same job write lock). placement: "ideal" | "fallback" |
 * "cons_tres". ta_memo_take: 1 and the decision (then forgotten) if there is one for the job. */
void ta_memo_decide(ta_ctx_t *ctx, uint32_t job_id, const char *placement, const char *note);
int ta_memo_take(ta_ctx_t *ctx, uint32_t job_id, char *placement, size_t placement_len, char *note, size_t note_len);

#endif
