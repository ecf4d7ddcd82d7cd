/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the release-neutral half of select/cons_tres_topoaware (select_cons_tres_topoaware.c, the
 * ta_select_*.c files) and the adapter of the Slurm release family it is built for
 * (ta_select_entry_2205.c, _2311.c, _2505.c: the select_p_* entry points and cons_tres's ops
 * table) share. Slurm types: include after Slurm's slurmctld.h. */
#ifndef TA_SELECT_H
#define TA_SELECT_H

#include "ta_slurm_release.h"

/* Plugin ids (saved by Slurm with every job: never change them) are the adapters' (they differ by
 * release; see select_cons_tres_topoaware(8), "Slurm releases"). */
#define TA_SELECT_PLUGIN_ID_TOPOAWARE 10901
#define TA_SELECT_PLUGIN_ID_PASSTHROUGH 10902
#define TA_SELECT_PLUGIN_ID_CONS_TRES 109

/* select_p_job_test counters of the wrapper, in microseconds (both builds), with a histogram of the
 * call times: counts[i] calls took at most le_us[i] (and more than le_us[i - 1]); counts[TA_BUCKETS]
 * took longer than the last bound. */
#define TA_BUCKETS 12
typedef struct {
	uint64_t calls, total_us, max_us;
	uint64_t layout_calls, layout_total_us, layout_max_us;
	const uint64_t *le_us; /* TA_BUCKETS bounds */
	uint64_t counts[TA_BUCKETS + 1], layout_counts[TA_BUCKETS + 1];
} ta_counters_t;
void ta_job_test_counters(ta_counters_t *c);
/* CLOCK_MONOTONIC in nanoseconds; one select_p_job_test call of dt ns into the counters (layout: a
 * call in which the placement ran); the counters line into the log (ta_select_counters.c). */
uint64_t ta_now_ns(void);
void ta_count(uint64_t dt, int layout);
/* One cons_tres call of dt ns made inside a layout call (topoaware build only). */
void ta_count_cons(uint64_t dt);
void ta_log_counters(void);

/* ---- the adapter (ta_select_entry_<family>.c) ------------------------------------------------- */

/* The arguments of job_test that only some releases have (22.05 exc_core_bitmap; 23.11+
 * resv_exc_ptr; 24.11+ will_run_ptr): the adapter's, passed through unchanged. */
typedef struct ta_job_test_rel ta_job_test_rel_t;

/* One select_p_job_test call as Slurm made it; the placement only ever changes the bitmap. */
typedef struct {
	job_record_t *job_ptr;
	bitstr_t *bitmap; /* the usable nodes; the chosen ones on success */
	uint32_t min_nodes, max_nodes, req_nodes;
	uint16_t mode;
	ta_list_t *preemptee_candidates;
	ta_list_t **preemptee_job_list;
	const ta_job_test_rel_t *rel;
} ta_job_test_t;

/* Backfill's time window of a will-run call (24.11+: will_run_ptr's start and end; 0 where unset
 * and before 24.11): cons_tres frees the running jobs that end before the start first, and none
 * that ends after the end. */
void ta_will_run_window(const ta_job_test_t *t, time_t *start, time_t *end);

/* cons_tres's job_test for this call, on `bitmap` instead of t->bitmap. */
int ta_cons_job_test(const ta_job_test_t *t, bitstr_t *bitmap);
/* Loads cons_tres's functions (init) and lets them go (fini). */
int ta_cons_open(void);
int ta_cons_close(void);

/* 1 if the release calls select_p_state_save (22.05 .. 24.11), so that a stopping slurmctld's last
 * select call is known; 0 (25.05+): the status file writer watches for the stop itself. */
extern const int ta_cons_saves_state;

/* 1 if cons_tres answers a will-run with the end of the last job of a batch of job ends (22.05 ..
 * 24.11, plugins/common/ta_cons_start.h), so that a block's plan is given the same start; 0 (25.05+:
 * the end of the last job whose nodes it needs, which a block's own answer already is). */
extern const int ta_cons_batched_will_run;

/* ---- the release-neutral side the adapters call (select_cons_tres_topoaware.c) ---------------- */

/* slurmctld saves its state (22.05 .. 24.11 select_p_state_save): the last call when it stops. */
void ta_entry_state_saved(void);
/* After cons_tres's node_init (start-up, reconfigure). job_list: slurmctld's jobs when the release
 * has no job_init (25.05+: node_init follows load_all_job_state), else NULL. */
void ta_entry_node_init(ta_list_t *job_list);
/* After cons_tres's job_init (22.05 .. 24.11): running layout jobs into the status book. */
void ta_entry_job_init(ta_list_t *job_list);
/* select_p_job_test: counted; layout jobs placed (topoaware build), the rest to cons_tres. */
int ta_entry_job_test(const ta_job_test_t *t);
/* After cons_tres's job_begin, job_expand, job_resized, job_fini (rc: theirs). */
void ta_entry_job_begin(job_record_t *job_ptr, int rc);
void ta_entry_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr, int rc);
void ta_entry_job_resized(job_record_t *job_ptr, int rc);
void ta_entry_job_fini(job_record_t *job_ptr);
/* slurmctld's global job list (looked up at run time; NULL outside slurmctld). */
ta_list_t *ta_ctld_job_list(void);
/* slurmctld stops: the counters line, once (the status file writer on releases without a state save). */
void ta_entry_stopping(void);
/* 1 once slurmctld has begun to stop (slurmctld_config.shutdown_time), else 0. */
int ta_ctld_stopping(void);

#ifndef TA_SELECT_PASSTHROUGH

/* In slurmctld only. */
void ta_select_init(void);
void ta_select_fini(void);
/* slurmctld stops: the last status file write; the writer thread ends. */
void ta_select_shutdown(void);
/* After cons_tres's node_init: reread topoaware.conf and the topology, map the new node table. */
void ta_select_node_init(void);
/* select_p_job_test: placement for layout jobs, cons_tres for everything else. *layout = 1 if
 * the placement ran (a layout-job call, counted apart). */
int ta_select_job_test(const ta_job_test_t *t, int *layout);
/* After cons_tres's job_begin succeeded: record the topology hash in the job's spank_job_env,
 * the placement in the status file and (LogLevel=verbose) in the log. */
void ta_select_job_begin(job_record_t *job_ptr);
/* Running layout jobs the status book does not know into it (start-up, reconfigure). */
void ta_select_job_init(ta_list_t *job_list);
/* The job's allocation ended (completion, cancel, requeue): out of the status book. */
void ta_select_job_fini(job_record_t *job_ptr);
/* ended (may be NULL) gave its nodes away and ends; changed has another node set now. */
void ta_select_job_resized(job_record_t *ended, job_record_t *changed);
/* A job began, ended or changed its nodes (any job, layout or not): the nodes' end times that
 * will-run reads are read again (ta_select_ends.c). */
void ta_select_jobs_changed(void);

#endif

#endif
