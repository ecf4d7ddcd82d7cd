// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware show: the JSON renderers (show.hpp), schema "topoaware-show/1".
#include <map>

#include <nlohmann/json.hpp>

#include "job_report.hpp"
#include "show.hpp"
#include "show_format.hpp"

namespace topoaware {

using namespace show_fmt;
using ojson = nlohmann::ordered_json;

namespace {

ojson layout_json(const Layout &l) {
  return {{"tp", l.tp}, {"cp", l.cp}, {"ep", l.ep},
          {"dp", l.dp}, {"pp", l.pp}, {"rank_order", rank_order_name(l.order)}};
}

ojson host_array(const Topology &t, const std::vector<int> &hosts) {
  ojson a = ojson::array();
  for (int h : hosts) a.push_back(t.hosts[size_t(h)].name);
  return a;
}

ojson job_json(const ShowModel &m, const ShowJob &j) {
  const Topology &t = *m.topo;
  const TopoIndex &ix = *m.index;
  ojson o;
  o["job_id"] = j.slurm.job_id;
  o["state"] = j.slurm.state;
  o["user"] = j.slurm.user;
  o["name"] = j.slurm.name;
  o["partition"] = j.slurm.partition;
  o["slurm_reason"] = j.slurm.reason;
  o["node_count"] = j.holds_nodes ? uint32_t(j.hosts.size() + j.outside.size()) : j.slurm.node_count;
  o["nodes"] = j.slurm.nodes;
  if (j.holds_nodes) {
    ojson lgs = ojson::array();
    std::map<int, uint32_t> pods;
    for (const auto &[g, n] : j.leaf_groups) {
      std::vector<int> hs;
      for (int h : j.hosts)
        if (ix.host_leaf_group(h) == g) hs.push_back(h);
      lgs.push_back({{"leaf_group", g}, {"pod", ix.leaf_group_pod(g)}, {"nodes", n}, {"hosts", host_names(t, hs)}});
      pods[ix.leaf_group_pod(g)] += n;
    }
    o["leaf_groups"] = lgs;
    ojson pa = ojson::array();
    for (const auto &[p, n] : pods) pa.push_back({{"pod", p}, {"nodes", n}});
    o["pods"] = pa;
    o["outside_topology"] = j.outside;
  }
  if (j.status) {
    const StatusJob &s = *j.status;
    o["status"] = {{"phase", s.phase == JobPhase::Placed ? "placed" : "waiting"},
                   {"layout", s.layout},
                   {"mode", s.mode},
                   {"gpus_per_node", s.gpus_per_node},
                   {"placement", s.placement},
                   {"nodes", s.nodes},
                   {"node_order", s.node_order},
                   {"reason", s.reason},
                   {"since", s.since},
                   {"updated", s.updated}};
  } else {
    o["status"] = nullptr;
  }
  o["layout"] = j.has_layout ? layout_json(j.layout) : ojson(nullptr);
  o["order_check"] = order_check_name(j.order_check);
  if (!j.order.empty()) o["node_order"] = host_array(t, j.order);
  if (j.order_check == OrderCheck::Mismatch) o["computed_order"] = host_array(t, j.computed);
  if (j.has_cost) {
    o["span"] = span_json(j.span);
    o["cost"] = cost_json(j.cost, m.cost.comm_fraction);
    o["slurm_order_cost"] = cost_json(j.slurm_order_cost, m.cost.comm_fraction);
  }
  o["notes"] = j.notes;
  return o;
}

ojson model_json(const ShowModel &m) {
  const Topology &t = *m.topo;
  const TopoIndex &ix = *m.index;
  ojson o;
  o["schema"] = kShowSchema;
  o["now"] = m.now;
  o["topology"] = {{"file", m.topology_file},  {"hash", t.hash},
                   {"hosts", ix.host_count()}, {"leaf_groups", ix.leaf_group_count()},
                   {"pods", ix.pod_count()},   {"rail_optimized", t.rail_optimized}};
  if (m.status) {
    const Status &s = *m.status;
    const CallCounters &c = s.counters;
    o["status"] = {{"file", m.status_file},
                   {"available", true},
                   {"plugin", s.plugin},
                   {"written_at", s.written_at},
                   {"topology_file", s.topology_file},
                   {"topology_hash", s.topology_hash},
                   {"topology_error", s.topology_error},
                   {"topology_matches", !m.hash_mismatch},
                   {"job_test", {{"calls", c.calls}, {"total_us", c.total_us}, {"max_us", c.max_us},
                                 {"layout_calls", c.layout_calls}, {"layout_total_us", c.layout_total_us},
                                 {"layout_max_us", c.layout_max_us}}}};
  } else {
    o["status"] = {{"file", m.status_file}, {"available", false}, {"problem", m.status_problem}};
  }
  o["nodes"] = {{"total", ix.host_count()}, {"free", m.free},           {"mixed", m.mixed},
                {"allocated", m.allocated}, {"planned", m.planned},     {"unavailable", m.unavailable},
                {"not_in_slurm", m.unknown}, {"largest_free_block", m.largest_free_block},
                {"largest_free_leaf_group", m.largest_free_group}};
  ojson pods = ojson::array();
  for (const ShowPod &p : m.pods)
    pods.push_back({{"pod", p.index},
                    {"nodes", p.hosts},
                    {"free", p.free},
                    {"largest_free_block", p.largest_free_block},
                    {"whole_free_leaf_groups", p.whole_free_groups}});
  o["pods"] = pods;
  ojson lgs = ojson::array();
  for (const ShowLeafGroup &lg : m.leaf_groups) {
    ojson hosts = ojson::array();
    for (int h : lg.hosts) {
      const ShowNode &n = m.nodes[size_t(h)];
      hosts.push_back({{"name", t.hosts[size_t(h)].name}, {"state", n.state}, {"use", node_use_name(n.use)},
                       {"jobs", n.jobs}, {"reason", n.reason}});
    }
    lgs.push_back({{"leaf_group", lg.index}, {"pod", lg.pod}, {"leaves", lg.leaves}, {"nodes", lg.hosts.size()},
                   {"free", lg.free}, {"mixed", lg.mixed}, {"allocated", lg.allocated}, {"planned", lg.planned},
                   {"unavailable", lg.unavailable}, {"not_in_slurm", lg.unknown},
                   {"free_nodes", host_names(t, lg.free_hosts)}, {"hosts", hosts}});
  }
  o["leaf_groups"] = lgs;
  ojson outside = ojson::array();
  for (const SlurmNode &n : m.outside) outside.push_back({{"name", n.name}, {"state", n.state}, {"reason", n.reason}});
  o["outside_topology"] = outside;
  ojson jobs = ojson::array(), waiting = ojson::array();
  for (const ShowJob &j : m.jobs) jobs.push_back(job_json(m, j));
  for (const ShowJob &j : m.waiting) waiting.push_back(job_json(m, j));
  o["jobs"] = jobs;
  o["waiting"] = waiting;
  o["status_only_jobs"] = m.status_only;
  o["notes"] = m.notes;
  return o;
}

}  // namespace

// Job names come from users: bytes that are not UTF-8 become U+FFFD rather than an exception.
std::string show_json(const ShowModel &m) {
  return model_json(m).dump(1, ' ', false, ojson::error_handler_t::replace) + "\n";
}

std::string show_job_json(const ShowModel &m, uint32_t id) {
  const ShowJob &j = job_or_throw(m, id);
  const Topology &t = *m.topo;
  const TopoIndex &ix = *m.index;
  ojson o = job_json(m, j);
  o["topology"] = {{"file", m.topology_file}, {"hash", t.hash}};
  o["topology_matches_status"] = !m.hash_mismatch;
  ojson rows = ojson::array();
  if (j.has_layout && !j.order.empty()) {
    for (const RankMapRow &r : rank_map(j))
      rows.push_back({{"node_rank", r.node_rank},
                      {"host", t.hosts[size_t(r.host)].name},
                      {"first_rank", r.first_rank},
                      {"last_rank", r.last_rank},
                      {"leaf", leaf_name(m, r.host)},
                      {"leaf_group", ix.host_leaf_group(r.host)},
                      {"pod", ix.host_pod(r.host)},
                      {"tp", r.tp},
                      {"cp", r.cp},
                      {"ep", r.ep},
                      {"dp", r.dp},
                      {"pp", r.pp}});
  }
  o["rank_map"] = rows;
  return o.dump(1, ' ', false, ojson::error_handler_t::replace) + "\n";
}

}  // namespace topoaware
