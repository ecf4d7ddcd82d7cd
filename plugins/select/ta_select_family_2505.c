/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm 25.05, 25.11 and 26.05's side of select/cons_tres_topoaware (ta_select_family.h). The
 * select interface has 13 select_p_* calls (node_select_syms, src/interfaces/select.c; 26.05 adds
 * select_p_job_mem_reduce, 14), forwarded by ta_select_entry.c. What is this family's:
 *   - no select_p_state_save: slurmctld's stop is noticed by the status file writer (shutdown_time),
 *     and fini() is still called only with MEMORY_LEAK_DEBUG (25.05.8 controller.c:1108-1139);
 *   - no select_p_job_init: node_init follows load_all_job_state (25.05.8 read_config.c:1624, 1671),
 *     so the status book's rebuild from slurmctld's job list runs at node_init;
 *   - no jobinfo/nodeinfo calls: select_jobinfo is gone from jobs and their saved state;
 *   - topology.yaml names several topologies and each partition picks one (Topology=,
 *     part_record_t's topology_name; 26.05 adds ring): ta_family_part_topologies reads them;
 *   - only slurmctld loads a select plugin, and only SelectType (select_g_init(),
 *     src/interfaces/select.c:112-148, controller.c:822), and it treats SelectType as cons_tres only
 *     when its plugin id is 109 (running_cons_tres(), select.c:100-107): see the id below. */
#include "ta_select_family.h"

#ifndef TA_SELECT_PASSTHROUGH
#include <dlfcn.h>
#include <string.h>

#include "src/interfaces/topology.h"

#include "ta_select_ctx.h"
#endif

/* 109, cons_tres's own id. slurmctld 25.05+ tests plugin_id == SELECT_PLUGIN_CONS_TRES
 * (running_cons_tres()) wherever cons_tres differs from linear (node_scheduler.c, gres.c, core
 * reservations in reservation.c) and, with another id and CR_Core, CR_CPU or CR_Socket in
 * SelectTypeParameters (the default CR_Core_Memory included), refuses to start (select.c:135-144,
 * fatal). It loads only SelectType, so sharing the id with the cons_tres we wrap clashes with
 * nothing. Jobs saved by 25.05+ carry no select data (25.05.8 src/common/job_record.c: the 25.05
 * state format has none; older formats write the current plugin's id, :2679, which loading skips,
 * :3188), so switching SelectType between cons_tres and this plugin keeps every job, and older
 * states with 10901 load too. Both builds use 109. */
const uint32_t plugin_id = TA_SELECT_PLUGIN_ID_CONS_TRES;
const ta_family_t ta_family = { .saves_state = 0, .batched_will_run = 0 };

typedef int (*ta_cons_job_test_fn)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
				   uint32_t req_nodes, uint16_t mode, ta_list_t *preemptee_candidates,
				   ta_list_t **preemptee_job_list, resv_exc_t *resv_exc_ptr,
				   will_run_data_t *will_run_ptr);

void ta_family_will_run_window(const ta_job_test_t *t, time_t *start, time_t *end)
{
	*start = t->rel->will_run_ptr ? t->rel->will_run_ptr->start : 0;
	*end = t->rel->will_run_ptr ? t->rel->will_run_ptr->end : 0;
}

int ta_family_job_test(const ta_cons_t *cons, const ta_job_test_t *t, bitstr_t *bitmap)
{
	return ((ta_cons_job_test_fn)cons->ops.job_test)(t->job_ptr, bitmap, t->min_nodes, t->max_nodes,
							 t->req_nodes, t->mode, t->preemptee_candidates,
							 t->preemptee_job_list, t->rel->resv_exc_ptr, t->rel->will_run_ptr);
}

#ifndef TA_SELECT_PASSTHROUGH
/* What topology_g_get(TOPO_DATA_TOPOLOGY_PTR) hands back: the data of the topology plugin's
 * topoinfo (private to each plugin; the same in 25.05.8, 25.11.7 and 26.05.3:
 * src/plugins/topology/tree/topology_tree.c topoinfo_tree_t over the public topo_info_t,
 * src/plugins/topology/block/topology_block.c topoinfo_block_t). `scontrol show topology` prints
 * the very same records. */
typedef struct {
	uint32_t record_count;
	topo_info_t *topo_array;
} ta_topoinfo_tree_t;

/* 25.11 renamed topology_g_topology_free (25.05.8 src/interfaces/topology.h:259) to
 * topology_g_topoinfo_free (25.11.7 :243). */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
#define ta_topoinfo_free topology_g_topoinfo_free
#else
#define ta_topoinfo_free topology_g_topology_free
#endif

typedef struct {
	bool aggregated;
	uint16_t block_index;
	char *name;
	char *nodes;
	uint32_t size;
} ta_topoinfo_bblock_t;

typedef struct {
	uint32_t record_count;
	ta_topoinfo_bblock_t *topo_array;
} ta_topoinfo_block_t;

static int ta_topo_kind(uint32_t id)
{
	switch (id) {
	case TOPOLOGY_PLUGIN_TREE:
		return TOPOAWARE_STOPO_TREE;
	case TOPOLOGY_PLUGIN_BLOCK:
		return TOPOAWARE_STOPO_BLOCK;
	case TOPOLOGY_PLUGIN_FLAT:
		return TOPOAWARE_STOPO_FLAT;
	case TOPOLOGY_PLUGIN_3DTORUS:
		return TOPOAWARE_STOPO_TORUS;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	case TOPOLOGY_PLUGIN_RING:
		return TOPOAWARE_STOPO_RING;
#endif
	default:
		return TOPOAWARE_STOPO_UNKNOWN;
	}
}

/* One Slurm topology (name NULL: the cluster default) into p, with its records when its kind is one
 * whose records topoaware compares (tree, block). A failed lookup is recorded, not fatal. */
static void ta_add_topology(topoaware_parts_t *p, const char *name, int only_one)
{
	dynamic_plugin_data_t *info = NULL;
	char err[TOPOAWARE_ERR_LEN];
	int kind, rc = SLURM_ERROR;

	/* topology_g_get only reads its name argument (it is not const in Slurm's prototype). */
	rc = topology_g_get(TOPO_DATA_TOPOLOGY_PTR, (char *)name, &info);
	if (rc != SLURM_SUCCESS || !info) {
		if (topoaware_parts_add_topology(p, name ? name : "", TOPOAWARE_STOPO_UNKNOWN, !name, only_one,
						 rc != SLURM_SUCCESS ? slurm_strerror(rc) : "no data", err, sizeof(err)))
			error("%s: partition topologies: %s", TA, err);
		if (info)
			ta_topoinfo_free(info);
		return;
	}
	kind = ta_topo_kind(info->plugin_id);
	if (topoaware_parts_add_topology(p, name ? name : "", kind, !name, only_one, NULL, err, sizeof(err))) {
		error("%s: partition topologies: %s", TA, err);
	} else if (kind == TOPOAWARE_STOPO_TREE && info->data) {
		ta_topoinfo_tree_t *t = info->data;

		for (uint32_t i = 0; i < t->record_count; i++)
			if (topoaware_parts_add_record(p, t->topo_array[i].name, t->topo_array[i].nodes,
						       t->topo_array[i].level, 0, 0, err, sizeof(err))) {
				error("%s: partition topologies: %s", TA, err);
				break;
			}
	} else if (kind == TOPOAWARE_STOPO_BLOCK && info->data) {
		ta_topoinfo_block_t *b = info->data;

		for (uint32_t i = 0; i < b->record_count; i++)
			if (topoaware_parts_add_record(p, b->topo_array[i].name, b->topo_array[i].nodes, 0,
						       b->topo_array[i].aggregated, b->topo_array[i].size, err,
						       sizeof(err))) {
				error("%s: partition topologies: %s", TA, err);
				break;
			}
	}
	ta_topoinfo_free(info);
}

static int ta_names_topology(void *x, void *arg)
{
	part_record_t *part_ptr = x;

	if (part_ptr->topology_name)
		*(int *)arg = 1;
	return 0;
}

typedef struct {
	topoaware_parts_t *p;
	int only_one;
	char **seen; /* topology names added ("" = the default), xmalloc'd */
	int n_seen;
} ta_parts_walk_t;

static int ta_add_partition(void *x, void *arg)
{
	part_record_t *part_ptr = x;
	ta_parts_walk_t *w = arg;
	const char *topo = part_ptr->topology_name ? part_ptr->topology_name : "";
	char err[TOPOAWARE_ERR_LEN], *nodes;
	int seen = 0;

	if (!part_ptr->name)
		return 0;
	for (int i = 0; i < w->n_seen && !seen; i++)
		seen = !strcmp(w->seen[i], topo);
	if (!seen) {
		ta_add_topology(w->p, part_ptr->topology_name, w->only_one);
		xrecalloc(w->seen, w->n_seen + 1, sizeof(*w->seen));
		w->seen[w->n_seen++] = xstrdup(topo);
	}
	nodes = part_ptr->node_bitmap ? bitmap2node_name(part_ptr->node_bitmap) : NULL;
	if (topoaware_parts_add_partition(w->p, part_ptr->name, nodes ? nodes : "", topo, err, sizeof(err)))
		error("%s: partition topologies: %s", TA, err);
	xfree(nodes);
	return 0;
}

topoaware_parts_t *ta_family_part_topologies(void)
{
	/* slurmctld's partition list, looked up at run time like its job list (ta_select_ctx.c). */
	list_t **parts = dlsym(RTLD_DEFAULT, "part_list");
	ta_parts_walk_t w = { NULL, 0, NULL, 0 };
	int named = 0;

	if (!parts || !*parts)
		return NULL;
	if (!(w.p = topoaware_parts_new())) {
		error("%s: out of memory for the partitions' topologies; every partition is placed by topology.json", TA);
		return NULL;
	}
	/* Flat as the cluster default with no partition naming a topology: Slurm knows no topology at
	 * all, and topology.json is the only one there is (docs/design.md). */
	list_for_each(*parts, ta_names_topology, &named);
	w.only_one = !named;
	list_for_each(*parts, ta_add_partition, &w);
	for (int i = 0; i < w.n_seen; i++)
		xfree(w.seen[i]);
	xfree(w.seen);
	return w.p;
}
#endif
