/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The settings of select/cons_tres_topoaware (select_cons_tres_topoaware(8)): topoaware.conf,
 * reread in select_p_node_init (start-up and every scontrol reconfigure). A topoaware.conf that does
 * not parse keeps the last good settings; every reader asks ctx->conf itself (topoaware_conf_*),
 * only the paths are resolved here. */
#include "ta_select_settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ta_select_writer.h"

/* topoaware.conf and the topology a missing or broken one implies, beside the slurm.conf that
 * slurmctld read (topoaware_default_paths: the same rule as the SPANK plugin and the command). */
static void ta_default_paths(char *conf, size_t conf_len, char *topo, size_t topo_len)
{
	if (topoaware_default_paths(slurm_conf.slurm_conf, conf, conf_len, topo, topo_len) != 0) {
		/* Only a slurm.conf path longer than PATH_MAX: no file is read, the defaults apply. */
		error("%s: the path of slurm.conf is too long to look beside it for topoaware.conf", TA);
		conf[0] = topo[0] = '\0';
	}
}

/* The settings of ctx->conf (NULL: the core's defaults) take effect: the status file's and the
 * last good topology's paths. ctx->lock held. */
static void ta_apply_settings_locked(ta_ctx_t *ctx, const char *conf_path)
{
	char buf[TA_PATH_MAX], shown[TA_PATH_MAX + 16];
	int r;

	ctx->settings_applied = 1;
	/* The last topology that loaded, kept with slurmctld's own state: what a restarted slurmctld
	 * (and, from 23.11, every scontrol reconfigure, which starts a new slurmctld) falls back to
	 * when the configured file is broken. */
	if (slurm_conf.state_save_location && slurm_conf.state_save_location[0] == '/')
		snprintf(ctx->last_good_path, sizeof(ctx->last_good_path), "%s/%s", slurm_conf.state_save_location,
			 TA_LAST_GOOD_NAME);
	else
		ctx->last_good_path[0] = '\0';
	r = topoaware_conf_status_file(ctx->conf, slurm_conf.state_save_location, buf, sizeof(buf));
	if (r == 0) {
		if (strcmp(buf, ctx->status_path))
			ta_writer_path_changed_locked(ctx); /* a new file: its errors are new */
		snprintf(ctx->status_path, sizeof(ctx->status_path), "%s", buf);
		snprintf(shown, sizeof(shown), "%s", buf);
	} else {
		ctx->status_path[0] = '\0';
		snprintf(shown, sizeof(shown), "none");
		if (r < 0)
			error("%s: no status file: %s", TA, buf);
	}
	TA_LOG(ctx, TOPOAWARE_LOG_INFO,
	       "%s: settings%s%s: MaxTriesPerCall=%u MaxTimePerCall=%ums LogLevel=%s MissingNodes=%s RankOrder=%s "
	       "StatusFile=%s StatusInterval=%us",
	       TA, conf_path ? " from " : " (built-in defaults)", conf_path ? conf_path : "",
	       topoaware_conf_max_tries(ctx->conf), topoaware_conf_max_time_ms(ctx->conf),
	       topoaware_log_level_name(topoaware_conf_log_level(ctx->conf)),
	       topoaware_missing_nodes_name(topoaware_conf_missing_nodes(ctx->conf)),
	       topoaware_rank_order_mode_name(topoaware_conf_rank_order(ctx->conf)), shown,
	       topoaware_conf_status_interval(ctx->conf));
}

/* bf_window_linear=N of SchedulerParameters, read as cons_tres reads it at the same moments (its
 * own node_init; 22.05.8 src/plugins/select/cons_common/cons_common.c:1113, 24.11.5
 * src/plugins/select/cons_tres/select_cons_tres.c:304): N > 0, else 0 (windows that double). */
static int ta_read_window_linear(void)
{
	const char *p = xstrcasestr(slurm_conf.sched_params, "bf_window_linear=");
	int n = p ? atoi(p + strlen("bf_window_linear=")) : 0;

	return n > 0 ? n : 0;
}

void ta_settings_reload_locked(ta_ctx_t *ctx, char *topo_path, size_t topo_path_len)
{
	char path[TA_PATH_MAX], default_topo[TA_PATH_MAX], err[TOPOAWARE_ERR_LEN];
	topoaware_conf_t *conf;
	int found = 0;

	ctx->window_linear = ta_read_window_linear();
	ta_default_paths(path, sizeof(path), default_topo, sizeof(default_topo));
	conf = topoaware_conf_load(path, &found, err, sizeof(err));
	if (!conf) {
		/* At every LogLevel: an admin's mistake that changes nothing until it is fixed. */
		error("%s: %s: %s; keeping the %s settings", TA, path, err, ctx->conf ? "previous" : "built-in default");
		if (!ctx->settings_applied)
			ta_apply_settings_locked(ctx, NULL); /* the defaults, e.g. the default status file */
	} else {
		topoaware_conf_free(ctx->conf);
		ctx->conf = conf;
		ta_apply_settings_locked(ctx, found ? path : NULL);
	}
	if (!ctx->conf || topoaware_conf_topology(ctx->conf, topo_path, topo_path_len) != 0)
		snprintf(topo_path, topo_path_len, "%s", default_topo);
}
