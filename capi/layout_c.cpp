// SPDX-License-Identifier: GPL-2.0-or-later
// C API over the layout and configuration logic (see layout_c.h). Every entry point catches every
// exception: these functions run inside slurmctld, srun, sbatch and slurmstepd.
#include "layout_c.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "c_api_util.hpp"
#include "config.hpp"
#include "layout.hpp"

using namespace topoaware;

struct topoaware_conf {
  Config cfg;
  std::string path;
};

namespace {

void put(char *buf, size_t len, const char *msg) { copy_c_error(msg, buf, len); }

int fail(char *err, size_t errlen, const char *msg) {
  put(err, errlen, msg);
  return -1;
}

// Copies the data s (a path, a layout's text) into buf byte for byte: unlike a message it is not made
// printable (a path may hold any byte but NUL and '/' has its meaning). -1 if it did not fit (buf
// then holds a terminated prefix).
int copy_out(const std::string &s, char *buf, size_t len) {
  if (!buf || len == 0) return -1;
  const size_t n = s.size() < len ? s.size() : len - 1;
  std::memcpy(buf, s.data(), n);
  buf[n] = '\0';
  return s.size() < len ? 0 : -1;
}

// Runs f (which returns 0 or -1); an exception is -1 with its message (c_boundary).
template <class F>
int guarded(char *err, size_t errlen, F f) {
  return c_boundary(err, errlen, -1, f);
}

Layout to_cxx(const topoaware_layout_t &l) { return layout_from_c(l); }

bool valid_order(int order) { return order == TOPOAWARE_ORDER_TP_CP_EP_DP_PP || order == TOPOAWARE_ORDER_TP_PP_DP; }

// The options, declared once (topoaware_option_info); the order is --help's. The usage texts are
// spank_topoaware(8)'s (man/spank_topoaware.8 says the same).
const topoaware_option_info_t kOptions[] = {
    {"tp", "N", "[topoaware] tensor parallel size: GPUs of one TP group, inside one node or one multi-node NVLink domain", TOPOAWARE_OPT_TP},
    {"pp", "N", "[topoaware] pipeline parallel size", TOPOAWARE_OPT_PP},
    {"dp", "N", "[topoaware] data parallel size; the job has tp*cp*dp*pp GPUs, one task per GPU", TOPOAWARE_OPT_DP},
    {"cp", "N", "[topoaware] context parallel size", TOPOAWARE_OPT_CP},
    {"ep", "N", "[topoaware] expert parallel size; divides cp*dp, does not add GPUs; the rank order keeps expert groups in leaf groups where it can", TOPOAWARE_OPT_EP},
    {"rank-order", "ORDER", "[topoaware] rank order: tp-cp-ep-dp-pp (default, Megatron) or tp-pp-dp",
     TOPOAWARE_OPT_RANK_ORDER},
    {"topo-mode", "MODE",
     "[topoaware] strict: wait for a block of switches that fits the layout (up to --topo-max-wait); prefer: "
     "best block available now",
     TOPOAWARE_OPT_TOPO_MODE},
    {"topo-max-wait", "TIME",
     "[topoaware] longest wait of --topo-mode=strict, e.g. 30m, 2h, 90s, 1d (no unit: minutes; at most 30d)",
     TOPOAWARE_OPT_MAX_WAIT},
    {"nccl-hints", "WHAT", "[topoaware] NCCL and rank hints in tasks: auto (default), off or print",
     TOPOAWARE_OPT_NCCL_HINTS},
    {"topo-migrate", nullptr,
     "[topoaware] allow topoaware defrag to move the job to a better block: checkpoint signal, then requeue "
     "(needs --requeue and --signal)",
     TOPOAWARE_OPT_MIGRATE},
};
constexpr uint32_t kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);
static_assert(kOptionCount <= 32, "an option is a bit of an unsigned");

// "tp, pp, ..., topo-max-wait and nccl-hints" (for messages).
std::string option_list() {
  std::string out;
  for (uint32_t i = 0; i < kOptionCount; i++)
    out += std::string(i == 0 ? "" : i + 1 == kOptionCount ? " and " : ", ") + kOptions[i].name;
  return out;
}

}  // namespace

extern "C" {

void topoaware_options_init(topoaware_options_t *o) {
  if (!o) return;
  std::memset(o, 0, sizeof(*o));
  o->layout.tp = o->layout.cp = o->layout.ep = o->layout.dp = o->layout.pp = 1;
  o->layout.order = TOPOAWARE_ORDER_TP_CP_EP_DP_PP;
  o->mode = TOPOAWARE_MODE_PREFER;
  o->max_wait = kDefaultMaxWait;
  o->nccl_hints = TOPOAWARE_HINTS_AUTO;
}

const topoaware_option_info_t *topoaware_option_info(uint32_t i) { return i < kOptionCount ? &kOptions[i] : nullptr; }

unsigned topoaware_option_bit(const char *name) {
  if (!name) return 0;
  for (const topoaware_option_info_t &o : kOptions)
    if (std::strcmp(o.name, name) == 0) return o.bit;
  return 0;
}

const char *topoaware_option_name(unsigned bit) {
  for (const topoaware_option_info_t &o : kOptions)
    if (o.bit == bit) return o.name;
  return nullptr;
}

const char *topoaware_printable(const char *s, size_t max, char *buf, size_t len) {
  if (!buf || len == 0) return buf;
  buf[0] = '\0';
  char dummy[1];
  c_boundary(dummy, 0, -1, [&]() -> int {
    std::string_view v(s ? s : "", s ? strnlen(s, max) : 0);
    if (s && v.size() == max && s[max] != '\0') v = v.substr(0, utf8_prefix(v.data(), v.size()));  // cut: whole chars
    copy_c_error(std::string(v).c_str(), buf, len);  // printable_text, cut to fit
    return 0;
  });
  return buf;
}

int topoaware_options_set(topoaware_options_t *o, const char *name, const char *value, char *err,
                          size_t errlen) {
  return guarded(err, errlen, [&]() -> int {
    if (!o || !name) return fail(err, errlen, "internal error: no options or no option name");
    const unsigned bit = topoaware_option_bit(name);
    if (!bit) {
      std::string n(name, strnlen(name, 64));
      return fail(err, errlen, ("unknown option '" + n + "'; the options are " + option_list()).c_str());
    }
    if (bit == TOPOAWARE_OPT_MIGRATE) {  // a flag: Slurm forwards it without a value, or as "(null)"
      const std::string v = value ? std::string(value, strnlen(value, 16)) : std::string();
      int on = -1;
      if (v.empty() || v == "(null)" || v == "yes" || v == "1" || v == "on" || v == "true") on = 1;
      else if (v == "no" || v == "0" || v == "off" || v == "false") on = 0;
      if (on < 0)
        return fail(err, errlen, "topo-migrate takes no value (or yes/no); write --topo-migrate alone");
      o->migrate = on;
      o->set |= bit;
      return 0;
    }
    if (!value) return fail(err, errlen, (std::string(name) + " needs a value").c_str());
    // Bound the work and the message on hostile input (values come from users' environments).
    std::string_view v(value, strnlen(value, kMaxOptionValue + 1));
    if (v.size() > kMaxOptionValue)
      return fail(err, errlen,
                  (std::string(name) + ": value longer than " + std::to_string(kMaxOptionValue) + " bytes").c_str());
    topoaware_options_t next = *o;
    switch (bit) {
      case TOPOAWARE_OPT_TP: next.layout.tp = parse_axis("tp", v); break;
      case TOPOAWARE_OPT_CP: next.layout.cp = parse_axis("cp", v); break;
      case TOPOAWARE_OPT_EP: next.layout.ep = parse_axis("ep", v); break;
      case TOPOAWARE_OPT_DP: next.layout.dp = parse_axis("dp", v); break;
      case TOPOAWARE_OPT_PP: next.layout.pp = parse_axis("pp", v); break;
      case TOPOAWARE_OPT_RANK_ORDER:
        next.layout.order = parse_rank_order(v) == RankOrder::TpPpDp ? TOPOAWARE_ORDER_TP_PP_DP
                                                                      : TOPOAWARE_ORDER_TP_CP_EP_DP_PP;
        break;
      case TOPOAWARE_OPT_TOPO_MODE:
        next.mode = parse_topo_mode(v) == TopoMode::Strict ? TOPOAWARE_MODE_STRICT : TOPOAWARE_MODE_PREFER;
        break;
      case TOPOAWARE_OPT_MAX_WAIT: next.max_wait = parse_wait("topo-max-wait", v); break;
      case TOPOAWARE_OPT_NCCL_HINTS:
        switch (parse_nccl_hints(v)) {
          case NcclHints::Off: next.nccl_hints = TOPOAWARE_HINTS_OFF; break;
          case NcclHints::Print: next.nccl_hints = TOPOAWARE_HINTS_PRINT; break;
          default: next.nccl_hints = TOPOAWARE_HINTS_AUTO; break;
        }
        break;
    }
    next.set |= bit;
    *o = next;
    return 0;
  });
}

int topoaware_options_has_layout(const topoaware_options_t *o) { return o && (o->set & TOPOAWARE_OPT_AXES) ? 1 : 0; }

int topoaware_options_check(const topoaware_options_t *o, char *err, size_t errlen) {
  return guarded(err, errlen, [&]() -> int {
    if (!o) return fail(err, errlen, "internal error: no options");
    if (!valid_order(o->layout.order)) return fail(err, errlen, "internal error: bad rank order value");
    const bool layout = o->set & TOPOAWARE_OPT_AXES;
    if (!layout) {
      const char *alone = (o->set & TOPOAWARE_OPT_RANK_ORDER) ? "--rank-order"
                          : (o->set & TOPOAWARE_OPT_TOPO_MODE) ? "--topo-mode"
                          : (o->set & TOPOAWARE_OPT_MAX_WAIT)  ? "--topo-max-wait"
                          : (o->set & TOPOAWARE_OPT_MIGRATE) && o->migrate ? "--topo-migrate"
                                                               : nullptr;
      if (alone && (o->set & TOPOAWARE_OPT_MIGRATE) && o->migrate && std::string(alone) == "--topo-migrate")
        return fail(err, errlen,
                    "--topo-migrate lets topoaware defrag move a parallel layout job to a better block, but no "
                    "layout is given; add --tp/--pp/--dp (e.g. --tp=8 --dp=16) or leave --topo-migrate out");
      if (alone)
        return fail(err, errlen,
                    (std::string(alone) +
                     " describes how to place a parallel layout, but no layout is given; add --tp/--pp/--dp "
                     "(e.g. --tp=8 --pp=4 --dp=16) or leave " + alone + " out")
                        .c_str());
      return 0;
    }
    if ((o->set & TOPOAWARE_OPT_MAX_WAIT) && (o->set & TOPOAWARE_OPT_TOPO_MODE) && o->mode == TOPOAWARE_MODE_PREFER)
      return fail(err, errlen,
                  "--topo-max-wait limits how long --topo-mode=strict waits for a good block, but --topo-mode=prefer "
                  "never waits; use --topo-mode=strict --topo-max-wait=... or leave --topo-max-wait out");
    validate_layout(to_cxx(o->layout));
    return 0;
  });
}

uint64_t topoaware_layout_world(const topoaware_layout_t *l) {
  if (!l) return 0;
  topoaware::Layout x;
  x.tp = l->tp, x.cp = l->cp, x.dp = l->dp, x.pp = l->pp;  // not to_cxx: the order plays no part
  return x.world();
}

uint32_t topoaware_layout_gpus_per_node(const topoaware_layout_t *l, uint32_t nodes) {
  if (!l || !nodes) return 0;
  try {
    const uint64_t world = to_cxx(*l).world();
    return world % nodes == 0 && world / nodes <= UINT16_MAX ? uint32_t(world / nodes) : 0;
  } catch (...) {  // an order value the C enum does not have: no layout to spread
    return 0;
  }
}

int topoaware_layout_string(const topoaware_layout_t *l, char *buf, size_t len) {
  char dummy[1];
  return guarded(dummy, 0, [&]() -> int {
    if (!l) return -1;
    return copy_out(to_string(to_cxx(*l)), buf, len);
  });
}

const char *topoaware_order_name(int order) {
  return order == TOPOAWARE_ORDER_TP_PP_DP ? "tp-pp-dp" : "tp-cp-ep-dp-pp";
}
const char *topoaware_mode_name(int mode) { return mode == TOPOAWARE_MODE_STRICT ? "strict" : "prefer"; }

int topoaware_wait_string(uint32_t seconds, char *buf, size_t len) {
  char dummy[1];
  return guarded(dummy, 0, [&]() -> int { return copy_out(wait_to_string(seconds), buf, len); });
}

int topoaware_complete_request(const topoaware_layout_t *l, const topoaware_request_t *given, uint32_t node_gpus,
                               topoaware_request_t *out, int *kind, char *err, size_t errlen) {
  return topoaware_complete_request_nvlink(l, given, node_gpus, nullptr, 0, out, kind, err, errlen);
}

int topoaware_complete_request_nvlink(const topoaware_layout_t *l, const topoaware_request_t *given,
                                      uint32_t node_gpus, const uint32_t *domain_nodes, uint32_t ndomains,
                                      topoaware_request_t *out, int *kind, char *err, size_t errlen) {
  static_assert(int(RequestPart::Layout) == TOPOAWARE_ERR_LAYOUT && int(RequestPart::Nodes) == TOPOAWARE_ERR_NODES &&
                    int(RequestPart::Tasks) == TOPOAWARE_ERR_TASKS && int(RequestPart::Gpus) == TOPOAWARE_ERR_GPUS,
                "enum topoaware_err_kind and RequestPart differ");
  if (kind) *kind = TOPOAWARE_ERR_LAYOUT;
  return guarded(err, errlen, [&]() -> int {
    if (!l || !given || !out) return fail(err, errlen, "internal error: missing argument");
    if (!valid_order(l->order)) return fail(err, errlen, "internal error: bad rank order value");
    Request g;
    g.nodes = given->nodes;
    g.gpus_per_node = given->gpus_per_node;
    g.ntasks = given->ntasks;
    g.ntasks_per_node = given->ntasks_per_node;
    g.gpus = given->gpus;
    std::vector<uint32_t> domains;
    for (uint32_t i = 0; domain_nodes && i < ndomains; ++i)
      if (domain_nodes[i] >= 2) domains.push_back(domain_nodes[i]);
    Request r;
    try {
      r = complete_request(to_cxx(*l), g, node_gpus, domains);
    } catch (const LayoutError &e) {
      if (kind) *kind = int(e.part());
      throw;
    }
    out->nodes = r.nodes;
    out->gpus_per_node = r.gpus_per_node;
    out->ntasks = r.ntasks;
    out->ntasks_per_node = r.ntasks_per_node;
    out->gpus = r.gpus;
    return 0;
  });
}

topoaware_conf_t *topoaware_conf_load(const char *path, int *found, char *err, size_t errlen) {
  topoaware_conf_t *conf = nullptr;
  int rc = guarded(err, errlen, [&]() -> int {
    std::string p = path ? std::string(path) : config_path(std::getenv("TOPOAWARE_CONF"), std::getenv("SLURM_CONF"));
    bool f = false;
    Config cfg = load_config(p, &f);
    conf = new topoaware_conf{std::move(cfg), p};
    if (found) *found = f ? 1 : 0;
    return 0;
  });
  if (rc != 0) {
    delete conf;
    return nullptr;
  }
  return conf;
}

void topoaware_conf_free(topoaware_conf_t *conf) { delete conf; }

int topoaware_conf_mode(const topoaware_conf_t *conf, const char *partition) {
  if (!conf) return TOPOAWARE_MODE_PREFER;
  try {
    return conf->cfg.mode_for(partition ? partition : "") == TopoMode::Strict ? TOPOAWARE_MODE_STRICT
                                                                              : TOPOAWARE_MODE_PREFER;
  } catch (...) {
    return conf->cfg.default_mode == TopoMode::Strict ? TOPOAWARE_MODE_STRICT : TOPOAWARE_MODE_PREFER;
  }
}

uint32_t topoaware_conf_max_wait(const topoaware_conf_t *conf, const char *partition) {
  if (!conf) return kDefaultMaxWait;
  try {
    return conf->cfg.max_wait_for(partition ? partition : "");
  } catch (...) {
    return conf->cfg.default_max_wait;
  }
}

int topoaware_conf_topology(const topoaware_conf_t *conf, char *buf, size_t len) {
  char dummy[1];
  return guarded(dummy, 0, [&]() -> int {
    if (!conf) return -1;
    return copy_out(topology_path(conf->cfg, conf->path), buf, len);
  });
}

uint32_t topoaware_conf_max_tries(const topoaware_conf_t *conf) {
  return conf ? conf->cfg.max_tries : kDefaultMaxTries;
}

uint32_t topoaware_conf_max_time_ms(const topoaware_conf_t *conf) {
  return conf ? conf->cfg.max_time_ms : kDefaultMaxTimeMs;
}

static_assert(int(LogLevel::Quiet) == TOPOAWARE_LOG_QUIET && int(LogLevel::Info) == TOPOAWARE_LOG_INFO &&
                  int(LogLevel::Verbose) == TOPOAWARE_LOG_VERBOSE && int(LogLevel::Debug) == TOPOAWARE_LOG_DEBUG,
              "enum topoaware_log_level and LogLevel differ");

int topoaware_conf_log_level(const topoaware_conf_t *conf) {
  return int(conf ? conf->cfg.log_level : LogLevel::Info);  // the C enum has the same values
}

int topoaware_conf_missing_nodes(const topoaware_conf_t *conf) {
  return conf && conf->cfg.missing_nodes == MissingNodes::Fallback ? TOPOAWARE_MISSING_FALLBACK
                                                                   : TOPOAWARE_MISSING_AVOID;
}

int topoaware_conf_rank_order(const topoaware_conf_t *conf) {
  return conf && conf->cfg.rank_order == RankOrderMode::Alone ? TOPOAWARE_RANK_ORDER_ALONE
                                                              : TOPOAWARE_RANK_ORDER_NEIGHBOURS;
}

uint32_t topoaware_conf_status_interval(const topoaware_conf_t *conf) {
  return conf ? conf->cfg.status_interval : kDefaultStatusInterval;
}

const char *topoaware_log_level_name(int level) {
  if (level < TOPOAWARE_LOG_QUIET || level > TOPOAWARE_LOG_DEBUG) return "info";
  return log_level_name(LogLevel(level));
}

const char *topoaware_missing_nodes_name(int missing) {
  return missing == TOPOAWARE_MISSING_FALLBACK ? "fallback" : "avoid";
}

const char *topoaware_rank_order_mode_name(int mode) {
  return mode == TOPOAWARE_RANK_ORDER_ALONE ? "alone" : "neighbours";
}

int topoaware_conf_status_file(const topoaware_conf_t *conf, const char *state_save_location, char *buf,
                               size_t len) {
  if (!buf || len == 0) return -1;
  int rc = guarded(buf, len, [&]() -> int {
    static const Config defaults;
    const Config &cfg = conf ? conf->cfg : defaults;
    if (cfg.status_none) {
      buf[0] = '\0';
      return 1;
    }
    std::string p = status_path(cfg, state_save_location ? state_save_location : "");
    if (p.size() >= len) return fail(buf, len, "the status file's path is too long");
    return copy_out(p, buf, len);
  });
  return rc;
}

const char *topoaware_conf_loaded_path(const topoaware_conf_t *conf) { return conf ? conf->path.c_str() : ""; }

int topoaware_default_paths(const char *slurm_conf, char *conf, size_t conf_len, char *topology, size_t topology_len) {
  char dummy[1];
  return guarded(dummy, 0, [&]() -> int {
    std::string c = config_path(std::getenv("TOPOAWARE_CONF"), slurm_conf ? slurm_conf : std::getenv("SLURM_CONF"));
    if (conf && copy_out(c, conf, conf_len) != 0) return -1;
    if (topology && copy_out(topology_path(Config{}, c), topology, topology_len) != 0) return -1;
    return 0;
  });
}

}  // extern "C"
