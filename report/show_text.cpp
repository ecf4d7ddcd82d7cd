// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware show: the text renderers (show.hpp).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "job_report.hpp"
#include "show.hpp"
#include "show_format.hpp"

namespace topoaware {

using namespace show_fmt;

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
  const Topology &t = *m.topo;
  if (!t.nvlink_domains.empty()) {
    // Free nodes per multi-node NVLink domain: a wholly free domain is where a job needing NVLink
    // across trays could go.
    std::vector<size_t> free(t.nvlink_domains.size(), 0);
    for (const ShowLeafGroup &lg : m.leaf_groups)
      for (int h : lg.free_hosts) {
        const int d = t.hosts[static_cast<size_t>(h)].nvlink_domain;
        if (d >= 0) free[static_cast<size_t>(d)]++;
      }
    size_t whole = 0, largest = 0;
    for (size_t d = 0; d < free.size(); ++d) {
      whole += free[d] == t.nvlink_domains[d].hosts.size();
      largest = std::max(largest, free[d]);
    }
    out += fmt::format("NVLink domains: {}, {} wholly free; most free nodes in one domain: {}\n",
                       t.nvlink_domains.size(), whole, largest);
  }
  return out;
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

// Free blocks: the free nodes of each leaf group, largest first; the largest few by name, the
// rest counted (the leaf group tables list every node).
std::string free_blocks_text(const ShowModel &m) {
  std::vector<const ShowLeafGroup *> fb;
  for (const ShowLeafGroup &lg : m.leaf_groups)
    if (lg.free) fb.push_back(&lg);
  std::stable_sort(fb.begin(), fb.end(),
                   [](const ShowLeafGroup *a, const ShowLeafGroup *b) { return a->free > b->free; });
  if (fb.empty()) return "Free blocks: none\n";
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
  return "Free blocks: " + s + "\n";
}

// Every leaf group's table, pod by pod, with one column width for all of them.
std::string leaf_group_tables_text(const ShowModel &m) {
  std::map<uint32_t, const ShowJob *> jobs;
  for (const ShowJob &j : m.jobs) jobs[j.slurm.job_id] = &j;
  const std::vector<int> ranks = node_ranks(m);
  std::vector<std::pair<std::string, Rows>> groups(m.leaf_groups.size());
  std::vector<size_t> widths;
  for (const ShowLeafGroup &lg : m.leaf_groups) {
    groups[size_t(lg.index)] = leaf_group_text(m, lg, jobs, ranks);
    widen(widths, groups[size_t(lg.index)].second);
  }
  std::string out;
  const bool many_pods = m.pods.size() > 1;
  for (const ShowPod &p : m.pods) {
    if (many_pods)
      out += fmt::format("\nPod {}: {} nodes, {} free, largest free block {}, {} leaf group(s) wholly free\n", p.index,
                         p.hosts, p.free, p.largest_free_block, p.whole_free_groups);
    for (int g : m.index->pod_leaf_groups(p.index))
      out += "\n" + groups[size_t(g)].first + table(groups[size_t(g)].second, "  ", widths);
  }
  return out;
}

// Slurm nodes the topology file lacks, with the jobs that hold them.
std::string outside_text(const ShowModel &m) {
  if (m.outside.empty()) return "";
  Rows rows;
  for (const SlurmNode &n : m.outside) {
    std::string holders;
    for (const ShowJob &j : m.jobs)
      if (std::find(j.outside.begin(), j.outside.end(), n.name) != j.outside.end())
        holders += (holders.empty() ? "job " : ",") + std::to_string(j.slurm.job_id);
    rows.push_back({n.name, n.state, holders});
  }
  return "\nNot in the topology file:\n" + table(rows, "  ");
}

// The jobs that hold nodes: where, how laid out and placed, and at what cost.
std::string running_jobs_text(const ShowModel &m) {
  if (m.jobs.empty()) return "\nRunning jobs: none\n";
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
  std::string out = "\nRunning jobs:\n" + table(rows, "  ");
  bool any_cost = false;
  for (const ShowJob &j : m.jobs) any_cost |= j.has_cost;
  if (any_cost)
    out += fmt::format("  (SPAN: DP rings / PP chains above their ideal leaf groups; COST: hop-bytes against the "
                       "ideal; SLOWDOWN: estimated, f={}; see topoaware(1) PLAN)\n",
                       m.cost.comm_fraction);
  return out;
}

// The jobs that hold no nodes: how long they have waited and why, by Slurm and by the plugin.
std::string waiting_jobs_text(const ShowModel &m) {
  if (m.waiting.empty()) return "\nWaiting jobs: none\n";
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
  return "\nWaiting jobs:\n" + table(rows, "  ");
}

// The model's notes, then each job's, named by job.
std::string notes_text(const ShowModel &m) {
  std::vector<std::string> notes = m.notes;
  for (const auto *list : {&m.jobs, &m.waiting})
    for (const ShowJob &j : *list)
      for (const std::string &n : j.notes) notes.push_back(fmt::format("job {}: {}", j.slurm.job_id, n));
  if (notes.empty()) return "";
  std::string out = "\nNotes:\n";
  for (const std::string &n : notes) out += "  " + n + "\n";
  return out;
}

// show --congestion: each congested cable direction, its load and the jobs routed over it.
std::string congestion_text(const ShowModel &m) {
  if (m.congestion_file.empty()) return "";
  std::string out = fmt::format("\nCongested cables ({}, over {:.0f} s): {}\n", m.congestion_file,
                                m.congestion_interval, m.hot.empty() ? "none" : std::to_string(m.hot.size()));
  for (const HotCable &h : m.hot) {
    std::string peer = h.peer_sw >= 0 ? m.topo->switches[size_t(h.peer_sw)].name
                                      : (h.peer_host >= 0 ? m.topo->hosts[size_t(h.peer_host)].name : "?");
    out += fmt::format("  {} p{} -> {}: {:.0f}% of line rate, wait ratio {:.3f}", m.topo->switches[size_t(h.sw)].name,
                       h.port, peer, 100 * h.utilization, std::min(h.wait_ratio, 1e6));
    if (!h.jobs.empty()) {
      out += "; jobs";
      for (uint32_t id : h.jobs) out += fmt::format(" {}", id);
    }
    if (!h.unknown_jobs.empty()) {
      out += "; without a layout:";
      for (uint32_t id : h.unknown_jobs) out += fmt::format(" {}", id);
    }
    out += "\n";
  }
  return out;
}

// A job's layout line: its layout and mode, or why none is known.
std::string job_layout_text(const ShowModel &m, const ShowJob &j) {
  if (j.has_layout) {
    const Layout &l = j.layout;
    std::string out = fmt::format("Layout: tp={} cp={} ep={} dp={} pp={} ({}), {} GPUs", l.tp, l.cp, l.ep, l.dp, l.pp,
                                  rank_order_name(l.order), l.world());
    if (j.holds_nodes && !j.order.empty()) out += fmt::format(" on {} nodes x {}", j.order.size(), j.gpus_per_node());
    out += fmt::format("; mode {}\n", j.status->mode.empty() ? "-" : j.status->mode);
    return out;
  }
  if (j.status) return "Layout: the status file's \"" + j.status->layout + "\" does not parse: " + j.layout_error + "\n";
  if (!m.status) return "Layout: unknown (no status file: " + m.status_problem + ")\n";
  return "Layout: none known (the status file has no entry for it: a job without --tp/--pp/--dp, or not "
         "tested by the plugin yet)\n";
}

// A job that holds no nodes: Slurm's reason, the plugin's verdict and the notes.
std::string job_without_nodes_text(const ShowModel &m, const ShowJob &j) {
  std::string out = fmt::format("Holds no nodes; Slurm's reason: {}", j.slurm.reason.empty() ? "-" : j.slurm.reason);
  if (j.slurm.node_count) out += fmt::format("; asks for {} nodes", j.slurm.node_count);
  out += "\n";
  if (j.status && j.status->phase == JobPhase::Waiting)
    out += fmt::format("Waiting for {} (since the plugin's first verdict): {}\n", age(m.now - j.status->since),
                       j.status->reason.empty() ? "-" : j.status->reason);
  for (const std::string &n : j.notes) out += "Note: " + n + "\n";
  return out;
}

// Where the rank order shown comes from, and whether it agrees with the topology file's.
std::string rank_order_check_text(const ShowModel &m, const ShowJob &j) {
  std::string out;
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
        for (int h : j.computed) c += (c.empty() ? "" : ",") + m.topo->hosts[size_t(h)].name;
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
  return out;
}

// The job's nodes: with a layout and an order, each node's ranks and coordinates; else its place.
std::string job_nodes_table(const ShowModel &m, const ShowJob &j) {
  const Topology &t = *m.topo;
  const TopoIndex &ix = *m.index;
  if (j.has_layout && !j.order.empty()) {
    Rows rows = {
        {"NODE", "RANKS", "HOST", "LEAF", "LEAF GROUP", "POD", "TP", "CP", "EP", "DP", "PP"}};
    for (const RankMapRow &r : rank_map(j))
      rows.push_back({std::to_string(r.node_rank), fmt::format("{}-{}", r.first_rank, r.last_rank),
                      t.hosts[size_t(r.host)].name, leaf_name(m, r.host), std::to_string(ix.host_leaf_group(r.host)),
                      std::to_string(ix.host_pod(r.host)), r.tp, r.cp, r.ep, r.dp, r.pp});
    return "\n" + table(rows, "  ");
  }
  Rows rows = {{"NODE", "HOST", "LEAF", "LEAF GROUP", "POD"}};
  for (size_t k = 0; k < j.hosts.size(); ++k) {
    const int h = j.hosts[k];
    rows.push_back({std::to_string(k), t.hosts[size_t(h)].name, leaf_name(m, h),
                    std::to_string(ix.host_leaf_group(h)), std::to_string(ix.host_pod(h))});
  }
  for (const std::string &n : j.outside) rows.push_back({"-", n, "-", "-", "-"});
  return "\n" + table(rows, "  ");
}

}  // namespace

std::string show_text(const ShowModel &m) {
  return header_text(m) + free_blocks_text(m) + leaf_group_tables_text(m) + outside_text(m) +
         running_jobs_text(m) + waiting_jobs_text(m) + notes_text(m) + congestion_text(m);
}

std::string show_job_text(const ShowModel &m, uint32_t id) {
  const ShowJob &j = job_or_throw(m, id);
  const Topology &t = *m.topo;
  std::string out = fmt::format("Job {} ({}, user {}, name {}, partition {})\n", j.slurm.job_id, j.slurm.state,
                                j.slurm.user.empty() ? "-" : j.slurm.user, j.slurm.name.empty() ? "-" : j.slurm.name,
                                j.slurm.partition.empty() ? "-" : j.slurm.partition);
  out += fmt::format("Topology: {} ({})\n", m.topology_file, short_hash(t.hash));
  out += job_layout_text(m, j);
  if (!j.holds_nodes) return out + job_without_nodes_text(m, j);
  out += fmt::format("Nodes: {} ({} in {} leaf group(s))\n", j.slurm.nodes, j.hosts.size(), j.leaf_groups.size());
  if (j.status) {
    out += "Placement: " + (j.status->placement.empty() ? std::string("-") : j.status->placement);
    if (!j.status->reason.empty()) out += " (" + j.status->reason + ")";
    if (j.status->phase == JobPhase::Placed) out += fmt::format(", {} ago", age(m.now - j.status->since));
    out += "\n";
  }
  out += rank_order_check_text(m, j);
  if (m.hash_mismatch)
    out += "WARNING: the status file was written with topology " + short_hash(m.status->topology_hash) + ", not " +
           short_hash(t.placement_hash) + " (" + m.topology_file + ")\n";
  out += job_nodes_table(m, j);
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

}  // namespace topoaware
