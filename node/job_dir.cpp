// SPDX-License-Identifier: GPL-2.0-or-later
// See job_dir_c.h. POSIX calls on descriptors only; every error path closes what it opened.
#include "job_dir_c.h"

#include "c_api_util.hpp"
#include "safe_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

void set_err(char *err, size_t errlen, const std::string &m) {
  if (err && errlen) std::snprintf(err, errlen, "%s", m.c_str());
}

std::string errno_text(int e) { return std::strerror(e); }

// Closes an fd on scope exit, keeping errno.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() {
    if (fd >= 0) {
      const int e = errno;
      close(fd);
      errno = e;
    }
  }
};

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;

// One removal of a job folder: the bounds and what is left. Only the path of the folder being
// emptied is held (at most TOPOAWARE_JOB_DIR_MAX_DEPTH names), never a folder's list of names.
struct Removal {
  dev_t dev = 0;  // the file system it must stay on
  int state_fd = -1;    // where a folder nested too deep goes to be removed later (leftovers)
  uint32_t job_id = 0;  // names the leftovers
  uint64_t seen = 0, max_entries = 0, left = 0, moved = 0;
  uint32_t max_ms = 0;
  struct timespec deadline {};
  bool stopped = false;  // a bound was reached: the walk ends
  std::string first_left;

  void note_left(const std::string &path, const std::string &why) {
    if (left++ == 0) first_left = path + ": " + why;
  }
  // Counts one more entry; false (and the walk stops) past a bound.
  bool next(const std::string &path) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const bool late =
        now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
    if (++seen <= max_entries && !late) return true;
    stopped = true;
    note_left(path, late ? "stopped: the removal took longer than " + std::to_string(max_ms) + " ms"
                         : "stopped: more than " + std::to_string(max_entries) + " entries");
    return false;
  }
};

void start_removal(Removal *r, dev_t dev, int state_fd, uint32_t job_id, uint64_t max_entries, uint32_t max_ms) {
  r->dev = dev;
  r->state_fd = state_fd;
  r->job_id = job_id;
  r->max_entries = max_entries;
  r->max_ms = max_ms;
  clock_gettime(CLOCK_MONOTONIC, &r->deadline);
  r->deadline.tv_sec += time_t(max_ms / 1000);
  r->deadline.tv_nsec += long(max_ms % 1000) * 1000000L;
  if (r->deadline.tv_nsec >= 1000000000L) r->deadline.tv_sec += 1, r->deadline.tv_nsec -= 1000000000L;
}

bool remove_entry(int parent_fd, const char *name, const std::string &path, int depth, Removal *r);

// What a removal could not finish is moved, not left in place: a job folder stopped at a bound
// would keep its name (a later job with the same id could get no folder) and stay on the node's
// file system for good, since nothing but that job's epilog looks at it. As ".left.<job>.<time>"
// in the state folder (same file system, a root-only folder by then) it is removed by the epilogs
// that follow (topoaware_state_sweep), each within its bounds, so a tree of any size or depth goes
// in steps. renameat2(RENAME_NOREPLACE): never onto an existing name.
bool move_to_leftovers(int parent_fd, const char *name, int state_fd, uint32_t job_id, std::string *as) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  for (int attempt = 0; attempt < 16; ++attempt) {
    char left[96];
    std::snprintf(left, sizeof left, "%s%u.%lld%09ld.%d", TOPOAWARE_LEFTOVER_PREFIX, job_id,
                  static_cast<long long>(now.tv_sec), now.tv_nsec, attempt);
    if (renameat2(parent_fd, name, state_fd, left, RENAME_NOREPLACE) == 0) {
      if (as) *as = left;
      return true;
    }
    if (errno != EEXIST) return false;
  }
  return false;
}

// Removes what the folder fd holds, each entry as readdir returns it. A pass that removed entries
// is followed by another (readdir may skip names removed under it) until one finds the folder
// empty. False when something is left.
bool empty_folder(int fd, const std::string &path, int depth, Removal *r) {
  for (int pass = 0; pass < 4; ++pass) {
    // A dup shares the folder's read position with fd: back to its start, or every pass after the
    // first would read from where the last one ended and find nothing.
    const int lfd = lseek(fd, 0, SEEK_SET) == 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    std::unique_ptr<DIR, int (*)(DIR *)> d(lfd >= 0 ? fdopendir(lfd) : nullptr, closedir);
    if (!d) {
      if (lfd >= 0) close(lfd);
      r->note_left(path, errno_text(errno));
      return false;
    }
    bool saw = false, ok = true;
    while (struct dirent *de = readdir(d.get())) {
      if (!std::strcmp(de->d_name, ".") || !std::strcmp(de->d_name, "..")) continue;
      saw = true;
      ok = remove_entry(fd, de->d_name, path + "/" + de->d_name, depth + 1, r) && ok;
      if (r->stopped) break;
    }
    d.reset();
    if (!saw || !ok || r->stopped) return ok && !r->stopped;
  }
  return true;  // still not empty after the passes: the caller's rmdir says so
}

// Removes `name` in the folder parent_fd: a non-folder with unlinkat, a folder after its contents
// (taken back first when running as root). Notes what is left in *r; false if anything is.
bool remove_entry(int parent_fd, const char *name, const std::string &path, int depth, Removal *r) {
  if (!r->next(path)) return false;
  const int fd = openat(parent_fd, name, kDirFlags);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return true;
    if (e == ENOTDIR || e == ELOOP) {  // a file, a symbolic link, a FIFO, ...: the name only goes
      if (unlinkat(parent_fd, name, 0) == 0 || errno == ENOENT) return true;
      r->note_left(path, errno_text(errno));
      return false;
    }
    r->note_left(path, errno_text(e));
    return false;
  }
  Fd guard(fd);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    r->note_left(path, errno_text(errno));
    return false;
  }
  if (st.st_dev != r->dev) {
    r->note_left(path, "another file system is mounted there; not entered");
    return false;
  }
  // Take the folder back: from now on only root may add or rename entries in it.
  if (geteuid() == 0 && (fchown(fd, 0, 0) != 0 || fchmod(fd, 0700) != 0)) {
    r->note_left(path, "cannot take it back: " + errno_text(errno));
    return false;
  }
  if (depth >= TOPOAWARE_JOB_DIR_MAX_DEPTH) {
    // The walk holds one path and one descriptor per level: deeper parts start again from the top
    // as a leftover of their own.
    if (r->state_fd >= 0 && move_to_leftovers(parent_fd, name, r->state_fd, r->job_id, nullptr)) {
      r->moved++;
      return true;
    }
    r->note_left(path, "nested deeper than " + std::to_string(TOPOAWARE_JOB_DIR_MAX_DEPTH) + " folders");
    return false;
  }
  if (!empty_folder(fd, path, depth, r)) return false;
  if (unlinkat(parent_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
    r->note_left(path, errno_text(errno));
    return false;
  }
  return true;
}

bool plain_name(const char *name) {
  return name && *name && std::strchr(name, '/') == nullptr && std::strcmp(name, ".") != 0 &&
         std::strcmp(name, "..") != 0 && std::strlen(name) < 200;
}



// The state folder from "/", every component checked (corelib/safe_folder.hpp): root's job prolog
// creates and removes job folders in it, so only root may own or write any folder on the way.
int state_dir_open_impl(const char *path, int create, char *err, size_t errlen) {
  topoaware::FolderTrust trust;
  trust.what = "the state folder";
  std::string why;
  const int fd = topoaware::open_folder_safely(path ? path : "", trust, create != 0, &why);
  if (fd < 0) {
    const int e = errno;
    set_err(err, errlen, why);
    errno = e;
  }
  return fd;
}

int job_dir_remove_impl(int state_fd, uint32_t job_id, uint64_t max_entries, uint32_t max_ms, char *err,
                        size_t errlen) {
  char name[32];
  struct stat st;
  if (topoaware_job_dir_name(job_id, name, sizeof name) != 0 || job_id == 0) {
    set_err(err, errlen, "no job id");
    return -1;
  }
  if (fstat(state_fd, &st) != 0) {
    set_err(err, errlen, "the state folder: " + errno_text(errno));
    return -1;
  }
  Removal r;
  start_removal(&r, st.st_dev, state_fd, job_id, max_entries, max_ms);
  try {
    if (remove_entry(state_fd, name, name, 0, &r)) return 0;
  } catch (...) {  // std::bad_alloc from a path
    r.note_left(name, "out of memory");
  }
  std::string moved;
  const bool out_of_the_way = move_to_leftovers(state_fd, name, state_fd, job_id, &moved);
  set_err(err, errlen,
          "cannot remove all of " + std::string(name) + " (" + std::to_string(r.seen) + " entries looked at): " +
              r.first_left + (r.left > 1 ? " (and " + std::to_string(r.left - 1) + " more left)" : "") +
              (out_of_the_way ? "; the rest is now " + moved + ", which the next job epilogs remove" : ""));
  return -1;
}

int state_sweep_impl(int state_fd, uint64_t max_entries, uint32_t max_ms, char *err, size_t errlen) {
  struct stat st;
  if (fstat(state_fd, &st) != 0) {
    set_err(err, errlen, "the state folder: " + errno_text(errno));
    return -1;
  }
  // The names first (at most max_entries of them), then the removals: the folder is not read
  // while leftovers are renamed into it.
  std::vector<std::string> names;
  {
    const int lfd = lseek(state_fd, 0, SEEK_SET) == 0 ? fcntl(state_fd, F_DUPFD_CLOEXEC, 0) : -1;
    std::unique_ptr<DIR, int (*)(DIR *)> d(lfd >= 0 ? fdopendir(lfd) : nullptr, closedir);
    if (!d) {
      if (lfd >= 0) close(lfd);
      set_err(err, errlen, "the state folder: " + errno_text(errno));
      return -1;
    }
    const size_t plen = std::strlen(TOPOAWARE_LEFTOVER_PREFIX);
    while (const struct dirent *de = readdir(d.get()))
      if (!std::strncmp(de->d_name, TOPOAWARE_LEFTOVER_PREFIX, plen) && names.size() < max_entries)
        names.push_back(de->d_name);
  }
  Removal r;
  start_removal(&r, st.st_dev, state_fd, 0, max_entries, max_ms);
  uint64_t removed = 0;
  for (const std::string &n : names) {
    if (remove_entry(state_fd, n.c_str(), n, 0, &r)) ++removed;
    if (r.stopped) break;
  }
  if (!r.left && !r.moved && names.size() == removed) return 0;
  set_err(err, errlen,
          "leftovers of earlier job folders: " + std::to_string(removed) + " of " + std::to_string(names.size()) +
              " removed (" + std::to_string(r.seen) + " entries looked at)" +
              (r.first_left.empty() ? "" : ": " + r.first_left) +
              (r.left > 1 ? " (and " + std::to_string(r.left - 1) + " more left)" : "") +
              (r.moved ? "; " + std::to_string(r.moved) + " folders nested deeper than " +
                             std::to_string(TOPOAWARE_JOB_DIR_MAX_DEPTH) + " moved aside again"
                       : "") +
              "; the next job epilogs go on");
  return 1;
}

int job_dir_create_impl(int state_fd, uint32_t job_id, uid_t uid, gid_t gid, char *err, size_t errlen) {
  char name[32];
  if (topoaware_job_dir_name(job_id, name, sizeof name) != 0 || job_id == 0) {
    set_err(err, errlen, "no job id");
    return -1;
  }
  // Already there for this uid (the prolog of another slurmd of this host, or run twice): kept,
  // closed again. Anything else of that name is stale (a crashed node) and goes.
  const int old = openat(state_fd, name, kDirFlags);
  if (old >= 0) {
    struct stat ost;
    const bool mine = fstat(old, &ost) == 0 && S_ISDIR(ost.st_mode) && ost.st_uid == uid;
    const bool ok = mine && fchown(old, uid, gid) == 0 && fchmod(old, 0700) == 0;
    close(old);
    if (ok) return 0;
  }
  // A stale folder too big to remove now is moved aside (a leftover): the name is free all the same.
  struct stat gone;
  if (job_dir_remove_impl(state_fd, job_id, TOPOAWARE_JOB_DIR_MAX_ENTRIES, TOPOAWARE_JOB_DIR_MAX_MS, err, errlen) != 0 &&
      fstatat(state_fd, name, &gone, AT_SYMLINK_NOFOLLOW) == 0)
    return -1;
  if (mkdirat(state_fd, name, 0700) != 0) {
    set_err(err, errlen, std::string("cannot create ") + name + ": " + errno_text(errno));
    return -1;
  }
  const int fd = openat(state_fd, name, kDirFlags);
  struct stat st;
  std::string why;
  if (fd < 0) {
    why = "cannot open it: " + errno_text(errno);
  } else if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
    why = "not the folder just made";
  } else if (fchown(fd, uid, gid) != 0 || fchmod(fd, 0700) != 0) {
    why = "cannot give it to uid " + std::to_string(uid) + ": " + errno_text(errno);
  }
  if (fd >= 0) close(fd);
  if (why.empty()) return 0;
  unlinkat(state_fd, name, AT_REMOVEDIR);
  set_err(err, errlen, std::string(name) + ": " + why);
  return -1;
}

int job_dir_open_impl(int state_fd, uint32_t job_id, char *err, size_t errlen) {
  char name[32];
  if (topoaware_job_dir_name(job_id, name, sizeof name) != 0 || job_id == 0) {
    set_err(err, errlen, "no job id");
    errno = EINVAL;
    return -1;
  }
  const int fd = openat(state_fd, name, kDirFlags);
  if (fd < 0) {
    const int e = errno;
    set_err(err, errlen, std::string("cannot open ") + name + ": " + errno_text(e));
    errno = e;
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
    close(fd);
    set_err(err, errlen, std::string(name) + " is not a folder of uid " + std::to_string(geteuid()) +
                             " closed to group and others");
    errno = EPERM;
    return -1;
  }
  return fd;
}

int file_write_at_impl(int dir_fd, const char *name, const char *data, size_t len, char *err, size_t errlen) {
  if (!plain_name(name) || (!data && len)) {
    set_err(err, errlen, "not a plain file name");
    return -1;
  }
  const std::string tmp = "." + std::string(name) + "." + std::to_string(getpid());
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = openat(dir_fd, tmp.c_str(), flags, 0600);
  if (fd < 0 && errno == EEXIST && unlinkat(dir_fd, tmp.c_str(), 0) == 0)  // left by a dead process of this pid
    fd = openat(dir_fd, tmp.c_str(), flags, 0600);
  if (fd < 0) {
    set_err(err, errlen, "cannot create " + tmp + ": " + errno_text(errno));
    return -1;
  }
  size_t done = 0;
  int e = 0;
  while (done < len) {
    const ssize_t w = write(fd, data + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      e = w < 0 ? errno : EIO;
      break;
    }
    done += size_t(w);
  }
  if (close(fd) != 0 && !e) e = errno;
  if (!e && renameat(dir_fd, tmp.c_str(), dir_fd, name) != 0) e = errno;
  if (e) {
    unlinkat(dir_fd, tmp.c_str(), 0);
    set_err(err, errlen, std::string("cannot write ") + name + ": " + errno_text(e));
    return -1;
  }
  return 0;
}


// No C++ exception (std::bad_alloc from a message) leaves the C API.
template <class F>
int guarded(char *err, size_t errlen, F f) {
  return topoaware::c_boundary(err, errlen, -1, f);
}

}  // namespace

extern "C" {

int topoaware_job_dir_name(uint32_t job_id, char *buf, size_t len) {
  if (!buf || len == 0) return -1;
  const int n = std::snprintf(buf, len, "job.%u", job_id);
  return n > 0 && size_t(n) < len ? 0 : -1;
}

int topoaware_state_dir_open(const char *path, int create, char *err, size_t errlen) {
  return guarded(err, errlen, [&] { return state_dir_open_impl(path, create, err, errlen); });
}
int topoaware_job_dir_create(int state_fd, uint32_t job_id, uid_t uid, gid_t gid, char *err, size_t errlen) {
  return guarded(err, errlen, [&] { return job_dir_create_impl(state_fd, job_id, uid, gid, err, errlen); });
}
int topoaware_job_dir_remove(int state_fd, uint32_t job_id, char *err, size_t errlen) {
  return topoaware_job_dir_remove_bounded(state_fd, job_id, TOPOAWARE_JOB_DIR_MAX_ENTRIES, TOPOAWARE_JOB_DIR_MAX_MS,
                                          err, errlen);
}
int topoaware_job_dir_remove_bounded(int state_fd, uint32_t job_id, uint64_t max_entries, uint32_t max_ms, char *err,
                                     size_t errlen) {
  return guarded(err, errlen, [&] { return job_dir_remove_impl(state_fd, job_id, max_entries, max_ms, err, errlen); });
}
int topoaware_state_sweep(int state_fd, char *err, size_t errlen) {
  return topoaware_state_sweep_bounded(state_fd, TOPOAWARE_JOB_DIR_MAX_ENTRIES, TOPOAWARE_SWEEP_MAX_MS, err, errlen);
}
int topoaware_state_sweep_bounded(int state_fd, uint64_t max_entries, uint32_t max_ms, char *err, size_t errlen) {
  return guarded(err, errlen, [&] { return state_sweep_impl(state_fd, max_entries, max_ms, err, errlen); });
}
int topoaware_job_dir_open(int state_fd, uint32_t job_id, char *err, size_t errlen) {
  return guarded(err, errlen, [&] { return job_dir_open_impl(state_fd, job_id, err, errlen); });
}
int topoaware_file_write_at(int dir_fd, const char *name, const char *data, size_t len, char *err, size_t errlen) {
  return guarded(err, errlen, [&] { return file_write_at_impl(dir_fd, name, data, len, err, errlen); });
}

}  // extern "C"
