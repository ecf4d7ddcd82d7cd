/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The settings of select/cons_tres_topoaware (ta_select_settings.c): topoaware.conf and the parts of
 * slurm.conf the plugin reads, (re)read at every select_p_node_init. */
#ifndef TA_SELECT_SETTINGS_H
#define TA_SELECT_SETTINGS_H

#include "ta_select_ctx.h"

/* <StateSaveLocation>/TA_LAST_GOOD_NAME: a copy of the last topology that loaded. */
#define TA_LAST_GOOD_NAME "topoaware-last-good-topology.json"

/* Rereads topoaware.conf (a file that does not parse keeps the last good settings) and
 * SchedulerParameters' bf_window_linear=; `topo_path` gets the topology file to load (topoaware.conf's
 * Topology=, else the default beside slurm.conf). ctx->lock held. */
void ta_settings_reload_locked(ta_ctx_t *ctx, char *topo_path, size_t topo_path_len);

#endif
