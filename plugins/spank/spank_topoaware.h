/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the files of spank_topoaware.so share; private to plugins/spank/ (see spank_topoaware.c for
 * which file serves which SPANK context). */
#ifndef TA_SPANK_TOPOAWARE_H
#define TA_SPANK_TOPOAWARE_H

#include <stdint.h>

#include <slurm/spank.h>

#include "layout_c.h"
#include "task_c.h"

#define TA "topoaware"

/* The plugin's state: one process, one job or step. */
struct ta_plugin_state {
  topoaware_options_t opts;    /* the job's or step's options (the user's, then the admin's defaults) */
  topoaware_spank_args_t args; /* plugstack.conf arguments */
  /* a remote-side option value that did not parse (the submit side checked it; a task then gets
   * no hints rather than wrong ones) */
  int remote_invalid;
  /* an srun step's layout that srun's local side did not check (spank_remote.c): no hints */
  int unchecked;
  /* a warning for the task's stderr (spank_remote.c), printed by task 0 in task_init */
  char note[768];
  /* How slurmctld placed the job, from the job prolog's file (root's, mode 0600), read as root in
   * init_post_opt for the task hooks, which run as the job's user (ta_job_placement_prepare). */
  struct {
    int read;         /* 1: the file was looked at (what follows is what it held) */
    char hash[128];   /* "" if none */
    char *layout, *order; /* malloc'd, NULL if none */
    int rail_optimized;
  } placed;
};
extern struct ta_plugin_state ta_state;

/* spank_topoaware.c */
/* Starts the state afresh: options at their defaults, plugstack.conf arguments parsed (each bad
 * one logged and ignored). */
void ta_state_reset(int ac, char **av);
/* The option table of Slurm (struct spank_option), built from the core's one list
 * (topoaware_option_info); ends with SPANK_OPTIONS_TABLE_END. */
struct spank_option *ta_spank_options(void);
/* The state folder in effect (plugstack.conf state_dir=, else /run/topoaware). */
const char *ta_state_dir(void);
/* The state folder as an fd (topoaware_state_dir_open: with create, made 0755 by root if
 * missing). -1 on error (logged; a missing folder only when create). */
int ta_state_dir_fd(int create);

/* spank_submit.c: slurm_spank_init_post_opt, slurm_spank_local_user_init (sbatch, salloc, srun). */
/* spank_prolog.c: slurm_spank_job_prolog, slurm_spank_job_epilog (root, in slurmd). */
/* spank_remote.c (slurmstepd, after the option callbacks): the batch step takes the job's checked
 * layout, an srun step keeps only the layout srun checked. Always 0. */
int ta_remote_post_opt(spank_t sp);
/* Task 0 of a step prints the warning of ta_remote_post_opt, if any, on its stderr. */
void ta_remote_note_print(spank_t sp);

/* spank_task.c: slurm_spank_user_init, slurm_spank_task_init (slurmstepd), and: */
/* Root, in slurmstepd (init_post_opt) for a step (not the batch step) with a checked layout and
 * hints: this node's GPUs and NICs, read from the state folder's devices file or probed once and
 * kept there, so that user_init and the tasks do not probe hwloc again. Failures are logged. */
void ta_node_devices_prepare(spank_t sp);
/* Root, in slurmstepd (init_post_opt) for a layout step or batch step: the job prolog's placement
 * file into ta_state.placed. A missing file is no error (the job was not placed by the select
 * plugin, or the prolog did not run); the tasks then use the hash in the environment, if any. */
void ta_job_placement_prepare(spank_t sp);

#endif
