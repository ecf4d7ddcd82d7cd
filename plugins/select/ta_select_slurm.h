/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm's headers as every file of the select plugins needs them, in the order they need: Slurm's
 * config.h first, then slurm_xlator.h before any internal header. A header of includes only (no
 * .c): each file names its own interface in its own header, this one only fixes the order. */
#ifndef TA_SELECT_SLURM_H
#define TA_SELECT_SLURM_H

#include "config.h" /* Slurm's */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

/* Slurm's own plugins include this first: it renames Slurm's internal functions to the slurm_*
 * names that both libslurmfull (slurmctld, slurmd, the commands) and the public libslurm.so
 * export, so that the plugin also loads in programs linked to libslurm.so (pyslurm, DRMAA, ...). */
#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/plugin.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "ta_slurm_release.h"

#endif
