/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The select interface of Slurm 22.05 for select/cons_tres_topoaware (select_cons_tres_topoaware.c
 * holds what is release-neutral): the 36 select_p_* calls of node_select_syms
 * (22.05.8 src/common/select.c:58-96, slurm_select_ops_t in src/common/select.h:67-149), each forwarded to
 * cons_tres and, for some, to the release-neutral hooks of ta_select.h. What is 22.05's here:
 *   - job_test takes exc_core_bitmap (23.11 made it resv_exc_ptr);
 *   - job_signal, jobinfo_sprint, jobinfo_xstrdup, update_node_config and resv_test exist (gone in
 *     23.11);
 *   - select_p_state_save is called once more when slurmctld stops (controller.c:2335), after
 *     shutdown_time is set: the plugin's shutdown;
 *   - select_p_job_init follows node_init (read_config.c:1685-1687): the status book's rebuild;
 *   - slurmctld and every command load every select plugin of PluginDir (select_g_init(0),
 *     controller.c:508) and duplicate plugin ids are fatal (select.c:239), so the ids are our own. */
#include "config.h" /* Slurm's */

#include <stdbool.h>
#include <stdint.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/plugin.h"
#include "src/slurmctld/slurmctld.h"

#include "ta_select.h"

/* Saved with every job's state (job_mgr.c:1517, select_g_select_jobinfo_pack writes the id of the
 * plugin that made the job's select data, select.c) and looked up among the loaded select plugins
 * when the state is loaded back (select.c select_g_select_jobinfo_unpack: a job whose id no plugin
 * of PluginDir has is lost): never change them. cons_tres itself is 109; duplicate ids are fatal,
 * so ours differ. */
#ifdef TA_SELECT_PASSTHROUGH
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_PASSTHROUGH;
#else
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_TOPOAWARE;
#endif
const int ta_cons_saves_state = 1;
const int ta_cons_batched_will_run = 1;

struct ta_job_test_rel {
	bitstr_t *exc_core_bitmap;
};

void ta_will_run_window(const ta_job_test_t *t, time_t *start, time_t *end)
{
	*start = *end = 0;
}

/* Our own table of cons_tres's functions: the names (node_select_syms of src/common/select.c) and,
 * in the same order, the pointers plugin_context_create fills. */
static const char *ta_syms[] = {
	"plugin_id",
	"select_p_state_save",
	"select_p_state_restore",
	"select_p_job_init",
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
	"select_p_job_signal",
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
	"select_p_step_pick_nodes",
	"select_p_step_start",
	"select_p_step_finish",
	"select_p_select_nodeinfo_pack",
	"select_p_select_nodeinfo_unpack",
	"select_p_select_nodeinfo_alloc",
	"select_p_select_nodeinfo_free",
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
	"select_p_select_nodeinfo_get",
	"select_p_select_jobinfo_alloc",
	"select_p_select_jobinfo_free",
	"select_p_select_jobinfo_set",
	"select_p_select_jobinfo_get",
	"select_p_select_jobinfo_copy",
	"select_p_select_jobinfo_pack",
	"select_p_select_jobinfo_unpack",
	"select_p_select_jobinfo_sprint",
	"select_p_select_jobinfo_xstrdup",
	"select_p_get_info_from_plugin",
	"select_p_update_node_config",
	"select_p_reconfigure",
	"select_p_resv_test",
};
_Static_assert(sizeof(ta_syms) == sizeof(slurm_select_ops_t),
	       "ta_syms differs from slurm_select_ops_t in src/common/select.h");

static slurm_select_ops_t cons;           /* cons_tres's functions */
static plugin_context_t *cons_ctx = NULL; /* its context (one per process) */

int ta_cons_open(void)
{
	cons_ctx = plugin_context_create("select", "select/cons_tres", (void **)&cons, ta_syms, sizeof(ta_syms));
	return cons_ctx ? SLURM_SUCCESS : SLURM_ERROR;
}

int ta_cons_close(void)
{
	int rc = SLURM_SUCCESS;

	if (cons_ctx)
		rc = plugin_context_destroy(cons_ctx);
	cons_ctx = NULL;
	return rc;
}

int ta_cons_job_test(const ta_job_test_t *t, bitstr_t *bitmap)
{
	return (*cons.job_test)(t->job_ptr, bitmap, t->min_nodes, t->max_nodes, t->req_nodes, t->mode,
				t->preemptee_candidates, t->preemptee_job_list, t->rel->exc_core_bitmap);
}

/* ---- the entry points: cons_tres's, with the release-neutral hooks around some -------------- */

extern int select_p_state_save(char *dir_name)
{
	int rc = (*cons.state_save)(dir_name);

	ta_entry_state_saved();
	return rc;
}

extern int select_p_state_restore(char *dir_name)
{
	return (*cons.state_restore)(dir_name);
}

extern int select_p_job_init(List job_list)
{
	int rc = (*cons.job_init)(job_list);

	ta_entry_job_init(job_list);
	return rc;
}

/* Called at start-up and after every scontrol reconfigure, once the node table is rebuilt: the
 * place to (re)load the topology and map it onto the new node table. */
extern int select_p_node_init(void)
{
	int rc = (*cons.node_init)();

	ta_entry_node_init(NULL); /* job_init follows */
	return rc;
}

extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode, List preemptee_candidates, List *preemptee_job_list,
			     bitstr_t *exc_core_bitmap)
{
	ta_job_test_rel_t rel = { exc_core_bitmap };
	ta_job_test_t t = { job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
			    preemptee_job_list, &rel };

	return ta_entry_job_test(&t);
}

extern int select_p_job_begin(job_record_t *job_ptr)
{
	int rc = (*cons.job_begin)(job_ptr);

	ta_entry_job_begin(job_ptr, rc);
	return rc;
}

extern int select_p_job_ready(job_record_t *job_ptr)
{
	return (*cons.job_ready)(job_ptr);
}

extern int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr)
{
	int rc = (*cons.job_expand)(from_job_ptr, to_job_ptr);

	ta_entry_job_expand(from_job_ptr, to_job_ptr, rc);
	return rc;
}

extern int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr)
{
	int rc = (*cons.job_resized)(job_ptr, node_ptr);

	ta_entry_job_resized(job_ptr, rc);
	return rc;
}

extern int select_p_job_signal(job_record_t *job_ptr, int signal)
{
	return (*cons.job_signal)(job_ptr, signal);
}

extern int select_p_job_fini(job_record_t *job_ptr)
{
	int rc = (*cons.job_fini)(job_ptr);

	ta_entry_job_fini(job_ptr);
	return rc;
}

extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp)
{
	return (*cons.job_suspend)(job_ptr, indf_susp);
}

extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp)
{
	return (*cons.job_resume)(job_ptr, indf_susp);
}

extern bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr, select_jobinfo_t *step_jobinfo,
					  uint32_t node_count, bitstr_t **avail_nodes)
{
	return (*cons.step_pick_nodes)(job_ptr, step_jobinfo, node_count, avail_nodes);
}

extern int select_p_step_start(step_record_t *step_ptr)
{
	return (*cons.step_start)(step_ptr);
}

extern int select_p_step_finish(step_record_t *step_ptr, bool killing_step)
{
	return (*cons.step_finish)(step_ptr, killing_step);
}

extern int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version)
{
	return (*cons.nodeinfo_pack)(nodeinfo, buffer, protocol_version);
}

extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo, buf_t *buffer, uint16_t protocol_version)
{
	return (*cons.nodeinfo_unpack)(nodeinfo, buffer, protocol_version);
}

extern select_nodeinfo_t *select_p_select_nodeinfo_alloc(void)
{
	return (*cons.nodeinfo_alloc)();
}

extern int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo)
{
	return (*cons.nodeinfo_free)(nodeinfo);
}

extern int select_p_select_nodeinfo_set_all(void)
{
	return (*cons.nodeinfo_set_all)();
}

extern int select_p_select_nodeinfo_set(job_record_t *job_ptr)
{
	return (*cons.nodeinfo_set)(job_ptr);
}

extern int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo,
					enum node_states state, void *data)
{
	return (*cons.nodeinfo_get)(nodeinfo, dinfo, state, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_alloc(void)
{
	return (*cons.jobinfo_alloc)();
}

extern int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo)
{
	return (*cons.jobinfo_free)(jobinfo);
}

extern int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data)
{
	return (*cons.jobinfo_set)(jobinfo, data_type, data);
}

extern int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data)
{
	return (*cons.jobinfo_get)(jobinfo, data_type, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_copy(select_jobinfo_t *jobinfo)
{
	return (*cons.jobinfo_copy)(jobinfo);
}

extern int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo, buf_t *buffer, uint16_t protocol_version)
{
	return (*cons.jobinfo_pack)(jobinfo, buffer, protocol_version);
}

extern int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo_pptr, buf_t *buffer, uint16_t protocol_version)
{
	return (*cons.jobinfo_unpack)(jobinfo_pptr, buffer, protocol_version);
}

extern char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo, char *buf, size_t size, int mode)
{
	return (*cons.jobinfo_sprint)(jobinfo, buf, size, mode);
}

extern char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo, int mode)
{
	return (*cons.jobinfo_xstrdup)(jobinfo, mode);
}

extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data)
{
	return (*cons.get_info_from_plugin)(dinfo, job_ptr, data);
}

extern int select_p_update_node_config(int index)
{
	return (*cons.update_node_config)(index);
}

extern int select_p_reconfigure(void)
{
	return (*cons.reconfigure)();
}

extern bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt, bitstr_t *avail_bitmap,
				    bitstr_t **core_bitmap)
{
	return (*cons.resv_test)(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}
