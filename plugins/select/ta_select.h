/* The placement half of select/cons_tres_topoaware (ta_select_place.c), called by the
 * forwarding wrapper (select_cons_tres_topoaware.c). Slurm types: include after Slurm's
 * slurmctld.h. */
#ifndef TA_SELECT_H
#define TA_SELECT_H

/* Plugin ids, saved by Slurm with every job: never change them (select_cons_tres_topoaware(8)). */
#define TA_SELECT_PLUGIN_ID_TOPOAWARE 10901
#define TA_SELECT_PLUGIN_ID_PASSTHROUGH 10902

/* select_p_job_test counters of the wrapper, in microseconds (both builds). */
typedef struct {
	uint64_t calls, total_us, max_us;
	uint64_t layout_calls, layout_total_us, layout_max_us;
} ta_counters_t;
void ta_job_test_counters(ta_counters_t *c);
/* CLOCK_MONOTONIC in nanoseconds; one select_p_job_test call of dt ns into the counters (layout: a
 * call in which the placement ran); the counters line into the log (ta_select_counters.c). */
uint64_t ta_now_ns(void);
void ta_count(uint64_t dt, int layout);
void ta_log_counters(void);

#ifndef TA_SELECT_PASSTHROUGH

/* cons_tres's select_p_job_test. */
typedef int (*ta_job_test_fn)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			      uint32_t req_nodes, uint16_t mode, List preemptee_candidates,
			      List *preemptee_job_list, bitstr_t *exc_core_bitmap);

/* In slurmctld only. */
void ta_select_init(void);
void ta_select_fini(void);
/* slurmctld stops (its last state save): the last status file write; the writer thread ends. */
void ta_select_shutdown(void);
/* After cons_tres's node_init: reread topoaware.conf and the topology, map the new node table. */
void ta_select_node_init(void);
/* select_p_job_test: placement for layout jobs, cons_tres for everything else. *layout = 1 if
 * the placement ran (a layout-job call, counted apart). */
int ta_select_job_test(ta_job_test_fn cons_job_test, job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
		       uint32_t max_nodes, uint32_t req_nodes, uint16_t mode, List preemptee_candidates,
		       List *preemptee_job_list, bitstr_t *exc_core_bitmap, int *layout);
/* After cons_tres's job_begin succeeded: record the topology hash in the job's spank_job_env,
 * the placement in the status file and (LogLevel=verbose) in the log. */
void ta_select_job_begin(job_record_t *job_ptr);
/* After cons_tres's job_init (start-up, reconfigure): running layout jobs into the status book. */
void ta_select_job_init(List job_list);
/* The job's allocation ended (completion, cancel, requeue): out of the status book. */
void ta_select_job_fini(job_record_t *job_ptr);
/* ended (may be NULL) gave its nodes away and ends; changed has another node set now. */
void ta_select_job_resized(job_record_t *ended, job_record_t *changed);

#endif

#endif
