// SPDX-License-Identifier: GPL-2.0-or-later
// See safe_folder.hpp. POSIX calls on descriptors only; every error path closes what it opened.
#include "safe_folder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

namespace topoaware {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;

bool safe(int fd, bool last, const FolderTrust &trust, const std::string &shown, std::string *why) {
  struct stat st;
  const bool owner_ok = fstat(fd, &st) == 0 && (st.st_uid == 0 || st.st_uid == trust.also_owner);
  const bool ok = owner_ok && S_ISDIR(st.st_mode) && (!(st.st_mode & 022) || (!last && (st.st_mode & S_ISVTX)));
  if (!ok) {
    const std::string owner =
        trust.also_owner == uid_t(-1) ? "root" : "root or uid " + std::to_string(trust.also_owner);
    *why = shown + " must be a folder owned by " + owner + " and writable only by " +
           (trust.also_owner == uid_t(-1) ? "root" : "its owner") +
           (last ? "" : std::string(" (or sticky, as /tmp): it is on the way to ") + trust.what);
  }
  return ok;
}

}  // namespace

int open_folder_safely(const std::string &path, const FolderTrust &trust, bool create, std::string *why) {
  if (path.empty() || path[0] != '/') {
    *why = std::string(trust.what) + " must be an absolute path";
    errno = EINVAL;
    return -1;
  }
  std::vector<std::string> parts;
  for (size_t p = 0; p < path.size();) {
    while (p < path.size() && path[p] == '/') ++p;
    const size_t e = std::min(path.find('/', p), path.size());
    std::string part = path.substr(p, e - p);
    if (part == "." || part == "..") {
      *why = std::string(trust.what) + " " + path + " must not contain . or ..";
      errno = EINVAL;
      return -1;
    }
    if (!part.empty()) parts.push_back(std::move(part));
    p = e;
  }
  int fd = open("/", kDirFlags);
  std::string shown = "/";
  if (fd < 0) {
    const int e = errno;
    *why = std::string("cannot open /: ") + std::strerror(e);
    errno = e;
    return -1;
  }
  if (!safe(fd, parts.empty(), trust, shown, why)) {
    close(fd);
    errno = EPERM;
    return -1;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    shown += (i ? "/" : "") + parts[i];
    if (last && create && mkdirat(fd, parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
      const int e = errno;
      close(fd);
      *why = "cannot create " + shown + ": " + std::strerror(e);
      errno = e;
      return -1;
    }
    const int next = openat(fd, parts[i].c_str(), kDirFlags);
    const int e = errno;
    struct stat lst;
    // O_NOFOLLOW with O_DIRECTORY fails with ENOTDIR (not ELOOP) on a link: say what it is.
    const bool link =
        next < 0 && fstatat(fd, parts[i].c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode);
    close(fd);
    if (next < 0) {
      *why = "cannot open " + shown + ": " +
             (link ? std::string("it is a symbolic link, never followed") : std::strerror(e));
      errno = e;
      return -1;
    }
    fd = next;
    if (!safe(fd, last, trust, shown, why)) {
      close(fd);
      errno = EPERM;
      return -1;
    }
  }
  return fd;
}

void replace_file_at(int dir_fd, const std::string &name, const std::string &text, mode_t mode) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw std::runtime_error("'" + name + "' is not a plain file name");
  std::random_device rd;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    tmp = "." + name + ".tmp." + std::to_string(rd());
    fd = openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST)
      throw std::runtime_error("cannot create a temporary file " + tmp + ": " + std::strerror(errno));
  }
  if (fd < 0) throw std::runtime_error("cannot create a temporary file beside " + name + ": 16 names taken");
  auto fail = [&](const std::string &what, int e) {
    if (fd >= 0) close(fd);
    unlinkat(dir_fd, tmp.c_str(), 0);
    throw std::runtime_error(what + ": " + std::strerror(e));
  };
  if (fchmod(fd, mode) != 0) fail("cannot set the mode of " + tmp, errno);  // the umask does not apply
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("cannot write " + tmp, w < 0 ? errno : EIO);
    done += size_t(w);
  }
  const int c = close(fd);
  fd = -1;
  if (c != 0) fail("cannot write " + tmp, errno);
  if (renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) fail("cannot rename " + tmp + " to " + name, errno);
}

}  // namespace topoaware
