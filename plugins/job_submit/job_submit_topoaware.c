/* SPDX-License-Identifier: GPL-2.0-or-later */
/* job_submit/topoaware (job_submit_topoaware(8)): checks a job's parallel layout (the
 * --tp/--pp/--dp/... options of spank_topoaware, which reach slurmctld in job_desc->spank_job_env)
 * against the rest of the request and completes what the layout implies: node count, task count,
 * tasks per node and GPUs per node ("gres:gpu:N", 23.11+ "gres/gpu:N", as sbatch writes
 * --gpus-per-node). A bad combination is refused with *err_msg before a job id exists. Jobs without
 * a layout pass untouched. Built against the configured Slurm source tree of the running release.
 *
 * slurmctld calls job_submit() with read locks on config, job, node and partition held
 * (src/slurmctld/job_submit.c): partitions and node records may be read, nothing may be locked
 * again. Every string handed back goes through ta_xstr_set (xmalloc'd). */
#include "config.h" /* Slurm's */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "layout_c.h"
#include "ta_env.h"
#include "ta_submit_nvlink.h"
#include "ta_slurm_release.h"
#include "ta_gres.h"
#include "ta_xstr.h"

const char plugin_name[] = "topoaware job submit plugin: checks and completes tp/pp/dp layouts";
const char plugin_type[] = "job_submit/topoaware";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define TA "job_submit/topoaware"
/* TA_GRES_GPU_PREFIX: how this Slurm release spells a GPU request in tres_per_node (ta_slurm_release.h). */

static topoaware_conf_t *ta_conf;

/* The topology file's NVLink domains are read by a thread of their own (ta_submit_nvlink.c): the
 * file topoaware.conf names, else the default beside it. */
static void ta_nvlink_init_path(void)
{
	char path[4096];

	if (ta_conf ? topoaware_conf_topology(ta_conf, path, sizeof(path))
		    : topoaware_default_paths(NULL, NULL, 0, path, sizeof(path)))
		return;
	ta_nvlink_start(path);
}

extern int init(void)
{
	char err[TOPOAWARE_ERR_LEN];
	int found = 0;

	ta_conf = topoaware_conf_load(NULL, &found, err, sizeof(err));
	if (!ta_conf) {
		/* An admin's mistake: log it loudly, keep slurmctld running, check layouts anyway. */
		error("%s: %s; using the built-in defaults", TA, err);
		return SLURM_SUCCESS;
	}
	if (found)
		verbose("%s: loaded %s", TA, topoaware_conf_loaded_path(ta_conf));
	ta_nvlink_init_path();
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	ta_nvlink_stop();
	topoaware_conf_free(ta_conf);
	ta_conf = NULL;
	return SLURM_SUCCESS;
}

/* ---- the job's partitions ------------------------------------------------------------------ */

#define TA_MAX_PARTS 64
typedef struct {
	part_record_t *parts[TA_MAX_PARTS];
	int n;
	int unknown; /* a name that is no partition (or has no nodes yet), or more than TA_MAX_PARTS */
} ta_parts_t;

/* The job's partitions (the default partition if none given), each once: a list naming one
 * partition many times ("-p gpu,gpu,...") costs one walk of the node table, not one per name.
 * 0, or -1 when there is nothing to look at (no list and no default partition, or a list longer
 * than 1023 bytes). Reads part_list: the caller holds the read locks. */
static int ta_job_parts(const char *partitions, ta_parts_t *p)
{
	char names[1024];
	char *save = NULL, *tok;

	p->n = 0;
	p->unknown = 0;
	if (partitions && *partitions) {
		if (strlen(partitions) >= sizeof(names))
			return -1;
		strcpy(names, partitions);
	} else if (default_part_loc && default_part_loc->name) {
		snprintf(names, sizeof(names), "%s", default_part_loc->name);
	} else {
		return -1;
	}
	for (tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		part_record_t *part = find_part_record(tok);
		int k;

		if (!part || !part->node_bitmap) {
			p->unknown = 1;
			continue;
		}
		for (k = 0; k < p->n && p->parts[k] != part; k++)
			;
		if (k < p->n)
			continue;
		if (p->n == TA_MAX_PARTS) {
			p->unknown = 1;
			continue;
		}
		p->parts[p->n++] = part;
	}
	return 0;
}

static int ta_node_in_parts(uint32_t i, void *arg)
{
	const ta_parts_t *p = arg;
	node_record_t *node = node_record_table_ptr[i];

	if (!node || !node->name)
		return 0;
	for (int k = 0; k < p->n; k++)
		if (p->parts[k]->node_bitmap && bit_test(p->parts[k]->node_bitmap, i))
			return 1;
	return 0;
}

/* ---- the partition's GPUs per node --------------------------------------------------------- */

/* GPUs per node of the nodes of the job's partition(s) (the default partition if none given):
 * the common count of their GPU nodes, 0 if they differ or a partition is unknown (Slurm
 * rejects unknown partitions itself). Nodes without GPUs are not counted. -1 if the partitions
 * have no GPU node at all. Reads part_list / node records: the caller holds the read locks. */
static int ta_partition_gpus(const char *partitions, uint32_t *gpus, char *err, size_t errlen)
{
	ta_parts_t p;
	node_record_t *node;
	uint32_t common = 0;
	int mixed = 0;

	*gpus = 0;
	if (ta_job_parts(partitions, &p) != 0 || p.unknown || p.n == 0)
		return 0;
	for (int i = 0; (node = next_node(&i)); i++) {
		uint64_t g;

		if (!ta_node_in_parts((uint32_t)node->index, &p))
			continue;
		g = node->gres_list ? gres_node_config_cnt(node->gres_list, "gpu") : 0;
		if (g == 0)
			continue;
		if (g > UINT32_MAX)
			g = UINT32_MAX;
		if (common == 0)
			common = (uint32_t)g;
		else if (common != g)
			mixed = 1;
	}
	if (common == 0) {
		snprintf(err, errlen,
			 "partition %s has no nodes with GPUs, but a tp/pp/dp layout runs one task per GPU; "
			 "submit to a GPU partition (-p)",
			 partitions && *partitions ? partitions : p.parts[0]->name);
		return -1;
	}
	*gpus = mixed ? 0 : common;
	return 0;
}

/* ---- the partition's NVLink domains -------------------------------------------------------- */

static const char *ta_node_name_of(uint32_t i, void *arg)
{
	(void)arg;
	return node_record_table_ptr[i]->name; /* ta_node_in_parts checked it */
}

/* The number of the job's partitions' nodes in each multi-node NVLink domain of the topology file
 * (ta_nvlink_count; *counts xmalloc'd or NULL). Reads part_list and the node table: the caller
 * holds the read locks. */
static int ta_partition_domains(const char *partitions, uint32_t **counts, uint32_t *ndomains, const char **why)
{
	ta_parts_t p;

	*counts = NULL;
	*ndomains = 0;
	*why = "";
	if (ta_job_parts(partitions, &p) != 0)
		return TA_NVLINK_MISSING;
	return ta_nvlink_count((uint32_t)node_record_count, ta_node_in_parts, ta_node_name_of, &p, counts,
			       ndomains, why);
}

/* ---- the check ----------------------------------------------------------------------------- */

static int ta_code(int kind)
{
	switch (kind) {
	case TOPOAWARE_ERR_NODES:
		return ESLURM_INVALID_NODE_COUNT;
	case TOPOAWARE_ERR_GPUS:
		return ESLURM_INVALID_GRES;
	default:
		return ESLURM_BAD_TASK_COUNT;
	}
}

/* why may quote the user's request (a partition name, a TRES string): the user's terminal and
 * slurmctld's log get it as printable text. */
static int ta_refuse(char **err_msg, int code, const char *layout, const char *why_raw)
{
	char why[TOPOAWARE_ERR_LEN];

	topoaware_printable(why_raw, sizeof(why) - 1, why, sizeof(why));
	if (layout && *layout)
		ta_xstr_set(err_msg, "topoaware: layout %s: %s", layout, why);
	else
		ta_xstr_set(err_msg, "topoaware: %s", why);
	debug("%s: refused a job: %s", TA, why);
	return code;
}

static int ta_given(uint32_t v)
{
	return v != NO_VAL && v != INFINITE && v != 0;
}

/* --topo-migrate: topoaware defrag --apply moves such a job by its checkpoint signal and then
 * scontrol requeue, so it must be a batch job that Slurm may requeue and that has a --signal to
 * checkpoint on. Refused here rather than found out when a move is tried. */
static int ta_check_migrate(const job_desc_msg_t *job, char *err, size_t errlen)
{
	const int requeue = job->requeue == NO_VAL16 ? (slurm_conf.job_requeue != 0) : (job->requeue != 0);
	const int signal = job->warn_signal && job->warn_signal != NO_VAL16;

	if (!job->script) {
		snprintf(err, errlen,
			 "--topo-migrate needs a batch job (sbatch): only batch jobs can be requeued to move them");
		return ESLURM_BATCH_ONLY;
	}
	if (!requeue || !signal) {
		snprintf(err, errlen,
			 "--topo-migrate moves the job by its checkpoint signal and a requeue, but the job %s%s%s; "
			 "add %s%s%s (e.g. sbatch --topo-migrate --requeue --signal=B:USR1@120, the script "
			 "trapping USR1 to write a checkpoint) or leave --topo-migrate out",
			 requeue ? "" : "cannot be requeued", !requeue && !signal ? " and " : "",
			 signal ? "" : "has no --signal", requeue ? "" : "--requeue", !requeue && !signal ? " and " : "",
			 signal ? "" : "--signal=[B:]SIG@TIME");
		return ESLURM_NOT_SUPPORTED;
	}
	return SLURM_SUCCESS;
}

static int ta_check(job_desc_msg_t *job, char **err_msg)
{
	topoaware_options_t opts;
	topoaware_request_t given, out;
	char err[TOPOAWARE_ERR_LEN], lay[256], rest_shown[TA_GRES_MAX_LEN + 1];
	uint32_t node_gpus = 0, per_node = 0, per_job = 0, per_task = 0, per_socket = 0;
	int ranged = 0, kind = TOPOAWARE_ERR_LAYOUT;
	uint32_t client_ntasks = 0; /* a task count that may be sbatch's own, replaced by the layout's */

	/* Any job, layout or not: the select plugin, the job prolog and the tasks trust these names. */
	if (ta_env_check_reserved(job->spank_job_env, job->spank_job_env_size, err, sizeof(err)) != 0)
		return ta_refuse(err_msg, SLURM_ERROR, NULL, err);
	if (ta_options_from_env(&opts, job->spank_job_env, job->spank_job_env_size, err, sizeof(err)) != 0)
		return ta_refuse(err_msg, ESLURM_BAD_TASK_COUNT, NULL, err);
	if (opts.set == 0)
		return SLURM_SUCCESS; /* not a topoaware job: untouched */
	if (topoaware_options_check(&opts, err, sizeof(err)) != 0)
		return ta_refuse(err_msg, ESLURM_BAD_TASK_COUNT, NULL, err);
	if (!topoaware_options_has_layout(&opts))
		return SLURM_SUCCESS; /* only --nccl-hints: nothing to place */
	if (topoaware_layout_string(&opts.layout, lay, sizeof(lay)) != 0)
		lay[0] = '\0';
	if ((opts.set & TOPOAWARE_OPT_MIGRATE) && opts.migrate) {
		int rc = ta_check_migrate(job, err, sizeof(err));

		if (rc != SLURM_SUCCESS)
			return ta_refuse(err_msg, rc, lay, err);
	}

	if (ta_tres_gpus(job->tres_per_node, "--gpus-per-node", &per_node, err, sizeof(err)) ||
	    ta_tres_gpus(job->tres_per_job, "--gpus", &per_job, err, sizeof(err)) ||
	    ta_tres_gpus(job->tres_per_task, "--gpus-per-task", &per_task, err, sizeof(err)) ||
	    ta_tres_gpus(job->tres_per_socket, "--gpus-per-socket", &per_socket, err, sizeof(err)))
		return ta_refuse(err_msg, ESLURM_INVALID_GRES, lay, err);
	if (per_task > 1)
		return ta_refuse(err_msg, ESLURM_INVALID_GRES, lay,
				 "--gpus-per-task above 1 contradicts the layout, which runs one task per GPU; "
				 "leave --gpus-per-task out");
	if (per_socket)
		return ta_refuse(err_msg, ESLURM_INVALID_GRES, lay,
				 "--gpus-per-socket cannot be combined with a layout; use --gpus-per-node or "
				 "leave the GPU count to the layout");
	if (ta_partition_gpus(job->partition, &node_gpus, err, sizeof(err)) != 0)
		return ta_refuse(err_msg, ESLURM_INVALID_GRES, lay, err);

	memset(&given, 0, sizeof(given));
	if (ta_given(job->min_nodes)) {
		if (ta_given(job->max_nodes) && job->max_nodes != job->min_nodes)
			ranged = 1; /* -N MIN-MAX: any count in the range that the layout allows */
		else
			given.nodes = job->min_nodes;
	}
	/* Only an explicit --ntasks counts: sbatch and srun derive num_tasks from other options
	 * (e.g. --ntasks-per-node) when -n is not given, without JOB_NTASKS_SET. */
	if ((job->bitflags & JOB_NTASKS_SET) && ta_given(job->num_tasks))
		given.ntasks = job->num_tasks;
	if (job->ntasks_per_node != NO_VAL16 && job->ntasks_per_node != INFINITE16 && job->ntasks_per_node)
		given.ntasks_per_node = job->ntasks_per_node;
	/* sbatch turns --ntasks-per-node without -n into num_tasks = ntasks_per_node * nodes (and
	 * marks it set): that count is the client's, not the user's; leave it to the layout. An
	 * explicit -n of exactly that count looks the same here (Slurm sends no trace of which it
	 * was), so when the layout's count differs the user is told (below). */
	if (given.ntasks && given.ntasks_per_node &&
	    (uint64_t)given.ntasks == (uint64_t)given.ntasks_per_node * (given.nodes ? given.nodes : 1)) {
		client_ntasks = given.ntasks;
		given.ntasks = 0;
	}
	given.gpus_per_node = per_node;
	given.gpus = per_job;

	/* A TP group larger than a node may span the nodes of a multi-node NVLink domain: checked
	 * against the domains of the partition's nodes that the topology file records. Whether one has
	 * room now is the select plugin's question (the job waits for it). */
	{
		uint32_t *domains = NULL, ndomains = 0;
		const char *why = "";
		int state = TA_NVLINK_MISSING, rc;

		if (node_gpus && opts.layout.tp > node_gpus)
			state = ta_partition_domains(job->partition, &domains, &ndomains, &why);
		rc = topoaware_complete_request_nvlink(&opts.layout, &given, node_gpus, domains, ndomains, &out,
						       &kind, err, sizeof(err));
		xfree(domains);
		if (rc != 0) {
			if (state != TA_NVLINK_LOADED && node_gpus && opts.layout.tp > node_gpus && why[0]) {
				size_t len = strlen(err);

				snprintf(err + len, sizeof(err) - len, " (%s)", why);
			}
			return ta_refuse(err_msg, ta_code(kind), lay, err);
		}
	}
	if (ranged && (out.nodes < job->min_nodes || out.nodes > job->max_nodes)) {
		snprintf(err, sizeof(err),
			 "-N %u-%u but the layout needs %u nodes x %u GPUs; use -N %u or leave -N out", job->min_nodes,
			 job->max_nodes, out.nodes, out.gpus_per_node, out.nodes);
		return ta_refuse(err_msg, ESLURM_INVALID_NODE_COUNT, lay, err);
	}
	if (out.ntasks_per_node > UINT16_MAX - 2)
		return ta_refuse(err_msg, ESLURM_BAD_TASK_COUNT, lay, "more tasks per node than Slurm can hold");

	/* Complete the request as Slurm itself would have written the options. */
	job->min_nodes = out.nodes;
	job->max_nodes = out.nodes;
	job->num_tasks = out.ntasks;
	job->bitflags |= JOB_NTASKS_SET;
	job->ntasks_per_node = (uint16_t)out.ntasks_per_node;
	if (per_node != out.gpus_per_node || per_job) {
		/* The GPU entry of tres_per_node gets the layout's count (keeping a type the user asked
		 * for, from --gpus-per-node or --gpus), the other entries stay. */
		char rest[TA_GRES_MAX_LEN + 1], type[TA_GRES_MAX_LEN + 1];

		if (ta_tres_gpu_type(job->tres_per_node, type, sizeof(type)) != 0 || !type[0])
			if (ta_tres_gpu_type(job->tres_per_job, type, sizeof(type)) != 0)
				type[0] = '\0';
		if (ta_tres_without_gpu(job->tres_per_node, rest, sizeof(rest)) < 0)
			rest[0] = '\0';
		ta_xstr_set(&job->tres_per_node, TA_GRES_GPU_PREFIX "%s%s%u%s%s", type, type[0] ? ":" : "",
			    out.gpus_per_node, rest[0] ? "," : "", rest);
		/* --gpus (total) was checked equal to the world size; per node it is now exact. */
		if (per_job) {
			if (ta_tres_without_gpu(job->tres_per_job, rest, sizeof(rest)) > 0)
				ta_xstr_set(&job->tres_per_job, "%s", rest);
			else
				xfree(job->tres_per_job);
		}
	}
	if (client_ntasks && client_ntasks != out.ntasks)
		/* Accepted; sbatch, salloc and srun print this to the user. */
		ta_xstr_set(err_msg,
			    "topoaware: layout %s runs %u tasks (%u nodes x %u); the %u tasks counted from "
			    "--ntasks-per-node=%u on %u node%s do not apply. If you gave -n %u, it did not fit "
			    "the layout: use -n %u or leave -n out",
			    lay, out.ntasks, out.nodes, out.ntasks_per_node, client_ntasks, given.ntasks_per_node,
			    given.nodes ? given.nodes : 1, given.nodes > 1 ? "s" : "", client_ntasks, out.ntasks);
	debug("%s: layout %s: -N %u, --ntasks=%u, --ntasks-per-node=%u, tres_per_node=%s", TA, lay, out.nodes,
	      out.ntasks, out.ntasks_per_node,
	      topoaware_printable(job->tres_per_node, TA_GRES_MAX_LEN, rest_shown, sizeof(rest_shown)));
	return SLURM_SUCCESS;
}

extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
	if (!job_desc)
		return SLURM_SUCCESS;
	return ta_check(job_desc, err_msg);
}

/* scontrol update of a pending job. A layout job's node, task and GPU counts follow from its
 * layout (checked and completed at submit); an update that changes them would break that, so such
 * updates are refused with ESLURM_BAD_TASK_COUNT and the reason (in err_msg, which scontrol shows,
 * from 23.02; Slurm 22.05's job_modify has none, so there only in the log). Other updates (time,
 * partition, ...) pass. */
#if TA_JOB_MODIFY_HAS_ERR_MSG
extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid, char **err_msg)
#else
extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid)
#endif
{
	topoaware_options_t opts;
	char err[TOPOAWARE_ERR_LEN];

	if (!job_desc || !job_ptr)
		return SLURM_SUCCESS;
	if (ta_options_from_env(&opts, job_ptr->spank_job_env, job_ptr->spank_job_env_size, err, sizeof(err)) != 0 ||
	    !topoaware_options_has_layout(&opts))
		return SLURM_SUCCESS;
	if (ta_given(job_desc->min_nodes) || ta_given(job_desc->max_nodes) || ta_given(job_desc->num_tasks) ||
	    (job_desc->ntasks_per_node != NO_VAL16 && job_desc->ntasks_per_node) || job_desc->tres_per_node ||
	    job_desc->tres_per_job || job_desc->tres_per_task || job_desc->tres_per_socket) {
		static const char why[] = "its node, task and GPU counts follow from its tp/pp/dp layout; cancel it "
					  "and submit it again with the new layout";

		info("%s: refused an update of %pJ (uid %u): %s", TA, job_ptr, submit_uid, why);
#if TA_JOB_MODIFY_HAS_ERR_MSG
		if (err_msg)
			ta_xstr_set(err_msg, "topoaware: %s", why);
#endif
		return ESLURM_BAD_TASK_COUNT;
	}
	return SLURM_SUCCESS;
}
