/* spank_topoaware.so: the --tp/--pp/--dp/--cp/--ep, --rank-order, --topo-mode, --topo-max-wait and
 * --nccl-hints options of sbatch, salloc and srun (spank_topoaware(8)).
 *
 * Contexts (spank.h): sbatch/salloc (allocator) call init, init_post_opt and exit; srun (local)
 * calls init, init_post_opt, local_user_init and exit; slurmstepd (remote) calls init, then the
 * option callbacks with the values the submit side forwarded, then the task hooks:
 * slurm_spank_task_init (as the user, after Slurm set SLURM_PROCID and CUDA_VISIBLE_DEVICES) gives
 * each task of a layout step its coordinates, launcher variables, GPU order and NCCL hints, all
 * computed by the core (capi/task_c.h; hwloc through node/hwloc_probe). Any failure there is a
 * warning and a task with no hints at all, never a failed task. In the batch step (not a rank)
 * it writes the job's hostfile and rank map instead.
 *
 * Privileges: slurm_spank_job_prolog and slurm_spank_job_epilog run as root in slurmd (through
 * `slurmstepd spank prolog|epilog`); they only create the job's private folder
 * <state_dir>/job.<id> for the job's user and remove it again (capi/job_dir_c.h). Everything that
 * reads a file or a user's option value runs as the job's user, in slurmstepd's task_init.
 *
 * Slurm calls an option's callback once per source (sbatch: script, environment, command line;
 * srun: environment, command line); every call is checked at once and the last one wins, like
 * Slurm's own options. The layout as a whole is judged in init_post_opt, so a bad combination
 * stops the command before a job exists. The layout logic itself is the core's (layout_c.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h> /* SLURM_BATCH_SCRIPT */
#include <slurm/spank.h>

#include "job_dir_c.h"
#include "layout_c.h"
#include "task_c.h"

SPANK_PLUGIN(topoaware, 1);

#define TA "topoaware"

enum ta_opt_val {
  TA_OPT_TP = 1,
  TA_OPT_CP,
  TA_OPT_EP,
  TA_OPT_DP,
  TA_OPT_PP,
  TA_OPT_RANK_ORDER,
  TA_OPT_TOPO_MODE,
  TA_OPT_MAX_WAIT,
  TA_OPT_NCCL_HINTS,
};

static int ta_opt_cb(int val, const char *optarg, int remote);

/* The one option table, registered with spank_option_register in every context that has options
 * (a static spank_options table is not enough for sbatch, PLATFORM.md). */
static struct spank_option ta_options[] = {
    {"tp", "N", "[topoaware] tensor parallel size: GPUs of one TP group, inside one node (NVLink)", 1, TA_OPT_TP,
     ta_opt_cb},
    {"pp", "N", "[topoaware] pipeline parallel size", 1, TA_OPT_PP, ta_opt_cb},
    {"dp", "N", "[topoaware] data parallel size; the job has tp*cp*dp*pp GPUs, one task per GPU", 1, TA_OPT_DP,
     ta_opt_cb},
    {"cp", "N", "[topoaware] context parallel size", 1, TA_OPT_CP, ta_opt_cb},
    {"ep", "N", "[topoaware] expert parallel size; divides cp*dp, does not add GPUs", 1, TA_OPT_EP, ta_opt_cb},
    {"rank-order", "ORDER", "[topoaware] rank order: tp-cp-ep-dp-pp (default, Megatron) or tp-pp-dp", 1,
     TA_OPT_RANK_ORDER, ta_opt_cb},
    {"topo-mode", "MODE",
     "[topoaware] strict: wait for a block of switches that fits the layout (up to --topo-max-wait); prefer: "
     "best block available now",
     1, TA_OPT_TOPO_MODE, ta_opt_cb},
    {"topo-max-wait", "TIME",
     "[topoaware] longest wait of --topo-mode=strict, e.g. 30m, 2h, 90s, 1d (no unit: minutes; at most 30d)", 1,
     TA_OPT_MAX_WAIT, ta_opt_cb},
    {"nccl-hints", "WHAT", "[topoaware] NCCL and rank hints in tasks: auto (default), off or print", 1,
     TA_OPT_NCCL_HINTS, ta_opt_cb},
    SPANK_OPTIONS_TABLE_END};

static const char *ta_opt_name(int val) {
  switch (val) {
    case TA_OPT_TP: return "tp";
    case TA_OPT_CP: return "cp";
    case TA_OPT_EP: return "ep";
    case TA_OPT_DP: return "dp";
    case TA_OPT_PP: return "pp";
    case TA_OPT_RANK_ORDER: return "rank-order";
    case TA_OPT_TOPO_MODE: return "topo-mode";
    case TA_OPT_MAX_WAIT: return "topo-max-wait";
    case TA_OPT_NCCL_HINTS: return "nccl-hints";
    default: return NULL;
  }
}

/* Plugin state: one process, one job or step. */
static struct {
  topoaware_options_t opts;
  /* plugstack.conf arguments */
  char topology[4096];
  char exclude_nics[1024]; /* exclude_nics=mlx5_8,mlx5_9: storage/management NICs */
  char state_dir[1024];    /* state_dir=PATH: the job prolog's hash files and job folders (default TA_STATE_DIR) */
  /* override_env=NAME,...|all: variables of kind TOPOAWARE_VAR_DEFAULT whose value from topoaware
   * replaces the one the task already has; bit i = topoaware_task_default_var(i) */
  uint32_t override_env;
  int has_default_order, default_order;
  int has_default_mode, default_mode;
  int has_default_max_wait;
  uint32_t default_max_wait;
  /* a remote-side option value that did not parse (the submit side checked it; a task then gets
   * no hints, issue 6) */
  int remote_invalid;
} ta;

static int ta_opt_cb(int val, const char *optarg, int remote) {
  char err[TOPOAWARE_ERR_LEN];
  const char *name = ta_opt_name(val);

  if (!name) {
    slurm_error(TA ": internal error: option value %d is not ours", val);
    return -1;
  }
  if (topoaware_options_set(&ta.opts, name, optarg, err, sizeof(err)) != 0) {
    if (remote) {
      /* slurmstepd: never stop a step here; remember it so that no hints are derived. */
      slurm_error(TA ": --%s=%.64s: %s; tasks get no topoaware hints", name, optarg ? optarg : "", err);
      ta.remote_invalid = 1;
      return 0;
    }
    /* Slurm then prints "Invalid --<name> argument" and the command exits non-zero. */
    slurm_error(TA ": --%s=%.64s: %s", name, optarg ? optarg : "", err);
    return -1;
  }
  return 0;
}

/* The names override_env= accepts, for messages: "RANK,LOCAL_RANK,...". */
static void ta_default_var_list(char *buf, size_t len) {
  uint32_t i;
  const char *n;
  buf[0] = 0;
  for (i = 0; (n = topoaware_task_default_var(i)) != NULL; i++)
    snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? "," : "", n);
}

/* override_env=NAME,NAME,... | all | none (the lists of several arguments add up). An unknown name
 * is logged and ignored; the others still apply. */
static void ta_parse_override(const char *a, const char *list) {
  char buf[1024], names[512], *tok, *save = NULL;
  uint32_t i;

  if (strcmp(list, "all") == 0) {
    for (i = 0; topoaware_task_default_var(i) && i < 32; i++) ta.override_env |= 1u << i;
    return;
  }
  if (strcmp(list, "none") == 0) return;
  if (strlen(list) >= sizeof(buf)) {
    slurm_error(TA ": plugstack.conf argument '%.128s...' is too long; argument ignored", a);
    return;
  }
  strcpy(buf, list);
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    const char *n;
    for (i = 0; (n = topoaware_task_default_var(i)) != NULL && i < 32; i++)
      if (strcmp(n, tok) == 0) break;
    if (n && i < 32) {
      ta.override_env |= 1u << i;
      continue;
    }
    ta_default_var_list(names, sizeof(names));
    slurm_error(TA ": plugstack.conf argument '%.128s': '%.64s' is not a variable topoaware sets only when unset "
                "(those are %s, or all); name ignored",
                a, tok, names);
  }
}

/* 1 if the admin lets topoaware's value of `name` replace the task's own. */
static int ta_overrides(const char *name) {
  uint32_t i;
  const char *n;
  for (i = 0; (n = topoaware_task_default_var(i)) != NULL && i < 32; i++)
    if (strcmp(n, name) == 0) return (ta.override_env >> i) & 1u;
  return 0;
}

/* plugstack.conf: `required|optional /path/spank_topoaware.so [topology=PATH] [exclude_nics=NAMES]
 * [state_dir=PATH] [override_env=NAMES|all] [default_order=ORDER] [default_mode=strict|prefer]
 * [default_max_wait=TIME]`. A bad argument is logged and ignored: a typo of the admin must not
 * break every srun and sbatch. */
static void ta_parse_args(int ac, char **av) {
  char err[TOPOAWARE_ERR_LEN];
  int i;

  for (i = 0; i < ac; i++) {
    const char *a = av[i];
    topoaware_options_t tmp;

    if (!a) continue;
    if (strncmp(a, "topology=", 9) == 0) {
      const char *p = a + 9;
      if (p[0] != '/' || strlen(p) >= sizeof(ta.topology)) {
        slurm_error(TA ": plugstack.conf argument '%.128s': the topology file must be an absolute path "
                    "(e.g. topology=/etc/slurm/topology.json); argument ignored",
                    a);
        continue;
      }
      strcpy(ta.topology, p);
    } else if (strncmp(a, "state_dir=", 10) == 0) {
      const char *p = a + 10;
      if (p[0] != '/' || strlen(p) >= sizeof(ta.state_dir)) {
        slurm_error(TA ": plugstack.conf argument '%.128s': state_dir must be an absolute path; argument ignored", a);
        continue;
      }
      strcpy(ta.state_dir, p);
    } else if (strncmp(a, "exclude_nics=", 13) == 0) {
      const char *p = a + 13;
      if (strlen(p) >= sizeof(ta.exclude_nics) ||
          strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-,") != strlen(p)) {
        slurm_error(TA ": plugstack.conf argument '%.128s': expected device names separated by commas "
                    "(e.g. exclude_nics=mlx5_8,mlx5_9); argument ignored",
                    a);
        continue;
      }
      strcpy(ta.exclude_nics, p);
    } else if (strncmp(a, "override_env=", 13) == 0) {
      ta_parse_override(a, a + 13);
    } else if (strncmp(a, "default_order=", 14) == 0) {
      topoaware_options_init(&tmp);
      if (topoaware_options_set(&tmp, "rank-order", a + 14, err, sizeof(err)) != 0) {
        slurm_error(TA ": plugstack.conf argument '%.128s': %s; argument ignored", a, err);
        continue;
      }
      ta.has_default_order = 1;
      ta.default_order = tmp.layout.order;
    } else if (strncmp(a, "default_mode=", 13) == 0) {
      topoaware_options_init(&tmp);
      if (topoaware_options_set(&tmp, "topo-mode", a + 13, err, sizeof(err)) != 0) {
        slurm_error(TA ": plugstack.conf argument '%.128s': %s; argument ignored", a, err);
        continue;
      }
      ta.has_default_mode = 1;
      ta.default_mode = tmp.mode;
    } else if (strncmp(a, "default_max_wait=", 17) == 0) {
      topoaware_options_init(&tmp);
      if (topoaware_options_set(&tmp, "topo-max-wait", a + 17, err, sizeof(err)) != 0) {
        slurm_error(TA ": plugstack.conf argument '%.128s': %s; argument ignored", a, err);
        continue;
      }
      ta.has_default_max_wait = 1;
      ta.default_max_wait = tmp.max_wait;
    } else {
      slurm_error(TA ": unknown plugstack.conf argument '%.128s' ignored; the arguments are topology=PATH, "
                  "exclude_nics=NAMES, state_dir=PATH, override_env=NAMES|all, default_order=tp-cp-ep-dp-pp|tp-pp-dp, "
                  "default_mode=strict|prefer and "
                  "default_max_wait=TIME",
                  a);
    }
  }
}

int slurm_spank_init(spank_t sp, int ac, char **av) {
  spank_context_t ctx = spank_context();
  struct spank_option *o;

  memset(&ta, 0, sizeof(ta));
  topoaware_options_init(&ta.opts);
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE) return 0; /* slurmd */
  ta_parse_args(ac, av);
  for (o = ta_options; o->name; o++) {
    spank_err_t rc = spank_option_register(sp, o);
    if (rc != ESPANK_SUCCESS) {
      slurm_error(TA ": cannot register --%s: %s", o->name, spank_strerror(rc));
      return -1;
    }
  }
  return 0;
}

/* Sends an admin default with the job, under the same name as the user's option, so that
 * job_submit/topoaware and the select plugin see exactly what this host decided. */
static int ta_send_default(spank_t sp, const char *envname, const char *value) {
  spank_err_t rc = spank_job_control_setenv(sp, envname, value, 0);
  if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS) {
    slurm_error(TA ": cannot pass %s=%s to the job: %s", envname, value, spank_strerror(rc));
    return -1;
  }
  return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av) {
  spank_context_t ctx = spank_context();
  char err[TOPOAWARE_ERR_LEN];
  char wait[32];

  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) return 0;
  if (topoaware_options_check(&ta.opts, err, sizeof(err)) != 0) {
    slurm_error(TA ": %s", err);
    return -1;
  }
  if (!topoaware_options_has_layout(&ta.opts)) return 0;
  /* Admin defaults fill in what the user did not say. */
  if (!(ta.opts.set & TOPOAWARE_OPT_RANK_ORDER) && ta.has_default_order) {
    ta.opts.layout.order = ta.default_order;
    if (ta_send_default(sp, "_SLURM_SPANK_OPTION_topoaware_rank_order", topoaware_order_name(ta.default_order)))
      return -1;
  }
  if (!(ta.opts.set & TOPOAWARE_OPT_TOPO_MODE) && ta.has_default_mode) {
    ta.opts.mode = ta.default_mode;
    if (ta_send_default(sp, "_SLURM_SPANK_OPTION_topoaware_topo_mode", topoaware_mode_name(ta.default_mode)))
      return -1;
  }
  if (!(ta.opts.set & TOPOAWARE_OPT_MAX_WAIT) && ta.has_default_max_wait && ta.opts.mode == TOPOAWARE_MODE_STRICT) {
    ta.opts.max_wait = ta.default_max_wait;
    if (topoaware_wait_string(ta.default_max_wait, wait, sizeof(wait)) == 0 &&
        ta_send_default(sp, "_SLURM_SPANK_OPTION_topoaware_topo_max_wait", wait))
      return -1;
  }
  return 0;
}

/* srun only: the step's own task and node counts are known here (spank.h: S_JOB_TOTAL_TASK_COUNT,
 * S_JOB_NNODES in local context). A step runs one task per GPU of its layout. */
int slurm_spank_local_user_init(spank_t sp, int ac, char **av) {
  uint32_t tasks = 0, nodes = 0;
  char lay[256];
  const topoaware_layout_t *l = &ta.opts.layout;
  uint64_t world;

  if (spank_context() != S_CTX_LOCAL || !topoaware_options_has_layout(&ta.opts)) return 0;
  if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_NNODES, &nodes) != ESPANK_SUCCESS || tasks == 0 || nodes == 0)
    return 0; /* nothing to compare with */
  world = (uint64_t)l->tp * l->cp * l->dp * l->pp;
  topoaware_layout_string(l, lay, sizeof(lay));
  if (world != tasks) {
    slurm_error(TA ": the step has %u tasks but its layout (%s) has tp*cp*dp*pp = %llu ranks, one task per GPU; "
                "run srun -n %llu, or give srun the layout of these %u tasks",
                tasks, lay, (unsigned long long)world, (unsigned long long)world, tasks);
    return -1;
  }
  if (tasks % nodes == 0 && (tasks / nodes) % l->tp != 0) {
    slurm_error(TA ": the step puts %u tasks on each of %u nodes, which does not hold whole TP groups of tp=%u; "
                "use a node count that gives a multiple of %u tasks per node",
                tasks / nodes, nodes, l->tp, l->tp);
    return -1;
  }
  return 0;
}

/* --- the node's state folder: topology hash from slurmctld, the job's private folder ---
 * The select plugin appends TOPOAWARE_TOPO_HASH to the job's SPANK environment; Slurm gives it to
 * the job prolog as SPANK_TOPOAWARE_TOPO_HASH, but not to the tasks (Slurm 22.05). So the job
 * prolog (root, in slurmd) writes it to <state_dir>/job.<jobid>.hash, task_init reads it, and the
 * job epilog removes it.
 * For a layout job the prolog also makes <state_dir>/job.<jobid>/, owned by the job's user, mode
 * 0700 (capi/job_dir_c.h); the batch step writes the hostfile and rank map there as that user; the
 * epilog takes the folder back and removes it. */
#define TA_STATE_DIR "/run/topoaware"
#define TA_HOSTFILE "hostfile"
#define TA_RANKMAP "rankmap"

static const char *ta_state_dir(void) { return ta.state_dir[0] ? ta.state_dir : TA_STATE_DIR; }

/* "sha256:" and 64 lower-case hex digits. */
static int ta_hash_valid(const char *h) {
  size_t i;
  if (strncmp(h, "sha256:", 7) != 0 || strlen(h) != 7 + 64) return 0;
  for (i = 7; h[i]; i++)
    if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f'))) return 0;
  return 1;
}

/* The state folder as an fd: created 0755 by root if missing; must be a real folder owned by
 * root and writable by nobody else. -1 on error (logged; a missing folder only when create). */
static int ta_state_dir_fd(int create) {
  char err[TOPOAWARE_ERR_LEN];
  int fd = topoaware_state_dir_open(ta_state_dir(), create, err, sizeof(err));
  if (fd < 0 && (create || errno != ENOENT)) slurm_error(TA ": %s; the state folder is not used", err);
  return fd;
}

static uint32_t ta_script_job_id(spank_t sp) {
  uint32_t id = 0;
  const char *e;
  if (spank_get_item(sp, S_JOB_ID, &id) == ESPANK_SUCCESS && id) return id;
  e = getenv("SLURM_JOB_ID");
  return e ? (uint32_t)strtoul(e, NULL, 10) : 0;
}

/* In the job prolog and epilog: the job's options from the SPANK job environment (Slurm gives
 * spank_option_getopt the SPANK__SLURM_SPANK_OPTION_* variables there), into ta.opts. 1 if the
 * job has a layout and wants hints. */
static int ta_script_layout_job(spank_t sp) {
  char err[TOPOAWARE_ERR_LEN];
  struct spank_option *o;

  for (o = ta_options; o->name; o++) {
    char *arg = NULL;
    if (spank_option_getopt(sp, o, &arg) != ESPANK_SUCCESS || !arg) continue;
    if (topoaware_options_set(&ta.opts, o->name, arg, err, sizeof(err)) != 0) return 0; /* checked at submit */
  }
  return topoaware_options_has_layout(&ta.opts) && ta.opts.nccl_hints != TOPOAWARE_HINTS_OFF;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av) {
  const char *h = getenv("SPANK_TOPOAWARE_TOPO_HASH");
  char name[64], line[128], err[TOPOAWARE_ERR_LEN];
  uint32_t id;
  uid_t uid;
  gid_t gid;
  int dfd, fd, n, layout;

  memset(&ta, 0, sizeof(ta));
  topoaware_options_init(&ta.opts);
  ta_parse_args(ac, av); /* slurm_spank_init is not called before the job prolog (seen on 22.05) */
  if (h && !ta_hash_valid(h)) {
    slurm_error(TA ": job prolog: SPANK_TOPOAWARE_TOPO_HASH is not a sha256 hash; ignored");
    h = NULL;
  }
  layout = ta_script_layout_job(sp);
  if (!h && !layout) return 0; /* not a layout job, and no select/cons_tres_topoaware */
  id = ta_script_job_id(sp);
  if (!id || (dfd = ta_state_dir_fd(1)) < 0) return 0;
  /* The job's private folder (root makes it, then hands it to the job's user). */
  if (layout) {
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
      slurm_error(TA ": job prolog: Slurm does not tell the job's uid and gid; no job folder");
    else if (topoaware_job_dir_create(dfd, id, uid, gid, err, sizeof(err)) != 0)
      slurm_error(TA ": job prolog: %s/%s", ta_state_dir(), err);
  }
  if (h) {
    snprintf(name, sizeof(name), "job.%u.hash", id);
    n = snprintf(line, sizeof(line), "%s\n", h);
    fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, (size_t)n) != n)
      slurm_error(TA ": job prolog: cannot write %s/%s: %s", ta_state_dir(), name, strerror(errno));
    if (fd >= 0) close(fd);
  }
  close(dfd);
  return 0; /* never fail the prolog: that would drain the node */
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av) {
  char name[64], err[TOPOAWARE_ERR_LEN];
  uint32_t id;
  int dfd;

  memset(&ta, 0, sizeof(ta));
  ta_parse_args(ac, av);
  id = ta_script_job_id(sp);
  if (!id || (dfd = ta_state_dir_fd(0)) < 0) return 0;
  snprintf(name, sizeof(name), "job.%u.hash", id);
  if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
    slurm_error(TA ": job epilog: cannot remove %s/%s: %s", ta_state_dir(), name, strerror(errno));
  /* Every job: a folder may be there even if this job's options no longer tell (a changed plugstack.conf). */
  if (topoaware_job_dir_remove(dfd, id, err, sizeof(err)) != 0) slurm_error(TA ": job epilog: %s/%s", ta_state_dir(), err);
  close(dfd);
  return 0;
}

/* In task_init: the hash the job prolog recorded, into buf; 0 if there is none. */
static int ta_read_job_hash(uint32_t job_id, char *buf, size_t len) {
  char name[64], tmp[128];
  int dfd, fd;
  ssize_t n;

  if ((dfd = ta_state_dir_fd(0)) < 0) return 0;
  snprintf(name, sizeof(name), "job.%u.hash", job_id);
  fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  close(dfd);
  if (fd < 0) return 0;
  n = read(fd, tmp, sizeof(tmp) - 1);
  close(fd);
  if (n <= 0) return 0;
  tmp[n] = 0;
  tmp[strcspn(tmp, "\n")] = 0;
  if (!ta_hash_valid(tmp) || strlen(tmp) >= len) return 0;
  strcpy(buf, tmp);
  return 1;
}

/* --- task environment (slurmstepd, as the user) --- */

#define TA_DEFAULT_TOPOLOGY "/etc/slurm/topology.json"
#define TA_MAX_ENV (4u << 20) /* a node list longer than this is not ours to expand */

/* A task environment variable into a malloc'd buffer; NULL if unset (or unreadable). */
static char *ta_getenv(spank_t sp, const char *name) {
  int len = 4096;
  while ((unsigned)len <= TA_MAX_ENV) {
    char *buf = malloc((size_t)len);
    spank_err_t rc;
    if (!buf) return NULL;
    rc = spank_getenv(sp, name, buf, len);
    if (rc == ESPANK_SUCCESS) return buf;
    free(buf);
    if (rc != ESPANK_NOSPACE) return NULL;
    len *= 4;
  }
  return NULL;
}

static int ta_isset(spank_t sp, const char *name) {
  char c[2];
  spank_err_t rc = spank_getenv(sp, name, c, sizeof(c));
  return rc == ESPANK_SUCCESS || rc == ESPANK_NOSPACE;
}

/* The topology file: plugstack.conf topology=, else topoaware.conf's TopologyFile, else
 * topology.json beside topoaware.conf, which is beside slurm.conf ($SLURM_CONF, set by Slurm in
 * slurmstepd and the commands): topoaware_default_paths, the select plugin's rule too. */
static void ta_topology_path(char *buf, size_t len) {
  char err[TOPOAWARE_ERR_LEN];
  int found = 0;
  topoaware_conf_t *conf;

  if (ta.topology[0]) {
    snprintf(buf, len, "%s", ta.topology);
    return;
  }
  if (topoaware_default_paths(NULL, NULL, 0, buf, len) != 0) snprintf(buf, len, "%s", TA_DEFAULT_TOPOLOGY);
  conf = topoaware_conf_load(NULL, &found, err, sizeof(err));
  if (!conf) {
    slurm_error(TA ": %s; using %s", err, buf);
    return;
  }
  if (topoaware_conf_topology(conf, buf, len) != 0) snprintf(buf, len, "%s", TA_DEFAULT_TOPOLOGY);
  topoaware_conf_free(conf);
}

/* Warns in slurmd's log and, once per node, on the task's stderr. */
static void ta_no_hints(int local_id, const char *why) {
  slurm_error(TA ": this task gets no topoaware hints: %s", why);
  if (local_id == 0) fprintf(stderr, TA ": warning: tasks on this node get no topoaware hints: %s\n", why);
}

/* The hash the select plugin placed the job with: the job prolog's file, else the variable
 * (spank_topoaware(8)); NULL if neither. malloc'd. */
static char *ta_expected_hash(spank_t sp, uint32_t job_id) {
  char file_hash[128];
  if (ta_read_job_hash(job_id, file_hash, sizeof(file_hash))) return strdup(file_hash);
  return ta_getenv(sp, "SPANK_TOPOAWARE_TOPO_HASH");
}

/* The batch step is not a rank: it gets the job's hostfile (SLURM_HOSTFILE for srun
 * --distribution=arbitrary) and rank map in the job's private folder, written as the job's user
 * (task_init runs after become_user) into the folder the job prolog made for that user. */
static void ta_batch_step(spank_t sp, uint32_t job_id) {
  char topo[4096], err[TOPOAWARE_ERR_LEN], dir[1200], path[1300];
  char *nodes = NULL, *hash = NULL;
  topoaware_job_in_t in;
  topoaware_job_map_t *map = NULL;
  const char *text;
  int sfd = -1, jfd = -1;

  if (ta.remote_invalid) {
    fprintf(stderr, TA ": warning: no hostfile for this job: an option value did not parse (see slurmd's log)\n");
    return;
  }
  nodes = ta_getenv(sp, "SLURM_JOB_NODELIST");
  if (!nodes) {
    snprintf(err, sizeof(err), "SLURM_JOB_NODELIST is not set");
    goto fail;
  }
  hash = ta_expected_hash(sp, job_id);
  ta_topology_path(topo, sizeof(topo));
  memset(&in, 0, sizeof(in));
  in.topology_path = topo;
  in.expected_hash = hash;
  in.nodelist = nodes;
  in.layout = &ta.opts.layout;
  if (!(map = topoaware_job_map(&in, err, sizeof(err)))) goto fail;
  if ((sfd = topoaware_state_dir_open(ta_state_dir(), 0, err, sizeof(err))) < 0) goto fail;
  if ((jfd = topoaware_job_dir_open(sfd, job_id, err, sizeof(err))) < 0) {
    if (errno == ENOENT)
      snprintf(err, sizeof(err), "%.900s/job.%u does not exist (the job prolog makes it: spank_topoaware(8), FILES)",
               ta_state_dir(), job_id);
    goto fail;
  }
  text = topoaware_job_map_hostfile(map);
  if (topoaware_file_write_at(jfd, TA_HOSTFILE, text, strlen(text), err, sizeof(err)) != 0) goto fail;
  text = topoaware_job_map_rankmap(map);
  if (topoaware_file_write_at(jfd, TA_RANKMAP, text, strlen(text), err, sizeof(err)) != 0) goto fail;
  snprintf(dir, sizeof(dir), "%s/job.%u", ta_state_dir(), job_id);
  snprintf(path, sizeof(path), "%s/" TA_HOSTFILE, dir);
  if (spank_setenv(sp, "TOPOAWARE_HOSTFILE", path, 1) != ESPANK_SUCCESS) slurm_error(TA ": cannot set TOPOAWARE_HOSTFILE");
  snprintf(path, sizeof(path), "%s/" TA_RANKMAP, dir);
  if (spank_setenv(sp, "TOPOAWARE_RANKMAP", path, 1) != ESPANK_SUCCESS) slurm_error(TA ": cannot set TOPOAWARE_RANKMAP");
  if (ta.opts.nccl_hints == TOPOAWARE_HINTS_PRINT)
    fprintf(stderr, TA ": hostfile %s/" TA_HOSTFILE " and rank map %s: %u ranks on %u nodes in topology order\n", dir,
            path, topoaware_job_map_ranks(map), topoaware_job_map_nodes(map));
  slurm_debug(TA ": job %u: hostfile and rank map in %s (%u ranks, topology %s)", job_id, dir,
              topoaware_job_map_ranks(map), topoaware_job_map_hash(map));
  goto out;
fail:
  slurm_error(TA ": no hostfile for job %u: %s", job_id, err);
  fprintf(stderr, TA ": warning: no hostfile for this job: %s\n", err);
out:
  if (jfd >= 0) close(jfd);
  if (sfd >= 0) close(sfd);
  topoaware_job_map_free(map);
  free(nodes);
  free(hash);
}

/* Appends name to a ", "-separated list in buf. */
static void ta_list_add(char *buf, size_t len, const char *name) {
  size_t n = strlen(buf);
  if (n < len) snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
}

/* The inputs of the task plan that every task of the step on this node shares, read from the
 * step's environment (the same in user_init and task_init): the strings are malloc'd into *t. */
typedef struct {
  char topo[4096];
  char *nodes, *self, *hash, *order;
  topoaware_task_in_t in;
} ta_task_inputs_t;

static void ta_task_inputs_free(ta_task_inputs_t *t) {
  free(t->nodes);
  free(t->self);
  free(t->hash);
  free(t->order);
}

/* 0, or -1 with *why (no hints) when the node list or the node's name is unknown. */
static int ta_task_inputs(spank_t sp, uint32_t job_id, uint32_t local_tasks, uint32_t total_tasks,
                          ta_task_inputs_t *t, const char **why) {
  memset(t, 0, sizeof(*t));
  t->nodes = ta_getenv(sp, "SLURM_STEP_NODELIST");
  if (!t->nodes) t->nodes = ta_getenv(sp, "SLURM_JOB_NODELIST");
  t->self = ta_getenv(sp, "SLURMD_NODENAME");
  if (!t->self && getenv("SLURMD_NODENAME")) t->self = strdup(getenv("SLURMD_NODENAME")); /* slurmstepd's own */
  if (!t->nodes || !t->self) {
    *why = "SLURM_STEP_NODELIST or SLURMD_NODENAME is not set";
    return -1;
  }
  t->hash = ta_expected_hash(sp, job_id);
  t->order = ta_getenv(sp, "CUDA_DEVICE_ORDER");
  ta_topology_path(t->topo, sizeof(t->topo));
  t->in.topology_path = t->topo;
  t->in.expected_hash = t->hash;
  t->in.nodelist = t->nodes;
  t->in.self = t->self;
  t->in.local_tasks = local_tasks;
  t->in.total_tasks = total_tasks;
  t->in.job_id = job_id;
  t->in.layout = &ta.opts.layout;
  t->in.exclude_nics = ta.exclude_nics[0] ? ta.exclude_nics : NULL;
  t->in.hwloc_xml = NULL; /* this machine, or slurmd's HWLOC_XMLFILE */
  /* Slurm's GPU indices follow PCI bus order; a user's other CUDA_DEVICE_ORDER would renumber them
   * (unless the admin lets topoaware replace it: override_env=CUDA_DEVICE_ORDER). */
  t->in.gpu_hints = !(t->order && strcmp(t->order, "PCI_BUS_ID") != 0) || ta_overrides("CUDA_DEVICE_ORDER");
  return 0;
}

/* A step of a layout job, in slurmstepd before it forks the tasks: what they all share (the
 * topology, this node's ranks, hwloc's GPUs and NICs) is computed once here; each task's
 * task_init then takes only its own part. A failure here changes nothing: task_init computes it
 * again and reports it. */
int slurm_spank_user_init(spank_t sp, int ac, char **av) {
  ta_task_inputs_t t;
  const char *why = NULL;
  char err[TOPOAWARE_ERR_LEN];
  uint32_t job_id = 0, step_id = 0, local_tasks = 0, total_tasks = 0;

  (void)ac;
  (void)av;
  if (spank_context() != S_CTX_REMOTE || !topoaware_options_has_layout(&ta.opts) || ta.remote_invalid) return 0;
  if (ta.opts.nccl_hints == TOPOAWARE_HINTS_OFF) return 0;
  if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS || step_id == SLURM_BATCH_SCRIPT ||
      spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total_tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS)
    return 0;
  if (ta_task_inputs(sp, job_id, local_tasks, total_tasks, &t, &why) == 0 &&
      topoaware_task_prepare(&t.in, err, sizeof(err)) != 0)
    slurm_debug(TA ": step preparation: %s (each task tries again)", err);
  ta_task_inputs_free(&t);
  return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av) {
  char err[TOPOAWARE_ERR_LEN], kept[512] = "", replaced[512] = "";
  char *cvd = NULL;
  ta_task_inputs_t t;
  topoaware_task_in_t in;
  topoaware_task_plan_t *plan = NULL;
  uint32_t i, job_id = 0, step_id = 0, local_tasks = 0, total_tasks = 0;
  int local_id = -1;
  const char *why = NULL;

  (void)ac;
  (void)av;
  if (spank_context() != S_CTX_REMOTE || !topoaware_options_has_layout(&ta.opts)) return 0;
  if (ta.opts.nccl_hints == TOPOAWARE_HINTS_OFF) return 0;
  if (spank_get_item(sp, S_JOB_STEPID, &step_id) == ESPANK_SUCCESS && step_id == SLURM_BATCH_SCRIPT &&
      spank_get_item(sp, S_JOB_ID, &job_id) == ESPANK_SUCCESS) {
    ta_batch_step(sp, job_id);
    return 0;
  }
  if (spank_get_item(sp, S_TASK_ID, &local_id) != ESPANK_SUCCESS || local_id < 0 ||
      spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total_tasks) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) {
    ta_no_hints(0, "Slurm does not tell the task id, task counts or job id");
    return 0;
  }
  if (ta.remote_invalid) {
    ta_no_hints(local_id, "an option value did not parse (see slurmd's log)");
    return 0;
  }
  if (ta_task_inputs(sp, job_id, local_tasks, total_tasks, &t, &why) != 0) {
    ta_no_hints(local_id, why);
    goto out;
  }
  /* Order of the plugins: Slurm's CUDA_VISIBLE_DEVICES is read here, after Slurm set it. */
  cvd = ta_getenv(sp, "CUDA_VISIBLE_DEVICES");
  in = t.in;
  in.local_id = (uint32_t)local_id;
  in.cuda_visible_devices = cvd;
  if (!in.gpu_hints && local_id == 0)
    fprintf(stderr, TA ": CUDA_DEVICE_ORDER=%.32s is set: CUDA_VISIBLE_DEVICES and NCCL_IB_HCA left alone\n",
            t.order);

  plan = topoaware_task_plan(&in, err, sizeof(err));
  if (!plan) {
    ta_no_hints(local_id, err);
    goto out;
  }
  if (*topoaware_task_plan_note(plan) && local_id == 0) fprintf(stderr, TA ": %s\n", topoaware_task_plan_note(plan));
  for (i = 0; i < topoaware_task_plan_vars(plan); i++) {
    const char *name = topoaware_task_plan_name(plan, i), *value = topoaware_task_plan_value(plan, i);
    int kind = topoaware_task_plan_kind(plan, i);
    spank_err_t rc;
    if (kind == TOPOAWARE_VAR_DEFAULT && ta_isset(sp, name)) {
      if (!ta_overrides(name)) { /* the user's value wins */
        ta_list_add(kept, sizeof(kept), name);
        continue;
      }
      ta_list_add(replaced, sizeof(replaced), name);
    }
    rc = spank_setenv(sp, name, value, 1);
    if (rc != ESPANK_SUCCESS) slurm_error(TA ": cannot set %s: %s", name, spank_strerror(rc));
  }
  /* Once per node: which of the task's own values were kept or, by the admin's override_env=, replaced. */
  if (local_id == 0 && kept[0]) {
    slurm_info(TA ": kept the job's own %s (plugstack.conf override_env= would replace them)", kept);
    fprintf(stderr, TA ": kept the job's own %s (set before topoaware; TOPOAWARE_* have topoaware's values)\n", kept);
  }
  if (local_id == 0 && replaced[0]) {
    slurm_info(TA ": replaced the job's own %s (plugstack.conf override_env=)", replaced);
    fprintf(stderr, TA ": replaced the job's own %s with topoaware's values (the site's override_env=)\n", replaced);
  }
  if (ta.opts.nccl_hints == TOPOAWARE_HINTS_PRINT) fprintf(stderr, TA ": %s\n", topoaware_task_plan_map_line(plan));
  slurm_debug(TA ": task %d: %s (topology %s, %s)", local_id, topoaware_task_plan_map_line(plan), t.topo,
              topoaware_task_plan_hash(plan));
out:
  topoaware_task_plan_free(plan);
  ta_task_inputs_free(&t);
  free(cvd);
  return 0;
}
