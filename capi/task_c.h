/* SPDX-License-Identifier: GPL-2.0-or-later */
/* C API for spank_topoaware: its plugstack.conf arguments, and its task hook: everything one task
 * of a layout job gets (coordinates, launcher variables, GPU order, NCCL hints), computed from the
 * topology file, the step's node list, the layout and hwloc. No Slurm here; no C++ exception
 * leaves these functions; errors are NULL (or -1) with a message in err (errlen bytes,
 * NUL-terminated). On any error of a task plan the caller sets NOTHING (a task with no hints rather
 * than wrong hints). Implemented in node/ (libtopoaware_node.la). */
#ifndef TOPOAWARE_TASK_C_H
#define TOPOAWARE_TASK_C_H

#include <stddef.h>
#include <stdint.h>

#include "layout_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most a step's values may hold. They come from the step's environment, as the client (srun,
 * sbatch) sent it: spank_topoaware reads no longer value (and says so), and the core refuses one
 * (a task with no hints), so that slurmstepd's memory stays bounded whatever a client sends. */
#define TOPOAWARE_NODELIST_MAX_LEN (4u << 20)         /* SLURM_STEP_NODELIST, SLURM_JOB_NODELIST */
#define TOPOAWARE_NODELIST_MAX_HOSTS (1u << 17)       /* names it expands to */
#define TOPOAWARE_NODELIST_MAX_NAME_BYTES (16u << 20) /* bytes of those names together */
#define TOPOAWARE_NODENAME_MAX_LEN 1024u              /* SLURMD_NODENAME */
#define TOPOAWARE_CVD_MAX_LEN (64u << 10)             /* CUDA_VISIBLE_DEVICES */
#define TOPOAWARE_SHORT_VAR_MAX_LEN 256u              /* CUDA_DEVICE_ORDER, SPANK_TOPOAWARE_TOPO_HASH */

typedef struct topoaware_task_in {
  const char *topology_path;        /* topology.json */
  const char *expected_hash;        /* "sha256:..." the select plugin used, NULL/"" if unknown */
  const char *nodelist;             /* the step's Slurm host list */
  const char *self;                 /* this node's Slurm name */
  uint32_t local_id;                /* this task's index on its node (SLURM_LOCALID) */
  uint32_t local_tasks;             /* tasks of the step on this node */
  uint32_t total_tasks;             /* tasks of the step */
  uint32_t job_id;
  const topoaware_layout_t *layout;
  const char *cuda_visible_devices; /* as Slurm set it, NULL if unset */
  const char *exclude_nics;         /* "mlx5_8,mlx5_9", NULL = none */
  const char *hwloc_xml;            /* NULL: this machine or $HWLOC_XMLFILE */
  int gpu_hints;                    /* 0: only coordinates and launcher variables */
  /* How slurmctld placed the job (topoaware_job_placement_read), NULL if unknown: a step on exactly
   * the job's nodes with exactly that layout takes its rank order from here and reads no topology
   * file (the ranks are the ones slurmctld placed the job for, with expected_hash); any other step
   * reads the topology file. */
  const char *placed_layout;        /* topoaware_layout_string of the job's layout */
  const char *placed_order;         /* the job's nodes in rank order, "a,b,c" */
  int placed_rail_optimized;
} topoaware_task_in_t;

/* What a variable is to the caller. */
enum topoaware_task_var_kind {
  TOPOAWARE_VAR_OURS = 0,     /* TOPOAWARE_*: always set */
  TOPOAWARE_VAR_DEFAULT = 1,  /* RANK, NCCL_IB_HCA, ...: set only if the user did not (unless the
                                 admin's override_env= names it) */
  TOPOAWARE_VAR_SLURM = 2,    /* CUDA_VISIBLE_DEVICES: Slurm's value, reordered */
};

/* The names of every variable of kind TOPOAWARE_VAR_DEFAULT, declared once: the i-th name, NULL
 * past the end. A plan only ever holds DEFAULT variables of this list (what plugstack.conf's
 * override_env= may name). */
const char *topoaware_task_default_var(uint32_t i);
/* 1 if name is one of them. */
int topoaware_task_is_default_var(const char *name);

/* spank_topoaware's plugstack.conf arguments (spank_topoaware(8)): `required|optional
 * spank_topoaware.so [topology=PATH] [exclude_nics=NAMES] [state_dir=PATH]
 * [override_env=NAMES|all|none] [default_order=ORDER] [default_mode=strict|prefer]
 * [default_max_wait=TIME]`, as the core parses them (corelib/spank_settings.hpp). */
typedef struct topoaware_spank_args {
  char topology[4096];     /* absolute path; "" = topoaware.conf's (topoaware_default_paths) */
  char exclude_nics[1024]; /* "mlx5_8,mlx5_9": storage/management NICs; "" = none */
  char state_dir[1024];    /* absolute path; "" = the default, see topoaware_spank_state_dir */
  uint32_t override_env;   /* bit i: topoaware's value of topoaware_task_default_var(i) replaces the task's */
  int has_default_order, default_order; /* enum topoaware_order */
  int has_default_mode, default_mode;   /* enum topoaware_mode */
  int has_default_max_wait;
  uint32_t default_max_wait; /* seconds */
} topoaware_spank_args_t;

/* Receives one message about a plugstack.conf argument that was ignored (printable text). */
typedef void (*topoaware_warn_fn)(void *ctx, const char *msg);

/* Parses av[0..ac) into *args (cleared first; NULL entries skipped). A bad argument never fails the
 * call (an admin's typo must not break every srun and sbatch): it is ignored and, when warn is not
 * NULL, reported through warn(ctx, message); the other arguments still apply. Returns 0, or -1 with
 * err on an internal error (out of memory; *args then holds the defaults). */
int topoaware_spank_args_parse(topoaware_spank_args_t *args, int ac, char *const *av, topoaware_warn_fn warn, void *ctx,
                               char *err, size_t errlen);
/* 1 if the admin lets topoaware's value of the variable `name` replace the task's own
 * (override_env=), else 0. */
int topoaware_spank_args_overrides(const topoaware_spank_args_t *args, const char *name);
/* The state folder in effect: state_dir=, else /run/topoaware. */
const char *topoaware_spank_state_dir(const topoaware_spank_args_t *args);

typedef struct topoaware_task_plan topoaware_task_plan_t;

/* Computes, once per process, what every task of the step on this node shares: the topology (and
 * its hash check), the node's ranks, the job's node order and, with gpu_hints, hwloc's GPUs and
 * NICs. Called by slurmstepd before it forks the tasks (spank's user_init), so that
 * topoaware_task_plan in each task only picks that task's part; local_id and
 * cuda_visible_devices are not used here. A later call with other inputs (or a topology file
 * replaced at the same path) computes again. Returns 0, or -1 with err (each task then computes,
 * and reports, it itself). */
int topoaware_task_prepare(const topoaware_task_in_t *in, char *err, size_t errlen);

/* Root, in slurmstepd before the tasks of a layout step (spank's init_post_opt): this node's GPUs
 * and NICs as hwloc sees them (exclude_nics left out; hwloc reads HWLOC_XMLFILE from the process's
 * environment), kept in the process so that topoaware_task_prepare and topoaware_task_plan (of
 * this process and the tasks it forks) take them instead of probing again with the same
 * exclude_nics and no hwloc_xml. Read from node.<self>.devices in the state folder open as
 * state_fd when that file holds a probe of this boot from the same inputs (node/devices_cache.hpp:
 * boot id, node, exclude list, hwloc and its environment, the InfiniBand devices the kernel has);
 * else probed and written there (atomically, mode 0600, never through a symbolic link).
 * Returns 0 (read from the file), 1 (probed and written), or -1 with err: the probe failed (nothing
 * kept), or it worked but the file could not be written (kept in the process all the same). */
int topoaware_node_devices_load(int state_fd, const char *self, const char *exclude_nics, char *err, size_t errlen);

topoaware_task_plan_t *topoaware_task_plan(const topoaware_task_in_t *in, char *err, size_t errlen);
void topoaware_task_plan_free(topoaware_task_plan_t *plan);
uint32_t topoaware_task_plan_vars(const topoaware_task_plan_t *plan);
const char *topoaware_task_plan_name(const topoaware_task_plan_t *plan, uint32_t i);
const char *topoaware_task_plan_value(const topoaware_task_plan_t *plan, uint32_t i);
int topoaware_task_plan_kind(const topoaware_task_plan_t *plan, uint32_t i);
/* One line "rank=R node=N host=H local=L tp=.. cp=.. ep=.. dp=.. pp=.. gpu=BUSID nic=NAME". */
const char *topoaware_task_plan_map_line(const topoaware_task_plan_t *plan);
/* Non-fatal remarks (e.g. "CUDA_VISIBLE_DEVICES holds UUIDs: left as is"), "" if none. */
const char *topoaware_task_plan_note(const topoaware_task_plan_t *plan);
/* The topology's hash that was used. */
const char *topoaware_task_plan_hash(const topoaware_task_plan_t *plan);

/* The job as a whole, for the batch step: the hostfile of `srun --distribution=arbitrary` and the
 * rank map, from the topology, the job's node list and the layout (no hwloc: a node's GPUs and NICs
 * are known only on that node). The node order is slurmctld's placed one when it is for these
 * nodes and this layout (the order the job's own steps' tasks get), else the topology's order of
 * the nodes alone. */
typedef struct topoaware_job_in {
  const char *topology_path;
  const char *expected_hash;        /* as in topoaware_task_in_t */
  const char *nodelist;             /* the job's Slurm host list (SLURM_JOB_NODELIST) */
  const topoaware_layout_t *layout;
  const char *placed_layout, *placed_order; /* as in topoaware_task_in_t; NULL if unknown */
} topoaware_job_in_t;

/* The most ranks a job map is made for (a hostfile line per rank). */
#define TOPOAWARE_JOB_MAP_MAX_RANKS (1u << 20)

typedef struct topoaware_job_map topoaware_job_map_t;

/* NULL with err on error (node not in the topology, hash differs, the layout's ranks do not
 * split evenly over the nodes, more than TOPOAWARE_JOB_MAP_MAX_RANKS ranks). */
topoaware_job_map_t *topoaware_job_map(const topoaware_job_in_t *in, char *err, size_t errlen);
void topoaware_job_map_free(topoaware_job_map_t *map);
/* One Slurm node name per line, line r (from 0) = the node of rank r: node k of the topology
 * order on lines k*G .. k*G+G-1. SLURM_HOSTFILE for srun --distribution=arbitrary. */
const char *topoaware_job_map_hostfile(const topoaware_job_map_t *map);
/* A comment line "# topoaware rank map: ..." then one line per rank:
 * "rank=R node=N host=H local=L tp=.. cp=.. ep=.. dp=.. pp=.. edp=.. leaf=SWITCH leaf_group=G pod=P"
 * (leaf: the node's rail-0 leaf switch; leaf_group and pod: indices in topology.json, "-" if none). */
const char *topoaware_job_map_rankmap(const topoaware_job_map_t *map);
uint32_t topoaware_job_map_ranks(const topoaware_job_map_t *map);
uint32_t topoaware_job_map_nodes(const topoaware_job_map_t *map);
/* The topology's hash that was used. */
const char *topoaware_job_map_hash(const topoaware_job_map_t *map);

/* The deterministic MASTER_PORT of a job: 20000 + job_id % 12000 (below Linux's ephemeral range). */
uint32_t topoaware_master_port(uint32_t job_id);

#ifdef __cplusplus
}
#endif

#endif
