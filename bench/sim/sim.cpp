// SPDX-License-Identifier: GPL-2.0-or-later
#include "sim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <queue>

#include "rank_order.hpp"

namespace topoaware::sim {

namespace {

// Poisson arrivals: mean gap = mean work per job (node-seconds) / (load * nodes).
void poisson_arrivals(std::vector<TraceJob> &t, double work, double load, int cluster_nodes, std::mt19937_64 &rng) {
  const double gap = work / double(t.size()) / (load * cluster_nodes);
  std::exponential_distribution<double> e(1.0 / gap);
  double now = 0;
  for (TraceJob &j : t) {
    now += e(rng);
    j.arrival = now;
  }
}

}  // namespace

std::vector<TraceJob> make_trace(int cluster_nodes, int jobs, double load, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const double max_nodes = std::max(1.0, cluster_nodes / 4.0);
  std::vector<TraceJob> t(static_cast<size_t>(jobs));
  double work = 0;
  for (int i = 0; i < jobs; ++i) {
    TraceJob &j = t[size_t(i)];
    j.id = i;
    // log-uniform in [1, max_nodes]: exp(U * ln(max + 1)) - in integers 1..max
    int n = int(std::floor(std::exp(u(rng) * std::log(max_nodes + 1))));
    n = std::clamp(n, 1, int(max_nodes));
    const int pps[] = {1, 2, 4, 8, 16};
    int pp = pps[std::uniform_int_distribution<int>(0, 4)(rng)];
    while (pp > n) pp /= 2;
    const int dp = std::max(1, int(std::lround(double(n) / pp)));
    j.layout.tp = 8;
    j.layout.pp = uint32_t(pp);
    j.layout.dp = uint32_t(dp);
    j.nodes = std::min(dp * pp, int(max_nodes) / pp * pp);
    if (j.nodes < dp * pp) j.layout.dp = uint32_t(j.nodes / pp);
    j.nodes = int(j.layout.dp) * pp;
    j.runtime = std::exp(std::log(300.0) + u(rng) * (std::log(43200.0) - std::log(300.0)));
    work += j.nodes * j.runtime;
  }
  poisson_arrivals(t, work, load, cluster_nodes, rng);
  return t;
}

std::vector<TraceJob> make_trace_nvl(int cluster_nodes, int jobs, double load, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const int max_nodes = std::max(1, cluster_nodes / 4);
  std::vector<TraceJob> t(static_cast<size_t>(jobs));
  double work = 0;
  for (int i = 0; i < jobs; ++i) {
    TraceJob &j = t[size_t(i)];
    j.id = i;
    int n = int(std::floor(std::exp(u(rng) * std::log(max_nodes + 1.0))));
    n = std::clamp(n, 1, max_nodes);
    const double x = u(rng);
    const uint32_t tp = x < 0.5 ? 4 : x < 0.625 ? 8 : x < 0.75 ? 16 : x < 0.875 ? 32 : 64;
    const int k = int(tp / 4);  // nodes of one TP group
    n = std::max(n, k);
    const int pps[] = {1, 2, 4, 8, 16};
    int pp = pps[std::uniform_int_distribution<int>(0, 4)(rng)];
    while (pp > 1 && k * pp > n) pp /= 2;
    int dp = std::max(1, int(std::lround(double(n) / (k * pp))));
    while (dp > 1 && k * pp * dp > max_nodes) --dp;
    j.layout.tp = tp;
    j.layout.pp = uint32_t(pp);
    j.layout.dp = uint32_t(dp);
    j.nodes = k * pp * dp;
    j.runtime = std::exp(std::log(300.0) + u(rng) * (std::log(43200.0) - std::log(300.0)));
    work += j.nodes * j.runtime;
  }
  poisson_arrivals(t, work, load, cluster_nodes, rng);
  return t;
}

int largest_free_aligned_block(const Cluster &c, const std::vector<uint8_t> &free) {
  const size_t nb = c.blocks.size();
  std::vector<uint8_t> whole(nb, 0);
  int best_partial = 0;
  for (size_t b = 0; b < nb; ++b) {
    int f = 0;
    for (int h : c.blocks[b]) f += free[size_t(h)] != 0;
    whole[b] = f == int(c.blocks[b].size());
    best_partial = std::max(best_partial, f);
  }
  int best = 0;
  for (size_t k = 1; k <= nb; k *= 2) {
    bool found = false;
    for (size_t s = 0; s + k <= nb && !found; s += k) {
      bool all = true;
      for (size_t b = s; b < s + k && all; ++b) all = whole[b];
      if (all) {
        int n = 0;
        for (size_t b = s; b < s + k; ++b) n += int(c.blocks[b].size());
        best = std::max(best, n);
        found = true;
      }
    }
    if (!found) break;
  }
  return std::max(best, best_partial);
}

namespace {

struct Running {
  int job;
  double end, est_end;
  std::vector<int> nodes;
  std::vector<int> order;  // rank order the policy runs the job with
};

}  // namespace

SimResult simulate(const Cluster &c, const std::vector<TraceJob> &trace, Policy &policy, const SimOptions &opt,
                   DecisionHook hook, void *hook_ctx) {
  SimResult r;
  r.policy = policy.name();
  const size_t n = trace.size();
  r.jobs.resize(n);
  for (size_t i = 0; i < n; ++i) r.jobs[i].pinned = trace[i].pinned >= 0;
  r.window_lo = opt.window_lo >= 0 ? opt.window_lo : trace[n / 10].arrival;
  r.window_hi = opt.window_hi >= 0 ? opt.window_hi : trace[n - 1 - n / 10].arrival;
  std::vector<uint8_t> free(size_t(c.nodes), 1);
  int free_count = c.nodes;
  std::vector<Running> running;
  std::vector<int> queue;
  std::vector<double> first_eval(n, -1);
  std::priority_queue<double, std::vector<double>, std::greater<double>> retries;
  RankOrderer orderer(*c.index);
  RingEdgeBook book(*c.index);
  const bool booked = opt.ring_book && policy.books_rings();
  std::vector<int> out, sorted, topo;
  size_t next_arrival = 0, next_snapshot = 0;
  double now = 0;
  int busy = 0;
  double useful = 0;  // running nodes weighted by base / actual runtime
  double block_now = largest_free_aligned_block(c, free);

  auto start_job = [&](int idx, const std::vector<int> &nodes_in) {
    const TraceJob &j = trace[size_t(idx)];
    if (hook && j.pinned < 0) hook(hook_ctx, c, free, j, nodes_in, policy.native_topo_order());
    sorted = nodes_in;
    std::sort(sorted.begin(), sorted.end());
    if (booked && j.pinned < 0 && !j.plain)
      try {
        // As the select plugin at job begin: the order on the job's nodes, counting the rings
        // of the jobs that started before it and still run. Without recorded tables the book
        // counts nothing and this is the engine's own order.
        book.order(uint32_t(idx), sorted, j.layout, topo);
      } catch (const LayoutError &) {
        topo = nodes_in;
      }
    else if (policy.native_topo_order())
      topo = nodes_in;
    else
      try {
        orderer.order(sorted, j.layout, topo);
      } catch (const LayoutError &) {
        // A Slurm allocation that cannot hold the job's TP groups inside NVLink domains (tp
        // spanning trays): topoaware would not run it there, so its "topo order" is Slurm's own.
        topo = sorted;
      }
    const JobCost cs = job_cost(*c.index, sorted, j.layout, opt.cost);
    const JobCost ct = job_cost(*c.index, topo, j.layout, opt.cost);
    JobRecord &rec = r.jobs[size_t(idx)];
    rec.id = j.id;
    rec.nodes = j.nodes;
    rec.arrival = j.arrival;
    rec.start = now;
    rec.runtime = j.runtime;
    auto ideal = [](const JobCost &x) { return x.dp.at_ideal == x.dp.groups && x.pp.at_ideal == x.pp.groups; };
    rec.ideal_slurm = ideal(cs);
    rec.ideal_topo = ideal(ct);
    rec.hop_slurm = cs.hop_bytes;
    rec.hop_topo = ct.hop_bytes;
    rec.ideal_hop = cs.ideal_hop_bytes;
    rec.spine_slurm = cs.spine_bytes();
    rec.spine_topo = ct.spine_bytes();
    rec.ratio_slurm = cs.ratio;
    rec.ratio_topo = ct.ratio;
    rec.ratio_native = policy.native_topo_order() ? ct.ratio : cs.ratio;
    const double actual = j.runtime * (opt.stretch ? 1 + opt.stretch_f * (rec.ratio_native - 1) : 1);
    rec.end = now + actual;
    for (int h : nodes_in) free[size_t(h)] = 0;
    free_count -= j.nodes;
    busy += j.nodes;
    useful += j.nodes * j.runtime / std::max(1e-9, actual);
    running.push_back({idx, rec.end, now + j.planned(), nodes_in, policy.native_topo_order() ? topo : sorted});
  };

  auto try_select = [&](int idx) {
    const TraceJob &j = trace[size_t(idx)];
    if (first_eval[size_t(idx)] < 0) {
      first_eval[size_t(idx)] = now;
      if (policy.retry_after() > 0) retries.push(now + policy.retry_after());
    }
    const auto a = std::chrono::steady_clock::now();
    const bool ok = policy.select(free, free_count, j, now - first_eval[size_t(idx)], out);
    r.decision_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    ++r.decisions;
    return ok;
  };

  auto schedule = [&]() {
    while (!queue.empty()) {
      const int head = queue.front();
      if (free_count < trace[size_t(head)].nodes || !try_select(head)) break;
      start_job(head, out);
      queue.erase(queue.begin());
    }
    if (queue.empty() || free_count == 0) return;
    // EASY reservation for the head job, by node count.
    const int need = trace[size_t(queue.front())].nodes;
    double shadow = now;
    int extra = free_count - need;
    if (free_count < need) {
      std::vector<std::pair<double, int>> ends;
      for (const Running &x : running) ends.push_back({std::max(x.est_end, now), int(x.nodes.size())});
      std::sort(ends.begin(), ends.end());
      int avail = free_count;
      for (const auto &e : ends) {
        avail += e.second;
        if (avail >= need) {
          shadow = e.first;
          extra = avail - need;
          break;
        }
      }
    }
    const size_t depth = std::min(queue.size(), size_t(opt.backfill_depth) + 1);
    for (size_t k = 1; k < depth && k < queue.size() && free_count > 0; ++k) {
      const int idx = queue[k];
      const TraceJob &j = trace[size_t(idx)];
      if (j.nodes > free_count) continue;
      const double end = now + j.planned();
      if (!(end <= shadow || j.nodes <= extra)) continue;
      if (!try_select(idx)) continue;
      start_job(idx, out);
      if (end > shadow) extra -= j.nodes;
      queue.erase(queue.begin() + long(k));
      --k;
    }
  };

  while (true) {
    double t = 1e300;
    if (next_arrival < n) t = std::min(t, trace[next_arrival].arrival);
    for (const Running &x : running) t = std::min(t, x.end);
    while (!retries.empty() && retries.top() < now) retries.pop();
    if (!retries.empty() && !queue.empty()) t = std::min(t, retries.top());
    if (t >= 1e299) break;
    // The state after the last schedule() holds for [now, t): every snapshot instant inside it.
    while (next_snapshot < opt.snapshot_times.size() && opt.snapshot_times[next_snapshot] < t) {
      if (opt.on_snapshot && opt.snapshot_times[next_snapshot] >= now) {
        std::vector<SnapshotJob> snap;
        for (const Running &x : running) {
          const JobRecord &jr = r.jobs[size_t(x.job)];
          const bool topo_native = policy.native_topo_order();
          snap.push_back({jr.id, &x.order, topo_native ? jr.hop_topo : jr.hop_slurm, jr.ideal_hop, jr.ratio_native});
        }
        // In start order (ties by id), the order in which slurmctld's ring book saw them begin.
        std::sort(snap.begin(), snap.end(), [&r](const SnapshotJob &a, const SnapshotJob &b) {
          const double sa = r.jobs[size_t(a.id)].start, sb = r.jobs[size_t(b.id)].start;
          return sa != sb ? sa < sb : a.id < b.id;
        });
        opt.on_snapshot(int(next_snapshot), opt.snapshot_times[next_snapshot], snap);
      }
      ++next_snapshot;
    }
    // integrate [now, t] inside the window
    const double lo = std::max(now, r.window_lo), hi = std::min(t, r.window_hi);
    if (hi > lo) {
      r.busy_node_seconds += busy * (hi - lo);
      r.useful_node_seconds += useful * (hi - lo);
      r.free_block_node_seconds += block_now * (hi - lo);
    }
    now = t;
    for (size_t i = 0; i < running.size();) {
      if (running[i].end <= now) {
        for (int h : running[i].nodes) free[size_t(h)] = 1;
        free_count += int(running[i].nodes.size());
        busy -= int(running[i].nodes.size());
        {
          const JobRecord &jr = r.jobs[size_t(running[i].job)];
          useful -= jr.nodes * jr.runtime / std::max(1e-9, jr.end - jr.start);
        }
        if (booked) book.remove(uint32_t(running[i].job));
        running[i] = std::move(running.back());
        running.pop_back();
      } else {
        ++i;
      }
    }
    while (next_arrival < n && trace[next_arrival].arrival <= now) {
      const int idx = int(next_arrival++);
      const TraceJob &j = trace[size_t(idx)];
      if (j.pinned < 0) {
        queue.push_back(idx);
      } else if (free[size_t(j.pinned)]) {  // a pinned job whose host is busy never runs
        out.assign(1, j.pinned);
        start_job(idx, out);
      }
    }
    while (!retries.empty() && retries.top() <= now) retries.pop();
    schedule();
    block_now = largest_free_aligned_block(c, free);
  }
  return r;
}

Summary summarize(const SimResult &r) {
  Summary s;
  s.policy = r.policy;
  const double fs[3] = {0.1, 0.3, 0.5};
  double ns = 0;
  int ideal_s = 0, ideal_t = 0;
  std::vector<double> waits;
  double bsld = 0;
  for (const JobRecord &j : r.jobs) {
    if (j.pinned || j.arrival < r.window_lo || j.arrival > r.window_hi) continue;
    ++s.jobs_in_window;
    const double wait = j.start - j.arrival;
    waits.push_back(wait);
    const double run = j.end - j.start;
    bsld += std::max(1.0, (wait + run) / std::max(run, 10.0));  // tau = 10 s
    s.hop_slurm += j.hop_slurm * j.runtime;
    s.hop_topo += j.hop_topo * j.runtime;
    s.hop_ideal += j.ideal_hop * j.runtime;
    s.spine_slurm += j.spine_slurm * j.runtime;
    s.spine_topo += j.spine_topo * j.runtime;
    if (j.nodes < 2) continue;
    ++s.multi_node_jobs;
    ideal_s += j.ideal_slurm;
    ideal_t += j.ideal_topo;
    const double w = j.nodes * j.runtime;
    ns += w;
    for (int k = 0; k < 3; ++k) {
      s.slowdown_native[k] += w * (1 + fs[k] * (j.ratio_native - 1));
      s.slowdown_topo[k] += w * (1 + fs[k] * (j.ratio_topo - 1));
    }
  }
  if (s.multi_node_jobs) {
    s.ideal_rate_slurm = double(ideal_s) / s.multi_node_jobs;
    s.ideal_rate_topo = double(ideal_t) / s.multi_node_jobs;
  }
  for (int k = 0; k < 3; ++k) {
    s.slowdown_native[k] = ns > 0 ? s.slowdown_native[k] / ns : 1;
    s.slowdown_topo[k] = ns > 0 ? s.slowdown_topo[k] / ns : 1;
  }
  if (!waits.empty()) {
    s.wait_mean = std::accumulate(waits.begin(), waits.end(), 0.0) / double(waits.size());
    std::sort(waits.begin(), waits.end());
    s.wait_p95 = waits[std::min(waits.size() - 1, size_t(std::ceil(0.95 * double(waits.size()))) - 1)];
    s.bsld_mean = bsld / double(waits.size());
  }
  return s;
}

}  // namespace topoaware::sim
