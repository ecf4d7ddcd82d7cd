/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The entry points of select/cons_tres_topoaware (ta_select_entry.c): what Slurm looks up in the
 * plugin (select.map) and the other files read. */
#ifndef TA_SELECT_ENTRY_H
#define TA_SELECT_ENTRY_H

#include <stdint.h>

extern const char plugin_name[];
extern const char plugin_type[]; /* the build's type name */
extern const uint32_t plugin_version;

#endif
