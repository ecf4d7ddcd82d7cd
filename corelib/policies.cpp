// SPDX-License-Identifier: GPL-2.0-or-later
#include "policies.hpp"

#include <algorithm>
#include <stdexcept>

namespace topoaware {

void build_slurm_view(const TopoIndex &ix, SlurmFabricView &c) {
  const int nodes = ix.host_count();
  // Leaf groups in canonical order (pod, then leaf group index as TopoIndex lists them).
  std::vector<int> lgs;
  for (int p = 0; p < ix.pod_count(); ++p)
    for (int g : ix.pod_leaf_groups(p)) lgs.push_back(g);
  // --- topology/tree switch table, in the order topology.conf lists it: leaves, pods, root.
  c.sw.clear();
  c.host_leaf_switch.assign(size_t(nodes), -1);
  std::vector<int> lg_sw(size_t(ix.leaf_group_count()), -1);
  for (int g : lgs) {
    SlurmSwitch s;
    s.level = 0;
    s.nodes = ix.leaf_group_hosts(g);
    std::sort(s.nodes.begin(), s.nodes.end());
    lg_sw[size_t(g)] = int(c.sw.size());
    for (int h : s.nodes) c.host_leaf_switch[size_t(h)] = int(c.sw.size());
    c.sw.push_back(std::move(s));
  }
  const int nleaf = int(c.sw.size());
  std::vector<int> pod_sw;
  if (ix.pod_count() > 1) {
    for (int p = 0; p < ix.pod_count(); ++p) {
      SlurmSwitch s;
      s.level = 1;
      for (int g : ix.pod_leaf_groups(p)) {
        c.sw[size_t(lg_sw[size_t(g)])].parent = int(c.sw.size());
        for (int h : ix.leaf_group_hosts(g)) s.nodes.push_back(h);
      }
      std::sort(s.nodes.begin(), s.nodes.end());
      pod_sw.push_back(int(c.sw.size()));
      c.sw.push_back(std::move(s));
    }
  }
  if (nleaf > 1) {
    SlurmSwitch root;
    root.level = ix.pod_count() > 1 ? 2 : 1;
    const int r = int(c.sw.size());
    for (int h = 0; h < nodes; ++h) root.nodes.push_back(h);
    root.parent = r;
    if (pod_sw.empty())
      for (int i = 0; i < nleaf; ++i) c.sw[size_t(i)].parent = r;
    else
      for (int p : pod_sw) c.sw[size_t(p)].parent = r;
    c.sw.push_back(std::move(root));
  } else if (nleaf == 1) {
    c.sw[0].parent = 0;
  }
  // Distances (topology_tree.c:487-551): 0 to itself, 1 parent<->child, Floyd-Warshall.
  const size_t n = c.sw.size();
  c.sw_dist.assign(n, std::vector<unsigned>(n, SlurmFabricView::kInf));
  for (size_t i = 0; i < n; ++i) {
    c.sw_dist[i][i] = 0;
    const int p = c.sw[i].parent;
    if (p >= 0 && size_t(p) != i) c.sw_dist[i][size_t(p)] = c.sw_dist[size_t(p)][i] = 1;
  }
  for (size_t k = 0; k < n; ++k)
    for (size_t i = 0; i < n; ++i)
      if (c.sw_dist[i][k] != SlurmFabricView::kInf)
        for (size_t j = 0; j < n; ++j)
          if (c.sw_dist[k][j] != SlurmFabricView::kInf && c.sw_dist[i][j] > c.sw_dist[i][k] + c.sw_dist[k][j])
            c.sw_dist[i][j] = c.sw_dist[i][k] + c.sw_dist[k][j];
  // --- topology/block: one base block per leaf group, pod by pod.
  c.blocks.clear();
  c.host_block.assign(size_t(nodes), -1);
  size_t base = 0;
  for (int g : lgs) {
    std::vector<int> b = ix.leaf_group_hosts(g);
    std::sort(b.begin(), b.end());
    for (int h : b) c.host_block[size_t(h)] = int(c.blocks.size());
    base = base ? std::min(base, b.size()) : b.size();
    c.blocks.push_back(std::move(b));
  }
  c.bblock_node_cnt = int(base);
  size_t min_pod = size_t(-1);
  for (int p = 0; p < ix.pod_count(); ++p) min_pod = std::min(min_pod, ix.pod_leaf_groups(p).size());
  c.block_levels.assign(16, false);
  for (size_t k = 0, v = 1; v <= min_pod && k < 16; ++k, v *= 2) c.block_levels[k] = true;
}

bool first_fit_select(const std::vector<uint8_t> &free, int nodes, std::vector<int> &out) {
  out.clear();
  for (size_t h = 0; h < free.size() && int(out.size()) < nodes; ++h)
    if (free[h]) out.push_back(int(h));
  return int(out.size()) == nodes;
}

namespace {

class FirstFitPolicy : public PlacementPolicy {
 public:
  explicit FirstFitPolicy(const TopoIndex &ix) : PlacementPolicy(ix) {}
  const char *name() const override { return "first-fit"; }
  bool place(const PolicyRequest &req, const std::vector<uint8_t> &free, PolicyChoice &out) override {
    const bool ok = first_fit_select(free, int(req.job.nodes), out.nodes);
    if (!ok) out.nodes.clear();
    out.status = ok ? PlaceStatus::Ideal : PlaceStatus::NoNodes;
    return ok;
  }
};

class SlurmTreePolicy : public PlacementPolicy {
 public:
  SlurmTreePolicy(const TopoIndex &ix, const SlurmFabricView &v) : PlacementPolicy(ix), v_(&v) {}
  const char *name() const override { return "slurm-tree"; }
  bool place(const PolicyRequest &req, const std::vector<uint8_t> &free, PolicyChoice &out) override {
    const bool ok = slurm_tree_select(*v_, free, int(req.job.nodes), out.nodes, &out.leaf_switches);
    out.status = ok ? PlaceStatus::Ideal : PlaceStatus::NoNodes;
    return ok;
  }

 private:
  const SlurmFabricView *v_;
};

class SlurmBlockPolicy : public PlacementPolicy {
 public:
  SlurmBlockPolicy(const TopoIndex &ix, const SlurmFabricView &v) : PlacementPolicy(ix), v_(&v) {}
  const char *name() const override { return "slurm-block"; }
  bool place(const PolicyRequest &req, const std::vector<uint8_t> &free, PolicyChoice &out) override {
    const bool ok = slurm_block_select(*v_, free, int(req.job.nodes), req.segment, out.nodes);
    out.status = ok ? PlaceStatus::Ideal : PlaceStatus::NoNodes;
    return ok;
  }

 private:
  const SlurmFabricView *v_;
};

// The engine on whole free hosts. Buffers are kept between calls so that a decision allocates
// nothing once they have grown.
class TopoawarePolicy : public PlacementPolicy {
 public:
  explicit TopoawarePolicy(const TopoIndex &ix) : PlacementPolicy(ix), placer_(ix) {}
  const char *name() const override { return "topoaware"; }
  bool place(const PolicyRequest &req, const std::vector<uint8_t> &free, PolicyChoice &out) override {
    hosts_.clear();
    for (size_t h = 0; h < free.size(); ++h)
      if (free[h]) hosts_.push_back(int(h));
    gpus_.assign(hosts_.size(), req.job.gpus_per_node);
    out.status = placer_.place(hosts_.data(), gpus_.data(), hosts_.size(), req.job, req.mode, res_);
    out.nodes = res_.nodes;
    out.leaf_switches = int(res_.quality.leaf_groups);
    out.quality = res_.quality;
    out.candidates = res_.candidates;
    return out.status == PlaceStatus::Ideal || out.status == PlaceStatus::Fallback;
  }
  PlaceStatus place_slurm(const SlurmPolicyRequest &req, PlaceResult &out) override {
    return placer_.place_slurm(*req.map, req.usable, req.nbits, req.free_gpus, *req.job, req.mode, out);
  }

 private:
  Placer placer_;
  std::vector<int> hosts_;
  std::vector<uint32_t> gpus_;
  PlaceResult res_;
};

}  // namespace

PlaceStatus PlacementPolicy::place_slurm(const SlurmPolicyRequest &, PlaceResult &) {
  throw std::logic_error(std::string("policy ") + name() + " does not place in Slurm's node table");
}

std::unique_ptr<PlacementPolicy> make_placement_policy(const std::string &name, const TopoIndex &ix,
                                                       const SlurmFabricView &view) {
  if (name == "slurm-tree") return std::make_unique<SlurmTreePolicy>(ix, view);
  if (name == "slurm-block") return std::make_unique<SlurmBlockPolicy>(ix, view);
  return make_placement_policy(name, ix);
}

std::unique_ptr<PlacementPolicy> make_placement_policy(const std::string &name, const TopoIndex &ix) {
  if (name == "first-fit") return std::make_unique<FirstFitPolicy>(ix);
  if (name == "topoaware") return std::make_unique<TopoawarePolicy>(ix);
  return nullptr;
}

const std::vector<std::string> &placement_policy_names() {
  static const std::vector<std::string> names = {"first-fit", "slurm-tree", "slurm-block", "topoaware"};
  return names;
}

}  // namespace topoaware
