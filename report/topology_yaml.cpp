// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm topology.yaml (Slurm 25.05 and later; read instead of topology.conf when both exist): two
// named topologies, the fabric as topology/tree ("fabric", cluster_default) and topology/block
// ("nvlink": one block per multi-node NVLink domain, or "leaves": one per leaf group, as the block
// topology.conf). Partitions pick one with Topology= on their slurm.conf line.
//
// The tree and the leaf blocks are the topology.conf outputs read back line by line, so that both
// files always describe the same switches and blocks (and the same choices of what is left out).
// Schema: Slurm's topology.yaml(5) and src/interfaces/topology.c (CONF_PARSE of
// TOPOLOGY_CONF_ARRAY): a list of {topology, cluster_default, tree: {switches: [{switch, children,
// nodes}]}, block: {block_sizes: [int], blocks: [{block, nodes}]}}. Every string is written
// double-quoted with escapes, so no host or switch name can change the document's structure.
#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "hostlist.hpp"
#include "outputs.hpp"

namespace topoaware {

std::string yaml_quote(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      o += buf;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

namespace {

// A comment line of a topology.conf, as a YAML comment (a newline cannot be in it: lines are split).
std::string comment(const std::string &indent, const std::string &line) { return indent + line + "\n"; }

// "Key=Value Key=Value" of a topology.conf line (values hold no blanks: names and host lists).
std::map<std::string, std::string> fields(const std::string &line) {
  std::map<std::string, std::string> f;
  size_t p = 0;
  while (p < line.size()) {
    size_t e = line.find(' ', p);
    if (e == std::string::npos) e = line.size();
    const std::string w = line.substr(p, e - p);
    p = e + 1;
    if (w.empty()) continue;
    size_t eq = w.find('=');
    if (eq == std::string::npos) throw std::logic_error("topology.conf line without Key=Value: " + line);
    f[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return f;
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p < text.size()) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    out.push_back(text.substr(p, e - p));
    p = e + 1;
  }
  return out;
}

struct Block {
  std::string name, nodes;
  size_t count = 0;
};

std::string sizes_text(const std::vector<int> &v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// The base, then doubling while the aggregate still fits in the blocks written (Slurm's limit: at
// most base * 2^15).
std::vector<int> doubling_sizes(int base, size_t blocks) {
  std::vector<int> v{base};
  for (size_t n = 2; n <= blocks && n <= (size_t(1) << 15); n *= 2) v.push_back(base * static_cast<int>(n));
  return v;
}

// A topology.conf header line the YAML writes its own way (its title, hash and advice).
bool conf_header(const std::string &l) {
  return l.rfind("# Slurm topology.conf", 0) == 0 || l.rfind("# Topology hash", 0) == 0 ||
         l.rfind("# Regenerate", 0) == 0;
}

// The tree: topology.conf's SwitchName lines as the "fabric" topology.
std::string tree_yaml(const Topology &topo) {
  std::string out = "- topology: " + yaml_quote("fabric") + "\n  cluster_default: true\n  tree:\n    switches:\n";
  bool any_switch = false;
  for (const std::string &l : lines_of(to_topology_conf_tree(topo))) {
    if (l.empty()) continue;
    if (l[0] == '#') {
      if (conf_header(l)) continue;
      out += comment("      ", l);
      continue;
    }
    auto f = fields(l);
    if (!f.count("SwitchName")) throw std::logic_error("unexpected topology.conf line: " + l);
    out += "      - switch: " + yaml_quote(f["SwitchName"]) + "\n";
    if (f.count("Switches")) out += "        children: " + yaml_quote(f["Switches"]) + "\n";
    if (f.count("Nodes")) out += "        nodes: " + yaml_quote(f["Nodes"]) + "\n";
    any_switch = true;
  }
  if (!any_switch) throw std::invalid_argument("topology.yaml: no leaf switch with compute hosts: nothing to write");
  return out;
}

// The blocks of the block topology, the comments that say how they were chosen, and their sizes.
struct YamlBlocks {
  std::vector<Block> blocks;
  std::vector<std::string> notes;
  std::vector<int> sizes;

  // One block per multi-node NVLink domain, domains smaller than the base block size left out.
  void from_nvlink(const Topology &topo, const std::vector<int> &block_sizes) {
    // Domains in the order of their first host, so that consecutive blocks (what Slurm aggregates)
    // are neighbours in the host names (racks under the same leaves, as they are usually named).
    std::vector<size_t> order(topo.nvlink_domains.size());
    for (size_t d = 0; d < order.size(); d++) order[d] = d;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return topo.nvlink_domains[a].hosts.front() < topo.nvlink_domains[b].hosts.front();
    });
    const size_t base = block_sizes.empty() ? smallest_usual_domain(topo) : static_cast<size_t>(block_sizes[0]);
    std::vector<std::string> small, alone;
    for (size_t d : order) {
      const NvlinkDomain &nd = topo.nvlink_domains[d];
      std::vector<std::string> names;
      for (int h : nd.hosts) names.push_back(topo.hosts[static_cast<size_t>(h)].name);
      Block b{"nvl" + std::to_string(d), hostlist_compress(names), names.size()};
      if (b.count < base)
        small.push_back(b.name);
      else
        blocks.push_back(b);
    }
    for (const auto &h : topo.hosts)
      if (h.nvlink_domain < 0) alone.push_back(h.name);
    notes.push_back("# One block per multi-node NVLink domain (nvlN: domain N of topology.json), in host");
    notes.push_back("# name order. Base block size " + std::to_string(base) +
                    (block_sizes.empty() ? " = the smallest domain" : " as given") + ".");
    if (!small.empty())
      notes.push_back("# Left out, domains smaller than the base block size: " + hostlist_compress(small));
    if (!alone.empty()) notes.push_back("# Left out, hosts in no NVLink domain: " + hostlist_compress(alone));
    sizes = block_sizes.empty() ? doubling_sizes(static_cast<int>(base), blocks.size()) : block_sizes;
  }

  // The base block size of NVLink domains: the smallest domain of at least half the median size
  // (a domain much smaller than the others, such as a stray pair, does not set it).
  static size_t smallest_usual_domain(const Topology &topo) {
    std::vector<size_t> counts;
    for (const auto &d : topo.nvlink_domains) counts.push_back(d.hosts.size());
    std::vector<size_t> sorted = counts;
    std::sort(sorted.begin(), sorted.end());
    const size_t median = sorted[sorted.size() / 2];
    size_t base = 0;
    for (size_t c : counts)
      if (2 * c >= median && (base == 0 || c < base)) base = c;
    return base;
  }

  // The leaf groups of the block topology.conf, read back; with sizes given, the groups smaller
  // than their base left out.
  void from_leaf_groups(const Topology &topo, const std::vector<int> &block_sizes) {
    for (const std::string &l : lines_of(to_topology_conf_block(topo))) {
      if (l.empty()) continue;
      if (l[0] == '#') {
        if (conf_header(l)) continue;
        notes.push_back(l);
        continue;
      }
      auto f = fields(l);
      if (f.count("BlockSizes")) {
        const std::string &v = f["BlockSizes"];
        for (size_t p = 0; p < v.size();) {
          size_t e = v.find(',', p);
          if (e == std::string::npos) e = v.size();
          sizes.push_back(std::stoi(v.substr(p, e - p)));
          p = e + 1;
        }
      } else if (f.count("BlockName")) {
        blocks.push_back({f["BlockName"], f["Nodes"], hostlist_expand(f["Nodes"]).size()});
      } else {
        throw std::logic_error("unexpected topology.conf line: " + l);
      }
    }
    if (block_sizes.empty()) return;
    sizes = block_sizes;
    std::vector<std::string> small;
    std::vector<Block> kept;
    for (const Block &b : blocks)
      (b.count < static_cast<size_t>(sizes[0]) ? small.push_back(b.name) : kept.push_back(b));
    blocks = kept;
    notes.push_back("# Block sizes as given (" + sizes_text(sizes) + ").");
    if (!small.empty())
      notes.push_back("# Left out, leaf groups smaller than the base block size: " + hostlist_compress(small));
  }
};

}  // namespace

void check_block_sizes(const std::vector<int> &sizes) {
  if (sizes.empty()) return;
  if (sizes[0] < 1) throw std::invalid_argument("block sizes: the base must be at least 1");
  for (size_t i = 1; i < sizes.size(); i++) {
    const long r = sizes[i] / sizes[0];
    if (sizes[i] <= sizes[i - 1] || sizes[i] % sizes[0] != 0 || (r & (r - 1)) != 0 || r > (1L << 15))
      throw std::invalid_argument("block sizes: " + std::to_string(sizes[i]) +
                                  " is not the base block size " + std::to_string(sizes[0]) +
                                  " times a power of two (at most 2^15) larger than the previous size");
  }
}

std::string to_topology_yaml(const Topology &topo, const std::vector<int> &block_sizes) {
  check_block_sizes(block_sizes);
  std::string out = "---\n";
  out += "# Slurm topology.yaml (Slurm 25.05 or newer), generated by topoaware from the InfiniBand fabric.\n";
  out += "# Topology hash: " + (topo.hash.empty() ? std::string("(not computed)") : topo.hash) + "\n";
  out += "# Regenerate it instead of editing it: an unchanged fabric gives this file byte for byte.\n";
  out += "# Partitions choose a topology with Topology=NAME on their slurm.conf line; others get\n";
  out += "# the cluster_default one (fabric).\n";
  out += tree_yaml(topo);

  // The blocks: NVLink domains, else the leaf groups of the block topology.conf.
  YamlBlocks b;
  const bool nvl = !topo.nvlink_domains.empty();
  if (nvl)
    b.from_nvlink(topo, block_sizes);
  else
    b.from_leaf_groups(topo, block_sizes);
  if (b.blocks.empty()) {
    out += "# No block of at least the base block size: no block topology.\n";
    return out;
  }
  out += "- topology: " + yaml_quote(nvl ? "nvlink" : "leaves") + "\n  cluster_default: false\n  block:\n";
  for (const auto &n : b.notes) out += comment("    ", n);
  out += "    block_sizes:\n";
  for (int s : b.sizes) out += "      - " + std::to_string(s) + "\n";
  out += "    blocks:\n";
  for (const Block &blk : b.blocks)
    out += "      - block: " + yaml_quote(blk.name) + "\n        nodes: " + yaml_quote(blk.nodes) + "\n";
  return out;
}

}  // namespace topoaware
