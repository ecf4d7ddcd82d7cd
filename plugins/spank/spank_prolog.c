/* SPDX-License-Identifier: GPL-2.0-or-later */
/* spank_topoaware as root in slurmd: the job prolog and epilog (`slurmstepd spank prolog|epilog`).
 *
 * The node's state folder: the select plugin appends TOPOAWARE_TOPO_HASH to the job's SPANK
 * environment; Slurm gives it to the job prolog as SPANK_TOPOAWARE_TOPO_HASH, but not to the tasks
 * (Slurm 22.05). So the job prolog writes it to <state_dir>/job.<jobid>.hash, task_init reads it,
 * and the job epilog removes it (capi/job_dir_c.h).
 * For a layout job the prolog also makes <state_dir>/job.<jobid>/, owned by the job's user, mode
 * 0700; the batch step writes the hostfile and rank map there as that user; the epilog takes the
 * folder back and removes it. Root only makes and removes: it never reads what a user wrote.
 * Neither hook ever fails: a failed prolog would drain the node. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "job_dir_c.h"
#include "layout_c.h"
#include "spank_topoaware.h"

static uint32_t ta_script_job_id(spank_t sp) {
  uint32_t id = 0;
  const char *e;
  if (spank_get_item(sp, S_JOB_ID, &id) == ESPANK_SUCCESS && id) return id;
  e = getenv("SLURM_JOB_ID");
  return e ? (uint32_t)strtoul(e, NULL, 10) : 0;
}

/* In the job prolog and epilog: the job's options from the SPANK job environment (Slurm gives
 * spank_option_getopt the SPANK__SLURM_SPANK_OPTION_* variables there), into ta_state.opts. 1 if
 * the job has a layout and wants hints. */
static int ta_script_layout_job(spank_t sp) {
  char err[TOPOAWARE_ERR_LEN];
  struct spank_option *o;

  for (o = ta_spank_options(); o->name; o++) {
    char *arg = NULL;
    if (spank_option_getopt(sp, o, &arg) != ESPANK_SUCCESS || !arg) continue;
    if (topoaware_options_set(&ta_state.opts, o->name, arg, err, sizeof(err)) != 0) return 0; /* checked at submit */
  }
  return topoaware_options_has_layout(&ta_state.opts) && ta_state.opts.nccl_hints != TOPOAWARE_HINTS_OFF;
}

static int ta_env_is_one(const char *name) {
  const char *v = getenv(name);
  return v && !strcmp(v, "1");
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av) {
  const char *h = getenv("SPANK_TOPOAWARE_TOPO_HASH");
  char err[TOPOAWARE_ERR_LEN];
  uint32_t id;
  uid_t uid;
  gid_t gid;
  int dfd, layout;

  ta_state_reset(ac, av); /* slurm_spank_init is not called before the job prolog (seen on 22.05) */
  if (h && !topoaware_topo_hash_valid(h)) {
    slurm_error(TA ": job prolog: SPANK_TOPOAWARE_TOPO_HASH is not a sha256 hash; ignored");
    h = NULL;
  }
  layout = ta_script_layout_job(sp);
  if (!h && !layout) return 0; /* not a layout job, and no select/cons_tres_topoaware */
  id = ta_script_job_id(sp);
  if (!id || (dfd = ta_state_dir_fd(1)) < 0) return 0;
  /* The job's private folder (root makes it, then hands it to the job's user). */
  if (layout) {
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
      slurm_error(TA ": job prolog: Slurm does not tell the job's uid and gid; no job folder");
    else if (topoaware_job_dir_create(dfd, id, uid, gid, err, sizeof(err)) != 0)
      slurm_error(TA ": job prolog: %s/%s", ta_state_dir(), err);
  }
  /* With the hash, how slurmctld placed the job (its layout and node order, no topology file needed
   * on the node for the job's own steps); a malformed one is left out by the core. */
  if (h && topoaware_job_hash_write(dfd, id, h, getenv("SPANK_TOPOAWARE_ORDER_LAYOUT"),
                                    getenv("SPANK_TOPOAWARE_NODE_ORDER"),
                                    ta_env_is_one("SPANK_TOPOAWARE_RAIL_OPTIMIZED"), err, sizeof(err)) != 0)
    slurm_error(TA ": job prolog: cannot write %s/%s", ta_state_dir(), err);
  close(dfd);
  return 0; /* never fail the prolog: that would drain the node */
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
  char err[TOPOAWARE_ERR_LEN];
  uint32_t id;
  int dfd;

  ta_state_reset(ac, av);
  id = ta_script_job_id(sp);
  if (!id || (dfd = ta_state_dir_fd(0)) < 0) return 0;
  if (topoaware_job_hash_remove(dfd, id, err, sizeof(err)) != 0)
    slurm_error(TA ": job epilog: cannot remove %s/%s", ta_state_dir(), err);
  /* Every job: a folder may be there even if this job's options no longer tell (a changed plugstack.conf). */
  if (topoaware_job_dir_remove(dfd, id, err, sizeof(err)) != 0)
    slurm_error(TA ": job epilog: %s/%s", ta_state_dir(), err);
  /* What earlier epilogs could not finish within their bounds (and what this one just moved aside):
   * each epilog removes some more, so no job's leftovers stay on the node's file system for good. */
  if (topoaware_state_sweep(dfd, err, sizeof(err)) != 0)
    slurm_info(TA ": job epilog: %s: %s", ta_state_dir(), err);
  close(dfd);
  return 0;
}
