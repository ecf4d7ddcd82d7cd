// SPDX-License-Identifier: GPL-2.0-or-later
// Partitions and Slurm's topologies (part_topology.hpp).
#include "part_topology.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "hostlist.hpp"

namespace topoaware {

namespace {

// A host list of Slurm's, expanded; a bad one (never from a running slurmctld) noted, not thrown.
std::vector<std::string> expand_or_note(const std::string &list, const std::string &what,
                                        std::vector<std::string> &notes) {
  if (list.empty()) return {};
  try {
    return hostlist_expand(list);
  } catch (const std::exception &e) {
    notes.push_back(what + ": unreadable host list (" + e.what() + ")");
    return {};
  }
}

// At most a few names of a list in a log line: the line stays short on any cluster.
std::string some(const std::vector<std::string> &names) {
  std::string s = hostlist_compress(names);
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}

std::string plural(size_t n, const char *one, const char *many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// tree: each Slurm leaf switch should hold the hosts of one leaf group, and each leaf group
// sit under one switch. Only the hosts topology.json knows count.
void check_tree(const Topology &topo, const SlurmTopo &st, const std::vector<std::vector<int>> &rec_hosts,
                std::vector<std::string> &notes) {
  std::map<int, std::set<size_t>> group_switches;  // leaf group -> Slurm switches holding its hosts
  std::vector<std::string> mixed;
  for (size_t r = 0; r < st.records.size(); r++) {
    // Slurm lists under every switch all the nodes below it: only its leaf switches (level 0)
    // group hosts the way topology.json's leaf groups do.
    if (st.records[r].level != 0) continue;
    std::set<int> groups;
    for (int h : rec_hosts[r]) {
      const int g = topo.hosts[static_cast<size_t>(h)].leaf_group;
      groups.insert(g);
      group_switches[g].insert(r);
    }
    if (groups.size() > 1) mixed.push_back(st.records[r].name);
  }
  std::vector<std::string> split;
  for (const auto &[g, sws] : group_switches)
    if (sws.size() > 1 && g >= 0 && static_cast<size_t>(g) < topo.leaf_groups.size() &&
        !topo.leaf_groups[static_cast<size_t>(g)].leaves.empty())
      split.push_back(topo.switches[static_cast<size_t>(topo.leaf_groups[static_cast<size_t>(g)].leaves[0])].name);
  if (!mixed.empty())
    notes.push_back(plural(mixed.size(), "Slurm switch holds", "Slurm switches hold") +
                    " hosts of several topology.json leaf groups (" + some(mixed) + ")");
  if (!split.empty())
    notes.push_back(plural(split.size(), "topology.json leaf group is", "topology.json leaf groups are") +
                    " split over several Slurm switches (leaves " + some(split) + ")");
}

// block: each base block should lie inside one unit (an NVLink domain when topology.json has
// them, else a leaf group) and hold as many nodes as the units do.
void check_block(const Topology &topo, const SlurmTopo &st, const std::vector<std::vector<int>> &rec_hosts,
                 std::vector<std::string> &notes) {
  const bool domains = !topo.nvlink_domains.empty();
  const char *unit = domains ? "NVLink domain" : "leaf group";
  auto unit_of = [&](int h) {
    const Host &x = topo.hosts[static_cast<size_t>(h)];
    // A host in no domain is its own: a negative key of its own.
    return domains ? (x.nvlink_domain >= 0 ? x.nvlink_domain : -2 - h) : x.leaf_group;
  };
  std::vector<std::string> straddle;
  std::set<unsigned> bsizes;
  for (size_t r = 0; r < st.records.size(); r++) {
    if (st.records[r].aggregated) continue;
    if (st.records[r].size) bsizes.insert(st.records[r].size);
    std::set<int> units;
    for (int h : rec_hosts[r]) units.insert(unit_of(h));
    if (units.size() > 1) straddle.push_back(st.records[r].name);
  }
  if (!straddle.empty())
    notes.push_back(plural(straddle.size(), "base block spans", "base blocks span") + " several topology.json " +
                    unit + "s (" + some(straddle) + ")");
  // The units' usual size: the most frequent host count.
  std::map<size_t, size_t> freq;
  if (domains)
    for (const auto &d : topo.nvlink_domains) freq[d.hosts.size()]++;
  else
    for (const auto &g : topo.leaf_groups) freq[g.hosts.size()]++;
  size_t usual = 0, best = 0;
  for (const auto &[sz, n] : freq)
    if (n > best) best = n, usual = sz;
  if (usual && bsizes.size() == 1 && *bsizes.begin() != usual)
    notes.push_back("base blocks hold " + std::to_string(*bsizes.begin()) + " nodes, topology.json's " + unit +
                    "s " + std::to_string(usual));
  else if (bsizes.size() > 1)
    notes.push_back("base blocks of several sizes");
}

}  // namespace

const char *slurm_topo_kind_name(SlurmTopoKind k) {
  switch (k) {
    case SlurmTopoKind::Tree: return "tree";
    case SlurmTopoKind::Block: return "block";
    case SlurmTopoKind::Flat: return "flat";
    case SlurmTopoKind::Ring: return "ring";
    case SlurmTopoKind::Torus: return "torus";
    case SlurmTopoKind::Unknown: break;
  }
  return "unknown";
}

PartitionTopoVerdict decide_partition_topology(const Topology &topo, const PartitionTopoInput &in) {
  PartitionTopoVerdict v;
  auto &notes = v.disagreements;

  // The partition's nodes in topology.json.
  std::vector<std::string> missing;
  size_t known = 0;
  const auto pnodes = expand_or_note(in.nodes, "the partition's nodes", notes);
  for (const auto &n : pnodes) {
    if (topo.host_index(n) >= 0) known++;
    else missing.push_back(n);
  }
  if (!pnodes.empty() && !known) {
    v.use = PartitionTopoUse::Plain;
    v.rule = "none of its " + plural(pnodes.size(), "node is", "nodes are") +
             " in topology.json: plain select/cons_tres";
    return v;
  }
  if (!missing.empty())
    notes.push_back(std::to_string(missing.size()) + " of its " + std::to_string(pnodes.size()) +
                    " nodes are not in topology.json (" + some(missing) + ")");

  const SlurmTopo *st = in.topo;
  if (!st || !st->lookup_error.empty()) {
    v.rule = "its Slurm topology cannot be read (" + (st ? st->lookup_error : std::string("none")) +
             "): placed by topology.json as without partition topologies";
    return v;
  }
  switch (st->kind) {
    case SlurmTopoKind::Flat:
      if (st->cluster_default && st->only_one) {
        v.rule = "Slurm has no topology (flat): placed by topology.json's leaf groups and pods";
        return v;
      }
      v.use = PartitionTopoUse::Plain;
      v.rule = "flat: plain select/cons_tres (the partition asks for no topology)";
      return v;
    case SlurmTopoKind::Ring:
    case SlurmTopoKind::Torus:
      v.use = PartitionTopoUse::Plain;
      v.rule = std::string(slurm_topo_kind_name(st->kind)) +
               ": plain select/cons_tres (topology.json describes a switched fabric, not a " +
               slurm_topo_kind_name(st->kind) + ")";
      return v;
    case SlurmTopoKind::Unknown:
      v.rule = "a Slurm topology kind topoaware does not know: placed by topology.json as without partition "
               "topologies";
      return v;
    case SlurmTopoKind::Tree:
    case SlurmTopoKind::Block:
      break;
  }

  // tree and block: the Slurm topology's hosts, as topology.json's host indices.
  std::vector<std::vector<int>> rec_hosts(st->records.size());
  size_t slurm_hosts = 0, slurm_known = 0;
  for (size_t r = 0; r < st->records.size(); r++) {
    const auto &rec = st->records[r];
    if (st->kind == SlurmTopoKind::Block && rec.aggregated) continue;
    for (const auto &n : expand_or_note(rec.nodes, std::string("Slurm record ") + rec.name, notes)) {
      slurm_hosts++;
      const int h = topo.host_index(n);
      if (h >= 0) rec_hosts[r].push_back(h), slurm_known++;
    }
  }
  if (slurm_hosts && !slurm_known) {
    v.use = PartitionTopoUse::Plain;
    v.rule = std::string(slurm_topo_kind_name(st->kind)) +
             ": plain select/cons_tres (none of the Slurm topology's hosts are in topology.json)";
    return v;
  }
  if (st->kind == SlurmTopoKind::Tree) {
    v.rule = "tree: placed by topology.json's leaf groups and pods";
    check_tree(topo, *st, rec_hosts, notes);
  } else {
    v.rule = "block: placed by topology.json's leaf groups and pods, each candidate set given to "
             "select/cons_tres with the partition's blocks, which keeps the job inside them; ranks ordered by "
             "topology.json";
    check_block(topo, *st, rec_hosts, notes);
  }
  return v;
}

}  // namespace topoaware
