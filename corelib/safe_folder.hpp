// SPDX-License-Identifier: GPL-2.0-or-later
// Writing where another user may have planted names, so that no user can redirect the writes. A
// folder that root (or a daemon) writes into is opened component by component from "/" with
// O_NOFOLLOW and checked on the open descriptor: the SPANK plugin's state folder (root's job prolog
// creates and removes job folders there) and the select plugin's status file (slurmctld replaces
// it by rename). Every file the topoaware command writes (outputs, metrics, its append log) goes
// through write_file_safely or open_log_safely: the command runs as root from cron, often into a
// folder others may write to. POSIX only.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace topoaware {

// Who may own a folder on the way. A folder is safe when it is a real folder (no symbolic link),
// owned by root or by `also_owner` (uid_t(-1): root only), and writable by nobody else. A folder
// above the last one may instead be sticky (as /tmp): there only its owner or root may rename or
// remove the entry the next step opens, and that entry is checked in turn.
struct FolderTrust {
  uid_t also_owner = uid_t(-1);
  const char *what = "the folder";  // in messages: "the state folder", "the status file's folder"
};

// Opens `path` (absolute, no "." or ".." components) as an O_DIRECTORY|O_CLOEXEC descriptor, every
// component checked as above; with `create`, the last component is made (mode 0755) if missing.
// Returns the descriptor, or -1 with errno set and *why saying which component and what is wrong.
int open_folder_safely(const std::string &path, const FolderTrust &trust, bool create, std::string *why);

// Writes `text` to a new file of a random name in the folder `dir_fd` (O_CREAT|O_EXCL|O_NOFOLLOW|
// O_NONBLOCK: never a file, FIFO or link that is already there), with `mode`, fsyncs it, renames
// it to `name` (a plain name, no '/') and fsyncs the folder: readers see the old file or the new
// one, never a part, also after a crash. An existing `name` that is not a regular file (a symbolic
// link, FIFO, folder, device or socket) is refused, not replaced. Throws std::runtime_error saying
// what failed; the temporary file is removed on every failure.
void replace_file_at(int dir_fd, const std::string &name, const std::string &text, mode_t mode);
// The same with the content written by `fill(fd)`, which returns 0 or an errno value and may throw
// (the temporary file is removed either way): for content too large to hold in memory at once.
void replace_file_at(int dir_fd, const std::string &name, mode_t mode, const std::function<int(int fd)> &fill);

// Throws std::runtime_error ("PATH: not replaced: it is a FIFO; ...") when `path` exists and is not
// a regular file (lstat: a link is never followed); a missing path is fine. Lets a caller that
// writes several files refuse before it writes the first.
void check_replaceable(const std::string &path);

// The command's output files: `text` as `path` (mode 0644) through replace_file_at in the folder
// that holds it, opened once, as named. Throws std::runtime_error naming `path`.
void write_file_safely(const std::string &path, const std::string &text);

// The command's append log: `path` opened O_WRONLY|O_APPEND|O_CREAT (mode 0644) with O_NOFOLLOW and
// O_NONBLOCK, so that it never blocks on a FIFO nor writes through a link; refused unless it is a
// regular file with one name (a hard link would append to a file elsewhere). Returns the
// descriptor; throws std::runtime_error naming `path`.
int open_log_safely(const std::string &path);

// A new folder of a random name in $TMPDIR (if absolute) or /tmp, mode 0700 (mkdtemp), for a
// program that writes a file by name (libibnetdisc's cache, Graphviz's dot): no other user can
// plant a link or a FIFO in it. Goes, with the files named through file(), when it goes out of
// scope. Throws std::runtime_error if it cannot be made.
class PrivateFolder {
 public:
  PrivateFolder();
  ~PrivateFolder();
  PrivateFolder(const PrivateFolder &) = delete;
  PrivateFolder &operator=(const PrivateFolder &) = delete;
  std::string file(const std::string &name);  // its path in the folder, removed with it

 private:
  std::string path_;
  std::vector<std::string> files_;
};

}  // namespace topoaware
