/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Memory of select/cons_tres_topoaware between calls (ta_select_memo.h), bounded however many jobs
 * pass: the log's rate limit in fixed tables (ta_log_gate.h), run-now's decision in a slot per job id
 * modulo TA_MEMO_SLOTS (kept only from job_test to the job_begin of the same select_nodes call). */
#include "ta_select_memo.h"

#include <inttypes.h>
#include <stdio.h>

const char *ta_memo_should_log(ta_ctx_t *ctx, uint32_t job_id, int what)
{
	int64_t now = (int64_t)time(NULL), since;
	uint64_t held;

	if (!ta_log_gate_admit(&ctx->memo.log, job_id, what, now, &held, &since))
		return NULL;
	if (!held)
		return "";
	snprintf(ctx->memo.log_more, sizeof(ctx->memo.log_more),
		 "; %" PRIu64 " more lines of this kind not logged in the last %" PRId64 " s", held, now - since);
	return ctx->memo.log_more;
}

void ta_memo_decide(ta_ctx_t *ctx, uint32_t job_id, const char *placement, const char *note)
{
	unsigned k = job_id % TA_MEMO_SLOTS;

	ctx->memo.decided[k].job_id = job_id;
	snprintf(ctx->memo.decided[k].placement, sizeof(ctx->memo.decided[k].placement), "%s", placement);
	snprintf(ctx->memo.decided[k].note, sizeof(ctx->memo.decided[k].note), "%s", note ? note : "");
}

int ta_memo_take(ta_ctx_t *ctx, uint32_t job_id, char *placement, size_t placement_len, char *note, size_t note_len)
{
	unsigned k = job_id % TA_MEMO_SLOTS;

	if (ctx->memo.decided[k].job_id != job_id)
		return 0;
	snprintf(placement, placement_len, "%s", ctx->memo.decided[k].placement);
	snprintf(note, note_len, "%s", ctx->memo.decided[k].note);
	ctx->memo.decided[k].job_id = 0;
	return 1;
}
