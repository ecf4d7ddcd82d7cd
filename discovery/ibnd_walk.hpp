// SPDX-License-Identifier: GPL-2.0-or-later
// Live discovery through libibnetdisc (the queries of ibnetdiscover), and libibnetdisc's cache.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "fabric.hpp"

namespace topoaware {

struct WalkTarget {
  std::string ca;  // local CA name ("mlx5_0"); "" = the first one libibumad finds
  int port = 0;    // local port; 0 = the first active one
};

struct WalkOptions {
  std::vector<WalkTarget> targets;  // one walk per target (one subnet per rail); empty = one default walk
  int timeout_ms = 0;               // per MAD; 0 = libibmad's default
  int retries = 2;                  // extra walks of the nodes that failed, bounded
  int max_hops = 0;                 // 0 = unlimited
  std::string cache_load;           // read this ibnd cache instead of walking
  std::string cache_save;           // save each walk's cache here ("<file>" or "<file>.<n>" for several)
  // Also read the PMA PortCounters of every connected port (Fabric::counters). These queries go by
  // LID: they need a subnet manager to have assigned LIDs and routes (any running fabric has one).
  bool counters = false;
  // Also read every switch's linear forwarding table (SMP LinearForwardingTable, the queries of
  // ibroute and dump_fts) and every port's LID and LMC (Fabric::routes, one subnet per target).
  // Needs a subnet manager to have programmed the fabric.
  bool routes = false;
  // Called about every 200 ms during a walk, from a helper thread, with seconds elapsed, and once
  // at the end of each walk with the counts found. May be empty.
  std::function<void(double seconds, int switches, int cas, bool done)> progress;
};

// Walks every target and merges the subnets by GUID. Problems found (unreachable ports, failed
// queries that stayed failed after the retries) are listed in Fabric::problems; the caller decides
// whether a partial fabric may be written. Throws std::runtime_error when no walk can start at all
// (no local CA, umad not available), naming the CA/port.
Fabric walk_fabric(const WalkOptions &opts);

}  // namespace topoaware
