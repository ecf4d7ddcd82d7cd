// SPDX-License-Identifier: GPL-2.0-or-later
// Shared by the libFuzzer targets in tests/fuzz/ (built by `make fuzz`, never by make check).
//
// A target fails (__builtin_trap, which libFuzzer reports as a crash with the input saved) when an
// invariant does not hold; sanitizer reports and uncaught exceptions fail it too.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "text.hpp"

namespace fuzz {

// Fails the run, printing what did not hold (libFuzzer keeps the input as crash-<sha1>).
#define FUZZ_CHECK(cond)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      __builtin_trap();                                                                 \
    }                                                                                   \
  } while (0)

// Text fit for a log line or a terminal: what topoaware::printable_text leaves unchanged, and no
// newline or tab (printable_text turns those into spaces).
inline bool printable(std::string_view s) { return topoaware::printable_text(s) == s; }

// A message the C API put into a buffer of errlen bytes: terminated inside it, not empty, printable.
inline bool good_c_message(const char *err, size_t errlen) {
  const void *nul = std::memchr(err, '\0', errlen);
  if (!nul) return false;
  const size_t n = static_cast<size_t>(static_cast<const char *>(nul) - err);
  return n > 0 && printable(std::string_view(err, n));
}

// An in-memory regular file holding `data`, reachable by the path "/proc/self/fd/N": the C API
// reads files by path (as slurmctld does), and this keeps the disk out of the loop.
class MemFile {
 public:
  MemFile(const char *name, const uint8_t *data, size_t size) {
    fd_ = memfd_create(name, MFD_CLOEXEC);
    FUZZ_CHECK(fd_ >= 0);
    size_t done = 0;
    while (done < size) {
      ssize_t w = ::write(fd_, data + done, size - done);
      FUZZ_CHECK(w > 0);
      done += size_t(w);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile &) = delete;
  MemFile &operator=(const MemFile &) = delete;
  const char *path() const { return path_.c_str(); }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace fuzz
