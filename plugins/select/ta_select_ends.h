/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When nodes free up, for will-run (ta_select_ends.c): the running jobs' end times per node, read
 * from slurmctld's job list and kept until a job begins, ends or changes its nodes. ta_lock held,
 * except ta_select_jobs_changed (ta_select.h), which any entry point calls. */
#ifndef TA_SELECT_ENDS_H
#define TA_SELECT_ENDS_H

#include "ta_select_int.h"

/* For the core's will-run (topoaware_select_request_t): per node-table index of `bitmap`, when every
 * job on the node has ended and the earliest time plain cons_tres could give this job the node
 * (ta_free, ta_free_all filled for the call). 1 with the arrays (valid until the next call), 0 when
 * slurmctld's job list is not reachable (the arrays untouched). */
int ta_ends_fill(job_record_t *job_ptr, bitstr_t *bitmap, time_t now, const int64_t **all_free_at,
		 const int64_t **earliest_free_at);
/* Memory of the end times (fini). */
void ta_ends_free_locked(void);

#endif
