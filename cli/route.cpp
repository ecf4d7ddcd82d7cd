// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware route: the path of one flow through the forwarding tables recorded in topology.json
// (discover --routes or --lfts), hop by hop, as ibtracert shows it on a live fabric.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli_commands.hpp"
#include "route_trace.hpp"
#include "topology_json.hpp"

namespace topoaware {

void add_route_command(CLI::App &app, RouteOptions &o) {
  auto *cmd = app.add_subcommand(
      "route", "Follow a flow between two hosts through the forwarding tables recorded in topology.json");
  o.command = cmd;
  cmd->add_option("-t,--topology", o.topology, "topology.json written with discover --routes or --lfts (FILE)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("source", o.source, "Source host (its rail 0 port, or --rail)")->required();
  cmd->add_option("destination", o.destination, "Destination host")->required();
  cmd->add_option("--rail", o.rail, "Use the hosts' ports of this rail (default 0)")->check(CLI::Range(0, 1023));
  cmd->add_option("--path-bits", o.path_bits,
                  "Send to the destination's base LID plus this offset (ports with LMC > 0; default 0)")
      ->check(CLI::Range(0, 127));
  cmd->add_option("--format", o.format, "text or json")->check(CLI::IsMember({"text", "json"}));
}

namespace {

int port_of_rail(const Host &h, int rail) {
  for (size_t p = 0; p < h.ports.size(); ++p)
    if (h.ports[p].rail == rail) return int(p);
  return -1;
}

}  // namespace

int run_route(const RouteOptions &o) {
  Topology topo = load_topology_file(o.topology);
  if (topo.routes.empty())
    throw Failure(o.topology + " holds no routes: write it with topoaware discover --routes (a live fabric) or "
                  "--lfts FILE (saved dump_fts output)");
  int src = topo.host_index(o.source), dst = topo.host_index(o.destination);
  if (src < 0) throw Failure("no host " + o.source + " in " + o.topology, kExitUsage);
  if (dst < 0) throw Failure("no host " + o.destination + " in " + o.topology, kExitUsage);
  int sp = port_of_rail(topo.hosts[size_t(src)], o.rail), dp = port_of_rail(topo.hosts[size_t(dst)], o.rail);
  if (sp < 0 || dp < 0)
    throw Failure("rail " + std::to_string(o.rail) + ": " + (sp < 0 ? o.source : o.destination) +
                      " has no port on it",
                  kExitUsage);
  RouteTracer tracer(topo);
  TracedRoute r = tracer.trace(src, sp, dst, dp, o.path_bits);
  const HcaPort &s = topo.hosts[size_t(src)].ports[size_t(sp)];
  const HcaPort &d = topo.hosts[size_t(dst)].ports[size_t(dp)];
  if (o.format == "json") {
    nlohmann::ordered_json j;
    j["source"] = {{"host", o.source}, {"ca_guid", guid_str(s.ca_guid)}, {"port", s.port}};
    j["destination"] = {{"host", o.destination}, {"ca_guid", guid_str(d.ca_guid)}, {"port", d.port}};
    j["dlid"] = r.dlid;
    nlohmann::ordered_json hops = nlohmann::ordered_json::array();
    for (const auto &h : r.hops) {
      const Switch &sw = topo.switches[size_t(h.sw)];
      hops.push_back({{"switch", sw.name}, {"guid", guid_str(sw.guid)}, {"in", h.in_port}, {"out", h.out_port}});
    }
    j["hops"] = std::move(hops);
    j["error"] = r.ok() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.error);
    std::printf("%s\n", j.dump(1).c_str());
  } else {
    std::printf("From %s port %d (%s) to %s port %d (%s), LID %u:\n", o.source.c_str(), s.port,
                guid_str(s.ca_guid).c_str(), o.destination.c_str(), d.port, guid_str(d.ca_guid).c_str(), r.dlid);
    for (const auto &h : r.hops) {
      const Switch &sw = topo.switches[size_t(h.sw)];
      std::printf("  [%d] %s %s [%d]\n", h.in_port, guid_str(sw.guid).c_str(), sw.name.c_str(), h.out_port);
    }
    if (!r.ok()) std::printf("  stopped: %s\n", r.error.c_str());
  }
  if (!r.ok()) {
    std::fprintf(stderr, "topoaware: %s\n", r.error.c_str());
    return kRouteExitBroken;
  }
  return 0;
}

}  // namespace topoaware
