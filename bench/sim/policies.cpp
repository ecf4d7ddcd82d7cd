// SPDX-License-Identifier: GPL-2.0-or-later
// Node-selection policies for the simulator. Every policy sees the same input: the free nodes
// (exclusive whole nodes, 8 GPUs each) and the job.
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "placement.hpp"
#include "sim.hpp"
#include "slurm_replica.hpp"

namespace topoaware::sim {

namespace {

class FirstFit : public Policy {
 public:
  std::string name() const override { return "firstfit"; }
  bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double,
              std::vector<int> &out) override {
    out.clear();
    if (free_count < job.nodes) return false;
    for (size_t h = 0; h < free.size() && int(out.size()) < job.nodes; ++h)
      if (free[h]) out.push_back(int(h));
    return true;
  }
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
  SlurmTree(const Cluster &c, double wait) : c_(&c), wait_(wait) {}
  std::string name() const override { return wait_ > 0 ? "slurm-tree-switches" : "slurm-tree"; }
  bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double waited,
              std::vector<int> &out) override {
    if (free_count < job.nodes) return false;
    int leaves = 0;
    if (!slurm_tree_select(*c_, free, job.nodes, out, &leaves)) return false;
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
  double wait_;
};

// Slurm 24.11 topology/block, without or with --segment. Segment size a user would give for a
// Megatron (tp-cp-ep-dp-pp) job: whole DP rings (dp nodes at tp = 8) grouped as far as a base
// block holds them (the largest divisor of the job's nodes that is a multiple of dp and at most
// the base block); for rings larger than a base block, the largest divisor of dp that fits
// (24.11 refuses segments larger than the base block, eval_nodes_block.c:231).
class SlurmBlock : public Policy {
 public:
  SlurmBlock(const Cluster &c, bool segment) : c_(&c), segment_(segment) {}
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
    return slurm_block_select(*c_, free, job.nodes, seg, out);
  }

 private:
  const Cluster *c_;
  bool segment_;
};

class Topoaware : public Policy {
 public:
  Topoaware(const Cluster &c, bool strict, double wait) : c_(&c), placer_(*c.index), strict_(strict), wait_(wait) {}
  std::string name() const override { return strict_ ? "topoaware-strict" : "topoaware"; }
  bool select(const std::vector<uint8_t> &free, int free_count, const TraceJob &job, double waited,
              std::vector<int> &out) override {
    if (free_count < job.nodes) return false;
    // A job without a layout: the select plugin hands it to cons_tres unchanged.
    if (job.plain) return slurm_tree_select(*c_, free, job.nodes, out, nullptr);
    hosts_.clear();
    for (size_t h = 0; h < free.size(); ++h)
      if (free[h]) hosts_.push_back(int(h));
    gpus_.assign(hosts_.size(), 8);
    Job j;
    j.nodes = uint32_t(job.nodes);
    j.gpus_per_node = 8;
    j.layout = job.layout;
    const PlaceStatus s = placer_.place(hosts_.data(), gpus_.data(), hosts_.size(), j,
                                        strict_ ? PlaceMode::Strict : PlaceMode::Prefer, res_);
    if (s == PlaceStatus::NoNodes) return false;
    if (s == PlaceStatus::NoBlock && waited < wait_) return false;
    out = res_.nodes;  // rank order (NoBlock after the wait: the best fallback)
    return true;
  }
  double retry_after() const override { return strict_ ? wait_ : 0; }
  bool native_topo_order() const override { return true; }

 private:
  const Cluster *c_;
  Placer placer_;
  bool strict_;
  double wait_;
  std::vector<int> hosts_;
  std::vector<uint32_t> gpus_;
  PlaceResult res_;
};

}  // namespace

std::unique_ptr<Policy> make_policy(const Cluster &c, const PolicySpec &spec, uint64_t seed) {
  if (spec.kind == "firstfit") return std::make_unique<FirstFit>();
  if (spec.kind == "random") return std::make_unique<Random>(seed);
  if (spec.kind == "slurm-tree") return std::make_unique<SlurmTree>(c, 0);
  if (spec.kind == "slurm-tree-switches") return std::make_unique<SlurmTree>(c, spec.wait);
  if (spec.kind == "slurm-block") return std::make_unique<SlurmBlock>(c, false);
  if (spec.kind == "slurm-block-segment") return std::make_unique<SlurmBlock>(c, true);
  if (spec.kind == "topoaware") return std::make_unique<Topoaware>(c, false, 0);
  if (spec.kind == "topoaware-strict") return std::make_unique<Topoaware>(c, true, spec.wait);
  throw std::invalid_argument("unknown policy " + spec.kind);
}

// --switches wait and strict max wait: 300 s, Slurm's default cap on --switches waits
// (MaxSwitchWaitTime, slurm.conf(5)); the same for topoaware strict so the two compare.
std::vector<PolicySpec> default_policies() {
  return {{"slurm-tree", 0},  {"slurm-tree-switches", 300}, {"slurm-block", 0}, {"slurm-block-segment", 0},
          {"firstfit", 0},    {"random", 0},                {"topoaware", 0},   {"topoaware-strict", 300}};
}

}  // namespace topoaware::sim
