// SPDX-License-Identifier: GPL-2.0-or-later
// Decision latency of the placement engine against node count (256 .. 16,384 nodes, leaf groups
// of 32, pods of 16 leaf groups), with a naive first-fit by node index on the same inputs in the
// same run. Input is Slurm's view (bitmap over the node table + free GPUs per node), as the select
// plugin passes it. Usage: placement_latency [seed] [decisions per size] [only this node count]
// (the last for profiling one size: every size draws its inputs from its own generator, so the
// filter changes neither its inputs nor its hash)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "placement.hpp"

using namespace topoaware;

namespace {

// 3-level fat tree: pods of 16 leaf groups (one leaf each) of 32 hosts, 16 uplink cables per leaf
// (2:1) to its pod's spine, so that the rank order's D-mod-K entry choice is timed too.
Topology build(int nodes) {
  const int per_lg = 32, lgs_per_pod = 16;
  const int nlg = nodes / per_lg;
  Topology t;
  for (int g = 0; g < nlg; ++g) {
    const int pod = g / lgs_per_pod;
    if (pod >= int(t.pods.size())) t.pods.emplace_back();
    t.pods[size_t(pod)].leaf_groups.push_back(g);
    Switch sw;
    sw.guid = 0x1000 + uint64_t(g);
    sw.level = 1;
    sw.leaf_group = g;
    sw.pod = pod;
    LeafGroup lg;
    lg.pod = pod;
    lg.leaves.push_back(int(t.switches.size()));
    for (int h = 0; h < per_lg; ++h) {
      Host host;
      char name[32];
      std::snprintf(name, sizeof name, "n%05d", int(t.hosts.size()) + 1);
      host.name = name;
      host.leaf = lg.leaves[0];
      host.leaf_group = g;
      host.pod = pod;
      lg.hosts.push_back(int(t.hosts.size()));
      sw.hosts.push_back(int(t.hosts.size()));
      t.hosts.push_back(host);
    }
    t.switches.push_back(sw);
    t.leaf_groups.push_back(lg);
  }
  for (size_t p = 0; p < t.pods.size(); ++p) {
    Switch spine;
    spine.guid = 0x800000 + uint64_t(p);
    spine.level = 2;
    spine.pod = int(p);
    for (int g : t.pods[p].leaf_groups) {
      Link l;
      l.a = t.switches[size_t(g)].guid;  // leaf g is switch g
      l.b = spine.guid;
      for (int c = 0; c < 16; ++c) l.ports.emplace_back(33 + c, g % 16 * 16 + c + 1);
      t.links.push_back(l);
    }
    t.switches.push_back(spine);
  }
  return t;
}

// Naive first-fit by node index: the first `nodes` usable nodes with enough free GPUs.
size_t first_fit(const uint64_t *words, size_t nbits, const uint16_t *free_gpus, uint32_t nodes, uint32_t gpn,
                 std::vector<uint32_t> &out) {
  out.clear();
  for (size_t i = 0; i < nbits && out.size() < nodes; ++i)
    if ((words[i / 64] >> (i % 64) & 1) && free_gpus[i] >= gpn) out.push_back(uint32_t(i));
  return out.size();
}

struct Input {
  std::vector<uint64_t> words;
  std::vector<uint16_t> gpus;
  Job job;
};

// Each decision runs kReps times and keeps its fastest run: the machine is shared, and a
// preempted run (a 4 ms scheduler tick) says nothing about the engine.
constexpr int kReps = 5;

// The inputs of one size: 30-70% of nodes busy, busy runs of random length (fragmentation like a
// loaded cluster); jobs tp=8 on 8-GPU nodes, pp in 1..16, dp so that the job is 1..n/4 nodes.
// Adds every job's node count to job_nodes.
std::vector<Input> make_inputs(const TopoIndex &ix, const std::vector<std::string> &names, int n, int decisions,
                               std::mt19937 &rng, double &job_nodes) {
  std::vector<Input> inputs(static_cast<size_t>(decisions));
  for (Input &in : inputs) {
    in.words.assign(size_t(n + 63) / 64, 0);
    in.gpus.assign(size_t(n), 8);
    const double busy = std::uniform_real_distribution<double>(0.3, 0.7)(rng);
    std::vector<uint8_t> free_host(size_t(n), 1);
    for (int h = 0; h < n;) {
      const int run = 1 + int(rng() % 24);
      const bool b = std::bernoulli_distribution(busy)(rng);
      for (int k = 0; k < run && h < n; ++k, ++h) free_host[size_t(h)] = !b;
    }
    for (size_t i = 0; i < names.size(); ++i) {
      const int h = ix.find_host(names[i]);
      if (free_host[size_t(h)]) in.words[i / 64] |= uint64_t(1) << (i % 64);
    }
    const uint32_t pp = 1u << (rng() % 5);
    const double lo = 0, hi = std::log2(double(n) / 4);
    uint32_t nodes = uint32_t(std::exp2(std::uniform_real_distribution<double>(lo, hi)(rng)));
    nodes = std::max(pp, nodes / pp * pp);
    in.job.layout.tp = 8;
    in.job.layout.pp = pp;
    in.job.layout.dp = nodes / pp;
    in.job.nodes = nodes;
    in.job.gpus_per_node = 8;
    job_nodes += nodes;
  }
  return inputs;
}

// topoaware's decisions on one size's inputs: each one's fastest time, how many were placed and
// ideal, and a hash of them all.
struct TopoRun {
  std::vector<double> lat;
  int ideal = 0, placed = 0;
  // FNV-1a over every decision (status, then the Slurm indices in rank order): equal hashes
  // between two builds mean identical placements on these inputs.
  uint64_t hash = 0xcbf29ce484222325ULL;
  void mix(uint64_t v) { hash = (hash ^ v) * 0x100000001b3ULL; }
};

TopoRun run_topoaware(Placer &placer, const NodeMap &map, const std::vector<Input> &inputs, int n) {
  TopoRun run;
  PlaceResult r;
  // warm-up: the scratch buffers grow once
  placer.place_slurm(map, inputs[0].words.data(), size_t(n), inputs[0].gpus.data(), inputs[0].job, PlaceMode::Prefer,
                     r);
  for (const Input &in : inputs) {
    double best = 1e300;
    PlaceStatus s = PlaceStatus::NoNodes;
    for (int k = 0; k < kReps; ++k) {
      const auto a = std::chrono::steady_clock::now();
      s = placer.place_slurm(map, in.words.data(), size_t(n), in.gpus.data(), in.job, PlaceMode::Prefer, r);
      const auto b = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double, std::micro>(b - a).count());
    }
    run.lat.push_back(best);
    run.mix(uint64_t(s));
    for (int i : r.slurm) run.mix(uint64_t(uint32_t(i)));
    run.placed += s != PlaceStatus::NoNodes;
    run.ideal += s == PlaceStatus::Ideal;
  }
  return run;
}

// The baseline on the same inputs: first fit's mean fastest time in us; sink counts its nodes so
// that the calls are not optimised away.
double run_first_fit(const std::vector<Input> &inputs, int n, int decisions, size_t &sink) {
  std::vector<uint32_t> ff;
  double ff_us = 0;
  for (const Input &in : inputs) {
    double best = 1e300;
    for (int k = 0; k < kReps; ++k) {
      const auto a = std::chrono::steady_clock::now();
      sink += first_fit(in.words.data(), size_t(n), in.gpus.data(), in.job.nodes, 8, ff);
      const auto b = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double, std::micro>(b - a).count());
    }
    ff_us += best / decisions;
  }
  return ff_us;
}

}  // namespace

int main(int argc, char **argv) {
  const unsigned seed = argc > 1 ? unsigned(std::strtoul(argv[1], nullptr, 10)) : 1;
  const int decisions = argc > 2 ? std::atoi(argv[2]) : 200;
  const int only = argc > 3 ? std::atoi(argv[3]) : 0;
  std::printf("# placement decision latency, seed %u, %d decisions per size, 32-node leaf groups, 16 per pod\n", seed,
              decisions);
  std::printf("%8s %12s %12s %12s %12s %8s %8s %17s\n", "nodes", "topo_us", "topo_p99_us", "firstfit_us", "ratio",
              "ideal%", "nodes/job", "decisions_hash");
  for (int n = 256; n <= 16384; n *= 2) {
    if (only && n != only) continue;
    Topology t = build(n);
    TopoIndex ix(t);
    std::vector<std::string> names;
    for (const Host &h : t.hosts) names.push_back(h.name);
    std::mt19937 rng(seed + unsigned(n));
    std::shuffle(names.begin(), names.end(), rng);  // Slurm's node table need not be in name order
    NodeMap map(ix, names);
    Placer placer(ix);
    double job_nodes = 0;
    const std::vector<Input> inputs = make_inputs(ix, names, n, decisions, rng, job_nodes);
    TopoRun run = run_topoaware(placer, map, inputs, n);
    size_t sink = 0;
    const double ff_us = run_first_fit(inputs, n, decisions, sink);
    std::vector<double> &lat = run.lat;
    double mean = 0;
    for (double x : lat) mean += x;
    mean /= double(lat.size());
    std::sort(lat.begin(), lat.end());
    const double p99 = lat[std::min(lat.size() - 1, size_t(double(lat.size()) * 0.99))];
    std::printf("%8d %12.2f %12.2f %12.2f %12.1f %8.1f %8.0f  %016llx%s\n", n, mean, p99, ff_us,
                ff_us > 0 ? mean / ff_us : 0, run.placed ? 100.0 * run.ideal / run.placed : 0, job_nodes / decisions,
                (unsigned long long)run.hash, sink ? "" : " ");
  }
  return 0;
}
