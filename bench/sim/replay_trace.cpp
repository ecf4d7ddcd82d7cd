// SPDX-License-Identifier: GPL-2.0-or-later
#include "replay_trace.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace topoaware::sim {

std::vector<ReplayJob> make_replay_trace(const ReplayTraceSpec &s, double *offered_load) {
  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<double> u(0, 1);
  const int pps[] = {1, 2, 4, 8, 16};
  auto draw = [&]() {
    ReplayJob j;
    const bool big = u(rng) < s.big_frac;
    int n;
    if (big) {
      n = u(rng) < 0.5 ? 24 : 32;
    } else {  // log-uniform in [1, max_nodes], as make_trace
      n = int(std::floor(std::exp(u(rng) * std::log(s.max_nodes + 1.0))));
      n = std::clamp(n, 1, s.max_nodes);
    }
    n = std::min(n, s.nodes / 2);
    int pp = pps[std::uniform_int_distribution<int>(0, 4)(rng)];
    while (pp > n) pp /= 2;
    const int dp = std::max(1, int(std::lround(double(n) / pp)));
    j.pp = pp;
    j.dp = dp;
    j.nodes = dp * pp;
    if (j.nodes > s.nodes / 2) j.dp = std::max(1, s.nodes / 2 / pp), j.nodes = j.dp * pp;
    j.kind = u(rng) < s.plain_frac ? "plain" : "layout";
    j.runtime = std::exp(std::log(s.rt_min) + u(rng) * (std::log(s.rt_max) - std::log(s.rt_min)));
    j.runtime = std::round(j.runtime * 10) / 10;
    return j;
  };
  // Mean work per job from a pool drawn by a separate generator (so the trace does not depend on
  // the pool size), then Poisson arrivals at rate load * nodes / mean work.
  double mean_work = 0;
  {
    std::mt19937_64 save = rng;
    rng.seed(s.seed ^ 0x9e3779b97f4a7c15ull);
    const int pool = 20000;
    for (int k = 0; k < pool; ++k) {
      const ReplayJob j = draw();
      mean_work += j.nodes * j.runtime;
    }
    mean_work /= pool;
    rng = save;
  }
  const double rate = s.load * s.nodes / mean_work;
  std::exponential_distribution<double> gap(rate);
  std::vector<ReplayJob> jobs;
  if (s.frag) {
    // Fragmented start: in every leaf 2..5 nodes busy (at random positions) for 20..100 s.
    const int leaves = s.nodes / s.per_leaf;
    for (int l = 0; l < leaves; ++l) {
      std::vector<int> pos(static_cast<size_t>(s.per_leaf));
      for (int k = 0; k < s.per_leaf; ++k) pos[size_t(k)] = k;
      std::shuffle(pos.begin(), pos.end(), rng);
      const int busy = std::min(s.per_leaf, std::uniform_int_distribution<int>(2, 5)(rng));
      std::sort(pos.begin(), pos.begin() + busy);
      for (int k = 0; k < busy; ++k) {
        ReplayJob j;
        j.kind = "frag";
        j.runtime = std::round(std::uniform_real_distribution<double>(20, 100)(rng) * 10) / 10;
        j.node = l * s.per_leaf + pos[size_t(k)];
        jobs.push_back(j);
      }
    }
  }
  double now = 0, work = 0;
  while (true) {
    now += gap(rng);
    if (now > s.span) break;
    ReplayJob j = draw();
    j.arrival = std::round(now * 10) / 10;
    work += j.nodes * j.runtime;
    jobs.push_back(j);
  }
  if (offered_load) *offered_load = work / (s.nodes * s.span);
  return jobs;
}

int replay_time_limit_minutes(double runtime) { return int(std::ceil((runtime + 15) / 60 - 1e-12)); }

}  // namespace topoaware::sim
