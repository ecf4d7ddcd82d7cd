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
#include "safe_folder.hpp"

extern char **environ;

namespace topoaware {

std::string dot_to_svg(const std::string &dot) {
  // Temporary files rather than two pipes: dot reads all input before writing, and files avoid
  // any pipe-buffer deadlock on large graphs. Both in a folder of our own: dot opens its output by
  // name, which in /tmp itself another user could have made a link to a file of root's.
  PrivateFolder folder;
  const std::string in_path = folder.file("graph.dot"), out_path = folder.file("graph.svg");
  try {
    write_file_safely(in_path, dot);
  } catch (const std::runtime_error &e) {
    throw std::runtime_error(std::string("svg: cannot write the DOT text to a temporary file: ") + e.what());
  }
  std::string o_arg = "-o" + out_path;
  char *argv[] = {const_cast<char *>("dot"), const_cast<char *>("-Tsvg"), const_cast<char *>(o_arg.c_str()),
                  const_cast<char *>(in_path.c_str()), nullptr};
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
