// SPDX-License-Identifier: GPL-2.0-or-later
// See safe_folder.hpp. POSIX calls on descriptors only; every error path closes what it opened.
#include "safe_folder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

namespace {

// "a FIFO", ... for a file that is not regular; "" for a regular one.
const char *kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string refusal(const char *kind) {
  return std::string("not replaced: it is ") + kind + "; only a regular file is (remove it or choose another path)";
}

// The folder of `path` as named (links in it followed: the caller chose it) and the last name.
int open_parent(const std::string &path, std::string *name) {
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  *name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name->empty() || *name == "." || *name == "..") throw std::runtime_error(path + ": names a folder, not a file");
  const int fd = open(folder.c_str(), kDirFlags & ~O_NOFOLLOW);
  if (fd < 0) throw std::runtime_error(path + ": cannot open its folder " + folder + ": " + std::strerror(errno));
  return fd;
}

// A new file of a random name beside `name` (O_EXCL: never one that is there), mode `mode`.
int create_temporary(int dir_fd, const std::string &name, mode_t mode, std::string *tmp) {
  std::random_device rd;
  for (int attempt = 0; attempt < 16; ++attempt) {
    *tmp = "." + name + ".tmp." + std::to_string(rd()) + std::to_string(rd());
    const int fd =
        openat(dir_fd, tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
    if (fd >= 0) return fd;
    if (errno != EEXIST)
      throw std::runtime_error("cannot create a temporary file " + *tmp + ": " + std::strerror(errno));
  }
  throw std::runtime_error("cannot create a temporary file beside " + name + ": 16 names taken");
}

int write_all(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    done += size_t(w);
  }
  return 0;
}

void check_replaceable_at(int dir_fd, const std::string &name) {
  struct stat st;
  if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
    throw std::runtime_error(refusal(kind_of(st.st_mode)));
}

}  // namespace

void replace_file_at(int dir_fd, const std::string &name, const std::string &text, mode_t mode) {
  replace_file_at(dir_fd, name, mode, [&](int fd) { return write_all(fd, text); });
}

void replace_file_at(int dir_fd, const std::string &name, mode_t mode, const std::function<int(int fd)> &fill) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw std::runtime_error("'" + name + "' is not a plain file name");
  // Checked first for a clear message; a link planted after the check is replaced by the rename
  // (which never follows it), not written through.
  check_replaceable_at(dir_fd, name);
  std::string tmp;
  int fd = create_temporary(dir_fd, name, mode, &tmp);
  auto fail = [&](const std::string &what, int e) {
    if (fd >= 0) close(fd);
    unlinkat(dir_fd, tmp.c_str(), 0);
    throw std::runtime_error(what + ": " + std::strerror(e));
  };
  if (fchmod(fd, mode) != 0) fail("cannot set the mode of " + tmp, errno);  // the umask does not apply
  int e = 0;
  try {
    e = fill(fd);
  } catch (...) {
    close(fd);
    unlinkat(dir_fd, tmp.c_str(), 0);
    throw;
  }
  if (e) fail("cannot write " + tmp, e);
  if (fsync(fd) != 0) fail("cannot write " + tmp + " to disk", errno);
  const int c = close(fd);
  fd = -1;
  if (c != 0) fail("cannot write " + tmp, errno);
  if (renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) fail("cannot rename " + tmp + " to " + name, errno);
  // The rename itself on disk; a file system that cannot sync a folder says EINVAL.
  if (fsync(dir_fd) != 0 && errno != EINVAL && errno != ENOTSUP)
    throw std::runtime_error("cannot write the folder of " + name + " to disk: " + std::strerror(errno));
}

void check_replaceable(const std::string &path) {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw std::runtime_error(path + ": " + refusal(kind_of(st.st_mode)));
}

void write_file_safely(const std::string &path, const std::string &text) {
  std::string name;
  const int dir_fd = open_parent(path, &name);
  try {
    replace_file_at(dir_fd, name, text, 0644);
  } catch (const std::runtime_error &e) {
    close(dir_fd);
    throw std::runtime_error(path + ": " + e.what());
  }
  close(dir_fd);
}

int open_log_safely(const std::string &path) {
  std::string name;
  const int dir_fd = open_parent(path, &name);
  struct stat st;
  // Looked at before it is opened: opening a device may act on it.
  if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
    close(dir_fd);
    throw std::runtime_error(path + ": not appended to: it is " + std::string(kind_of(st.st_mode)) +
                             "; only a regular file is (remove it or choose another path)");
  }
  const int fd = openat(dir_fd, name.c_str(),
                        O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  const int e = errno;
  close(dir_fd);
  if (fd < 0)
    throw std::runtime_error(path + ": cannot open it to append: " +
                             (e == ELOOP   ? "it is a symbolic link, never followed"
                              : e == ENXIO ? "it is a FIFO"
                                           : std::strerror(e)));
  // Checked again on the descriptor: the name may have changed since fstatat.
  std::string why;
  if (fstat(fd, &st) != 0)
    why = std::string("cannot stat it: ") + std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    why = std::string("it is ") + kind_of(st.st_mode) + "; only a regular file is";
  else if (st.st_nlink > 1)
    why = "it has " + std::to_string(st.st_nlink) + " names (hard links); only a file with one is";
  if (why.empty()) return fd;
  close(fd);
  throw std::runtime_error(path + ": not appended to: " + why);
}

PrivateFolder::PrivateFolder() {
  const char *env = std::getenv("TMPDIR");
  std::string tmpl = std::string(env && env[0] == '/' ? env : "/tmp") + "/topoaware-XXXXXX";
  if (!mkdtemp(tmpl.data()))
    throw std::runtime_error("cannot make a private temporary folder " + tmpl + ": " + std::strerror(errno));
  path_ = tmpl;
}

PrivateFolder::~PrivateFolder() {
  for (const std::string &f : files_) unlink(f.c_str());
  rmdir(path_.c_str());
}

std::string PrivateFolder::file(const std::string &name) {
  files_.push_back(path_ + "/" + name);
  return files_.back();
}

}  // namespace topoaware
