/* SPDX-License-Identifier: GPL-2.0-or-later */
/* C API over the select plugin's status file (corelib/status.hpp) for select/cons_tres_topoaware.
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
  /* --topo-migrate (topoaware defrag --apply may move it): nonzero, with the job's --signal (number,
   * seconds before the end, nonzero batch for B:) and nonzero requeue if Slurm may requeue it. */
  int migrate;
  uint32_t signal, signal_time;
  int signal_batch, requeue;
} topoaware_status_job_t;

typedef struct topoaware_call_counters {
  uint64_t calls, total_us, max_us;
  uint64_t layout_calls, layout_total_us, layout_max_us;
  /* A histogram of the call times (0 buckets: none): counts[i] (layout_counts[i]: layout jobs') calls
   * took at most le_us[i] microseconds and more than le_us[i - 1]; counts[buckets] took longer. */
  uint32_t buckets;
  const uint64_t *le_us, *counts, *layout_counts;
} topoaware_call_counters_t;

topoaware_status_t *topoaware_status_create(const char *plugin);
void topoaware_status_free(topoaware_status_t *st);
/* 0, or -1 (out of memory: the topology entry keeps its old values). */
int topoaware_status_set_topology(topoaware_status_t *st, const char *file, const char *hash, const char *error);
/* 0, or -1 (out of memory: the verdict is lost, nothing else changes). */
int topoaware_status_waiting(topoaware_status_t *st, const topoaware_status_job_t *job, int64_t now);
int topoaware_status_placed(topoaware_status_t *st, const topoaware_status_job_t *job, int64_t now);
void topoaware_status_finished(topoaware_status_t *st, uint32_t job_id);
/* Forgets the waiting entries for which gone(job_id, arg) returns nonzero, looking at no more than
 * max_visits entries from job id *next on (0: from the first), so that the caller can let go of its
 * locks between two pieces (gone runs under them, once per entry; max_visits 0 counts as 1). Sets
 * *next to where the next piece starts, 0 once the book was walked to its end. Returns how many
 * went. */
size_t topoaware_status_forget_waiting(topoaware_status_t *st, int (*gone)(uint32_t job_id, void *arg), void *arg,
                                       uint32_t *next, size_t max_visits);
/* -1: the book has no entry for the job; 0: waiting; 1: placed. */
int topoaware_status_job_phase(const topoaware_status_t *st, uint32_t job_id);
/* A waiting verdict from backfill's will-run test: refreshes the job's entry; its reason replaces
 * only an earlier will-run reason or a run-now reason older than 10 minutes. 0 or -1. */
int topoaware_status_waiting_hint(topoaware_status_t *st, const topoaware_status_job_t *job, int64_t now);
/* Replaces the book's call counters with the caller's own (the plugin counts in its wrapper).
 * Counters alone do not make a write due. */
void topoaware_status_set_counters(topoaware_status_t *st, const topoaware_call_counters_t *c);
/* Writing the file, in two parts so that it is written outside the caller's locks:
 * topoaware_status_render (under the lock that guards the book) returns the text of the file in
 * *text (NUL-terminated, *len bytes; free it with topoaware_status_text_free) if a write is due
 * (something changed and at least min_interval seconds passed since the last write, or `force`)
 * and counts it as written: 1 rendered, 0 not due, -1 error.
 * topoaware_status_write_text then replaces `path` atomically (no lock needed): 0 or -1 with err.
 * If it failed, topoaware_status_write_failed (under the lock) makes the next due write retry.
 * The file is created with mode 0644 in a folder reached safely from / (corelib/safe_folder.hpp). */
int topoaware_status_render(topoaware_status_t *st, int64_t now, int64_t min_interval, int force, char **text,
                            size_t *len, char *err, size_t errlen);
void topoaware_status_text_free(char *text);
/* The same with nothing in proportion to the book done under the lock: the writer keeps a copy of
 * the book of its own (a book from topoaware_status_create that only ever receives changes), and
 * topoaware_status_take (under the lock) hands over in *changes what changed in the book since the
 * last take: O(1) beside the entries that expired. `full` (a new copy, or one that fell out of step)
 * hands over every entry instead; so does the first take, since the book records changes only once
 * someone takes them. Also says whether a write is due (as topoaware_status_render decides; never
 * with write 0: no file) and counts it as written if so: 1 due, 0 not due, -1 error (*changes NULL,
 * the book unchanged). topoaware_status_apply (no lock of the book's) applies the changes to the
 * copy and frees them: 0, or -1 (out of memory: the copy is out of step; free it and start a new
 * one with full). Render the copy with topoaware_status_render(copy, now, 0, 1, ...). */
typedef struct topoaware_status_changes topoaware_status_changes_t;
int topoaware_status_take(topoaware_status_t *st, int64_t now, int write, int64_t min_interval, int force, int full,
                          topoaware_status_changes_t **changes, char *err, size_t errlen);
int topoaware_status_apply(topoaware_status_t *copy, topoaware_status_changes_t *changes, char *err, size_t errlen);
/* Under the lock: nobody takes the changes any more (no status file): the book drops those it kept
 * and keeps none until the next take, which then hands over every entry (O(n), once). */
void topoaware_status_stop_changes(topoaware_status_t *st);
void topoaware_status_changes_free(topoaware_status_changes_t *changes);
int topoaware_status_write_text(const char *path, const char *text, size_t len, char *err, size_t errlen);
void topoaware_status_write_failed(topoaware_status_t *st);

#ifdef __cplusplus
}
#endif

#endif
