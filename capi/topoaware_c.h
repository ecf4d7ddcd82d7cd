/* SPDX-License-Identifier: GPL-2.0-or-later */
/* C API over the placement engine and the rank order (corelib/placement.hpp, corelib/rank_order.hpp) for
 * the Slurm plugins, which are written in C. The layout type and the submit-time checks
 * (parse, validate, complete a request) are in layout_c.h. Same conventions: plain C types, no
 * C++ exception leaves these functions, errors are a negative return (or NULL) with a message
 * copied into `err` (errlen bytes, always NUL-terminated when errlen > 0).
 *
 * Life cycle in slurmctld: topoaware_topo_load() when the topology file is (re)read, then
 * topoaware_placer_create() with Slurm's node names in node-table order in select_p_node_init
 * (the node table is rebuilt by scontrol reconfigure: build a new placer, never keep indices
 * across it). Per job test: topoaware_select_decide(). In slurmstepd: topoaware_topo_load() and
 * topoaware_node_ranks(). A topo is immutable (share it between threads); a placer holds scratch
 * buffers (one per thread) and a reference to its topo (free the placer first). */
#ifndef TOPOAWARE_C_H
#define TOPOAWARE_C_H

#include <stddef.h>
#include <stdint.h>

#include "layout_c.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct topoaware_topo topoaware_topo_t;
typedef struct topoaware_placer topoaware_placer_t;

/* Reads and validates topology.json. NULL on error. */
topoaware_topo_t *topoaware_topo_load(const char *path, char *err, size_t errlen);
void topoaware_topo_free(topoaware_topo_t *topo);
/* Writes the topology to path, atomically, in a folder checked as the status file's is (reached
 * safely from /; mode 0644): the select plugin's last good copy, which it loads when the configured
 * file cannot be read at start-up. A topology read by topoaware_topo_load is copied from its file 1
 * MiB at a time and kept only if the bytes are the ones it was read from (a file replaced since is
 * refused: the next load saves the new one); memory stays bounded whatever the file's size.
 * 0, or -1 with err. */
int topoaware_topo_save(const topoaware_topo_t *topo, const char *path, char *err, size_t errlen);
/* "sha256:<hex>" of the topology, for checking that both sides use the same file: its hash, or with
 * routes a hash of its hash and its routes hash (the rank order reads the routes). */
const char *topoaware_topo_hash(const topoaware_topo_t *topo);
uint32_t topoaware_topo_hosts(const topoaware_topo_t *topo);
/* Multi-node NVLink domains recorded in the topology (0: none). */
uint32_t topoaware_topo_nvlink_domains(const topoaware_topo_t *topo);
/* 1 if the fabric is rail-optimized (leaf groups of one leaf per rail), else 0. */
int topoaware_topo_rail_optimized(const topoaware_topo_t *topo);

/* The multi-node NVLink domains of a topology (GB200/GB300 NVL72), by host name, for
 * job_submit/topoaware's tp check: only the names of hosts in such domains are kept, so the copy is
 * small beside the topology it came from (which may be freed). NULL on error (out of memory). */
typedef struct topoaware_nvlink topoaware_nvlink_t;
topoaware_nvlink_t *topoaware_nvlink_from_topo(const topoaware_topo_t *topo, char *err, size_t errlen);
void topoaware_nvlink_free(topoaware_nvlink_t *nv);
/* Number of multi-node domains (0: NVLink inside nodes only). */
uint32_t topoaware_nvlink_domains(const topoaware_nvlink_t *nv);
/* The domain of a host, 0 .. topoaware_nvlink_domains() - 1, or -1 (in no multi-node domain, or not
 * in the topology). A hash look-up: cheap enough to call for every node of a partition. */
int topoaware_nvlink_domain_of(const topoaware_nvlink_t *nv, const char *host);

/* Maps Slurm's node table (names in node-table index order) onto the topology. NULL on error. */
topoaware_placer_t *topoaware_placer_create(const topoaware_topo_t *topo, const char *const *names, uint32_t n,
                                            char *err, size_t errlen);
void topoaware_placer_free(topoaware_placer_t *placer);
/* Slurm nodes that are not in the topology (never in a block of topoaware_select_decide): count, and the
 * i-th name (NULL past the end). */
uint32_t topoaware_placer_missing(const topoaware_placer_t *placer);
const char *topoaware_placer_missing_name(const topoaware_placer_t *placer, uint32_t i);
/* 0 if the placer's topology can serve its node table; -1 with why in err if it holds none of the
 * table's nodes (another cluster's topology, FQDNs against short names): every layout job would be
 * offered no node, so such a topology is to be treated as one that does not load. */
int topoaware_placer_check(const topoaware_placer_t *placer, char *err, size_t errlen);

/* The select plugin's decision for one select_p_job_test of a layout job (corelib/select_policy.hpp:
 * run-now and will-run, strict and prefer, the maximum wait, tries and time per call,
 * MissingNodes=). The plugin answers the callbacks with cons_tres and its bitmaps. */
typedef struct topoaware_select_backend {
  void *arg;
  /* cons_tres on exactly nodes[0..n) (node-table indices): 1 if the job fits (will-run: *start =
   * when; start is NULL in run-now); the plugin keeps the last accepted allocation. */
  int (*try_block)(void *arg, const uint32_t *nodes, uint32_t n, int64_t *start);
  /* Will-run: the last accepted block becomes the best one. */
  void (*keep_best)(void *arg);
  /* cons_tres on the usable nodes, without those missing from the topology unless any_node: 1 if
   * it fits (*start as above, *preempted = jobs it would preempt); the plugin keeps the answer. */
  int (*try_plain)(void *arg, int any_node, int64_t *start, int *preempted);
  uint64_t (*clock_ms)(void *arg); /* monotonic milliseconds */
  int64_t (*wall_s)(void *arg);    /* seconds since the epoch */
  /* A log line of the decision: level (enum topoaware_log_level: QUIET = an error), a key under
   * which it is said once per job for a while (0: every time), text to follow the job's name
   * (starts with ": " or " ("). */
  void (*log)(void *arg, int level, int once_key, const char *text);
  /* Will-run, optional (NULL: fits_at): the start Slurm's own will-run would answer for a job that
   * fits from fits_at on (seconds; never earlier, and never earlier for a later fits_at). Asked a
   * few times per call, for blocks that do not start now. */
  int64_t (*block_start)(void *arg, int64_t fits_at);
} topoaware_select_backend_t;

typedef struct topoaware_select_request {
  uint32_t nodes, gpus_per_node;
  const topoaware_layout_t *layout;
  int mode;                 /* enum topoaware_mode of the job */
  int64_t now, deadline;    /* seconds; strict waits until deadline */
  int will_run;             /* backfill's question; else run-now */
  int may_preempt;          /* slurmctld listed preemptee candidates */
  const uint64_t *usable;   /* node table bitmap: bit i = usable[i / 64] >> (i % 64) & 1 (Slurm's
                             * bitstr_t words after its two header words) */
  uint32_t nbits;
  const uint16_t *free_now; /* free GPUs per node-table index now */
  const uint16_t *free_all; /* will-run: with every usable node's jobs ended */
  /* Will-run, optional (both or neither; NULL: blocks as if every node were free, plain cons_tres
   * always asked), per node-table index, seconds: when every job on the node has ended (<= now:
   * none), and when plain cons_tres could first use the node for this job (INT64_MAX: never). */
  const int64_t *all_free_at, *earliest_free_at;
  uint32_t max_tries, max_time_ms; /* MaxTriesPerCall, MaxTimePerCall */
  int missing_mode;                /* enum topoaware_missing_nodes */
} topoaware_select_request_t;

enum topoaware_select_verdict {
  TOPOAWARE_SELECT_BLOCK = 0, /* the block kept by the backend (run-now: last accepted; will-run: best) */
  TOPOAWARE_SELECT_PLAIN = 1, /* plain cons_tres's answer */
  TOPOAWARE_SELECT_WAIT = 2   /* no answer now (Slurm's Resources); wait says why */
};

typedef struct topoaware_select_answer {
  int verdict;             /* enum topoaware_select_verdict */
  int64_t start;           /* will-run: the start answered */
  char placement[16];      /* run-now answers: "ideal" | "fallback" | "cons_tres" */
  char note[256];          /* run-now answers: how it was placed */
  char wait[512];          /* the reason to keep in the status book, "" = none */
  int wait_hint;           /* wait is will-run's plan, not a refusal */
  int tries;               /* blocks handed to cons_tres */
} topoaware_select_answer_t;

/* Decides; the callbacks run during the call. Returns 0, or -1 with err (then nothing was decided:
 * use plain cons_tres). */
int topoaware_select_decide(topoaware_placer_t *placer, const topoaware_select_request_t *req,
                            const topoaware_select_backend_t *backend, topoaware_select_answer_t *answer, char *err,
                            size_t errlen);

/* Rank order of a job's node set (names in any order, e.g. SLURM_JOB_NODELIST expanded):
 * order[k] = index into names of the node that holds ranks k*G .. k*G+G-1 (G = world / n).
 * Returns 0, or -1 (a node not in the topology, duplicates, a layout that does not fit). */
int topoaware_rank_order(const topoaware_topo_t *topo, const char *const *names, uint32_t n,
                         const topoaware_layout_t *layout, uint32_t *order, char *err, size_t errlen);

/* The running jobs' ring edges per cable (corelib RingEdgeBook) for one topology: a job's rank order
 * taken with topoaware_rank_order_booked counts the edges of the jobs booked before it, where the
 * topology records forwarding tables (without them it is topoaware_rank_order's). Refers to `topo`:
 * free the book first. Not thread-safe: one owner, under its lock. NULL on error. */
typedef struct topoaware_ring_book topoaware_ring_book_t;
topoaware_ring_book_t *topoaware_ring_book_create(const topoaware_topo_t *topo);
void topoaware_ring_book_free(topoaware_ring_book_t *book);
/* topoaware_rank_order counting the booked edges; the job's own are booked under job_id (replacing
 * what it had). Returns 0, or -1 with nothing booked. */
int topoaware_rank_order_booked(topoaware_ring_book_t *book, uint32_t job_id, const char *const *names, uint32_t n,
                                const topoaware_layout_t *layout, uint32_t *order, char *err, size_t errlen);
/* Books a job's edges from its nodes as placed: `order` "a,b,c" (rank order), `layout` as
 * topoaware_layout_string writes it; after a restart or a new topology. Returns 0, or -1 (a node not
 * in the topology, a bad layout) with nothing booked. */
int topoaware_ring_book_add_placed(topoaware_ring_book_t *book, uint32_t job_id, const char *order,
                                   const char *layout, char *err, size_t errlen);
void topoaware_ring_book_remove(topoaware_ring_book_t *book, uint32_t job_id); /* its edges off */
uint32_t topoaware_ring_book_jobs(const topoaware_ring_book_t *book);  /* jobs with booked edges */
uint64_t topoaware_ring_book_edges(const topoaware_ring_book_t *book); /* booked edge-cables in all */

typedef struct topoaware_rank {
  uint32_t rank, node_rank, local_rank;
  uint32_t tp, cp, ep, dp, pp, edp; /* edp: expert-data-parallel rank, (cp + CP*dp) / EP */
} topoaware_rank_t;

/* The ranks of node `self` in the job's node set: fills out[0 .. G-1] (local rank order) and
 * *count = G. cap = room in out. Returns 0 or -1. */
int topoaware_node_ranks(const topoaware_topo_t *topo, const char *const *names, uint32_t n,
                         const topoaware_layout_t *layout, const char *self, topoaware_rank_t *out, uint32_t cap,
                         uint32_t *count, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
