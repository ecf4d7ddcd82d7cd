// SPDX-License-Identifier: GPL-2.0-or-later
// Graphviz DOT of the switch graph.
//
// Layout choices: the highest level at the top (edges are written upper -- lower, which is how
// dot ranks an undirected graph), switches of one level side by side (rank=same subgraphs inside
// the innermost cluster that holds them, because dot mis-ranks rank=same subgraphs that cut across
// clusters), pods and leaf groups as clusters. Hosts are folded into their leaf as a count unless
// show_hosts is set, since 10,000 host boxes make an unreadable picture. Edge labels appear only
// where they tell something: several parallel cables, or a width/speed other than the usual one.
// Deterministic: everything is written in the Topology's canonical order.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "outputs.hpp"
#include "text.hpp"

namespace topoaware {

namespace {

std::string sw_id(size_t i) { return fmt::format("s{}", i); }
std::string host_id(size_t i) { return fmt::format("h{}", i); }

}  // namespace

namespace {

// One DOT picture being written.
class DotWriter {
 public:
  DotWriter(const Topology &topo, bool show_hosts);
  std::string write();

 private:
  std::pair<int, int> usual_cable() const;
  std::string switch_node(size_t i, const std::string &indent) const;
  std::string ranked(const std::vector<int> &sws, const std::string &indent) const;
  // Of sws, those not yet placed in a cluster, which are now.
  std::vector<int> take_unplaced(const std::vector<int> &sws);
  std::string leaf_group_cluster(size_t g, const std::string &indent);
  std::string pod_clusters();
  std::string dragonfly_clusters();
  std::string host_nodes() const;
  std::string link_line(const Link &l) const;

  const Topology &topo_;
  const bool show_hosts_;
  const size_t nsw_;
  std::unordered_map<uint64_t, size_t> sw_of_, host_of_;
  std::pair<int, int> usual_{0, 0};  // the usual (width, speed) of switch-to-switch cables
  std::vector<bool> placed_;         // switches already written inside a cluster
};

DotWriter::DotWriter(const Topology &topo, bool show_hosts)
    : topo_(topo), show_hosts_(show_hosts), nsw_(topo.switches.size()), placed_(nsw_, false) {
  for (size_t i = 0; i < nsw_; ++i) sw_of_.emplace(topo.switches[i].guid, i);
  for (size_t h = 0; h < topo.hosts.size(); ++h)
    for (const auto &p : topo.hosts[h].ports) host_of_.emplace(p.ca_guid, h);
  usual_ = usual_cable();
}

// The usual width and speed of switch-to-switch cables (most cables; ties to the faster).
std::pair<int, int> DotWriter::usual_cable() const {
  std::map<std::pair<int, int>, int> census;
  for (const Link &l : topo_.links)
    if (sw_of_.count(l.a) && sw_of_.count(l.b)) census[{l.width, static_cast<int>(l.speed)}] += l.cables();
  std::pair<int, int> usual{0, 0};
  int most = -1;
  for (const auto &[k, n] : census)
    if (n >= most) {
      most = n;
      usual = k;
    }
  return usual;
}

std::string DotWriter::switch_node(size_t i, const std::string &indent) const {
  const Switch &sw = topo_.switches[i];
  std::string label = sw.name;
  if (sw.level == 1 && !show_hosts_ && !sw.hosts.empty()) {
    label += fmt::format("\n{} host{}", sw.hosts.size(), sw.hosts.size() == 1 ? "" : "s");
    // Hosts folded into their leaf: name the NVLink domains they are in.
    std::set<int> doms;
    for (int h : sw.hosts)
      if (topo_.hosts[static_cast<size_t>(h)].nvlink_domain >= 0) doms.insert(topo_.hosts[static_cast<size_t>(h)].nvlink_domain);
    if (!doms.empty()) {
      std::string list;
      for (int d : doms) list += (list.empty() ? "" : ",") + std::to_string(d);
      label += fmt::format("\nNVLink domain{} {}", doms.size() == 1 ? "" : "s", list);
    }
  }
  std::string attrs = fmt::format("label=\"{}\"", dot_escape(label));
  if (sw.level <= 0) attrs += ", style=dashed";  // not reached from any compute host
  if (sw.level == 1) attrs += ", style=filled, fillcolor=\"#e8f0fe\"";
  return fmt::format("{}{} [{}];\n", indent, sw_id(i), attrs);
}

// Writes nodes of one cluster grouped by level, each level a rank=same subgraph.
std::string DotWriter::ranked(const std::vector<int> &sws, const std::string &indent) const {
  std::map<int, std::vector<int>> by_level;
  for (int s : sws) by_level[topo_.switches[static_cast<size_t>(s)].level].push_back(s);
  std::string o;
  for (auto it = by_level.rbegin(); it != by_level.rend(); ++it) {
    if (it->second.size() > 1) o += indent + "{ rank=same;\n";
    for (int s : it->second) o += switch_node(static_cast<size_t>(s), indent + (it->second.size() > 1 ? "  " : ""));
    if (it->second.size() > 1) o += indent + "}\n";
  }
  return o;
}

std::vector<int> DotWriter::take_unplaced(const std::vector<int> &sws) {
  std::vector<int> own;
  for (int s : sws)
    if (s >= 0 && static_cast<size_t>(s) < nsw_ && !placed_[static_cast<size_t>(s)]) {
      own.push_back(s);
      placed_[static_cast<size_t>(s)] = true;
    }
  return own;
}

std::string DotWriter::leaf_group_cluster(size_t g, const std::string &indent) {
  const LeafGroup &lg = topo_.leaf_groups[g];
  const std::vector<int> leaves = take_unplaced(lg.leaves);
  if (leaves.empty()) return std::string();
  std::string o = fmt::format("{}subgraph cluster_lg{} {{\n", indent, g);
  o += fmt::format("{}  label=\"leaf group {} ({} hosts)\"; style=rounded; color=\"#7090c0\";\n", indent, g,
                   lg.hosts.size());
  o += ranked(leaves, indent + "  ");
  o += indent + "}\n";
  return o;
}

std::string DotWriter::pod_clusters() {
  std::string out;
  for (size_t p = 0; p < topo_.pods.size(); ++p) {
    const Pod &pod = topo_.pods[p];
    out += fmt::format("  subgraph cluster_pod{} {{\n", p);
    out += fmt::format("    label=\"pod {}\"; style=dashed; color=\"#808080\";\n", p);
    out += ranked(take_unplaced(pod.switches), "    ");
    for (int g : pod.leaf_groups)
      if (g >= 0 && static_cast<size_t>(g) < topo_.leaf_groups.size())
        out += leaf_group_cluster(static_cast<size_t>(g), "    ");
    out += "  }\n";
  }
  return out;
}

// Dragonfly groups as clusters (a dragonfly has no pods); each holds the leaf groups of its
// switches and its other switches.
std::string DotWriter::dragonfly_clusters() {
  std::string out;
  for (size_t d = 0; d < topo_.dragonfly_groups.size(); ++d) {
    const DragonflyGroup &dg = topo_.dragonfly_groups[d];
    out += fmt::format("  subgraph cluster_df{} {{\n", d);
    out += fmt::format("    label=\"dragonfly group {} ({} hosts)\"; style=dashed; color=\"#808080\";\n", d,
                       dg.hosts.size());
    for (size_t g = 0; g < topo_.leaf_groups.size(); ++g) {
      const auto &lv = topo_.leaf_groups[g].leaves;
      if (!lv.empty() && std::find(dg.switches.begin(), dg.switches.end(), lv[0]) != dg.switches.end())
        out += leaf_group_cluster(g, "    ");
    }
    out += ranked(take_unplaced(dg.switches), "    ");
    out += "  }\n";
  }
  return out;
}

std::string DotWriter::host_nodes() const {
  std::string out;
  // A multi-node NVLink domain is the innermost level: a box around its hosts.
  for (size_t d = 0; d < topo_.nvlink_domains.size(); ++d) {
    const NvlinkDomain &nd = topo_.nvlink_domains[d];
    out += fmt::format("  subgraph cluster_nvl{} {{\n", d);
    out += fmt::format("    label=\"NVLink domain {} ({} x {} GPUs)\"; style=\"rounded,filled\"; color=\"#76b900\"; "
                       "fillcolor=\"#f0f8e0\"; fontsize=9;\n",
                       d, nd.hosts.size(), nd.gpus_per_node);
    for (int h : nd.hosts)
      out += fmt::format("    {} [label=\"{}\", shape=ellipse, fontsize=8];\n", host_id(static_cast<size_t>(h)),
                         dot_escape(topo_.hosts[static_cast<size_t>(h)].name));
    out += "  }\n";
  }
  for (size_t h = 0; h < topo_.hosts.size(); ++h)
    if (topo_.hosts[h].nvlink_domain < 0)
      out += fmt::format("  {} [label=\"{}\", shape=ellipse, fontsize=8];\n", host_id(h), dot_escape(topo_.hosts[h].name));
  return out;
}

// One edge, or "" for a host link when hosts are folded into their leaves.
std::string DotWriter::link_line(const Link &l) const {
  auto a = sw_of_.find(l.a), b = sw_of_.find(l.b);
  std::string ta, tb;
  bool host_link = false;
  if (a != sw_of_.end() && b != sw_of_.end()) {
    size_t x = a->second, y = b->second;
    // Upper end first, so that dot draws higher levels above.
    if (topo_.switches[y].level > topo_.switches[x].level) std::swap(x, y);
    ta = sw_id(x);
    tb = sw_id(y);
  } else if (show_hosts_) {
    auto s = a != sw_of_.end() ? a : b;
    auto h = host_of_.find(a != sw_of_.end() ? l.b : l.a);
    if (s == sw_of_.end() || h == host_of_.end()) return std::string();
    ta = sw_id(s->second);
    tb = host_id(h->second);
    host_link = true;
  } else {
    return std::string();
  }
  std::vector<std::string> parts;
  if (l.cables() > 1) parts.push_back(fmt::format("{} cables", l.cables()));
  if (!host_link && std::make_pair(l.width, static_cast<int>(l.speed)) != usual_)
    parts.push_back(fmt::format("{} {}", width_name(l.width), speed_name(l.speed)));
  std::string attrs;
  if (!parts.empty()) {
    std::string label;
    for (size_t k = 0; k < parts.size(); ++k) label += (k ? "\n" : "") + parts[k];
    attrs = fmt::format("label=\"{}\"", dot_escape(label));
  }
  if (!host_link && a != sw_of_.end() && b != sw_of_.end() &&
      topo_.switches[a->second].level == topo_.switches[b->second].level) {
    // A same-level link (an anomaly in a fat tree, normal in a dragonfly) must not push one
    // end a rank down.
    attrs += std::string(attrs.empty() ? "" : ", ") + "constraint=false";
  }
  if (l.cables() > 1)
    attrs += std::string(attrs.empty() ? "" : ", ") + fmt::format("penwidth={}", std::min(1 + l.cables() / 2, 5));
  return fmt::format("  {} -- {}{};\n", ta, tb, attrs.empty() ? "" : " [" + attrs + "]");
}

std::string DotWriter::write() {
  std::string out;
  out += "// Switch graph generated by topoaware";
  if (!topo_.hash.empty()) out += "; topology hash " + topo_.hash;
  out += "\ngraph topology {\n";
  out += "  graph [rankdir=TB, nodesep=0.3, ranksep=1.0, fontname=\"Helvetica\"];\n";
  out += "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  out += pod_clusters();
  if (topo_.pods.empty()) out += dragonfly_clusters();
  for (size_t g = 0; g < topo_.leaf_groups.size(); ++g) out += leaf_group_cluster(g, "  ");
  std::vector<int> rest;
  for (size_t s = 0; s < nsw_; ++s)
    if (!placed_[s]) rest.push_back(static_cast<int>(s));
  out += ranked(rest, "  ");
  if (show_hosts_) out += host_nodes();
  for (const Link &l : topo_.links) out += link_line(l);
  out += "}\n";
  return out;
}

}  // namespace

std::string to_dot(const Topology &topo, bool show_hosts) { return DotWriter(topo, show_hosts).write(); }

}  // namespace topoaware
