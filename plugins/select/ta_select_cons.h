/* SPDX-License-Identifier: GPL-2.0-or-later */
/* select/cons_tres, which select/cons_tres_topoaware wraps (ta_select_cons.c): its functions, loaded
 * by name into our own table, the union over the release families with #if on TA_SLURM_FAMILY
 * (configure: 2205 = 22.05, 2311 = 23.11 .. 24.11, 2505 = 25.05 .. 26.05) where a family lacks a
 * call. job_test's arguments differ in every family: its pointer is kept untyped here and called
 * through its own type by the family's file (ta_select_family.h, ta_family_job_test). */
#ifndef TA_SELECT_CONS_H
#define TA_SELECT_CONS_H

#include "ta_select_slurm.h"

#ifndef TA_SLURM_FAMILY
#error "TA_SLURM_FAMILY (2205, 2311 or 2505) comes from configure's SLURM_FAMILY (plugins/select/local.mk)"
#endif

/* In the order of the family's node_select_syms (src/common/select.c 22.05, src/interfaces/select.c
 * 23.11+): plugin_context_create and plugin_load_and_link fill the table by position. */
typedef struct {
	uint32_t *plugin_id;
#if TA_SLURM_FAMILY < 2505
	int (*state_save)(char *dir_name);
	int (*state_restore)(char *dir_name);
	int (*job_init)(ta_list_t *job_list);
#endif
	int (*node_init)(void);
	void (*job_test)(void); /* the family's own type (ta_family_job_test) */
	int (*job_begin)(job_record_t *job_ptr);
	int (*job_ready)(job_record_t *job_ptr);
	int (*job_expand)(job_record_t *from_job_ptr, job_record_t *to_job_ptr);
	int (*job_resized)(job_record_t *job_ptr, node_record_t *node_ptr);
#if TA_SLURM_FAMILY == 2205
	int (*job_signal)(job_record_t *job_ptr, int signal);
#endif
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	void (*job_mem_reduce)(job_record_t *job_ptr);
#endif
	int (*job_fini)(job_record_t *job_ptr);
	int (*job_suspend)(job_record_t *job_ptr, bool indf_susp);
	int (*job_resume)(job_record_t *job_ptr, bool indf_susp);
#if TA_SLURM_FAMILY < 2505
	bitstr_t *(*step_pick_nodes)(job_record_t *job_ptr, select_jobinfo_t *step_jobinfo, uint32_t node_count,
				     bitstr_t **avail_nodes);
	int (*step_start)(step_record_t *step_ptr);
	int (*step_finish)(step_record_t *step_ptr, bool killing_step);
	int (*nodeinfo_pack)(select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version);
	int (*nodeinfo_unpack)(select_nodeinfo_t **nodeinfo, buf_t *buffer, uint16_t protocol_version);
	select_nodeinfo_t *(*nodeinfo_alloc)(void);
	int (*nodeinfo_free)(select_nodeinfo_t *nodeinfo);
#endif
	int (*nodeinfo_set_all)(void);
	int (*nodeinfo_set)(job_record_t *job_ptr);
#if TA_SLURM_FAMILY < 2505
	int (*nodeinfo_get)(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo, enum node_states state,
			    void *data);
	select_jobinfo_t *(*jobinfo_alloc)(void);
	int (*jobinfo_free)(select_jobinfo_t *jobinfo);
	int (*jobinfo_set)(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data);
	int (*jobinfo_get)(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data);
	select_jobinfo_t *(*jobinfo_copy)(select_jobinfo_t *jobinfo);
	int (*jobinfo_pack)(select_jobinfo_t *jobinfo, buf_t *buffer, uint16_t protocol_version);
	int (*jobinfo_unpack)(select_jobinfo_t **jobinfo_pptr, buf_t *buffer, uint16_t protocol_version);
#endif
#if TA_SLURM_FAMILY == 2205
	char *(*jobinfo_sprint)(select_jobinfo_t *jobinfo, char *buf, size_t size, int mode);
	char *(*jobinfo_xstrdup)(select_jobinfo_t *jobinfo, int mode);
#endif
#if TA_SLURM_FAMILY < 2505
	int (*get_info_from_plugin)(enum select_plugindata_info dinfo, job_record_t *job_ptr, void *data);
#endif
#if TA_SLURM_FAMILY == 2205
	int (*update_node_config)(int index);
#endif
	int (*reconfigure)(void);
#if TA_SLURM_FAMILY == 2205
	bitstr_t *(*resv_test)(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt, bitstr_t *avail_bitmap,
			       bitstr_t **core_bitmap);
#endif
} ta_cons_ops_t;

/* cons_tres loaded (one per process: Slurm loads the shared object once). */
typedef struct {
	ta_cons_ops_t ops;
	void *handle; /* plugin_context_t * or plugin_handle_t, as the family loads it */
	int loaded;
} ta_cons_t;

/* Loads cons_tres's functions, the whole table or nothing (init), and lets them go (fini). */
int ta_cons_open(ta_cons_t *cons);
int ta_cons_close(ta_cons_t *cons);

#endif
