/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What select/cons_tres_topoaware remembers between calls (ta_select_memo.c): which lines of which
 * jobs were logged when (the rate limit of ta_log_gate.h), and what run-now decided per job.
 * ctx->lock held. */
#ifndef TA_SELECT_MEMO_H
#define TA_SELECT_MEMO_H

#include "ta_select_ctx.h"

/* Whether the line of kind `what` for a job is to be logged now (ta_log_gate.h: a job's line of a
 * kind at most every 5 minutes, a kind that changes at once; per kind, for all jobs together, 10 at
 * once and then one every 30 s). NULL: not now. Else the text that ends the line: "", or how many
 * lines of the kind were held back since the last one logged (the memo's own buffer, valid until
 * the next call). */
const char *ta_memo_should_log(ta_ctx_t *ctx, uint32_t job_id, int what);

/* What run-now decided for a job that cons_tres then placed, kept for job_begin (which follows in
 * the same select_nodes call, under the same job write lock). placement: "ideal" | "fallback" |
 * "cons_tres". ta_memo_take: 1 and the decision (then forgotten) if there is one for the job. */
void ta_memo_decide(ta_ctx_t *ctx, uint32_t job_id, const char *placement, const char *note);
int ta_memo_take(ta_ctx_t *ctx, uint32_t job_id, char *placement, size_t placement_len, char *note, size_t note_len);

#endif
