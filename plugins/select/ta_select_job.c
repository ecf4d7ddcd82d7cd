/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's layout options (select_cons_tres_topoaware(8)): read strictly from its spank_job_env
 * (user input), with the defaults of topoaware.conf for what the job does not set. */
#include "ta_select_job.h"

#include "ta_env.h"
#include "ta_select_memo.h"

int ta_job_options(ta_ctx_t *ctx, job_record_t *job_ptr, ta_job_t *j)
{
	char err[TOPOAWARE_ERR_LEN];
	const char *part = (job_ptr->part_ptr && job_ptr->part_ptr->name) ? job_ptr->part_ptr->name : NULL;
	const char *more;

	if (!job_ptr->spank_job_env || !job_ptr->spank_job_env_size)
		return 0;
	if (ta_options_from_env(&j->opts, job_ptr->spank_job_env, job_ptr->spank_job_env_size, err, sizeof(err)) !=
		    0 ||
	    (topoaware_options_has_layout(&j->opts) && topoaware_options_check(&j->opts, err, sizeof(err)) != 0)) {
		if ((more = ta_memo_should_log(ctx, job_ptr->job_id, 1)))
			error("%s: %pJ: unusable layout options (%s); placed by plain select/cons_tres%s", TA, job_ptr,
			      err, more);
		return 0;
	}
	if (!topoaware_options_has_layout(&j->opts))
		return 0;
	j->mode = (j->opts.set & TOPOAWARE_OPT_TOPO_MODE) ? j->opts.mode : topoaware_conf_mode(ctx->conf, part);
	j->max_wait = (j->opts.set & TOPOAWARE_OPT_MAX_WAIT) ? j->opts.max_wait
							      : topoaware_conf_max_wait(ctx->conf, part);
	if (topoaware_layout_string(&j->opts.layout, j->layout, sizeof(j->layout)) != 0)
		j->layout[0] = '\0';
	j->nodes = j->gpus_per_node = 0;
	return 1;
}
