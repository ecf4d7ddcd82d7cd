/* SPDX-License-Identifier: GPL-2.0-or-later */
/* select/cons_tres's functions for select/cons_tres_topoaware: loaded through a plugin context or
 * handle (as Slurm's own other_select.c did), by the names of the family's node_select_syms. */
#include "ta_select_cons.h"

/* The names, in the order of ta_cons_ops_t (the family's node_select_syms). Never written; not
 * `const char *const` only because plugin_context_create and plugin_load_and_link take `const char **`. */
static const char *ta_syms[] = {
	"plugin_id",
#if TA_SLURM_FAMILY < 2505
	"select_p_state_save",
	"select_p_state_restore",
	"select_p_job_init",
#endif
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
#if TA_SLURM_FAMILY == 2205
	"select_p_job_signal",
#endif
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	"select_p_job_mem_reduce",
#endif
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
#if TA_SLURM_FAMILY < 2505
	"select_p_step_pick_nodes",
	"select_p_step_start",
	"select_p_step_finish",
	"select_p_select_nodeinfo_pack",
	"select_p_select_nodeinfo_unpack",
	"select_p_select_nodeinfo_alloc",
	"select_p_select_nodeinfo_free",
#endif
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
#if TA_SLURM_FAMILY < 2505
	"select_p_select_nodeinfo_get",
	"select_p_select_jobinfo_alloc",
	"select_p_select_jobinfo_free",
	"select_p_select_jobinfo_set",
	"select_p_select_jobinfo_get",
	"select_p_select_jobinfo_copy",
	"select_p_select_jobinfo_pack",
	"select_p_select_jobinfo_unpack",
#endif
#if TA_SLURM_FAMILY == 2205
	"select_p_select_jobinfo_sprint",
	"select_p_select_jobinfo_xstrdup",
#endif
#if TA_SLURM_FAMILY < 2505
	"select_p_get_info_from_plugin",
#endif
#if TA_SLURM_FAMILY == 2205
	"select_p_update_node_config",
#endif
	"select_p_reconfigure",
#if TA_SLURM_FAMILY == 2205
	"select_p_resv_test",
#endif
};
_Static_assert(sizeof(ta_syms) == sizeof(ta_cons_ops_t), "ta_syms and ta_cons_ops_t differ");
#if TA_SLURM_FAMILY == 2205
/* 22.05 still has the table in its headers (src/common/select.h): ours must be the same size. */
_Static_assert(sizeof(ta_cons_ops_t) == sizeof(slurm_select_ops_t),
	       "ta_cons_ops_t differs from slurm_select_ops_t in src/common/select.h");
#endif

#if TA_SLURM_FAMILY == 2311
/* plugin_load_and_link, not plugin_context_create: from 23.11 the public libslurm.so exports
 * plugin_context_create under no name (22.05's did), and 24.x clients linked to it (slurm_load_node:
 * src/api/node_info.c calls select_g_init) load this plugin, whose init() would then end the client
 * with "symbol lookup error". plugin_load_and_link is what plugin_context_create tries first (the same
 * PluginDir search), and slurm_xlator.h maps it to slurm_plugin_load_and_link, which both libslurm.so
 * and libslurmfull.so export. 25.05+ loads the plugin in slurmctld only. */
int ta_cons_open(ta_cons_t *cons)
{
	plugin_handle_t h = plugin_load_and_link("select/cons_tres", (int)(sizeof(ta_syms) / sizeof(ta_syms[0])),
						 ta_syms, (void **)&cons->ops);

	cons->loaded = h != PLUGIN_INVALID_HANDLE;
	cons->handle = (void *)h;
	return cons->loaded ? SLURM_SUCCESS : SLURM_ERROR;
}

int ta_cons_close(ta_cons_t *cons)
{
	if (cons->loaded)
		plugin_unload((plugin_handle_t)cons->handle);
	cons->loaded = 0;
	cons->handle = NULL;
	return SLURM_SUCCESS;
}
#else
int ta_cons_open(ta_cons_t *cons)
{
	cons->handle = plugin_context_create("select", "select/cons_tres", (void **)&cons->ops, ta_syms,
					     sizeof(ta_syms));
	cons->loaded = cons->handle != NULL;
	return cons->loaded ? SLURM_SUCCESS : SLURM_ERROR;
}

int ta_cons_close(ta_cons_t *cons)
{
	int rc = SLURM_SUCCESS;

	if (cons->handle)
		rc = plugin_context_destroy(cons->handle);
	cons->handle = NULL;
	cons->loaded = 0;
	return rc;
}
#endif
