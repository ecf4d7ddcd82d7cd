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

/* At most this many entries of the environment are looked at (slurmctld limits a job's
 * environment too; this keeps the work bounded whatever a client sends). */
#define TA_ENV_MAX_ENTRIES 65536

/* Fills *opts (initialised here) from env[0..count). Entries without the prefix are ignored. An
 * entry with the prefix but an unknown option, a value that does not parse, or an option given
 * twice is an error: -1 with a message in err naming the option (as --name=value). Returns 0 when
 * all entries are good (opts->set tells what was given; 0 = no topoaware option at all). */
int ta_options_from_env(topoaware_options_t *opts, char *const *env, uint32_t count, char *err, size_t errlen);

/* The option name for Slurm's canonical environment spelling ("rank_order" -> "rank-order"),
 * NULL if unknown. The names are the core's one list (topoaware_option_info). */
const char *ta_option_from_env_name(const char *env_name, size_t len);

/* The reverse: the job environment variable of an option ("rank-order" ->
 * "_SLURM_SPANK_OPTION_topoaware_rank_order") into buf. Returns 0, or -1 for an unknown option
 * or a buffer too small. */
int ta_option_env_name(const char *name, char *buf, size_t len);

#endif
