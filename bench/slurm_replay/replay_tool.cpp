// SPDX-License-Identifier: GPL-2.0-or-later
// slurm_replay_tool: the two helpers of the replay through real slurmctld (bench/slurm_replay.sh).
//
//   slurm_replay_tool trace [--seed S] [--nodes N] [--per-leaf P] [--span SEC] [--load L]
//                           [--rt-min SEC] [--rt-max SEC] [--max-nodes M] [--big-frac F]
//                           [--plain-frac F] [--frag]
//     A synthetic trace (bench/sim/replay_trace.cpp), deterministic for a seed (std::mt19937_64 and
//     libstdc++'s distributions, as bench/sim/sim.cpp's make_trace). One line per job:
//       idx arrival_s runtime_s nodes tp pp dp kind node
//     kind: layout (tp=8 x pp x dp, whole 8-GPU nodes), plain (exclusive, no layout), frag (a
//     single-node job pinned to `node` and submitted before the trace starts: the fragmented
//     initial state). Layout and plain jobs: nodes log-uniform in [1, max-nodes] (default 16) as
//     make_trace; a share big-frac of jobs is larger (24 or 32 nodes: "16+"); pp uniform in
//     {1,2,4,8,16} <= nodes, dp = round(nodes/pp), nodes = dp*pp; runtimes log-uniform in
//     [rt-min, rt-max] (default 10..80 s, "tens of seconds"); Poisson arrivals in [0, span] at the
//     offered load (sum nodes*runtime over nodes*span; frag jobs not counted).
//
//   slurm_replay_tool replica --topology-conf FILE --node-order HOSTLIST
//     The simulator's replica of Slurm 22.05.8's topology/tree best fit (corelib/slurm_tree.cpp,
//     _eval_nodes_topo) on the switch table Slurm builds from FILE (topology_tree.c:
//     _validate_switches, read here the same way: table in file order, leaf level 0, a parent
//     level 1 + max child level, parent = the last switch listing it, 0 for the switches nobody
//     lists (xcalloc), distances 1 parent<->child then shortest paths). HOSTLIST is Slurm's node
//     table order (slurm.conf order). Reads lines "KEY NODES FREE_HOSTLIST" on stdin, prints
//     "KEY ok CHOSEN_HOSTLIST LEAF_SWITCHES" or "KEY fail - 0".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "hostlist.hpp"
#include "replay_trace.hpp"
#include "policies.hpp"

using namespace topoaware;
using namespace topoaware::sim;

namespace {

[[noreturn]] void usage() {
  std::fprintf(
      stderr,
      "usage: slurm_replay_tool trace [--seed S] [--nodes N] [--per-leaf P] [--span SEC] [--load L]\n"
      "                               [--rt-min SEC] [--rt-max SEC] [--max-nodes M] [--big-frac F]\n"
      "                               [--plain-frac F] [--frag]\n"
      "       slurm_replay_tool replica --topology-conf FILE --node-order HOSTLIST  < 'KEY NODES FREE' lines\n");
  std::exit(2);
}

int trace_main(int argc, char **argv) {
  ReplayTraceSpec s;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--seed") s.seed = std::strtoull(val().c_str(), nullptr, 10);
    else if (a == "--nodes") s.nodes = std::atoi(val().c_str());
    else if (a == "--per-leaf") s.per_leaf = std::atoi(val().c_str());
    else if (a == "--span") s.span = std::atof(val().c_str());
    else if (a == "--load") s.load = std::atof(val().c_str());
    else if (a == "--rt-min") s.rt_min = std::atof(val().c_str());
    else if (a == "--rt-max") s.rt_max = std::atof(val().c_str());
    else if (a == "--max-nodes") s.max_nodes = std::atoi(val().c_str());
    else if (a == "--big-frac") s.big_frac = std::atof(val().c_str());
    else if (a == "--plain-frac") s.plain_frac = std::atof(val().c_str());
    else if (a == "--frag") s.frag = true;
    else usage();
  }
  if (!s.valid()) usage();
  double offered = 0;
  const std::vector<ReplayJob> jobs = make_replay_trace(s, &offered);
  std::printf(
      "# slurm_replay_tool trace --seed %llu --nodes %d --per-leaf %d --span %g --load %g --rt-min %g --rt-max %g"
      " --max-nodes %d --big-frac %g --plain-frac %g%s\n",
      (unsigned long long)s.seed, s.nodes, s.per_leaf, s.span, s.load, s.rt_min, s.rt_max, s.max_nodes, s.big_frac,
      s.plain_frac, s.frag ? " --frag" : "");
  std::printf("# %zu jobs, offered load of the trace jobs %.3f\n", jobs.size(), offered);
  std::printf("# idx arrival_s runtime_s nodes tp pp dp kind node\n");
  int idx = 0;
  for (const ReplayJob &j : jobs) {
    char node[32] = "-";
    if (j.node >= 0) std::snprintf(node, sizeof node, "n%04d", j.node + 1);
    std::printf("%d %.1f %.1f %d %d %d %d %s %s\n", idx++, j.arrival, j.runtime, j.nodes, j.tp, j.pp, j.dp,
                j.kind.c_str(), node);
  }
  return 0;
}

// ---- replica ----------------------------------------------------------------------------------

std::map<std::string, std::string> parse_kv(const std::string &line) {
  std::map<std::string, std::string> kv;
  std::istringstream in(line);
  std::string w;
  while (in >> w) {
    const size_t eq = w.find('=');
    if (eq == std::string::npos) continue;
    std::string k = w.substr(0, eq);
    std::transform(k.begin(), k.end(), k.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    kv[k] = w.substr(eq + 1);
  }
  return kv;
}

// Slurm's switch table from topology.conf (topology_tree.c _validate_switches, 22.05.8).
void load_tree(Cluster &c, const std::string &file, const std::map<std::string, int> &node_index) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file);
  struct Rec {
    std::string name, nodes, switches;
  };
  std::vector<Rec> recs;
  std::string line;
  while (std::getline(in, line)) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    auto kv = parse_kv(line);
    if (!kv.count("switchname")) continue;
    recs.push_back(
        {kv["switchname"], kv.count("nodes") ? kv["nodes"] : "", kv.count("switches") ? kv["switches"] : ""});
  }
  if (recs.empty()) throw std::runtime_error(file + ": no switches");
  std::map<std::string, int> sw_index;
  for (size_t i = 0; i < recs.size(); ++i) sw_index[recs[i].name] = int(i);
  const size_t n = recs.size();
  c.sw.assign(n, SlurmSwitch{});
  std::vector<int> level(n, -1);
  std::vector<std::vector<int>> children(n);
  c.host_leaf_switch.assign(size_t(c.nodes), -1);
  for (size_t i = 0; i < n; ++i) {
    c.sw[i].parent = 0;  // xcalloc; set below for every listed child
    if (!recs[i].nodes.empty()) {
      level[i] = 0;
      for (const auto &h : hostlist_expand(recs[i].nodes)) {
        auto it = node_index.find(h);
        if (it == node_index.end()) continue;  // Slurm: "Invalid hostnames in switch configuration"
        c.sw[i].nodes.push_back(it->second);
        c.host_leaf_switch[size_t(it->second)] = int(i);
      }
    } else {
      for (const auto &s : hostlist_expand(recs[i].switches)) {
        auto it = sw_index.find(s);
        if (it == sw_index.end() || size_t(it->second) == i)
          throw std::runtime_error(file + ": switch " + recs[i].name + " has invalid child " + s);
        children[i].push_back(it->second);
      }
    }
  }
  for (int depth = 0; depth < 21; ++depth) {  // levels: 1 + max child level, nodes: union
    bool resolved = true;
    for (size_t i = 0; i < n; ++i) {
      if (level[i] != -1) continue;
      bool ok = true;
      int lv = -1;
      for (int ch : children[i]) {
        if (level[size_t(ch)] == -1) {
          ok = false;
          break;
        }
        lv = std::max(lv, level[size_t(ch)] + 1);
      }
      if (!ok) {
        resolved = false;
        continue;
      }
      level[i] = lv;
      std::vector<uint8_t> mark(size_t(c.nodes), 0);
      for (int ch : children[i])
        for (int h : c.sw[size_t(ch)].nodes) mark[size_t(h)] = 1;
      for (int h = 0; h < c.nodes; ++h)
        if (mark[size_t(h)]) c.sw[i].nodes.push_back(h);
    }
    if (resolved) break;
    if (depth == 20) throw std::runtime_error(file + ": switch configuration is not a tree");
  }
  for (size_t i = 0; i < n; ++i) {
    c.sw[i].level = level[i];
    std::sort(c.sw[i].nodes.begin(), c.sw[i].nodes.end());
    for (int ch : children[i]) c.sw[size_t(ch)].parent = int(i);  // _find_child_switches, in table order
  }
  c.sw_dist.assign(n, std::vector<unsigned>(n, Cluster::kInf));
  for (size_t i = 0; i < n; ++i) {
    c.sw_dist[i][i] = 0;
    for (int ch : children[i]) c.sw_dist[i][size_t(ch)] = c.sw_dist[size_t(ch)][i] = 1;
  }
  for (size_t i = 0; i < n; ++i)  // _check_better_path(i, j, k): i is the intermediate switch
    for (size_t j = 0; j < n; ++j)
      for (size_t k = 0; k < n; ++k) {
        const unsigned a = c.sw_dist[j][i], b = c.sw_dist[i][k];
        const unsigned t = (a == Cluster::kInf || b == Cluster::kInf) ? Cluster::kInf : a + b;
        if (c.sw_dist[j][k] > t) c.sw_dist[j][k] = t;
      }
}

int replica_main(int argc, char **argv) {
  std::string conf, order;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--topology-conf" && i + 1 < argc) conf = argv[++i];
    else if (a == "--node-order" && i + 1 < argc) order = argv[++i];
    else usage();
  }
  if (conf.empty() || order.empty()) usage();
  const std::vector<std::string> names = hostlist_expand(order);
  std::map<std::string, int> index;
  for (size_t i = 0; i < names.size(); ++i) index[names[i]] = int(i);
  Cluster c;
  c.name = "slurm-conf";
  c.nodes = int(names.size());
  load_tree(c, conf, index);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string key, free_list;
    int nodes = 0;
    if (!(in >> key >> nodes)) continue;
    in >> free_list;
    std::vector<uint8_t> free(size_t(c.nodes), 0);
    if (!free_list.empty() && free_list != "-")
      for (const auto &h : hostlist_expand(free_list)) {
        auto it = index.find(h);
        if (it == index.end()) throw std::runtime_error("free node " + h + " is not in --node-order");
        free[size_t(it->second)] = 1;
      }
    std::vector<int> out;
    int leaves = 0;
    if (slurm_tree_select(c, free, nodes, out, &leaves)) {
      std::vector<std::string> chosen;
      for (int h : out) chosen.push_back(names[size_t(h)]);
      std::printf("%s ok %s %d\n", key.c_str(), hostlist_compress(chosen).c_str(), leaves);
    } else {
      std::printf("%s fail - 0\n", key.c_str());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) usage();
  const std::string cmd = argv[1];
  try {
    if (cmd == "trace") return trace_main(argc - 2, argv + 2);
    if (cmd == "replica") return replica_main(argc - 2, argv + 2);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "slurm_replay_tool: %s\n", e.what());
    return 1;
  }
  usage();
}
