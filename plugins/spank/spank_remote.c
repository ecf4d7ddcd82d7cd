/* SPDX-License-Identifier: GPL-2.0-or-later */
/* spank_topoaware in slurmstepd (remote context), after the option callbacks and before the task
 * hooks: only a layout that was checked reaches the tasks (spank_topoaware(8), CHECKED LAYOUTS).
 *
 * slurmstepd calls the option callbacks for the options of the launch message and for every
 * _SLURM_SPANK_OPTION_topoaware_<option> variable of the step's environment (Slurm 22.05
 * src/common/plugstack.c, spank_stack_post_opt); such a variable may have been exported by hand or
 * left over, and then nobody checked it. So:
 *  - the batch step takes its layout from the job's SPANK environment as sbatch exports it
 *    (SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_*, also with --export=NONE): what sbatch and
 *    job_submit/topoaware checked. A different layout from the callbacks is ignored with a warning.
 *  - an srun step compares its layout with the one srun's local side checked and recorded in
 *    TA_CHECKED_VAR (spank_submit.c); a layout srun did not check gets no hints, with a warning.
 * The warning goes to slurmd's log at once and to the task's stderr in task_init (slurmstepd's own
 * stderr is not the job's). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <slurm/slurm.h> /* SLURM_BATCH_SCRIPT */
#include <slurm/spank.h>

#include "layout_c.h"
#include "spank_topoaware.h"
#include "ta_env.h"

#define TA_VARS "_SLURM_SPANK_OPTION_topoaware_* variables"

/* ta_var_fn over the step's environment. */
static int ta_var(void *ctx, const char *name, char *buf, size_t len) {
  spank_err_t rc = spank_getenv((spank_t)ctx, name, buf, (int)len);
  if (rc == ESPANK_SUCCESS) return 1;
  return rc == ESPANK_ENV_NOEXIST ? 0 : -1;
}

/* Keeps the warning for the task's stderr and logs it in slurmd's log. */
static void ta_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ta_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ta_state.note, sizeof(ta_state.note), fmt, ap);
  va_end(ap);
  slurm_error(TA ": %s", ta_state.note);
}

static void ta_batch_checked(spank_t sp) {
  topoaware_options_t checked;
  char err[TOPOAWARE_ERR_LEN], got[160], key[160];

  if (ta_options_from_vars(&checked, "SLURM_SPANK_", ta_var, sp, err, sizeof(err)) != 0) {
    ta_note("the job's checked options cannot be read: %s; no hostfile", err);
    ta_state.remote_invalid = 1;
    return;
  }
  /* No layout from the callbacks is no news: --export=NONE or a list of variables leaves them out. */
  if (topoaware_options_has_layout(&ta_state.opts) && !ta_options_same_layout(&checked, &ta_state.opts)) {
    ta_options_key(&ta_state.opts, got, sizeof(got));
    ta_options_key(&checked, key, sizeof(key));
    ta_note("the batch step's environment gives the layout %s (" TA_VARS
            "), which neither sbatch nor slurmctld checked; ignored, the job's checked layout is %s",
            got, key);
  }
  ta_state.opts = checked;
  ta_state.remote_invalid = 0;
}

static void ta_step_checked(spank_t sp) {
  char marker[160], shown[160], key[160];
  int found = ta_var(sp, TA_CHECKED_VAR, marker, sizeof(marker));

  if (found != 0 && spank_unsetenv(sp, TA_CHECKED_VAR) != ESPANK_SUCCESS)
    slurm_debug(TA ": cannot unset " TA_CHECKED_VAR);
  if (!topoaware_options_has_layout(&ta_state.opts)) return;
  ta_options_key(&ta_state.opts, key, sizeof(key));
  if (found == 1 && strcmp(marker, key) == 0) return;
  ta_state.unchecked = 1;
  if (found == 1 && strcmp(marker, "none") == 0)
    ta_note("the step's layout %s comes from " TA_VARS
            " in its environment, not from srun's options (srun checked no layout); tasks get no topoaware "
            "hints: give srun --tp/--pp/... or unset those variables",
            key);
  else if (found == 1)
    ta_note("the step's layout %s is not the one srun checked (%s): " TA_VARS
            " in its environment changed it; tasks get no topoaware hints",
            key, topoaware_printable(marker, 128, shown, sizeof(shown)));
  else
    ta_note("srun did not record a checked layout for this step (" TA_CHECKED_VAR
            " is not set: an srun without spank_topoaware?); its layout %s is not used, tasks get no topoaware hints",
            key);
}

int ta_remote_post_opt(spank_t sp) {
  uint32_t step_id = 0;

  ta_state.note[0] = '\0';
  ta_state.unchecked = 0;
  if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) return 0;
  if (step_id == SLURM_BATCH_SCRIPT) {
    ta_batch_checked(sp);
  } else {
    ta_step_checked(sp);
    ta_node_devices_prepare(sp); /* still root here; user_init is not */
  }
  ta_job_placement_prepare(sp); /* root too: the file is root's */
  return 0;
}

void ta_remote_note_print(spank_t sp) {
  int local_id = -1;
  if (!ta_state.note[0]) return;
  if (spank_get_item(sp, S_TASK_ID, &local_id) == ESPANK_SUCCESS && local_id == 0)
    fprintf(stderr, TA ": warning: %s\n", ta_state.note);
}
