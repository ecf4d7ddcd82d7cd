// topoaware show: the model and its renderers (show.hpp).
#include "show.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hostlist.hpp"
#include "job_report.hpp"

namespace topoaware {

using ojson = nlohmann::ordered_json;

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

std::string age(int64_t s) {
  if (s < 0) s = 0;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  return fmt::format("{}d{:02}h", s / 86400, (s % 86400) / 3600);
}

// "tp=8,pp=2,dp=2": the axes that are not 1 (tp always), the rank order if not Megatron's.
std::string layout_short(const Layout &l) {
  std::string s = fmt::format("tp={}", l.tp);
  if (l.cp != 1) s += fmt::format(",cp={}", l.cp);
  if (l.ep != 1) s += fmt::format(",ep={}", l.ep);
  if (l.pp != 1) s += fmt::format(",pp={}", l.pp);
  if (l.dp != 1) s += fmt::format(",dp={}", l.dp);
  if (l.order != RankOrder::TpCpEpDpPp) s += std::string(",rank-order=") + rank_order_name(l.order);
  return s;
}

// Sorted distinct values as ranges: "0-7", "1", "0,2,4-5".
std::string ranges(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return out;
}

std::vector<std::string> split_commas(const std::string &s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

std::string short_hash(const std::string &h) { return h.size() > 19 ? h.substr(0, 19) : h; }

using Rows = std::vector<std::vector<std::string>>;

// Columns of text: UTF-8 continuation bytes take no column.
size_t columns(const std::string &s) {
  size_t n = 0;
  for (char c : s) n += ((unsigned char)c & 0xc0) != 0x80;
  return n;
}

void widen(std::vector<size_t> &w, const Rows &rows) {
  for (const auto &r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], columns(r[i]));
    }
}

// Aligned columns (widths at least `w`); the last column is not padded. Rows of unequal length
// are fine.
std::string table(const Rows &rows, const std::string &indent, std::vector<size_t> w = {}) {
  widen(w, rows);
  std::string out;
  for (const auto &r : rows) {
    std::string line = indent;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(w[i] - columns(r[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

void fill_job(ShowModel &m, ShowJob &j, const std::map<uint32_t, const StatusJob *> &by_id) {
  const TopoIndex &ix = *m.index;
  const Topology &t = *m.topo;
  // Nodes Slurm says it holds.
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
    RankOrderer ro(ix);
    ro.order(j.hosts, j.layout, j.computed);
  } catch (const LayoutError &e) {
    j.order_check = OrderCheck::Failed;
    j.notes.push_back(std::string("the rank order of its nodes cannot be computed: ") + e.what());
    return;
  }
  j.order = j.computed;
  j.order_check = OrderCheck::Computed;
  if (st.phase == JobPhase::Placed && !st.node_order.empty()) {
    std::vector<int> recorded;
    std::vector<std::string> unknown;
    for (const std::string &n : split_commas(st.node_order)) {
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
  try {
    j.cost = job_cost(ix, j.order, j.layout, m.cost);
    j.span = job_span(ix, j.order, j.layout);
    j.slurm_order_cost = job_cost(ix, j.hosts, j.layout, m.cost);  // node-index order
    j.has_cost = true;
  } catch (const LayoutError &e) {
    j.notes.push_back(std::string("no cost: ") + e.what());
  }
}

}  // namespace

ShowModel build_show(const Topology &topo, const ShowInput &in) {
  ShowModel m;
  m.topo = std::make_shared<const Topology>(topo);
  m.index = std::make_unique<TopoIndex>(*m.topo);
  const TopoIndex &ix = *m.index;
  const Topology &t = *m.topo;
  m.topology_file = in.topology_file;
  m.status_file = in.status_file;
  m.status_problem = in.status_problem;
  m.cost = in.cost;
  m.now = in.now;
  m.nodes.assign(size_t(ix.host_count()), ShowNode{});

  // Nodes (sinfo -N lists a node once per partition: the first line wins).
  std::set<std::string> seen_nodes;
  for (const SlurmNode &n : in.nodes) {
    if (n.name.empty() || !seen_nodes.insert(n.name).second) continue;
    const int h = ix.find_host(n.name);
    if (h < 0) {
      m.outside.push_back(n);
      continue;
    }
    m.nodes[size_t(h)].state = n.state;
    m.nodes[size_t(h)].reason = n.reason;
    m.nodes[size_t(h)].use = node_use_of(n.state);
  }

  // The status file.
  std::map<uint32_t, const StatusJob *> by_id;
  if (in.status) {
    m.status = *in.status;
    for (const StatusJob &s : m.status->jobs) by_id[s.job_id] = &s;
    const Status &s = *m.status;
    if (!s.topology_error.empty())
      m.notes.push_back("the select plugin reports a topology problem: " + s.topology_error);
    if (s.topology_hash.empty()) {
      m.notes.push_back("the select plugin has no topology loaded: layout jobs are placed by plain cons_tres");
    } else if (!t.hash.empty() && s.topology_hash != t.hash) {
      m.hash_mismatch = true;
      m.notes.push_back("WARNING: the select plugin placed jobs with topology " + short_hash(s.topology_hash) +
                        (s.topology_file.empty() ? "" : " (" + s.topology_file + ")") + ", but " + m.topology_file +
                        " is " + short_hash(t.hash) +
                        ": leaf groups, rank orders and costs below are computed over a different fabric "
                        "(give --topology the file slurmctld loaded, or run scontrol reconfigure after "
                        "installing the new one)");
    }
  } else {
    m.notes.push_back("layouts unknown: " +
                      (in.status_problem.empty() ? std::string("no status file") : in.status_problem));
  }

  // Jobs (squeue may list a job once per partition it was submitted to: the first line wins).
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

  // Leaf groups and pods.
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
  return m;
}

// ---- text -----------------------------------------------------------------------------------

namespace {

std::string pods_text(int n) { return fmt::format("{} pod{}", n, n == 1 ? "" : "s"); }

std::string header_text(const ShowModel &m) {
  const TopoIndex &ix = *m.index;
  std::string out;
  out += fmt::format("Fabric: {} nodes, {} leaf groups, {}; topology {} ({})\n", ix.host_count(),
                     ix.leaf_group_count(), pods_text(ix.pod_count()), m.topology_file, short_hash(m.topo->hash));
  if (m.status) {
    const Status &s = *m.status;
    const CallCounters &c = s.counters;
    out += fmt::format("Status: {} ({}, written {} ago; {} layout job(s); job_test {} calls, mean {} us, max {} us)\n",
                       m.status_file, s.plugin, age(m.now - s.written_at), s.jobs.size(), c.calls,
                       c.calls ? c.total_us / c.calls : 0, c.max_us);
  } else {
    out += "Status: not available: " + m.status_problem +
           "\n        Layouts, rank orders, costs and waiting reasons are unknown; jobs and nodes are Slurm's view.\n";
  }
  std::string nodes = fmt::format("Nodes: {} free", m.free);
  if (m.planned) nodes += fmt::format(" ({} planned by backfill for pending jobs)", m.planned);
  nodes += fmt::format(", {} mixed, {} allocated", m.mixed, m.allocated);
  nodes += fmt::format(", {} unavailable", m.unavailable);
  if (m.unknown) nodes += fmt::format(", {} not in Slurm", m.unknown);
  if (m.largest_free_group >= 0 && m.largest_free_block > 0)
    nodes += fmt::format("; largest free block {} node{} (leaf group {})", m.largest_free_block,
                         m.largest_free_block == 1 ? "" : "s", m.largest_free_group);
  out += nodes + "\n";
  return out;
}

// Node rank of every host in the layout job that holds it (-1: none; a node shared by two layout
// jobs gets the last one's, and is only looked up for single-job nodes).
std::vector<int> node_ranks(const ShowModel &m) {
  std::vector<int> r(m.nodes.size(), -1);
  for (const ShowJob &j : m.jobs)
    for (size_t k = 0; k < j.order.size(); ++k) r[size_t(j.order[k])] = int(k);
  return r;
}

// The header line of a leaf group and its rows (runs of nodes).
std::pair<std::string, Rows> leaf_group_text(const ShowModel &m, const ShowLeafGroup &lg,
                                             const std::map<uint32_t, const ShowJob *> &jobs,
                                             const std::vector<int> &ranks) {
  const Topology &t = *m.topo;
  std::string leaves;
  for (size_t i = 0; i < lg.leaves.size(); ++i) leaves += (i ? ", " : "") + lg.leaves[i];
  std::string out = fmt::format("Leaf group {} ({} {}{}, pod {}): {} nodes, {} free", lg.index,
                                lg.leaves.size() > 1 ? "leaves" : "leaf", leaves,
                                lg.leaves.size() > 1 ? " (one per rail)" : "", lg.pod, lg.hosts.size(), lg.free);
  if (lg.free && lg.free < lg.hosts.size()) out += " (" + host_names(t, lg.free_hosts) + ")";
  out += "\n";
  // Runs of consecutive nodes with the same state and jobs (and consecutive node ranks of a
  // layout job, so that each run has one rank range).
  Rows rows;
  size_t i = 0;
  while (i < lg.hosts.size()) {
    const ShowNode &n0 = m.nodes[size_t(lg.hosts[i])];
    const ShowJob *lj = n0.jobs.size() == 1 && jobs.count(n0.jobs[0]) ? jobs.at(n0.jobs[0]) : nullptr;
    if (lj && lj->order.empty()) lj = nullptr;
    int r0 = lj ? ranks[size_t(lg.hosts[i])] : -1;
    size_t e = i + 1;
    while (e < lg.hosts.size()) {
      const ShowNode &n = m.nodes[size_t(lg.hosts[e])];
      if (n.state != n0.state || n.jobs != n0.jobs) break;
      if (lj && ranks[size_t(lg.hosts[e])] != r0 + int(e - i)) break;
      ++e;
    }
    std::vector<int> run(lg.hosts.begin() + std::ptrdiff_t(i), lg.hosts.begin() + std::ptrdiff_t(e));
    std::string what;
    if (n0.jobs.empty()) {
      what = n0.use == NodeUse::Free ? "free" : n0.use == NodeUse::Planned ? "free, planned by backfill" : "-";
    } else {
      std::vector<uint64_t> ids(n0.jobs.begin(), n0.jobs.end());
      what = (ids.size() == 1 ? "job " : "jobs ") + ranges(ids);
      if (lj && r0 >= 0) {
        const uint64_t g = lj->gpus_per_node();
        const int r1 = r0 + int(e - i) - 1;
        what += fmt::format(", ranks {}-{} (node rank{} {})", uint64_t(r0) * g, uint64_t(r1 + 1) * g - 1,
                            r1 > r0 ? "s" : "", r1 > r0 ? fmt::format("{}-{}", r0, r1) : std::to_string(r0));
      }
    }
    if (!n0.reason.empty() && n0.use == NodeUse::Unavailable) what += " (" + n0.reason + ")";
    rows.push_back({host_names(t, run), n0.state.empty() ? "(not in Slurm)" : n0.state, what});
    i = e;
  }
  return {out, rows};
}

std::string span_short(const ShowJob &j) {
  if (!j.has_cost) return "-";
  const PlaceQuality &q = j.span;
  if (q.ideal()) return "ideal";
  std::string s;
  if (q.split_segments) s = fmt::format("split {}/{}", q.split_segments, q.segments);
  if (q.pods > q.ideal_pods) s += fmt::format("{}pods {}>{}", s.empty() ? "" : ",", q.pods, q.ideal_pods);
  return s;
}

std::string leaf_groups_short(const ShowJob &j) {
  std::string s;
  for (const auto &[g, n] : j.leaf_groups) s += fmt::format("{}{}:{}", s.empty() ? "" : ",", g, n);
  if (!j.outside.empty()) s += fmt::format("{}?:{}", s.empty() ? "" : ",", j.outside.size());
  return s.empty() ? "-" : s;
}

std::string unknown_or_dash(const ShowModel &m) { return m.status ? "-" : "?"; }

}  // namespace

std::string show_text(const ShowModel &m) {
  std::string out = header_text(m);
  std::map<uint32_t, const ShowJob *> jobs;
  for (const ShowJob &j : m.jobs) jobs[j.slurm.job_id] = &j;
  const std::vector<int> ranks = node_ranks(m);
  // Free blocks: the free nodes of each leaf group, largest first.
  std::vector<const ShowLeafGroup *> fb;
  for (const ShowLeafGroup &lg : m.leaf_groups)
    if (lg.free) fb.push_back(&lg);
  std::stable_sort(fb.begin(), fb.end(),
                   [](const ShowLeafGroup *a, const ShowLeafGroup *b) { return a->free > b->free; });
  if (fb.empty()) {
    out += "Free blocks: none\n";
  } else {
    // The largest few by name; the rest counted (the leaf group tables below list every node).
    constexpr size_t kListed = 8;
    std::string s;
    uint32_t rest_nodes = 0, rest_whole = 0;
    for (size_t i = 0; i < fb.size(); ++i) {
      const ShowLeafGroup *lg = fb[i];
      const bool whole = lg->free == lg->hosts.size();
      if (i >= kListed) {
        rest_nodes += lg->free, rest_whole += whole;
        continue;
      }
      s += fmt::format("{}{} in leaf group {} ({}{})", s.empty() ? "" : "; ", lg->free, lg->index,
                       host_names(*m.topo, lg->free_hosts), whole ? ", whole" : "");
    }
    if (fb.size() > kListed)
      s += fmt::format("; and {} more in {} leaf groups ({} of them whole)", rest_nodes, fb.size() - kListed,
                       rest_whole);
    out += "Free blocks: " + s + "\n";
  }
  // One column width for every leaf group's table.
  std::vector<std::pair<std::string, Rows>> groups(m.leaf_groups.size());
  std::vector<size_t> widths;
  for (const ShowLeafGroup &lg : m.leaf_groups) {
    groups[size_t(lg.index)] = leaf_group_text(m, lg, jobs, ranks);
    widen(widths, groups[size_t(lg.index)].second);
  }
  const bool many_pods = m.pods.size() > 1;
  for (const ShowPod &p : m.pods) {
    if (many_pods)
      out += fmt::format("\nPod {}: {} nodes, {} free, largest free block {}, {} leaf group(s) wholly free\n", p.index,
                         p.hosts, p.free, p.largest_free_block, p.whole_free_groups);
    for (int g : m.index->pod_leaf_groups(p.index))
      out += "\n" + groups[size_t(g)].first + table(groups[size_t(g)].second, "  ", widths);
  }
  if (!m.outside.empty()) {
    out += "\nNot in the topology file:\n";
    Rows rows;
    for (const SlurmNode &n : m.outside) {
      std::string holders;
      for (const ShowJob &j : m.jobs)
        if (std::find(j.outside.begin(), j.outside.end(), n.name) != j.outside.end())
          holders += (holders.empty() ? "job " : ",") + std::to_string(j.slurm.job_id);
      rows.push_back({n.name, n.state, holders});
    }
    out += table(rows, "  ");
  }

  out += "\nRunning jobs:";
  if (m.jobs.empty()) {
    out += " none\n";
  } else {
    out += "\n";
    Rows rows = {{"JOB", "STATE", "USER", "NAME", "NODES", "LEAF GROUPS", "LAYOUT",
                                                   "MODE", "PLACEMENT", "SPAN", "COST", "SLOWDOWN", "NODELIST"}};
    for (const ShowJob &j : m.jobs) {
      const std::string d = unknown_or_dash(m);
      std::vector<std::string> r = {std::to_string(j.slurm.job_id), j.slurm.state, j.slurm.user, j.slurm.name,
                                    std::to_string(j.hosts.size() + j.outside.size()), leaf_groups_short(j)};
      if (j.status) {
        r.push_back(j.has_layout ? layout_short(j.layout) : "(bad)");
        r.push_back(j.status->mode.empty() ? "-" : j.status->mode);
        r.push_back(j.status->placement.empty() ? "-" : j.status->placement);
      } else {
        r.insert(r.end(), {d, d, d});
      }
      r.push_back(span_short(j));
      r.push_back(j.has_cost ? fmt::format("{:.2f}x", j.cost.ratio) : "-");
      r.push_back(j.has_cost ? fmt::format("{:.3f}", j.cost.slowdown(m.cost.comm_fraction)) : "-");
      r.push_back(j.slurm.nodes.empty() ? "-" : j.slurm.nodes);
      rows.push_back(std::move(r));
    }
    out += table(rows, "  ");
    bool any_cost = false;
    for (const ShowJob &j : m.jobs) any_cost |= j.has_cost;
    if (any_cost)
      out += fmt::format("  (SPAN: DP rings / PP chains above their ideal leaf groups; COST: hop-bytes against the "
                         "ideal; SLOWDOWN: estimated, f={}; see topoaware(1) PLAN)\n",
                         m.cost.comm_fraction);
  }

  out += "\nWaiting jobs:";
  if (m.waiting.empty()) {
    out += " none\n";
  } else {
    out += "\n";
    Rows rows = {
        {"JOB", "STATE", "USER", "NAME", "NODES", "LAYOUT", "MODE", "WAITING", "SLURM REASON", "TOPOAWARE REASON"}};
    for (const ShowJob &j : m.waiting) {
      const std::string d = unknown_or_dash(m);
      std::vector<std::string> r = {std::to_string(j.slurm.job_id), j.slurm.state, j.slurm.user, j.slurm.name,
                                    j.slurm.node_count ? std::to_string(j.slurm.node_count) : "-"};
      if (j.status) {
        r.push_back(j.has_layout ? layout_short(j.layout) : "(bad)");
        r.push_back(j.status->mode.empty() ? "-" : j.status->mode);
        const bool w = j.status->phase == JobPhase::Waiting;
        r.push_back(w ? age(m.now - j.status->since) : "-");
        r.push_back(j.slurm.reason.empty() ? "-" : j.slurm.reason);
        r.push_back(w ? (j.status->reason.empty() ? "-" : j.status->reason) : "(placed: see notes)");
      } else {
        r.insert(r.end(), {d, d, d, j.slurm.reason.empty() ? "-" : j.slurm.reason,
                           m.status ? "(not tested by the plugin yet, or no layout)" : "?"});
      }
      rows.push_back(std::move(r));
    }
    out += table(rows, "  ");
  }

  std::vector<std::string> notes = m.notes;
  for (const auto *list : {&m.jobs, &m.waiting})
    for (const ShowJob &j : *list)
      for (const std::string &n : j.notes) notes.push_back(fmt::format("job {}: {}", j.slurm.job_id, n));
  if (!notes.empty()) {
    out += "\nNotes:\n";
    for (const std::string &n : notes) out += "  " + n + "\n";
  }
  return out;
}

// ---- JSON -----------------------------------------------------------------------------------

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

// ---- rank map -------------------------------------------------------------------------------

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

namespace {

const ShowJob &job_or_throw(const ShowModel &m, uint32_t id) {
  const ShowJob *j = m.find(id);
  if (!j) throw std::out_of_range(fmt::format("job {} is not running or pending (squeue does not list it)", id));
  return *j;
}

std::string leaf_name(const ShowModel &m, int h) {
  const int s = m.topo->hosts[size_t(h)].leaf;
  return s >= 0 && size_t(s) < m.topo->switches.size() ? m.topo->switches[size_t(s)].name : "-";
}

}  // namespace

bool job_order_disagrees(const ShowModel &m, uint32_t id) {
  const ShowJob *j = m.find(id);
  if (!j) return false;
  return j->order_check == OrderCheck::Mismatch || (m.hash_mismatch && j->has_layout && j->holds_nodes);
}

std::string show_job_text(const ShowModel &m, uint32_t id) {
  const ShowJob &j = job_or_throw(m, id);
  const Topology &t = *m.topo;
  const TopoIndex &ix = *m.index;
  std::string out = fmt::format("Job {} ({}, user {}, name {}, partition {})\n", j.slurm.job_id, j.slurm.state,
                                j.slurm.user.empty() ? "-" : j.slurm.user, j.slurm.name.empty() ? "-" : j.slurm.name,
                                j.slurm.partition.empty() ? "-" : j.slurm.partition);
  out += fmt::format("Topology: {} ({})\n", m.topology_file, short_hash(t.hash));
  if (j.has_layout) {
    const Layout &l = j.layout;
    out += fmt::format("Layout: tp={} cp={} ep={} dp={} pp={} ({}), {} GPUs", l.tp, l.cp, l.ep, l.dp, l.pp,
                       rank_order_name(l.order), l.world());
    if (j.holds_nodes && !j.order.empty()) out += fmt::format(" on {} nodes x {}", j.order.size(), j.gpus_per_node());
    out += fmt::format("; mode {}\n", j.status->mode.empty() ? "-" : j.status->mode);
  } else if (j.status) {
    out += "Layout: the status file's \"" + j.status->layout + "\" does not parse: " + j.layout_error + "\n";
  } else if (!m.status) {
    out += "Layout: unknown (no status file: " + m.status_problem + ")\n";
  } else {
    out += "Layout: none known (the status file has no entry for it: a job without --tp/--pp/--dp, or not "
           "tested by the plugin yet)\n";
  }
  if (!j.holds_nodes) {
    out += fmt::format("Holds no nodes; Slurm's reason: {}", j.slurm.reason.empty() ? "-" : j.slurm.reason);
    if (j.slurm.node_count) out += fmt::format("; asks for {} nodes", j.slurm.node_count);
    out += "\n";
    if (j.status && j.status->phase == JobPhase::Waiting)
      out += fmt::format("Waiting for {} (since the plugin's first verdict): {}\n", age(m.now - j.status->since),
                         j.status->reason.empty() ? "-" : j.status->reason);
    for (const std::string &n : j.notes) out += "Note: " + n + "\n";
    return out;
  }
  out += fmt::format("Nodes: {} ({} in {} leaf group(s))\n", j.slurm.nodes, j.hosts.size(), j.leaf_groups.size());
  if (j.status) {
    out += "Placement: " + (j.status->placement.empty() ? std::string("-") : j.status->placement);
    if (!j.status->reason.empty()) out += " (" + j.status->reason + ")";
    if (j.status->phase == JobPhase::Placed) out += fmt::format(", {} ago", age(m.now - j.status->since));
    out += "\n";
  }
  switch (j.order_check) {
    case OrderCheck::Match:
      out += "Rank order: the status file's node order; checked: the rank order of the node set over " +
             m.topology_file + " is the same\n";
      break;
    case OrderCheck::Mismatch:
      out += "WARNING: the status file's node order differs from the rank order of the node set over " +
             m.topology_file + " (the topology file may have changed since the job was placed)\n";
      out += "  status file: " + std::string(j.status ? j.status->node_order : "") + "\n";
      {
        std::string c;
        for (int h : j.computed) c += (c.empty() ? "" : ",") + t.hosts[size_t(h)].name;
        out += "  recomputed:  " + c + "\n";
      }
      out += j.order == j.computed
                 ? "  The map below is the recomputed order (the status file names nodes the topology lacks).\n"
                 : "  The map below follows the status file.\n";
      break;
    case OrderCheck::Computed:
      out += "Rank order: computed from the node set over " + m.topology_file +
             " (what spank_topoaware computes; the status file has no node order to check it against)\n";
      break;
    case OrderCheck::Failed:
      out += "Rank order: cannot be computed (see the notes)\n";
      break;
    case OrderCheck::NotApplicable:
      out += "Rank order: no layout known; Slurm hands out ranks in node order:\n";
      break;
  }
  if (m.hash_mismatch)
    out += "WARNING: the status file was written with topology " + short_hash(m.status->topology_hash) + ", not " +
           short_hash(t.hash) + " (" + m.topology_file + ")\n";
  if (j.has_layout && !j.order.empty()) {
    Rows rows = {
        {"NODE", "RANKS", "HOST", "LEAF", "LEAF GROUP", "POD", "TP", "CP", "EP", "DP", "PP"}};
    for (const RankMapRow &r : rank_map(j))
      rows.push_back({std::to_string(r.node_rank), fmt::format("{}-{}", r.first_rank, r.last_rank),
                      t.hosts[size_t(r.host)].name, leaf_name(m, r.host), std::to_string(ix.host_leaf_group(r.host)),
                      std::to_string(ix.host_pod(r.host)), r.tp, r.cp, r.ep, r.dp, r.pp});
    out += "\n" + table(rows, "  ");
  } else {
    Rows rows = {{"NODE", "HOST", "LEAF", "LEAF GROUP", "POD"}};
    for (size_t k = 0; k < j.hosts.size(); ++k) {
      const int h = j.hosts[k];
      rows.push_back({std::to_string(k), t.hosts[size_t(h)].name, leaf_name(m, h),
                      std::to_string(ix.host_leaf_group(h)), std::to_string(ix.host_pod(h))});
    }
    for (const std::string &n : j.outside) rows.push_back({"-", n, "-", "-", "-"});
    out += "\n" + table(rows, "  ");
  }
  if (j.has_cost) {
    const double f = m.cost.comm_fraction;
    out += "\n" + span_text(j.span) + "\n";
    out += "Cost per training step (cost model of topoaware(1); bytes per step):\n";
    out += "  " + cost_text("this rank order:", j.cost, f) + "\n";
    out += "  " + cost_text("same nodes, Slurm's order:", j.slurm_order_cost, f) + "\n";
  }
  if (!j.notes.empty()) {
    out += "\n";
    for (const std::string &n : j.notes) out += "Note: " + n + "\n";
  }
  return out;
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

// ---- DOT ------------------------------------------------------------------------------------

namespace {

const char *const kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69",
                                "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#a6cee3", "#b2df8a", "#fdbf6f",
                                "#cab2d6", "#e5c494"};
constexpr size_t kPaletteSize = sizeof kPalette / sizeof kPalette[0];
constexpr size_t kCellsPerRow = 8;

std::string html(const std::string &s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string dot_str(const std::string &s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c == '\n' ? ' ' : c;
  }
  return o;
}

// focus: 0 = every job in colour; else that job in colour with its ranks, the others grey.
std::string dot(const ShowModel &m, uint32_t focus) {
  const Topology &t = *m.topo;
  const TopoIndex &ix = *m.index;
  std::map<uint32_t, std::string> colour;
  std::map<uint32_t, const ShowJob *> jobs;
  for (size_t i = 0; i < m.jobs.size(); ++i) {
    colour[m.jobs[i].slurm.job_id] = kPalette[i % kPaletteSize];
    jobs[m.jobs[i].slurm.job_id] = &m.jobs[i];
  }
  const ShowJob *fj = focus ? m.find(focus) : nullptr;
  const std::vector<int> ranks = node_ranks(m);
  std::string title;
  if (fj) {
    title = fmt::format("job {} ({}){}", focus, fj->slurm.state,
                        fj->has_layout ? ": " + layout_short(fj->layout) : std::string());
    if (fj->has_cost)
      title += fmt::format(", hop-bytes {:.2f}x of ideal, est. slowdown {:.3f}", fj->cost.ratio,
                           fj->cost.slowdown(m.cost.comm_fraction));
  } else {
    title = fmt::format("{} nodes: {} free, {} allocated, {} mixed, {} unavailable; {} running, {} waiting",
                        ix.host_count(), m.free, m.allocated, m.mixed, m.unavailable, m.jobs.size(), m.waiting.size());
  }
  std::string out = "// Jobs on the fabric, generated by topoaware show";
  if (!t.hash.empty()) out += "; topology hash " + t.hash;
  out += "\ngraph show {\n";
  out += fmt::format("  graph [rankdir=TB, nodesep=0.25, ranksep=0.6, fontname=\"Helvetica\", labelloc=t, "
                     "label=\"{}\"];\n",
                     dot_str(title));
  out += "  node [shape=plaintext, fontname=\"Helvetica\", fontsize=9];\n  edge [color=\"#909090\"];\n";
  out += fmt::format("  top [shape=box, style=rounded, label=\"{}\"];\n",
                     t.max_level >= 3 ? "core" : (t.max_level == 2 ? "spines" : "fabric"));
  const bool many_pods = m.pods.size() > 1;
  for (const ShowPod &p : m.pods) {
    std::string indent = "  ";
    if (many_pods) {
      out += fmt::format("  subgraph cluster_pod{} {{\n    label=\"pod {}: {} nodes, {} free\"; style=dashed; "
                         "color=\"#808080\";\n",
                         p.index, p.index, p.hosts, p.free);
      out += fmt::format("    pod{} [shape=box, style=rounded, label=\"pod {} spines\"];\n", p.index, p.index);
      indent = "    ";
    }
    for (int g : ix.pod_leaf_groups(p.index)) {
      const ShowLeafGroup &lg = m.leaf_groups[size_t(g)];
      std::string leaves;
      for (size_t i = 0; i < lg.leaves.size(); ++i) leaves += (i ? ", " : "") + lg.leaves[i];
      std::string tab = "<TABLE BORDER=\"1\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">";
      const size_t cols = std::min(kCellsPerRow, std::max<size_t>(1, lg.hosts.size()));
      tab += fmt::format("<TR><TD COLSPAN=\"{}\" BGCOLOR=\"#e8f0fe\"><B>leaf group {}</B> {}<BR/>{} nodes, {} "
                         "free</TD></TR>",
                         cols, lg.index, html(leaves), lg.hosts.size(), lg.free);
      for (size_t i = 0; i < lg.hosts.size(); ++i) {
        if (i % kCellsPerRow == 0) tab += "<TR>";
        const int h = lg.hosts[i];
        const ShowNode &n = m.nodes[size_t(h)];
        std::string bg = "#ffffff", line2;
        if (!n.jobs.empty()) {
          std::vector<uint64_t> ids(n.jobs.begin(), n.jobs.end());
          line2 = (ids.size() == 1 ? "job " : "jobs ") + ranges(ids);
          if (!focus) {
            bg = colour[n.jobs[0]];
          } else if (std::find(n.jobs.begin(), n.jobs.end(), focus) != n.jobs.end()) {
            bg = colour[focus];
            const int r = fj && !fj->order.empty() ? ranks[size_t(h)] : -1;
            if (r >= 0) {
              const uint64_t gpn = fj->gpus_per_node();
              line2 = fmt::format("node {}: ranks {}-{}", r, uint64_t(r) * gpn, uint64_t(r + 1) * gpn - 1);
            }
          } else {
            bg = "#e0e0e0";
          }
        } else if (n.use == NodeUse::Free || n.use == NodeUse::Planned) {
          line2 = n.use == NodeUse::Free ? "free" : "free (planned)";
        } else {
          line2 = n.state.empty() ? "not in Slurm" : n.state;
          bg = n.use == NodeUse::Unavailable ? "#a0a0a0" : "#f0f0f0";
        }
        tab += fmt::format("<TD BGCOLOR=\"{}\">{}<BR/><FONT POINT-SIZE=\"8\">{}</FONT></TD>", bg,
                           html(t.hosts[size_t(h)].name), html(line2));
        if (i % kCellsPerRow == kCellsPerRow - 1 || i + 1 == lg.hosts.size()) tab += "</TR>";
      }
      tab += "</TABLE>";
      out += fmt::format("{}lg{} [label=<{}>];\n", indent, g, tab);
    }
    if (many_pods) out += "  }\n";
  }
  for (const ShowPod &p : m.pods) {
    if (many_pods) out += fmt::format("  top -- pod{};\n", p.index);
    for (int g : ix.pod_leaf_groups(p.index))
      out += many_pods ? fmt::format("  pod{} -- lg{};\n", p.index, g) : fmt::format("  top -- lg{};\n", g);
  }
  // The focused job's rank order as a path over its leaf groups.
  if (fj && !fj->order.empty()) {
    int prev = -1;
    std::set<std::pair<int, int>> edges;
    for (int h : fj->order) {
      const int g = ix.host_leaf_group(h);
      if (prev >= 0 && prev != g && edges.insert({prev, g}).second)
        out += fmt::format("  lg{} -- lg{} [color=\"#2060c0\", penwidth=2, constraint=false];\n", prev, g);
      prev = g;
    }
  }
  // Legend: every job holding nodes (or the focused one), and the waiting jobs.
  std::string leg = "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">";
  leg += "<TR><TD COLSPAN=\"2\"><B>jobs</B></TD></TR>";
  size_t rows = 0;
  for (const ShowJob &j : m.jobs) {
    if (focus && j.slurm.job_id != focus) continue;
    std::string text = fmt::format("{} {} {}: {} node(s)", j.slurm.job_id, j.slurm.user, j.slurm.name,
                                   j.hosts.size() + j.outside.size());
    if (j.has_layout) text += ", " + layout_short(j.layout);
    if (j.status && !j.status->placement.empty()) text += ", " + j.status->placement;
    if (j.has_cost) text += fmt::format(", {:.2f}x of ideal", j.cost.ratio);
    leg += fmt::format("<TR><TD BGCOLOR=\"{}\">  </TD><TD ALIGN=\"LEFT\">{}</TD></TR>", colour[j.slurm.job_id],
                       html(text));
    ++rows;
  }
  if (!focus)
    for (const ShowJob &j : m.waiting) {
      std::string text = fmt::format("{} {} {}: waiting ({})", j.slurm.job_id, j.slurm.user, j.slurm.name,
                                     j.slurm.reason.empty() ? "-" : j.slurm.reason);
      if (j.has_layout) text += ", " + layout_short(j.layout);
      if (j.status && j.status->phase == JobPhase::Waiting && !j.status->reason.empty())
        text += ": " + j.status->reason;
      leg += fmt::format("<TR><TD>  </TD><TD ALIGN=\"LEFT\">{}</TD></TR>", html(text));
      ++rows;
    }
  leg += "<TR><TD BGCOLOR=\"#ffffff\">  </TD><TD ALIGN=\"LEFT\">free</TD></TR>";
  leg += "<TR><TD BGCOLOR=\"#a0a0a0\">  </TD><TD ALIGN=\"LEFT\">unavailable (down, drained, ...)</TD></TR>";
  leg += "</TABLE>";
  (void)rows;
  out += fmt::format("  legend [label=<{}>];\n  {{ rank=sink; legend; }}\n", leg);
  return out + "}\n";
}

}  // namespace

std::string show_dot(const ShowModel &m) { return dot(m, 0); }

std::string show_job_dot(const ShowModel &m, uint32_t id) {
  job_or_throw(m, id);
  return dot(m, id);
}

}  // namespace topoaware
