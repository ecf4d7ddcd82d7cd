/* What differs between the Slurm releases the plugins build against (22.05, 23.11 .. 26.05) outside
 * the select interface, which plugins/select/ta_select_entry_<family>.c adapts: where the internal
 * headers are and what the list types are called. Include after Slurm's config.h and slurm/slurm.h.
 * Each difference below was checked in the release trees (tools/slurm-matrix.sh builds against all). */
#ifndef TA_SLURM_RELEASE_H
#define TA_SLURM_RELEASE_H

/* gres.h and select.h moved from src/common/ to src/interfaces/ (23.02; 22.05.8 has
 * src/common/{gres,select}.h, 23.11.11 .. 26.05.3 src/interfaces/{gres,select}.h). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#include "src/interfaces/gres.h"
#include "src/interfaces/select.h"
#else
#include "src/common/gres.h"
#include "src/common/select.h"
#endif

/* The list types by their struct names: 22.05 has only `List`/`ListIterator`, 24.11+ only
 * `list_t`/`list_itr_t` (src/common/list.h:52-53 of each), and the structs never changed. */
typedef struct xlist ta_list_t;
typedef struct listIterator ta_list_itr_t;

#endif
