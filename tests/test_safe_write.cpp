// SPDX-License-Identifier: GPL-2.0-or-later
// The one way the command writes a file (corelib/safe_folder.hpp): write_file_safely for outputs,
// open_log_safely for an append log, PrivateFolder for what another program writes by name. A link,
// FIFO or folder at the path is refused with the path and what is there, never followed, never
// waited on (each call runs in a child process, so that blocking fails the test); a name planted
// where a predictable temporary file would be is never used.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>

#include "child.hpp"
#include "cmocka_cxx.hpp"
#include "safe_folder.hpp"

using namespace topoaware;

namespace {

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string make_dir() {
  char dir[] = "/tmp/ta-safe-write-XXXXXX";
  assert_non_null(mkdtemp(dir));
  return dir;
}

void remove_dir(const std::string &dir) { assert_int_equal(std::system(("rm -rf " + dir).c_str()), 0); }

// The entries of dir other than `keep`, as "a b c".
std::string others(const std::string &dir, const std::string &keep) {
  std::string out;
  const std::string cmd = "ls -A " + dir;
  FILE *p = popen(cmd.c_str(), "r");
  char line[512];
  while (p && fgets(line, sizeof line, p)) {
    std::string n(line);
    n.pop_back();
    if (n != keep) out += (out.empty() ? "" : " ") + n;
  }
  if (p) pclose(p);
  return out;
}

// f() in a child: 0 if it threw a std::runtime_error containing every part of `want`, 1 if it did not
// throw, 2 if the message lacks a part; the test fails on anything else (-1: it blocked).
template <class F>
void expect_refused(F f, std::initializer_list<std::string> want) {
  const int rc = run_in_child([&] {
    try {
      f();
    } catch (const std::runtime_error &e) {
      for (const std::string &w : want)
        if (!std::strstr(e.what(), w.c_str())) {
          std::fprintf(stderr, "message '%s' lacks '%s'\n", e.what(), w.c_str());
          return 2;
        }
      return 0;
    }
    return 1;
  });
  if (rc != 0) fail_msg("%s", rc < 0 ? "blocked" : rc == 1 ? "not refused" : "refused with another message");
}

void test_writes_and_replaces(void **) {
  const std::string dir = make_dir(), path = dir + "/out.json";
  const mode_t old_mask = umask(077);  // the file is 0644 whatever the umask
  write_file_safely(path, "first\n");
  umask(old_mask);
  assert_string_equal(slurp(path).c_str(), "first\n");
  struct stat st;
  assert_int_equal(lstat(path.c_str(), &st), 0);
  assert_int_equal(st.st_mode & 07777, 0644);
  write_file_safely(path, "second\n");
  assert_string_equal(slurp(path).c_str(), "second\n");
  assert_string_equal(others(dir, "out.json").c_str(), "");  // no temporary file left
  remove_dir(dir);
}

void test_refuses_what_is_not_a_file(void **) {
  const std::string dir = make_dir(), victim = dir + "/victim", path = dir + "/out";
  std::ofstream(victim) << "keep me\n";
  const std::pair<const char *, std::function<int()>> plants[] = {
      {"a symbolic link", [&] { return symlink(victim.c_str(), path.c_str()); }},
      {"a FIFO", [&] { return mkfifo(path.c_str(), 0600); }},
      {"a folder", [&] { return mkdir(path.c_str(), 0700); }},
  };
  for (const auto &[kind, plant] : plants) {
    assert_int_equal(plant(), 0);
    expect_refused([&] { write_file_safely(path, "new\n"); }, {path + ": not replaced: it is " + kind});
    expect_refused([&] { check_replaceable(path); }, {path + ": not replaced: it is " + kind});
    expect_refused([&] { close(open_log_safely(path)); }, {path + ": not appended to: it is " + kind});
    assert_string_equal(slurp(victim).c_str(), "keep me\n");
    assert_string_equal(others(dir, "victim").c_str(), "out");  // the plant alone, nothing beside it
    assert_int_equal(std::system(("rm -rf " + path).c_str()), 0);
  }
  expect_refused([&] { write_file_safely(dir + "/", "x"); }, {"names a folder"});
  expect_refused([&] { write_file_safely(dir + "/none/out", "x"); }, {dir + "/none/out: cannot open its folder"});
  remove_dir(dir);
}

// The old temporary name, "<path>.tmp.<pid>", planted as a FIFO, and a link at ".<name>.tmp.<pid>":
// never used.
void test_temporary_name_is_not_predictable(void **) {
  const std::string dir = make_dir(), victim = dir + "/victim", path = dir + "/out";
  std::ofstream(victim) << "keep me\n";
  const int rc = run_in_child([&] {
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    const std::string hidden = dir + "/.out.tmp." + std::to_string(getpid());
    if (mkfifo(tmp.c_str(), 0600) != 0 || symlink(victim.c_str(), hidden.c_str()) != 0) return 3;
    write_file_safely(path, "new\n");
    return 0;
  });
  if (rc != 0) fail_msg("%s", rc < 0 ? "blocked on the FIFO" : "failed");
  assert_string_equal(slurp(path).c_str(), "new\n");
  assert_string_equal(slurp(victim).c_str(), "keep me\n");
  remove_dir(dir);
}

void test_log_appends(void **) {
  const std::string dir = make_dir(), path = dir + "/defrag.log", victim = dir + "/victim";
  int fd = open_log_safely(path);  // made, mode 0644
  assert_int_equal(write(fd, "one\n", 4), 4);
  close(fd);
  struct stat st;
  assert_int_equal(lstat(path.c_str(), &st), 0);
  assert_int_equal(st.st_mode & 07777, 0644);
  fd = open_log_safely(path);
  assert_int_equal(write(fd, "two\n", 4), 4);
  close(fd);
  assert_string_equal(slurp(path).c_str(), "one\ntwo\n");
  // A second name of another file: appending would change that file.
  std::ofstream(victim) << "keep me\n";
  assert_int_equal(link(victim.c_str(), (dir + "/linked.log").c_str()), 0);
  expect_refused([&] { close(open_log_safely(dir + "/linked.log")); }, {dir + "/linked.log", "2 names"});
  assert_string_equal(slurp(victim).c_str(), "keep me\n");
  remove_dir(dir);
}

void test_private_folder(void **) {
  std::string path, folder;
  {
    PrivateFolder f;
    path = f.file("graph.svg");
    folder = path.substr(0, path.rfind('/'));
    struct stat st;
    assert_int_equal(lstat(folder.c_str(), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(st.st_mode & 07777, 0700);
    std::ofstream(path) << "x";
  }
  assert_int_equal(access(path.c_str(), F_OK), -1);
  assert_int_equal(access(folder.c_str(), F_OK), -1);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_writes_and_replaces),
      cmocka_unit_test(test_refuses_what_is_not_a_file),
      cmocka_unit_test(test_temporary_name_is_not_predictable),
      cmocka_unit_test(test_log_appends),
      cmocka_unit_test(test_private_folder),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
