// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster.hpp"

#include <algorithm>
#include <stdexcept>

#include "generator.hpp"
#include "nvlink.hpp"
#include "topology_json.hpp"

namespace topoaware::sim {

namespace {

// Slurm's topology/block as topoaware's topology.yaml gives it on a fabric with NVLink domains
// (report/topology_yaml.cpp): one base block per domain, in the order of its first host, block
// sizes base * 2^k up to the number of blocks. Domains smaller than the base are left out of the
// blocks there; the generated families have equal domains only.
void nvlink_blocks(Cluster &c) {
  std::vector<const NvlinkDomain *> order;
  for (const NvlinkDomain &d : c.topo.nvlink_domains) order.push_back(&d);
  std::sort(order.begin(), order.end(),
            [](const NvlinkDomain *a, const NvlinkDomain *b) { return a->hosts.front() < b->hosts.front(); });
  c.blocks.clear();
  c.host_block.assign(size_t(c.nodes), -1);
  for (const NvlinkDomain *d : order) {
    std::vector<int> b = d->hosts;
    std::sort(b.begin(), b.end());
    for (int h : b) c.host_block[size_t(h)] = int(c.blocks.size());
    c.blocks.push_back(std::move(b));
  }
  c.bblock_node_cnt = int(c.blocks.front().size());
  c.block_levels.assign(16, false);
  for (size_t k = 0, v = 1; v <= c.blocks.size() && k < 16; ++k, v *= 2) c.block_levels[k] = true;
}

void finish(Cluster &c) {
  c.index = std::make_unique<TopoIndex>(c.topo);
  c.nodes = c.index->host_count();
  build_slurm_view(*c.index, c);
  if (!c.topo.nvlink_domains.empty()) {
    c.gpus_per_node = c.topo.nvlink_domains.front().gpus_per_node;
    nvlink_blocks(c);
    c.flat_topo = c.topo;
    c.flat_topo.nvlink_domains.clear();
    for (Host &h : c.flat_topo.hosts) h.nvlink_domain = -1;
    c.flat_index = std::make_unique<TopoIndex>(c.flat_topo);
  }
}

// Two levels, one cable from every leaf to every spine (none when there is one leaf).
FatTreeSpec two_level(int leaves, int hosts_per_leaf, int uplinks) {
  FatTreeSpec s;
  s.levels = 2;
  s.leaves = leaves;
  s.hosts_per_leaf = hosts_per_leaf;
  s.spines = uplinks;
  s.uplinks_per_leaf = leaves == 1 ? 0 : uplinks;
  return s;
}

}  // namespace

std::unique_ptr<Cluster> make_cluster(const std::string &family, int nodes) {
  auto c = std::make_unique<Cluster>();
  c->family = family;
  c->name = family + "-" + std::to_string(nodes);
  Fabric f;
  if (family == "ft2-1to1" || family == "ft2-2to1") {
    f = generate_fat_tree(two_level(nodes / 32, 32, family == "ft2-1to1" ? 32 : 16));
  } else if (family == "ft2-2to1-8") {
    // The fabric of the real-slurmctld replays (bench/slurm_replay.sh): 8-host leaves with 4
    // uplinks, where a rank order meets few uplinks.
    f = generate_fat_tree(two_level(nodes / 8, 8, 4));
  } else if (family == "ft3-7to1") {
    // Pods of 8 leaves x 32 hosts; 28 leaf uplinks (32:28 ~ 1.14:1), 4 spines per pod with 8
    // core uplinks each: 56 down / 8 up = 7:1 above the pods.
    FatTreeSpec s;
    s.levels = 3;
    s.leaves = nodes / 32;
    s.hosts_per_leaf = 32;
    s.uplinks_per_leaf = 28;
    s.spines = 4;
    s.leaves_per_pod = 8;
    s.cores = 16;
    s.core_uplinks_per_spine = 8;
    f = generate_fat_tree(s);
  } else if (family == "rail8") {
    RailSpec s;
    s.rails = 8;
    s.units = nodes / 32;
    s.hosts_per_unit = 32;
    s.spines_per_rail = 16;
    s.uplinks_per_leaf = 32;
    f = generate_rail(s);
  } else if (family == "dfly") {
    DragonflySpec s;  // balanced (a = 2p = 2h): 16 routers x 8 hosts, 8 global links per router
    s.groups = nodes / 128;
    s.routers_per_group = 16;
    s.hosts_per_router = 8;
    s.global_links_per_router = 8;
    f = generate_dragonfly(s);
  } else if (family == "nvl72" || family == "nvl72-2to1") {
    // GB200/GB300 NVL72: every 4-GPU tray has 4 NICs, one per GPU, each on its own rail (as in
    // NVIDIA's DGX SuperPOD design), so NCCL's rings stay on their rail. A rail leaf serves two
    // racks (36 trays, whole domains under each leaf) and uplinks to its rail's spines, 36 cables
    // (1:1, non-blocking like the reference design) or 18 (2:1, a cost-cut tree).
    if (nodes % 36 != 0) throw std::invalid_argument(c->name + ": NVL72 clusters come in pairs of 18-tray racks");
    RailSpec s;
    s.rails = 4;
    s.units = nodes / 36;
    s.hosts_per_unit = 36;
    s.uplinks_per_leaf = family == "nvl72" ? 36 : 18;
    s.spines_per_rail = s.uplinks_per_leaf / 2;
    s.speed = "NDR";
    f = generate_rail(s);
  } else {
    throw std::invalid_argument("unknown topology family " + family);
  }
  f.finish();
  c->topo = classify(f, {});
  if (family.rfind("nvl72", 0) == 0)
    apply_nvlink_domains(c->topo, synthetic_nvlink_domains(c->topo, 18, 4), nullptr, nullptr);
  finish(*c);
  if (c->nodes != nodes)
    throw std::invalid_argument(c->name + ": classified " + std::to_string(c->nodes) + " hosts, not " +
                                std::to_string(nodes));
  return c;
}

std::unique_ptr<Cluster> load_cluster(const std::string &family, int nodes, const std::string &topology_json) {
  auto c = std::make_unique<Cluster>();
  c->family = family;
  c->name = family + "-" + std::to_string(nodes);
  c->topo = load_topology_file(topology_json);
  finish(*c);
  if (c->nodes != nodes)
    throw std::invalid_argument(topology_json + ": " + std::to_string(c->nodes) + " hosts, not " + std::to_string(nodes));
  return c;
}

std::unique_ptr<Cluster> make_small_cluster(int leaves, int per_leaf) {
  auto c = std::make_unique<Cluster>();
  c->family = "small-ft2-2to1";
  c->name = "small-ft2-2to1-" + std::to_string(leaves * per_leaf);
  Fabric f = generate_fat_tree(two_level(leaves, per_leaf, per_leaf / 2));
  f.finish();
  c->topo = classify(f, {});
  finish(*c);
  return c;
}

}  // namespace topoaware::sim
