// SPDX-License-Identifier: GPL-2.0-or-later
// The unicast routes of a fabric as its subnet manager programmed them: every switch's linear
// forwarding table (LFT) and every port's LID, per subnet. They come from a live walk
// (`topoaware discover --routes`: the SMP queries of ibroute and dump_fts) or from saved dump_fts /
// ibroute output (`--lfts FILE`), and are kept in topology.json beside the cabling.
//
// Why keep them: the cables a flow takes are decided by these tables, not by host names or the
// order of hosts in topology.json. A subnet manager assigns LIDs as it finds ports and balances
// each switch's table over destination LIDs in its own order (OpenSM's ftree walks leaf ports in
// port order, minhop and updn balance over end ports in port order). Anything that predicts which
// uplink a flow takes must read the tables; a guess from indexes is wrong on a fabric cabled in
// another order.
//
// Routes change without a cable changing (an SM restart, a failover, a re-sweep after a link
// flap), so they have a hash of their own, apart from the cabling hash (Topology::hash).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace topoaware {

// The version of topology.json's "routes" member; a reader refuses others.
inline constexpr int kRoutesVersion = 1;

// LFT entry of a LID the switch does not route (IBTA vol. 1, 14.2.5.10: "no route"); any port
// number above the switch's port count is dropped the same way.
inline constexpr uint8_t kNoRoute = 255;
// Unicast LIDs are 1 .. 0xBFFF; the LFT is indexed by LID.
inline constexpr unsigned kMaxUnicastLid = 0xBFFF;

struct SwitchLft {
  uint64_t guid = 0;          // node GUID
  uint16_t lid = 0;           // the switch's own LID (port 0); 0 = unknown
  std::vector<uint8_t> out;   // out[lid] = egress port (0 = the switch itself), kNoRoute = none
};

// A CA (or router) port's LIDs: base_lid .. base_lid + 2^lmc - 1.
struct PortLid {
  uint64_t guid = 0;          // node GUID of the CA
  int port = 0;               // port number on the CA
  uint16_t base_lid = 0;
  int lmc = 0;                // 0..7
};

// One subnet: its own LID space, routed by its own subnet manager. A rail-optimized fabric built
// as one subnet per rail has one Subnet per rail; LIDs repeat between subnets.
struct Subnet {
  std::vector<SwitchLft> switches;  // sorted by GUID
  std::vector<PortLid> ports;       // sorted by (GUID, port)
  const SwitchLft *find_switch(uint64_t guid) const;
  const PortLid *find_port(uint64_t guid, int port) const;
};

struct Routes {
  std::vector<Subnet> subnets;  // sorted by their first switch's GUID
  std::string hash;             // "sha256:<hex>" of the canonical JSON of the routes (topology_json.cpp)
  std::vector<std::string> sources;  // what they were read from, for messages only (not in the JSON)
  bool empty() const { return subnets.empty(); }
  size_t switch_count() const;
  // Sorts switches, ports and subnets into canonical order; merges duplicate entries of a subnet.
  void canonicalize();
};

// Base64 (RFC 4648, with padding) of an LFT: the form topology.json stores it in.
std::string lft_to_base64(const std::vector<uint8_t> &out);
// Throws std::invalid_argument on text that is not canonical base64 or longer than kMaxUnicastLid + 1.
std::vector<uint8_t> lft_from_base64(const std::string &text);

}  // namespace topoaware
