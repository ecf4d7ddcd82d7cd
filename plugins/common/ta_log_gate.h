/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rate limit of select/cons_tres_topoaware's per-job log lines: why a layout job goes to plain
 * cons_tres, why it waits, why its options are unusable. Slurm calls select_p_job_test for every
 * pending job in every scheduling and backfill pass, and these lines are written there,
 * synchronously, under slurmctld's job write lock: without a limit a queue of thousands of layout
 * jobs writes thousands of lines per pass (while no topology is loaded, for one). Two rules, each
 * O(1) per call in fixed memory, whatever the number of jobs:
 * - per job: a job's line of a kind is not written again for TA_LOG_JOB_EVERY seconds (a kind that
 *   changes is written at once). Remembered in a slot per job id modulo TA_LOG_JOB_SLOTS: with
 *   more jobs than slots, jobs share slots and may be written again sooner;
 * - per kind, for all jobs together: at most TA_LOG_BURST lines at once, then one more every
 *   TA_LOG_REFILL seconds (a token bucket). The lines it holds back are counted, and the next line
 *   of the kind that is written says how many, so that nothing is lost without a trace.
 * Plain C, no Slurm headers. */
#ifndef TA_LOG_GATE_H
#define TA_LOG_GATE_H

#include <stdint.h>

#define TA_LOG_JOB_SLOTS 256
#define TA_LOG_JOB_EVERY 300 /* seconds */
#define TA_LOG_KINDS 32	     /* kinds 0 .. 31; larger ones share the last */
#define TA_LOG_BURST 10
#define TA_LOG_REFILL 30 /* seconds */

typedef struct {
	struct {
		uint32_t job_id;
		int kind;
		int64_t when;
	} job[TA_LOG_JOB_SLOTS];
	struct {
		int started;
		uint32_t tokens;
		int64_t refilled; /* when the last token came */
		uint64_t held;	  /* lines held back since the last one written */
		int64_t held_since;
	} kind[TA_LOG_KINDS];
} ta_log_gate_t;

/* 1 if the line of kind `kind` for job `job_id` is to be written at `now` (seconds); then *held is
 * the number of lines of that kind held back since the last one written (0: none) and *held_since
 * when the first of them was. 0 if not. A zeroed gate is ready. */
int ta_log_gate_admit(ta_log_gate_t *g, uint32_t job_id, int kind, int64_t now, uint64_t *held, int64_t *held_since);

#endif
