/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-job memory of select/cons_tres_topoaware (ta_select_memo.h): a slot per job id modulo
 * TA_MEMO_SLOTS, so that it stays bounded however many jobs pass. */
#include "ta_select_memo.h"

#include <stdio.h>

#define TA_LOG_EVERY 300 /* a job's fallback/wait reason is logged at most every 5 minutes */

int ta_memo_should_log(ta_ctx_t *ctx, uint32_t job_id, int what)
{
	time_t now = time(NULL);
	unsigned k = job_id % TA_MEMO_SLOTS;

	if (ctx->memo.logged[k].job_id == job_id && ctx->memo.logged[k].what == what &&
	    now - ctx->memo.logged[k].when < TA_LOG_EVERY)
		return 0;
	ctx->memo.logged[k].job_id = job_id;
	ctx->memo.logged[k].what = what;
	ctx->memo.logged[k].when = now;
	return 1;
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
