// SPDX-License-Identifier: GPL-2.0-or-later
// Reading the traffic counters of every switch port of a live fabric (topoaware monitor): PMA
// PortCountersExtended (64-bit PortXmitData / PortRcvData) and PortCounters (PortXmitWait, and the
// 32-bit data counters of a switch without the extended ones), sent by LID through libibumad with
// many queries in flight at once, as ibdiagnet does, instead of one round trip at a time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "congestion.hpp"
#include "ibnd_walk.hpp"
#include "topology.hpp"

namespace topoaware {

struct SampleOptions {
  std::vector<WalkTarget> targets;  // one per subnet; empty = the first local port
  int window = 64;                  // queries in flight at once
  int timeout_ms = 500;             // per query
  int retries = 2;                  // extra tries of a query that got no answer
  // Called after each switch's ports are read, with (switches done, switches); may be empty.
  std::function<void(size_t done, size_t total)> progress;
};

// Samples `ports` (switch index, port number; sampled_ports()) of `topo`, which must carry routes
// with the switches' LIDs (discover --routes or --lfts). Each target is matched to the subnet it
// reaches by asking a switch of each subnet for its GUID. Ports that did not answer are in the
// snapshot with !ok and the reason; a switch that vanished is reported, never fatal. Throws
// std::runtime_error when no sampling can start at all (no local port, no switch LIDs known).
CounterSnapshot sample_ports(const Topology &topo, const std::vector<std::pair<int, int>> &ports,
                             const SampleOptions &opts, std::vector<std::string> &problems);

}  // namespace topoaware
