/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one context of select/cons_tres_topoaware (ta_select_ctx.c): everything the plugin keeps
 * between Slurm's calls, passed explicitly to every function that uses it. Slurm's select API hands
 * a plugin no context of its own, so the entry points (ta_select_entry.c) hold the single instance
 * and hand it down; no other file keeps mutable state.
 *
 * Everything under `lock` (the topoaware build) is taken after slurmctld's locks (every select_p_*
 * call holds those already), never before; nothing proportional to the topology runs under it
 * (docs/design.md, "What runs under which lock"). */
#ifndef TA_SELECT_CTX_H
#define TA_SELECT_CTX_H

#include "ta_select_slurm.h"

#include "ta_select_cons.h"
#include "ta_select_counters.h"

#ifndef TA_SELECT_PASSTHROUGH
#include "ta_log_gate.h"

#include "layout_c.h"
#include "part_topo_c.h"
#include "status_c.h"
#include "topoaware_c.h"
#endif

#ifdef TA_SELECT_PASSTHROUGH
#define TA "select/cons_tres_passthrough"
#else
#define TA "select/cons_tres_topoaware"
#endif
#define TA_PATH_MAX 4096

#ifndef TA_SELECT_PASSTHROUGH

/* The log's rate limit and run-now's decision per job (ta_select_memo.c). */
#define TA_MEMO_SLOTS 256
typedef struct {
	struct {
		uint32_t job_id;
		char placement[16];
		char note[256];
	} decided[TA_MEMO_SLOTS];
	ta_log_gate_t log;
	char log_more[96]; /* the end of a line that reports lines held back */
} ta_memo_t;

/* What node_init took out of use, left for the loader to free with no lock held. */
typedef struct {
	topoaware_placer_t *placer;
	bitstr_t *known;
	uint16_t *free_now, *free_all;
	char **names;
	uint32_t n;
	topoaware_parts_t *parts;
} ta_retired_t;

/* The loader thread and its requests (ta_select_loader.c). */
typedef struct {
	pthread_t thread;
	pthread_cond_t cond;        /* a request, or stop */
	pthread_cond_t loaded_cond; /* a request was applied */
	int running, stop;
	uint64_t gen_requested, gen_taken, gen_done;
	/* The latest request. names NULL with same: the node table is the one the current placer was
	 * built for (ctx->map_names, which the loader copies off the locks). */
	char path[TA_PATH_MAX];
	char **names;
	uint32_t n;
	int same;
	topoaware_parts_t *parts; /* the partitions' Slurm topologies (25.05+; NULL: none) */
	ta_retired_t retired;
} ta_loader_t;

/* The identity of a topology file: a file with the same one is not parsed again. */
typedef struct {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} ta_file_id_t;

/* The running jobs' end times per node-table index, for will-run (ta_select_ends.c): read again
 * only when a job began, ended or changed its nodes (ctx->jobs_gen) or the second changed. */
typedef struct {
	uint32_t n;
	int64_t *first_end, *last_end;
	int64_t *all_free_at, *earliest_free_at; /* per call, for the core */
	uint64_t gen;
	time_t at;
	int valid;
} ta_ends_t;

/* The status file writer thread (ta_select_writer.c). */
typedef struct {
	pthread_t thread;
	pthread_cond_t cond;
	int running, stop;
	int shut; /* slurmctld is stopping: the last write was made or is being made; no new thread */
	time_t last_sweep;
	char err[TOPOAWARE_ERR_LEN]; /* last write error logged, "" = none */
	/* The writer's own copy of the status book, brought up to date with the book's changes and
	 * rendered outside ctx->lock; used only by the thread that writes (ta_status_flush_locked). */
	topoaware_status_t *copy;
	/* slurmctld's own functions, looked up at run time in slurmctld (they live in its binary;
	 * every Slurm command loads this plugin too). NULL: no sweep of cancelled pending jobs. */
	void (*lock_ctld)(slurmctld_lock_t);
	void (*unlock_ctld)(slurmctld_lock_t);
	job_record_t *(*find_job)(uint32_t);
} ta_writer_t;

#endif /* !TA_SELECT_PASSTHROUGH */

typedef struct ta_ctx {
	ta_cons_t cons;         /* cons_tres's functions (set at init, read-only after) */
	ta_counters_t counters; /* job_test counters, both builds (atomic) */
	/* slurmctld's own slurmctld_config (for shutdown_time) and job_list, looked up at run time:
	 * the symbols live in the slurmctld binary, and up to 24.11 every Slurm command loads this
	 * plugin too (a direct reference would not resolve there). NULL outside slurmctld. */
	slurmctld_config_t *ctld_config;
	ta_list_t **ctld_jobs;
#ifndef TA_SELECT_PASSTHROUGH
	pthread_mutex_t lock; /* the plugin lock: everything below */
	/* settings (ta_select_settings.c) */
	topoaware_conf_t *conf;              /* last good topoaware.conf (NULL: the core's defaults) */
	int settings_applied;                /* applied once (from a file or the defaults) */
	char status_path[TA_PATH_MAX];       /* StatusFile; "" = none */
	char last_good_path[TA_PATH_MAX];    /* <StateSaveLocation>/TA_LAST_GOOD_NAME; "" = none */
	int window_linear;                   /* bf_window_linear= of SchedulerParameters (0: not set) */
	uint32_t gpu_id;                     /* gres plugin id of "gpu" */
	/* the topology and its mapping onto the node table (ta_select_load.c: only the loader
	 * thread replaces them) */
	topoaware_topo_t *topo;              /* last good topology (NULL: none, plain cons_tres) */
	char topo_path[TA_PATH_MAX];         /* the file topo came from */
	ta_file_id_t topo_id;                /* its identity */
	topoaware_placer_t *placer;          /* topo mapped onto the current node table */
	uint32_t nodes;                      /* node table size the placer was built for */
	uint16_t *free_now, *free_all;       /* scratch: free GPUs per node-table index, now and all */
	bitstr_t *known;                     /* nodes in the topology; NULL: all are (or no placer) */
	char **map_names;                    /* the names the current placer was built for */
	uint32_t map_n;
	topoaware_parts_t *parts;            /* per partition: placed or plain (25.05+; NULL: all placed) */
	/* The running layout jobs' ring edges per cable of topo, counted by each new job's rank order
	 * (ta_select_book.c); NULL: not built yet for this topology (built at the next job_begin). */
	topoaware_ring_book_t *rings;
	ta_loader_t loader;
	topoaware_status_t *status;          /* the status book (NULL: out of memory, no status file) */
	ta_writer_t writer;
	ta_ends_t ends;
	uint64_t jobs_gen; /* a job began, ended or changed its nodes: atomic, without the lock */
	ta_memo_t memo;
#endif
} ta_ctx_t;

/* The context before init: nothing loaded, the lock and conditions ready. */
#ifdef TA_SELECT_PASSTHROUGH
#define TA_CTX_INITIALIZER { .ctld_config = NULL }
#else
#define TA_CTX_INITIALIZER                                                                            \
	{                                                                                             \
		.lock = PTHREAD_MUTEX_INITIALIZER,                                                    \
		.loader = { .cond = PTHREAD_COND_INITIALIZER, .loaded_cond = PTHREAD_COND_INITIALIZER }, \
		.writer = { .cond = PTHREAD_COND_INITIALIZER },                                       \
	}
#endif

/* slurmctld's symbols into the context (init, in slurmctld only). */
void ta_ctx_find_ctld(ta_ctx_t *ctx);
/* slurmctld's global job list (NULL outside slurmctld). */
ta_list_t *ta_ctx_job_list(const ta_ctx_t *ctx);
/* 1 once slurmctld has begun to stop (slurmctld_config.shutdown_time), else 0. */
int ta_ctx_stopping(const ta_ctx_t *ctx);

#ifndef TA_SELECT_PASSTHROUGH

/* The topoaware state of the context: created (the status book) and freed (everything it holds,
 * after the threads stopped). In slurmctld only. */
void ta_ctx_open(ta_ctx_t *ctx);
void ta_ctx_free(ta_ctx_t *ctx);

/* A message of the plugin's own level (LogLevel=): at or below the level it goes to Slurm's info
 * (so that it shows with the usual SlurmctldDebug=info); above, one step below in Slurm's scale
 * (info -> verbose, verbose -> debug, debug -> debug2), so that a higher SlurmctldDebug shows it
 * too. Errors always go to error(). */
#define TA_LOG(ctx, lvl, fmt, ...)                                     \
	do {                                                           \
		if (topoaware_conf_log_level((ctx)->conf) >= (lvl))    \
			info(fmt, ##__VA_ARGS__);                      \
		else if ((lvl) <= TOPOAWARE_LOG_INFO)                  \
			verbose(fmt, ##__VA_ARGS__);                   \
		else if ((lvl) == TOPOAWARE_LOG_VERBOSE)               \
			debug(fmt, ##__VA_ARGS__);                     \
		else                                                   \
			debug2(fmt, ##__VA_ARGS__);                    \
	} while (0)

#endif

#endif
