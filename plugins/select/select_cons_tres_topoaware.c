/* SPDX-License-Identifier: GPL-2.0-or-later */
/* select/cons_tres_topoaware (select_cons_tres_topoaware(8)): a select plugin that wraps
 * select/cons_tres. This file is the release-neutral half of the entry points: init, fini and what
 * happens around cons_tres's functions. The select_p_* entry points themselves, cons_tres's ops
 * table (loaded through a plugin context, as Slurm's own other_select.c did) and the plugin id are
 * the Slurm release family's (ta_select_entry_2205.c: 22.05, 36 calls; _2311.c: 23.11 .. 24.11,
 * 31 calls; _2505.c: 25.05 .. 26.05, 13 or 14 calls), chosen by configure from the Slurm source
 * tree. Only select_p_job_test of a job that carries a tp/pp/dp layout first narrows the candidate
 * nodes to the best block of the fabric (ta_select_place.c), and select_p_node_init (re)loads the
 * topology.
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
#include "src/common/run_in_daemon.h"
#include "src/slurmctld/slurmctld.h"

#include "ta_select.h"

#ifdef TA_SELECT_PASSTHROUGH
const char plugin_name[] = "topoaware pass-through wrapper of select/cons_tres (benchmark baseline)";
const char plugin_type[] = "select/cons_tres_passthrough";
#define TA "select/cons_tres_passthrough"
#else
const char plugin_name[] = "topoaware: topology-aware placement of tp/pp/dp jobs over select/cons_tres";
const char plugin_type[] = "select/cons_tres_topoaware";
#define TA "select/cons_tres_topoaware"
#endif
const uint32_t plugin_version = SLURM_VERSION_NUMBER;
extern const uint32_t plugin_id; /* the adapter's */

static int ta_final_logged; /* the counters line of the shutdown was logged */
/* slurmctld's own slurmctld_config (for shutdown_time) and job_list, looked up at run time: the
 * symbols live in the slurmctld binary, and up to 24.11 every Slurm command loads this plugin too
 * (a direct reference would not resolve there). NULL outside slurmctld. */
static slurmctld_config_t *ta_ctld_config;
static ta_list_t **ta_ctld_jobs;

int ta_ctld_stopping(void)
{
	return ta_ctld_config && ta_ctld_config->shutdown_time;
}

ta_list_t *ta_ctld_job_list(void)
{
	return ta_ctld_jobs ? *ta_ctld_jobs : NULL;
}

/* slurmctld stops: the counters line and the last status file write, once. Up to 24.11 the last
 * select call of a stopping slurmctld is a state save after shutdown_time is set (production
 * builds never call fini(): controller.c calls select_g_fini only with MEMORY_LEAK_DEBUG); 25.05+
 * has no state save, so the status file writer notices shutdown_time itself (ta_select_writer.c). */
void ta_entry_stopping(void)
{
	if (ta_final_logged)
		return;
	ta_final_logged = 1;
	ta_log_counters();
}

static void ta_shutdown(void)
{
	if (ta_final_logged)
		return;
	ta_entry_stopping();
#ifndef TA_SELECT_PASSTHROUGH
	ta_select_shutdown();
#endif
}

extern int init(void)
{
	/* The whole table or nothing: a partial context would crash at its first missing call. */
	if (ta_cons_open() != SLURM_SUCCESS) {
		error("%s: cannot load select/cons_tres (select_cons_tres.so in PluginDir), which this plugin wraps",
		      TA);
		return SLURM_ERROR;
	}
	if (running_in_slurmctld()) {
		info("%s: wrapping select/cons_tres (plugin id %u)", TA, plugin_id);
		ta_ctld_config = dlsym(RTLD_DEFAULT, "slurmctld_config");
		ta_ctld_jobs = dlsym(RTLD_DEFAULT, "job_list");
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
	if (running_in_slurmctld()) {
		ta_shutdown();
#ifndef TA_SELECT_PASSTHROUGH
		ta_select_fini();
#endif
	}
	return ta_cons_close();
}

/* ---- what the adapters call around cons_tres's functions (ta_select.h) ---------------------- */

void ta_entry_state_saved(void)
{
	if (ta_ctld_stopping())
		ta_shutdown();
}

void ta_entry_node_init(ta_list_t *job_list)
{
	if (!running_in_slurmctld())
		return;
	ta_log_counters();
	ta_final_logged = 0; /* running (again) */
#ifndef TA_SELECT_PASSTHROUGH
	ta_select_jobs_changed();
	ta_select_node_init();
	if (job_list)
		ta_select_job_init(job_list);
#endif
}

void ta_entry_job_init(ta_list_t *job_list)
{
#ifndef TA_SELECT_PASSTHROUGH
	if (running_in_slurmctld())
		ta_select_job_init(job_list);
#endif
}

int ta_entry_job_test(const ta_job_test_t *t)
{
	uint64_t t0 = ta_now_ns();
	int rc, layout = 0;

#ifdef TA_SELECT_PASSTHROUGH
	rc = ta_cons_job_test(t, t->bitmap);
#else
	rc = ta_select_job_test(t, &layout);
#endif
	ta_count(ta_now_ns() - t0, layout);
	return rc;
}

void ta_entry_job_begin(job_record_t *job_ptr, int rc)
{
#ifndef TA_SELECT_PASSTHROUGH
	ta_select_jobs_changed();
	if (rc == SLURM_SUCCESS)
		ta_select_job_begin(job_ptr);
#endif
}

void ta_entry_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr, int rc)
{
#ifndef TA_SELECT_PASSTHROUGH
	/* from_job gives all its nodes to to_job and ends; to_job's nodes are not its placement any more. */
	ta_select_jobs_changed();
	if (rc == SLURM_SUCCESS)
		ta_select_job_resized(from_job_ptr, to_job_ptr);
#endif
}

void ta_entry_job_resized(job_record_t *job_ptr, int rc)
{
#ifndef TA_SELECT_PASSTHROUGH
	ta_select_jobs_changed();
	if (rc == SLURM_SUCCESS)
		ta_select_job_resized(NULL, job_ptr);
#endif
}

void ta_entry_job_fini(job_record_t *job_ptr)
{
#ifndef TA_SELECT_PASSTHROUGH
	ta_select_jobs_changed();
	ta_select_job_fini(job_ptr);
#endif
}
