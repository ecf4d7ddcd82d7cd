/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm 22.05's side of select/cons_tres_topoaware (ta_select_family.h). The select interface has
 * 36 select_p_* calls (22.05.8 src/common/select.c:58-96, slurm_select_ops_t in
 * src/common/select.h:67-149), forwarded by ta_select_entry.c. What is 22.05's:
 *   - job_test takes exc_core_bitmap (23.11 made it resv_exc_ptr);
 *   - job_signal, jobinfo_sprint, jobinfo_xstrdup, update_node_config and resv_test exist (gone in
 *     23.11);
 *   - select_p_state_save is called once more when slurmctld stops (controller.c:2335), after
 *     shutdown_time is set: the plugin's shutdown;
 *   - select_p_job_init follows node_init (read_config.c:1685-1687): the status book's rebuild;
 *   - slurmctld and every command load every select plugin of PluginDir (select_g_init(0),
 *     controller.c:508) and duplicate plugin ids are fatal (select.c:239), so the ids are our own. */
#include "ta_select_family.h"

/* Saved with every job's state (job_mgr.c:1517, select_g_select_jobinfo_pack writes the id of the
 * plugin that made the job's select data, select.c) and looked up among the loaded select plugins
 * when the state is loaded back (select.c select_g_select_jobinfo_unpack: a job whose id no plugin
 * of PluginDir has is lost): never change them. cons_tres itself is 109; duplicate ids are fatal,
 * so ours differ. */
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_OWN;
const ta_family_t ta_family = { .saves_state = 1, .batched_will_run = 1 };

typedef int (*ta_cons_job_test_fn)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
				   uint32_t req_nodes, uint16_t mode, ta_list_t *preemptee_candidates,
				   ta_list_t **preemptee_job_list, bitstr_t *exc_core_bitmap);

void ta_family_will_run_window(const ta_job_test_t *t, time_t *start, time_t *end)
{
	(void)t;
	*start = *end = 0;
}

int ta_family_job_test(const ta_cons_t *cons, const ta_job_test_t *t, bitstr_t *bitmap)
{
	return ((ta_cons_job_test_fn)cons->ops.job_test)(t->job_ptr, bitmap, t->min_nodes, t->max_nodes,
							 t->req_nodes, t->mode, t->preemptee_candidates,
							 t->preemptee_job_list, t->rel->exc_core_bitmap);
}

#ifndef TA_SELECT_PASSTHROUGH
/* One topology per cluster before 25.05: topology.json decides for every partition. */
topoaware_parts_t *ta_family_part_topologies(void)
{
	return NULL;
}
#endif
