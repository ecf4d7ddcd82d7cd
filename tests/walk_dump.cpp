// SPDX-License-Identifier: GPL-2.0-or-later
// Test helper: walks the fabric with walk_fabric() (or reads an ibnd cache) and prints the Fabric
// in a stable text form, so that shell tests can compare it with other views of the same fabric
// (ibnetdiscover's own output, the text parser). Exit status: 0 = complete walk, 1 = partial walk
// (problems listed on stdout as "problem ..." lines), 2 = walk could not run / bad usage.
//
//   walk_dump [--ca CA] [--port N] [--retries N] [--timeout MS] [--max-hops N]
//             [--cache-load FILE] [--cache-save FILE] [--progress]
//   walk_dump --parse FILE     (reads saved ibnetdiscover output with parse_ibnetdiscover_file
//                               instead, and prints it the same way)
//
// Output, sorted by GUID and port (ports of switches print "-" as port GUID, since a switch's
// ports share the GUID of port 0 and ibnetdiscover does not print them per port):
//   node <guid> <Switch|Ca|Router> <nports> "<description>"
//   port <guid> <num> <port guid|-> <remote guid> <remote port> <width> <speed>
//   problem <guid> <port> <what>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "ibnd_walk.hpp"
#include "ibnetdiscover_parser.hpp"

using namespace topoaware;

namespace {
const char *type_name(NodeType t) {
  switch (t) {
    case NodeType::Switch: return "Switch";
    case NodeType::Router: return "Router";
    default: return "Ca";
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: walk_dump [--ca CA] [--port N] [--retries N] [--timeout MS] [--max-hops N]\n"
               "                 [--cache-load FILE] [--cache-save FILE] [--progress]\n"
               "       walk_dump --parse IBNETDISCOVER_OUTPUT\n");
  return 2;
}
}  // namespace

int main(int argc, char **argv) {
  WalkOptions opts;
  WalkTarget target;
  bool have_target = false;
  std::string parse;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
    const char *v = nullptr;
    if (a == "--progress") {
      opts.progress = [](double s, int sw, int ca, bool done) {
        if (done) std::fprintf(stderr, "progress: done %.2f s, %d switches, %d CAs\n", s, sw, ca);
        else std::fprintf(stderr, "progress: %.2f s\n", s);
      };
      continue;
    }
    if (!(v = value())) return usage();
    if (a == "--ca") target.ca = v, have_target = true;
    else if (a == "--port") target.port = std::atoi(v), have_target = true;
    else if (a == "--retries") opts.retries = std::atoi(v);
    else if (a == "--timeout") opts.timeout_ms = std::atoi(v);
    else if (a == "--max-hops") opts.max_hops = std::atoi(v);
    else if (a == "--cache-load") opts.cache_load = v;
    else if (a == "--cache-save") opts.cache_save = v;
    else if (a == "--parse") parse = v;
    else return usage();
  }
  if (have_target) opts.targets.push_back(target);

  Fabric f;
  try {
    f = parse.empty() ? walk_fabric(opts) : parse_ibnetdiscover_file(parse);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "walk_dump: %s\n", e.what());
    return 2;
  }
  // Ports are sorted by Fabric::finish; nodes are put in GUID order here (the parser keeps file
  // order).
  std::sort(f.nodes.begin(), f.nodes.end(), [](const FabricNode &a, const FabricNode &b) { return a.guid < b.guid; });
  for (const auto &n : f.nodes) {
    std::printf("node %s %s %d \"%s\"\n", guid_str(n.guid).c_str(), type_name(n.type), n.nports, n.desc.c_str());
    for (const auto &p : n.ports)
      std::printf("port %s %d %s %s %d %s %s\n", guid_str(n.guid).c_str(), p.num,
                  n.type == NodeType::Switch ? "-" : guid_str(p.port_guid).c_str(), guid_str(p.remote_guid).c_str(),
                  p.remote_port, width_name(p.width).c_str(), speed_name(p.speed));
  }
  for (const auto &p : f.problems)
    std::printf("problem %s %d %s\n", guid_str(p.guid).c_str(), p.port, p.what.c_str());
  return f.problems.empty() ? 0 : 1;
}
