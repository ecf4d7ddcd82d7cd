// SPDX-License-Identifier: GPL-2.0-or-later
// Reading a file that a daemon was told to read (topology.json, topoaware.conf, the status file)
// without ever blocking or reading without end: a FIFO, a device such as /dev/zero or a folder put
// where the file should be is refused, whatever the path pointed to when it was checked.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace topoaware {

// The reason alone (the caller puts the path and its own error type around it); `error` is the errno
// of a failed open, stat or read, 0 for a file refused for its kind or its size.
class FileReadError : public std::runtime_error {
 public:
  FileReadError(const std::string &why, int error) : std::runtime_error(why), error(error) {}
  int error;
};

// Reads the regular file `path` of at most `max_bytes`: opened with O_NONBLOCK (so opening a FIFO
// returns at once), refused unless fstat on that descriptor says regular file, then read up to the
// size fstat gave and one byte more, so that a file growing meanwhile is still cut at the bound.
// `size_text` names the bound in the message ("1 MiB" -> "larger than 1 MiB"). Throws FileReadError
// with: "cannot open: <strerror>", "cannot stat it: ...", "not a regular file (a FIFO, device or
// folder is never read)", "larger than <size_text>", "cannot read: <strerror>".
std::string read_regular_file(const std::string &path, size_t max_bytes, const std::string &size_text);

}  // namespace topoaware
