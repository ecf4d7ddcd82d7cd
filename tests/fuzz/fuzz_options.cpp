// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the layout options as the plugins read them.
//  * slurmctld (job_submit and select plugins): a job's SPANK environment, entries
//    "_SLURM_SPANK_OPTION_topoaware_<name>=<value>", read by ta_options_from_env
//    (plugins/common/ta_env.c, plain C) on top of topoaware_options_set;
//  * srun/sbatch and slurmstepd (SPANK plugin): each option's string, topoaware_options_set
//    (capi/layout_c.h), then topoaware_options_check and topoaware_complete_request.
// The input is a list of lines: each line is one environment entry; a line "request=N,G,n,npn,gpus,
// node_gpus" gives the job's request for topoaware_complete_request.
//
// Invariants: every error is -1 with a non-empty printable message in the caller's buffer (these
// messages reach slurmctld's log and the user's terminal); slurmctld's reading of the environment
// and the SPANK plugin's reading of the same options agree; what passes the checks prints as
// canonical text that reads back as the same layout; a completed request is consistent with the
// layout and with what the job gave; an error's kind is one of enum topoaware_err_kind.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "c_api_util.hpp"
#include "layout.hpp"
#include "layout_c.h"

extern "C" {
#include "ta_env.h"
}

namespace {

// The option value of a hints setting (the C API has no such export: plugins never print it).
const char *hints_name(int hints) {
  return hints == TOPOAWARE_HINTS_OFF ? "off" : hints == TOPOAWARE_HINTS_PRINT ? "print" : "auto";
}

bool same_options(const topoaware_options_t &a, const topoaware_options_t &b) {
  return a.set == b.set && a.layout.tp == b.layout.tp && a.layout.cp == b.layout.cp && a.layout.ep == b.layout.ep &&
         a.layout.dp == b.layout.dp && a.layout.pp == b.layout.pp && a.layout.order == b.layout.order &&
         a.mode == b.mode && a.max_wait == b.max_wait && a.nccl_hints == b.nccl_hints;
}

void check_request(const topoaware_options_t &o, const topoaware_request_t &given, uint32_t node_gpus) {
  char err[TOPOAWARE_ERR_LEN];
  topoaware_request_t out;
  int kind = -1;
  if (topoaware_complete_request(&o.layout, &given, node_gpus, &out, &kind, err, sizeof err) != 0) {
    FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));
    FUZZ_CHECK(kind >= TOPOAWARE_ERR_LAYOUT && kind <= TOPOAWARE_ERR_GPUS);
    return;
  }
  const uint64_t world = uint64_t(o.layout.tp) * o.layout.cp * o.layout.dp * o.layout.pp;
  FUZZ_CHECK(out.gpus_per_node > 0 && out.nodes > 0);
  FUZZ_CHECK(uint64_t(out.nodes) * out.gpus_per_node == world);  // whole nodes, one task per GPU
  FUZZ_CHECK(out.ntasks == world && out.gpus == world && out.ntasks_per_node == out.gpus_per_node);
  FUZZ_CHECK(out.gpus_per_node % o.layout.tp == 0);  // whole TP groups per node
  if (node_gpus) FUZZ_CHECK(out.gpus_per_node <= node_gpus);
  // What the job gave is kept.
  FUZZ_CHECK(!given.nodes || given.nodes == out.nodes);
  FUZZ_CHECK(!given.gpus_per_node || given.gpus_per_node == out.gpus_per_node);
  FUZZ_CHECK(!given.ntasks || given.ntasks == out.ntasks);
  FUZZ_CHECK(!given.ntasks_per_node || given.ntasks_per_node == out.ntasks_per_node);
  FUZZ_CHECK(!given.gpus || given.gpus == out.gpus);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Lines; a NUL ends an entry early, as it would in C.
  std::vector<std::string> lines;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      lines.push_back(cur.c_str());
      cur.clear();
    } else {
      cur += char(data[i]);
    }
  }
  lines.push_back(cur.c_str());
  topoaware_request_t given = {};
  uint32_t node_gpus = 0;
  std::vector<char *> env;
  for (auto &l : lines) {
    if (l.rfind("request=", 0) == 0)
      std::sscanf(l.c_str() + 8, "%u,%u,%u,%u,%u,%u", &given.nodes, &given.gpus_per_node, &given.ntasks,
                  &given.ntasks_per_node, &given.gpus, &node_gpus);
    env.push_back(&l[0]);
  }

  // slurmctld: the whole environment at once.
  char err[TOPOAWARE_ERR_LEN];
  topoaware_options_t ctld;
  const int rc = ta_options_from_env(&ctld, env.data(), uint32_t(env.size()), err, sizeof err);
  FUZZ_CHECK(rc == 0 || rc == -1);
  if (rc != 0) FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));

  // The SPANK plugin: one option at a time, through the same C API; an error stops (Slurm refuses
  // the option), a repeated option replaces the earlier value.
  topoaware_options_t spank;
  topoaware_options_init(&spank);
  bool spank_ok = true, repeated = false;
  const size_t plen = std::strlen(TA_ENV_PREFIX);
  for (const auto &l : lines) {
    if (l.rfind(TA_ENV_PREFIX, 0) != 0) continue;
    const size_t eq = l.find('=', plen);
    const char *name = eq == std::string::npos ? nullptr : ta_option_from_env_name(l.c_str() + plen, eq - plen);
    if (!name) {
      spank_ok = false;
      break;
    }
    if (spank.set & topoaware_option_bit(name)) repeated = true;
    topoaware_options_t before = spank;
    if (topoaware_options_set(&spank, name, l.c_str() + eq + 1, err, sizeof err) != 0) {
      FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));
      FUZZ_CHECK(same_options(before, spank));  // on error nothing is changed
      spank_ok = false;
      break;
    }
  }
  // slurmctld accepts exactly what the SPANK plugin accepts, without repeats, and reads the same.
  FUZZ_CHECK((rc == 0) == (spank_ok && !repeated));
  if (rc != 0) return 0;
  FUZZ_CHECK(same_options(ctld, spank));

  if (topoaware_options_check(&ctld, err, sizeof err) != 0) {
    FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));
    return 0;
  }
  if (!topoaware_options_has_layout(&ctld)) return 0;

  // The canonical texts read back.
  char buf[256];
  FUZZ_CHECK(topoaware_layout_string(&ctld.layout, buf, sizeof buf) == 0);
  const topoaware::Layout back = topoaware::parse_layout(buf);  // throws (uncaught) if unreadable
  FUZZ_CHECK(back == topoaware::layout_from_c(ctld.layout));
  FUZZ_CHECK(topoaware_wait_string(ctld.max_wait, buf, sizeof buf) == 0);
  topoaware_options_t w;
  topoaware_options_init(&w);
  FUZZ_CHECK(topoaware_options_set(&w, "topo-max-wait", buf, err, sizeof err) == 0);
  FUZZ_CHECK(w.max_wait == ctld.max_wait);
  FUZZ_CHECK(topoaware_options_set(&w, "rank-order", topoaware_order_name(ctld.layout.order), err, sizeof err) == 0);
  FUZZ_CHECK(w.layout.order == ctld.layout.order);
  FUZZ_CHECK(topoaware_options_set(&w, "topo-mode", topoaware_mode_name(ctld.mode), err, sizeof err) == 0);
  FUZZ_CHECK(w.mode == ctld.mode);
  FUZZ_CHECK(topoaware_options_set(&w, "nccl-hints", hints_name(ctld.nccl_hints), err, sizeof err) == 0);
  FUZZ_CHECK(w.nccl_hints == ctld.nccl_hints);

  check_request(ctld, given, node_gpus);
  return 0;
}
