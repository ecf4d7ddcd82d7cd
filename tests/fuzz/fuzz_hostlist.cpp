// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: Slurm host lists (corelib/hostlist.hpp), as topology.json's leaf groups,
// `topoaware plan --busy` and the SPANK plugin (SLURM_JOB_NODELIST, node/task_c.cpp) expand them.
//
// Invariants: std::invalid_argument is the only error, its message starts with "host list";
// no expansion exceeds its bound; what expands compresses (unless a name holds a character a host
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

namespace {

// Small bound: "n[0-99999]" would spend the run in expansion; the bound's check is what matters, not
// its size. With 4096 the corpus filled with lists at the bound and each input cost ~2 ms under ASan
// (~490 exec/s); 256 reaches the same code (ranges, padding, the bound itself) an order faster.
constexpr size_t kMaxHosts = 256;

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
    names = hostlist_expand(list, kMaxHosts);
  } catch (const std::invalid_argument &e) {
    FUZZ_CHECK(std::string(e.what()).rfind("host list", 0) == 0);
    return 0;
  }
  FUZZ_CHECK(names.size() <= kMaxHosts);
  for (const auto &n : names) FUZZ_CHECK(!n.empty());
  if (names.empty()) return 0;

  std::string compressed;
  try {
    compressed = hostlist_compress(names);
  } catch (const std::invalid_argument &e) {
    // Only for a name with a character a host list cannot hold (a control byte).
    FUZZ_CHECK(std::string(e.what()).rfind("host list: ", 0) == 0);
    return 0;
  }
  const std::vector<std::string> again = hostlist_expand(compressed, kMaxHosts);  // throws (uncaught) if bad
  FUZZ_CHECK(sorted_unique(again) == sorted_unique(names));
  FUZZ_CHECK(hostlist_compress(again) == compressed);
  return 0;
}
