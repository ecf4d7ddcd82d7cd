/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The start time select/cons_tres gives a pending job in a will-run (backfill's question), by the
 * rule of Slurm 22.05 .. 24.11 (_will_run_test in src/plugins/select/cons_common/job_test.c of
 * 22.05.8, src/plugins/select/cons_tres/job_test.c of 23.11.11 and 24.11.5): when the job cannot
 * start now, cons_tres frees the running jobs on the usable nodes in order of end time, in batches
 * ("or a few jobs that end close in time"), tests the job after each batch and answers with the end
 * of the last job of the first batch after which it fits. The first batch holds the ends up to the
 * first end rounded up to a multiple of 30 s, plus 30 s; before each next batch the window grows,
 * doubled (or by SchedulerParameters=bf_window_linear=N seconds) until it holds the next end. So
 * a plan starts up to one window later than the earliest end at which the job fits; the windows
 * grow with the distance to the first end. 25.05 .. 26.05 answer with the end of the last freed
 * job whose nodes the chosen ones include (_get_last_relevant_job), which is not this rule.
 * Plain C, no Slurm headers. */
#ifndef TA_CONS_START_H
#define TA_CONS_START_H

#include <stddef.h>
#include <stdint.h>

/* ends[0..n): the end times of the running jobs on the usable nodes, ascending (seconds).
 * window_linear: bf_window_linear's seconds, 0 for doubling windows. The start cons_tres answers
 * for a job that fits once every job ending by fits_at has ended: the end of the last job of the
 * batch that holds the first end at or after fits_at; fits_at itself when no end is that late. */
int64_t ta_cons_batched_start(const int64_t *ends, size_t n, int64_t fits_at, int window_linear);

#endif
