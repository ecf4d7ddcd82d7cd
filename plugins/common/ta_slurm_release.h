/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What differs between the Slurm releases the plugins build against (22.05, 23.11 .. 26.05) outside
 * the select interface, which plugins/select/ adapts (ta_select_family_<family>.c, #if
 * TA_SLURM_FAMILY): where the internal headers are, what some types are called, one changed
 * signature. Include after Slurm's config.h, slurm/slurm.h and src/common/node_conf.h. Each
 * difference below was checked in the release trees
 * (file:line of each); tools/slurm-matrix.sh builds against all of them. */
#ifndef TA_SLURM_RELEASE_H
#define TA_SLURM_RELEASE_H

/* gres.h and select.h moved from src/common/ to src/interfaces/ (in 23.02; 22.05.8 has
 * src/common/{gres,select}.h, 23.11.11 .. 26.05.3 src/interfaces/{gres,select}.h). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#include "src/interfaces/gres.h"
#include "src/interfaces/select.h"
#else
#include "src/common/gres.h"
#include "src/common/select.h"
#endif

/* The list types by their struct names: 22.05 has only `List`/`ListIterator`, 24.11+ only
 * `list_t`/`list_itr_t` (src/common/list.h:52-53 of each); the structs never changed. */
typedef struct xlist ta_list_t;
typedef struct listIterator ta_list_itr_t;

/* hostlist_t was a pointer type in 22.05 and is the struct itself from 23.11
 * (src/common/hostlist.h:77 of 22.05.8 and of 23.11.11): name the struct. */
typedef struct hostlist ta_hostlist_t;

/* node_name2bitmap takes a fourth argument, a hostlist of the invalid names, from 24.11
 * (24.11.5 src/common/node_conf.h:427; 24.05.8 :416 has three). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
#define ta_node_name2bitmap(names, best_effort, bitmap) node_name2bitmap(names, best_effort, bitmap, NULL)
#else
#define ta_node_name2bitmap(names, best_effort, bitmap) node_name2bitmap(names, best_effort, bitmap)
#endif

/* The words of a bitstr_t follow a header of BITSTR_OVERHEAD words (magic, size). 24.11 made the
 * constant private (24.11.5 src/common/bitstring.c:58; 22.05.8 .. 24.05.8 bitstring.h:85), with the
 * same value and layout up to 26.05.3 (bitstring.c:58). */
#ifndef BITSTR_OVERHEAD
#define BITSTR_OVERHEAD 2
#endif

/* job_submit: how the release spells a GPU request in tres_per_node, as sbatch --gpus-per-node
 * writes it: "gres:gpu:N" in 22.05 (22.05.8 src/common/slurm_opt.c:6131), "gres/gpu:N" from 23.11
 * (23.11.11 slurm_opt.c:6952, 26.05.3 :6133), which slurmctld 23.11+ expects. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define TA_GRES_GPU_PREFIX "gres/gpu:"
#else
#define TA_GRES_GPU_PREFIX "gres:gpu:"
#endif

/* job_submit: job_modify gained `char **err_msg` (23.02; 22.05.8
 * src/plugins/job_submit/defaults/job_submit_defaults.c:114 has three arguments, 23.11.11 :114-115
 * and 26.05.3 :90-91 four), so that a refused update can say why. job_submit itself is unchanged. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define TA_JOB_MODIFY_HAS_ERR_MSG 1
#else
#define TA_JOB_MODIFY_HAS_ERR_MSG 0
#endif

#endif
