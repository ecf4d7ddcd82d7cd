/* SPDX-License-Identifier: GPL-2.0-or-later */
/* spank_topoaware.so: the --tp/--pp/--dp/--cp/--ep, --rank-order, --topo-mode, --topo-max-wait,
 * --nccl-hints and --topo-migrate options of sbatch, salloc and srun (spank_topoaware(8)).
 *
 * One file per job, as pyxis does:
 *   spank_topoaware.c  the plugin's state, its plugstack.conf arguments, the options and
 *                      slurm_spank_init (every context)
 *   spank_submit.c     sbatch/salloc (allocator) and srun (local): the layout as a whole, the
 *                      admin's defaults, the step's task count
 *   spank_prolog.c     the job prolog and epilog (root, in slurmd): the job's folder and hash file
 *   spank_task.c       slurmstepd (remote): the task hooks
 *   spank_remote.c     slurmstepd (remote), after the option callbacks: only checked layouts
 *                      (the batch step's from the job's SPANK environment, a step's if srun checked it)
 *
 * Contexts (spank.h): sbatch/salloc (allocator) call init, init_post_opt and exit; srun (local)
 * calls init, init_post_opt, local_user_init and exit; slurmstepd (remote) calls init, then the
 * option callbacks with the values the submit side forwarded, then the task hooks:
 * slurm_spank_task_init (as the user, after Slurm set SLURM_PROCID and CUDA_VISIBLE_DEVICES) gives
 * each task of a layout step its coordinates, launcher variables, GPU order and NCCL hints, all
 * computed by the core (capi/task_c.h; hwloc through node/hwloc_probe). Any failure there is a
 * warning and a task with no hints at all, never a failed task. In the batch step (not a rank)
 * it writes the job's hostfile and rank map instead.
 *
 * Privileges: slurm_spank_job_prolog and slurm_spank_job_epilog run as root in slurmd (through
 * `slurmstepd spank prolog|epilog`); they only create the job's private folder
 * <state_dir>/job.<id> for the job's user and remove it again (capi/job_dir_c.h). Also as root,
 * in slurmstepd's init_post_opt of a layout step, the node's GPUs and NICs are probed once per boot
 * and kept in <state_dir>/node.<name>.devices (spank_task.c, ta_node_devices_prepare), and the job
 * prolog's placement file (root's, mode 0600) is read (ta_job_placement_prepare). Everything else
 * that reads a file or a user's option value runs as the job's user, in slurmstepd's task_init.
 *
 * Slurm calls an option's callback once per source (sbatch: script, environment, command line;
 * srun: environment, command line); every call is checked at once and the last one wins, like
 * Slurm's own options. The layout as a whole is judged in init_post_opt, so a bad combination
 * stops the command before a job exists. The layout logic, the option names and the parsing of
 * the plugstack.conf arguments are the core's (layout_c.h, task_c.h); what is here reads Slurm's
 * structures, calls the core and logs. */
#include <errno.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "job_dir_c.h"
#include "layout_c.h"
#include "spank_topoaware.h"
#include "task_c.h"

SPANK_PLUGIN(topoaware, 1);

struct ta_plugin_state ta_state;

/* An option is a bit of an unsigned: at most 32 of them, and the table's end. */
#define TA_MAX_OPTIONS 32
static struct spank_option ta_opts[TA_MAX_OPTIONS + 1];

static int ta_opt_cb(int val, const char *optarg, int remote) {
  char err[TOPOAWARE_ERR_LEN], shown[256];
  const char *name = topoaware_option_name((unsigned)val);

  if (!name) {
    slurm_error(TA ": internal error: option value %d is not ours", val);
    return -1;
  }
  if (topoaware_options_set(&ta_state.opts, name, optarg, err, sizeof(err)) != 0) {
    topoaware_printable(optarg, 64, shown, sizeof(shown));
    if (remote) {
      /* slurmstepd: never stop a step here; remember it so that no hints are derived. */
      slurm_error(TA ": --%s=%s: %s; tasks get no topoaware hints", name, shown, err);
      ta_state.remote_invalid = 1;
      return 0;
    }
    /* Slurm then prints "Invalid --<name> argument" and the command exits non-zero. */
    slurm_error(TA ": --%s=%s: %s", name, shown, err);
    return -1;
  }
  return 0;
}

struct spank_option *ta_spank_options(void) {
  const topoaware_option_info_t *o;
  uint32_t i;

  if (ta_opts[0].name) return ta_opts;
  for (i = 0; i < TA_MAX_OPTIONS && (o = topoaware_option_info(i)) != NULL; i++) {
    /* Slurm's structure has no const; Slurm only reads these strings. */
    ta_opts[i].name = (char *)o->name;
    ta_opts[i].arginfo = (char *)o->arginfo;
    ta_opts[i].usage = (char *)o->usage;
    ta_opts[i].has_arg = o->arginfo ? 1 : 0; /* --topo-migrate is a flag */
    ta_opts[i].val = (int)o->bit;
    ta_opts[i].cb = ta_opt_cb;
  }
  return ta_opts; /* ta_opts[i] stays all zero: SPANK_OPTIONS_TABLE_END */
}

static void ta_arg_warning(void *ctx, const char *msg) {
  (void)ctx;
  slurm_error(TA ": %s", msg);
}

void ta_state_reset(int ac, char **av) {
  char err[TOPOAWARE_ERR_LEN];

  memset(&ta_state, 0, sizeof(ta_state));
  topoaware_options_init(&ta_state.opts);
  /* A bad argument is logged and ignored: a typo of the admin must not break every srun and sbatch. */
  if (topoaware_spank_args_parse(&ta_state.args, ac, av, ta_arg_warning, NULL, err, sizeof(err)) != 0)
    slurm_error(TA ": plugstack.conf arguments: %s; arguments ignored", err);
}

const char *ta_state_dir(void) { return topoaware_spank_state_dir(&ta_state.args); }

int ta_state_dir_fd(int create) {
  char err[TOPOAWARE_ERR_LEN];
  int fd = topoaware_state_dir_open(ta_state_dir(), create, err, sizeof(err));
  if (fd < 0 && (create || errno != ENOENT)) slurm_error(TA ": %s; the state folder is not used", err);
  return fd;
}

/* The one option table, registered with spank_option_register in every context that has options
 * (a static spank_options table is not enough for sbatch; docs/design.md, "Slurm releases and
 * the ABI"). */
int slurm_spank_init(spank_t sp, int ac, char **av) {
  spank_context_t ctx = spank_context();
  struct spank_option *o;

  memset(&ta_state, 0, sizeof(ta_state));
  topoaware_options_init(&ta_state.opts);
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE) return 0; /* slurmd */
  ta_state_reset(ac, av);
  for (o = ta_spank_options(); o->name; o++) {
    spank_err_t rc = spank_option_register(sp, o);
    if (rc != ESPANK_SUCCESS) {
      slurm_error(TA ": cannot register --%s: %s", o->name, spank_strerror(rc));
      return -1;
    }
  }
  return 0;
}
