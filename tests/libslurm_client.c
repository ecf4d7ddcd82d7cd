/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program linked to Slurm's public library (libslurm.so, as pyslurm, DRMAA and the Perl API are):
 * it loads the jobs and the nodes, which makes libslurm load the select plugin named by SelectType.
 * Prints "jobs=N nodes=M" and exits 0; 1 with Slurm's error otherwise. Used by
 * tests/slurm_select_wrapper.sh with SelectType=select/cons_tres_topoaware. Slurm's calls set errno
 * (slurm_get_errno() is gone from Slurm 26.05's headers). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

int main(void)
{
	job_info_msg_t *jobs = NULL;
	node_info_msg_t *nodes = NULL;

	/* As pyslurm and every current client do: Slurm 26.05's library crashes without it. */
	slurm_init(NULL);

	if (slurm_load_jobs((time_t)0, &jobs, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) {
		fprintf(stderr, "slurm_load_jobs: %s\n", slurm_strerror(errno));
		return 1;
	}
	if (slurm_load_node((time_t)0, &nodes, SHOW_ALL) != SLURM_SUCCESS) {
		fprintf(stderr, "slurm_load_node: %s\n", slurm_strerror(errno));
		return 1;
	}
	printf("jobs=%u nodes=%u\n", jobs->record_count, nodes->record_count);
	slurm_free_job_info_msg(jobs);
	slurm_free_node_info_msg(nodes);
	slurm_fini();
	return 0;
}
