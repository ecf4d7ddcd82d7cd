// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the per-job placement file in spank_topoaware's state folder (the job's hash,
// layout, rail_optimized and node order that slurmctld placed it with), read in slurmstepd by
// topoaware_job_placement_read and topoaware_job_hash_read (capi/job_dir_c.h, node/job_hash.cpp)
// through job_placement_from_text (corelib/spank_settings.hpp). The input is the file's content,
// written into a state folder under /dev/shm (or TMPDIR) and read by the C API as slurmstepd does.
// An input that starts with '@' is stretched to the production cap: its "order" value is repeated
// to kMaxJobOrder - 1, kMaxJobOrder or kMaxJobOrder + 1 bytes (libFuzzer's -max_len keeps inputs
// far shorter), so that the caps themselves are fuzzed.
//
// Invariants: nothing throws; the C API agrees with the core on the same bytes (cut at
// kMaxJobPlacementFile + 1, as it reads them); a placement is there only with a valid hash, a
// layout, an order of non-empty names within kMaxJobOrder bytes and a file within
// kMaxJobPlacementFile bytes; what was read, written back by job_placement_file_text, reads back
// the same and writes the same bytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_common.hpp"
#include "job_dir_c.h"
#include "spank_settings.hpp"
#include "text.hpp"

namespace {

constexpr uint32_t kJob = 4242;

int state_fd() {
  static int fd = -1;
  if (fd >= 0) return fd;
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  std::string dir = std::string(base) + "/fuzz_placement.XXXXXX";
  FUZZ_CHECK(mkdtemp(&dir[0]) != nullptr);
  fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  // The folder is left empty at exit (each input's file is removed after it is read), then removed.
  static std::string keep = dir;
  std::atexit([] { rmdir(keep.c_str()); });
  return fd;
}

std::string stretched(std::string_view in) {
  std::string text(in.substr(1));
  const size_t at = text.find("\norder ");
  if (at == std::string::npos) return text;
  const size_t v = at + 7, end = text.find('\n', v);
  const std::string value = text.substr(v, end == std::string::npos ? std::string::npos : end - v);
  const std::string unit = value.empty() ? std::string("n1,") : value + ",";
  // The unit repeated to `want` bytes, by doubling: a few memcpy rather than up to 32,768 appends
  // through instrumented code for each input (most of the corpus is stretched).
  const size_t want = topoaware::kMaxJobOrder - 1 + in.size() % 3;
  std::string big = unit;
  while (big.size() < want) big.append(big, 0, std::min(big.size(), want - big.size()));
  big.resize(want);
  if (big.back() == ',') big.back() = 'x';
  return text.substr(0, v) + big + (end == std::string::npos ? std::string() : text.substr(end));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace topoaware;
  std::string_view in(reinterpret_cast<const char *>(data), size);
  const std::string text = !in.empty() && in[0] == '@' ? stretched(in) : std::string(in);

  const int dir = state_fd();
  const std::string name = job_hash_file_name(kJob);
  {
    const int fd = openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(write(fd, text.data(), text.size()) == ssize_t(text.size()));
    close(fd);
  }
  char *layout = nullptr, *order = nullptr;
  int rail = -1;
  const int got = topoaware_job_placement_read(dir, kJob, &layout, &order, &rail);
  char hash[256];
  const int got_hash = topoaware_job_hash_read(dir, kJob, hash, sizeof(hash));
  FUZZ_CHECK(unlinkat(dir, name.c_str(), 0) == 0);

  // The core on what the C API read: the first kMaxJobPlacementFile + 1 bytes.
  const JobPlacement p = job_placement_from_text(std::string_view(text).substr(0, kMaxJobPlacementFile + 1));
  FUZZ_CHECK(got == (p.has_order() ? 1 : 0));
  if (got) {
    FUZZ_CHECK(layout && order && p.layout == layout && p.order == order);
    FUZZ_CHECK(rail == (p.rail_optimized ? 1 : 0));
  } else {
    FUZZ_CHECK(!layout && !order);
  }
  std::free(layout);
  std::free(order);
  if (!p.hash.empty()) FUZZ_CHECK(valid_topology_hash(p.hash));
  if (got_hash) FUZZ_CHECK(valid_topology_hash(hash));
  if (p.has_order()) {
    FUZZ_CHECK(!p.hash.empty());
    FUZZ_CHECK(text.size() <= kMaxJobPlacementFile);
    FUZZ_CHECK(p.order.size() <= kMaxJobOrder && p.layout.size() <= 1024);
    // Node names and a layout string only: letters, digits, "=,-_.".
    const char *allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789=,-_.";
    FUZZ_CHECK(p.order.find_first_not_of(allowed) == std::string::npos);
    FUZZ_CHECK(p.layout.find_first_not_of(allowed) == std::string::npos);
    FUZZ_CHECK(fuzz::printable(p.order) && fuzz::printable(p.layout));
  }
  if (p.hash.empty()) {
    FUZZ_CHECK(!p.has_order());
    return 0;
  }
  // Written back, read back: the same placement, the same bytes.
  const std::string again = job_placement_file_text(p);
  const JobPlacement q = job_placement_from_text(again);
  FUZZ_CHECK(q.hash == p.hash && q.layout == p.layout && q.order == p.order &&
             q.rail_optimized == p.rail_optimized);
  FUZZ_CHECK(job_placement_file_text(q) == again);
  if (p.has_order() && text.size() <= kMaxJobPlacementFile) FUZZ_CHECK(again.size() <= kMaxJobPlacementFile);
  return 0;
}
