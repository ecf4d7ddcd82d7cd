/* SPDX-License-Identifier: GPL-2.0-or-later */
/* spank_topoaware in slurmstepd (remote context), as the job's user: the task hooks.
 * ta_node_devices_prepare (root, from init_post_opt) loads the node's GPUs and NICs, probed once
 * per boot; slurm_spank_user_init computes once per node what every task of a layout step shares;
 * slurm_spank_task_init (after Slurm set SLURM_PROCID and CUDA_VISIBLE_DEVICES) gives each task its
 * coordinates, launcher variables, GPU order and NCCL hints, all computed by the core
 * (capi/task_c.h; hwloc through node/hwloc_probe). Any failure here is a warning and a task with
 * no hints at all, never a failed task. The batch step (not a rank) gets the job's hostfile and
 * rank map instead, in the job's folder that the job prolog made (spank_prolog.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h> /* SLURM_BATCH_SCRIPT */
#include <slurm/spank.h>

#include "job_dir_c.h"
#include "layout_c.h"
#include "spank_topoaware.h"
#include "task_c.h"

#define TA_HOSTFILE "hostfile"
#define TA_RANKMAP "rankmap"
#define TA_DEFAULT_TOPOLOGY "/etc/slurm/topology.json"
/* A task environment variable of at most max bytes (task_c.h: the client sent it) into a malloc'd
 * buffer; NULL if unset, unreadable or longer, with *too_long (if not NULL) set in the last case. */
static char *ta_getenv_max(spank_t sp, const char *name, size_t max, int *too_long) {
  size_t len = max + 1 < 4096 ? max + 1 : 4096;
  if (too_long) *too_long = 0;
  for (;;) {
    char *buf = malloc(len);
    spank_err_t rc;
    if (!buf) return NULL;
    rc = spank_getenv(sp, name, buf, (int)len);
    if (rc == ESPANK_SUCCESS) return buf;
    free(buf);
    if (rc != ESPANK_NOSPACE) return NULL;
    if (len > max) {
      if (too_long) *too_long = 1;
      slurm_error(TA ": %s is longer than %zu bytes: not read", name, max);
      return NULL;
    }
    len = len * 4 < max + 1 ? len * 4 : max + 1;
  }
}

static int ta_isset(spank_t sp, const char *name) {
  char c[2];
  spank_err_t rc = spank_getenv(sp, name, c, sizeof(c));
  return rc == ESPANK_SUCCESS || rc == ESPANK_NOSPACE;
}

/* The topology file: plugstack.conf topology=, else topoaware.conf's TopologyFile, else
 * topology.json beside topoaware.conf, which is beside slurm.conf ($SLURM_CONF, set by Slurm in
 * slurmstepd and the commands): topoaware_default_paths, the select plugin's rule too. */
static void ta_topology_path(char *buf, size_t len) {
  char err[TOPOAWARE_ERR_LEN];
  int found = 0;
  topoaware_conf_t *conf;

  if (ta_state.args.topology[0]) {
    snprintf(buf, len, "%s", ta_state.args.topology);
    return;
  }
  if (topoaware_default_paths(NULL, NULL, 0, buf, len) != 0) snprintf(buf, len, "%s", TA_DEFAULT_TOPOLOGY);
  conf = topoaware_conf_load(NULL, &found, err, sizeof(err));
  if (!conf) {
    slurm_error(TA ": %s; using %s", err, buf);
    return;
  }
  if (topoaware_conf_topology(conf, buf, len) != 0) snprintf(buf, len, "%s", TA_DEFAULT_TOPOLOGY);
  topoaware_conf_free(conf);
}

/* Warns in slurmd's log and, once per node, on the task's stderr. */
static void ta_no_hints(int local_id, const char *why) {
  slurm_error(TA ": this task gets no topoaware hints: %s", why);
  if (local_id == 0) fprintf(stderr, TA ": warning: tasks on this node get no topoaware hints: %s\n", why);
}

/* The hash the select plugin placed the job with: the job prolog's file (read as root in
 * init_post_opt), else the variable (spank_topoaware(8)); NULL if neither. malloc'd. */
static char *ta_expected_hash(spank_t sp) {
  if (ta_state.placed.hash[0]) return strdup(ta_state.placed.hash);
  return ta_getenv_max(sp, "SPANK_TOPOAWARE_TOPO_HASH", TOPOAWARE_SHORT_VAR_MAX_LEN, NULL);
}

/* The layout and node order slurmctld placed the job with, if the job prolog recorded them:
 * malloc'd copies into *layout and *order (both NULL if none). */
static void ta_placed_copy(char **layout, char **order, int *rail_optimized) {
  *layout = *order = NULL;
  if (!ta_state.placed.layout || !ta_state.placed.order) return;
  *layout = strdup(ta_state.placed.layout);
  *order = strdup(ta_state.placed.order);
  if (!*layout || !*order) {
    free(*layout);
    free(*order);
    *layout = *order = NULL;
    return;
  }
  *rail_optimized = ta_state.placed.rail_optimized;
}

void ta_job_placement_prepare(spank_t sp) {
  uint32_t job_id = 0;
  int dfd;

  if (ta_state.placed.read || !topoaware_options_has_layout(&ta_state.opts) || ta_state.remote_invalid) return;
  if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS || !job_id) return;
  ta_state.placed.read = 1;
  if ((dfd = ta_state_dir_fd(0)) < 0) return;
  if (!topoaware_job_hash_read(dfd, job_id, ta_state.placed.hash, sizeof(ta_state.placed.hash)))
    ta_state.placed.hash[0] = '\0';
  else if (!topoaware_job_placement_read(dfd, job_id, &ta_state.placed.layout, &ta_state.placed.order,
                                         &ta_state.placed.rail_optimized))
    ta_state.placed.layout = ta_state.placed.order = NULL;
  close(dfd);
}

/* The batch step is not a rank: it gets the job's hostfile (SLURM_HOSTFILE for srun
 * --distribution=arbitrary) and rank map in the job's private folder, written as the job's user
 * (task_init runs after become_user) into the folder the job prolog made for that user. */
static void ta_batch_step(spank_t sp, uint32_t job_id) {
  char topo[4096], err[TOPOAWARE_ERR_LEN], dir[1200], path[1300];
  char *nodes = NULL, *hash = NULL, *placed_layout = NULL, *placed_order = NULL;
  int placed_rail = 0;
  topoaware_job_in_t in;
  topoaware_job_map_t *map = NULL;
  const char *text;
  int sfd = -1, jfd = -1, too_long = 0;

  if (ta_state.remote_invalid) {
    fprintf(stderr, TA ": warning: no hostfile for this job: an option value did not parse (see slurmd's log)\n");
    return;
  }
  nodes = ta_getenv_max(sp, "SLURM_JOB_NODELIST", TOPOAWARE_NODELIST_MAX_LEN, &too_long);
  if (!nodes) {
    snprintf(err, sizeof(err),
             too_long ? "SLURM_JOB_NODELIST is longer than %u bytes" : "SLURM_JOB_NODELIST is not set",
             TOPOAWARE_NODELIST_MAX_LEN);
    goto fail;
  }
  hash = ta_expected_hash(sp);
  ta_topology_path(topo, sizeof(topo));
  memset(&in, 0, sizeof(in));
  in.topology_path = topo;
  in.expected_hash = hash;
  in.nodelist = nodes;
  in.layout = &ta_state.opts.layout;
  /* slurmctld's order (the job prolog's file), which the job's own steps' tasks get */
  if (hash) ta_placed_copy(&placed_layout, &placed_order, &placed_rail);
  in.placed_layout = placed_layout;
  in.placed_order = placed_order;
  if (!(map = topoaware_job_map(&in, err, sizeof(err)))) goto fail;
  if ((sfd = topoaware_state_dir_open(ta_state_dir(), 0, err, sizeof(err))) < 0) goto fail;
  if ((jfd = topoaware_job_dir_open(sfd, job_id, err, sizeof(err))) < 0) {
    if (errno == ENOENT)
      snprintf(err, sizeof(err), "%.900s/job.%u does not exist (the job prolog makes it: spank_topoaware(8), FILES)",
               ta_state_dir(), job_id);
    goto fail;
  }
  text = topoaware_job_map_hostfile(map);
  if (topoaware_file_write_at(jfd, TA_HOSTFILE, text, strlen(text), err, sizeof(err)) != 0) goto fail;
  text = topoaware_job_map_rankmap(map);
  if (topoaware_file_write_at(jfd, TA_RANKMAP, text, strlen(text), err, sizeof(err)) != 0) goto fail;
  snprintf(dir, sizeof(dir), "%s/job.%u", ta_state_dir(), job_id);
  snprintf(path, sizeof(path), "%s/" TA_HOSTFILE, dir);
  if (spank_setenv(sp, "TOPOAWARE_HOSTFILE", path, 1) != ESPANK_SUCCESS)
    slurm_error(TA ": cannot set TOPOAWARE_HOSTFILE");
  snprintf(path, sizeof(path), "%s/" TA_RANKMAP, dir);
  if (spank_setenv(sp, "TOPOAWARE_RANKMAP", path, 1) != ESPANK_SUCCESS)
    slurm_error(TA ": cannot set TOPOAWARE_RANKMAP");
  if (ta_state.opts.nccl_hints == TOPOAWARE_HINTS_PRINT)
    fprintf(stderr, TA ": hostfile %s/" TA_HOSTFILE " and rank map %s: %u ranks on %u nodes in topology order\n", dir,
            path, topoaware_job_map_ranks(map), topoaware_job_map_nodes(map));
  slurm_debug(TA ": job %u: hostfile and rank map in %s (%u ranks, topology %s)", job_id, dir,
              topoaware_job_map_ranks(map), topoaware_job_map_hash(map));
  goto out;
fail:
  slurm_error(TA ": no hostfile for job %u: %s", job_id, err);
  fprintf(stderr, TA ": warning: no hostfile for this job: %s\n", err);
out:
  if (jfd >= 0) close(jfd);
  if (sfd >= 0) close(sfd);
  topoaware_job_map_free(map);
  free(nodes);
  free(hash);
  free(placed_layout);
  free(placed_order);
}

/* Appends name to a ", "-separated list in buf. */
static void ta_list_add(char *buf, size_t len, const char *name) {
  size_t n = strlen(buf);
  if (n < len) snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
}

/* The inputs of the task plan that every task of the step on this node shares, read from the
 * step's environment (the same in user_init and task_init): the strings are malloc'd into *t. */
typedef struct {
  char topo[4096];
  char *nodes, *self, *hash, *order;
  char *placed_layout, *placed_order; /* how slurmctld placed the job (job prolog's file) */
  int placed_rail_optimized;
  topoaware_task_in_t in;
} ta_task_inputs_t;

static void ta_task_inputs_free(ta_task_inputs_t *t) {
  free(t->nodes);
  free(t->self);
  free(t->hash);
  free(t->order);
  free(t->placed_layout);
  free(t->placed_order);
}

/* 0, or -1 with *why (no hints) when the node list or the node's name is unknown. */
static int ta_task_inputs(spank_t sp, uint32_t job_id, uint32_t local_tasks, uint32_t total_tasks, ta_task_inputs_t *t,
                          const char **why) {
  int too_long = 0;
  memset(t, 0, sizeof(*t));
  t->nodes = ta_getenv_max(sp, "SLURM_STEP_NODELIST", TOPOAWARE_NODELIST_MAX_LEN, &too_long);
  if (!t->nodes && !too_long) /* the job's list stands in only for a missing step list */
    t->nodes = ta_getenv_max(sp, "SLURM_JOB_NODELIST", TOPOAWARE_NODELIST_MAX_LEN, &too_long);
  if (too_long) {
    static char msg[96];
    snprintf(msg, sizeof(msg), "the step's node list is longer than %u bytes", TOPOAWARE_NODELIST_MAX_LEN);
    *why = msg;
    return -1;
  }
  t->self = ta_getenv_max(sp, "SLURMD_NODENAME", TOPOAWARE_NODENAME_MAX_LEN, NULL);
  if (!t->self && getenv("SLURMD_NODENAME")) t->self = strdup(getenv("SLURMD_NODENAME")); /* slurmstepd's own */
  if (!t->nodes || !t->self) {
    *why = "SLURM_STEP_NODELIST or SLURMD_NODENAME is not set";
    return -1;
  }
  t->hash = ta_expected_hash(sp);
  if (t->hash) ta_placed_copy(&t->placed_layout, &t->placed_order, &t->placed_rail_optimized);
  t->order = ta_getenv_max(sp, "CUDA_DEVICE_ORDER", TOPOAWARE_SHORT_VAR_MAX_LEN, &too_long);
  if (too_long) t->order = strdup("(too long to read)"); /* set, and not PCI_BUS_ID: no GPU hints */
  ta_topology_path(t->topo, sizeof(t->topo));
  t->in.topology_path = t->topo;
  t->in.expected_hash = t->hash;
  t->in.placed_layout = t->placed_layout;
  t->in.placed_order = t->placed_order;
  t->in.placed_rail_optimized = t->placed_rail_optimized;
  t->in.nodelist = t->nodes;
  t->in.self = t->self;
  t->in.local_tasks = local_tasks;
  t->in.total_tasks = total_tasks;
  t->in.job_id = job_id;
  t->in.layout = &ta_state.opts.layout;
  t->in.exclude_nics = ta_state.args.exclude_nics[0] ? ta_state.args.exclude_nics : NULL;
  t->in.hwloc_xml = NULL; /* this machine, or slurmd's HWLOC_XMLFILE */
  /* Slurm's GPU indices follow PCI bus order; a user's other CUDA_DEVICE_ORDER would renumber them
   * (unless the admin lets topoaware replace it: override_env=CUDA_DEVICE_ORDER). */
  t->in.gpu_hints = !(t->order && strcmp(t->order, "PCI_BUS_ID") != 0) ||
                    topoaware_spank_args_overrides(&ta_state.args, "CUDA_DEVICE_ORDER");
  return 0;
}

/* Root, in slurmstepd before a layout step's tasks: this node's GPUs and NICs from the state
 * folder's devices file (a probe of this boot), else probed once and kept there for later steps
 * (topoaware_node_devices_load). A failure changes nothing: user_init probes as before. */
void ta_node_devices_prepare(spank_t sp) {
  char err[TOPOAWARE_ERR_LEN];
  const char *self = getenv("SLURMD_NODENAME"); /* slurmstepd's own, not the step's environment */
  uint32_t step_id = 0;
  int dfd, rc;

  if (!topoaware_options_has_layout(&ta_state.opts) || ta_state.remote_invalid || ta_state.unchecked ||
      ta_state.opts.nccl_hints == TOPOAWARE_HINTS_OFF || !self)
    return;
  if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS || step_id == SLURM_BATCH_SCRIPT) return;
  if ((dfd = ta_state_dir_fd(1)) < 0) return;
  rc = topoaware_node_devices_load(dfd, self, ta_state.args.exclude_nics[0] ? ta_state.args.exclude_nics : NULL, err,
                                   sizeof(err));
  close(dfd);
  if (rc < 0)
    slurm_error(TA ": this node's GPUs and NICs: %s", err);
  else
    slurm_debug(TA ": this node's GPUs and NICs %s %s/node.%s.devices", rc == 0 ? "read from" : "probed, kept in",
                ta_state_dir(), self);
}

/* A step of a layout job, in slurmstepd before it forks the tasks: what they all share (the
 * topology, this node's ranks, hwloc's GPUs and NICs) is computed once here; each task's
 * task_init then takes only its own part. A failure here changes nothing: task_init computes it
 * again and reports it. */
int slurm_spank_user_init(spank_t sp, int ac, char **av) {
  ta_task_inputs_t t;
  const char *why = NULL;
  char err[TOPOAWARE_ERR_LEN];
  uint32_t job_id = 0, step_id = 0, local_tasks = 0, total_tasks = 0;

  (void)ac;
  (void)av;
  if (spank_context() != S_CTX_REMOTE || !topoaware_options_has_layout(&ta_state.opts) || ta_state.remote_invalid ||
      ta_state.unchecked)
    return 0;
  if (ta_state.opts.nccl_hints == TOPOAWARE_HINTS_OFF) return 0;
  if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS || step_id == SLURM_BATCH_SCRIPT ||
      spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total_tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS)
    return 0;
  if (ta_task_inputs(sp, job_id, local_tasks, total_tasks, &t, &why) == 0 &&
      topoaware_task_prepare(&t.in, err, sizeof(err)) != 0)
    slurm_debug(TA ": step preparation: %s (each task tries again)", err);
  ta_task_inputs_free(&t);
  return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av) {
  char err[TOPOAWARE_ERR_LEN], kept[512] = "", replaced[512] = "", shown[128];
  char *cvd = NULL;
  ta_task_inputs_t t;
  topoaware_task_in_t in;
  topoaware_task_plan_t *plan = NULL;
  uint32_t i, job_id = 0, step_id = 0, local_tasks = 0, total_tasks = 0;
  int local_id = -1, cvd_too_long = 0;
  const char *why = NULL;

  (void)ac;
  (void)av;
  if (spank_context() != S_CTX_REMOTE) return 0;
  ta_remote_note_print(sp); /* a layout nobody checked (spank_remote.c) */
  if (!topoaware_options_has_layout(&ta_state.opts) || ta_state.unchecked) return 0;
  if (ta_state.opts.nccl_hints == TOPOAWARE_HINTS_OFF) return 0;
  if (spank_get_item(sp, S_JOB_STEPID, &step_id) == ESPANK_SUCCESS && step_id == SLURM_BATCH_SCRIPT &&
      spank_get_item(sp, S_JOB_ID, &job_id) == ESPANK_SUCCESS) {
    ta_batch_step(sp, job_id);
    return 0;
  }
  if (spank_get_item(sp, S_TASK_ID, &local_id) != ESPANK_SUCCESS || local_id < 0 ||
      spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total_tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) {
    ta_no_hints(0, "Slurm does not tell the task id, task counts or job id");
    return 0;
  }
  if (ta_state.remote_invalid) {
    ta_no_hints(local_id, "an option value did not parse (see slurmd's log)");
    return 0;
  }
  if (ta_task_inputs(sp, job_id, local_tasks, total_tasks, &t, &why) != 0) {
    ta_no_hints(local_id, why);
    goto out;
  }
  /* Order of the plugins: Slurm's CUDA_VISIBLE_DEVICES is read here, after Slurm set it. */
  cvd = ta_getenv_max(sp, "CUDA_VISIBLE_DEVICES", TOPOAWARE_CVD_MAX_LEN, &cvd_too_long);
  if (cvd_too_long) {
    snprintf(err, sizeof(err), "CUDA_VISIBLE_DEVICES is longer than %u bytes", TOPOAWARE_CVD_MAX_LEN);
    ta_no_hints(local_id, err);
    goto out;
  }
  in = t.in;
  in.local_id = (uint32_t)local_id;
  in.cuda_visible_devices = cvd;
  if (!in.gpu_hints && local_id == 0)
    fprintf(stderr, TA ": CUDA_DEVICE_ORDER=%s is set: CUDA_VISIBLE_DEVICES and NCCL_IB_HCA left alone\n",
            topoaware_printable(t.order, 32, shown, sizeof(shown)));

  plan = topoaware_task_plan(&in, err, sizeof(err));
  if (!plan) {
    ta_no_hints(local_id, err);
    goto out;
  }
  if (*topoaware_task_plan_note(plan) && local_id == 0) fprintf(stderr, TA ": %s\n", topoaware_task_plan_note(plan));
  for (i = 0; i < topoaware_task_plan_vars(plan); i++) {
    const char *name = topoaware_task_plan_name(plan, i), *value = topoaware_task_plan_value(plan, i);
    int kind = topoaware_task_plan_kind(plan, i);
    spank_err_t rc;
    if (kind == TOPOAWARE_VAR_DEFAULT && ta_isset(sp, name)) {
      if (!topoaware_spank_args_overrides(&ta_state.args, name)) { /* the user's value wins */
        ta_list_add(kept, sizeof(kept), name);
        continue;
      }
      ta_list_add(replaced, sizeof(replaced), name);
    }
    rc = spank_setenv(sp, name, value, 1);
    if (rc != ESPANK_SUCCESS) slurm_error(TA ": cannot set %s: %s", name, spank_strerror(rc));
  }
  /* Once per node: which of the task's own values were kept or, by the admin's override_env=, replaced. */
  if (local_id == 0 && kept[0]) {
    slurm_info(TA ": kept the job's own %s (plugstack.conf override_env= would replace them)", kept);
    fprintf(stderr, TA ": kept the job's own %s (set before topoaware; TOPOAWARE_* have topoaware's values)\n", kept);
  }
  if (local_id == 0 && replaced[0]) {
    slurm_info(TA ": replaced the job's own %s (plugstack.conf override_env=)", replaced);
    fprintf(stderr, TA ": replaced the job's own %s with topoaware's values (the site's override_env=)\n", replaced);
  }
  if (ta_state.opts.nccl_hints == TOPOAWARE_HINTS_PRINT)
    fprintf(stderr, TA ": %s\n", topoaware_task_plan_map_line(plan));
  slurm_debug(TA ": task %d: %s (topology %s, %s)", local_id, topoaware_task_plan_map_line(plan), t.topo,
              topoaware_task_plan_hash(plan));
out:
  topoaware_task_plan_free(plan);
  ta_task_inputs_free(&t);
  free(cvd);
  return 0;
}
