// SPDX-License-Identifier: GPL-2.0-or-later
// spank_topoaware's plugstack.conf arguments (task_c.h) from C: the core parses them
// (corelib/spank_settings.hpp); this file only copies them into the C structure.
#include "task_c.h"

#include "c_api_util.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "spank_settings.hpp"

using namespace topoaware;

namespace {

static_assert(kMaxTopologyArg < sizeof(topoaware_spank_args_t::topology), "topology= does not fit");
static_assert(kMaxStateDirArg < sizeof(topoaware_spank_args_t::state_dir), "state_dir= does not fit");
static_assert(kMaxExcludeNicsArg < sizeof(topoaware_spank_args_t::exclude_nics), "exclude_nics= does not fit");

// s into a fixed field; the bounds above make it fit (checked again: never a truncated path).
template <size_t N>
void put(char (&field)[N], const std::string &s) {
  if (s.size() >= N) throw std::logic_error("internal error: a plugstack.conf value does not fit");
  std::memcpy(field, s.c_str(), s.size() + 1);
}

}  // namespace

extern "C" {

int topoaware_spank_args_parse(topoaware_spank_args_t *args, int ac, char *const *av, topoaware_warn_fn warn, void *ctx,
                               char *err, size_t errlen) {
  if (!args) return -1;
  std::memset(args, 0, sizeof(*args));
  return c_boundary(err, errlen, -1, [&]() -> int {
    std::vector<const char *> list;
    for (int i = 0; av && i < ac; i++) list.push_back(av[i]);
    std::vector<std::string> warnings;
    const SpankSettings s = parse_spank_args(list, &warnings);
    topoaware_spank_args_t out;
    std::memset(&out, 0, sizeof(out));
    put(out.topology, s.topology);
    put(out.exclude_nics, s.exclude_nics);
    put(out.state_dir, s.state_dir);
    out.override_env = s.override_env;
    if (s.default_order) {
      out.has_default_order = 1;
      out.default_order =
          *s.default_order == RankOrder::TpPpDp ? TOPOAWARE_ORDER_TP_PP_DP : TOPOAWARE_ORDER_TP_CP_EP_DP_PP;
    }
    if (s.default_mode) {
      out.has_default_mode = 1;
      out.default_mode = *s.default_mode == TopoMode::Strict ? TOPOAWARE_MODE_STRICT : TOPOAWARE_MODE_PREFER;
    }
    if (s.default_max_wait) {
      out.has_default_max_wait = 1;
      out.default_max_wait = *s.default_max_wait;
    }
    *args = out;
    if (warn)
      for (const std::string &w : warnings) warn(ctx, w.c_str());  // printable: the core quotes so
    return 0;
  });
}

int topoaware_spank_args_overrides(const topoaware_spank_args_t *args, const char *name) {
  if (!args || !name) return 0;
  const int i = task_default_var_index(name);
  return i >= 0 && ((args->override_env >> i) & 1u) ? 1 : 0;
}

const char *topoaware_spank_state_dir(const topoaware_spank_args_t *args) {
  return args && args->state_dir[0] ? args->state_dir : kDefaultStateDir;
}

}  // extern "C"
