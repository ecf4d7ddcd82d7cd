/* select/cons_tres_topoaware (select_cons_tres_topoaware(8)): a select plugin that wraps
 * select/cons_tres. Every select_p_* call of Slurm 22.05 (src/common/select.h, node_select_syms) is
 * forwarded to cons_tres through a plugin context, as Slurm's own
 * src/plugins/select/other/other_select.c does; only select_p_job_test of a job that carries a
 * tp/pp/dp layout first narrows the candidate nodes to the best block of the fabric
 * (ta_select_place.c), and select_p_node_init (re)loads the topology.
 *
 * Built twice from this file: select_cons_tres_topoaware.so (placement) and, with
 * TA_SELECT_PASSTHROUGH, select_cons_tres_passthrough.so, which only forwards (the baseline of the
 * benchmark: the cost of the wrapper itself). Both count and time every select_p_job_test with
 * the same code and log one counters line at every node_init and when slurmctld stops.
 *
 * The type names contain "cons_tres" on purpose: Slurm 22.05 enables heterogeneous GRES
 * allocations, dynamic nodes and MaxNodeCount by a substring match on SelectType (PLATFORM.md).
 * The plugin ids are saved with every job and must never change:
 *   select/cons_tres_topoaware    TA_SELECT_PLUGIN_ID_TOPOAWARE    = 10901
 *   select/cons_tres_passthrough  TA_SELECT_PLUGIN_ID_PASSTHROUGH  = 10902
 * (cons_tres itself is 109; duplicate ids are fatal in select_g_init.)
 *
 * Every Slurm command and every slurmd loads all select plugins of PluginDir and calls init():
 * init() only creates the cons_tres context (the same shared object Slurm has loaded anyway) and
 * logs nothing outside slurmctld. */
#include "config.h" /* Slurm's */

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
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
#include "src/common/plugin.h"
#include "src/common/run_in_daemon.h"
#include "src/common/select.h"
#include "src/slurmctld/slurmctld.h"

#include "ta_select.h"

#ifdef TA_SELECT_PASSTHROUGH
const char plugin_name[] = "topoaware pass-through wrapper of select/cons_tres (benchmark baseline)";
const char plugin_type[] = "select/cons_tres_passthrough";
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_PASSTHROUGH;
#define TA "select/cons_tres_passthrough"
#else
const char plugin_name[] = "topoaware: topology-aware placement of tp/pp/dp jobs over select/cons_tres";
const char plugin_type[] = "select/cons_tres_topoaware";
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_TOPOAWARE;
#define TA "select/cons_tres_topoaware"
#endif
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Must match slurm_select_ops_t in src/common/select.h of the Slurm this is built against
 * (checked below: the sizes must agree). */
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

static int ta_final_logged; /* the counters line of the shutdown was logged */
/* slurmctld's own slurmctld_config (for shutdown_time), looked up at run time: the symbol lives
 * in the slurmctld binary, and every Slurm command loads this plugin too (a direct reference
 * would not resolve there). NULL outside slurmctld. */
static slurmctld_config_t *ta_ctld_config;

/* slurmctld's last call into a select plugin when it stops: production builds of slurmctld never
 * call fini() (controller.c calls select_g_fini only with MEMORY_LEAK_DEBUG), but they save the
 * state once more after setting shutdown_time. */
static void ta_shutdown(void)
{
	if (ta_final_logged)
		return;
	ta_final_logged = 1;
	ta_log_counters();
#ifndef TA_SELECT_PASSTHROUGH
	ta_select_shutdown();
#endif
}

extern int init(void)
{
	/* The whole table or nothing: a partial context would crash at its first missing call. */
	cons_ctx = plugin_context_create("select", "select/cons_tres", (void **)&cons, ta_syms,
					 sizeof(ta_syms));
	if (!cons_ctx) {
		error("%s: cannot load select/cons_tres (select_cons_tres.so in PluginDir), which this plugin wraps",
		      TA);
		return SLURM_ERROR;
	}
	if (running_in_slurmctld()) {
		info("%s: wrapping select/cons_tres (plugin id %u)", TA, plugin_id);
		ta_ctld_config = dlsym(RTLD_DEFAULT, "slurmctld_config");
		if (!ta_ctld_config)
			error("%s: slurmctld_config not found; the counters line is not logged when slurmctld stops", TA);
#ifndef TA_SELECT_PASSTHROUGH
		ta_select_init();
#endif
	}
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	int rc = SLURM_SUCCESS;

	if (running_in_slurmctld()) {
		ta_shutdown();
#ifndef TA_SELECT_PASSTHROUGH
		ta_select_fini();
#endif
	}
	if (cons_ctx) {
		rc = plugin_context_destroy(cons_ctx);
		cons_ctx = NULL;
	}
	return rc;
}

/* ---- forwarded calls ------------------------------------------------------------------------ */

extern int select_p_state_save(char *dir_name)
{
	int rc = (*cons.state_save)(dir_name);

	if (ta_ctld_config && ta_ctld_config->shutdown_time)
		ta_shutdown();
	return rc;
}

extern int select_p_state_restore(char *dir_name)
{
	return (*cons.state_restore)(dir_name);
}

extern int select_p_job_init(List job_list)
{
	int rc = (*cons.job_init)(job_list);

#ifndef TA_SELECT_PASSTHROUGH
	if (running_in_slurmctld())
		ta_select_job_init(job_list);
#endif
	return rc;
}

/* Called at start-up and after every scontrol reconfigure, once the node table is rebuilt: the
 * place to (re)load the topology and map it onto the new node table. */
extern int select_p_node_init(void)
{
	int rc = (*cons.node_init)();

	if (running_in_slurmctld()) {
		ta_log_counters();
		ta_final_logged = 0; /* running (again) */
#ifndef TA_SELECT_PASSTHROUGH
		ta_select_node_init();
#endif
	}
	return rc;
}

extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode, List preemptee_candidates, List *preemptee_job_list,
			     bitstr_t *exc_core_bitmap)
{
	uint64_t t0 = ta_now_ns();
	int rc, layout = 0;

#ifdef TA_SELECT_PASSTHROUGH
	rc = (*cons.job_test)(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
			      preemptee_job_list, exc_core_bitmap);
#else
	rc = ta_select_job_test(cons.job_test, job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
				preemptee_candidates, preemptee_job_list, exc_core_bitmap, &layout);
#endif
	ta_count(ta_now_ns() - t0, layout);
	return rc;
}

extern int select_p_job_begin(job_record_t *job_ptr)
{
	int rc = (*cons.job_begin)(job_ptr);

#ifndef TA_SELECT_PASSTHROUGH
	if (rc == SLURM_SUCCESS)
		ta_select_job_begin(job_ptr);
#endif
	return rc;
}

extern int select_p_job_ready(job_record_t *job_ptr)
{
	return (*cons.job_ready)(job_ptr);
}

extern int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr)
{
	int rc = (*cons.job_expand)(from_job_ptr, to_job_ptr);

#ifndef TA_SELECT_PASSTHROUGH
	/* from_job gives all its nodes to to_job and ends; to_job's nodes are not its placement any more. */
	if (rc == SLURM_SUCCESS)
		ta_select_job_resized(from_job_ptr, to_job_ptr);
#endif
	return rc;
}

extern int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr)
{
	int rc = (*cons.job_resized)(job_ptr, node_ptr);

#ifndef TA_SELECT_PASSTHROUGH
	if (rc == SLURM_SUCCESS)
		ta_select_job_resized(NULL, job_ptr);
#endif
	return rc;
}

extern int select_p_job_signal(job_record_t *job_ptr, int signal)
{
	return (*cons.job_signal)(job_ptr, signal);
}

extern int select_p_job_fini(job_record_t *job_ptr)
{
	int rc = (*cons.job_fini)(job_ptr);

#ifndef TA_SELECT_PASSTHROUGH
	ta_select_job_fini(job_ptr);
#endif
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
