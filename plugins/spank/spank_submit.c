/* SPDX-License-Identifier: GPL-2.0-or-later */
/* spank_topoaware, the submit side: sbatch and salloc (allocator context) and srun (local context).
 * The layout as a whole is judged here, before a job or step exists; the admin's plugstack.conf
 * defaults fill in what the user did not say and travel with the job; srun checks its step's task
 * and node counts against the layout. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h> /* setenv */

#include <slurm/spank.h>

#include "layout_c.h"
#include "spank_topoaware.h"
#include "ta_env.h"

/* Sends an admin default with the job, under the same name as the user's option
 * (_SLURM_SPANK_OPTION_topoaware_<name>), so that job_submit/topoaware and the select plugin see
 * exactly what this host decided. */
static int ta_send_default(spank_t sp, unsigned bit, const char *value) {
  char envname[128];
  spank_err_t rc;

  if (ta_option_env_name(topoaware_option_name(bit), envname, sizeof(envname)) != 0) {
    slurm_error(TA ": internal error: no environment name for option bit %u", bit);
    return -1;
  }
  rc = spank_job_control_setenv(sp, envname, value, 0);
  if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS) {
    slurm_error(TA ": cannot pass %s=%s to the job: %s", envname, value, spank_strerror(rc));
    return -1;
  }
  return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av) {
  spank_context_t ctx = spank_context();
  topoaware_options_t *o = &ta_state.opts;
  const topoaware_spank_args_t *a = &ta_state.args;
  char err[TOPOAWARE_ERR_LEN];
  char wait[32], key[160];

  if (ctx == S_CTX_REMOTE) return ta_remote_post_opt(sp);
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) return 0;
  if (topoaware_options_check(o, err, sizeof(err)) != 0) {
    slurm_error(TA ": %s", err);
    return -1;
  }
  /* srun: what it checked (here and in local_user_init, or it stops), for its step's remote side
   * (spank_remote.c). srun copies its environment into the step's after local_user_init;
   * spank_setenv works only in remote context. Before the admin's defaults: the step does not get
   * those as options either. */
  if (ctx == S_CTX_LOCAL && (ta_options_key(o, key, sizeof(key)) != 0 || setenv(TA_CHECKED_VAR, key, 1) != 0)) {
    slurm_error(TA ": cannot record the checked layout in " TA_CHECKED_VAR);
    return -1;
  }
  if (!topoaware_options_has_layout(o)) return 0;
  /* Admin defaults fill in what the user did not say. */
  if (!(o->set & TOPOAWARE_OPT_RANK_ORDER) && a->has_default_order) {
    o->layout.order = a->default_order;
    if (ta_send_default(sp, TOPOAWARE_OPT_RANK_ORDER, topoaware_order_name(a->default_order))) return -1;
  }
  if (!(o->set & TOPOAWARE_OPT_TOPO_MODE) && a->has_default_mode) {
    o->mode = a->default_mode;
    if (ta_send_default(sp, TOPOAWARE_OPT_TOPO_MODE, topoaware_mode_name(a->default_mode))) return -1;
  }
  if (!(o->set & TOPOAWARE_OPT_MAX_WAIT) && a->has_default_max_wait && o->mode == TOPOAWARE_MODE_STRICT) {
    o->max_wait = a->default_max_wait;
    if (topoaware_wait_string(a->default_max_wait, wait, sizeof(wait)) == 0 &&
        ta_send_default(sp, TOPOAWARE_OPT_MAX_WAIT, wait))
      return -1;
  }
  return 0;
}

/* srun only: the step's own task and node counts are known here (spank.h: S_JOB_TOTAL_TASK_COUNT,
 * S_JOB_NNODES in local context). A step runs one task per GPU of its layout. */
int slurm_spank_local_user_init(spank_t sp, int ac, char **av) {
  uint32_t tasks = 0, nodes = 0;
  char lay[256];
  const topoaware_layout_t *l = &ta_state.opts.layout;
  uint64_t world;

  if (spank_context() != S_CTX_LOCAL || !topoaware_options_has_layout(&ta_state.opts)) return 0;
  if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_NNODES, &nodes) != ESPANK_SUCCESS || tasks == 0 || nodes == 0)
    return 0; /* nothing to compare with */
  world = topoaware_layout_world(l);
  topoaware_layout_string(l, lay, sizeof(lay));
  if (world != tasks) {
    slurm_error(TA
                ": the step has %u tasks but its layout (%s) has tp*cp*dp*pp = %llu ranks, one task per GPU; "
                "run srun -n %llu, or give srun the layout of these %u tasks",
                tasks, lay, (unsigned long long)world, (unsigned long long)world, tasks);
    return -1;
  }
  /* Whole TP groups per node, or (multi-node NVLink domains) whole nodes per TP group: whether those
   * nodes share a domain is the topology's question, which the tasks' rank order answers (no hints
   * rather than wrong ones); srun has no topology. */
  if (tasks % nodes == 0 && (tasks / nodes) % l->tp != 0 && l->tp % (tasks / nodes) != 0) {
    slurm_error(TA
                ": the step puts %u tasks on each of %u nodes, which does not hold whole TP groups of tp=%u; "
                "use a node count that gives a multiple of %u tasks per node",
                tasks / nodes, nodes, l->tp, l->tp);
    return -1;
  }
  return 0;
}
