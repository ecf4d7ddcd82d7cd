// SPDX-License-Identifier: GPL-2.0-or-later
// Opening a folder that root (or a daemon) writes into, so that no user can redirect the writes: every
// component from "/" is opened with O_NOFOLLOW and checked on the open descriptor. Used for the
// SPANK plugin's state folder (root's job prolog creates and removes job folders there) and for
// the select plugin's status file (slurmctld replaces it by rename). POSIX only.
#pragma once

#include <sys/types.h>

#include <string>

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
// O_NONBLOCK: never a file, FIFO or link that is already there), with `mode`, then renames it to
// `name` (a plain name, no '/'): readers see the old file or the new one, never a part. Throws
// std::runtime_error saying what failed; the temporary file is removed on every failure.
void replace_file_at(int dir_fd, const std::string &name, const std::string &text, mode_t mode);

}  // namespace topoaware
