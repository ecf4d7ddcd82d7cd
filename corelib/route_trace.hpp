// SPDX-License-Identifier: GPL-2.0-or-later
// Following a flow through the recorded forwarding tables (routes.hpp), hop by hop, as the
// switches of the fabric forward its packets: what ibtracert does on a live fabric, done on
// topology.json.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "topology.hpp"

namespace topoaware {

struct RouteHop {
  int sw = -1;        // index into Topology::switches
  int in_port = 0;    // the port the packet enters by
  int out_port = 0;   // the port the switch's LFT sends it out of
};

struct TracedRoute {
  std::vector<RouteHop> hops;  // the switches in order, first = the source port's switch
  uint16_t dlid = 0;           // the destination LID the packets carry
  std::string error;           // empty when the destination port was reached
  bool ok() const { return error.empty(); }
};

// Indexes a Topology's cabling and routes once; the Topology must outlive it.
class RouteTracer {
 public:
  explicit RouteTracer(const Topology &topo);
  // The topology carries routes (topoaware discover --routes or --lfts).
  bool has_routes() const { return !topo_->routes.empty(); }
  // The path of packets from port `src_port` (index into Host::ports) of host `src_host` to port
  // `dst_port` of `dst_host`, sent to the destination's base LID + path_bits (with LMC > 0 a port
  // answers to 2^LMC LIDs, each possibly routed its own way; NCCL's queue pairs use the base LID
  // unless told otherwise). Never throws: what stopped the trace (no route, a loop, a port that
  // leads nowhere, another subnet) is in TracedRoute::error.
  TracedRoute trace(int src_host, int src_port, int dst_host, int dst_port, int path_bits = 0) const;
  // The LID packets to that host port carry (its base LID in the subnet of `via_switch`), 0 if unknown.
  uint16_t lid_of(int host, int port, int via_switch) const;
  // The subnet (index into Routes::subnets) a switch's table was read from, -1 if none.
  int subnet_of(int sw) const;

  // What a switch port's cable leads to.
  struct Peer {
    enum Kind : uint8_t { None, Switch, HostPort } kind = None;
    int index = -1;  // switch index, or host index
    int port = 0;    // port on that switch, or index into Host::ports
  };
  Peer peer(int sw, int port) const;

 private:
  static uint64_t key(int sw, int port) { return (uint64_t(uint32_t(sw)) << 8) | uint32_t(port & 0xff); }
  const Topology *topo_;
  std::unordered_map<uint64_t, Peer> peers_;
  std::vector<int> subnet_;                  // per switch
  std::vector<const SwitchLft *> lft_;       // per switch, nullptr if not read
};

// "leaf01 p33 -> spine02 p5 -> leaf03 p7": the hops of a traced route, by switch name and port.
std::string route_to_text(const Topology &topo, const TracedRoute &r);

}  // namespace topoaware
