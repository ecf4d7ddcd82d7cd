// SPDX-License-Identifier: GPL-2.0-or-later
// Port error counters per cable (topoaware discover --counters): the readings of both ends of every
// cable, named by switch and host, the counters that are not zero, and the ones above the usual
// thresholds (those of ibqueryerrors(8) / ibdiagnet) as "port-errors" anomalies of the topology, so
// that a cable going bad shows in the summary, in topoaware show's fabric and in topology.json.
// The anomaly names the counters above their threshold, not their values: a link that keeps
// erring does not change topology.json at every walk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric.hpp"
#include "topology.hpp"

namespace topoaware {

inline constexpr const char *kPortCounterNames[12] = {"SymbolErrorCounter",
                                                      "LinkErrorRecoveryCounter",
                                                      "LinkDownedCounter",
                                                      "PortRcvErrors",
                                                      "PortRcvRemotePhysicalErrors",
                                                      "PortRcvSwitchRelayErrors",
                                                      "PortXmitDiscards",
                                                      "PortXmitConstraintErrors",
                                                      "PortRcvConstraintErrors",
                                                      "LocalLinkIntegrityErrors",
                                                      "ExcessiveBufferOverrunErrors",
                                                      "VL15Dropped"};
// Above these a counter is an anomaly (ibqueryerrors' defaults).
inline constexpr uint64_t kPortCounterThresholds[12] = {10, 10, 10, 10, 100, 100, 100, 100, 100, 10, 10, 100};

struct CableCounters {
  std::string end_a, end_b;   // "leaf001 port 5", "n0001 mlx5_0 port 1"; end_b "" if unconnected
  bool switch_cable = false;  // both ends are switches
  std::vector<std::pair<std::string, uint64_t>> nonzero;  // "leaf001 port 5: SymbolErrorCounter", value
  std::vector<std::string> over;                          // "SymbolErrorCounter at leaf001 port 5"
};

struct CounterReport {
  size_t ports_read = 0;
  std::vector<CableCounters> cables;  // only cables with a counter that is not zero, worst first
  std::vector<std::string> problems;  // ports that did not answer
};

CounterReport counter_report(const Topology &topo, const Fabric &fabric);
// Adds one "port-errors" anomaly per cable with a counter above its threshold.
void add_counter_anomalies(Topology &topo, const CounterReport &report);
std::string counter_report_text(const CounterReport &report);

}  // namespace topoaware
