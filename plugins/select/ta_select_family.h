/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What differs between the Slurm release families in select_p_job_test and around cons_tres: the
 * family's file (ta_select_family_2205.c: 22.05; _2311.c: 23.11 .. 24.11; _2505.c: 25.05 .. 26.05,
 * chosen by configure, plugins/select/local.mk) offers what is below; the arguments of job_test
 * that only some families have are spelled here, by TA_SLURM_FAMILY. The calls a family has or
 * lacks are #if in ta_select_cons.h and ta_select_entry.c. A new family: a new file, a case here. */
#ifndef TA_SELECT_FAMILY_H
#define TA_SELECT_FAMILY_H

#include "ta_select_cons.h"
#ifndef TA_SELECT_PASSTHROUGH
#include "part_topo_c.h"
#endif

/* Plugin ids (saved by Slurm with every job: never change them) are the families' (they differ by
 * release; see select_cons_tres_topoaware(8), "Slurm releases"). */
#define TA_SELECT_PLUGIN_ID_TOPOAWARE 10901
#define TA_SELECT_PLUGIN_ID_PASSTHROUGH 10902
#define TA_SELECT_PLUGIN_ID_CONS_TRES 109
/* Each build's own id (22.05 .. 24.11, where every select plugin of PluginDir is loaded and
 * duplicate ids are fatal). */
#ifdef TA_SELECT_PASSTHROUGH
#define TA_SELECT_PLUGIN_ID_OWN TA_SELECT_PLUGIN_ID_PASSTHROUGH
#else
#define TA_SELECT_PLUGIN_ID_OWN TA_SELECT_PLUGIN_ID_TOPOAWARE
#endif

/* The arguments of job_test after preemptee_job_list that only some releases have (22.05
 * exc_core_bitmap; 23.11+ resv_exc_ptr; 24.11+ will_run_ptr), passed through unchanged:
 * TA_JOB_TEST_REL_PARAMS in select_p_job_test's signature, TA_JOB_TEST_REL_INIT their copy. */
typedef struct {
#if TA_SLURM_FAMILY == 2205
	bitstr_t *exc_core_bitmap;
#define TA_JOB_TEST_REL_PARAMS bitstr_t *exc_core_bitmap
#define TA_JOB_TEST_REL_INIT { exc_core_bitmap }
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
	resv_exc_t *resv_exc_ptr;
	will_run_data_t *will_run_ptr;
#define TA_JOB_TEST_REL_PARAMS resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr
#define TA_JOB_TEST_REL_INIT { resv_exc_ptr, will_run_ptr }
#else
	resv_exc_t *resv_exc_ptr;
#define TA_JOB_TEST_REL_PARAMS resv_exc_t *resv_exc_ptr
#define TA_JOB_TEST_REL_INIT { resv_exc_ptr }
#endif
} ta_job_test_rel_t;

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

/* The family's plugin id (ta_select_family_<family>.c says why it is what it is). */
extern const uint32_t plugin_id;

typedef struct {
	/* 1 if the release calls select_p_state_save (22.05 .. 24.11), so that a stopping
	 * slurmctld's last select call is known; 0 (25.05+): the status file writer watches for the
	 * stop itself. */
	int saves_state;
	/* 1 if cons_tres answers a will-run with the end of the last job of a batch of job ends
	 * (22.05 .. 24.11, plugins/common/ta_cons_start.h), so that a block's plan is given the same
	 * start; 0 (25.05+: the end of the last job whose nodes it needs, which a block's own answer
	 * already is). */
	int batched_will_run;
} ta_family_t;
extern const ta_family_t ta_family;

/* Backfill's time window of a will-run call (24.11+: will_run_ptr's start and end; 0 where unset
 * and before 24.11): cons_tres frees the running jobs that end before the start first, and none
 * that ends after the end. */
void ta_family_will_run_window(const ta_job_test_t *t, time_t *start, time_t *end);

/* cons_tres's job_test for this call, on `bitmap` instead of t->bitmap. */
int ta_family_job_test(const ta_cons_t *cons, const ta_job_test_t *t, bitstr_t *bitmap);

#ifndef TA_SELECT_PASSTHROUGH
/* The partitions and the Slurm topology each uses (25.05+: topology.yaml names several, a
 * partition picks one with Topology=), copied for the loader thread to decide off the locks
 * (capi/part_topo_c.h). NULL where a cluster has one topology (22.05 .. 24.11: placed as always)
 * or outside slurmctld. slurmctld's locks held (select_p_node_init): one pass over the partitions
 * and one copy of each topology they use. */
topoaware_parts_t *ta_family_part_topologies(void);
#endif

#endif
