// SPDX-License-Identifier: GPL-2.0-or-later
#include "file_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace topoaware {

namespace {

// Closes the descriptor on every way out, exceptions included.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_regular_file(const std::string &path, size_t max_bytes, const std::string &size_text) {
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) throw FileReadError(std::string("cannot open: ") + std::strerror(errno), errno);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw FileReadError(std::string("cannot stat it: ") + std::strerror(errno), errno);
  if (!S_ISREG(st.st_mode)) throw FileReadError("not a regular file (a FIFO, device or folder is never read)", 0);
  const std::string too_large = "larger than " + size_text;
  if (size_t(st.st_size) > max_bytes) throw FileReadError(too_large, 0);
  // Sized from fstat, never from the bound: a 1 GiB bound must not cost 1 GiB for a small file.
  std::string text(size_t(st.st_size) + 1, '\0');
  size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (got > max_bytes) break;
      text.resize(std::min(text.size() + 65536, max_bytes + 1));
    }
    const ssize_t r = ::read(f.fd, &text[got], text.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw FileReadError(std::string("cannot read: ") + std::strerror(errno), errno);
    if (r == 0) break;
    got += size_t(r);
  }
  if (got > max_bytes) throw FileReadError(too_large, 0);
  text.resize(got);
  return text;
}

}  // namespace topoaware
