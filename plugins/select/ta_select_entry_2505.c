/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The select interface of Slurm 25.05, 25.11 and 26.05 for select/cons_tres_topoaware
 * (select_cons_tres_topoaware.c holds what is release-neutral): the 13 select_p_* calls of
 * node_select_syms (src/interfaces/select.c; 26.05 adds select_p_job_mem_reduce, 14), each
 * forwarded to cons_tres and, for some, to the release-neutral hooks of ta_select.h. What is this
 * family's:
 *   - no select_p_state_save: slurmctld's stop is noticed by the status file writer (shutdown_time),
 *     and fini() is still called only with MEMORY_LEAK_DEBUG (25.05.8 controller.c:1108-1139);
 *   - no select_p_job_init: node_init follows load_all_job_state (25.05.8 read_config.c:1624, 1671),
 *     so the status book's rebuild from slurmctld's job list runs at node_init;
 *   - no jobinfo/nodeinfo calls: select_jobinfo is gone from jobs and their saved state;
 *   - only slurmctld loads a select plugin, and only SelectType (select_g_init(),
 *     src/interfaces/select.c:112-148, controller.c:822), and it treats SelectType as cons_tres only
 *     when its plugin id is 109 (running_cons_tres(), select.c:100-107): see the id below. */
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

/* 109, cons_tres's own id. slurmctld 25.05+ tests plugin_id == SELECT_PLUGIN_CONS_TRES
 * (running_cons_tres()) wherever cons_tres differs from linear (node_scheduler.c, gres.c, core
 * reservations in reservation.c) and, with another id and CR_Core, CR_CPU or CR_Socket in
 * SelectTypeParameters (the default CR_Core_Memory included), refuses to start (select.c:135-144,
 * fatal). It loads only SelectType, so sharing the id with the cons_tres we wrap clashes with
 * nothing. Jobs saved by 25.05+ carry no select data (25.05.8 src/common/job_record.c: the 25.05
 * state format has none; older formats write the current plugin's id, :2679, which loading skips,
 * :3188), so switching SelectType between cons_tres and this plugin keeps every job, and older
 * states with 10901 load too. Both builds use 109. */
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_CONS_TRES;
const int ta_cons_saves_state = 0;
const int ta_cons_batched_will_run = 0;

struct ta_job_test_rel {
	resv_exc_t *resv_exc_ptr;
	will_run_data_t *will_run_ptr;
};

void ta_will_run_window(const ta_job_test_t *t, time_t *start, time_t *end)
{
	*start = t->rel->will_run_ptr ? t->rel->will_run_ptr->start : 0;
	*end = t->rel->will_run_ptr ? t->rel->will_run_ptr->end : 0;
}

/* cons_tres's functions: the names of node_select_syms and, in the same order, the pointers
 * plugin_context_create fills. */
static const char *ta_syms[] = {
	"plugin_id",
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	"select_p_job_mem_reduce",
#endif
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
	"select_p_reconfigure",
};

typedef struct {
	uint32_t *plugin_id;
	int (*node_init)(void);
	int (*job_test)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			uint32_t req_nodes, uint16_t mode, ta_list_t *preemptee_candidates,
			ta_list_t **preemptee_job_list, resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr);
	int (*job_begin)(job_record_t *job_ptr);
	int (*job_ready)(job_record_t *job_ptr);
	int (*job_expand)(job_record_t *from_job_ptr, job_record_t *to_job_ptr);
	int (*job_resized)(job_record_t *job_ptr, node_record_t *node_ptr);
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	void (*job_mem_reduce)(job_record_t *job_ptr);
#endif
	int (*job_fini)(job_record_t *job_ptr);
	int (*job_suspend)(job_record_t *job_ptr, bool indf_susp);
	int (*job_resume)(job_record_t *job_ptr, bool indf_susp);
	int (*nodeinfo_set_all)(void);
	int (*nodeinfo_set)(job_record_t *job_ptr);
	int (*reconfigure)(void);
} ta_cons_ops_t;
_Static_assert(sizeof(ta_syms) == sizeof(ta_cons_ops_t), "ta_syms and ta_cons_ops_t differ");

static ta_cons_ops_t cons;                /* cons_tres's functions */
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

/* ---- the entry points: cons_tres's, with the release-neutral hooks around some -------------- */

/* Called at start-up (after slurmctld loaded its jobs) and after every scontrol reconfigure, once
 * the node table is rebuilt: the place to (re)load the topology, map it onto the new node table
 * and book the running layout jobs. */
extern int select_p_node_init(void)
{
	int rc = (*cons.node_init)();

	ta_entry_node_init(ta_ctld_job_list());
	return rc;
}

extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode, ta_list_t *preemptee_candidates,
			     ta_list_t **preemptee_job_list, resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr)
{
	ta_job_test_rel_t rel = { resv_exc_ptr, will_run_ptr };
	ta_job_test_t t = { job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
			    preemptee_job_list, &rel };

	return ta_entry_job_test(&t);
}

int ta_cons_job_test(const ta_job_test_t *t, bitstr_t *bitmap)
{
	return (*cons.job_test)(t->job_ptr, bitmap, t->min_nodes, t->max_nodes, t->req_nodes, t->mode,
				t->preemptee_candidates, t->preemptee_job_list, t->rel->resv_exc_ptr,
				t->rel->will_run_ptr);
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

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
/* 26.05: a job's memory shrinks (cons_tres updates its node usage); the placement is unchanged. */
extern void select_p_job_mem_reduce(job_record_t *job_ptr)
{
	(*cons.job_mem_reduce)(job_ptr);
}
#endif

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

extern int select_p_select_nodeinfo_set_all(void)
{
	return (*cons.nodeinfo_set_all)();
}

extern int select_p_select_nodeinfo_set(job_record_t *job_ptr)
{
	return (*cons.nodeinfo_set)(job_ptr);
}

extern int select_p_reconfigure(void)
{
	return (*cons.reconfigure)();
}
