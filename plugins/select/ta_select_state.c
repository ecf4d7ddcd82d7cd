/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state of select/cons_tres_topoaware (select_cons_tres_topoaware(8)): topoaware.conf and the
 * topology, (re)read in select_p_node_init (start-up and every scontrol reconfigure; the topology
 * is parsed and mapped onto the new node table off slurmctld's locks, ta_select_load.c). A new file that does not load
 * keeps the last good topology, a topoaware.conf that does not parse keeps the last good settings. All state is behind
 * ta_lock (job_test is called by the main and the backfill scheduler, node_init by reconfigure,
 * the status writer from its own thread). */
#include "ta_select_int.h"
#include "ta_select_ends.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TA_LOG_SLOTS 256  /* jobs remembered for the log's rate limit and run-now's decision */
#define TA_LOG_EVERY 300  /* a job's fallback/wait reason is logged at most every 5 minutes */

/* Defined here as Slurm's own select plugins define them (cons_common.c): programs linked to the
 * public libslurm.so (pyslurm, DRMAA, the Perl API) load every select plugin in PluginDir and have
 * no such variables, so a mere reference would keep the plugin from loading there. In slurmctld
 * its own definitions take precedence (these are exported for that, select.map); outside
 * slurmctld the plugin never reads them. */
node_record_t **node_record_table_ptr;
int node_record_count;

pthread_mutex_t ta_lock = PTHREAD_MUTEX_INITIALIZER;
topoaware_conf_t *ta_conf;
topoaware_topo_t *ta_topo;
topoaware_placer_t *ta_placer;
char ta_topo_path[TA_PATH_MAX];
uint32_t ta_nodes;
uint16_t *ta_free, *ta_free_all;
uint32_t ta_gpu_id;
bitstr_t *ta_known;
char ta_status_path[TA_PATH_MAX];
char ta_last_good_path[TA_PATH_MAX];
topoaware_status_t *ta_status;
int ta_window_linear;

static int ta_settings_applied; /* the settings were applied once (from a file or the defaults) */

static struct {
	uint32_t job_id;
	char placement[16];
	char note[256];
} ta_decided[TA_LOG_SLOTS];

static struct {
	uint32_t job_id;
	time_t when;
	int what;
} ta_logged[TA_LOG_SLOTS];

int ta_should_log(uint32_t job_id, int what)
{
	time_t now = time(NULL);
	unsigned k = job_id % TA_LOG_SLOTS;

	if (ta_logged[k].job_id == job_id && ta_logged[k].what == what && now - ta_logged[k].when < TA_LOG_EVERY)
		return 0;
	ta_logged[k].job_id = job_id;
	ta_logged[k].what = what;
	ta_logged[k].when = now;
	return 1;
}

void ta_decide(uint32_t job_id, const char *placement, const char *note)
{
	unsigned k = job_id % TA_LOG_SLOTS;

	ta_decided[k].job_id = job_id;
	snprintf(ta_decided[k].placement, sizeof(ta_decided[k].placement), "%s", placement);
	snprintf(ta_decided[k].note, sizeof(ta_decided[k].note), "%s", note ? note : "");
}

int ta_decided_take(uint32_t job_id, char *placement, size_t placement_len, char *note, size_t note_len)
{
	unsigned k = job_id % TA_LOG_SLOTS;

	if (ta_decided[k].job_id != job_id)
		return 0;
	snprintf(placement, placement_len, "%s", ta_decided[k].placement);
	snprintf(note, note_len, "%s", ta_decided[k].note);
	ta_decided[k].job_id = 0;
	return 1;
}

void ta_select_init(void)
{
	ta_gpu_id = gres_build_id("gpu");
	ta_writer_init();
	pthread_mutex_lock(&ta_lock);
	if (!ta_status)
		ta_status = topoaware_status_create(TA);
	if (!ta_status)
		error("%s: out of memory for the status book; no status file", TA);
	pthread_mutex_unlock(&ta_lock);
}

void ta_select_fini(void)
{
	ta_writer_end();
	ta_load_stop();
	pthread_mutex_lock(&ta_lock);
	topoaware_placer_free(ta_placer);
	ta_placer = NULL;
	topoaware_topo_free(ta_topo);
	ta_topo = NULL;
	topoaware_conf_free(ta_conf);
	ta_conf = NULL;
	topoaware_status_free(ta_status);
	ta_status = NULL;
	xfree(ta_free);
	xfree(ta_free_all);
	ta_ends_free_locked();
	FREE_NULL_BITMAP(ta_known);
	ta_nodes = 0;
	pthread_mutex_unlock(&ta_lock);
}

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

/* The settings of ta_conf (NULL: the core's defaults) take effect: every reader asks ta_conf
 * itself (topoaware_conf_*), only the status file's path is resolved here. ta_lock held. */
static void ta_apply_settings_locked(const char *conf_path)
{
	char buf[TA_PATH_MAX], shown[TA_PATH_MAX + 16];
	int r;

	ta_settings_applied = 1;
	/* The last topology that loaded, kept with slurmctld's own state: what a restarted slurmctld
	 * (and, from 23.11, every scontrol reconfigure, which starts a new slurmctld) falls back to
	 * when the configured file is broken. */
	if (slurm_conf.state_save_location && slurm_conf.state_save_location[0] == '/')
		snprintf(ta_last_good_path, sizeof(ta_last_good_path), "%s/%s", slurm_conf.state_save_location,
			 TA_LAST_GOOD_NAME);
	else
		ta_last_good_path[0] = '\0';
	r = topoaware_conf_status_file(ta_conf, slurm_conf.state_save_location, buf, sizeof(buf));
	if (r == 0) {
		if (strcmp(buf, ta_status_path))
			ta_writer_path_changed_locked(); /* a new file: its errors are new */
		snprintf(ta_status_path, sizeof(ta_status_path), "%s", buf);
		snprintf(shown, sizeof(shown), "%s", buf);
	} else {
		ta_status_path[0] = '\0';
		snprintf(shown, sizeof(shown), "none");
		if (r < 0)
			error("%s: no status file: %s", TA, buf);
	}
	TA_LOG(TOPOAWARE_LOG_INFO,
	       "%s: settings%s%s: MaxTriesPerCall=%u MaxTimePerCall=%ums LogLevel=%s MissingNodes=%s StatusFile=%s "
	       "StatusInterval=%us",
	       TA, conf_path ? " from " : " (built-in defaults)", conf_path ? conf_path : "",
	       topoaware_conf_max_tries(ta_conf), topoaware_conf_max_time_ms(ta_conf),
	       topoaware_log_level_name(topoaware_conf_log_level(ta_conf)),
	       topoaware_missing_nodes_name(topoaware_conf_missing_nodes(ta_conf)), shown,
	       topoaware_conf_status_interval(ta_conf));
}

/* topoaware.conf now, the topology through the loader (ta_select_load.c). ta_lock held. */
static void ta_reload_locked(void)
{
	char path[TA_PATH_MAX], topo_path[TA_PATH_MAX], default_topo[TA_PATH_MAX], err[TOPOAWARE_ERR_LEN];
	topoaware_conf_t *conf;
	int found = 0;
	uint32_t n = node_record_count > 0 ? (uint32_t)node_record_count : 0;

	ta_default_paths(path, sizeof(path), default_topo, sizeof(default_topo));
	conf = topoaware_conf_load(path, &found, err, sizeof(err));
	if (!conf) {
		/* At every LogLevel: an admin's mistake that changes nothing until it is fixed. */
		error("%s: %s: %s; keeping the %s settings", TA, path, err, ta_conf ? "previous" : "built-in default");
		if (!ta_settings_applied)
			ta_apply_settings_locked(NULL); /* the defaults, e.g. the default status file */
	} else {
		topoaware_conf_free(ta_conf);
		ta_conf = conf;
		ta_apply_settings_locked(found ? path : NULL);
	}
	if (!ta_conf || topoaware_conf_topology(ta_conf, topo_path, sizeof(topo_path)) != 0)
		snprintf(topo_path, sizeof(topo_path), "%s", default_topo);

	ta_load_request_locked(topo_path, n);
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

void ta_select_node_init(void)
{
	pthread_mutex_lock(&ta_lock);
	ta_window_linear = ta_read_window_linear();
	ta_reload_locked();
	ta_writer_start_locked();
	pthread_mutex_unlock(&ta_lock);
}
