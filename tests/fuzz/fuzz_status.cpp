// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the select plugin's status file reader (corelib/status.hpp), as `topoaware
// show` reads the file slurmctld wrote (load_status_file: from a file, by path).
//
// Invariants: StatusError is the only error, its message names the file; a status that reads
// writes (status_to_json) a text that reads back and writes the same bytes again (the writer makes
// every string printable, so the first rewrite may differ from the input, the second may not).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz_common.hpp"
#include "status.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace topoaware;
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  std::optional<Status> s;
  try {
    s = status_from_json(text, "status.json");
  } catch (const StatusError &e) {
    FUZZ_CHECK(std::string(e.what()).rfind("status.json: ", 0) == 0);
  }

  // The same through the file, as the command reads it.
  fuzz::MemFile file("status.json", data, size);
  std::optional<Status> f;
  try {
    f = load_status_file(file.path());
  } catch (const StatusError &e) {
    FUZZ_CHECK(std::string(e.what()).rfind(file.path(), 0) == 0);
  }
  FUZZ_CHECK(!s == !f);
  if (!s) return 0;

  const std::string once = status_to_json(*s);
  FUZZ_CHECK(status_to_json(*f) == once);
  const Status back = status_from_json(once, "rewritten.json");  // throws (uncaught) if unreadable
  const std::string twice = status_to_json(back);
  FUZZ_CHECK(twice == once);
  FUZZ_CHECK(back.jobs.size() == s->jobs.size());
  return 0;
}
