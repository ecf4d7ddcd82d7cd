/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The select interface of Slurm 23.11, 24.05 and 24.11 for select/cons_tres_topoaware
 * (select_cons_tres_topoaware.c holds what is release-neutral): the 31 select_p_* calls of
 * node_select_syms (src/interfaces/select.c), each forwarded to cons_tres and, for some, to the
 * release-neutral hooks of ta_select.h. What is this family's:
 *   - 23.11 dropped job_signal, jobinfo_sprint, jobinfo_xstrdup, update_node_config and resv_test
 *     of 22.05, and job_test takes resv_exc_ptr instead of exc_core_bitmap
 *     (23.11.11 src/interfaces/select.h:52-122, node_select_syms in select.c:57-90);
 *   - 24.05 took slurm_select_ops_t out of the headers (24.05.8 src/interfaces/select.c:51-121): the
 *     table below is ours, in node_select_syms's order (select.c:123);
 *   - 24.11 adds will_run_ptr to job_test (24.11.5 src/interfaces/select.c:57-67), which cons_tres
 *     reads in will-run mode (plugins/select/cons_tres/job_test.c:2407, 2479): passed through;
 *   - select_p_state_save is still called when slurmctld stops (24.11.5 controller.c:2727), and
 *     select_p_job_init follows node_init (read_config.c:1639-1641);
 *   - slurmctld loads every select plugin of PluginDir and duplicate plugin ids are fatal
 *     (23.11.11 select.c:225, 24.11.5 :277); 24.05 and 24.11 also load SelectType in slurmd
 *     (24.11.5 slurmd.c:463) and every select plugin in slurmstepd (slurmstepd.c:869). */
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

/* Saved with every job's state (the id of the plugin that made its select data: 23.11.11
 * job_mgr.c:1588, 24.11.5 src/common/job_record.c:2113) and looked up among the loaded select
 * plugins when the state is loaded back (a job whose id no plugin of PluginDir has is lost): never
 * change them. cons_tres itself is 109; slurmctld loads every select plugin of PluginDir and
 * refuses duplicate ids ("Duplicate plugin_id"), so ours differ. */
#ifdef TA_SELECT_PASSTHROUGH
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_PASSTHROUGH;
#else
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_TOPOAWARE;
#endif
const int ta_cons_saves_state = 1;
const int ta_cons_batched_will_run = 1;

/* will_run_ptr: 24.11+. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
#define TA_WILL_RUN_PARAM , will_run_data_t *will_run_ptr
#define TA_WILL_RUN_INIT , will_run_ptr
#define TA_WILL_RUN_ARG , t->rel->will_run_ptr
#else
#define TA_WILL_RUN_PARAM
#define TA_WILL_RUN_INIT
#define TA_WILL_RUN_ARG
#endif

struct ta_job_test_rel {
	resv_exc_t *resv_exc_ptr;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
	will_run_data_t *will_run_ptr;
#endif
};

void ta_will_run_window(const ta_job_test_t *t, time_t *start, time_t *end)
{
	*start = *end = 0;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
	if (t->rel->will_run_ptr) {
		*start = t->rel->will_run_ptr->start;
		*end = t->rel->will_run_ptr->end;
	}
#endif
}

/* cons_tres's functions: the names of node_select_syms and, in the same order, the pointers
 * plugin_load_and_link fills. */
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
	"select_p_get_info_from_plugin",
	"select_p_reconfigure",
};

typedef struct {
	uint32_t *plugin_id;
	int (*state_save)(char *dir_name);
	int (*state_restore)(char *dir_name);
	int (*job_init)(ta_list_t *job_list);
	int (*node_init)(void);
	int (*job_test)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			uint32_t req_nodes, uint16_t mode, ta_list_t *preemptee_candidates,
			ta_list_t **preemptee_job_list, resv_exc_t *resv_exc_ptr TA_WILL_RUN_PARAM);
	int (*job_begin)(job_record_t *job_ptr);
	int (*job_ready)(job_record_t *job_ptr);
	int (*job_expand)(job_record_t *from_job_ptr, job_record_t *to_job_ptr);
	int (*job_resized)(job_record_t *job_ptr, node_record_t *node_ptr);
	int (*job_fini)(job_record_t *job_ptr);
	int (*job_suspend)(job_record_t *job_ptr, bool indf_susp);
	int (*job_resume)(job_record_t *job_ptr, bool indf_susp);
	bitstr_t *(*step_pick_nodes)(job_record_t *job_ptr, select_jobinfo_t *step_jobinfo, uint32_t node_count,
				     bitstr_t **avail_nodes);
	int (*step_start)(step_record_t *step_ptr);
	int (*step_finish)(step_record_t *step_ptr, bool killing_step);
	int (*nodeinfo_pack)(select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version);
	int (*nodeinfo_unpack)(select_nodeinfo_t **nodeinfo, buf_t *buffer, uint16_t protocol_version);
	select_nodeinfo_t *(*nodeinfo_alloc)(void);
	int (*nodeinfo_free)(select_nodeinfo_t *nodeinfo);
	int (*nodeinfo_set_all)(void);
	int (*nodeinfo_set)(job_record_t *job_ptr);
	int (*nodeinfo_get)(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo, enum node_states state,
			    void *data);
	select_jobinfo_t *(*jobinfo_alloc)(void);
	int (*jobinfo_free)(select_jobinfo_t *jobinfo);
	int (*jobinfo_set)(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data);
	int (*jobinfo_get)(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data);
	select_jobinfo_t *(*jobinfo_copy)(select_jobinfo_t *jobinfo);
	int (*jobinfo_pack)(select_jobinfo_t *jobinfo, buf_t *buffer, uint16_t protocol_version);
	int (*jobinfo_unpack)(select_jobinfo_t **jobinfo_pptr, buf_t *buffer, uint16_t protocol_version);
	int (*get_info_from_plugin)(enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data);
	int (*reconfigure)(void);
} ta_cons_ops_t;
_Static_assert(sizeof(ta_syms) == sizeof(ta_cons_ops_t), "ta_syms and ta_cons_ops_t differ");

static ta_cons_ops_t cons;                                /* cons_tres's functions */
static plugin_handle_t cons_plug = PLUGIN_INVALID_HANDLE; /* its handle (one per process) */

/* plugin_load_and_link, not plugin_context_create: from 23.11 the public libslurm.so exports
 * plugin_context_create under no name (22.05's did), and 24.x clients linked to it (slurm_load_node:
 * src/api/node_info.c calls select_g_init) load this plugin, whose init() would then end the client
 * with "symbol lookup error". plugin_load_and_link is what plugin_context_create tries first (the same
 * PluginDir search), and slurm_xlator.h maps it to slurm_plugin_load_and_link, which both libslurm.so
 * and libslurmfull.so export. */
int ta_cons_open(void)
{
	cons_plug = plugin_load_and_link("select/cons_tres", (int)(sizeof(ta_syms) / sizeof(ta_syms[0])), ta_syms,
					 (void **)&cons);
	return cons_plug != PLUGIN_INVALID_HANDLE ? SLURM_SUCCESS : SLURM_ERROR;
}

int ta_cons_close(void)
{
	if (cons_plug != PLUGIN_INVALID_HANDLE)
		plugin_unload(cons_plug);
	cons_plug = PLUGIN_INVALID_HANDLE;
	return SLURM_SUCCESS;
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

extern int select_p_job_init(ta_list_t *job_list)
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
			     uint32_t req_nodes, uint16_t mode, ta_list_t *preemptee_candidates,
			     ta_list_t **preemptee_job_list, resv_exc_t *resv_exc_ptr TA_WILL_RUN_PARAM)
{
	ta_job_test_rel_t rel = { resv_exc_ptr TA_WILL_RUN_INIT };
	ta_job_test_t t = { job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
			    preemptee_job_list, &rel };

	return ta_entry_job_test(&t);
}

int ta_cons_job_test(const ta_job_test_t *t, bitstr_t *bitmap)
{
	return (*cons.job_test)(t->job_ptr, bitmap, t->min_nodes, t->max_nodes, t->req_nodes, t->mode,
				t->preemptee_candidates, t->preemptee_job_list,
				t->rel->resv_exc_ptr TA_WILL_RUN_ARG);
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

extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data)
{
	return (*cons.get_info_from_plugin)(dinfo, job_ptr, data);
}

extern int select_p_reconfigure(void)
{
	return (*cons.reconfigure)();
}
