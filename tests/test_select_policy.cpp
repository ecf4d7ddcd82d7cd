// SPDX-License-Identifier: GPL-2.0-or-later
// The select plugin's decision (corelib/select_policy.hpp) without a slurmctld: every run-now and
// will-run path (strict and prefer, the maximum wait, tries and time per call, MissingNodes=,
// preemption, engine errors) against a stand-in for cons_tres that accepts or refuses blocks,
// gives start times and counts what it was asked.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine_topologies.hpp"
#include "policies.hpp"
#include "select_policy.hpp"
#include "select_standin.hpp"
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

using standin::kNow;
using FakeConsTres = standin::ConsTres;

// 4 leaf groups x 4 hosts (n0001..n0016), node-table index = host index; "login1" (index 16) is a
// Slurm node missing from the topology when `with_missing`.
struct Cluster : standin::Cluster {
  explicit Cluster(bool with_missing = false)
      : standin::Cluster(enginetest::make_topology(0, 4, 4),
                         with_missing ? std::vector<std::string>{"login1"} : std::vector<std::string>{}) {}
};

// A job of `nodes` x 8 GPUs, tp=8 and the DP ring across the nodes (pp=1): ideal on one group.
Job ring_job(uint32_t nodes) {
  Job j;
  j.layout.tp = 8;
  j.layout.dp = nodes;
  j.nodes = nodes;
  j.gpus_per_node = 8;
  return j;
}

// Every node busy now (no GPU free), all 8 GPUs free once its jobs end.
struct Call : standin::Call {
  Call(Cluster &cl, uint32_t nodes, bool strict, bool will_run = false)
      : standin::Call(cl, ring_job(nodes), strict, 0, 8) {
    req.will_run = will_run;
  }
  void free_nodes(std::initializer_list<int> nodes) {
    for (int i : nodes) free_now[size_t(i)] = 8;
  }
  // Will-run with end times: node i is busy (no GPU free) until kNow + ends[i], and plain
  // cons_tres could use it from then on (exclusive jobs); the fake cons_tres, when given, agrees.
  void busy_until(const std::vector<int64_t> &ends, FakeConsTres *f = nullptr) {
    all_free_at.assign(c.n(), kNow);
    earliest_free_at.assign(c.n(), kNow);
    if (f) f->busy_until.assign(ends.size(), 0);
    for (size_t i = 0; i < ends.size(); ++i) {
      all_free_at[i] = earliest_free_at[i] = kNow + ends[i];
      free_now[i] = 0;
      if (f) f->busy_until[i] = kNow + ends[i];
    }
  }
  void free_range(int first, int count) {
    for (int i = first; i < first + count; ++i) free_now[size_t(i)] = 8;
  }
};

bool has_log(const SelectAnswer &a, int key, const std::string &part) {
  for (const SelectLog &l : a.logs)
    if (l.key == key && l.text.find(part) != std::string::npos) return true;
  return false;
}

bool overlap(const std::vector<int> &a, const std::vector<int> &b) {
  for (int x : a)
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  return false;
}

// ---------------------------------------------------------------- run-now

void test_run_now_ideal_first_block(void **) {
  Cluster c;
  Call call(c, 4, false);
  call.free_range(0, 16);
  FakeConsTres f;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_string_equal(a.placement, "ideal");
  assert_true(a.note.empty() && a.wait.empty());
  assert_int_equal(a.tries, 1);
  assert_int_equal(f.blocks.size(), 1);
  assert_int_equal(f.blocks[0].size(), 4);
  assert_true(f.plain_any.empty());  // plain cons_tres never asked
  // one leaf group: hosts 4g..4g+3
  const int g = f.blocks[0][0] / 4;
  for (int i : f.blocks[0]) assert_int_equal(i / 4, g);
}

void test_run_now_refused_block_is_not_offered_again(void **) {
  Cluster c;
  Call call(c, 4, false);
  call.free_range(0, 16);
  FakeConsTres f;
  f.refuse = {0, 1, 2, 3, 4, 5, 6, 7};  // cons_tres says no on groups 0 and 1 (memory, cores...)
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_string_equal(a.placement, "ideal");
  assert_int_equal(a.tries, 3);
  assert_false(overlap(f.blocks[0], f.blocks[1]));
  assert_false(overlap(f.blocks[1], f.blocks[2]));
  assert_true(f.plain_any.empty());
}

void test_run_now_max_tries_then_plain(void **) {
  Cluster c;
  Call call(c, 4, false);
  call.free_range(0, 16);
  call.set.max_tries = 2;
  FakeConsTres f;
  f.refuse = {0, 4, 8, 12};  // every group refused
  SelectAnswer a = call.run(f);
  assert_int_equal(f.blocks.size(), 2);
  assert_true(a.verdict == SelectVerdict::Plain);
  assert_string_equal(a.placement, "cons_tres");
  assert_string_equal(a.note.c_str(), "select/cons_tres refused the 2 blocks tried; plain select/cons_tres");
  assert_int_equal(f.plain_any.size(), 1);
  assert_false(f.plain_any[0]);
}

void test_run_now_max_time_stops_new_blocks(void **) {
  Cluster c;
  Call call(c, 4, false);
  call.free_range(0, 16);
  call.set.max_tries = 10;
  call.set.max_time_ms = 200;
  FakeConsTres f;
  f.refuse = {0, 4, 8, 12};
  f.ms_per_block = 150;  // 2 blocks fit in 200 ms (a new one starts at 150 < 200), not a third
  SelectAnswer a = call.run(f);
  assert_int_equal(f.blocks.size(), 2);
  assert_true(a.verdict == SelectVerdict::Plain);
  // the first block is always tried, however slow the clock
  Call call2(c, 4, false);
  call2.free_range(0, 16);
  call2.set.max_time_ms = 1;
  FakeConsTres g;
  g.refuse = {0, 4, 8, 12};
  g.ms_per_block = 1000;
  call2.run(g);
  assert_int_equal(g.blocks.size(), 1);
}

void test_run_now_prefer_fallback_block(void **) {
  Cluster c;
  Call call(c, 4, false);
  call.free_nodes({0, 1, 4, 5, 8, 9});  // two free per group: no ideal block
  FakeConsTres f;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_string_equal(a.placement, "fallback");
  assert_contains(a.note, "2 leaf groups, 1 split segments (block 1 tried)");
}

void test_run_now_strict_waits_with_deadline(void **) {
  Cluster c;
  Call call(c, 4, true);
  call.free_nodes({0, 1, 4, 5, 8, 9});
  FakeConsTres f;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Wait);
  assert_true(f.blocks.empty() && f.plain_any.empty());  // cons_tres is not asked at all
  assert_contains(a.wait,
                  "no block that keeps every DP ring/PP chain on its ideal leaves is free; strict: waits until ");
  assert_contains(a.wait, local_time_string(kNow + 600).c_str());
  assert_false(a.wait_hint);
  assert_true(has_log(a, kLogWaitBase + int(PlaceStatus::NoBlock),
                      " (strict, 4 nodes x 8 GPUs) waits: no block that keeps every DP ring/PP chain on its ideal "
                      "leaves is free; at most 600 s more, then best available"));
}

void test_run_now_strict_refused_blocks_wait(void **) {
  Cluster c;
  Call call(c, 4, true);
  call.free_range(0, 16);
  FakeConsTres f;
  f.refuse = {0, 4, 8, 12};
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Wait);
  assert_int_equal(a.tries, 4);
  assert_true(f.plain_any.empty());
  assert_contains(a.wait, "cons_tres refused every ideal block tried; strict: waits until");
}

void test_run_now_strict_past_deadline_is_prefer(void **) {
  Cluster c;
  Call call(c, 4, true);
  call.req.deadline = kNow;  // the maximum wait is over
  call.free_nodes({0, 1, 4, 5, 8, 9});
  FakeConsTres f;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_string_equal(a.placement, "fallback");
}

void test_run_now_strict_too_few_nodes(void **) {
  Cluster c;
  Call call(c, 4, true);
  call.free_nodes({0, 5, 10});
  FakeConsTres f;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Wait);
  assert_contains(a.wait, "not enough nodes with free GPUs; strict: waits until");
  assert_true(f.plain_any.empty());
  // ... unless it may preempt: then plain cons_tres (which may preempt), and it says so.
  Call pre(c, 4, true);
  pre.free_nodes({0, 5, 10});
  pre.req.may_preempt = true;
  FakeConsTres g;
  g.plain_preempts = 2;
  SelectAnswer b = pre.run(g);
  assert_true(b.verdict == SelectVerdict::Plain);
  assert_int_equal(g.plain_any.size(), 1);
  assert_true(has_log(b, kLogMayPreempt, "not enough free nodes, but it may preempt"));
  assert_true(has_log(b, kLogPreempts, "which preempts 2 job(s)"));
  // A free ideal block is taken without preempting, candidates or not.
  Call free(c, 4, true);
  free.free_range(0, 16);
  free.req.may_preempt = true;
  FakeConsTres h;
  SelectAnswer d = free.run(h);
  assert_true(d.verdict == SelectVerdict::Block);
  assert_true(h.plain_any.empty());
}

void test_run_now_prefer_plain_fails_waits(void **) {
  Cluster c;
  Call call(c, 4, false);
  call.free_nodes({0, 5, 10});
  FakeConsTres f;
  f.plain_ok = false;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Wait);
  assert_string_equal(a.wait.c_str(), "not enough nodes with free GPUs");
  // Slurm's normal "Resources": no info line without missing nodes
  for (const SelectLog &l : a.logs) assert_true(l.level == SelectLogLevel::Debug);
}

void test_missing_nodes_avoid_and_fallback(void **) {
  Cluster c(true);
  Call avoid(c, 4, false);
  avoid.free_nodes({0, 5, 10, 16});  // 3 topology nodes + login1 free
  FakeConsTres f;
  f.plain_ok = false;
  SelectAnswer a = avoid.run(f);
  assert_int_equal(f.plain_any.size(), 1);
  assert_false(f.plain_any[0]);  // the missing node is never used
  assert_true(a.verdict == SelectVerdict::Wait);
  assert_contains(a.wait, "in the topology (MissingNodes=avoid: the Slurm nodes not in it are not used)");
  assert_true(has_log(a, kLogWaitBase + int(PlaceStatus::NoNodes),
                      " (prefer, 4 nodes x 8 GPUs) waits: not enough nodes with free GPUs in the topology"));

  Call fb(c, 4, false);
  fb.free_nodes({0, 5, 10, 16});
  fb.set.missing = MissingNodes::Fallback;
  FakeConsTres g;
  SelectAnswer b = fb.run(g);
  assert_int_equal(g.plain_any.size(), 1);
  assert_true(g.plain_any[0]);
  assert_true(b.verdict == SelectVerdict::Plain);
  assert_contains(b.note, "MissingNodes=fallback: plain select/cons_tres on any node");
  assert_true(has_log(b, kLogMissingFallback, "MissingNodes=fallback"));

  // fallback, but the topology's own nodes can hold it: never any node
  Call fb2(c, 4, false);
  fb2.free_range(0, 16);
  fb2.set.missing = MissingNodes::Fallback;
  FakeConsTres h;
  h.refuse = {0, 4, 8, 12};
  fb2.run(h);
  assert_int_equal(h.plain_any.size(), 1);
  assert_false(h.plain_any[0]);
}

void test_engine_error_goes_plain(void **) {
  Cluster c;
  Call call(c, 3, true);  // 3 nodes x 8 GPUs but the layout's world is 8 x 4 = 32
  call.req.job.layout.dp = 4;
  call.free_range(0, 16);
  FakeConsTres f;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Plain);  // strict or not: an error never makes a job wait
  assert_string_equal(a.note.c_str(), "the placement failed (see the log); plain select/cons_tres");
  assert_true(has_log(a, kLogEngineError, ": placement failed: "));
  assert_true(f.blocks.empty());
  assert_false(f.plain_any[0]);
}

// ---------------------------------------------------------------- will-run

void test_will_run_block_free_now_ends_search(void **) {
  Cluster c;
  Call call(c, 4, false, true);
  call.free_range(4, 4);  // group 1 free now
  FakeConsTres f;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_int_equal(a.start, kNow);
  assert_int_equal(f.blocks.size(), 1);
  assert_int_equal(f.keeps, 1);
  assert_true(f.plain_any.empty());  // nothing starts earlier than now
  assert_true(a.wait.empty());
  for (int i : f.blocks[0]) assert_int_equal(i / 4, 1);
}

void test_will_run_earliest_future_block(void **) {
  Cluster c;
  Call call(c, 4, false, true);
  // nothing free now; groups end their jobs at +300, +100, +200, +400
  FakeConsTres f;
  f.busy_until.assign(16, 0);
  const int64_t ends[4] = {300, 100, 200, 400};
  for (int i = 0; i < 16; ++i) f.busy_until[size_t(i)] = kNow + ends[i / 4];
  f.plain_start = kNow + 500;
  SelectAnswer a = call.run(f);
  assert_true(f.blocks.size() <= kMaxWillRunTries);
  assert_true(a.verdict == SelectVerdict::Block);
  int64_t best = INT64_MAX;
  for (const auto &b : f.blocks) best = std::min(best, f.busy_until[size_t(b[0])]);
  assert_int_equal(a.start, best);
  assert_true(a.wait_hint);
  assert_contains(a.wait, "backfill plans its start for ");
  assert_contains(a.wait, " on an ideal block");
}

void test_will_run_prefer_takes_earlier_plain(void **) {
  Cluster c;
  Call call(c, 4, false, true);
  FakeConsTres f;
  f.busy_until.assign(16, kNow + 1000);
  f.plain_start = kNow + 50;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Plain);
  assert_int_equal(a.start, kNow + 50);
  assert_contains(a.wait, "on nodes chosen by select/cons_tres");
  // a tie goes to the block
  Call tie(c, 4, false, true);
  FakeConsTres g;
  g.busy_until.assign(16, kNow + 1000);
  g.plain_start = kNow + 1000;
  assert_true(tie.run(g).verdict == SelectVerdict::Block);
}

void test_will_run_strict_plain_not_before_deadline(void **) {
  Cluster c;
  Call call(c, 4, true, true);  // deadline now + 600
  FakeConsTres f;
  f.busy_until.assign(16, kNow + 700);
  f.plain_start = kNow + 50;  // plain could start earlier, but strict takes any nodes only at +600
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Plain);
  assert_int_equal(a.start, kNow + 600);
  assert_contains(a.wait, "on the best available once the maximum wait is over");
  Call blk(c, 4, true, true);
  FakeConsTres g;
  g.busy_until.assign(16, kNow + 500);
  g.plain_start = kNow + 50;
  SelectAnswer b = blk.run(g);
  assert_true(b.verdict == SelectVerdict::Block);  // +500 beats plain moved to +600
  assert_int_equal(b.start, kNow + 500);
}

void test_will_run_tries_capped(void **) {
  Cluster c;
  Call call(c, 4, false, true);
  call.set.max_tries = 64;
  FakeConsTres f;
  f.refuse = {0, 4, 8, 12};
  f.plain_ok = false;
  SelectAnswer a = call.run(f);
  assert_true(f.blocks.size() <= kMaxWillRunTries);
  assert_true(a.verdict == SelectVerdict::Wait);
  assert_string_equal(a.wait.c_str(), "backfill finds no start time for it");
  assert_true(a.wait_hint);
}

void test_will_run_missing_fallback_only_without_tries(void **) {
  Cluster c(true);
  Call call(c, 4, false, true);
  call.set.missing = MissingNodes::Fallback;
  call.free_all.assign(c.n(), 0);  // even with every job ended, too few topology nodes
  for (int i : {0, 5, 10, 16}) call.free_all[size_t(i)] = 8;
  FakeConsTres f;
  SelectAnswer a = call.run(f);
  assert_true(f.blocks.empty());
  assert_int_equal(f.plain_any.size(), 1);
  assert_true(f.plain_any[0]);
  assert_true(a.verdict == SelectVerdict::Plain);
}

// Will-run with the nodes' end times: the block of the earliest end, one cons_tres will-run.
std::vector<int64_t> group_ends(std::initializer_list<int64_t> per_group) {
  std::vector<int64_t> v;
  for (int64_t e : per_group)
    for (int k = 0; k < 4; ++k) v.push_back(e);
  return v;
}

void test_will_run_timed_earliest_end(void **) {
  Cluster c;
  Call call(c, 4, false, true);
  const std::vector<int64_t> ends = group_ends({300, 100, 200, 400});
  FakeConsTres f;
  call.busy_until(ends, &f);
  f.plain_start = kNow + 100;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_int_equal(a.start, kNow + 100);
  assert_int_equal(f.blocks.size(), 1);  // one cons_tres will-run in all
  for (int i : f.blocks[0]) assert_int_equal(i / 4, 1);
  assert_true(f.plain_any.empty());  // plain cannot start before +100: not asked
  assert_contains(a.wait, " on an ideal block");
}

void test_will_run_timed_bisection_strict(void **) {
  Cluster c;
  Call call(c, 4, true, true);  // strict: one whole group; deadline +600
  // enough nodes at +150 (0, 1, 4, 5), a whole group first at +300 (group 2)
  FakeConsTres f;
  call.busy_until({100, 100, 400, 400, 150, 150, 350, 350, 300, 300, 300, 300, 500, 500, 500, 500}, &f);
  f.plain_start = kNow + 150;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_int_equal(f.blocks.size(), 1);
  for (int i : f.blocks[0]) assert_int_equal(i / 4, 2);
  assert_int_equal(a.start, kNow + 300);
  assert_true(f.plain_any.empty());  // strict: plain's answer would move to +600
  assert_true(has_log(a, kLogAlways, "will-run future (+300 s) block: ideal"));
}

void test_will_run_timed_plain_asked_when_it_may_be_earlier(void **) {
  Cluster c;
  Call call(c, 4, false, true);
  const std::vector<int64_t> ends = group_ends({300, 100, 200, 400});
  FakeConsTres f;
  call.busy_until(ends, &f);
  // group 0 is shared: a job there ends at +50, so plain cons_tres might start the job then
  for (int i = 0; i < 4; ++i) call.earliest_free_at[size_t(i)] = kNow + 50;
  f.plain_start = kNow + 60;
  SelectAnswer a = call.run(f);
  assert_int_equal(f.blocks.size(), 1);
  assert_int_equal(f.plain_any.size(), 1);
  assert_true(a.verdict == SelectVerdict::Plain);
  assert_int_equal(a.start, kNow + 60);
  Call later(c, 4, false, true);
  FakeConsTres g;
  later.busy_until(ends, &g);
  for (int i = 0; i < 4; ++i) later.earliest_free_at[size_t(i)] = kNow + 50;
  g.plain_start = kNow + 300;
  SelectAnswer b = later.run(g);
  assert_true(b.verdict == SelectVerdict::Block);  // +100 beats plain's +300
  assert_int_equal(b.start, kNow + 100);
  // too few nodes with a known earliest time: no floor, plain asked
  Call unknown(c, 4, false, true);
  FakeConsTres h;
  unknown.busy_until(ends, &h);
  for (int i = 0; i < 13; ++i) unknown.earliest_free_at[size_t(i)] = INT64_MAX;
  h.plain_start = kNow + 100;
  unknown.run(h);
  assert_int_equal(h.plain_any.size(), 1);
}

void test_will_run_timed_refused_block_dropped(void **) {
  Cluster c;
  Call call(c, 4, false, true);
  const std::vector<int64_t> ends = group_ends({300, 100, 200, 400});
  FakeConsTres f;
  call.busy_until(ends, &f);
  f.refuse = {5};  // group 1 (free first) is refused: group 2 next, at +200
  f.plain_start = kNow + 1000;
  SelectAnswer a = call.run(f);
  assert_int_equal(f.blocks.size(), 2);
  assert_true(overlap(f.blocks[0], {4, 5, 6, 7}));
  for (int i : f.blocks[1]) assert_int_equal(i / 4, 2);
  assert_int_equal(f.plain_any.size(), 1);  // +200 is later than plain's floor (+100)
  assert_true(a.verdict == SelectVerdict::Block);
  assert_int_equal(a.start, kNow + 200);
}

void test_will_run_timed_preemption_asks_plain(void **) {
  Cluster c;
  Call call(c, 4, false, true);
  call.req.may_preempt = true;
  const std::vector<int64_t> ends = group_ends({300, 100, 200, 400});
  FakeConsTres f;
  call.busy_until(ends, &f);
  f.plain_start = kNow;  // preempting starts it now
  SelectAnswer a = call.run(f);
  assert_int_equal(f.plain_any.size(), 1);
  assert_true(a.verdict == SelectVerdict::Plain);
  assert_int_equal(a.start, kNow);
}

void test_will_run_timed_never_enough(void **) {
  Cluster c;
  Call call(c, 4, false, true);
  call.busy_until(group_ends({300, 100, 200, 400}));
  call.free_all.assign(c.n(), 0);  // only 3 nodes have GPUs at all
  for (int i : {0, 5, 10}) call.free_all[size_t(i)] = 8;
  FakeConsTres f;
  f.plain_ok = false;
  SelectAnswer a = call.run(f);
  assert_true(f.blocks.empty());
  assert_int_equal(f.plain_any.size(), 1);
  assert_true(a.verdict == SelectVerdict::Wait);
}

// Will-run with end times of a job of `nodes` nodes (strict or prefer): node i is busy until
// kNow + ends[i] except the `idle` ones, and plain cons_tres could start the job at +100. Checks
// the answer is one block at +100 (one cons_tres will-run) and gives it sorted in *block.
SelectAnswer plan_at_100(Cluster &c, uint32_t nodes, bool strict, const std::vector<int64_t> &ends,
                         std::initializer_list<int> idle, std::vector<int> *block) {
  Call call(c, nodes, strict, true);
  FakeConsTres f;
  call.busy_until(ends, &f);
  call.free_nodes(idle);
  f.plain_start = kNow + 100;
  SelectAnswer a = call.run(f);
  assert_true(a.verdict == SelectVerdict::Block);
  assert_int_equal(a.start, kNow + 100);
  assert_int_equal(f.blocks.size(), 1);
  *block = f.blocks[0];
  std::sort(block->begin(), block->end());
  return a;
}

// Backfill's plan holds its nodes from now on: at the same start, the plan takes nodes that are
// busy now and free by then, not nodes smaller jobs could start on now.
void test_will_run_plan_holds_busy_nodes_first(void **) {
  Cluster c;
  // group 0: two nodes free now, two free at +100; group 1: all four free at +100; the rest later
  const std::vector<int64_t> ends = {0, 0, 100, 100, 100, 100, 100, 100, 500, 500, 500, 500, 500, 500, 500, 500};
  std::vector<int> got;
  SelectAnswer a = plan_at_100(c, 4, false, ends, {0, 1}, &got);
  assert_true(got == (std::vector<int>{4, 5, 6, 7}));
  assert_true(has_log(a, kLogAlways, "will-run plan holds 0 nodes free now instead of 2 (ideal)"));
  assert_contains(a.wait, " on an ideal block");
  // strict: the same (an ideal block either way)
  plan_at_100(c, 4, true, ends, {0, 1}, &got);
  assert_true(got == (std::vector<int>{4, 5, 6, 7}));
}

// When the only ideal block at the earliest start holds nodes free now: prefer plans a fallback on
// busy nodes (run-now places the job when it starts), strict keeps the ideal block.
void test_will_run_plan_ideal_or_busy(void **) {
  Cluster c;
  const std::vector<int64_t> ends = {0, 0, 100, 100, 100, 100, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500};
  std::vector<int> got;
  SelectAnswer a = plan_at_100(c, 4, false, ends, {0, 1}, &got);
  assert_true(got == (std::vector<int>{2, 3, 4, 5}));
  assert_true(has_log(a, kLogAlways, "will-run plan holds 0 nodes free now instead of 2 (fallback)"));
  SelectAnswer b = plan_at_100(c, 4, true, ends, {0, 1}, &got);
  assert_true(got == (std::vector<int>{0, 1, 2, 3}));
  assert_false(has_log(b, kLogAlways, "will-run plan holds"));
}

// A plan on busy nodes that free up takes an ideal block with a few of their leaf groups' idle
// nodes over a fallback on busy nodes alone: the leaves it holds are whole at its start, so run-now
// can place the job ideally then. Both hold fewer idle nodes than the ideal block found, which
// takes the wholly idle leaf.
void test_will_run_plan_prefers_ideal_with_fewer_idle(void **) {
  Cluster c;
  // group 0 idle now; group 1: two idle, two free at +100; group 2: two free at +100, two at +500;
  // group 3 free at +100. Six idle nodes cannot hold the 8-node job now.
  const std::vector<int64_t> ends = {0, 0, 0, 0, 0, 0, 100, 100, 100, 100, 500, 500, 100, 100, 100, 100};
  std::vector<int> got;
  SelectAnswer a = plan_at_100(c, 8, false, ends, {0, 1, 2, 3, 4, 5}, &got);
  assert_true(got == (std::vector<int>{4, 5, 6, 7, 12, 13, 14, 15}));
  assert_true(has_log(a, kLogAlways, "will-run plan holds 2 nodes free now instead of 6 (ideal)"));
}

// A block that starts later is planned when Slurm's will-run would plan a job that fits then (the
// backend's block_start), never after plain cons_tres's own answer; a block that starts now, or a
// plain answer, is not asked about.
void test_will_run_block_start_as_slurm_reports(void **) {
  Cluster c;
  const std::vector<int64_t> ends = group_ends({300, 100, 200, 400});
  {
    Call call(c, 4, false, true);
    FakeConsTres f;
    call.busy_until(ends, &f);
    f.plain_start = kNow + 100;  // plain not asked: the block settles at its floor
    f.report_after = 25;
    SelectAnswer a = call.run(f);
    assert_true(a.verdict == SelectVerdict::Block);
    assert_int_equal(a.start, kNow + 125);
    assert_true(f.block_starts == (std::vector<int64_t>{kNow + 100}));
    assert_contains(a.wait, local_time_string(kNow + 125));
  }
  {
    Call call(c, 4, false, true);
    FakeConsTres f;
    call.busy_until(ends, &f);
    for (int i = 0; i < 4; ++i) call.earliest_free_at[size_t(i)] = kNow + 50;  // plain is asked
    f.plain_start = kNow + 110;
    f.report_after = 25;
    SelectAnswer a = call.run(f);
    assert_true(a.verdict == SelectVerdict::Block);
    assert_int_equal(a.start, kNow + 110);  // +125 capped at plain's own start
  }
  {
    Call call(c, 4, false, true);  // a block free now
    call.free_range(0, 16);
    FakeConsTres f;
    f.report_after = 25;
    SelectAnswer a = call.run(f);
    assert_true(a.verdict == SelectVerdict::Block);
    assert_int_equal(a.start, kNow);
    assert_true(f.block_starts.empty());
  }
}

// The plan is chosen at the start it will be planned at, not at the earliest end the block is
// found at: nodes busy now that free up by then take the place of nodes free now.
void test_will_run_plan_at_its_planned_start(void **) {
  Cluster c;
  // group 0: two nodes free now, two free at +100 (the earliest block, ideal); group 1 free at +120;
  // the rest at +500. Planned at +125 (Slurm's batch of job ends), group 1 holds no node free now.
  const std::vector<int64_t> ends = {0, 0, 100, 100, 120, 120, 120, 120, 500, 500, 500, 500, 500, 500, 500, 500};
  for (const int64_t round_to : {int64_t(0), int64_t(125)}) {
    Call call(c, 4, false, true);
    FakeConsTres f;
    call.busy_until(ends, &f);
    call.free_nodes({0, 1});
    f.plain_start = kNow + 125;
    f.round_to = round_to;
    SelectAnswer a = call.run(f);
    assert_true(a.verdict == SelectVerdict::Block);
    assert_int_equal(f.blocks.size(), 1);
    std::vector<int> got = f.blocks[0];
    std::sort(got.begin(), got.end());
    if (!round_to) {  // at +100: group 0, with its two idle nodes
      assert_true(got == (std::vector<int>{0, 1, 2, 3}));
      assert_int_equal(a.start, kNow + 100);
    } else {
      assert_true(got == (std::vector<int>{4, 5, 6, 7}));
      assert_int_equal(a.start, kNow + 125);
      assert_true(f.plain_any.empty());  // planned no later than plain could be: not asked
      assert_true(has_log(a, kLogAlways, "will-run plan holds 0 nodes free now instead of 2 (ideal)"));
    }
  }
}

void test_wait_reasons(void **) {
  SelectSettings s;
  assert_string_equal(select_wait_reason(PlaceStatus::NoBlock, false, true, s).c_str(),
                      "no block that keeps every DP ring/PP chain on its ideal leaves is free");
  assert_string_equal(select_wait_reason(PlaceStatus::NoNodes, false, false, s).c_str(),
                      "not enough nodes with free GPUs");
  s.missing_count = 2;
  assert_contains(select_wait_reason(PlaceStatus::NoNodes, false, false, s), "MissingNodes=avoid");
  s.missing = MissingNodes::Fallback;
  assert_string_equal(select_wait_reason(PlaceStatus::NoNodes, false, false, s).c_str(),
                      "not enough nodes with free GPUs");
  assert_string_equal(select_wait_reason(PlaceStatus::Ideal, false, true, s).c_str(),
                      "cons_tres refused every ideal block tried");
  assert_string_equal(select_wait_reason(PlaceStatus::NoNodes, true, false, s).c_str(),
                      "select/cons_tres finds no free resources for it now");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_run_now_ideal_first_block),
      cmocka_unit_test(test_run_now_refused_block_is_not_offered_again),
      cmocka_unit_test(test_run_now_max_tries_then_plain),
      cmocka_unit_test(test_run_now_max_time_stops_new_blocks),
      cmocka_unit_test(test_run_now_prefer_fallback_block),
      cmocka_unit_test(test_run_now_strict_waits_with_deadline),
      cmocka_unit_test(test_run_now_strict_refused_blocks_wait),
      cmocka_unit_test(test_run_now_strict_past_deadline_is_prefer),
      cmocka_unit_test(test_run_now_strict_too_few_nodes),
      cmocka_unit_test(test_run_now_prefer_plain_fails_waits),
      cmocka_unit_test(test_missing_nodes_avoid_and_fallback),
      cmocka_unit_test(test_engine_error_goes_plain),
      cmocka_unit_test(test_will_run_block_free_now_ends_search),
      cmocka_unit_test(test_will_run_earliest_future_block),
      cmocka_unit_test(test_will_run_prefer_takes_earlier_plain),
      cmocka_unit_test(test_will_run_strict_plain_not_before_deadline),
      cmocka_unit_test(test_will_run_tries_capped),
      cmocka_unit_test(test_will_run_missing_fallback_only_without_tries),
      cmocka_unit_test(test_will_run_timed_earliest_end),
      cmocka_unit_test(test_will_run_timed_bisection_strict),
      cmocka_unit_test(test_will_run_timed_plain_asked_when_it_may_be_earlier),
      cmocka_unit_test(test_will_run_timed_refused_block_dropped),
      cmocka_unit_test(test_will_run_timed_preemption_asks_plain),
      cmocka_unit_test(test_will_run_timed_never_enough),
      cmocka_unit_test(test_will_run_plan_holds_busy_nodes_first),
      cmocka_unit_test(test_will_run_plan_ideal_or_busy),
      cmocka_unit_test(test_will_run_plan_prefers_ideal_with_fewer_idle),
      cmocka_unit_test(test_will_run_block_start_as_slurm_reports),
      cmocka_unit_test(test_will_run_plan_at_its_planned_start),
      cmocka_unit_test(test_wait_reasons),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
