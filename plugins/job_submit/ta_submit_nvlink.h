/* SPDX-License-Identifier: GPL-2.0-or-later */
/* job_submit/topoaware's view of the multi-node NVLink domains (GB200/GB300 NVL72) recorded in the
 * topology file, read by a thread of its own: job_submit() runs with slurmctld's read locks held,
 * where parsing a large topology.json would stop the scheduler. */
#ifndef TA_SUBMIT_NVLINK_H
#define TA_SUBMIT_NVLINK_H

#include <stddef.h>
#include <stdint.h>

#include "topoaware_c.h"

/* Starts reading `path` and waits for it at most a short while (plugin init). */
void ta_nvlink_start(const char *path);
/* Stops the thread and frees the domains (plugin fini). */
void ta_nvlink_stop(void);

/* What the check may rely on. */
enum ta_nvlink_state {
	TA_NVLINK_LOADED = 0,  /* the file's domains (possibly none) */
	TA_NVLINK_LOADING = 1, /* the first read is under way: no domain known yet */
	TA_NVLINK_MISSING = 2  /* no file, or it could not be read: no domain known */
};

/* The number of nodes of each multi-node domain among the nodes for which in_set(i, arg) is true,
 * i over 0..n-1 with names name(i, arg): into a new xmalloc'd array (*counts, *ndomains; NULL and 0
 * when no domain is known). Starts a re-read when the file changed since it was read (one stat).
 * Returns the state; *why (when not NULL) gets a short text for a message when not LOADED. */
int ta_nvlink_count(uint32_t n, int (*in_set)(uint32_t i, void *arg), const char *(*name)(uint32_t i, void *arg),
		    void *arg, uint32_t **counts, uint32_t *ndomains, const char **why);

#endif
