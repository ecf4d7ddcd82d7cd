// SPDX-License-Identifier: GPL-2.0-or-later
// The select plugin's status file: round trip, strict reading, the book's phases, pruning,
// bounds and write throttling (status.hpp), and the C API the plugin uses (status_c.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "status.hpp"
#include "status_c.h"
#include "child.hpp"
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

StatusJob job(uint32_t id, const char *reason = "") {
  StatusJob j;
  j.job_id = id;
  j.layout = "tp=8,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp";
  j.mode = "strict";
  j.gpus_per_node = 8;
  j.reason = reason;
  return j;
}

void expect_error(const std::string &text, const char *part) {
  try {
    status_from_json(text, "status.json");
  } catch (const StatusError &e) {
    if (!std::strstr(e.what(), part)) {
      print_error("message '%s' lacks '%s'\n", e.what(), part);
      fail();
    }
    return;
  }
  print_error("parsed, expected an error containing '%s'\n", part);
  fail();
}

void test_round_trip(void **) {
  StatusBook b;
  b.set_plugin("select/cons_tres_topoaware");
  b.set_topology("/etc/slurm/topology.json", "sha256:ab", "");
  StatusJob p = job(7);
  p.placement = "ideal";
  p.nodes = "n[0001-0004]";
  p.node_order = "n0001,n0002,n0003,n0004";
  b.placed(p, 100);
  b.waiting(job(3, "no ideal block: 2 of 3 leaves hold a split ring"), 101);
  b.count_call(40, true);
  b.count_call(10, false);
  Status s = status_from_json(b.render(102), "x");
  assert_string_equal(s.plugin.c_str(), "select/cons_tres_topoaware");
  assert_string_equal(s.topology_hash.c_str(), "sha256:ab");
  assert_int_equal(s.written_at, 102);
  assert_int_equal(s.counters.calls, 2);
  assert_int_equal(s.counters.total_us, 50);
  assert_int_equal(s.counters.max_us, 40);
  assert_int_equal(s.counters.layout_calls, 1);
  assert_int_equal(s.jobs.size(), 2);
  assert_int_equal(s.jobs[0].job_id, 3);  // sorted by id
  assert_true(s.jobs[0].phase == JobPhase::Waiting);
  assert_string_equal(s.jobs[0].reason.c_str(), "no ideal block: 2 of 3 leaves hold a split ring");
  assert_int_equal(s.jobs[1].job_id, 7);
  assert_true(s.jobs[1].phase == JobPhase::Placed);
  assert_string_equal(s.jobs[1].node_order.c_str(), "n0001,n0002,n0003,n0004");
  assert_int_equal(s.jobs[1].gpus_per_node, 8);
  // The canonical text is stable: rendering what was read gives the same text.
  assert_string_equal(status_to_json(s).c_str(), b.render(102).c_str());
}

void test_waiting_keeps_since_and_throttles(void **) {
  StatusBook b;
  b.waiting(job(5, "why"), 10);
  assert_true(b.should_write(10, 5, false));
  b.render(10);
  b.written(10);
  assert_false(b.should_write(11, 5, false));
  b.waiting(job(5, "why"), 20);  // same verdict: only refreshed
  assert_false(b.should_write(20, 5, false));
  assert_true(b.should_write(20, 5, true));
  b.waiting(job(5, "another reason"), 21);
  assert_true(b.should_write(21, 5, false));
  assert_int_equal(b.jobs().at(5).since, 10);
  assert_int_equal(b.jobs().at(5).updated, 21);
  StatusJob p = job(5);
  p.placement = "fallback";
  b.placed(p, 30);
  assert_true(b.jobs().at(5).phase == JobPhase::Placed);
  assert_int_equal(b.jobs().at(5).since, 30);
  b.finished(5);
  assert_true(b.jobs().empty());
}

void test_stale_waiting_pruned_placed_kept(void **) {
  StatusBook b;
  b.waiting(job(1), 0);
  StatusJob p = job(2);
  p.placement = "ideal";
  b.placed(p, 0);
  Status s = status_from_json(b.render(kStatusWaitingTtl + 1), "x");
  assert_int_equal(s.jobs.size(), 1);
  assert_int_equal(s.jobs[0].job_id, 2);
}

void test_bounded(void **) {
  StatusBook b;
  for (uint32_t i = 1; i <= kMaxStatusJobs; ++i) b.waiting(job(i), 1);  // none stale
  assert_int_equal(b.jobs().size(), kMaxStatusJobs);
  StatusJob p = job(kMaxStatusJobs + 1);
  b.placed(p, 2);  // a waiting entry (the first of the longest-unrefreshed) makes room
  assert_int_equal(b.jobs().size(), kMaxStatusJobs);
  assert_true(b.jobs().count(1) == 0);
  assert_true(b.jobs().count(kMaxStatusJobs + 1) == 1);
}

void test_strict_reader(void **) {
  StatusBook b;
  b.waiting(job(4), 1);
  std::string good = b.render(2);
  status_from_json(good, "x");
  expect_error("", "not valid JSON");
  expect_error("[]", "not a JSON object");
  std::string t = good;
  t.replace(t.find("topoaware-status/1"), 18, "topoaware-status/9");
  expect_error(t, "schema");
  t = good;
  t.replace(t.find("\"waiting\""), 9, "\"running\"");
  expect_error(t, "phase \"running\"");
  t = good;
  t.replace(t.find("\"job_id\": 4"), 11, "\"job_id\": 0");
  expect_error(t, "job_id out of range");
  t = good;
  t.replace(t.find("\"gpus_per_node\": 8"), 18, "\"gpus_per_node\": \"8\"");
  expect_error(t, "\"gpus_per_node\" has the wrong type");
  t = good;
  t.replace(t.find("\"since\": 1"), 10, "\"since\": -1");
  expect_error(t, "\"since\" is negative");
  t = good;
  t.erase(t.find("\"mode\""), std::string("\"mode\": \"strict\",").size());
  expect_error(t, "missing \"mode\"");
}

// A FIFO, a symbolic link or a file planted where a predictable temporary name would be (the
// old "<file>.tmp.<pid>") is never opened: the write ends at once, in a child process here so that
// a writer that blocks fails the test instead of hanging it.
void test_write_never_blocks_on_planted_names(void **) {
  char dir[] = "/tmp/ta-status-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string path = std::string(dir) + "/status.json";
  const int rc = run_in_child([&] {
    const std::string fifo = path + ".tmp." + std::to_string(getpid());
    if (mkfifo(fifo.c_str(), 0600) != 0) return 3;
    if (symlink("/etc/passwd", (path + ".tmp.XXXXXX").c_str()) != 0) return 4;
    try {
      write_status_file(path, "{}\n");
    } catch (...) {
      return 2;
    }
    return 0;
  });
  if (rc < 0) fail_msg("write_status_file blocked on a FIFO planted at the temporary file's name");
  assert_int_equal(rc, 0);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  assert_string_equal(text.c_str(), "{}\n");
  struct stat sb;
  assert_int_equal(stat(path.c_str(), &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0644);
  std::string cmd = std::string("rm -rf ") + dir;
  assert_int_equal(std::system(cmd.c_str()), 0);
}

// What `topoaware show` and `metrics` must never wait on: a FIFO at the status file's path used to
// block the reader in open(), /dev/zero was read to the 64 MiB bound. Each is refused at once, and so
// is a (sparse) file above the bound, without reading it.
void test_reader_refuses_what_is_not_a_file(void **) {
  char dir[] = "/tmp/ta-status-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string fifo = std::string(dir) + "/fifo.json", big = std::string(dir) + "/big.json";
  assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
  assert_int_equal(truncate((std::ofstream(big), big).c_str(), off_t(kMaxStatusBytes) + 1), 0);
  const std::string not_file = ": not a regular file (a FIFO, device or folder is never read)";
  const std::pair<std::string, std::string> cases[] = {
      {fifo, fifo + not_file},
      {"/dev/zero", "/dev/zero" + not_file},
      {dir, dir + not_file},
      {big, big + ": larger than " + std::to_string(kMaxStatusBytes) + " bytes"},
      {std::string(dir) + "/none.json", std::string(dir) + "/none.json: cannot open: No such file or directory"},
  };
  for (const auto &[path, want] : cases) {
    const int rc = run_in_child([&, want = want, path = path] {
      try {
        load_status_file(path);
      } catch (const StatusError &e) {
        return std::string(e.what()) == want ? 0 : 2;
      }
      return 4;
    });
    if (rc != 0) fail_msg("load_status_file(%s): %s", path.c_str(), rc < 0 ? "blocked" : "not refused as expected");
  }
  std::string cmd = std::string("rm -rf ") + dir;
  assert_int_equal(std::system(cmd.c_str()), 0);
}

// The status file's folder is reached without a link and without a folder another user may change
// (defect: a user who could rename a component of the path made slurmctld replace a file of their
// choosing). Each case is refused with the component and the reason, and nothing is written.
void test_write_refuses_unsafe_folders(void **) {
  char dir[] = "/tmp/ta-status-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string base(dir);
  auto refused = [](const std::string &path, const char *why) {
    try {
      write_status_file(path, "{}\n");
    } catch (const StatusError &e) {
      if (!std::strstr(e.what(), why)) fail_msg("'%s' does not say '%s'", e.what(), why);
      return;
    }
    fail_msg("status file %s was written", path.c_str());
  };
  // A symbolic link on the way, to a folder that would itself be safe.
  assert_int_equal(mkdir((base + "/real").c_str(), 0755), 0);
  assert_int_equal(symlink((base + "/real").c_str(), (base + "/link").c_str()), 0);
  refused(base + "/link/status.json", "link: it is a symbolic link, never followed");
  // A folder any user may write to (not sticky) on the way, and as the last folder.
  assert_int_equal(mkdir((base + "/open").c_str(), 0755), 0);
  assert_int_equal(chmod((base + "/open").c_str(), 0777), 0);
  assert_int_equal(mkdir((base + "/open/sub").c_str(), 0755), 0);
  refused(base + "/open/sub/status.json", "open must be a folder owned by root or uid");
  refused(base + "/open/status.json", "writable only by its owner");
  // Sticky and writable by all is fine above the last folder (as /tmp), not as the last one.
  assert_int_equal(chmod((base + "/open").c_str(), 01777), 0);
  write_status_file(base + "/open/sub/status.json", "{}\n");
  refused(base + "/open/status.json", "writable only by its owner");
  // Owned by another user (only root can make one here).
  if (geteuid() == 0) {
    assert_int_equal(mkdir((base + "/theirs").c_str(), 0755), 0);
    assert_int_equal(chown((base + "/theirs").c_str(), 65534, 65534), 0);
    refused(base + "/theirs/status.json", "theirs must be a folder owned by root or uid 0");
  } else {
    print_message("not root: the case of a folder owned by another user is not checked\n");
  }
  refused("relative/status.json", "not an absolute path");
  refused(base + "/real/", "names a folder");
  struct stat sb;
  assert_int_not_equal(stat((base + "/real/status.json").c_str(), &sb), 0);
  std::string cmd = "rm -rf " + base;
  assert_int_equal(std::system(cmd.c_str()), 0);
}

// As the select plugin writes: render under its lock, write the text, mark a failed write.
int write_due(topoaware_status_t *st, const std::string &path, int64_t now, int force, char *err, size_t errlen) {
  char *text = nullptr;
  size_t len = 0;
  int r = topoaware_status_render(st, now, 1, force, &text, &len, err, errlen);
  if (r != 1) return r;
  r = topoaware_status_write_text(path.c_str(), text, len, err, errlen);
  topoaware_status_text_free(text);
  if (r != 0) topoaware_status_write_failed(st);
  return r == 0 ? 1 : -1;
}

void test_c_api_write(void **) {
  char dir[] = "/tmp/ta-status-XXXXXX";
  assert_non_null(mkdtemp(dir));
  std::string path = std::string(dir) + "/status.json";
  char err[256];
  topoaware_status_t *st = topoaware_status_create("select/cons_tres_topoaware");
  assert_non_null(st);
  topoaware_status_set_topology(st, "/x/topology.json", "sha256:1", nullptr);
  topoaware_status_job_t j{};
  j.job_id = 9;
  j.layout = "tp=8";
  j.mode = "prefer";
  j.gpus_per_node = 8;
  j.placement = "fallback";
  j.nodes = "n[1-2]";
  j.node_order = "n2,n1";
  assert_int_equal(topoaware_status_placed(st, &j, 50), 0);
  topoaware_call_counters_t c{1, 12, 12, 1, 12, 12, 0, nullptr, nullptr, nullptr};
  topoaware_status_set_counters(st, &c);
  assert_int_equal(write_due(st, path, 50, 0, err, sizeof err), 1);
  assert_int_equal(write_due(st, path, 50, 0, err, sizeof err), 0);  // not dirty
  Status s = load_status_file(path);
  assert_int_equal(s.jobs.size(), 1);
  assert_string_equal(s.jobs[0].node_order.c_str(), "n2,n1");
  assert_string_equal(s.jobs[0].reason.c_str(), "");
  assert_int_equal(s.counters.calls, 1);
  assert_int_equal(s.counters.layout_max_us, 12);
  // A folder that does not exist: an error with the path, and the book stays dirty.
  topoaware_status_finished(st, 9);
  std::string bad = std::string(dir) + "/missing/status.json";
  assert_int_equal(write_due(st, bad, 60, 0, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "missing/status.json"));
  assert_int_equal(write_due(st, path, 61, 0, err, sizeof err), 1);
  assert_int_equal(load_status_file(path).jobs.size(), 0);
  topoaware_status_free(st);
  std::remove(path.c_str());
  rmdir(dir);
}

// Backfill's will-run verdicts (hints) refresh an entry but do not replace a fresh run-now reason.
void test_waiting_hint(void **) {
  StatusBook b;
  b.waiting_hint(job(1, "backfill plans its start for T1"), 10);
  assert_string_equal(b.jobs().at(1).reason.c_str(), "backfill plans its start for T1");
  b.waiting_hint(job(1, "backfill plans its start for T2"), 11);  // a hint replaces a hint
  assert_string_equal(b.jobs().at(1).reason.c_str(), "backfill plans its start for T2");
  b.waiting(job(1, "no ideal block"), 12);
  assert_string_equal(b.jobs().at(1).reason.c_str(), "no ideal block");
  assert_int_equal(b.jobs().at(1).since, 10);
  b.render(12);
  b.written(12);
  b.waiting_hint(job(1, "backfill plans its start for T3"), 20);  // kept: run-now said more
  assert_string_equal(b.jobs().at(1).reason.c_str(), "no ideal block");
  assert_int_equal(b.jobs().at(1).updated, 20);
  assert_false(b.should_write(100, 1, false));  // refreshed, not changed
  b.waiting_hint(job(1, "backfill plans its start for T4"), 12 + kStatusWaitingTtl + 1);  // run-now reason stale
  assert_string_equal(b.jobs().at(1).reason.c_str(), "backfill plans its start for T4");
  assert_true(b.should_write(12 + kStatusWaitingTtl + 1, 1, false));
  // The file holds only the schema's fields.
  std::string text = b.render(12 + kStatusWaitingTtl + 1);
  assert_null(std::strstr(text.c_str(), "hint"));
  assert_null(std::strstr(text.c_str(), "reason_at"));
}

void test_set_counters(void **) {
  StatusBook b;
  b.render(1);
  b.written(1);
  CallCounters c;
  c.calls = 10;
  c.total_us = 100;
  c.max_us = 30;
  c.layout_calls = 2;
  c.layout_total_us = 50;
  c.layout_max_us = 30;
  b.set_counters(c);
  assert_false(b.should_write(5, 1, false));  // counters alone do not make a write due
  Status s = status_from_json(b.render(5), "x");
  assert_int_equal(s.counters.calls, 10);
  assert_int_equal(s.counters.layout_total_us, 50);
  assert_int_equal(s.counters.buckets, 0);  // no histogram given: none written, none read
  // With the call-time histogram: written and read back whole.
  c.buckets = 3;
  c.le_us[0] = 10, c.le_us[1] = 100, c.le_us[2] = 1000;
  const uint64_t counts[] = {4, 3, 2, 1}, layout[] = {0, 1, 1, 0};
  for (int i = 0; i < 4; ++i) c.counts[i] = counts[i], c.layout_counts[i] = layout[i];
  b.set_counters(c);
  b.waiting(job(5), 6);  // something to write
  const std::string text = b.render(7);
  s = status_from_json(text, "x");
  assert_int_equal(s.counters.buckets, 3);
  assert_int_equal(s.counters.le_us[2], 1000);
  assert_int_equal(s.counters.counts[3], 1);
  assert_int_equal(s.counters.layout_counts[1], 1);
  // A histogram that does not fit together is refused, naming what is wrong.
  auto refused = [&](const std::string &from, const std::string &to) {
    std::string t = text;
    const size_t at = t.find(from);
    assert_true(at != std::string::npos);
    t.replace(at, from.size(), to);
    bool threw = false;
    try {
      status_from_json(t, "x");
    } catch (const StatusError &e) {
      threw = std::string(e.what()).find("job_test") != std::string::npos;
    }
    assert_true(threw);
  };
  refused("\"counts\": [", "\"counts\": [9, ");          // one count too many
  refused("\"le_us\": [\n   10", "\"le_us\": [\n   100");  // bounds not increasing
}

// The split write the plugin's thread uses: render under the lock, write outside, retry on failure;
// the file's mode (0644 less the umask) and no writing through a symbolic link.
void test_c_api_render_write(void **) {
  char dir[] = "/tmp/ta-status-XXXXXX";
  assert_non_null(mkdtemp(dir));
  std::string path = std::string(dir) + "/status.json";
  char err[512];
  char *text = nullptr;
  size_t len = 0;
  topoaware_status_t *st = topoaware_status_create("select/cons_tres_topoaware");
  topoaware_status_job_t j{};
  j.job_id = 4;
  j.layout = "tp=8";
  j.mode = "strict";
  j.reason = "run-now reason";
  assert_int_equal(topoaware_status_job_phase(st, 4), -1);
  assert_int_equal(topoaware_status_waiting(st, &j, 100), 0);
  assert_int_equal(topoaware_status_job_phase(st, 4), 0);
  j.reason = "backfill reason";
  assert_int_equal(topoaware_status_waiting_hint(st, &j, 101), 0);
  topoaware_call_counters_t c{7, 70, 20, 3, 40, 20, 0, nullptr, nullptr, nullptr};
  topoaware_status_set_counters(st, &c);
  assert_int_equal(topoaware_status_render(st, 102, 2, 0, &text, &len, err, sizeof err), 1);
  assert_non_null(text);
  assert_int_equal(std::strlen(text), len);
  mode_t old = umask(022);
  assert_int_equal(topoaware_status_write_text(path.c_str(), text, len, err, sizeof err), 0);
  umask(old);
  topoaware_status_text_free(text);
  struct stat sb;
  assert_int_equal(stat(path.c_str(), &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0644);
  Status s = load_status_file(path);
  assert_int_equal(s.counters.calls, 7);
  assert_int_equal(s.counters.layout_calls, 3);
  assert_string_equal(s.jobs[0].reason.c_str(), "run-now reason");
  // Not due again within the interval, even after a change.
  j.reason = "another run-now reason";
  topoaware_status_waiting(st, &j, 103);
  assert_int_equal(topoaware_status_render(st, 103, 2, 0, &text, &len, err, sizeof err), 0);
  assert_null(text);
  // Due at 104; the write fails (its folder is a regular file, so no temporary file can be made
  // there, not even by root): retried later.
  assert_int_equal(topoaware_status_render(st, 104, 2, 0, &text, &len, err, sizeof err), 1);
  const std::string not_dir = std::string(dir) + "/plain-file";
  std::ofstream(not_dir) << "x";
  assert_int_equal(topoaware_status_write_text((not_dir + "/status.json").c_str(), text, len, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "plain-file: Not a directory"));
  unlink(not_dir.c_str());
  topoaware_status_text_free(text);
  topoaware_status_write_failed(st);
  assert_int_equal(topoaware_status_render(st, 105, 2, 0, &text, &len, err, sizeof err), 0);  // interval
  assert_int_equal(topoaware_status_render(st, 106, 2, 0, &text, &len, err, sizeof err), 1);  // retried
  assert_int_equal(topoaware_status_write_text(path.c_str(), text, len, err, sizeof err), 0);
  topoaware_status_text_free(text);
  assert_string_equal(load_status_file(path).jobs[0].reason.c_str(), "another run-now reason");
  // Forced (the last write at shutdown) even when nothing changed.
  assert_int_equal(topoaware_status_render(st, 106, 2, 1, &text, &len, err, sizeof err), 1);
  topoaware_status_text_free(text);
  // Waiting entries of jobs that are gone (cancelled while pending) are forgotten; placed ones stay.
  topoaware_status_job_t p{};
  p.job_id = 5;
  p.placement = "ideal";
  topoaware_status_placed(st, &p, 107);
  uint32_t next = 0;
  assert_int_equal(topoaware_status_forget_waiting(st, [](uint32_t, void *) { return 1; }, nullptr, &next, 100), 1);
  assert_int_equal(next, 0);  // walked to the end
  assert_int_equal(topoaware_status_job_phase(st, 4), -1);
  assert_int_equal(topoaware_status_job_phase(st, 5), 1);
  assert_int_equal(topoaware_status_forget_waiting(st, nullptr, nullptr, &next, 100), 0);
  assert_int_equal(topoaware_status_forget_waiting(st, [](uint32_t, void *) { return 1; }, nullptr, nullptr, 100), 0);
  // Bad arguments: errors, never a crash.
  assert_int_equal(topoaware_status_render(nullptr, 1, 1, 1, &text, &len, err, sizeof err), -1);
  assert_int_equal(topoaware_status_write_text("relative.json", "x", 1, err, sizeof err), -1);
  assert_int_equal(topoaware_status_write_text(nullptr, "x", 1, err, sizeof err), -1);
  assert_int_equal(topoaware_status_job_phase(nullptr, 1), -1);
  topoaware_status_set_counters(nullptr, &c);
  topoaware_status_write_failed(nullptr);
  topoaware_status_free(st);
  std::remove(path.c_str());
  rmdir(dir);
}

}  // namespace

// The writer's copy: what changed since the last take, handed over under the lock and applied to
// a copy outside it; a take is counted as written when a write is due.
void test_c_api_take_apply(void **) {
  char err[512];
  char *text = nullptr;
  size_t len = 0;
  topoaware_status_t *st = topoaware_status_create("select/cons_tres_topoaware");
  topoaware_status_t *copy = topoaware_status_create("select/cons_tres_topoaware");
  topoaware_status_changes_t *changes = nullptr;
  topoaware_status_job_t j{};
  j.job_id = 9;
  j.layout = "tp=8";
  j.mode = "strict";
  j.reason = "before the take";
  assert_int_equal(topoaware_status_waiting(st, &j, 200), 0);
  assert_int_equal(topoaware_status_take(st, 200, 1, 5, 0, 1, &changes, err, sizeof err), 1);
  assert_non_null(changes);
  assert_int_equal(topoaware_status_apply(copy, changes, err, sizeof err), 0);  // frees them
  // Counted as written: not due again within the interval, but the changes are handed over all
  // the same (so that they never pile up in the book).
  assert_int_equal(topoaware_status_take(st, 201, 1, 5, 0, 0, &changes, err, sizeof err), 0);
  assert_non_null(changes);
  topoaware_status_changes_free(changes);
  j.reason = "after the take";
  topoaware_status_waiting(st, &j, 201);
  topoaware_status_finished(st, 9);
  assert_int_equal(topoaware_status_job_phase(st, 9), -1);
  assert_int_equal(topoaware_status_job_phase(copy, 9), 0);  // the copy has only what it was given
  assert_int_equal(topoaware_status_render(copy, 200, 0, 1, &text, &len, err, sizeof err), 1);
  Status s = status_from_json(std::string(text, len), "copy");
  assert_int_equal(s.jobs.size(), 1);
  assert_string_equal(s.jobs[0].reason.c_str(), "before the take");
  assert_int_equal(s.written_at, 200);
  topoaware_status_text_free(text);
  // The change after the take makes the book due again once the interval passed; the copy follows.
  assert_int_equal(topoaware_status_take(st, 205, 1, 5, 0, 0, &changes, err, sizeof err), 1);
  assert_int_equal(topoaware_status_apply(copy, changes, err, sizeof err), 0);
  assert_int_equal(topoaware_status_job_phase(copy, 9), -1);
  // No file (write 0): never due, the changes still handed over.
  j.job_id = 10;
  topoaware_status_waiting(st, &j, 206);
  assert_int_equal(topoaware_status_take(st, 300, 0, 5, 1, 0, &changes, err, sizeof err), 0);
  assert_int_equal(topoaware_status_apply(copy, changes, err, sizeof err), 0);
  assert_int_equal(topoaware_status_job_phase(copy, 10), 0);
  // A new copy with full gets every entry, though nothing changed since the last take.
  topoaware_status_t *fresh = topoaware_status_create("select/cons_tres_topoaware");
  assert_int_equal(topoaware_status_take(st, 301, 0, 5, 0, 1, &changes, err, sizeof err), 0);
  assert_int_equal(topoaware_status_apply(fresh, changes, err, sizeof err), 0);
  assert_int_equal(topoaware_status_job_phase(fresh, 10), 0);
  topoaware_status_free(fresh);
  // Bad arguments: errors, never a crash; apply frees what it is given.
  assert_int_equal(topoaware_status_take(nullptr, 205, 1, 5, 1, 0, &changes, err, sizeof err), -1);
  assert_null(changes);
  assert_int_equal(topoaware_status_take(st, 205, 1, 5, 1, 0, nullptr, err, sizeof err), -1);
  assert_int_equal(topoaware_status_take(st, 302, 1, 5, 1, 0, &changes, err, sizeof err), 1);
  assert_int_equal(topoaware_status_apply(nullptr, changes, err, sizeof err), -1);
  assert_int_equal(topoaware_status_apply(copy, nullptr, err, sizeof err), -1);
  topoaware_status_changes_free(nullptr);
  topoaware_status_free(copy);
  topoaware_status_free(st);
}

// A take hands over only what changed since the last one, whatever the book holds: at the cap,
// one verdict is one change (the evicted entry is a second). This is what keeps the writer's work
// under the plugin's lock independent of the book's size.
void test_take_is_what_changed(void **) {
  StatusBook b, copy;
  for (uint32_t i = 1; i <= kMaxStatusJobs; ++i) b.waiting(job(i), 1 + i % 7);
  StatusChanges first = b.take(8, false);
  assert_true(first.full);  // the first take: every entry, as changed since the book was made
  assert_int_equal(first.jobs.size(), kMaxStatusJobs);
  copy.apply(std::move(first));
  b.waiting(job(3, "refreshed"), 9);
  StatusChanges one = b.take(9, false);
  assert_false(one.full);
  assert_int_equal(one.jobs.size(), 1);
  copy.apply(std::move(one));
  StatusJob p = job(kMaxStatusJobs + 1);
  b.placed(p, 10);  // full: the longest-unrefreshed waiting entry (7, updated at 1) goes
  assert_true(b.jobs().count(7) == 0);
  StatusChanges two = b.take(10, false);
  assert_int_equal(two.jobs.size(), 2);
  assert_false(two.jobs.at(7).has_value());
  assert_true(two.jobs.at(kMaxStatusJobs + 1)->phase == JobPhase::Placed);
  copy.apply(std::move(two));
  assert_string_equal(copy.render(10).c_str(), b.render(10).c_str());
  // Expired entries go through the index too: 600 s after, every waiting entry but the refreshed
  // one (updated at 9) is stale, and the take hands over their removal.
  StatusChanges expired = b.take(8 + kStatusWaitingTtl, false);
  assert_int_equal(b.jobs().size(), 2);  // job 3 (refreshed at 9) and the placed job
  copy.apply(std::move(expired));
  assert_string_equal(copy.render(9 + kStatusWaitingTtl).c_str(), b.render(9 + kStatusWaitingTtl).c_str());
}

// With nobody taking the changes (no writer), the book stops recording past kMaxStatusChanges
// instead of growing with every job id it ever saw; the next take hands over what it holds.
void test_untaken_changes_bounded(void **) {
  StatusBook b;
  for (uint32_t i = 1; i <= kMaxStatusChanges + 10; ++i) {
    b.waiting(job(i), 1);
    b.finished(i);
  }
  b.waiting(job(1), 2);
  StatusChanges c = b.take(2, false);
  assert_true(c.full);
  assert_int_equal(c.jobs.size(), 1);
  b.waiting(job(2), 3);
  StatusChanges d = b.take(3, false);  // recording again since that take
  assert_false(d.full);
  assert_int_equal(d.jobs.size(), 1);
}

// No status file: the writer stops the changes; the book keeps none, and the take after (a status
// file was set) hands over every entry, with what changed meanwhile.
void test_stop_changes(void **) {
  StatusBook b, copy;
  b.waiting(job(1), 1);
  copy.apply(b.take(1, false));
  b.stop_changes();
  b.waiting(job(2), 2);
  b.finished(1);
  StatusChanges c = b.take(2, false);
  assert_true(c.full);
  assert_int_equal(c.jobs.size(), 1);
  assert_true(c.jobs.count(2) == 1);
  copy.apply(std::move(c));
  assert_string_equal(copy.render(2).c_str(), b.render(2).c_str());
  topoaware_status_t *st = topoaware_status_create("select/cons_tres_topoaware");
  topoaware_status_stop_changes(st);
  topoaware_status_stop_changes(nullptr);
  topoaware_status_free(st);
}

// Whatever sequence of verdicts, ends, expiries and forgets, a copy kept up with the book's
// changes renders the same file as the book. A fixed seed: the same sequence every run.
void test_copy_follows_book(void **) {
  uint64_t state = 0x9e3779b97f4a7c15u;
  auto next = [&](uint32_t n) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return uint32_t(state % n);
  };
  StatusBook b, copy;
  int64_t now = 1;
  uint32_t cursor = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint32_t id = 1 + next(300);
    switch (next(8)) {
      case 0: case 1: b.waiting(job(id, next(2) ? "a" : "b"), now); break;
      case 2: b.waiting_hint(job(id, "hint"), now); break;
      case 3: {
        StatusJob p = job(id);
        p.placement = "ideal";
        p.node_order = "n" + std::to_string(id);
        b.placed(p, now);
        break;
      }
      case 4: b.finished(id); break;
      case 5: b.forget_waiting_if([&](uint32_t j) { return j % 5 == 0; }, cursor, 16); break;
      case 6: now += next(3) ? 1 : kStatusWaitingTtl / 3; break;
      default: {
        StatusChanges c = b.take(now, next(50) == 0);
        copy.apply(std::move(c));
        assert_string_equal(copy.render(now).c_str(), b.render(now).c_str());
      }
    }
  }
}

// The sweep of cancelled pending jobs goes in pieces of at most max_visits entries, placed ones
// counted, and ends with next 0.
void test_forget_in_pieces(void **) {
  StatusBook b;
  for (uint32_t i = 1; i <= 10; ++i) {
    StatusJob j = job(i);
    if (i % 2) {
      b.waiting(j, 1);
    } else {
      j.placement = "ideal";
      b.placed(j, 1);
    }
  }
  uint32_t next = 0;
  size_t went = 0;
  int pieces = 0;
  do {
    went += b.forget_waiting_if([](uint32_t) { return true; }, next, 3);
    ++pieces;
  } while (next != 0);
  assert_int_equal(pieces, 4);  // 3 + 3 + 3 + 1 entries
  assert_int_equal(went, 5);
  assert_int_equal(b.jobs().size(), 5);
  for (const auto &kv : b.jobs()) assert_true(kv.second.phase == JobPhase::Placed);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_waiting_keeps_since_and_throttles),
      cmocka_unit_test(test_stale_waiting_pruned_placed_kept),
      cmocka_unit_test(test_bounded),
      cmocka_unit_test(test_strict_reader),
      cmocka_unit_test(test_write_never_blocks_on_planted_names),
      cmocka_unit_test(test_reader_refuses_what_is_not_a_file),
      cmocka_unit_test(test_write_refuses_unsafe_folders),
      cmocka_unit_test(test_c_api_write),
      cmocka_unit_test(test_waiting_hint),
      cmocka_unit_test(test_set_counters),
      cmocka_unit_test(test_c_api_render_write),
      cmocka_unit_test(test_c_api_take_apply),
      cmocka_unit_test(test_take_is_what_changed),
      cmocka_unit_test(test_untaken_changes_bounded),
      cmocka_unit_test(test_stop_changes),
      cmocka_unit_test(test_copy_follows_book),
      cmocka_unit_test(test_forget_in_pieces),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
