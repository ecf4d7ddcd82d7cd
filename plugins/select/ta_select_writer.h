/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The status file writer of select/cons_tres_topoaware (ta_select_writer.c): a thread that writes
 * the status book to StatusFile, started at the first node_init, woken to write soon, stopped at
 * shutdown. */
#ifndef TA_SELECT_WRITER_H
#define TA_SELECT_WRITER_H

#include "ta_select_ctx.h"

/* Slurm's functions for the sweep of cancelled pending jobs (init, slurmctld only). */
void ta_writer_init(ta_ctx_t *ctx);
/* ctx->lock held. */
void ta_writer_start_locked(ta_ctx_t *ctx);
void ta_writer_wake_locked(ta_ctx_t *ctx);
/* The status file's error for a new StatusFile path is new: logged again. */
void ta_writer_path_changed_locked(ta_ctx_t *ctx);
/* The thread ends (ctx->lock NOT held). */
void ta_writer_end(ta_ctx_t *ctx);
/* slurmctld stops: the thread ends, then the last status file write (ctx->lock NOT held). */
void ta_writer_shutdown(ta_ctx_t *ctx);

#endif
