// SPDX-License-Identifier: GPL-2.0-or-later
// Decision latency of the placement engine against node count (256 .. 16,384 nodes, leaf groups
// of 32, pods of 16 leaf groups; 32,768 when asked for), with a naive first fit by node index on the same inputs in the
// same run. Input is Slurm's view (bitmap over the node table + free GPUs per node), as the select
// plugin passes it. Every size is timed twice on the same inputs: on the cabling alone ("plain":
// the rank order hands out each split part's hosts in canonical order) and with recorded routes
// ("routed": forwarding tables as a minhop subnet manager would program them, so that the rank
// order's route-based entry choice does its real work), with the time to build the topology index
// for each. Usage: placement_latency [seed] [decisions per size] [only this node count] (the last
// for profiling one size: every size draws its inputs from its own generator, so the filter
// changes neither its inputs nor its hashes) [moe] ("moe": every job a MoE model whose dp allows it,
// ep the largest of 8, 4, 2 dividing dp, as a user's --ep: the rank order then keeps EP groups
// inside leaf groups; the inputs are otherwise the same, so a build without that rule times the
// same decisions). A third table times the rank order that the select plugin computes when a job
// begins, alone and counting the running jobs' ring edges (RingEdgeBook), in a cluster that the
// routed engine fills with the same jobs and keeps about full (one job ends, one begins), and the
// book's rebuild from every running job's order (after slurmctld's start or a new topology).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "placement.hpp"
#include "rank_order.hpp"

using namespace topoaware;

namespace {

constexpr int kPerLg = 32, kLgsPerPod = 16, kUplinks = 16;

// 3-level fat tree: pods of 16 leaf groups (one leaf each) of 32 hosts; each leaf has one cable to
// each of its pod's 16 spines (2:1), and spine s of every pod one cable to each of the 16 cores of
// core group s (1:1; no cores while there is one pod). Ports: leaf 1-32 hosts, 33-48 spines;
// spine 1-16 leaves, 17-32 cores; core p+1 pod p. Link speeds are left unknown, as before the
// fabric had routes, so that no leaf group looks degraded.
Topology build(int nodes) {
  const int nlg = nodes / kPerLg;
  const int npods = (nlg + kLgsPerPod - 1) / kLgsPerPod;
  Topology t;
  t.pods.resize(size_t(npods));
  for (int g = 0; g < nlg; ++g) {
    const int pod = g / kLgsPerPod;
    t.pods[size_t(pod)].leaf_groups.push_back(g);
    Switch sw;
    sw.guid = 0x1000 + uint64_t(g);
    sw.name = "leaf" + std::to_string(g);
    sw.nports = kPerLg + kUplinks;
    sw.level = 1;
    sw.leaf_group = g;
    sw.pod = pod;
    LeafGroup lg;
    lg.pod = pod;
    lg.leaves.push_back(g);
    for (int h = 0; h < kPerLg; ++h) {
      Host host;
      char name[32];
      std::snprintf(name, sizeof name, "n%05d", int(t.hosts.size()) + 1);
      host.name = name;
      HcaPort port;
      port.ca_guid = 0x100000000ULL + t.hosts.size();
      port.port_guid = port.ca_guid;
      port.port = 1;
      port.sw = g;
      port.sw_port = h + 1;
      host.ports.push_back(port);
      host.leaf = g;
      host.leaf_group = g;
      host.pod = pod;
      lg.hosts.push_back(int(t.hosts.size()));
      sw.hosts.push_back(int(t.hosts.size()));
      t.hosts.push_back(host);
    }
    t.switches.push_back(sw);
    t.leaf_groups.push_back(lg);
  }
  for (int p = 0; p < npods; ++p)
    for (int s = 0; s < kUplinks; ++s) {
      Switch spine;
      spine.guid = 0x800000 + uint64_t(p * kUplinks + s);
      spine.name = "spine" + std::to_string(p) + "_" + std::to_string(s);
      spine.nports = kLgsPerPod + 16;
      spine.level = 2;
      spine.pod = p;
      t.pods[size_t(p)].switches.push_back(int(t.switches.size()));
      const auto &lgs = t.pods[size_t(p)].leaf_groups;
      for (size_t k = 0; k < lgs.size(); ++k) {
        Link l;
        l.a = t.switches[size_t(lgs[k])].guid;  // leaf g is switch g
        l.b = spine.guid;
        l.ports.emplace_back(kPerLg + 1 + s, int(k) + 1);
        t.links.push_back(l);
      }
      t.switches.push_back(spine);
    }
  t.max_level = 2;
  if (npods > 1) {
    t.max_level = 3;
    for (int c = 0; c < kUplinks * 16; ++c) {
      Switch core;
      core.guid = 0x900000 + uint64_t(c);
      core.name = "core" + std::to_string(c);
      core.nports = 32;
      core.level = 3;
      for (int p = 0; p < npods; ++p) {
        Link l;
        l.a = t.switches[size_t(nlg + p * kUplinks + c / 16)].guid;  // spine c / 16 of pod p
        l.b = core.guid;
        l.ports.emplace_back(kLgsPerPod + 1 + c % 16, p + 1);
        t.links.push_back(l);
      }
      t.switches.push_back(core);
    }
  }
  return t;
}

// Forwarding tables for t's cabling, as OpenSM's minhop engine computes them: LIDs in host order,
// then the switches'; every switch sends each destination LID out of one of its ports on a
// shortest path to it, the one that carries the fewest LIDs so far (the lowest port on a tie),
// destinations in LID order. On this fat tree a leaf thus spreads the other leaves' hosts over its
// 16 uplinks round robin and every path goes up then down, as on a real minhop-routed tree. Not
// tuned for the rank order: it only reads the tables, whatever they are.
void add_routes(Topology &t) {
  const size_t ns = t.switches.size(), nh = t.hosts.size();
  std::vector<std::vector<std::pair<int, int>>> adj(ns);  // (port, neighbour switch)
  std::unordered_map<uint64_t, int> by_guid;
  for (size_t i = 0; i < ns; ++i) by_guid.emplace(t.switches[i].guid, int(i));
  for (const Link &l : t.links)
    for (const auto &[pa, pb] : l.ports) {
      const int a = by_guid.at(l.a), b = by_guid.at(l.b);
      adj[size_t(a)].emplace_back(pa, b);
      adj[size_t(b)].emplace_back(pb, a);
    }
  const size_t nlids = nh + ns + 1;
  Subnet sn;
  sn.switches.resize(ns);
  for (size_t i = 0; i < ns; ++i) {
    sn.switches[i].guid = t.switches[i].guid;
    sn.switches[i].lid = uint16_t(nh + i + 1);
    sn.switches[i].out.assign(nlids, kNoRoute);
  }
  for (size_t h = 0; h < nh; ++h)
    sn.ports.push_back(PortLid{t.hosts[h].ports[0].ca_guid, t.hosts[h].ports[0].port, uint16_t(h + 1), 0});
  constexpr int kMaxPorts = 64;
  std::vector<uint32_t> load(ns * kMaxPorts, 0);
  std::vector<int> dist(ns);
  std::vector<std::vector<int>> cand(ns);  // per switch: its ports one hop nearer the target
  std::deque<int> queue;
  const auto towards = [&](int target) {
    std::fill(dist.begin(), dist.end(), -1);
    dist[size_t(target)] = 0;
    queue.assign(1, target);
    while (!queue.empty()) {
      const int u = queue.front();
      queue.pop_front();
      for (const auto &[port, v] : adj[size_t(u)])
        if (dist[size_t(v)] < 0) dist[size_t(v)] = dist[size_t(u)] + 1, queue.push_back(v);
    }
    for (size_t u = 0; u < ns; ++u) {
      cand[u].clear();
      for (const auto &[port, v] : adj[u])
        if (dist[u] > 0 && dist[size_t(v)] == dist[u] - 1) cand[u].push_back(port);
      std::sort(cand[u].begin(), cand[u].end());
    }
  };
  const auto route = [&](int target, size_t lid, int last_port) {
    for (size_t u = 0; u < ns; ++u) {
      uint8_t &out = sn.switches[u].out[lid];
      if (int(u) == target) {
        out = uint8_t(last_port);
        continue;
      }
      int best = -1;
      for (int port : cand[u])
        if (best < 0 || load[u * kMaxPorts + size_t(port)] < load[u * kMaxPorts + size_t(best)]) best = port;
      if (best < 0) continue;  // unreachable: no route
      ++load[u * kMaxPorts + size_t(best)];
      out = uint8_t(best);
    }
  };
  for (size_t g = 0; g < t.leaf_groups.size(); ++g) {
    const int leaf = t.leaf_groups[g].leaves[0];
    towards(leaf);
    for (int h : t.switches[size_t(leaf)].hosts) route(leaf, size_t(h) + 1, t.hosts[size_t(h)].ports[0].sw_port);
  }
  for (size_t s = 0; s < ns; ++s) {
    towards(int(s));
    route(int(s), nh + s + 1, 0);
  }
  t.routes.subnets.push_back(std::move(sn));
  t.routes.canonicalize();
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

// One decision's fastest time of kReps runs; r holds its result.
double time_decision(Placer &placer, const NodeMap &map, const Input &in, int n, PlaceResult &r, PlaceStatus &s) {
  double best = 1e300;
  for (int k = 0; k < kReps; ++k) {
    const auto a = std::chrono::steady_clock::now();
    s = placer.place_slurm(map, in.words.data(), size_t(n), in.gpus.data(), in.job, PlaceMode::Prefer, r);
    const auto b = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::micro>(b - a).count());
  }
  return best;
}

void record(TopoRun &run, double us, PlaceStatus s, const PlaceResult &r) {
  run.lat.push_back(us);
  run.mix(uint64_t(s));
  for (int i : r.slurm) run.mix(uint64_t(uint32_t(i)));
  run.placed += s != PlaceStatus::NoNodes;
  run.ideal += s == PlaceStatus::Ideal;
}

// Both variants on the same inputs, decision by decision (plain, then routed), so that a slower
// stretch of the shared machine hits both. same_sets counts the decisions whose node sets are
// equal: routes change the rank order's hand-out, not which leaf groups a job gets.
void run_topoaware(Placer &plain, const NodeMap &plain_map, Placer &routed, const NodeMap &routed_map,
                   const std::vector<Input> &inputs, int n, TopoRun &p, TopoRun &q, int &same_sets) {
  PlaceResult r, rr;
  PlaceStatus s, sr;
  // warm-up: the scratch buffers grow once
  time_decision(plain, plain_map, inputs[0], n, r, s);
  time_decision(routed, routed_map, inputs[0], n, rr, sr);
  std::vector<int> a, b;
  same_sets = 0;
  for (const Input &in : inputs) {
    record(p, time_decision(plain, plain_map, in, n, r, s), s, r);
    record(q, time_decision(routed, routed_map, in, n, rr, sr), sr, rr);
    a = r.slurm, b = rr.slurm;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    same_sets += s == sr && a == b;
  }
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(double(v.size()) * q))];
}

double mean_of(const std::vector<double> &v) {
  double m = 0;
  for (double x : v) m += x;
  return m / double(v.size());
}

// The fastest of three builds of a topology index, in ms (done once per topology load).
double index_ms(const Topology &t, std::unique_ptr<TopoIndex> &ix) {
  double best = 1e300;
  for (int k = 0; k < 3; ++k) {
    const auto a = std::chrono::steady_clock::now();
    ix = std::make_unique<TopoIndex>(t);
    const auto b = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(b - a).count());
  }
  return best;
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

// The rank order at job_begin, alone and with the ring book, in a cluster kept about full: the
// routed engine places the inputs' jobs in turn on the nodes left free (all GPUs free, so that the
// whole nodes are the job's), until one finds no nodes; then, for every input, the oldest running
// job ends and that input's job begins if it fits. Every placed job's node set is ordered both ways
// (fastest of kReps; the book's call replaces the job's own edges, so a repeat is the same call).
// Then the book is rebuilt from all running jobs' orders (fastest of 3). One row: the order's p50 and
// p99 alone and booked, their ratio, the rebuild in ms, the running jobs and nodes at the end, the
// booked edge-cables and the book's bytes (counts + per-job cables).
std::string run_ring_book(const TopoIndex &ix, Placer &placer, const NodeMap &map, const std::vector<Input> &inputs,
                          int n) {
  std::vector<uint64_t> words(size_t(n + 63) / 64, 0);
  for (int i = 0; i < n; ++i) words[size_t(i) / 64] |= uint64_t(1) << (i % 64);
  const std::vector<uint16_t> gpus(size_t(n), 8);
  RingEdgeBook book(ix);
  RankOrderer alone(ix);
  struct Running {
    uint32_t id;
    std::vector<int> slurm, ordered;
    Layout layout;
  };
  std::deque<Running> running;
  std::vector<double> t_alone, t_booked;
  uint32_t next_id = 1;
  PlaceResult r;
  std::vector<int> hosts, out;
  const auto begin = [&](const Job &job) {
    const PlaceStatus s = placer.place_slurm(map, words.data(), size_t(n), gpus.data(), job, PlaceMode::Prefer, r);
    if (s == PlaceStatus::NoNodes) return false;
    hosts.clear();
    for (int i : r.slurm) hosts.push_back(map.host(size_t(i)));
    double best_alone = 1e300, best_booked = 1e300;
    const uint32_t id = next_id++;
    for (int k = 0; k < kReps; ++k) {
      const auto a = std::chrono::steady_clock::now();
      alone.order(hosts, job.layout, out);
      const auto b = std::chrono::steady_clock::now();
      book.order(id, hosts, job.layout, out);
      const auto c = std::chrono::steady_clock::now();
      best_alone = std::min(best_alone, std::chrono::duration<double, std::micro>(b - a).count());
      best_booked = std::min(best_booked, std::chrono::duration<double, std::micro>(c - b).count());
    }
    t_alone.push_back(best_alone);
    t_booked.push_back(best_booked);
    for (int i : r.slurm) words[size_t(i) / 64] &= ~(uint64_t(1) << (i % 64));
    running.push_back({id, r.slurm, out, job.layout});
    return true;
  };
  const auto end_oldest = [&] {
    for (int i : running.front().slurm) words[size_t(i) / 64] |= uint64_t(1) << (i % 64);
    book.remove(running.front().id);
    running.pop_front();
  };
  for (size_t k = 0; begin(inputs[k % inputs.size()].job) && k < 100000; ++k) {
  }
  for (const Input &in : inputs) {
    if (!running.empty()) end_oldest();
    begin(in.job);
  }
  // The select plugin rebuilds from each job's order as text ("n1,n2,...", kept in its SPANK
  // environment), as topoaware_ring_book_add_placed reads it: split at commas, each name looked up.
  std::vector<std::string> texts;
  for (const Running &j : running) {
    std::string t;
    for (int h : j.ordered) t += (t.empty() ? "" : ",") + ix.topology().hosts[size_t(h)].name;
    texts.push_back(std::move(t));
  }
  double rebuild_ms = 1e300, text_ms = 1e300;
  uint64_t nodes = 0, cables = 0;
  const auto same_as_kept = [&](const RingEdgeBook &again) {
    std::vector<uint32_t> kept = book.counts(), built = again.counts();
    kept.resize(ix.cable_count(), 0);
    built.resize(ix.cable_count(), 0);
    if (again.edges() != book.edges() || kept != built) {
      std::fprintf(stderr, "placement_latency: %d nodes: the rebuilt ring book differs from the kept one (%llu, %llu edges)\n",
                   n, (unsigned long long)again.edges(), (unsigned long long)book.edges());
      std::exit(1);
    }
  };
  for (int rep = 0; rep < 3; ++rep) {
    const auto a = std::chrono::steady_clock::now();
    RingEdgeBook again(ix);
    for (const Running &j : running) again.add_placed(j.id, j.ordered, j.layout);
    const auto b = std::chrono::steady_clock::now();
    rebuild_ms = std::min(rebuild_ms, std::chrono::duration<double, std::milli>(b - a).count());
    same_as_kept(again);
    cables = again.edges();
    const auto c = std::chrono::steady_clock::now();
    RingEdgeBook from_text(ix);
    for (size_t k = 0; k < running.size(); ++k) {
      std::vector<int> hosts;
      for (size_t at = 0; at <= texts[k].size();) {
        size_t comma = texts[k].find(',', at);
        if (comma == std::string::npos) comma = texts[k].size();
        hosts.push_back(ix.find_host(texts[k].substr(at, comma - at)));
        at = comma + 1;
      }
      from_text.add_placed(running[k].id, hosts, running[k].layout);
    }
    const auto d = std::chrono::steady_clock::now();
    text_ms = std::min(text_ms, std::chrono::duration<double, std::milli>(d - c).count());
    same_as_kept(from_text);
  }
  for (const Running &j : running) nodes += j.slurm.size();
  const double bytes = double(ix.cable_count()) * 4 + double(cables) * 4 + double(book.jobs()) * 64;
  char row[256];
  std::snprintf(row, sizeof row, "%8d %9.2f %9.2f %9.2f %9.2f %7.2f %7.2f %10.3f %8.3f %6zu %7llu %9llu %10.0f", n,
                quantile(t_alone, 0.5), quantile(t_alone, 0.99), quantile(t_booked, 0.5), quantile(t_booked, 0.99),
                quantile(t_booked, 0.5) / quantile(t_alone, 0.5), quantile(t_booked, 0.99) / quantile(t_alone, 0.99),
                rebuild_ms, text_ms, running.size(), (unsigned long long)nodes, (unsigned long long)cables, bytes);
  return row;
}

}  // namespace

int main(int argc, char **argv) {
  const unsigned seed = argc > 1 ? unsigned(std::strtoul(argv[1], nullptr, 10)) : 1;
  const int decisions = argc > 2 ? std::atoi(argv[2]) : 200;
  const int only = argc > 3 ? std::atoi(argv[3]) : 0;
  const bool moe = argc > 4 && std::string(argv[4]) == "moe";
  if (only && (only < 256 || only > 32768 || (only & (only - 1)) != 0)) {
    std::fprintf(stderr, "placement_latency: NODES must be a power of two from 256 to 32768, not %d\n", only);
    return 2;
  }
  std::printf("# placement decision latency, seed %u, %d decisions per size, 32-node leaf groups, 16 per pod%s\n", seed,
              decisions, moe ? ", every job MoE (ep 8/4/2 dividing dp)" : "");
  std::printf("# without recorded routes (canonical hand-out); mean and p99 over decisions, first fit's mean\n");
  std::printf("%8s %12s %12s %12s %12s %8s %8s %17s\n", "nodes", "topo_us", "topo_p99_us", "firstfit_us", "ratio",
              "ideal%", "nodes/job", "decisions_hash");
  std::vector<std::string> routed_rows, book_rows;
  // Past 16,384 only when asked for (32,768 is the largest: one InfiniBand subnet holds at most
  // 49,151 unicast LIDs, so no routed fabric has 65,536 hosts with one port each).
  for (int n = 256; n <= std::max(16384, std::min(only, 32768)); n *= 2) {
    if (only && n != only) continue;
    Topology t = build(n);
    Topology tr = t;
    add_routes(tr);
    std::unique_ptr<TopoIndex> ixp, ixr;
    const double plain_ms = index_ms(t, ixp), routed_ms = index_ms(tr, ixr);
    const TopoIndex &ix = *ixp;
    if (!ixr->has_entry_classes()) {
      std::fprintf(stderr, "placement_latency: %d nodes: the synthetic routes give no entry classes\n", n);
      return 1;
    }
    std::vector<std::string> names;
    for (const Host &h : t.hosts) names.push_back(h.name);
    std::mt19937 rng(seed + unsigned(n));
    std::shuffle(names.begin(), names.end(), rng);  // Slurm's node table need not be in name order
    NodeMap map(ix, names), map_r(*ixr, names);
    Placer placer(ix), placer_r(*ixr);
    double job_nodes = 0;
    std::vector<Input> inputs = make_inputs(ix, names, n, decisions, rng, job_nodes);
    if (moe)  // after the draws: the same inputs otherwise
      for (Input &in : inputs)
        for (uint32_t e : {8u, 4u, 2u})
          if (in.job.layout.dp % e == 0) {
            in.job.layout.ep = e;
            break;
          }
    TopoRun run, run_r;
    int same_sets = 0;
    run_topoaware(placer, map, placer_r, map_r, inputs, n, run, run_r, same_sets);
    size_t sink = 0;
    const double ff_us = run_first_fit(inputs, n, decisions, sink);
    const double mean = mean_of(run.lat), p50 = quantile(run.lat, 0.5), p99 = quantile(run.lat, 0.99);
    const double p50_r = quantile(run_r.lat, 0.5), p99_r = quantile(run_r.lat, 0.99);
    std::printf("%8d %12.2f %12.2f %12.2f %12.1f %8.1f %8.0f  %016llx%s\n", n, mean, p99, ff_us,
                ff_us > 0 ? mean / ff_us : 0, run.placed ? 100.0 * run.ideal / run.placed : 0, job_nodes / decisions,
                (unsigned long long)run.hash, sink ? "" : " ");
    char row[256];
    std::snprintf(row, sizeof row, "%8d %10.2f %10.2f %10.2f %10.2f %8.2f %8.2f %10.2f %8.1f %9.1f %9.1f  %016llx", n, p50,
                  p99, p50_r, p99_r, p50_r / p50, p99_r / p99, mean_of(run_r.lat), 100.0 * same_sets / decisions,
                  plain_ms, routed_ms, (unsigned long long)run_r.hash);
    routed_rows.push_back(row);
    book_rows.push_back(run_ring_book(*ixr, placer_r, map_r, inputs, n));
  }
  // The second table after the first, whose rows scripts read by their node count.
  std::printf("# with recorded routes (minhop tables): the same inputs, interleaved; ratios routed / plain;\n"
              "# same%%: decisions with the same node set; index_ms: building the topology index (fastest of 3)\n");
  std::printf("%8s %10s %10s %10s %10s %8s %8s %10s %8s %9s %9s  %16s\n", "routed", "plain_p50", "plain_p99",
              "rout_p50", "rout_p99", "p50_x", "p99_x", "rout_mean", "same%", "index_ms", "rindex_ms", "routed_hash");
  for (const std::string &row : routed_rows) std::printf("%s\n", row.c_str());
  std::printf("# the rank order at job_begin (routed), alone and counting the running jobs' ring edges, in a cluster\n"
              "# kept about full by the same jobs; x: booked / alone; rebuild_ms: the book from every running job's\n"
              "# order (fastest of 3); text_ms: the same from each order as text, as the select plugin reads it;\n"
              "# jobs, nodes: running at the end; cables: booked edge-cables; bytes: the book\n");
  std::printf("%8s %9s %9s %9s %9s %7s %7s %10s %8s %6s %7s %9s %10s\n", "book", "alone_p50", "alone_p99", "book_p50",
              "book_p99", "p50_x", "p99_x", "rebuild_ms", "text_ms", "jobs", "nodes", "cables", "bytes");
  for (const std::string &row : book_rows) std::printf("%s\n", row.c_str());
  return 0;
}
