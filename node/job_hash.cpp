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
                             int rail_optimized, uid_t uid, gid_t gid, char *err, size_t errlen) {
  return c_boundary(err, errlen, -1, [&]() -> int {
    const std::string name = job_hash_file_name(job_id);
    JobPlacement p;
    p.hash = hash ? hash : "";
    p.layout = layout ? layout : "";
    p.order = order ? order : "";
    p.rail_optimized = rail_optimized != 0;
    const std::string text = job_placement_file_text(p);  // throws for an invalid hash
    // A new file each time: one left by an earlier run of this job id (a requeue) may be another
    // owner's. Created 0400 (never wider than its final mode), then given to the job's user.
    const bool owned = uid != uid_t(-1);
    if (unlinkat(state_fd, name.c_str(), 0) != 0 && errno != ENOENT)
      throw std::runtime_error(name + ": " + std::strerror(errno));
    const int fd = openat(state_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          owned ? 0400 : 0644);
    if (fd < 0) throw std::runtime_error(name + ": " + std::strerror(errno));
    const auto fail = [&](const std::string &why) {
      close(fd);
      unlinkat(state_fd, name.c_str(), 0);
      throw std::runtime_error(name + ": " + why);
    };
    if (owned && (fchown(fd, uid, gid) != 0 || fchmod(fd, 0400) != 0))
      fail(std::string("cannot give it to the job's user: ") + std::strerror(errno));
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0) fail(std::strerror(errno));
    if (n != ssize_t(text.size())) fail("short write");
    close(fd);
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
