// SPDX-License-Identifier: GPL-2.0-or-later
// The workload of the replays through real slurmctld (bench/slurm_replay.sh): short jobs of tens
// of seconds on a small cluster, started from a fragmented state. slurm_replay_tool prints it for
// the replay; placement_sim --workload replay runs the same traces through its policies, so the
// simulator and the real scheduler are compared on identical jobs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace topoaware::sim {

struct ReplayTraceSpec {
  uint64_t seed = 1;
  int nodes = 64, per_leaf = 8, max_nodes = 16;
  double span = 200, load = 0.95, rt_min = 10, rt_max = 80, big_frac = 0.06, plain_frac = 0.15;
  bool frag = false;
  bool valid() const {
    return nodes >= 1 && per_leaf >= 1 && nodes % per_leaf == 0 && span > 0 && load > 0 && rt_min > 0 &&
           rt_max >= rt_min && max_nodes >= 1;
  }
};

// One trace job. kind: "layout" (tp=8 x pp x dp, whole 8-GPU nodes), "plain" (exclusive, no
// layout), "frag" (a single-node job pinned to host `node` (0-based, leaf-major as n0001..) and
// started before the trace's time 0: the fragmented initial state).
struct ReplayJob {
  double arrival = 0, runtime = 0;
  int nodes = 1, tp = 8, pp = 1, dp = 1;
  std::string kind;
  int node = -1;
};

// Deterministic for a spec (std::mt19937_64 and libstdc++'s distributions). Frag jobs first
// (arrival 0), then the trace jobs in arrival order. offered_load: sum of nodes * runtime of the
// trace jobs over nodes * span (frag jobs not counted).
std::vector<ReplayJob> make_replay_trace(const ReplayTraceSpec &spec, double *offered_load = nullptr);

// The time limit the replay submits a job with (sbatch -t, whole minutes): the runtime plus 15 s
// for the job's start and end, rounded up.
int replay_time_limit_minutes(double runtime);

}  // namespace topoaware::sim
