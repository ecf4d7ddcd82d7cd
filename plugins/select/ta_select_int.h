/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the three parts of the topoaware build of the select plugin share (private to it):
 *   ta_select_state.c  the plugin's state: topoaware.conf and the topology, (re)loaded at node_init
 *   ta_select_load.c   the topology parsed and mapped onto the node table off slurmctld's locks
 *   ta_select_job.c    a job's layout options
 *   ta_select_place.c  select_p_job_test of layout jobs: read the job, run the core's decision
 *   ta_select_ends.c   when nodes free up, for will-run (ta_select_ends.h)
 *   ta_select_book.c   the status book (placements, waits, ends)
 *   ta_select_writer.c the status file's writer thread
 * Everything below is behind ta_lock, taken after slurmctld's locks (every select_p_* call holds
 * those already), never before. Include first: it includes Slurm's headers in the order they need. */
#ifndef TA_SELECT_INT_H
#define TA_SELECT_INT_H

#include "config.h" /* Slurm's */

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

/* Slurm's own plugins include this first: it renames Slurm's internal functions to the slurm_*
 * names that both libslurmfull (slurmctld, slurmd, the commands) and the public libslurm.so
 * export, so that the plugin also loads in programs linked to libslurm.so (pyslurm, DRMAA, ...). */
#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "layout_c.h"
#include "status_c.h"
#include "ta_select.h"
#include "topoaware_c.h"

#define TA "select/cons_tres_topoaware"
#define TA_PATH_MAX 4096

/* ---- state (ta_select_state.c) --------------------------------------------------------------- */

extern pthread_mutex_t ta_lock;
extern topoaware_conf_t *ta_conf;       /* last good topoaware.conf (NULL: the core's defaults) */
extern topoaware_topo_t *ta_topo;       /* last good topology (NULL: none, plain cons_tres) */
extern topoaware_placer_t *ta_placer;   /* ta_topo mapped onto the current node table */
extern char ta_topo_path[TA_PATH_MAX];  /* the file ta_topo came from */
extern uint32_t ta_nodes;               /* node table size the placer was built for */
extern uint16_t *ta_free, *ta_free_all; /* scratch: free GPUs per node-table index, now and all */
extern uint32_t ta_gpu_id;              /* gres plugin id of "gpu" */
extern bitstr_t *ta_known;              /* nodes in the topology; NULL: all are (or no placer) */
extern char ta_status_path[TA_PATH_MAX]; /* StatusFile; "" = none */
/* <StateSaveLocation>/TA_LAST_GOOD_NAME: a copy of the last topology that loaded; "" = none. */
#define TA_LAST_GOOD_NAME "topoaware-last-good-topology.json"
extern char ta_last_good_path[TA_PATH_MAX];
extern topoaware_status_t *ta_status;   /* the status book (NULL: out of memory, no status file) */
extern int ta_window_linear;            /* SchedulerParameters bf_window_linear= (0: not set), as cons_tres reads it */

/* A message of the plugin's own level (LogLevel=): at or below the level it goes to Slurm's info
 * (so that it shows with the usual SlurmctldDebug=info); above, one step below in Slurm's scale
 * (info -> verbose, verbose -> debug, debug -> debug2), so that a higher SlurmctldDebug shows it
 * too. Errors always go to error(). */
#define TA_LOG(lvl, fmt, ...)                                          \
	do {                                                           \
		if (topoaware_conf_log_level(ta_conf) >= (lvl))        \
			info(fmt, ##__VA_ARGS__);                      \
		else if ((lvl) <= TOPOAWARE_LOG_INFO)                  \
			verbose(fmt, ##__VA_ARGS__);                   \
		else if ((lvl) == TOPOAWARE_LOG_VERBOSE)               \
			debug(fmt, ##__VA_ARGS__);                     \
		else                                                   \
			debug2(fmt, ##__VA_ARGS__);                    \
	} while (0)

/* 1 if this (job, reason) was not logged in the last 5 minutes: a reason that changes is logged
 * at once, the same one again after 5 minutes. */
int ta_should_log(uint32_t job_id, int what);

/* What run-now decided for a job that cons_tres then placed, kept for job_begin (which follows in
 * the same select_nodes call, under the same job write lock). placement: "ideal" | "fallback" |
 * "cons_tres". ta_decided_take: 1 and the decision (then forgotten) if there is one for the job. */
void ta_decide(uint32_t job_id, const char *placement, const char *note);
int ta_decided_take(uint32_t job_id, char *placement, size_t placement_len, char *note, size_t note_len);

/* ---- loading the topology (ta_select_load.c) ------------------------------------------------- */

/* A new node table (select_p_node_init): its names to the loader with the topology's path; waits a
 * bounded time for the result. ta_lock held (released while waiting). */
void ta_load_request_locked(const char *path, uint32_t n);
/* 1 while a request is not applied yet. ta_lock held. */
int ta_load_pending_locked(void);
/* Stops the loader thread (fini). ta_lock NOT held. */
void ta_load_stop(void);

/* ---- the job (ta_select_job.c) --------------------------------------------------------------- */

typedef struct {
	topoaware_options_t opts;
	int mode;          /* enum topoaware_mode in effect */
	uint32_t max_wait; /* seconds */
	uint32_t nodes, gpus_per_node;
	char layout[160];  /* canonical layout text */
} ta_job_t;

/* The layout options of the job's spank_job_env and the defaults that apply (topoaware.conf).
 * 1: a layout job; 0: none or unusable (logged). */
int ta_job_options(job_record_t *job_ptr, ta_job_t *j);

/* ---- the status book and its writer (ta_select_book.c, ta_select_writer.c) -------------------- */

/* A waiting verdict into the status book (hint: from will-run). */
void ta_book_wait(job_record_t *job_ptr, const ta_job_t *j, const char *why, int hint);
/* The writer thread: started at the first node_init, woken to write soon, stopped at shutdown. */
void ta_writer_start_locked(void);
void ta_writer_wake_locked(void);
void ta_writer_end(void); /* ta_lock NOT held */
/* The status file's error for a new StatusFile path is new: logged again. */
void ta_writer_path_changed_locked(void);
/* Slurm's functions for the sweep of cancelled pending jobs (slurmctld only). */
void ta_writer_init(void);

#endif
