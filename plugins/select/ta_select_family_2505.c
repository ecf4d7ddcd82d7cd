/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm 25.05, 25.11 and 26.05's side of select/cons_tres_topoaware (ta_select_family.h). The
 * select interface has 13 select_p_* calls (node_select_syms, src/interfaces/select.c; 26.05 adds
 * select_p_job_mem_reduce, 14), forwarded by ta_select_entry.c. What is this family's:
 *   - no select_p_state_save: slurmctld's stop is noticed by the status file writer (shutdown_time),
 *     and fini() is still called only with MEMORY_LEAK_DEBUG (25.05.8 controller.c:1108-1139);
 *   - no select_p_job_init: node_init follows load_all_job_state (25.05.8 read_config.c:1624, 1671),
 *     so the status book's rebuild from slurmctld's job list runs at node_init;
 *   - no jobinfo/nodeinfo calls: select_jobinfo is gone from jobs and their saved state;
 *   - only slurmctld loads a select plugin, and only SelectType (select_g_init(),
 *     src/interfaces/select.c:112-148, controller.c:822), and it treats SelectType as cons_tres only
 *     when its plugin id is 109 (running_cons_tres(), select.c:100-107): see the id below. */
#include "ta_select_family.h"

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
const ta_family_t ta_family = { .saves_state = 0, .batched_will_run = 0 };

typedef int (*ta_cons_job_test_fn)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
				   uint32_t req_nodes, uint16_t mode, ta_list_t *preemptee_candidates,
				   ta_list_t **preemptee_job_list, resv_exc_t *resv_exc_ptr,
				   will_run_data_t *will_run_ptr);

void ta_family_will_run_window(const ta_job_test_t *t, time_t *start, time_t *end)
{
	*start = t->rel->will_run_ptr ? t->rel->will_run_ptr->start : 0;
	*end = t->rel->will_run_ptr ? t->rel->will_run_ptr->end : 0;
}

int ta_family_job_test(const ta_cons_t *cons, const ta_job_test_t *t, bitstr_t *bitmap)
{
	return ((ta_cons_job_test_fn)cons->ops.job_test)(t->job_ptr, bitmap, t->min_nodes, t->max_nodes,
							 t->req_nodes, t->mode, t->preemptee_candidates,
							 t->preemptee_job_list, t->rel->resv_exc_ptr, t->rel->will_run_ptr);
}
