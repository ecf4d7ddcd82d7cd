/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The status book of select/cons_tres_topoaware (ta_select_book.c): waiting verdicts, placements
 * and ends of layout jobs, which the writer thread (ta_select_writer.c) writes to the status file. */
#ifndef TA_SELECT_BOOK_H
#define TA_SELECT_BOOK_H

#include "ta_select_ctx.h"
#include "ta_select_job.h"

/* A waiting verdict into the status book (hint: from will-run). ctx->lock held. */
void ta_book_wait(ta_ctx_t *ctx, job_record_t *job_ptr, const ta_job_t *j, const char *why, int hint);

/* The following take ctx->lock themselves. */
/* After cons_tres's job_begin succeeded: record the topology hash in the job's spank_job_env,
 * the placement in the status book and (LogLevel=verbose) in the log. */
void ta_book_job_begin(ta_ctx_t *ctx, job_record_t *job_ptr);
/* The job's allocation ended (completion, cancel, requeue): out of the status book. */
void ta_book_job_fini(ta_ctx_t *ctx, job_record_t *job_ptr);
/* ended (may be NULL) gave its nodes away and ends; changed has another node set now. */
void ta_book_job_resized(ta_ctx_t *ctx, job_record_t *ended, job_record_t *changed);
/* Running layout jobs the status book does not know into it (start-up, reconfigure). */
void ta_book_job_init(ta_ctx_t *ctx, ta_list_t *job_list);

#endif
