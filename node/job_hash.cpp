// SPDX-License-Identifier: GPL-2.0-or-later
// The job's topology hash file in the state folder (job_dir_c.h): the I/O on descriptors here,
// its name and content from the core (corelib/spank_settings.hpp).
#include "job_dir_c.h"

#include "c_api_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "spank_settings.hpp"

using namespace topoaware;

namespace {

// The file's first `cap` bytes ("" if there is none).
std::string read_job_file(int state_fd, uint32_t job_id, size_t cap) {
  const std::string name = job_hash_file_name(job_id);
  const int fd = openat(state_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text(cap, '\0');
  size_t got = 0;
  while (got < cap) {
    const ssize_t n = read(fd, &text[got], cap - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  close(fd);
  text.resize(got);
  return text;
}

}  // namespace

extern "C" {

int topoaware_topo_hash_valid(const char *hash) { return hash && valid_topology_hash(hash) ? 1 : 0; }

int topoaware_job_hash_write(int state_fd, uint32_t job_id, const char *hash, const char *layout, const char *order,
                             int rail_optimized, char *err, size_t errlen) {
  return c_boundary(err, errlen, -1, [&]() -> int {
    const std::string name = job_hash_file_name(job_id);
    JobPlacement p;
    p.hash = hash ? hash : "";
    p.layout = layout ? layout : "";
    p.order = order ? order : "";
    p.rail_optimized = rail_optimized != 0;
    const std::string text = job_placement_file_text(p);  // throws for an invalid hash
    // Written whole under a name of this process's own, then renamed over the file: a reader (the
    // tasks of the job on a node whose prolog ran first, when several slurmd share the folder)
    // finds the old file or the new one, never a part; and a link or file at the name is replaced,
    // never followed. Root's, mode 0600: slurmstepd reads it as root (init_post_opt).
    const std::string tmp = name + "." + std::to_string(getpid());
    const int fd = openat(state_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error(tmp + ": " + std::strerror(errno));
    const auto fail = [&](const std::string &why) {
      if (fd >= 0) close(fd);
      unlinkat(state_fd, tmp.c_str(), 0);
      throw std::runtime_error(name + ": " + why);
    };
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(n < 0 ? std::strerror(errno) : "short write");
      done += size_t(n);
    }
    if (close(fd) != 0) {
      const int e = errno;
      unlinkat(state_fd, tmp.c_str(), 0);
      throw std::runtime_error(name + ": " + std::strerror(e));
    }
    if (renameat(state_fd, tmp.c_str(), state_fd, name.c_str()) != 0) {
      const int e = errno;
      unlinkat(state_fd, tmp.c_str(), 0);
      throw std::runtime_error(name + ": " + std::strerror(e));
    }
    return 0;
  });
}

int topoaware_job_placement_read(int state_fd, uint32_t job_id, char **layout, char **order, int *rail_optimized) {
  if (!layout || !order || !rail_optimized) return 0;
  *layout = *order = nullptr;
  char dummy[1];
  return c_boundary(dummy, 0, 0, [&]() -> int {
    const JobPlacement p = job_placement_from_text(read_job_file(state_fd, job_id, kMaxJobPlacementFile + 1));
    if (!p.has_order()) return 0;
    *layout = strdup(p.layout.c_str());
    *order = strdup(p.order.c_str());
    if (!*layout || !*order) {
      free(*layout);
      free(*order);
      *layout = *order = nullptr;
      return 0;
    }
    *rail_optimized = p.rail_optimized ? 1 : 0;
    return 1;
  });
}

int topoaware_job_hash_read(int state_fd, uint32_t job_id, char *buf, size_t len) {
  if (!buf || len == 0) return 0;
  buf[0] = '\0';
  char dummy[1];
  return c_boundary(dummy, 0, 0, [&]() -> int {
    const std::string name = job_hash_file_name(job_id);
    const int fd = openat(state_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    char tmp[kMaxJobHashFile];
    const ssize_t n = read(fd, tmp, sizeof(tmp));
    close(fd);
    if (n <= 0) return 0;
    const std::string hash = job_hash_from_text(std::string_view(tmp, size_t(n)));
    if (hash.empty() || hash.size() >= len) return 0;
    std::memcpy(buf, hash.c_str(), hash.size() + 1);
    return 1;
  });
}

int topoaware_job_hash_remove(int state_fd, uint32_t job_id, char *err, size_t errlen) {
  return c_boundary(err, errlen, -1, [&]() -> int {
    const std::string name = job_hash_file_name(job_id);
    if (unlinkat(state_fd, name.c_str(), 0) != 0 && errno != ENOENT)
      throw std::runtime_error(name + ": " + std::strerror(errno));
    return 0;
  });
}

}  // extern "C"
