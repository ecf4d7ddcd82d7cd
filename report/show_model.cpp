// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware show: Slurm's jobs and nodes, the status file and the topology read into the model
// (show_model.hpp).
#include "show_model.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "hostlist.hpp"
#include "job_report.hpp"
#include "show_format.hpp"
#include "text.hpp"

namespace topoaware {

using namespace show_fmt;

const char *node_use_name(NodeUse u) {
  switch (u) {
    case NodeUse::Free: return "free";
    case NodeUse::Mixed: return "mixed";
    case NodeUse::Allocated: return "allocated";
    case NodeUse::Planned: return "planned";
    case NodeUse::Unavailable: return "unavailable";
    case NodeUse::Unknown: return "unknown";
  }
  return "?";
}

NodeUse node_use_of(const std::string &state) {
  // sinfo's %T: a long state name, then flags as one-character suffixes (* not responding,
  // ~ powered off, # powering up, % powering down, ! power down pending, $ maintenance,
  // @ reboot pending, ^ reboot issued, - planned). Flags that mean "cannot take a job now" make
  // the node unavailable whatever the base state.
  std::string base;
  bool planned_flag = false;
  for (char c : state) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '+')
      base += char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    else if (c == '*' || c == '~' || c == '#' || c == '%' || c == '!' || c == '$' || c == '@' || c == '^')
      return NodeUse::Unavailable;
    else if (c == '-')
      planned_flag = true;
  }
  if (planned_flag && base == "idle") return NodeUse::Planned;
  // scontrol-style compound states ("idle+drain") also reach here through the same rules.
  if (base.find('+') != std::string::npos) {
    const std::string first = base.substr(0, base.find('+'));
    const std::string flags = base.substr(base.find('+'));
    if (flags.find("drain") != std::string::npos || flags.find("fail") != std::string::npos ||
        flags.find("maint") != std::string::npos || flags.find("power") != std::string::npos ||
        flags.find("reserved") != std::string::npos || flags.find("not_responding") != std::string::npos)
      return NodeUse::Unavailable;
    if (flags.find("planned") != std::string::npos && first == "idle") return NodeUse::Planned;
    base = first;
  }
  if (base == "idle") return NodeUse::Free;
  if (base == "mixed") return NodeUse::Mixed;
  if (base == "allocated" || base == "alloc" || base == "completing" || base == "comp") return NodeUse::Allocated;
  if (base == "planned") return NodeUse::Planned;
  if (base.empty() || base == "unknown") return NodeUse::Unknown;
  return NodeUse::Unavailable;  // down, drained, draining, fail, failing, future, inval, maint, ...
}

const char *order_check_name(OrderCheck c) {
  switch (c) {
    case OrderCheck::NotApplicable: return "none";
    case OrderCheck::Match: return "match";
    case OrderCheck::Mismatch: return "mismatch";
    case OrderCheck::Computed: return "computed";
    case OrderCheck::Failed: return "failed";
  }
  return "?";
}

const ShowJob *ShowModel::find(uint32_t id) const {
  for (const auto *list : {&jobs, &waiting})
    for (const ShowJob &j : *list)
      if (j.slurm.job_id == id) return &j;
  return nullptr;
}

namespace {

// The nodes Slurm says the job holds: in the topology (by index) or outside it, and per leaf group.
void job_nodes(const ShowModel &m, ShowJob &j) {
  const TopoIndex &ix = *m.index;
  std::vector<std::string> names;
  if (!j.slurm.nodes.empty() && j.slurm.nodes != "(null)") {
    try {
      names = hostlist_expand(j.slurm.nodes);
    } catch (const std::invalid_argument &e) {
      j.notes.push_back("Slurm's node list \"" + j.slurm.nodes + "\" does not parse: " + e.what());
    }
  }
  std::set<std::string> seen;
  for (const std::string &n : names) {
    if (!seen.insert(n).second) continue;
    const int h = ix.find_host(n);
    if (h < 0) j.outside.push_back(n);
    else j.hosts.push_back(h);
  }
  std::sort(j.hosts.begin(), j.hosts.end());
  j.holds_nodes = !j.hosts.empty() || !j.outside.empty();
  if (!j.outside.empty())
    j.notes.push_back(fmt::format("{} of its nodes are not in the topology file: {}", j.outside.size(),
                                  hostlist_compress(j.outside)));
  std::map<int, uint32_t> per_lg;
  for (int h : j.hosts) ++per_lg[ix.host_leaf_group(h)];
  j.leaf_groups.assign(per_lg.begin(), per_lg.end());
}

// The status file's node order against the one computed: the order the job's tasks got is the
// recorded one when it names the same nodes, and it matches or not.
void check_recorded_order(const ShowModel &m, ShowJob &j, const StatusJob &st) {
  const TopoIndex &ix = *m.index;
  const Topology &t = *m.topo;
  std::vector<int> recorded;
  std::vector<std::string> unknown;
  for (const std::string &n : split(st.node_order, ',')) {
    if (n.empty()) continue;
    const int h = ix.find_host(n);
    if (h < 0) unknown.push_back(n);
    else recorded.push_back(h);
  }
  std::vector<int> a = recorded, b = j.hosts;
  std::sort(a.begin(), a.end());
  if (!unknown.empty()) {
    j.order_check = OrderCheck::Mismatch;
    j.notes.push_back(fmt::format("the status file's node order names {} node(s) that are not in the topology "
                                  "file ({}): the topology file has changed since the job was placed",
                                  unknown.size(), hostlist_compress(unknown)));
  } else if (a != b) {
    j.notes.push_back(fmt::format("the status file places it on {}, Slurm lists {}: using Slurm's nodes and "
                                  "their rank order",
                                  host_names(t, recorded), host_names(t, j.hosts)));
  } else if (recorded == j.computed) {
    j.order = recorded;
    j.order_check = OrderCheck::Match;
  } else {
    j.order = recorded;
    j.order_check = OrderCheck::Mismatch;
    j.notes.push_back("the status file's node order differs from the rank order of the job's node set over " +
                      m.topology_file +
                      ": the topology file may have changed since the job was placed (its tasks got the "
                      "order spank_topoaware computed at launch from the topology file on the nodes)");
  }
}

// The job's cost and span over its rank order, and the cost of Slurm's order of the same nodes.
void job_costs(const ShowModel &m, ShowJob &j) {
  const TopoIndex &ix = *m.index;
  try {
    j.cost = job_cost(ix, j.order, j.layout, m.cost);
    j.span = job_span(ix, j.order, j.layout);
    j.slurm_order_cost = job_cost(ix, j.hosts, j.layout, m.cost);  // node-index order
    j.has_cost = true;
  } catch (const LayoutError &e) {
    j.notes.push_back(std::string("no cost: ") + e.what());
  }
}

void fill_job(ShowModel &m, ShowJob &j, const std::map<uint32_t, const StatusJob *> &by_id) {
  job_nodes(m, j);
  auto it = by_id.find(j.slurm.job_id);
  if (it == by_id.end()) return;
  const StatusJob &st = *it->second;
  j.status = st;
  try {
    j.layout = parse_layout(st.layout);
    validate_layout(j.layout);
    j.has_layout = true;
  } catch (const LayoutError &e) {
    j.layout_error = e.what();
    j.notes.push_back("the status file's layout \"" + st.layout + "\" does not parse: " + e.what());
    return;
  }
  if (!j.holds_nodes) {
    if (st.phase == JobPhase::Placed)
      j.notes.push_back(fmt::format("the status file lists it as placed on {} ({} ago) but Slurm lists it {} "
                                    "without nodes (requeued, or the status file is older than that)",
                                    st.nodes, age(m.now - st.since), j.slurm.state));
    return;
  }
  if (st.phase == JobPhase::Waiting)
    j.notes.push_back(fmt::format("the status file still lists it as waiting (file written {} ago): the order "
                                  "below is the rank order of its node set",
                                  age(m.now - (m.status ? m.status->written_at : m.now))));
  if (!j.outside.empty()) {
    j.order_check = OrderCheck::Failed;
    j.notes.push_back("no rank order: nodes outside the topology file");
    return;
  }
  // The rank order of the node set: what spank_topoaware computes in every task.
  try {
    RankOrderer ro(*m.index);
    ro.order(j.hosts, j.layout, j.computed);
  } catch (const LayoutError &e) {
    j.order_check = OrderCheck::Failed;
    j.notes.push_back(std::string("the rank order of its nodes cannot be computed: ") + e.what());
    return;
  }
  j.order = j.computed;
  j.order_check = OrderCheck::Computed;
  if (st.phase == JobPhase::Placed && !st.node_order.empty()) check_recorded_order(m, j, st);
  job_costs(m, j);
}

// Slurm's nodes onto the topology's hosts (sinfo -N lists a node once per partition: the first
// line wins); nodes the topology lacks go to `outside`.
void read_nodes(ShowModel &m, const ShowInput &in) {
  std::set<std::string> seen_nodes;
  for (const SlurmNode &n : in.nodes) {
    if (n.name.empty() || !seen_nodes.insert(n.name).second) continue;
    const int h = m.index->find_host(n.name);
    if (h < 0) {
      m.outside.push_back(n);
      continue;
    }
    m.nodes[size_t(h)].state = n.state;
    m.nodes[size_t(h)].reason = n.reason;
    m.nodes[size_t(h)].use = node_use_of(n.state);
  }
}

// The status file: its jobs by id, and notes on the topology the select plugin placed them with.
std::map<uint32_t, const StatusJob *> read_status(ShowModel &m, const ShowInput &in) {
  std::map<uint32_t, const StatusJob *> by_id;
  if (!in.status) {
    m.notes.push_back("layouts unknown: " +
                      (in.status_problem.empty() ? std::string("no status file") : in.status_problem));
    return by_id;
  }
  m.status = *in.status;
  for (const StatusJob &s : m.status->jobs) by_id[s.job_id] = &s;
  const Status &s = *m.status;
  if (!s.topology_error.empty())
    m.notes.push_back("the select plugin reports a topology problem: " + s.topology_error);
  if (s.topology_hash.empty()) {
    m.notes.push_back("the select plugin has no topology loaded: layout jobs are placed by plain cons_tres");
  } else if (!m.topo->placement_hash.empty() && s.topology_hash != m.topo->placement_hash) {
    m.hash_mismatch = true;
    m.notes.push_back("WARNING: the select plugin placed jobs with topology " + short_hash(s.topology_hash) +
                      (s.topology_file.empty() ? "" : " (" + s.topology_file + ")") + ", but " + m.topology_file +
                      " is " + short_hash(m.topo->placement_hash) +
                      ": leaf groups, rank orders and costs below are computed over a different fabric "
                      "(give --topology the file slurmctld loaded, or run scontrol reconfigure after "
                      "installing the new one)");
  }
  return by_id;
}

// Slurm's jobs, filled in and split into those holding nodes and those waiting (squeue may list a
// job once per partition it was submitted to: the first line wins); status-file jobs Slurm no
// longer lists go to `status_only`.
void read_jobs(ShowModel &m, const ShowInput &in, const std::map<uint32_t, const StatusJob *> &by_id) {
  std::set<uint32_t> seen_jobs;
  for (const SlurmJob &sj : in.jobs) {
    if (sj.job_id == 0 || !seen_jobs.insert(sj.job_id).second) continue;
    ShowJob j;
    j.slurm = sj;
    fill_job(m, j, by_id);
    for (int h : j.hosts) m.nodes[size_t(h)].jobs.push_back(sj.job_id);
    (j.holds_nodes ? m.jobs : m.waiting).push_back(std::move(j));
  }
  auto by_job_id = [](const ShowJob &a, const ShowJob &b) { return a.slurm.job_id < b.slurm.job_id; };
  std::sort(m.jobs.begin(), m.jobs.end(), by_job_id);
  std::sort(m.waiting.begin(), m.waiting.end(), by_job_id);
  for (ShowNode &n : m.nodes) std::sort(n.jobs.begin(), n.jobs.end());
  for (const auto &[id, s] : by_id)
    if (!seen_jobs.count(id)) m.status_only.push_back(id);
}

// Each leaf group's leaves and node counts by use, summed over the fabric.
void count_leaf_groups(ShowModel &m) {
  const TopoIndex &ix = *m.index;
  const Topology &t = *m.topo;
  m.leaf_groups.resize(size_t(ix.leaf_group_count()));
  for (int g = 0; g < ix.leaf_group_count(); ++g) {
    ShowLeafGroup &lg = m.leaf_groups[size_t(g)];
    lg.index = g;
    lg.pod = ix.leaf_group_pod(g);
    lg.hosts = ix.leaf_group_hosts(g);
    if (size_t(g) < t.leaf_groups.size()) {
      for (int s : t.leaf_groups[size_t(g)].leaves)
        if (s >= 0 && size_t(s) < t.switches.size()) lg.leaves.push_back(t.switches[size_t(s)].name);
    } else if (!lg.hosts.empty()) {
      const int s = t.hosts[size_t(lg.hosts[0])].leaf;
      if (s >= 0 && size_t(s) < t.switches.size()) lg.leaves.push_back(t.switches[size_t(s)].name);
    }
    for (int h : lg.hosts) {
      switch (m.nodes[size_t(h)].use) {
        case NodeUse::Free: ++lg.free, lg.free_hosts.push_back(h); break;
        case NodeUse::Mixed: ++lg.mixed; break;
        case NodeUse::Allocated: ++lg.allocated; break;
        case NodeUse::Planned: ++lg.planned, ++lg.free, lg.free_hosts.push_back(h); break;  // idle
        case NodeUse::Unavailable: ++lg.unavailable; break;
        case NodeUse::Unknown: ++lg.unknown; break;
      }
    }
    m.free += lg.free, m.mixed += lg.mixed, m.allocated += lg.allocated, m.planned += lg.planned;
    m.unavailable += lg.unavailable, m.unknown += lg.unknown;
    if (lg.free > m.largest_free_block) m.largest_free_block = lg.free, m.largest_free_group = g;
  }
}

// Each pod's nodes, free nodes, largest free block and wholly free leaf groups.
void count_pods(ShowModel &m) {
  const TopoIndex &ix = *m.index;
  m.pods.resize(size_t(ix.pod_count()));
  for (int p = 0; p < ix.pod_count(); ++p) {
    ShowPod &pod = m.pods[size_t(p)];
    pod.index = p;
    pod.hosts = uint32_t(ix.pod_size(p));
    for (int g : ix.pod_leaf_groups(p)) {
      const ShowLeafGroup &lg = m.leaf_groups[size_t(g)];
      pod.free += lg.free;
      pod.largest_free_block = std::max(pod.largest_free_block, lg.free);
      if (!lg.hosts.empty() && lg.free == lg.hosts.size()) ++pod.whole_free_groups;
    }
  }
}

// Notes on what Slurm and the topology file disagree about: nodes on one side only, and jobs
// the status file still lists.
void add_mismatch_notes(ShowModel &m, const ShowInput &in) {
  if (!m.outside.empty()) {
    std::vector<std::string> n;
    for (const SlurmNode &s : m.outside) n.push_back(s.name);
    m.notes.push_back(fmt::format("{} Slurm node(s) are not in the topology file (layout jobs never get them): {}",
                                  n.size(), hostlist_compress(n)));
  }
  if (m.unknown && !in.nodes.empty())
    m.notes.push_back(fmt::format("{} node(s) of the topology file are not Slurm nodes (sinfo does not list them)",
                                  m.unknown));
  if (!m.status_only.empty()) {
    std::vector<uint64_t> ids(m.status_only.begin(), m.status_only.end());
    m.notes.push_back(fmt::format("the status file lists {} job(s) Slurm no longer lists (ended since it was "
                                  "written): {}",
                                  ids.size(), ranges(ids)));
  }
}

}  // namespace

ShowModel build_show(const Topology &topo, const ShowInput &in) {
  ShowModel m;
  m.topo = std::make_shared<const Topology>(topo);
  m.index = std::make_unique<TopoIndex>(*m.topo);
  m.topology_file = in.topology_file;
  m.status_file = in.status_file;
  m.status_problem = in.status_problem;
  m.cost = in.cost;
  m.now = in.now;
  m.nodes.assign(size_t(m.index->host_count()), ShowNode{});
  read_nodes(m, in);
  const std::map<uint32_t, const StatusJob *> by_id = read_status(m, in);
  read_jobs(m, in, by_id);
  count_leaf_groups(m);
  count_pods(m);
  add_mismatch_notes(m, in);
  return m;
}

std::vector<RankMapRow> rank_map(const ShowJob &j) {
  std::vector<RankMapRow> rows;
  if (!j.has_layout || j.order.empty()) return rows;
  const uint64_t g = j.layout.world() / j.order.size();
  for (size_t k = 0; k < j.order.size(); ++k) {
    RankMapRow r;
    r.node_rank = uint32_t(k);
    r.host = j.order[k];
    r.first_rank = k * g;
    r.last_rank = (k + 1) * g - 1;
    std::vector<uint64_t> tp, cp, ep, dp, pp;
    for (uint64_t q = r.first_rank; q <= r.last_rank; ++q) {
      const RankCoord c = rank_coord(j.layout, uint32_t(q));
      tp.push_back(c.tp), cp.push_back(c.cp), ep.push_back(c.ep), dp.push_back(c.dp), pp.push_back(c.pp);
    }
    r.tp = ranges(tp), r.cp = ranges(cp), r.ep = ranges(ep), r.dp = ranges(dp), r.pp = ranges(pp);
    rows.push_back(std::move(r));
  }
  return rows;
}

bool job_order_disagrees(const ShowModel &m, uint32_t id) {
  const ShowJob *j = m.find(id);
  if (!j) return false;
  return j->order_check == OrderCheck::Mismatch || (m.hash_mismatch && j->has_layout && j->holds_nodes);
}

}  // namespace topoaware
