// SPDX-License-Identifier: GPL-2.0-or-later
// Decision tests as data (tests/check_decisions.sh): runs every request of a .requests file through the
// select plugin's decision (corelib/select_policy.hpp: select_decide, run-now, with a stand-in for
// cons_tres that accepts the first block offered and, for plain cons_tres, fits when enough usable
// nodes have the GPUs free) on one topology.json, and prints each decision in a stable text form:
// the verdict, the nodes in rank order, their runs on leaf groups, the span against the ideal, and
// whether the rank order of the node set alone (rank_order.hpp, what the SPANK plugin computes on
// the node) is the same order. Only decisions are printed, never log or status wording.
//
//   decision_run TOPOLOGY.json REQUESTS
//
// A request is one line: a name, then key=value words (# starts a comment line):
//   layout=SPEC         the layout as parse_layout reads it ("tp=8,pp=2,dp=4[,rank-order=tp-pp-dp]")
//   gpus=N              GPUs of every node and the job's GPUs per node (default 8)
//   mode=prefer|strict  the job's mode (default prefer; strict before its maximum wait is over)
//   busy=HOSTLIST       nodes with no GPU free (repeatable)
//   partial=HOSTLIST:N  nodes with N GPUs free (repeatable)
//   down=HOSTLIST       nodes Slurm may not use at all (repeatable)
// Exit status: 0 printed, 2 a bad file or request (the message names the line).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cost.hpp"
#include "hostlist.hpp"
#include "placement.hpp"
#include "policies.hpp"
#include "rank_order.hpp"
#include "select_policy.hpp"
#include "select_standin.hpp"
#include "topology_json.hpp"

using namespace topoaware;

namespace {

struct DecisionRequest {
  std::string name;
  Layout layout;
  uint32_t gpus = 8;
  bool strict = false;
  std::vector<std::pair<std::string, uint16_t>> free_gpus;  // host list, GPUs free
  std::vector<std::string> down;
};

std::vector<std::string> words(const std::string &line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

DecisionRequest parse_request(const std::vector<std::string> &w) {
  DecisionRequest r;
  r.name = w[0];
  bool has_layout = false;
  for (size_t i = 1; i < w.size(); ++i) {
    const size_t eq = w[i].find('=');
    if (eq == std::string::npos) throw std::runtime_error("expected key=value: " + w[i]);
    const std::string key = w[i].substr(0, eq), value = w[i].substr(eq + 1);
    if (key == "layout") {
      r.layout = parse_layout(value);
      has_layout = true;
    } else if (key == "gpus") {
      r.gpus = uint32_t(std::stoul(value));
      if (r.gpus == 0 || r.gpus > 1024) throw std::runtime_error("gpus out of range: " + value);
    } else if (key == "mode") {
      if (value != "prefer" && value != "strict") throw std::runtime_error("mode is prefer or strict: " + value);
      r.strict = value == "strict";
    } else if (key == "busy") {
      r.free_gpus.emplace_back(value, 0);
    } else if (key == "partial") {
      const size_t colon = value.rfind(':');
      if (colon == std::string::npos) throw std::runtime_error("partial=HOSTLIST:N: " + value);
      r.free_gpus.emplace_back(value.substr(0, colon), uint16_t(std::stoul(value.substr(colon + 1))));
    } else if (key == "down") {
      r.down.push_back(value);
    } else {
      throw std::runtime_error("unknown key: " + key);
    }
  }
  if (!has_layout) throw std::runtime_error("no layout=");
  return r;
}

std::vector<int> hosts_of(const Topology &t, const std::string &list) {
  std::vector<int> out;
  for (const std::string &n : hostlist_expand(list)) {
    const int h = t.host_index(n);
    if (h < 0) throw std::runtime_error("not in the topology: " + n);
    out.push_back(h);
  }
  return out;
}

std::string compress(const Topology &t, std::vector<int> hosts) {
  std::vector<std::string> n;
  for (int h : hosts) n.push_back(t.hosts[size_t(h)].name);
  std::sort(n.begin(), n.end());
  return hostlist_compress(n);
}

std::string leaf_name(const Topology &t, int h) {
  const int leaf = t.hosts[size_t(h)].leaf;
  return leaf < 0 ? std::string("(no leaf)") : t.switches[size_t(leaf)].name;
}

void run(standin::Cluster &c, const DecisionRequest &r) {
  const Topology &t = c.topo;
  const TopoIndex &ix = c.index;
  const size_t n = t.hosts.size();
  Job job;
  job.layout = r.layout;
  job.gpus_per_node = r.gpus;
  job.nodes = r.gpus && r.layout.world() % r.gpus == 0 ? uint32_t(r.layout.world() / r.gpus) : 0;
  standin::Call call(c, job, r.strict, uint16_t(r.gpus), uint16_t(r.gpus), 3600);
  for (const auto &[list, gpus] : r.free_gpus)
    for (int h : hosts_of(t, list)) call.free_now[size_t(h)] = gpus;
  for (const std::string &list : r.down)
    for (int h : hosts_of(t, list)) call.set_usable(size_t(h), false);
  uint32_t candidates = 0;
  for (size_t i = 0; i < n; ++i)
    if (call.is_usable(i) && call.free_now[i] >= r.gpus) ++candidates;

  // cons_tres as the policy sees it: every block offered fits (the block is the decision under
  // test); plain cons_tres fits when enough usable nodes have the GPUs free.
  standin::ConsTres cons;
  cons.plain_ok = candidates >= job.nodes;
  const SelectAnswer a = call.run(cons);
  const SelectRequest &req = call.req;
  const bool plain_asked = cons.plain_calls() > 0;

  std::printf("request %s\n", r.name.c_str());
  std::printf("  job: %u nodes x %u GPUs, %s, %s; nodes with %u GPUs free: %u of %zu\n", req.job.nodes, r.gpus,
              to_string(r.layout).c_str(), r.strict ? "strict" : "prefer", r.gpus, candidates, n);
  switch (a.verdict) {
    case SelectVerdict::Block:
      std::printf("  decision: block (%s), %d block(s) offered\n", a.placement, a.tries);
      break;
    case SelectVerdict::Plain:
      std::printf("  decision: plain cons_tres%s\n", a.tries ? " after blocks refused" : "");
      return;
    case SelectVerdict::Wait:
      std::printf("  decision: wait%s\n", plain_asked ? " (plain cons_tres does not fit either)" : "");
      return;
  }
  const std::vector<int> &order = cons.blocks.back();  // node-table index = topology host index here
  std::printf("  nodes: %s\n", compress(t, order).c_str());
  std::string line;
  for (int h : order) line += " " + t.hosts[size_t(h)].name;
  std::printf("  rank order:%s\n", line.c_str());
  line.clear();
  for (size_t k = 0; k < order.size();) {
    const int g = ix.host_leaf_group(order[k]);
    std::vector<int> run;
    while (k < order.size() && ix.host_leaf_group(order[k]) == g) run.push_back(order[k++]);
    line += (line.empty() ? " " : " | ") + compress(t, run) + " on " + leaf_name(t, run.front());
  }
  std::printf("  leaf groups in rank order:%s\n", line.c_str());
  const PlaceQuality q = job_span(ix, order, r.layout);
  std::printf("  span: %u leaf groups (ideal %u), %u pods (ideal %u), %u of %u segments above their ideal\n",
              q.leaf_groups, q.ideal_leaf_groups, q.pods, q.ideal_pods, q.split_segments, q.segments);
  // The SPANK plugin's side: the same order from the node set alone, given in reverse name order.
  std::vector<std::string> names;
  for (int h : order) names.push_back(t.hosts[size_t(h)].name);
  std::vector<std::string> sorted = names;
  std::sort(sorted.rbegin(), sorted.rend());
  const std::vector<std::string> again = order_node_names(ix, sorted, r.layout);
  std::printf("  rank order of the node set: %s\n", again == names ? "the same" : "DIFFERENT");
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TOPOLOGY.json REQUESTS\n", argv[0]);
    return 2;
  }
  Topology t;
  try {
    t = load_topology_file(argv[1]);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  standin::Cluster c(std::move(t));
  std::ifstream in(argv[2]);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", argv[2]);
    return 2;
  }
  std::printf("fabric: %zu hosts, %d leaf groups, %d pods\n", c.topo.hosts.size(), c.index.leaf_group_count(),
              c.index.pod_count());
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const std::vector<std::string> w = words(line);
    if (w.empty() || w[0][0] == '#') continue;
    try {
      const DecisionRequest r = parse_request(w);
      std::fflush(stdout);
      run(c, r);
    } catch (const std::exception &e) {
      std::fflush(stdout);
      std::fprintf(stderr, "%s:%d: %s\n", argv[2], lineno, e.what());
      return 2;
    }
  }
  return 0;
}
