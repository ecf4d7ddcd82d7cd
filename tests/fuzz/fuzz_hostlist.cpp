// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: Slurm host lists (corelib/hostlist.hpp), as topology.json's leaf groups,
// `topoaware plan --busy` and the SPANK plugin (SLURM_JOB_NODELIST, node/task_c.cpp) expand them.
//
// At the production caps: the step's node list in slurmstepd (node/task_c.cpp) expands to at most
// TOPOAWARE_NODELIST_MAX_HOSTS (131,072) names of TOPOAWARE_NODELIST_MAX_NAME_BYTES (16 MB)
// together (capi/task_c.h), so "n[0-131071]" is a legal input and costs what it costs there.
//
// Invariants: std::invalid_argument is the only error, its message starts with "host list";
// no expansion exceeds either bound; what expands compresses (unless a name holds a character a host
// list cannot), and the compressed list expands to the same set of names and compresses to
// itself again.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "hostlist.hpp"
#include "task_c.h"

namespace {

constexpr size_t kMaxHosts = TOPOAWARE_NODELIST_MAX_HOSTS;
constexpr size_t kMaxBytes = TOPOAWARE_NODELIST_MAX_NAME_BYTES;
// The round trip (compress, expand, compress) of a list this long costs four passes over up to
// 131,072 names under ASan (~0.2 s): lists up to this many names take it, longer ones are checked
// against the bounds only, so that the corpus does not fill with lists that run at 5 exec/s.
constexpr size_t kRoundTripHosts = 4096;

std::vector<std::string> sorted_unique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace topoaware;
  const std::string list(reinterpret_cast<const char *>(data), size);
  std::vector<std::string> names;
  try {
    names = hostlist_expand(list, kMaxHosts, kMaxBytes);
  } catch (const std::invalid_argument &e) {
    FUZZ_CHECK(std::string(e.what()).rfind("host list", 0) == 0);
    return 0;
  }
  FUZZ_CHECK(names.size() <= kMaxHosts);
  size_t bytes = 0;
  for (const auto &n : names) {
    FUZZ_CHECK(!n.empty());
    bytes += n.size();
  }
  FUZZ_CHECK(bytes <= kMaxBytes);
  if (names.empty() || names.size() > kRoundTripHosts) return 0;

  std::string compressed;
  try {
    compressed = hostlist_compress(names);
  } catch (const std::invalid_argument &e) {
    // Only for a name with a character a host list cannot hold (a control byte).
    FUZZ_CHECK(std::string(e.what()).rfind("host list: ", 0) == 0);
    return 0;
  }
  const std::vector<std::string> again = hostlist_expand(compressed, kMaxHosts, kMaxBytes);  // throws (uncaught) if bad
  FUZZ_CHECK(sorted_unique(again) == sorted_unique(names));
  FUZZ_CHECK(hostlist_compress(again) == compressed);
  return 0;
}
