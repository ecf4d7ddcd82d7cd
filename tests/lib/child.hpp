// SPDX-License-Identifier: GPL-2.0-or-later
// Tests of code that could block (a FIFO where a file should be): the code runs in a child process,
// so that blocking fails the test instead of hanging it.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

// Runs body in a child process and returns its result (the child's exit status, 0-255); -1 if the
// child did not end within timeout_ms (it is killed) or could not be started.
inline int run_in_child(const std::function<int()> &body, int timeout_ms = 5000) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    int rc = 255;
    try {
      rc = body();
    } catch (...) {
    }
    _exit(rc);
  }
  int st = 0;
  for (int waited = 0; waitpid(child, &st, WNOHANG) == 0; waited += 50) {
    if (waited >= timeout_ms) {
      kill(child, SIGKILL);
      waitpid(child, &st, 0);
      return -1;
    }
    usleep(50000);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
