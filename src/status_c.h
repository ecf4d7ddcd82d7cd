/* C API over the select plugin's status file (src/status.hpp) for select/cons_tres_topoaware.
 * Same conventions as topoaware_c.h: plain C types, no C++ exception leaves these functions,
 * errors are a negative return with a message copied into `err`. One book per slurmctld, used
 * under the plugin's own lock. Strings are copied; NULL reads as "". */
#ifndef TOPOAWARE_STATUS_C_H
#define TOPOAWARE_STATUS_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct topoaware_status topoaware_status_t;

typedef struct topoaware_status_job {
  uint32_t job_id;
  const char *layout;     /* canonical layout text (topoaware_layout_string) */
  const char *mode;       /* "strict" | "prefer" */
  uint32_t gpus_per_node;
  const char *placement;  /* placed: "ideal" | "fallback" | "cons_tres" */
  const char *nodes;      /* placed: Slurm host list */
  const char *node_order; /* placed: host names in rank order, comma-separated */
  const char *reason;     /* waiting: why; placed: a note or "" */
} topoaware_status_job_t;

typedef struct topoaware_call_counters {
  uint64_t calls, total_us, max_us;
  uint64_t layout_calls, layout_total_us, layout_max_us;
} topoaware_call_counters_t;

topoaware_status_t *topoaware_status_create(const char *plugin);
void topoaware_status_free(topoaware_status_t *st);
void topoaware_status_set_topology(topoaware_status_t *st, const char *file, const char *hash, const char *error);
/* 0, or -1 (out of memory: the verdict is lost, nothing else changes). */
int topoaware_status_waiting(topoaware_status_t *st, const topoaware_status_job_t *job, int64_t now);
int topoaware_status_placed(topoaware_status_t *st, const topoaware_status_job_t *job, int64_t now);
void topoaware_status_finished(topoaware_status_t *st, uint32_t job_id);
void topoaware_status_count_call(topoaware_status_t *st, uint64_t us, int layout_job);
void topoaware_status_counters(const topoaware_status_t *st, topoaware_call_counters_t *out);
/* Writes the file atomically if something changed and at least min_interval seconds passed since
 * the last write, or if `force`. 1 written, 0 not due, -1 error (err says why). */
int topoaware_status_write(topoaware_status_t *st, const char *path, int64_t now, int64_t min_interval, int force,
                           char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
