/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The context of select/cons_tres_topoaware (ta_select_ctx.h): slurmctld's symbols it looks up, and
 * the creation and release of its topoaware state. */
#include "ta_select_ctx.h"

#include <dlfcn.h>
#include <string.h>

#ifndef TA_SELECT_PASSTHROUGH
/* Defined here as Slurm's own select plugins define them (cons_common.c): programs linked to the
 * public libslurm.so (pyslurm, DRMAA, the Perl API) load every select plugin in PluginDir and have
 * no such variables, so a mere reference would keep the plugin from loading there. In slurmctld
 * its own definitions take precedence (these are exported for that, select.map); outside
 * slurmctld the plugin never reads them. They are slurmctld's, not the plugin's state. */
node_record_t **node_record_table_ptr;
int node_record_count;
#endif

void ta_ctx_find_ctld(ta_ctx_t *ctx)
{
	ctx->ctld_config = dlsym(RTLD_DEFAULT, "slurmctld_config");
	ctx->ctld_jobs = dlsym(RTLD_DEFAULT, "job_list");
}

ta_list_t *ta_ctx_job_list(const ta_ctx_t *ctx)
{
	return ctx->ctld_jobs ? *ctx->ctld_jobs : NULL;
}

int ta_ctx_stopping(const ta_ctx_t *ctx)
{
	return ctx->ctld_config && ctx->ctld_config->shutdown_time;
}

#ifndef TA_SELECT_PASSTHROUGH

void ta_ctx_open(ta_ctx_t *ctx)
{
	ctx->gpu_id = gres_build_id("gpu");
	pthread_mutex_lock(&ctx->lock);
	if (!ctx->status)
		ctx->status = topoaware_status_create(TA);
	if (!ctx->status)
		error("%s: out of memory for the status book; no status file", TA);
	pthread_mutex_unlock(&ctx->lock);
}

void ta_ctx_free(ta_ctx_t *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	topoaware_placer_free(ctx->placer);
	ctx->placer = NULL;
	topoaware_ring_book_free(ctx->rings); /* refers to the topology: freed first */
	ctx->rings = NULL;
	topoaware_topo_free(ctx->topo);
	ctx->topo = NULL;
	topoaware_conf_free(ctx->conf);
	ctx->conf = NULL;
	topoaware_status_free(ctx->status);
	ctx->status = NULL;
	topoaware_status_free(ctx->writer.copy); /* the writer has ended: fini() ends it first */
	ctx->writer.copy = NULL;
	xfree(ctx->free_now);
	xfree(ctx->free_all);
	xfree(ctx->ends.first_end);
	xfree(ctx->ends.last_end);
	xfree(ctx->ends.all_free_at);
	xfree(ctx->ends.earliest_free_at);
	memset(&ctx->ends, 0, sizeof(ctx->ends));
	FREE_NULL_BITMAP(ctx->known);
	ctx->nodes = 0;
	pthread_mutex_unlock(&ctx->lock);
}

#endif
