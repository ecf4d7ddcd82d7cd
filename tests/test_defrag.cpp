// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware defrag's plan (report/defrag.hpp) on a 4 leaves x 4 hosts fat tree (n0001..n0016:
// leaf 1 = n0001-n0004, ..., leaf 4 = n0013-n0016): a split job with an ideal leaf free now, one
// that needs another job moved first, waiting strict jobs held by fragmentation and the moves that
// free whole segments for them, who --apply may touch (opted in, requeueable, a signal), and the
// parsers of what the command reads from squeue (cli/defrag_parse.hpp). Also the status file's
// optional "migrate" entry and the --topo-migrate option of the core. The core's plan
// (corelib/defrag_plan.hpp) is also driven directly, without show's model, on a 3-level tree.
#include <cstring>
#include <string>
#include <vector>

#include "defrag.hpp"
#include "defrag_parse.hpp"
#include "defrag_plan.hpp"
#include "engine_topologies.hpp"
#include "generator.hpp"
#include "hostlist.hpp"
#include "layout_c.h"
#include "show.hpp"
#include "status.hpp"
#include "topology_json.hpp"
#include "fat16.hpp"
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

const char *kDp4 = "tp=8,cp=1,ep=1,dp=4,pp=1,rank-order=tp-cp-ep-dp-pp";  // 4 nodes, one ring
const char *kDp2 = "tp=8,cp=1,ep=1,dp=2,pp=1,rank-order=tp-cp-ep-dp-pp";  // 2 nodes

SlurmJob running(uint32_t id, const std::string &nodes) {
  SlurmJob j;
  j.job_id = id;
  j.state = "RUNNING";
  j.user = "alice";
  j.name = "train";
  j.partition = "gpu";
  j.nodes = nodes;
  j.node_count = uint32_t(hostlist_expand(nodes).size());
  return j;
}

SlurmJob pending(uint32_t id, uint32_t nodes) {
  SlurmJob j;
  j.job_id = id;
  j.state = "PENDING";
  j.user = "bob";
  j.name = "wait";
  j.node_count = nodes;
  j.reason = "Resources";
  return j;
}

StatusJob placed(uint32_t id, const std::string &nodes, const char *layout, bool migrate) {
  StatusJob s;
  s.job_id = id;
  s.phase = JobPhase::Placed;
  s.layout = layout;
  s.mode = "prefer";
  s.gpus_per_node = 8;
  s.placement = "fallback";
  s.nodes = nodes;
  std::string order;
  for (const std::string &n : hostlist_expand(nodes)) order += (order.empty() ? "" : ",") + n;
  s.node_order = order;
  s.since = 900;
  s.updated = 990;
  if (migrate) {
    s.migrate = true;
    s.signal = 10;  // USR1
    s.signal_time = 30;
    s.signal_batch = true;
    s.requeue = true;
  }
  return s;
}

StatusJob waiting(uint32_t id, const char *layout) {
  StatusJob s;
  s.job_id = id;
  s.phase = JobPhase::Waiting;
  s.layout = layout;
  s.mode = "strict";
  s.gpus_per_node = 8;
  s.reason = "no ideal block";
  s.since = 700;
  s.updated = 995;
  return s;
}

struct Case {
  Topology t = fat16();
  Status st;
  ShowInput in;
  Case(std::vector<StatusJob> status_jobs, std::vector<SlurmJob> jobs, const std::string &alloc) {
    st.plugin = "select/cons_tres_topoaware";
    st.topology_file = "/etc/slurm/topology.json";
    st.topology_hash = t.hash;
    st.written_at = 998;
    st.jobs = std::move(status_jobs);
    in.topology_file = "topology.json";
    in.status = &st;
    in.status_file = "/x/topoaware-status.json";
    in.jobs = std::move(jobs);
    const std::vector<std::string> a = hostlist_expand(alloc);
    for (const Host &h : t.hosts) {
      SlurmNode n;
      n.name = h.name;
      n.state = std::find(a.begin(), a.end(), h.name) != a.end() ? "allocated" : "idle";
      in.nodes.push_back(n);
    }
    in.now = 1000;
  }
  ShowModel model() const { return build_show(t, in); }
};

std::map<uint32_t, DefragJobTimes> times_for(std::initializer_list<uint32_t> ids) {
  std::map<uint32_t, DefragJobTimes> m;
  for (uint32_t id : ids) {
    DefragJobTimes t;
    t.time_left = 3600;
    t.run_time = 600;
    t.requeue = 1;
    m[id] = t;
  }
  return m;
}

std::string names(const ShowModel &m, std::vector<int> hosts) {
  std::vector<std::string> n;
  for (int h : hosts) n.push_back(m.topo->hosts[size_t(h)].name);
  std::sort(n.begin(), n.end());
  return hostlist_compress(n);
}

bool contains(const std::string &text, const std::string &part) {
  if (text.find(part) != std::string::npos) return true;
  print_error("missing \"%s\" in:\n%s\n", part.c_str(), text.c_str());
  return false;
}

// A job split 2 + 2 over leaves 1 and 2 while leaf 3 is free: one move, now, onto leaf 3.
void test_ideal_block_free_now(void **) {
  Case c({placed(21, "n[0001-0002,0005-0006]", kDp4, true)},
         {running(21, "n[0001-0002,0005-0006]"), running(30, "n[0013-0016]"), running(31, "n[0003-0004]"),
          running(32, "n[0007-0008]")},
         "n[0001-0008,0013-0016]");
  const ShowModel m = c.model();
  const DefragPlan p = plan_defrag(m, times_for({21}));
  assert_int_equal(p.above_ideal, 1);
  assert_int_equal(p.free_nodes, 4);
  assert_int_equal(p.relocations.size(), 1);
  const DefragRelocation &r = p.relocations[0];
  assert_int_equal(r.job_id, 21);
  assert_true(r.now());
  assert_true(r.applicable());
  const DefragMove &mv = r.steps[0];
  assert_string_equal(names(m, mv.to).c_str(), "n[0009-0012]");
  assert_true(mv.predicted == PlaceStatus::Ideal);
  assert_false(mv.span_now.ideal());
  assert_true(mv.span_after.ideal());
  assert_true(mv.slowdown_after < mv.slowdown_now);
  assert_true(mv.gain_seconds > 0 && mv.gain_seconds < 3600);
  assert_int_equal(mv.signal, 10);
  assert_int_equal(mv.signal_time, 30);
  assert_int_equal(mv.checkpoint_age, -1);  // never restarted: unknown
  assert_ptr_equal(defrag_next_move(p), &mv);
  const std::string text = defrag_text(m, p);
  assert_true(contains(text, "job 21: an ideal block is free now"));
  assert_true(contains(text, "move job 21: n[0001-0002,0005-0006] -> n[0009-0012]"));
  assert_true(contains(text, "--apply: yes"));
  const auto j = defrag_json(m, p);
  assert_string_equal(j["relocations"][0]["when"].get<std::string>().c_str(), "now");
  assert_string_equal(j["relocations"][0]["steps"][0]["to"].get<std::string>().c_str(), "n[0009-0012]");
}

// The same job without --topo-migrate: listed, never applicable; nor when Slurm may not requeue it
// or it has no signal.
void test_who_may_be_moved(void **) {
  Case c({placed(21, "n[0001-0002,0005-0006]", kDp4, false)},
         {running(21, "n[0001-0002,0005-0006]"), running(30, "n[0013-0016]"), running(31, "n[0003-0004]"),
          running(32, "n[0007-0008]")},
         "n[0001-0008,0013-0016]");
  {
    const ShowModel m = c.model();
    const DefragPlan p = plan_defrag(m, times_for({21}));
    assert_int_equal(p.relocations.size(), 1);
    assert_false(p.relocations[0].applicable());
    assert_string_equal(p.relocations[0].steps[0].refusal.c_str(), "not opted in (--topo-migrate)");
    assert_null(defrag_next_move(p));
    assert_true(contains(defrag_text(m, p), "--apply: no, not opted in (--topo-migrate)"));
  }
  c.st.jobs[0] = placed(21, "n[0001-0002,0005-0006]", kDp4, true);
  auto t = times_for({21});
  t[21].requeue = 0;
  {
    const DefragPlan p = plan_defrag(c.model(), t);
    assert_string_equal(p.relocations[0].steps[0].refusal.c_str(), "not requeueable");
  }
  t[21].requeue = 1;
  t[21].batch = false;
  assert_string_equal(plan_defrag(c.model(), t).relocations[0].steps[0].refusal.c_str(), "not a batch job");
  c.st.jobs[0].signal = 0;
  assert_string_equal(plan_defrag(c.model(), times_for({21})).relocations[0].steps[0].refusal.c_str(),
                      "no --signal to checkpoint on");
}

// Leaf 3 is half taken by a 2-node job: moving that one first into the hole of leaf 4 frees leaf 3.
void test_after_one_other_move(void **) {
  Case c({placed(21, "n[0001-0002,0005-0006]", kDp4, true), placed(22, "n[0009-0010]", kDp2, true)},
         {running(21, "n[0001-0002,0005-0006]"), running(22, "n[0009-0010]"), running(31, "n[0003-0004]"),
          running(32, "n[0007-0008]"), running(33, "n[0015-0016]")},
         "n[0001-0010,0015-0016]");
  const ShowModel m = c.model();
  const DefragPlan p = plan_defrag(m, times_for({21, 22}));
  assert_int_equal(p.relocations.size(), 1);
  const DefragRelocation &r = p.relocations[0];
  assert_int_equal(r.job_id, 21);
  assert_false(r.now());
  assert_int_equal(r.steps.size(), 2);
  assert_int_equal(r.steps[0].job_id, 22);
  assert_string_equal(names(m, r.steps[0].to).c_str(), "n[0013-0014]");
  assert_int_equal(r.steps[1].job_id, 21);
  assert_string_equal(names(m, r.steps[1].to).c_str(), "n[0009-0012]");
  assert_true(r.applicable());
  // --apply starts with the enabling move.
  assert_int_equal(defrag_next_move(p)->job_id, 22);
  assert_true(contains(defrag_text(m, p), "job 21: an ideal block after one other move"));
}

// A strict 4-node job waits with 2 + 2 free nodes: moving the 2-node job of leaf 4 lets it start on
// leaf 4, and that job restarts on leaf 3's two free nodes (no worse than now).
void test_waiting_held_by_fragmentation(void **) {
  Case c({placed(23, "n[0013-0014]", kDp2, true), waiting(40, kDp4)},
         {running(23, "n[0013-0014]"), running(31, "n[0001-0008]"), running(32, "n[0011-0012]"), pending(40, 4)},
         "n[0001-0008,0011-0014]");
  const ShowModel m = c.model();
  const DefragPlan p = plan_defrag(m, times_for({23}));
  assert_int_equal(p.relocations.size(), 0);
  assert_int_equal(p.waiting.size(), 1);
  const DefragWaiting &w = p.waiting[0];
  assert_int_equal(w.job_id, 40);
  assert_int_equal(w.nodes, 4);
  assert_int_equal(w.segment_nodes, 4);
  assert_int_equal(w.aligned_now, 0);
  assert_int_equal(w.moves.size(), 1);  // only job 23 frees whole segments
  const DefragFreeing &f = w.moves[0];
  assert_int_equal(f.move.job_id, 23);
  assert_true(f.starts_ideal);
  assert_int_equal(f.aligned_after, 4);
  assert_string_equal(names(m, f.move.to).c_str(), "n[0009-0010]");
  assert_true(f.move.migratable);
  assert_ptr_equal(defrag_next_move(p), &f.move);
  assert_true(contains(defrag_text(m, p), "the waiting job then starts on an ideal block"));
}

// The moved job would restart on a worse span: listed, not applicable.
void test_waiting_move_that_hurts(void **) {
  Case c({placed(23, "n[0013-0014]", kDp2, true), waiting(40, kDp4)},
         {running(23, "n[0013-0014]"), running(31, "n[0001-0003]"), running(32, "n[0005-0007]"),
          running(33, "n[0009-0011]"), pending(40, 4)},
         "n[0001-0003,0005-0007,0009-0011,0013-0014]");
  const DefragPlan p = plan_defrag(c.model(), times_for({23}));
  assert_int_equal(p.waiting.size(), 1);
  assert_int_equal(p.waiting[0].moves.size(), 1);
  const DefragFreeing &f = p.waiting[0].moves[0];
  assert_true(f.starts_ideal);
  assert_false(f.move.migratable);
  assert_string_equal(f.move.refusal.c_str(), "it would restart on a worse span than now");
  assert_null(defrag_next_move(p));
}

// A prefer job that is not large is not "held by fragmentation" (it runs on the best available).
void test_prefer_small_not_listed(void **) {
  StatusJob w = waiting(41, kDp2);
  w.mode = "prefer";
  Case c({w}, {running(31, "n[0001-0015]"), pending(41, 2)}, "n[0001-0015]");
  assert_int_equal(plan_defrag(c.model(), {}).waiting.size(), 0);
}

void test_parsers(void **) {
  assert_int_equal(parse_slurm_duration("5"), 5);
  assert_int_equal(parse_slurm_duration("0:05"), 5);
  assert_int_equal(parse_slurm_duration("10:05"), 605);
  assert_int_equal(parse_slurm_duration("1:02:03"), 3723);
  assert_int_equal(parse_slurm_duration("2-01:02:03"), 2 * 86400 + 3723);
  assert_int_equal(parse_slurm_duration("UNLIMITED"), -1);
  assert_int_equal(parse_slurm_duration("NOT_SET"), -1);
  assert_int_equal(parse_slurm_duration("INVALID"), -1);
  assert_int_equal(parse_slurm_duration("1-02:03"), -1);
  assert_int_equal(parse_slurm_duration("1:60"), -1);
  assert_int_equal(parse_slurm_duration(""), -1);
  size_t bad = 0;
  const auto t = parse_defrag_times(
      "21                      1       1       0       59:40                   0:20\n"
      "22                      0       0       3       UNLIMITED               1-00:00:01\n"
      "garbage line\n\n",
      &bad);
  assert_int_equal(bad, 1);
  assert_int_equal(t.size(), 2);
  assert_int_equal(t.at(21).time_left, 3580);
  assert_int_equal(t.at(21).run_time, 20);
  assert_int_equal(t.at(21).requeue, 1);
  assert_true(t.at(21).batch);
  assert_int_equal(t.at(22).time_left, -1);
  assert_int_equal(t.at(22).run_time, 86401);
  assert_int_equal(t.at(22).restarts, 3);
  assert_false(t.at(22).batch);
  DefragJobState st;
  assert_true(parse_defrag_job_state("21|RUNNING|n[0009-0012]\n", 21, st));
  assert_string_equal(st.state.c_str(), "RUNNING");
  assert_string_equal(st.nodes.c_str(), "n[0009-0012]");
  assert_true(parse_defrag_job_state("21|PENDING|\n", 21, st));
  assert_true(st.nodes.empty());
  assert_false(parse_defrag_job_state("22|RUNNING|n0001\n", 21, st));
  assert_false(parse_defrag_job_state("", 21, st));
}

// The status file's "migrate" entry: written only for jobs that opted in, read back, checked.
void test_status_migrate(void **) {
  Status s;
  s.plugin = "select/cons_tres_topoaware";
  s.written_at = 5;
  s.jobs = {placed(21, "n0001", "tp=8,cp=1,ep=1,dp=1,pp=1,rank-order=tp-cp-ep-dp-pp", true),
            placed(22, "n0002", "tp=8,cp=1,ep=1,dp=1,pp=1,rank-order=tp-cp-ep-dp-pp", false)};
  const std::string text = status_to_json(s);
  assert_true(contains(text, "\"migrate\""));
  const Status back = status_from_json(text, "test");
  assert_true(back.jobs[0].migrate);
  assert_int_equal(back.jobs[0].signal, 10);
  assert_int_equal(back.jobs[0].signal_time, 30);
  assert_true(back.jobs[0].signal_batch);
  assert_true(back.jobs[0].requeue);
  assert_false(back.jobs[1].migrate);
  std::string broken = text;
  const std::string key = "\"signal\": 10";
  assert_true(broken.find(key) != std::string::npos);
  broken.replace(broken.find(key), key.size(), "\"signal\": 99");
  bool threw = false;
  try {
    status_from_json(broken, "test");
  } catch (const StatusError &) {
    threw = true;
  }
  assert_true(threw);
}

// --topo-migrate: a flag (Slurm forwards it with no value, "" or "(null)"), needs a layout.
void test_option(void **) {
  topoaware_options_t o;
  char err[TOPOAWARE_ERR_LEN];
  topoaware_options_init(&o);
  assert_int_equal(topoaware_options_set(&o, "topo-migrate", nullptr, err, sizeof err), 0);
  assert_int_equal(o.migrate, 1);
  assert_int_equal(topoaware_options_set(&o, "topo-migrate", "(null)", err, sizeof err), 0);
  assert_int_equal(topoaware_options_set(&o, "topo-migrate", "no", err, sizeof err), 0);
  assert_int_equal(o.migrate, 0);
  assert_int_equal(topoaware_options_set(&o, "topo-migrate", "maybe", err, sizeof err), -1);
  assert_int_equal(topoaware_options_set(&o, "topo-migrate", "", err, sizeof err), 0);
  assert_int_equal(topoaware_options_check(&o, err, sizeof err), -1);
  assert_true(contains(err, "--topo-migrate"));
  assert_int_equal(topoaware_options_set(&o, "dp", "4", err, sizeof err), 0);
  assert_int_equal(topoaware_options_check(&o, err, sizeof err), 0);
}

// The core alone (corelib/defrag_plan.hpp), on a 3-level tree of 2 pods x 2 leaf groups x 4 hosts
// (hosts 0-3, 4-7 in pod 0; 8-11, 12-15 in pod 1): inputs built by hand, no Slurm words.
struct CoreCase {
  Topology t = enginetest::make_topology(2, 2, 4);
  TopoIndex ix{t};
  DefragInput in;
  CoreCase() { in.index = &ix; }
  void run(uint32_t id, std::vector<int> hosts, const char *layout, bool opted_in) {
    DefragRunning r;
    r.job_id = id;
    r.layout = parse_layout(layout);
    r.hosts = hosts;
    RankOrderer o(ix);
    o.order(hosts, r.layout, r.order);
    r.span = job_span(ix, r.order, r.layout);
    r.cost = job_cost(ix, r.order, r.layout, in.cost);
    r.opt.known = true;
    r.opt.migrate = opted_in;
    r.opt.requeue = true;
    r.opt.signal = opted_in ? 10 : 0;
    in.running.push_back(r);
  }
};

void test_core_plan(void **) {
  {
    // Job 1 (one ring of 4) split 2 + 2 over the two leaf groups of pod 0; pod 1's first group free.
    CoreCase c;
    c.in.free = {8, 9, 10, 11};
    c.run(1, {2, 3, 4, 5}, kDp4, true);
    c.run(2, {0, 1, 6, 7, 12, 13, 14, 15}, "tp=8,dp=8", false);  // the rest, not split beyond its ideal
    const DefragPlan p = plan_defrag(c.in);
    assert_int_equal(p.free_nodes, 4);
    assert_int_equal(p.above_ideal, 2);  // job 2: 8 nodes on 4 groups in 2 pods, ideal 2 groups in 1 pod
    // Job 1 goes to the free group now; so could job 2, to pod 1 whole (its own groups and the free
    // one): two alternatives, job 2 listed after since it did not opt in.
    assert_int_equal(p.relocations.size(), 2);
    const DefragMove &mv = p.relocations[0].steps[0];
    assert_int_equal(mv.job_id, 1);
    const DefragRelocation &r2 = p.relocations[1];
    assert_int_equal(r2.job_id, 2);
    assert_true(r2.now());
    assert_false(r2.applicable());
    assert_string_equal(r2.steps[0].refusal.c_str(), "not opted in (--topo-migrate)");
    std::vector<int> to2 = r2.steps[0].to;
    std::sort(to2.begin(), to2.end());
    assert_true((to2 == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
    assert_true(r2.steps[0].span_after.ideal());
    assert_true(p.relocations[0].now());
    assert_true(mv.predicted == PlaceStatus::Ideal);
    assert_true((mv.to == std::vector<int>{8, 9, 10, 11}));
    assert_true(mv.migratable);
    assert_ptr_equal(defrag_next_move(p), &mv);
    assert_true(p.waiting.empty());
  }
  {
    // A strict 4-node ring waits: 2 free nodes in group 0 and 2 in group 3, whose other 2 hold job
    // 3 (2 nodes, ideal); the other nodes hold jobs without a layout. Moving job 3 lets the ring take group 3 whole, and job 3 restarts on
    // group 0's 2 free nodes, no worse than now.
    CoreCase c;
    c.in.free = {2, 3, 12, 13};
    c.run(3, {14, 15}, kDp2, true);
    DefragPending w;
    w.job_id = 9;
    w.layout = parse_layout(kDp4);
    w.gpus_per_node = 8;
    w.mode = "strict";
    c.in.pending.push_back(w);
    const DefragPlan p = plan_defrag(c.in);
    assert_int_equal(p.waiting.size(), 1);
    const DefragWaiting &dw = p.waiting[0];
    assert_int_equal(dw.job_id, 9);
    assert_int_equal(dw.segment_nodes, 4);
    assert_int_equal(dw.aligned_now, 0);
    assert_true(!dw.moves.empty());
    const DefragFreeing &f = dw.moves[0];
    assert_int_equal(f.move.job_id, 3);
    assert_true(f.starts_ideal);
    assert_int_equal(f.aligned_after, 4);
    assert_true((f.move.to == std::vector<int>{2, 3}));
    assert_true(f.move.migratable);
    // The same job in prefer mode is still listed: it is large (a leaf group of nodes); a pending
    // job without GPUs per node is left out; one too large for the free nodes is held by capacity.
    c.in.pending[0].mode = "prefer";
    assert_int_equal(plan_defrag(c.in).waiting.size(), 1);
    assert_true(plan_defrag(c.in).waiting[0].large);
    c.in.pending[0].mode = "strict";
    c.in.pending[0].gpus_per_node = 0;
    assert_int_equal(plan_defrag(c.in).waiting.size(), 0);
    c.in.pending[0].gpus_per_node = 8;
    c.in.free = {2, 3, 12};
    assert_int_equal(plan_defrag(c.in).waiting.size(), 0);
  }
  {
    // A running job whose layout does not fit its nodes (tp=8 on 6 GPUs a node): a note, no throw.
    CoreCase c;
    c.in.free = {8, 9, 10, 11};
    DefragRunning r;
    r.job_id = 5;
    r.layout = parse_layout("tp=8,dp=3");
    r.hosts = r.order = {0, 1, 4, 5};
    r.span.segment_excess = 1;  // above ideal, so that it is planned
    c.in.running.push_back(r);
    const DefragPlan p = plan_defrag(c.in);
    assert_int_equal(p.notes.size(), 1);
    assert_true(contains(p.notes[0], "job 5: not planned: "));
    assert_true(p.relocations.empty());
  }
  // Who may be moved, from the job's own opt-in and the scheduler's times.
  DefragOptIn o;
  DefragJobTimes t;
  assert_string_equal(defrag_refusal(o, t).c_str(), "not opted in (--topo-migrate)");
  o.known = o.migrate = true;
  assert_string_equal(defrag_refusal(o, t).c_str(), "not requeueable");
  o.requeue = true;
  assert_string_equal(defrag_refusal(o, t).c_str(), "no --signal to checkpoint on");
  o.signal = 10;
  assert_string_equal(defrag_refusal(o, t).c_str(), "");
  t.requeue = 0;
  assert_string_equal(defrag_refusal(o, t).c_str(), "not requeueable");
  t.requeue = 1;
  t.batch = false;
  assert_string_equal(defrag_refusal(o, t).c_str(), "not a batch job");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ideal_block_free_now),
      cmocka_unit_test(test_who_may_be_moved),
      cmocka_unit_test(test_after_one_other_move),
      cmocka_unit_test(test_waiting_held_by_fragmentation),
      cmocka_unit_test(test_waiting_move_that_hurts),
      cmocka_unit_test(test_prefer_small_not_listed),
      cmocka_unit_test(test_parsers),
      cmocka_unit_test(test_status_migrate),
      cmocka_unit_test(test_option),
      cmocka_unit_test(test_core_plan),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
