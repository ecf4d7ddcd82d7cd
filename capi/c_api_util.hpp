// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to the C API files (c_api.cpp, layout_c.cpp, task_c.cpp): what they share in crossing
// from C to C++. Not installed, not seen by the C plugins.
#pragma once

#include <cerrno>
#include <cstddef>
#include <new>
#include <cstdio>
#include <cstring>
#include <string>

#include "layout.hpp"
#include "layout_c.h"
#include "text.hpp"

struct topoaware_topo;

namespace topoaware {

struct Topology;
// The Topology a C handle holds (c_api.cpp), for the other C API files.
const Topology &topology_of(const topoaware_topo *t);

// Copies a message into a caller's buffer, always NUL-terminated, truncated if needed (never inside
// a UTF-8 character). Messages quote input (a topology file's bytes, a user's option): only
// printable text reaches slurmctld's log, a user's terminal or the status file (printable_text).
inline void copy_c_error(const char *msg, char *err, size_t errlen) noexcept {
  if (!err || errlen == 0) return;
  const char *m = msg ? msg : "";
  try {
    const std::string text = printable_text(m);
    const size_t n = utf8_prefix(text.c_str(), text.size() < errlen ? text.size() : errlen - 1);
    std::memcpy(err, text.data(), n);
    err[n] = '\0';
  } catch (...) {
    // No memory for the copy (a long message while the heap is exhausted): ASCII only, in place.
    // c_boundary calls this from its handlers, and an exception from there would end the daemon.
    size_t n = 0;
    for (; m[n] && n + 1 < errlen; ++n) err[n] = m[n] >= 0x20 && m[n] < 0x7f ? m[n] : '?';
    err[n] = '\0';
  }
}

// The one way every C API entry point crosses from C++ to C: runs f and returns what it returns; an
// exception becomes `fail`, with its message in err ("out of memory" only for std::bad_alloc, and
// errno = ENOMEM then). Nothing else may leave a function that slurmctld or slurmstepd calls.
template <class R, class F>
R c_boundary(char *err, size_t errlen, R fail, F &&f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc &) {
    copy_c_error("out of memory", err, errlen);
    errno = ENOMEM;
  } catch (const std::exception &e) {
    copy_c_error(e.what(), err, errlen);
  } catch (...) {
    copy_c_error("unknown error", err, errlen);
  }
  return fail;
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
