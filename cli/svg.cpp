// SPDX-License-Identifier: GPL-2.0-or-later
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cli_commands.hpp"

extern char **environ;

namespace topoaware {

std::string dot_to_svg(const std::string &dot) {
  // Temporary files rather than two pipes: dot reads all input before writing, and files avoid
  // any pipe-buffer deadlock on large graphs.
  char in_path[] = "/tmp/topoaware-dot-XXXXXX";
  int fd = mkstemp(in_path);
  if (fd < 0) throw std::runtime_error(std::string("svg: cannot create a temporary file: ") + std::strerror(errno));
  std::string out_path = std::string(in_path) + ".svg";
  struct Cleanup {
    const char *a;
    std::string b;
    ~Cleanup() { unlink(a), unlink(b.c_str()); }
  } cleanup{in_path, out_path};
  if (write(fd, dot.data(), dot.size()) != static_cast<ssize_t>(dot.size())) {
    close(fd);
    throw std::runtime_error("svg: cannot write the DOT text to a temporary file");
  }
  close(fd);
  std::string o_arg = "-o" + out_path;
  char *argv[] = {const_cast<char *>("dot"), const_cast<char *>("-Tsvg"), const_cast<char *>(o_arg.c_str()), in_path,
                  nullptr};
  pid_t pid;
  int rc = posix_spawnp(&pid, "dot", nullptr, nullptr, argv, environ);
  if (rc != 0)
    throw std::runtime_error("svg: cannot run Graphviz's dot (" + std::string(std::strerror(rc)) +
                             "); install graphviz, or use --format dot");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("svg: dot failed on the generated graph (exit status " +
                             std::to_string(WEXITSTATUS(status)) + ")");
  std::ifstream in(out_path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace topoaware
