// SPDX-License-Identifier: GPL-2.0-or-later
// The raw fabric: what a walk of an InfiniBand subnet sees, independent of where it came from
// (ibnetdiscover text, a live libibnetdisc walk, libibnetdisc's cache file, or the generator).
// Nothing here is classified yet: classify() in topology.hpp turns a Fabric into a Topology.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "routes.hpp"

namespace topoaware {

enum class NodeType : uint8_t { Switch, Ca, Router };

// Link speed per lane. The order is the order of the IB generations.
enum class LinkSpeed : uint8_t { Unknown, SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR };

// Gbit/s of one lane (data rate as marketed: SDR 2.5 ... XDR 200; IBTA spec vol. 2).
double lane_gbps(LinkSpeed s);
const char *speed_name(LinkSpeed s);           // "HDR", "?" for Unknown
LinkSpeed speed_from_name(const std::string &s);  // "HDR" -> HDR, else Unknown
std::string width_name(int lanes);             // 4 -> "4x", 0 -> "?"

struct Port {
  int num = 0;                 // physical port number (1..nports)
  uint64_t port_guid = 0;      // CA ports have their own GUID; switch ports share port 0's
  uint64_t remote_guid = 0;    // node GUID of the peer
  int remote_port = 0;
  int width = 0;               // active lanes: 1, 2, 4, 8, 12; 0 = unknown
  LinkSpeed speed = LinkSpeed::Unknown;
};

struct FabricNode {
  NodeType type = NodeType::Ca;
  uint64_t guid = 0;           // node GUID: the key of everything
  std::string desc;            // node description (for hosts, usually "<hostname> mlx5_0")
  int nports = 0;              // number of physical ports (0 = unknown)
  std::vector<Port> ports;     // connected ports only, sorted by num
};

// Where a fabric could not be walked completely. A partial fabric must never be written out as
// if it were whole (see topoaware(1), --allow-partial).
struct WalkProblem {
  uint64_t guid = 0;           // node whose port could not be queried (0 if unknown)
  int port = 0;
  std::string what;
};

// The error counters of one port (PMA PortCounters, IBTA vol. 1, 16.1.3.5), as `topoaware discover
// --counters` reads them: they change all the time, so they are never part of topology.json (only
// the anomalies above a threshold are; corelib/port_counters.hpp).
struct PortCounters {
  uint64_t guid = 0;  // node GUID
  int port = 0;
  // In the order of kPortCounterNames (port_counters.hpp).
  uint64_t values[12] = {};
};

struct Fabric {
  std::vector<FabricNode> nodes;
  std::vector<WalkProblem> problems;  // non-empty means the walk was partial
  std::vector<std::string> sources;   // what it was read from, for messages only
  std::vector<PortCounters> counters;         // --counters: one per connected port that answered
  std::vector<std::string> counter_problems;  // --counters: ports whose counters could not be read
  Routes routes;                              // --routes / --lfts: the forwarding tables and LIDs
  std::vector<std::string> route_problems;    // --routes: tables or LIDs that could not be read

  // Adds a node or merges its ports into the node of the same GUID (a CA seen from several
  // subnets: one subnet per rail). Returns the node's index.
  size_t add_node(FabricNode node);
  // Merges another fabric (another subnet, another port of this host) into this one.
  void merge(const Fabric &other);
  const FabricNode *find(uint64_t guid) const;
  // Fills missing reverse ports (a dump lists both ends; the generator may list one) and sorts
  // ports; drops ports that point to unknown GUIDs into problems. Call after building.
  void finish();

 private:
  std::unordered_map<uint64_t, size_t> index_;
};

std::string guid_str(uint64_t guid);           // "0x0002c90300080e84"
// Parses "0x0002c9...", "0002c9...", "H-0002c9...", "S-...", "R-..."; false if not a GUID.
bool parse_guid(const std::string &text, uint64_t *guid);

}  // namespace topoaware
