// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware show's model and renderers (report/show.hpp) over generated fabrics (the generators and
// the classifier, as `topoaware generate` makes them) with hand-made status files and Slurm job
// and node lists: who holds which nodes of which leaf group, free blocks, waiting jobs and their
// reasons, the rank order check, costs equal to plan's (same engine, same order, same cost model),
// the rank map, a missing or foreign status file, nodes outside the topology; and job_span
// against the engine's own span.
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost.hpp"
#include "generator.hpp"
#include "hostlist.hpp"
#include "job_report.hpp"
#include "layout.hpp"
#include "placement.hpp"
#include "rank_order.hpp"
#include "show.hpp"
#include "status.hpp"
#include "topology.hpp"
#include "topology_json.hpp"
#include "nvlink.hpp"
#include "fat16.hpp"
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

// 3 levels: 2 pods x 4 leaves x 4 hosts.
Topology pods32() {
  FatTreeSpec s;
  s.levels = 3;
  s.leaves = 8;
  s.hosts_per_leaf = 4;
  s.uplinks_per_leaf = 4;
  s.spines = 2;
  s.leaves_per_pod = 4;
  s.cores = 2;
  s.core_uplinks_per_spine = 2;
  Fabric f = generate_fat_tree(s);
  f.finish();
  Topology t = classify(f, {});
  to_json(t);
  return t;
}

const char *kLayout = "tp=8,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp";

SlurmJob running(uint32_t id, const std::string &nodes, const char *name = "job") {
  SlurmJob j;
  j.job_id = id;
  j.state = "RUNNING";
  j.user = "alice";
  j.name = name;
  j.partition = "gpu";
  j.nodes = nodes;
  j.node_count = uint32_t(hostlist_expand(nodes).size());
  return j;
}

SlurmJob pending(uint32_t id, uint32_t nodes, const char *reason) {
  SlurmJob j;
  j.job_id = id;
  j.state = "PENDING";
  j.user = "bob";
  j.name = "wait";
  j.node_count = nodes;
  j.reason = reason;
  return j;
}

StatusJob placed(uint32_t id, const std::string &nodes, const std::string &order, const char *layout = kLayout) {
  StatusJob s;
  s.job_id = id;
  s.phase = JobPhase::Placed;
  s.layout = layout;
  s.mode = "prefer";
  s.gpus_per_node = 8;
  s.placement = "ideal";
  s.nodes = nodes;
  s.node_order = order;
  s.since = 900;
  s.updated = 990;
  return s;
}

StatusJob waiting(uint32_t id, const char *reason) {
  StatusJob s;
  s.job_id = id;
  s.phase = JobPhase::Waiting;
  s.layout = kLayout;
  s.mode = "strict";
  s.gpus_per_node = 8;
  s.reason = reason;
  s.since = 940;
  s.updated = 995;
  return s;
}

Status status_of(const Topology &t, std::vector<StatusJob> jobs) {
  Status s;
  s.plugin = "select/cons_tres_topoaware";
  s.topology_file = "/etc/slurm/topology.json";
  s.topology_hash = t.hash;
  s.written_at = 998;
  s.counters.calls = 10;
  s.counters.total_us = 500;
  s.counters.max_us = 90;
  s.jobs = std::move(jobs);
  return s;
}

// Every node of the topology in Slurm's state: `alloc` allocated, `down` down*, others idle.
std::vector<SlurmNode> nodes_of(const Topology &t, const std::string &alloc, const std::string &down = "") {
  std::vector<std::string> a = alloc.empty() ? std::vector<std::string>{} : hostlist_expand(alloc);
  std::vector<std::string> d = down.empty() ? std::vector<std::string>{} : hostlist_expand(down);
  std::vector<SlurmNode> out;
  for (const Host &h : t.hosts) {
    SlurmNode n;
    n.name = h.name;
    n.state = "idle";
    if (std::find(a.begin(), a.end(), h.name) != a.end()) n.state = "allocated";
    if (std::find(d.begin(), d.end(), h.name) != d.end()) n.state = "down*", n.reason = "Not responding";
    out.push_back(n);
  }
  // sinfo -N lists a node once per partition: duplicates must not count twice.
  out.push_back(out.front());
  return out;
}

ShowInput input(const Status *status, std::vector<SlurmJob> jobs, std::vector<SlurmNode> nodes) {
  ShowInput in;
  in.topology_file = "topology.json";
  in.status = status;
  in.status_file = status ? "/var/spool/slurmctld/topoaware-status.json" : "";
  in.status_problem = status ? "" : "/x/topoaware-status.json does not exist";
  in.jobs = std::move(jobs);
  in.nodes = std::move(nodes);
  in.now = 1000;
  return in;
}

bool contains(const std::string &text, const std::string &part) {
  if (text.find(part) != std::string::npos) return true;
  print_error("missing \"%s\" in:\n%s\n", part.c_str(), text.c_str());
  return false;
}

std::vector<std::string> names(const Topology &t, const std::vector<int> &hosts) {
  std::vector<std::string> n;
  for (int h : hosts) n.push_back(t.hosts[size_t(h)].name);
  return n;
}

std::string joined(const std::vector<std::string> &v) {
  std::string s;
  for (const auto &x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

void test_node_use(void **) {
  assert_true(node_use_of("idle") == NodeUse::Free);
  assert_true(node_use_of("mixed") == NodeUse::Mixed);
  assert_true(node_use_of("allocated") == NodeUse::Allocated);
  assert_true(node_use_of("completing") == NodeUse::Allocated);
  assert_true(node_use_of("planned") == NodeUse::Planned);
  assert_true(node_use_of("down*") == NodeUse::Unavailable);
  assert_true(node_use_of("idle*") == NodeUse::Unavailable);  // not responding
  assert_true(node_use_of("idle~") == NodeUse::Unavailable);  // powered off
  assert_true(node_use_of("drained") == NodeUse::Unavailable);
  assert_true(node_use_of("draining") == NodeUse::Unavailable);
  assert_true(node_use_of("IDLE+DRAIN") == NodeUse::Unavailable);
  assert_true(node_use_of("IDLE+PLANNED") == NodeUse::Planned);
  assert_true(node_use_of("idle-") == NodeUse::Planned);
  assert_true(node_use_of("ALLOCATED") == NodeUse::Allocated);
  assert_true(node_use_of("") == NodeUse::Unknown);
}

// With multi-node NVLink domains (4 of 4 hosts here), the text says how many are wholly free.
void test_nvlink_domains_line(void **) {
  Topology t = fat16();
  assert_true(show_text(build_show(t, input(nullptr, {}, nodes_of(t, "", "")))).find("NVLink") == std::string::npos);
  apply_nvlink_domains(t, synthetic_nvlink_domains(t, 4, 4), nullptr, nullptr);
  ShowModel m = build_show(t, input(nullptr, {running(3, "n[0002,0009]")}, nodes_of(t, "n[0002,0009]", "n0016")));
  assert_true(contains(show_text(m), "NVLink domains: 4, 1 wholly free; most free nodes in one domain: 4\n"));
}

// Who holds what, free nodes and free blocks per leaf group.
void test_leaf_groups_and_free_blocks(void **) {
  Topology t = fat16();
  Status st = status_of(t, {placed(12, "n[0002-0003,0006-0007]", "n0002,n0003,n0006,n0007")});
  std::vector<SlurmNode> nodes = nodes_of(t, "n[0001-0003,0006-0007]", "n0016");
  nodes[12].state = "planned";  // n0013: idle, held by backfill for a pending job: still free
  ShowModel m = build_show(t, input(&st, {running(11, "n0001", "busy"), running(12, "n[0002-0003,0006-0007]")}, nodes));
  assert_int_equal(m.jobs.size(), 2);
  assert_int_equal(m.planned, 1);
  assert_int_equal(m.waiting.size(), 0);
  assert_int_equal(m.free, 10);
  assert_int_equal(m.allocated, 5);
  assert_int_equal(m.unavailable, 1);
  assert_int_equal(m.unknown, 0);
  assert_int_equal(m.leaf_groups.size(), 4);
  assert_int_equal(m.leaf_groups[0].free, 1);
  assert_int_equal(m.leaf_groups[1].free, 2);
  assert_int_equal(m.leaf_groups[2].free, 4);
  assert_int_equal(m.leaf_groups[3].free, 3);
  assert_string_equal(host_names(t, m.leaf_groups[3].free_hosts).c_str(), "n[0013-0015]");
  assert_int_equal(m.largest_free_block, 4);
  assert_int_equal(m.largest_free_group, 2);
  assert_int_equal(m.pods.size(), 1);
  assert_int_equal(m.pods[0].free, 10);
  assert_int_equal(m.pods[0].whole_free_groups, 1);
  const ShowJob *j = m.find(12);
  assert_non_null(j);
  assert_int_equal(j->leaf_groups.size(), 2);
  assert_int_equal(j->leaf_groups[0].first, 0);
  assert_int_equal(j->leaf_groups[0].second, 2);
  assert_int_equal(j->leaf_groups[1].first, 1);
  assert_int_equal(j->leaf_groups[1].second, 2);
  const int h2 = m.index->find_host("n0002");
  assert_int_equal(m.nodes[size_t(h2)].jobs.size(), 1);
  assert_int_equal(m.nodes[size_t(h2)].jobs[0], 12);
  const std::string text = show_text(m);
  assert_true(contains(text, "Nodes: 10 free (1 planned by backfill for pending jobs), 0 mixed, 5 allocated, 1 "
                             "unavailable; largest free block 4 nodes (leaf group 2)"));
  assert_true(contains(text, "free, planned by backfill"));
  assert_true(contains(text, "Free blocks: 4 in leaf group 2 (n[0009-0012], whole); 3 in leaf group 3 (n[0013-0015])"));
  assert_true(contains(text, "job 12, ranks 0-15 (node ranks 0-1)"));
  assert_true(contains(text, "job 12, ranks 16-31 (node ranks 2-3)"));
  assert_true(contains(text, "down*"));
  assert_true(contains(text, "(Not responding)"));
}

// The engine's placement recorded in the status file: the order check passes and the cost and
// span are exactly plan's (same Placer, job_cost, PlaceQuality).
void test_cost_equals_plan(void **) {
  Topology t = fat16();
  TopoIndex ix(t);
  Layout l = parse_layout(kLayout);
  // Busy nodes leave 3, 3, 2, 0 free (tests/slurm_select_place.sh).
  std::vector<int> hosts;
  std::vector<uint32_t> gpus;
  for (const char *n : {"n0002", "n0003", "n0004", "n0006", "n0007", "n0008", "n0011", "n0012"})
    hosts.push_back(ix.find_host(n)), gpus.push_back(8);
  Placer placer(ix);
  Job job;
  job.nodes = 4;
  job.gpus_per_node = 8;
  job.layout = l;
  PlaceResult r;
  placer.place(hosts.data(), gpus.data(), hosts.size(), job, PlaceMode::Prefer, r);
  assert_true(r.status == PlaceStatus::Ideal);
  const std::string order = joined(names(t, r.nodes));
  std::vector<int> sorted = r.nodes;
  std::sort(sorted.begin(), sorted.end());
  const std::string list = host_names(t, sorted);
  Status st = status_of(t, {placed(7, list, order)});
  ShowModel m = build_show(t, input(&st, {running(7, list)}, nodes_of(t, list)));
  const ShowJob *j = m.find(7);
  assert_non_null(j);
  assert_true(j->order_check == OrderCheck::Match);
  assert_true(j->order == r.nodes);
  assert_true(j->has_cost);
  CostParams p;
  const JobCost c = job_cost(ix, r.nodes, l, p);
  assert_true(j->cost.ratio == c.ratio);
  assert_true(j->cost.hop_bytes == c.hop_bytes);
  assert_int_equal(j->cost.dp.at_ideal, c.dp.at_ideal);
  assert_int_equal(j->span.segments, r.quality.segments);
  assert_int_equal(j->span.split_segments, r.quality.split_segments);
  assert_int_equal(j->span.leaf_groups, r.quality.leaf_groups);
  assert_int_equal(j->span.pods, r.quality.pods);
  assert_int_equal(j->span.ideal_pods, r.quality.ideal_pods);
  assert_false(job_order_disagrees(m, 7));
  const std::string text = show_job_text(m, 7);
  assert_true(contains(text, "checked: the rank order of the node set over topology.json is the same"));
  assert_true(contains(text, cost_text("this rank order:", c, 0.3)));
}

// job_span over the engine's order equals the engine's own span, on fragmented free sets of a
// 3-level fabric, in both modes and for both rank orders.
void test_span_matches_engine(void **) {
  Topology t = pods32();
  TopoIndex ix(t);
  Placer placer(ix);
  unsigned seed = 7;
  auto rnd = [&]() { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff; };
  int checked = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<int> hosts;
    std::vector<uint32_t> gpus;
    for (int h = 0; h < ix.host_count(); ++h)
      if (rnd() % 3) hosts.push_back(h), gpus.push_back(8);
    Layout l;
    l.tp = 8;
    l.dp = 1u << (rnd() % 3);
    l.pp = 1u << (rnd() % 3);
    l.order = rnd() % 2 ? RankOrder::TpPpDp : RankOrder::TpCpEpDpPp;
    Job job;
    job.nodes = l.dp * l.pp;
    job.gpus_per_node = 8;
    job.layout = l;
    PlaceResult r;
    placer.place(hosts.data(), gpus.data(), hosts.size(), job, rnd() % 2 ? PlaceMode::Strict : PlaceMode::Prefer, r);
    if (r.nodes.empty()) continue;
    const PlaceQuality q = job_span(ix, r.nodes, l);
    assert_int_equal(q.segments, r.quality.segments);
    assert_int_equal(q.split_segments, r.quality.split_segments);
    assert_int_equal(q.segment_excess, r.quality.segment_excess);
    assert_int_equal(q.leaf_groups, r.quality.leaf_groups);
    assert_int_equal(q.pods, r.quality.pods);
    assert_int_equal(q.ideal_pods, r.quality.ideal_pods);
    assert_int_equal(q.ideal_leaf_groups, r.quality.ideal_leaf_groups);
    ++checked;
  }
  assert_true(checked > 100);
}

// A node order that is not the rank order of the node set: said loudly, the map follows the file.
void test_order_mismatch(void **) {
  Topology t = fat16();
  const char *list = "n[0002-0003,0006-0007]";
  Status st = status_of(t, {placed(12, list, "n0006,n0007,n0002,n0003")});
  ShowModel m = build_show(t, input(&st, {running(12, list)}, nodes_of(t, list)));
  const ShowJob *j = m.find(12);
  assert_true(j->order_check == OrderCheck::Mismatch);
  assert_string_equal(joined(names(t, j->order)).c_str(), "n0006,n0007,n0002,n0003");
  assert_string_equal(joined(names(t, j->computed)).c_str(), "n0002,n0003,n0006,n0007");
  assert_true(job_order_disagrees(m, 12));
  const std::string text = show_job_text(m, 12);
  assert_true(contains(text, "WARNING: the status file's node order differs"));
  assert_true(contains(text, "recomputed:  n0002,n0003,n0006,n0007"));
  const std::vector<RankMapRow> map = rank_map(*j);
  assert_int_equal(map.size(), 4);
  assert_string_equal(t.hosts[size_t(map[0].host)].name.c_str(), "n0006");
  auto js = nlohmann::json::parse(show_job_json(m, 12));
  assert_string_equal(js["order_check"].get<std::string>().c_str(), "mismatch");
  assert_string_equal(js["computed_order"][0].get<std::string>().c_str(), "n0002");
  assert_string_equal(js["rank_map"][0]["host"].get<std::string>().c_str(), "n0006");
  // A node order naming a host the topology does not have: the topology changed.
  Status st2 = status_of(t, {placed(12, list, "n0002,n0003,n0006,x9")});
  ShowModel m2 = build_show(t, input(&st2, {running(12, list)}, nodes_of(t, list)));
  assert_true(m2.find(12)->order_check == OrderCheck::Mismatch);
  assert_true(job_order_disagrees(m2, 12));
}

// The status file places the job elsewhere than Slurm says (an older file): Slurm's nodes win.
void test_status_nodes_differ(void **) {
  Topology t = fat16();
  Status st = status_of(t, {placed(12, "n[0001-0004]", "n0001,n0002,n0003,n0004")});
  const char *list = "n[0005-0008]";
  ShowModel m = build_show(t, input(&st, {running(12, list)}, nodes_of(t, list)));
  const ShowJob *j = m.find(12);
  assert_true(j->order_check == OrderCheck::Computed);
  assert_string_equal(host_names(t, j->order).c_str(), "n[0005-0008]");
  assert_int_equal(j->notes.size(), 1);
  assert_true(contains(j->notes[0], "the status file places it on n[0001-0004], Slurm lists n[0005-0008]"));
}

// Rank map coordinates: tp=4 on 8-GPU nodes puts two DP ranks on each node; tp-pp-dp order.
void test_rank_map(void **) {
  Topology t = fat16();
  const char *layout = "tp=4,cp=1,ep=2,dp=4,pp=2,rank-order=tp-pp-dp";
  const char *list = "n[0001-0004]";
  // The order the rank order function gives, recorded as the plugin would.
  TopoIndex ix(t);
  const std::vector<std::string> order = order_node_names(ix, hostlist_expand(list), parse_layout(layout));
  Status st = status_of(t, {placed(5, list, joined(order), layout)});
  ShowModel m = build_show(t, input(&st, {running(5, list)}, nodes_of(t, list)));
  const ShowJob *j = m.find(5);
  assert_true(j->order_check == OrderCheck::Match);
  assert_int_equal(j->gpus_per_node(), 8);
  const std::vector<RankMapRow> map = rank_map(*j);
  assert_int_equal(map.size(), 4);
  // rank = tp + 4*(pp + 2*dp): node 0 holds ranks 0-7: tp 0-3, pp 0-1, dp 0.
  assert_int_equal(map[0].first_rank, 0);
  assert_int_equal(map[0].last_rank, 7);
  assert_string_equal(map[0].tp.c_str(), "0-3");
  assert_string_equal(map[0].pp.c_str(), "0-1");
  assert_string_equal(map[0].dp.c_str(), "0");
  assert_string_equal(map[0].ep.c_str(), "0");
  assert_string_equal(map[1].dp.c_str(), "1");
  assert_string_equal(map[1].ep.c_str(), "1");  // ep = (cp + CP*dp) % EP
  assert_int_equal(map[3].first_rank, 24);
  assert_string_equal(map[3].dp.c_str(), "3");
  const std::string text = show_job_text(m, 5);
  assert_true(contains(text, "Layout: tp=4 cp=1 ep=2 dp=4 pp=2 (tp-pp-dp), 32 GPUs on 4 nodes x 8"));
  assert_true(contains(text, "NODE  RANKS  HOST   LEAF"));
}

// Waiting jobs: the plugin's reason beside Slurm's; jobs the plugin never judged.
void test_waiting(void **) {
  Topology t = fat16();
  Status st = status_of(t, {waiting(20, "no ideal block: 2 DP rings of 2 nodes need 2 leaves with 2 free")});
  ShowModel m = build_show(t, input(&st, {pending(20, 4, "Resources"), pending(21, 2, "Priority")}, nodes_of(t, "")));
  assert_int_equal(m.jobs.size(), 0);
  assert_int_equal(m.waiting.size(), 2);
  assert_true(m.waiting[0].status.has_value());
  assert_true(m.waiting[0].has_layout);
  assert_false(m.waiting[1].status.has_value());
  const std::string text = show_text(m);
  assert_true(contains(text, "Running jobs: none"));
  assert_true(
      contains(text, "20   PENDING  bob   wait  4      tp=8,pp=2,dp=2  strict  1m00s    Resources     no ideal block"));
  assert_true(contains(text, "(not tested by the plugin yet, or no layout)"));
  auto js = nlohmann::json::parse(show_json(m));
  assert_int_equal(js["waiting"].size(), 2);
  assert_string_equal(js["waiting"][0]["status"]["reason"].get<std::string>().c_str(),
                      "no ideal block: 2 DP rings of 2 nodes need 2 leaves with 2 free");
  assert_string_equal(js["waiting"][0]["slurm_reason"].get<std::string>().c_str(), "Resources");
  assert_true(js["waiting"][1]["status"].is_null());
  const std::string jt = show_job_text(m, 20);
  assert_true(contains(jt, "Holds no nodes; Slurm's reason: Resources; asks for 4 nodes"));
  assert_true(contains(jt, "Waiting for 1m00s"));
}

// No status file: the jobs and nodes are still shown, the layouts are said to be unknown.
void test_no_status(void **) {
  Topology t = fat16();
  const char *list = "n[0002-0003,0006-0007]";
  ShowModel m = build_show(t, input(nullptr, {running(12, list), pending(13, 4, "Resources")}, nodes_of(t, list)));
  assert_false(m.status.has_value());
  const ShowJob *j = m.find(12);
  assert_false(j->has_layout);
  assert_false(j->has_cost);
  assert_int_equal(j->leaf_groups.size(), 2);
  assert_int_equal(m.free, 12);
  const std::string text = show_text(m);
  assert_true(contains(text, "Status: not available: /x/topoaware-status.json does not exist"));
  assert_true(contains(text, "Layouts, rank orders, costs and waiting reasons are unknown"));
  assert_true(contains(text, "layouts unknown: /x/topoaware-status.json does not exist"));
  auto js = nlohmann::json::parse(show_json(m));
  assert_false(js["status"]["available"].get<bool>());
  assert_true(js["jobs"][0]["layout"].is_null());
  assert_true(contains(show_job_text(m, 12), "Layout: unknown (no status file"));
}

// A status file written with another topology: every layout job is suspect.
void test_hash_mismatch(void **) {
  Topology t = fat16();
  const char *list = "n[0002-0003,0006-0007]";
  Status st = status_of(t, {placed(12, list, "n0002,n0003,n0006,n0007")});
  st.topology_hash = "sha256:0000";
  ShowModel m = build_show(t, input(&st, {running(12, list)}, nodes_of(t, list)));
  assert_true(m.hash_mismatch);
  assert_true(m.find(12)->order_check == OrderCheck::Match);
  assert_true(job_order_disagrees(m, 12));
  assert_true(contains(show_text(m), "WARNING: the select plugin placed jobs with topology sha256:0000"));
  assert_true(contains(show_job_text(m, 12), "WARNING: the status file was written with topology sha256:0000"));
  auto js = nlohmann::json::parse(show_json(m));
  assert_false(js["status"]["topology_matches"].get<bool>());
}

// Slurm nodes that the topology does not have, jobs on them, status entries of ended jobs.
void test_outside_and_stale(void **) {
  Topology t = fat16();
  std::vector<SlurmNode> nodes = nodes_of(t, "n0001");
  nodes.push_back({"gpu17", "allocated", ""});
  Status st =
      status_of(t, {placed(30, "n0001,gpu17", "n0001,gpu17", "tp=8,cp=1,ep=1,dp=2,pp=1,rank-order=tp-cp-ep-dp-pp"),
                    waiting(31, "gone")});
  ShowModel m = build_show(t, input(&st, {running(30, "n0001,gpu17")}, nodes));
  assert_int_equal(m.outside.size(), 1);
  assert_string_equal(m.outside[0].name.c_str(), "gpu17");
  const ShowJob *j = m.find(30);
  assert_int_equal(j->outside.size(), 1);
  assert_true(j->order_check == OrderCheck::Failed);
  assert_false(j->has_cost);
  assert_int_equal(m.status_only.size(), 1);
  assert_int_equal(m.status_only[0], 31);
  const std::string text = show_text(m);
  assert_true(contains(text, "1 Slurm node(s) are not in the topology file (layout jobs never get them): gpu17"));
  assert_true(contains(text, "Not in the topology file:"));
  assert_true(contains(text, "the status file lists 1 job(s) Slurm no longer lists"));
  assert_true(contains(text, "0:1,?:1"));
}

// Pods and rails: leaf groups per pod, per-pod free capacity; rail groups' leaves.
void test_pods_and_rails(void **) {
  Topology t = pods32();
  ShowModel m = build_show(t, input(nullptr, {running(1, "n[0001-0006]")}, nodes_of(t, "n[0001-0006]")));
  assert_int_equal(m.pods.size(), 2);
  assert_int_equal(m.pods[0].free, 10);
  assert_int_equal(m.pods[1].free, 16);
  assert_int_equal(m.pods[0].whole_free_groups, 2);
  assert_int_equal(m.pods[1].whole_free_groups, 4);
  const std::string text = show_text(m);
  assert_true(contains(text, "Pod 0: 16 nodes, 10 free, largest free block 4, 2 leaf group(s) wholly free"));
  assert_true(contains(text, "Pod 1: 16 nodes, 16 free"));
  assert_true(contains(show_dot(m), "subgraph cluster_pod1"));

  RailSpec r;
  r.rails = 4;
  r.units = 2;
  r.hosts_per_unit = 4;
  r.spines_per_rail = 1;
  r.uplinks_per_leaf = 4;
  Fabric f = generate_rail(r);
  f.finish();
  Topology rt = classify(f, {});
  to_json(rt);
  ShowModel rm = build_show(rt, input(nullptr, {}, nodes_of(rt, "")));
  assert_int_equal(rm.leaf_groups.size(), 2);
  assert_int_equal(rm.leaf_groups[0].leaves.size(), 4);
  assert_true(contains(show_text(rm), "(one per rail)"));
}

// JSON and DOT: machine-readable fields, escaping, colours by job, the focused job's ranks.
void test_json_and_dot(void **) {
  Topology t = fat16();
  const char *list = "n[0002-0003,0006-0007]";
  Status st = status_of(t, {placed(12, list, "n0002,n0003,n0006,n0007")});
  ShowModel m = build_show(t, input(&st, {running(11, "n0001", "a<b>&\"c"), running(12, list)},
                                    nodes_of(t, "n[0001-0003,0006-0007]", "n0016")));
  auto js = nlohmann::json::parse(show_json(m));
  assert_string_equal(js["schema"].get<std::string>().c_str(), kShowSchema);
  assert_int_equal(js["nodes"]["free"].get<int>(), 10);
  assert_int_equal(js["leaf_groups"].size(), 4);
  assert_string_equal(js["leaf_groups"][0]["hosts"][1]["name"].get<std::string>().c_str(), "n0002");
  assert_int_equal(js["leaf_groups"][0]["hosts"][1]["jobs"][0].get<int>(), 12);
  assert_string_equal(js["leaf_groups"][3]["free_nodes"].get<std::string>().c_str(), "n[0013-0015]");
  assert_string_equal(js["jobs"][1]["order_check"].get<std::string>().c_str(), "match");
  assert_string_equal(js["jobs"][1]["leaf_groups"][1]["hosts"].get<std::string>().c_str(), "n[0006-0007]");
  assert_true(js["jobs"][1]["cost"]["ratio_to_ideal"].get<double>() >= 1.0);
  assert_string_equal(js["jobs"][0]["name"].get<std::string>().c_str(), "a<b>&\"c");
  auto jj = nlohmann::json::parse(show_job_json(m, 12));
  assert_int_equal(jj["rank_map"].size(), 4);
  assert_int_equal(jj["rank_map"][2]["first_rank"].get<int>(), 16);
  assert_string_equal(jj["rank_map"][2]["host"].get<std::string>().c_str(), "n0006");
  assert_string_equal(jj["rank_map"][2]["pp"].get<std::string>().c_str(), "1");
  const std::string d = show_dot(m);
  assert_true(contains(d, "graph show {"));
  assert_true(contains(d, "a&lt;b&gt;&amp;&quot;c"));
  assert_false(d.find("a<b>") != std::string::npos);
  assert_true(contains(d, "job 12"));
  const std::string fd = show_job_dot(m, 12);
  assert_true(contains(fd, "node 2: ranks 16-23"));
  assert_true(contains(fd, "lg0 -- lg1 [color="));
  bool threw = false;
  try {
    show_job_text(m, 99);
  } catch (const std::out_of_range &) {
    threw = true;
  }
  assert_true(threw);
}

// A status layout that does not parse, a Slurm node list that does not: notes, no crash.
void test_bad_inputs(void **) {
  Topology t = fat16();
  StatusJob bad = placed(12, "n0001", "n0001", "tp=abc");
  Status st = status_of(t, {bad});
  SlurmJob j = running(12, "n0001");
  SlurmJob k = running(13, "n0002");
  k.nodes = "n[0002";
  ShowModel m = build_show(t, input(&st, {j, k}, nodes_of(t, "n[0001-0002]")));
  assert_false(m.find(12)->has_layout);
  assert_false(m.find(12)->layout_error.empty());
  assert_true(contains(show_text(m), "job 12: the status file's layout \"tp=abc\""));
  assert_true(contains(show_text(m), "job 13: Slurm's node list \"n[0002\" does not parse"));
  // A layout that does not fit the node count: no cost, a note.
  Status st2 = status_of(t, {placed(14, "n[0001-0003]", "n0001,n0002,n0003")});
  ShowModel m2 = build_show(t, input(&st2, {running(14, "n[0001-0003]")}, nodes_of(t, "n[0001-0003]")));
  assert_true(m2.find(14)->order_check == OrderCheck::Failed);
  assert_false(m2.find(14)->has_cost);
}

// Congested cables from a monitor report: to a switch, to a host, and to a port the topology does
// not hold (a storage node: the report names neither end), which is drawn as its own "?" node.
void test_congested_cables(void **) {
  Topology t = fat16();
  ShowModel m = build_show(t, input(nullptr, {}, nodes_of(t, "")));
  m.congestion_file = "monitor.json";
  m.congestion_interval = 10;
  int leaf = -1, spine = -1;
  for (size_t i = 0; i < t.switches.size(); ++i) (t.switches[i].level == 1 ? leaf : spine) = int(i);
  HotCable up, down, away;
  up.sw = leaf, up.port = 17, up.peer_sw = spine, up.utilization = 0.9;
  down.sw = leaf, down.port = 1, down.peer_host = 0, down.utilization = 0.95;
  away.sw = spine, away.port = 30, away.utilization = 0.99;
  m.hot = {up, down, away};
  const std::string d = show_dot(m);
  assert_true(contains(d, "far0 [shape=plaintext"));
  assert_true(contains(d, " -- far0 [color="));
  assert_false(contains(d, "far1"));
  const std::string text = show_text(m);
  assert_true(contains(text, "Congested cables (monitor.json, over 10 s): 3"));
  assert_true(contains(text, "p30 -> ?: 99%"));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_node_use),        cmocka_unit_test(test_leaf_groups_and_free_blocks),
      cmocka_unit_test(test_nvlink_domains_line),
      cmocka_unit_test(test_cost_equals_plan), cmocka_unit_test(test_span_matches_engine),
      cmocka_unit_test(test_order_mismatch),  cmocka_unit_test(test_status_nodes_differ),
      cmocka_unit_test(test_rank_map),        cmocka_unit_test(test_waiting),
      cmocka_unit_test(test_no_status),       cmocka_unit_test(test_hash_mismatch),
      cmocka_unit_test(test_outside_and_stale), cmocka_unit_test(test_pods_and_rails),
      cmocka_unit_test(test_json_and_dot),    cmocka_unit_test(test_bad_inputs),
      cmocka_unit_test(test_congested_cables),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
