/* SPDX-License-Identifier: GPL-2.0-or-later */
/* C API over corelib/part_topology.hpp for the select plugin (Slurm 25.05+): the partitions and
 * the Slurm topologies they use, read by the plugin under slurmctld's locks into a
 * topoaware_parts_t (plain copies, cheap), then decided against topology.json with no lock held
 * (topoaware_parts_decide: proportional to the topologies), then looked up per job by partition
 * name (a map lookup). Same conventions as topoaware_c.h: no C++ exception leaves these
 * functions; errors are a negative return with a message in `err`. */
#ifndef TOPOAWARE_PART_TOPO_C_H
#define TOPOAWARE_PART_TOPO_C_H

#include <stddef.h>
#include <stdint.h>

#include "topoaware_c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slurm topology kinds (the plugin maps Slurm's TOPOLOGY_PLUGIN_* ids onto these). */
enum topoaware_slurm_topo_kind {
	TOPOAWARE_STOPO_UNKNOWN = 0,
	TOPOAWARE_STOPO_TREE,
	TOPOAWARE_STOPO_BLOCK,
	TOPOAWARE_STOPO_FLAT,
	TOPOAWARE_STOPO_RING,
	TOPOAWARE_STOPO_TORUS,
};

/* What topoaware does with a partition's layout jobs. */
enum topoaware_part_use {
	TOPOAWARE_PART_UNLISTED = -1, /* a partition not read at the last load: as without partitions */
	TOPOAWARE_PART_PLACE = 0,     /* placed by topology.json */
	TOPOAWARE_PART_PLAIN = 1,     /* plain select/cons_tres */
};

typedef struct topoaware_parts topoaware_parts_t;

topoaware_parts_t *topoaware_parts_new(void);
void topoaware_parts_free(topoaware_parts_t *p);
/* A Slurm topology: `name` "" for the cluster default when partitions name none; `why` non-NULL
 * when it could not be read (kind then ignored); only_one: the cluster has no other. Records
 * follow with topoaware_parts_add_record, to the last topology added. */
int topoaware_parts_add_topology(topoaware_parts_t *p, const char *name, int kind, int cluster_default,
				 int only_one, const char *why, char *err, size_t errlen);
int topoaware_parts_add_record(topoaware_parts_t *p, const char *name, const char *nodes, int level,
			       int aggregated, uint32_t size, char *err, size_t errlen);
/* A partition, its host list and the name of its topology as added ("" = the cluster default). */
int topoaware_parts_add_partition(topoaware_parts_t *p, const char *part, const char *nodes, const char *topo_name,
				  char *err, size_t errlen);
/* Decides every partition against `topo` and words one log line each (no lock needed: `p` is the
 * caller's alone until then). */
int topoaware_parts_decide(topoaware_parts_t *p, const topoaware_topo_t *topo, char *err, size_t errlen);
uint32_t topoaware_parts_lines(const topoaware_parts_t *p);
const char *topoaware_parts_line(const topoaware_parts_t *p, uint32_t i);
/* 1 if line i tells of a disagreement (the plugin logs it at every LogLevel). */
int topoaware_parts_line_disagrees(const topoaware_parts_t *p, uint32_t i);
/* enum topoaware_part_use for a partition (NULL p or part: TOPOAWARE_PART_UNLISTED). Cheap. */
int topoaware_parts_use(const topoaware_parts_t *p, const char *part);

#ifdef __cplusplus
}
#endif

#endif
