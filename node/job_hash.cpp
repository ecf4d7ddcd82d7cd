// The job's topology hash file in the state folder (job_dir_c.h): the I/O on descriptors here,
// its name and content from the core (corelib/spank_settings.hpp).
#include "job_dir_c.h"

#include "c_api_util.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "spank_settings.hpp"

using namespace topoaware;

extern "C" {

int topoaware_topo_hash_valid(const char *hash) { return hash && valid_topology_hash(hash) ? 1 : 0; }

int topoaware_job_hash_write(int state_fd, uint32_t job_id, const char *hash, char *err, size_t errlen) {
  return c_boundary(err, errlen, -1, [&]() -> int {
    const std::string name = job_hash_file_name(job_id);
    const std::string text = job_hash_file_text(hash ? hash : "");  // throws for an invalid hash
    const int fd = openat(state_fd, name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(name + ": " + std::strerror(errno));
    const ssize_t n = write(fd, text.data(), text.size());
    const int e = errno;
    close(fd);
    if (n != ssize_t(text.size())) throw std::runtime_error(name + ": " + (n < 0 ? std::strerror(e) : "short write"));
    return 0;
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
