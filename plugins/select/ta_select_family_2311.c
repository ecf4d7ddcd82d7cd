/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm 23.11, 24.05 and 24.11's side of select/cons_tres_topoaware (ta_select_family.h). The
 * select interface has 31 select_p_* calls (node_select_syms, src/interfaces/select.c), forwarded
 * by ta_select_entry.c. What is this family's:
 *   - 23.11 dropped job_signal, jobinfo_sprint, jobinfo_xstrdup, update_node_config and resv_test
 *     of 22.05, and job_test takes resv_exc_ptr instead of exc_core_bitmap
 *     (23.11.11 src/interfaces/select.h:52-122, node_select_syms in select.c:57-90);
 *   - 24.05 took slurm_select_ops_t out of the headers (24.05.8 src/interfaces/select.c:51-121): the
 *     table (ta_select_cons.h) is ours, in node_select_syms's order (select.c:123);
 *   - 24.11 adds will_run_ptr to job_test (24.11.5 src/interfaces/select.c:57-67), which cons_tres
 *     reads in will-run mode (plugins/select/cons_tres/job_test.c:2407, 2479): passed through;
 *   - select_p_state_save is still called when slurmctld stops (24.11.5 controller.c:2727), and
 *     select_p_job_init follows node_init (read_config.c:1639-1641);
 *   - slurmctld loads every select plugin of PluginDir and duplicate plugin ids are fatal
 *     (23.11.11 select.c:225, 24.11.5 :277); 24.05 and 24.11 also load SelectType in slurmd
 *     (24.11.5 slurmd.c:463) and every select plugin in slurmstepd (slurmstepd.c:869);
 *   - cons_tres is loaded with plugin_load_and_link (ta_select_cons.c says why). */
#include "ta_select_family.h"

/* Saved with every job's state (the id of the plugin that made its select data: 23.11.11
 * job_mgr.c:1588, 24.11.5 src/common/job_record.c:2113) and looked up among the loaded select
 * plugins when the state is loaded back (a job whose id no plugin of PluginDir has is lost): never
 * change them. cons_tres itself is 109; slurmctld loads every select plugin of PluginDir and
 * refuses duplicate ids ("Duplicate plugin_id"), so ours differ. */
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_OWN;
const ta_family_t ta_family = { .saves_state = 1, .batched_will_run = 1 };

/* will_run_ptr: 24.11+. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
#define TA_WILL_RUN_PARAM , will_run_data_t *will_run_ptr
#define TA_WILL_RUN_ARG , t->rel->will_run_ptr
#else
#define TA_WILL_RUN_PARAM
#define TA_WILL_RUN_ARG
#endif

typedef int (*ta_cons_job_test_fn)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
				   uint32_t req_nodes, uint16_t mode, ta_list_t *preemptee_candidates,
				   ta_list_t **preemptee_job_list, resv_exc_t *resv_exc_ptr TA_WILL_RUN_PARAM);

void ta_family_will_run_window(const ta_job_test_t *t, time_t *start, time_t *end)
{
	*start = *end = 0;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
	if (t->rel->will_run_ptr) {
		*start = t->rel->will_run_ptr->start;
		*end = t->rel->will_run_ptr->end;
	}
#else
	(void)t;
#endif
}

int ta_family_job_test(const ta_cons_t *cons, const ta_job_test_t *t, bitstr_t *bitmap)
{
	return ((ta_cons_job_test_fn)cons->ops.job_test)(t->job_ptr, bitmap, t->min_nodes, t->max_nodes,
							 t->req_nodes, t->mode, t->preemptee_candidates,
							 t->preemptee_job_list, t->rel->resv_exc_ptr TA_WILL_RUN_ARG);
}

#ifndef TA_SELECT_PASSTHROUGH
/* One topology per cluster before 25.05: topology.json decides for every partition. */
topoaware_parts_t *ta_family_part_topologies(void)
{
	return NULL;
}
#endif
