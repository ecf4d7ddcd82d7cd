// SPDX-License-Identifier: GPL-2.0-or-later
// The select plugin's decision (corelib/select_policy.hpp: select_decide) without a slurmctld, as
// its tests run it: a classified topology with node-table index = host index (and, optionally,
// Slurm nodes missing from it), the engine as its named policy, a stand-in for cons_tres that
// accepts or refuses blocks, gives start times and records what it was asked, and one call's
// request. Shared by tests/test_select_policy.cpp, tests/test_select_policy_shapes.cpp and
// tests/decision_run.cpp, so that the three ask the decision the same way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "policies.hpp"
#include "select_policy.hpp"

namespace topoaware::standin {

inline constexpr int64_t kNow = 1700000000;

// A topology as Slurm's node table: host i is node-table index i; `extra` names follow, Slurm nodes
// that are not in the topology.
struct Cluster {
  Topology topo;
  TopoIndex index;
  std::vector<std::string> names;
  std::unique_ptr<NodeMap> map;
  std::unique_ptr<PlacementPolicy> engine;
  explicit Cluster(Topology t, const std::vector<std::string> &extra = {})
      : topo(std::move(t)), index(topo), engine(make_placement_policy("topoaware", index)) {
    for (const Host &h : topo.hosts) names.push_back(h.name);
    names.insert(names.end(), extra.begin(), extra.end());
    map = std::make_unique<NodeMap>(index, names);
  }
  size_t n() const { return names.size(); }
};

// cons_tres as the decision sees it: every block fits but those holding a refused node; plain
// cons_tres fits when plain_ok. Will-run starts: a block when its last node frees up (busy_until),
// plain at plain_start.
struct ConsTres {
  std::set<int> refuse;             // blocks holding any of these nodes are refused
  std::vector<int64_t> busy_until;  // will-run: a node is free from then on (0 = now)
  bool plain_ok = true;
  int64_t plain_start = kNow;
  int plain_preempts = 0;
  uint64_t ms_per_block = 0;  // the clock advances this much per block tried
  int64_t report_after = -1;  // >= 0: block_start answers this much after fits_at
  int64_t round_to = 0;       // > 0: block_start rounds fits_at up to kNow + a multiple of it
  // what it was asked
  std::vector<std::vector<int>> blocks;
  std::vector<bool> plain_any;  // one entry per plain call: whether it was on any node
  int keeps = 0;
  uint64_t clock = 0;
  std::vector<int64_t> block_starts;  // fits_at of every block_start asked

  int plain_calls() const { return int(plain_any.size()); }

  SelectBackend backend() {
    SelectBackend b;
    b.try_block = [this](const std::vector<int> &nodes, int64_t *start) {
      blocks.push_back(nodes);
      clock += ms_per_block;
      for (int i : nodes)
        if (refuse.count(i)) return false;
      if (start) {
        int64_t s = kNow;
        for (int i : nodes)
          if (size_t(i) < busy_until.size()) s = std::max(s, busy_until[size_t(i)]);
        *start = s;
      }
      return true;
    };
    b.keep_best = [this] { keeps++; };
    b.try_plain = [this](bool any, int64_t *start, int *preempted) {
      plain_any.push_back(any);
      if (!plain_ok) return false;
      if (start) *start = plain_start;
      if (preempted) *preempted = plain_preempts;
      return true;
    };
    b.clock_ms = [this] { return clock; };
    b.wall_s = [] { return kNow; };
    if (report_after >= 0 || round_to > 0)
      b.block_start = [this](int64_t fits_at) {
        block_starts.push_back(fits_at);
        int64_t t = fits_at;
        if (round_to > 0) t = kNow + (fits_at - kNow + round_to - 1) / round_to * round_to;
        return t + std::max<int64_t>(report_after, 0);
      };
    return b;
  }
};

// One select_decide call on a Cluster: every node usable, `free_gpus` GPUs free now on each and
// `all_gpus` once its jobs have ended; the job's mode, now = kNow, its maximum wait `wait` s.
struct Call {
  Cluster &c;
  SelectRequest req;
  SelectSettings set;
  std::vector<uint64_t> usable;
  std::vector<uint16_t> free_now, free_all;
  std::vector<int64_t> all_free_at, earliest_free_at;  // will-run with end times when not empty

  Call(Cluster &cl, const Job &job, bool strict, uint16_t free_gpus, uint16_t all_gpus, int64_t wait = 600)
      : c(cl) {
    req.job = job;
    req.strict = strict;
    req.now = kNow;
    req.deadline = kNow + wait;
    usable.assign((c.n() + 63) / 64, 0);
    for (size_t i = 0; i < c.n(); ++i) usable[i / 64] |= uint64_t(1) << (i % 64);
    free_now.assign(c.n(), free_gpus);
    free_all.assign(c.n(), all_gpus);
    set.missing_count = uint32_t(c.map->missing().size());
  }
  bool is_usable(size_t i) const { return (usable[i / 64] >> (i % 64)) & 1; }
  void set_usable(size_t i, bool on) {
    if (on)
      usable[i / 64] |= uint64_t(1) << (i % 64);
    else
      usable[i / 64] &= ~(uint64_t(1) << (i % 64));
  }
  SelectAnswer run(ConsTres &f) {
    req.usable = usable.data();
    req.nbits = c.n();
    req.free_now = free_now.data();
    req.free_all = free_all.data();
    req.all_free_at = all_free_at.empty() ? nullptr : all_free_at.data();
    req.earliest_free_at = earliest_free_at.empty() ? nullptr : earliest_free_at.data();
    return select_decide(*c.engine, *c.map, req, set, f.backend());
  }
};

}  // namespace topoaware::standin
