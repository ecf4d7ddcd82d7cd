// Internal to the C API files (c_api.cpp, layout_c.cpp, task_c.cpp): what they share in crossing
// from C to C++. Not installed, not seen by the C plugins.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "layout.hpp"
#include "layout_c.h"

namespace topoaware {

// Copies a message into a caller's buffer, always NUL-terminated, truncated if needed.
inline void copy_c_error(const char *msg, char *err, size_t errlen) {
  if (!err || errlen == 0) return;
  std::snprintf(err, errlen, "%s", msg ? msg : "");
}

// The C layout as the core's Layout (not validated). Throws LayoutError for an order value the
// C enum does not have (a plugin bug or stale memory, never silently Megatron's order).
inline Layout layout_from_c(const topoaware_layout_t &l) {
  Layout out;
  out.tp = l.tp;
  out.cp = l.cp;
  out.ep = l.ep;
  out.dp = l.dp;
  out.pp = l.pp;
  if (l.order == TOPOAWARE_ORDER_TP_PP_DP) out.order = RankOrder::TpPpDp;
  else if (l.order == TOPOAWARE_ORDER_TP_CP_EP_DP_PP) out.order = RankOrder::TpCpEpDpPp;
  else throw LayoutError("internal error: unknown rank order value " + std::to_string(l.order));
  return out;
}

}  // namespace topoaware
