/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one helper that allocates the strings this project hands to Slurm (job_desc fields,
 * *err_msg). Slurm frees them with xfree(), which expects xmalloc's header
 * (src/common/xmalloc.c): memory from malloc, strdup or new there corrupts slurmctld's heap. Only
 * for plugins built against the Slurm source tree (slurmctld side). */
#ifndef TA_XSTR_H
#define TA_XSTR_H

/* Replaces *field (xfree'd if set, after the text is formatted: an argument may be *field) by the
 * whole formatted text in xmalloc'ed memory. */
void ta_xstr_set(char **field, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
