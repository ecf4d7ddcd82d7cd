// SPDX-License-Identifier: GPL-2.0-or-later
// Node-selection policies for the simulator. Every policy sees the same input: the free nodes
// (exclusive whole nodes, the cluster's GPUs each: 8, or 4 on NVL72 trays) and the job. The placements themselves are corelib's named
// policies (corelib/policies.hpp); here only what the scheduler adds: --switches and strict waits,
// --segment sizes, and the random baseline.
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "placement.hpp"
#include "sim.hpp"
#include "policies.hpp"

namespace topoaware::sim {

namespace {

// The corelib policy `name` on whole nodes; the sim's job becomes a PolicyRequest. `ix`: the
// topology the policy sees (default the cluster's).
class Named {
 public:
  Named(const Cluster &c, const char *name, const TopoIndex *ix = nullptr)
      : p_(make_placement_policy(name, ix ? *ix : *c.index, c)), gpus_(uint32_t(c.gpus_per_node)) {}
  bool place(const std::vector<uint8_t> &free, const TraceJob &job, PlaceMode mode, int segment) {
    req_.job.nodes = uint32_t(job.nodes);
    req_.job.gpus_per_node = gpus_;
    req_.job.layout = job.layout;
    req_.mode = mode;
    req_.segment = segment;
    return p_->place(req_, free, choice_);
  }
  PolicyChoice &choice() { return choice_; }

 private:
  std::unique_ptr<PlacementPolicy> p_;
  uint32_t gpus_;
  PolicyRequest req_;
  PolicyChoice choice_;
};

class FirstFit : public Policy {
 public:
  explicit FirstFit(const Cluster &c) : ff_(c, "first-fit") {}
  std::string name() const override { return "firstfit"; }
  bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double,
              std::vector<int> &out) override {
    out.clear();
    if (free_count < job.nodes) return false;
    ff_.place(free, job, PlaceMode::Prefer, 0);
    out.swap(ff_.choice().nodes);
    return true;
  }

 private:
  Named ff_;
};

class Random : public Policy {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "random"; }
  bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double,
              std::vector<int> &out) override {
    out.clear();
    if (free_count < job.nodes) return false;
    pool_.clear();
    for (size_t h = 0; h < free.size(); ++h)
      if (free[h]) pool_.push_back(int(h));
    for (int k = 0; k < job.nodes; ++k) {  // partial Fisher-Yates
      std::uniform_int_distribution<size_t> d(size_t(k), pool_.size() - 1);
      std::swap(pool_[size_t(k)], pool_[d(rng_)]);
    }
    out.assign(pool_.begin(), pool_.begin() + job.nodes);
    std::sort(out.begin(), out.end());  // Slurm hands nodes to ranks in node-table order
    return true;
  }

 private:
  std::mt19937_64 rng_;
  std::vector<int> pool_;
};

// Slurm 22.05 topology/tree best fit; with --switches=N@wait, N = the job's ideal leaf count
// ceil(nodes / leaf size): job_test.c:2698-2723 sets best_switch = false when the allocation
// spans more leaf switches than requested and the job has waited less than wait4switch, and
// cons_common/job_test.c:947 then fails the test (the job stays pending).
class SlurmTree : public Policy {
 public:
  SlurmTree(const Cluster &c, double wait) : c_(&c), tree_(c, "slurm-tree"), wait_(wait) {}
  std::string name() const override { return wait_ > 0 ? "slurm-tree-switches" : "slurm-tree"; }
  bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double waited,
              std::vector<int> &out) override {
    if (free_count < job.nodes) return false;
    const bool ok = tree_.place(free, job, PlaceMode::Prefer, 0);
    out.swap(tree_.choice().nodes);
    if (!ok) return false;
    const int leaves = tree_.choice().leaf_switches;
    if (wait_ > 0) {
      const int leaf = c_->bblock_node_cnt;
      const int req_switch = (job.nodes + leaf - 1) / leaf;
      if (waited < wait_ && leaves > req_switch) return false;
    }
    return true;
  }
  double retry_after() const override { return wait_; }

 private:
  const Cluster *c_;
  Named tree_;
  double wait_;
};

// Slurm 24.11 topology/block, without or with --segment. Segment size a user would give for a
// Megatron (tp-cp-ep-dp-pp) job: whole DP rings (dp nodes at tp = 8) grouped as far as a base
// block holds them (the largest divisor of the job's nodes that is a multiple of dp and at most
// the base block); for rings larger than a base block, the largest divisor of dp that fits
// (24.11 refuses segments larger than the base block, eval_nodes_block.c:231).
class SlurmBlock : public Policy {
 public:
  SlurmBlock(const Cluster &c, bool segment) : c_(&c), block_(c, "slurm-block"), segment_(segment) {}
  std::string name() const override { return segment_ ? "slurm-block-segment" : "slurm-block"; }
  static int segment_for(int nodes, int dp, int bb) {
    if (dp <= bb) {
      int best = dp;
      for (int s = dp; s <= std::min(nodes, bb); s += dp)
        if (nodes % s == 0) best = s;
      return best;
    }
    for (int s = bb; s >= 1; --s)
      if (dp % s == 0) return s;
    return 1;
  }
  bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double,
              std::vector<int> &out) override {
    if (free_count < job.nodes) return false;
    const int seg = segment_ ? segment_for(job.nodes, int(job.layout.dp), c_->bblock_node_cnt) : 0;
    const bool ok = block_.place(free, job, PlaceMode::Prefer, seg);
    out.swap(block_.choice().nodes);
    return ok;
  }

 private:
  const Cluster *c_;
  Named block_;
  bool segment_;
};

class Topoaware : public Policy {
 public:
  Topoaware(const Cluster &c, bool strict, double wait)
      : engine_(c, "topoaware"), tree_(c, "slurm-tree"), strict_(strict), wait_(wait) {}
  std::string name() const override { return strict_ ? "topoaware-strict" : "topoaware"; }
  bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double waited,
              std::vector<int> &out) override {
    if (free_count < job.nodes) return false;
    // A job without a layout: the select plugin hands it to cons_tres unchanged.
    if (job.plain) {
      const bool ok = tree_.place(free, job, PlaceMode::Prefer, 0);
      out.swap(tree_.choice().nodes);
      return ok;
    }
    engine_.place(free, job, strict_ ? PlaceMode::Strict : PlaceMode::Prefer, 0);
    const PlaceStatus s = engine_.choice().status;
    if (s == PlaceStatus::NoNodes) return false;
    // NoBlock without nodes: no part of the fabric holds the job (it waits, whatever the wait).
    if (s == PlaceStatus::NoBlock && (waited < wait_ || engine_.choice().nodes.empty())) return false;
    out = engine_.choice().nodes;  // rank order (NoBlock after the wait: the best fallback)
    return true;
  }
  double retry_after() const override { return strict_ ? wait_ : 0; }
  bool native_topo_order() const override { return true; }
  bool books_rings() const override { return true; }

 private:
  Named engine_, tree_;
  bool strict_;
  double wait_;
};

// topoaware on the same fabric from a topology.json without its nvlink_domains. Without domains
// a layout whose TP group spans trays is refused (tp > GPUs per node), so the job is given to the
// engine as a user would submit it there: tp = the tray's GPUs and the rest of the TP group folded
// into dp (dp x tp / G). The ranks land on the same nodes either way (rank order tp-cp-ep-dp-pp,
// cp = 1 here); the engine just sees the cross-tray TP traffic as DP traffic and knows no domain.
class TopoawareNoDomain : public Policy {
 public:
  explicit TopoawareNoDomain(const Cluster &c)
      : engine_(c, "topoaware", c.flat_index ? c.flat_index.get() : c.index.get()), gpus_(uint32_t(c.gpus_per_node)) {}
  std::string name() const override { return "topoaware-nodomain"; }
  bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double,
              std::vector<int> &out) override {
    if (free_count < job.nodes) return false;
    folded_ = job;
    if (job.layout.tp > gpus_ && job.layout.cp == 1) {
      folded_.layout.dp = job.layout.dp * (job.layout.tp / gpus_);
      folded_.layout.tp = gpus_;
    }
    engine_.place(free, folded_, PlaceMode::Prefer, 0);
    const PlaceStatus s = engine_.choice().status;
    if (s == PlaceStatus::NoNodes) return false;
    if (s == PlaceStatus::NoBlock && engine_.choice().nodes.empty()) return false;
    out = engine_.choice().nodes;
    return true;
  }
  bool native_topo_order() const override { return true; }

 private:
  Named engine_;
  uint32_t gpus_;
  TraceJob folded_;
};

}  // namespace

std::unique_ptr<Policy> make_policy(const Cluster &c, const PolicySpec &spec, uint64_t seed) {
  if (spec.kind == "firstfit") return std::make_unique<FirstFit>(c);
  if (spec.kind == "random") return std::make_unique<Random>(seed);
  if (spec.kind == "slurm-tree") return std::make_unique<SlurmTree>(c, 0);
  if (spec.kind == "slurm-tree-switches") return std::make_unique<SlurmTree>(c, spec.wait);
  if (spec.kind == "slurm-block") return std::make_unique<SlurmBlock>(c, false);
  if (spec.kind == "slurm-block-segment") return std::make_unique<SlurmBlock>(c, true);
  if (spec.kind == "topoaware") return std::make_unique<Topoaware>(c, false, 0);
  if (spec.kind == "topoaware-strict") return std::make_unique<Topoaware>(c, true, spec.wait);
  if (spec.kind == "topoaware-nodomain") return std::make_unique<TopoawareNoDomain>(c);
  throw std::invalid_argument("unknown policy " + spec.kind);
}

// --switches wait and strict max wait: 300 s, Slurm's default cap on --switches waits
// (MaxSwitchWaitTime, slurm.conf(5)); the same for topoaware strict so the two compare.
std::vector<PolicySpec> default_policies() {
  return {{"slurm-tree", 0},  {"slurm-tree-switches", 300}, {"slurm-block", 0}, {"slurm-block-segment", 0},
          {"firstfit", 0},    {"random", 0},                {"topoaware", 0},   {"topoaware-strict", 300}};
}

}  // namespace topoaware::sim
