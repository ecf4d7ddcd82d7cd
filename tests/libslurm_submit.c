/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A client of Slurm's public library that submits a batch job with the SPANK environment it is
 * given, as any program may through slurm_submit_batch_job (job_desc_msg_t.spank_job_env), with no
 * sbatch and no SPANK plugin in between: job_submit/topoaware must refuse what sbatch would never
 * send (names of the select plugin's, too many entries). Used by tests/slurm_submit_api.sh.
 *
 *   libslurm_submit [--fill N] [NAME=VALUE ...]
 *
 * The job is held (priority 0), its script "true", with no node count (as sbatch without -N).
 * --fill N puts N entries TA_FILL_<i>=1 first. Prints "job=ID" and exits 0; exits 1 with Slurm's
 * error otherwise (libslurm itself prints slurmctld's message for a refused job on stderr). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

int main(int argc, char **argv)
{
	job_desc_msg_t desc;
	submit_response_msg_t *resp = NULL;
	char *env[] = { "PATH=/usr/bin:/bin", NULL };
	char **spank;
	unsigned long fill = 0;
	uint32_t n = 0;
	int first = 1;

	if (argc > 1 && !strcmp(argv[1], "--fill") && argc < 3) {
		fprintf(stderr, "libslurm_submit: --fill needs a count\n");
		return 2;
	}
	if (argc > 2 && !strcmp(argv[1], "--fill")) {
		fill = strtoul(argv[2], NULL, 10);
		first = 3;
	}
	if (fill > 10000000UL) {
		fprintf(stderr, "libslurm_submit: --fill %lu is more than this test needs\n", fill);
		return 2;
	}
	spank = calloc(fill + (unsigned long)argc + 1, sizeof(*spank));
	if (!spank)
		return 2;
	for (unsigned long i = 0; i < fill; i++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "TA_FILL_%lu=1", i);
		if (!(spank[n++] = strdup(buf)))
			return 2;
	}
	for (int i = first; i < argc; i++)
		spank[n++] = argv[i];

	/* As every current client does: Slurm 26.05's library crashes without it. */
	slurm_init(NULL);
	slurm_init_job_desc_msg(&desc);
	desc.name = "libslurm_submit";
	desc.script = "#!/bin/sh\ntrue\n";
	desc.environment = env;
	desc.env_size = 1;
	desc.work_dir = "/tmp";
	desc.user_id = getuid();
	desc.group_id = getgid();
	desc.priority = 0; /* held */
	desc.spank_job_env = spank;
	desc.spank_job_env_size = n;
	if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS) {
		fprintf(stderr, "slurm_submit_batch_job: %s\n", slurm_strerror(errno));
		return 1;
	}
	printf("job=%u\n", resp ? resp->job_id : 0);
	slurm_free_submit_response_response_msg(resp);
	slurm_fini();
	return 0;
}
