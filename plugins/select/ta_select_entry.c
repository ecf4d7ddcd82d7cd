/* SPDX-License-Identifier: GPL-2.0-or-later */
/* select/cons_tres_topoaware (select_cons_tres_topoaware(8)): a select plugin that wraps
 * select/cons_tres. This file is its entry points, the same for every Slurm release family: init,
 * fini and the select_p_* calls, each forwarded to cons_tres (ta_select_cons.c) and, for some, with
 * the plugin's own work around it. A call only some families have is #if on TA_SLURM_FAMILY (2205:
 * 22.05, 36 calls; 2311: 23.11 .. 24.11, 31 calls; 2505: 25.05 .. 26.05, 13 or 14 calls); the rest
 * of what differs (job_test's arguments, the plugin id) is the family's file,
 * ta_select_family_<family>.c, chosen by configure. Only select_p_job_test of a job that carries a
 * tp/pp/dp layout first narrows the candidate nodes to the best block of the fabric
 * (ta_select_place.c), and select_p_node_init (re)loads the topology.
 *
 * Built twice: select_cons_tres_topoaware.so (placement) and, with TA_SELECT_PASSTHROUGH,
 * select_cons_tres_passthrough.so, which only forwards (the baseline of the benchmark: the cost of
 * the wrapper itself). Both count and time every select_p_job_test with the same code and log one
 * counters line at every node_init and when slurmctld stops.
 *
 * The type names contain "cons_tres" on purpose: Slurm 22.05 enables heterogeneous GRES
 * allocations, dynamic nodes and MaxNodeCount by a substring match on SelectType (docs/design.md,
 * "Slurm releases and the ABI").
 *
 * Up to 24.11 every Slurm command and every slurmd (and, 24.05/24.11, slurmstepd) loads the select
 * plugins and calls init(); 25.05+ only slurmctld does: init() only creates the cons_tres context
 * (the same shared object Slurm has loaded anyway) and logs nothing outside slurmctld. */
#include "ta_select_slurm.h"

#include "src/common/run_in_daemon.h"

#include "ta_select_ctx.h"
#include "ta_select_entry.h"
#include "ta_select_family.h"
#ifndef TA_SELECT_PASSTHROUGH
#include "ta_select_book.h"
#include "ta_select_ends.h"
#include "ta_select_loader.h"
#include "ta_select_place.h"
#include "ta_select_settings.h"
#include "ta_select_writer.h"
#endif

#ifdef TA_SELECT_PASSTHROUGH
const char plugin_name[] = "topoaware pass-through wrapper of select/cons_tres (benchmark baseline)";
const char plugin_type[] = "select/cons_tres_passthrough";
#else
const char plugin_name[] = "topoaware: topology-aware placement of tp/pp/dp jobs over select/cons_tres";
const char plugin_type[] = "select/cons_tres_topoaware";
#endif
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* The plugin's one context. It has to be a file static: Slurm's select API passes no context to a
 * plugin's calls, so every entry point below hands this one down; nothing else keeps state. */
static ta_ctx_t ctx = TA_CTX_INITIALIZER;

#define CONS (ctx.cons.ops)

/* slurmctld stops: the counters line and the last status file write, once. Up to 24.11 the last
 * select call of a stopping slurmctld is a state save after shutdown_time is set (production
 * builds never call fini(): controller.c calls select_g_fini only with MEMORY_LEAK_DEBUG); 25.05+
 * has no state save, so the status file writer notices shutdown_time itself (ta_select_writer.c). */
static void ta_shutdown(void)
{
	if (!ta_counters_log_final(&ctx.counters))
		return;
#ifndef TA_SELECT_PASSTHROUGH
	ta_writer_shutdown(&ctx);
#endif
}

extern int init(void)
{
	/* The whole table or nothing: a partial context would crash at its first missing call. */
	if (ta_cons_open(&ctx.cons) != SLURM_SUCCESS) {
		error("%s: cannot load select/cons_tres (select_cons_tres.so in PluginDir), which this plugin wraps",
		      TA);
		return SLURM_ERROR;
	}
	if (running_in_slurmctld()) {
		info("%s: wrapping select/cons_tres (plugin id %u)", TA, plugin_id);
		ta_ctx_find_ctld(&ctx);
		if (!ctx.ctld_config)
			error("%s: slurmctld_config not found; the counters line is not logged when slurmctld stops", TA);
#ifndef TA_SELECT_PASSTHROUGH
		ta_ctx_open(&ctx);
		ta_writer_init(&ctx);
#endif
	}
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	if (running_in_slurmctld()) {
		ta_shutdown();
#ifndef TA_SELECT_PASSTHROUGH
		ta_writer_end(&ctx);
		ta_loader_stop(&ctx);
		ta_ctx_free(&ctx);
#endif
	}
	return ta_cons_close(&ctx.cons);
}

/* A job began, ended or changed its nodes (any job, layout or not): the nodes' end times that
 * will-run reads are read again (ta_select_ends.c). */
static void ta_jobs_changed(void)
{
#ifndef TA_SELECT_PASSTHROUGH
	ta_ends_jobs_changed(&ctx);
#endif
}

#if TA_SLURM_FAMILY < 2505
extern int select_p_state_save(char *dir_name)
{
	int rc = (*CONS.state_save)(dir_name);

	if (ta_ctx_stopping(&ctx))
		ta_shutdown();
	return rc;
}

extern int select_p_state_restore(char *dir_name)
{
	return (*CONS.state_restore)(dir_name);
}

/* After node_init (22.05 .. 24.11): running layout jobs into the status book. */
extern int select_p_job_init(ta_list_t *job_list)
{
	int rc = (*CONS.job_init)(job_list);

#ifndef TA_SELECT_PASSTHROUGH
	if (running_in_slurmctld())
		ta_book_job_init(&ctx, job_list);
#endif
	return rc;
}
#endif

/* Called at start-up and after every scontrol reconfigure, once the node table is rebuilt: the
 * place to reread topoaware.conf, (re)load the topology and map it onto the new node table (off
 * slurmctld's locks, ta_select_loader.c). 25.05+ has no job_init (node_init follows
 * load_all_job_state): the running layout jobs are booked here. */
extern int select_p_node_init(void)
{
	int rc = (*CONS.node_init)();
#ifndef TA_SELECT_PASSTHROUGH
	char topo_path[TA_PATH_MAX];
	topoaware_parts_t *parts;
#endif

	if (!running_in_slurmctld())
		return rc;
	ta_counters_log(&ctx.counters);
	ta_counters_running(&ctx.counters);
#ifndef TA_SELECT_PASSTHROUGH
	ta_jobs_changed();
	/* The partitions' Slurm topologies (25.05+), read before the plugin lock: slurmctld's locks
	 * are held here, the partition list and topologies are stable. */
	parts = ta_family_part_topologies();
	pthread_mutex_lock(&ctx.lock);
	ta_settings_reload_locked(&ctx, topo_path, sizeof(topo_path));
	ta_loader_request_locked(&ctx, topo_path, parts);
	ta_writer_start_locked(&ctx);
	pthread_mutex_unlock(&ctx.lock);
#if TA_SLURM_FAMILY >= 2505
	if (ta_ctx_job_list(&ctx))
		ta_book_job_init(&ctx, ta_ctx_job_list(&ctx));
#endif
#endif
	return rc;
}

/* Counted; layout jobs placed (topoaware build), the rest to cons_tres. */
extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode, ta_list_t *preemptee_candidates,
			     ta_list_t **preemptee_job_list, TA_JOB_TEST_REL_PARAMS)
{
	ta_job_test_rel_t rel = TA_JOB_TEST_REL_INIT;
	ta_job_test_t t = { job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
			    preemptee_job_list, &rel };
	uint64_t t0 = ta_now_ns();
	int rc, layout = 0;

#ifdef TA_SELECT_PASSTHROUGH
	rc = ta_family_job_test(&ctx.cons, &t, bitmap);
#else
	rc = ta_place_job_test(&ctx, &t, &layout);
#endif
	ta_count(&ctx.counters, ta_now_ns() - t0, layout);
	return rc;
}

extern int select_p_job_begin(job_record_t *job_ptr)
{
	int rc = (*CONS.job_begin)(job_ptr);

	ta_jobs_changed();
#ifndef TA_SELECT_PASSTHROUGH
	if (rc == SLURM_SUCCESS)
		ta_book_job_begin(&ctx, job_ptr);
#endif
	return rc;
}

extern int select_p_job_ready(job_record_t *job_ptr)
{
	return (*CONS.job_ready)(job_ptr);
}

extern int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr)
{
	int rc = (*CONS.job_expand)(from_job_ptr, to_job_ptr);

	/* from_job gives all its nodes to to_job and ends; to_job's nodes are not its placement any more. */
	ta_jobs_changed();
#ifndef TA_SELECT_PASSTHROUGH
	if (rc == SLURM_SUCCESS)
		ta_book_job_resized(&ctx, from_job_ptr, to_job_ptr);
#endif
	return rc;
}

extern int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr)
{
	int rc = (*CONS.job_resized)(job_ptr, node_ptr);

	ta_jobs_changed();
#ifndef TA_SELECT_PASSTHROUGH
	if (rc == SLURM_SUCCESS)
		ta_book_job_resized(&ctx, NULL, job_ptr);
#endif
	return rc;
}

#if TA_SLURM_FAMILY == 2205
extern int select_p_job_signal(job_record_t *job_ptr, int signal)
{
	return (*CONS.job_signal)(job_ptr, signal);
}
#endif

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
/* 26.05: a job's memory shrinks (cons_tres updates its node usage); the placement is unchanged. */
extern void select_p_job_mem_reduce(job_record_t *job_ptr)
{
	(*CONS.job_mem_reduce)(job_ptr);
}
#endif

extern int select_p_job_fini(job_record_t *job_ptr)
{
	int rc = (*CONS.job_fini)(job_ptr);

	ta_jobs_changed();
#ifndef TA_SELECT_PASSTHROUGH
	ta_book_job_fini(&ctx, job_ptr);
#endif
	return rc;
}

extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp)
{
	return (*CONS.job_suspend)(job_ptr, indf_susp);
}

extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp)
{
	return (*CONS.job_resume)(job_ptr, indf_susp);
}

extern int select_p_select_nodeinfo_set_all(void)
{
	return (*CONS.nodeinfo_set_all)();
}

extern int select_p_select_nodeinfo_set(job_record_t *job_ptr)
{
	return (*CONS.nodeinfo_set)(job_ptr);
}

extern int select_p_reconfigure(void)
{
	return (*CONS.reconfigure)();
}

/* ---- 22.05 .. 24.11 only: steps, node and job select data ---------------------------------- */
#if TA_SLURM_FAMILY < 2505
extern bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr, select_jobinfo_t *step_jobinfo,
					  uint32_t node_count, bitstr_t **avail_nodes)
{
	return (*CONS.step_pick_nodes)(job_ptr, step_jobinfo, node_count, avail_nodes);
}

extern int select_p_step_start(step_record_t *step_ptr)
{
	return (*CONS.step_start)(step_ptr);
}

extern int select_p_step_finish(step_record_t *step_ptr, bool killing_step)
{
	return (*CONS.step_finish)(step_ptr, killing_step);
}

extern int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version)
{
	return (*CONS.nodeinfo_pack)(nodeinfo, buffer, protocol_version);
}

extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo, buf_t *buffer, uint16_t protocol_version)
{
	return (*CONS.nodeinfo_unpack)(nodeinfo, buffer, protocol_version);
}

extern select_nodeinfo_t *select_p_select_nodeinfo_alloc(void)
{
	return (*CONS.nodeinfo_alloc)();
}

extern int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo)
{
	return (*CONS.nodeinfo_free)(nodeinfo);
}

extern int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo,
					enum node_states state, void *data)
{
	return (*CONS.nodeinfo_get)(nodeinfo, dinfo, state, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_alloc(void)
{
	return (*CONS.jobinfo_alloc)();
}

extern int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo)
{
	return (*CONS.jobinfo_free)(jobinfo);
}

extern int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data)
{
	return (*CONS.jobinfo_set)(jobinfo, data_type, data);
}

extern int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data)
{
	return (*CONS.jobinfo_get)(jobinfo, data_type, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_copy(select_jobinfo_t *jobinfo)
{
	return (*CONS.jobinfo_copy)(jobinfo);
}

extern int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo, buf_t *buffer, uint16_t protocol_version)
{
	return (*CONS.jobinfo_pack)(jobinfo, buffer, protocol_version);
}

extern int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo_pptr, buf_t *buffer, uint16_t protocol_version)
{
	return (*CONS.jobinfo_unpack)(jobinfo_pptr, buffer, protocol_version);
}

extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data)
{
	return (*CONS.get_info_from_plugin)(dinfo, job_ptr, data);
}
#endif

/* ---- 22.05 only ------------------------------------------------------------------------------ */
#if TA_SLURM_FAMILY == 2205
extern char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo, char *buf, size_t size, int mode)
{
	return (*CONS.jobinfo_sprint)(jobinfo, buf, size, mode);
}

extern char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo, int mode)
{
	return (*CONS.jobinfo_xstrdup)(jobinfo, mode);
}

extern int select_p_update_node_config(int index)
{
	return (*CONS.update_node_config)(index);
}

extern bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt, bitstr_t *avail_bitmap,
				    bitstr_t **core_bitmap)
{
	return (*CONS.resv_test)(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}
#endif
