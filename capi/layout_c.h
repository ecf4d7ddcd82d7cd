/* SPDX-License-Identifier: GPL-2.0-or-later */
/* C API over the submit-time layout logic of the core (corelib/layout.hpp, corelib/config.hpp) for the
 * Slurm plugins, which are written in C (Slurm's headers have no extern "C"). Plain C types only;
 * no C++ exception leaves these functions; every error is a return value of -1 (or NULL) with a
 * message copied into the caller's buffer `err` of `errlen` bytes (always NUL-terminated when
 * errlen > 0, truncated if needed). The messages say what is wrong and what would work; callers
 * add the option names and their own prefix. */
#ifndef TOPOAWARE_LAYOUT_C_H
#define TOPOAWARE_LAYOUT_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A message buffer large enough for every message of this API. */
#define TOPOAWARE_ERR_LEN 1024

enum topoaware_order { TOPOAWARE_ORDER_TP_CP_EP_DP_PP = 0, TOPOAWARE_ORDER_TP_PP_DP = 1 };
enum topoaware_mode { TOPOAWARE_MODE_PREFER = 0, TOPOAWARE_MODE_STRICT = 1 };
enum topoaware_hints { TOPOAWARE_HINTS_AUTO = 0, TOPOAWARE_HINTS_OFF = 1, TOPOAWARE_HINTS_PRINT = 2 };

/* Which options were given (bits of topoaware_options_t.set). */
enum topoaware_opt {
  TOPOAWARE_OPT_TP = 1u << 0,
  TOPOAWARE_OPT_CP = 1u << 1,
  TOPOAWARE_OPT_EP = 1u << 2,
  TOPOAWARE_OPT_DP = 1u << 3,
  TOPOAWARE_OPT_PP = 1u << 4,
  TOPOAWARE_OPT_RANK_ORDER = 1u << 5,
  TOPOAWARE_OPT_TOPO_MODE = 1u << 6,
  TOPOAWARE_OPT_MAX_WAIT = 1u << 7,
  TOPOAWARE_OPT_NCCL_HINTS = 1u << 8,
  TOPOAWARE_OPT_MIGRATE = 1u << 9,
};
/* The bits that make a job a "layout job": any parallel axis. */
#define TOPOAWARE_OPT_AXES \
  (TOPOAWARE_OPT_TP | TOPOAWARE_OPT_CP | TOPOAWARE_OPT_EP | TOPOAWARE_OPT_DP | TOPOAWARE_OPT_PP)

typedef struct topoaware_layout {
  uint32_t tp, cp, ep, dp, pp; /* each 1..65536; world = tp*cp*dp*pp GPUs, ep divides cp*dp */
  int order;                   /* enum topoaware_order */
} topoaware_layout_t;

/* The options of a job or step as the plugins collect them: unset fields keep their defaults
 * (axes 1, order tp-cp-ep-dp-pp, mode prefer, max wait 1 h, hints auto) and their bit clear. */
typedef struct topoaware_options {
  topoaware_layout_t layout;
  unsigned set;      /* enum topoaware_opt bits */
  int mode;          /* enum topoaware_mode */
  uint32_t max_wait; /* seconds, 0..30 days */
  int nccl_hints;    /* enum topoaware_hints */
  int migrate;       /* --topo-migrate: 1 the job may be moved by topoaware defrag --apply */
} topoaware_options_t;

/* What a job asks of Slurm; 0 = not given. */
typedef struct topoaware_request {
  uint32_t nodes, gpus_per_node, ntasks, ntasks_per_node, gpus;
} topoaware_request_t;

void topoaware_options_init(topoaware_options_t *opts);

/* One option of sbatch, salloc and srun, declared once here: spank_topoaware registers these
 * (struct spank_option: name, arginfo, usage; --help prints them), job_submit/topoaware and the
 * select plugin read the same names from a job's SPANK environment. */
typedef struct topoaware_option_info {
  const char *name;    /* as users type it without "--": "tp", "rank-order", ... */
  const char *arginfo; /* the value's placeholder in --help: "N", "ORDER", ...; NULL: a flag (no value) */
  const char *usage;   /* the --help text */
  unsigned bit;        /* enum topoaware_opt */
} topoaware_option_info_t;

/* The i-th option, in the order --help lists them (tp pp dp cp ep rank-order topo-mode
 * topo-max-wait nccl-hints topo-migrate); NULL past the end. */
const topoaware_option_info_t *topoaware_option_info(uint32_t i);
/* The option's bit for its name, or 0 for an unknown name. */
unsigned topoaware_option_bit(const char *name);
/* The option's name for its bit, or NULL. */
const char *topoaware_option_name(unsigned bit);

/* Parses `value` strictly and stores it (a later call for the same option replaces it: the last
 * source wins). On error nothing is changed. Returns 0 or -1. A flag (topo-migrate) takes NULL, "",
 * "(null)" (how Slurm forwards a flag), yes/no, 1/0, on/off or true/false. */
int topoaware_options_set(topoaware_options_t *opts, const char *name, const char *value, char *err,
                          size_t errlen);

/* Judges the options as a whole: the layout on its own (ranges, world size, ep divides cp*dp);
 * --rank-order, --topo-mode, --topo-max-wait and --topo-migrate need an axis; --topo-max-wait
 * contradicts --topo-mode=prefer. Options without any layout bit and without those are fine (no layout).
 * Returns 0 or -1. */
int topoaware_options_check(const topoaware_options_t *opts, char *err, size_t errlen);

/* 1 if any of tp, cp, ep, dp, pp was given. */
int topoaware_options_has_layout(const topoaware_options_t *opts);

/* The layout's world size tp*cp*dp*pp (its GPUs, one rank each); UINT64_MAX when it does not fit
 * in 64 bits, 0 for NULL. The one place C code gets it: a product of four axes of up to 65536 wraps. */
uint64_t topoaware_layout_world(const topoaware_layout_t *l);
/* GPUs per node when the layout's world size (tp*cp*dp*pp) is spread evenly over `nodes` nodes;
 * 0 when it cannot be (no nodes, a node count that does not divide the world, over 65535 per node). */
uint32_t topoaware_layout_gpus_per_node(const topoaware_layout_t *l, uint32_t nodes);
/* The layout's canonical text "tp=8,cp=1,ep=1,dp=16,pp=4,rank-order=tp-cp-ep-dp-pp" into buf.
 * Returns 0, or -1 if buf is too small (then buf holds a truncated, terminated string). */
int topoaware_layout_string(const topoaware_layout_t *layout, char *buf, size_t len);
const char *topoaware_order_name(int order);
const char *topoaware_mode_name(int mode);
/* "30m", "2h", "90s", "0". Returns 0 or -1 (buf too small). */
int topoaware_wait_string(uint32_t seconds, char *buf, size_t len);

/* What an error of topoaware_complete_request is about, so that a plugin can return a Slurm
 * error code whose text fits: the node count (-N), the task counts (--ntasks, --ntasks-per-node),
 * the GPUs (--gpus, --gpus-per-node, tp against the nodes' GPUs) or the layout itself. Typed by
 * the core where it throws, never read back from the message's wording. */
enum topoaware_err_kind { TOPOAWARE_ERR_LAYOUT = 0, TOPOAWARE_ERR_NODES, TOPOAWARE_ERR_TASKS, TOPOAWARE_ERR_GPUS };

/* Checks `given` against the layout (one task per GPU, whole TP groups per node, the partition's
 * `node_gpus` GPUs per node, 0 = unknown) and fills `out` with the complete request. Returns 0,
 * or -1 with the message in err and, when kind is not NULL, *kind = enum topoaware_err_kind. */
int topoaware_complete_request(const topoaware_layout_t *layout, const topoaware_request_t *given,
                               uint32_t node_gpus, topoaware_request_t *out, int *kind, char *err, size_t errlen);

/* The same where the partition's nodes share multi-node NVLink domains: domain_nodes[0..ndomains)
 * is the number of the partition's nodes in each such domain (topoaware_nvlink_domain_of counts
 * them; none: NVLink inside nodes only, as topoaware_complete_request). A TP group may then span
 * the nodes of a domain (tp a multiple of node_gpus that divides the GPUs of one of them). */
int topoaware_complete_request_nvlink(const topoaware_layout_t *layout, const topoaware_request_t *given,
                                      uint32_t node_gpus, const uint32_t *domain_nodes, uint32_t ndomains,
                                      topoaware_request_t *out, int *kind, char *err, size_t errlen);

/* topoaware.conf(5). */
typedef struct topoaware_conf topoaware_conf_t;
/* Loads `path` (NULL: the default path, see topoaware_conf_default_path). A missing file gives
 * the defaults with *found = 0. NULL on error (unreadable or invalid file). */
topoaware_conf_t *topoaware_conf_load(const char *path, int *found, char *err, size_t errlen);
void topoaware_conf_free(topoaware_conf_t *conf);
/* The defaults for a job in `partition` (NULL or "" = none given). */
int topoaware_conf_mode(const topoaware_conf_t *conf, const char *partition);
uint32_t topoaware_conf_max_wait(const topoaware_conf_t *conf, const char *partition);
/* The topology file in effect. Returns 0 or -1 (buf too small). */
int topoaware_conf_topology(const topoaware_conf_t *conf, char *buf, size_t len);
/* The path that was loaded. */
const char *topoaware_conf_loaded_path(const topoaware_conf_t *conf);
/* The select plugin's settings (select_cons_tres_topoaware(8)); a NULL conf gives the defaults. */
enum topoaware_log_level {
  TOPOAWARE_LOG_QUIET = 0,   /* errors and topology load problems only */
  TOPOAWARE_LOG_INFO = 1,    /* also topology loads, fallbacks to cons_tres, waits (default) */
  TOPOAWARE_LOG_VERBOSE = 2, /* also every placement with its block and node order */
  TOPOAWARE_LOG_DEBUG = 3    /* every decision */
};
enum topoaware_missing_nodes { TOPOAWARE_MISSING_AVOID = 0, TOPOAWARE_MISSING_FALLBACK = 1 };
enum topoaware_rank_order_mode { TOPOAWARE_RANK_ORDER_NEIGHBOURS = 0, TOPOAWARE_RANK_ORDER_ALONE = 1 };
uint32_t topoaware_conf_max_tries(const topoaware_conf_t *conf);   /* MaxTriesPerCall, 1..64 (4) */
uint32_t topoaware_conf_max_time_ms(const topoaware_conf_t *conf); /* MaxTimePerCall in ms, 1..10000 (200) */
int topoaware_conf_log_level(const topoaware_conf_t *conf);        /* enum topoaware_log_level */
int topoaware_conf_missing_nodes(const topoaware_conf_t *conf);    /* enum topoaware_missing_nodes */
int topoaware_conf_rank_order(const topoaware_conf_t *conf);       /* enum topoaware_rank_order_mode */
uint32_t topoaware_conf_status_interval(const topoaware_conf_t *conf); /* StatusInterval, s, 0..3600 (2) */
const char *topoaware_log_level_name(int level);                   /* "quiet" ... "debug" */
const char *topoaware_missing_nodes_name(int missing);             /* "avoid" | "fallback" */
const char *topoaware_rank_order_mode_name(int mode);               /* "neighbours" | "alone" */
/* The status file in effect: StatusFile=PATH, else topoaware-status.json in
 * `state_save_location` (Slurm's StateSaveLocation). Returns 0 with the path in buf, 1 for
 * StatusFile=none (buf = ""), -1 with a message in buf (no StateSaveLocation for the default, or
 * buf too small). */
int topoaware_conf_status_file(const topoaware_conf_t *conf, const char *state_save_location, char *buf,
                               size_t len);

/* At most `max` bytes of `s` (never cut inside a UTF-8 character) as printable text (control
 * bytes and invalid UTF-8 become '?', tab and newline a space) into buf of len bytes, for quoting a
 * user's or an admin's value in a log or a message. NULL s gives "". Returns buf. */
const char *topoaware_printable(const char *s, size_t max, char *buf, size_t len);

/* Where topoaware looks when nothing names a file (topoaware.conf(5), FILES); every plugin and the
 * command decide through this one function, so they read the same files:
 *   topoaware.conf: $TOPOAWARE_CONF, else beside `slurm_conf` (the slurm.conf the process read;
 *                   NULL = $SLURM_CONF, which Slurm sets in its daemons and commands), else
 *                   /etc/slurm/topoaware.conf;
 *   topology:       topology.json beside that topoaware.conf (what a missing or broken
 *                   topoaware.conf implies; a good one may name another with TopologyFile=).
 * Either buffer may be NULL. Returns 0, or -1 when a buffer is too small. */
int topoaware_default_paths(const char *slurm_conf, char *conf, size_t conf_len, char *topology, size_t topology_len);

#ifdef __cplusplus
}
#endif

#endif
