/* SPDX-License-Identifier: GPL-2.0-or-later */
/* See ta_log_gate.h. */
#include "ta_log_gate.h"

int ta_log_gate_admit(ta_log_gate_t *g, uint32_t job_id, int kind, int64_t now, uint64_t *held, int64_t *held_since)
{
	unsigned s = job_id % TA_LOG_JOB_SLOTS;
	int k = kind < 0 ? 0 : kind >= TA_LOG_KINDS ? TA_LOG_KINDS - 1 : kind;
	int64_t periods;

	*held = 0;
	*held_since = 0;
	/* A clock set back does not silence a job until it catches up. */
	if (g->job[s].job_id == job_id && g->job[s].kind == kind && now >= g->job[s].when &&
	    now - g->job[s].when < TA_LOG_JOB_EVERY)
		return 0;
	if (!g->kind[k].started || now < g->kind[k].refilled) {
		g->kind[k].started = 1;
		g->kind[k].tokens = TA_LOG_BURST;
		g->kind[k].refilled = now;
	}
	periods = (now - g->kind[k].refilled) / TA_LOG_REFILL;
	if (periods > 0) {
		g->kind[k].tokens =
		    periods >= TA_LOG_BURST - g->kind[k].tokens ? TA_LOG_BURST : g->kind[k].tokens + (uint32_t)periods;
		g->kind[k].refilled += periods * TA_LOG_REFILL;
	}
	if (!g->kind[k].tokens) {
		if (!g->kind[k].held++)
			g->kind[k].held_since = now;
		return 0;
	}
	g->kind[k].tokens--;
	*held = g->kind[k].held;
	*held_since = g->kind[k].held_since;
	g->kind[k].held = 0;
	g->job[s].job_id = job_id;
	g->job[s].kind = kind;
	g->job[s].when = now;
	return 1;
}
