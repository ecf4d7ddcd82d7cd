/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Strict reading of the topoaware options from a Slurm environment array (a job's
 * spank_job_env in slurmctld: "_SLURM_SPANK_OPTION_topoaware_<option>=<value>", option names with
 * '-' written as '_' by Slurm). Shared by the job_submit, select and spank plugins; plain C, no Slurm. */
#ifndef TA_ENV_H
#define TA_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "layout_c.h"

/* The prefix Slurm gives our options in spank_job_env (plugstack.h's SPANK_OPTION_ENV_PREFIX plus
 * the plugin name and '_'). */
#define TA_ENV_PREFIX "_SLURM_SPANK_OPTION_topoaware_"

/* A job's SPANK environment of more entries than this is refused rather than read in part: an
 * option past the bound would be seen by the job prolog but by neither job_submit nor the select
 * plugin (a layout never checked). Real jobs carry a handful; the bound keeps the work fixed
 * whatever a client sends. */
#define TA_ENV_MAX_ENTRIES 65536

/* The names in a job's SPANK environment that start with this are the select plugin's (written
 * when the job starts: the topology hash, the node order and its layout, the placement; the job
 * prolog, the tasks and the ring book trust them), never a client's. */
#define TA_RESERVED_PREFIX "TOPOAWARE_"

/* Fills *opts (initialised here) from env[0..count). Entries without the prefix are ignored. An
 * entry with the prefix but an unknown option, a value that does not parse, or an option given
 * twice is an error, and so is an environment of more than TA_ENV_MAX_ENTRIES entries: -1 with a
 * message in err naming the option (as --name=value). Returns 0 when all entries are good
 * (opts->set tells what was given; 0 = no topoaware option at all). */
int ta_options_from_env(topoaware_options_t *opts, char *const *env, uint32_t count, char *err, size_t errlen);

/* job_submit at submission: 0 if no entry of env[0..count) has a name starting with
 * TA_RESERVED_PREFIX, else -1 with a message in err naming the first (printable, shortened). */
int ta_env_check_reserved(char *const *env, uint32_t count, char *err, size_t errlen);

/* The option name for Slurm's canonical environment spelling ("rank_order" -> "rank-order"),
 * NULL if unknown. The names are the core's one list (topoaware_option_info). */
const char *ta_option_from_env_name(const char *env_name, size_t len);

/* The reverse: the job environment variable of an option ("rank-order" ->
 * "_SLURM_SPANK_OPTION_topoaware_rank_order") into buf. Returns 0, or -1 for an unknown option
 * or a buffer too small. */
int ta_option_env_name(const char *name, char *buf, size_t len);

/* Reads one variable `name` into buf of len bytes: 1 found, 0 unset, -1 unreadable (too long). */
typedef int (*ta_var_fn)(void *ctx, const char *name, char *buf, size_t len);

/* Fills *opts (initialised here) from the variables <prefix>_SLURM_SPANK_OPTION_topoaware_<option>,
 * read one by one through get: in a batch step, prefix "SLURM_SPANK_" gives the job's spank_job_env
 * as sbatch exports it (also with --export=NONE), the options that sbatch and job_submit checked.
 * A value that does not parse or cannot be read: -1 with a message naming the variable (printable
 * text). */
int ta_options_from_vars(topoaware_options_t *opts, const char *prefix, ta_var_fn get, void *ctx, char *err,
			 size_t errlen);

/* srun's record for its step's remote side (spank_topoaware(8)): the layout that srun's local side
 * checked, set by srun in its own environment (spank_setenv works only in remote context), which
 * srun copies into the step's environment after local_user_init (a SLURM name: it passes
 * --export=NONE too). */
#define TA_CHECKED_VAR "SLURM_TOPOAWARE_CHECKED"

/* The layout of opts as compared between srun and slurmstepd: "none" without a layout, else
 * "tp=T,cp=C,ep=E,dp=D,pp=P" and ",rank-order=ORDER" when the order was given. Returns 0, or -1 (buf
 * too small: truncated). */
int ta_options_key(const topoaware_options_t *opts, char *buf, size_t len);

/* 1 if `got` (the batch step's option callbacks: the exported environment) gives the same layout as
 * `checked` (the job's checked SPANK environment), else 0. An order that `got` does not give is not a
 * difference (the admin's default_order travels only in the SPANK environment). */
int ta_options_same_layout(const topoaware_options_t *checked, const topoaware_options_t *got);

#endif
