// SPDX-License-Identifier: GPL-2.0-or-later
// Congestion seen on the fabric while jobs run: switch port counters (PMA PortXmitData,
// PortRcvData, PortXmitWait) read twice give each cable's load per direction; the recorded
// forwarding tables (routes.hpp) and the running jobs' layouts and rank orders (traffic.hpp) say
// which jobs send over each cable. The result names every congested cable with the jobs crossing
// it, and gives each job the share of its cross-leaf bytes that take a congested cable.
//
// Nothing here reads the fabric or Slurm: the samples come from discovery/pma_sampler (a live
// fabric) or a saved state file, the jobs from the select plugin's status file (cli/monitor.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "port_counters.hpp"
#include "route_trace.hpp"
#include "topology.hpp"
#include "traffic.hpp"

namespace topoaware {

// One switch port's counters at one moment. Data counters count 4-octet words, as the IBTA
// defines PortXmitData / PortRcvData. `wide` counters are PortCountersExtended's 64-bit ones;
// otherwise they are PortCounters' 32-bit ones, which stop at their maximum instead of wrapping.
struct PortSample {
  int sw = -1;       // index into Topology::switches
  int port = 0;      // switch port number
  bool ok = false;   // answered
  std::string error; // why not (when !ok)
  bool wide = false;
  uint64_t xmit_words = 0, rcv_words = 0;
  uint64_t xmit_wait = 0;  // PortXmitWait ticks (32 bits, saturating)
  // PortCounters' error counters, in the order of kPortCounterNames (port_counters.hpp); each
  // stops at its maximum (8 to 16 bits).
  uint64_t errors[12] = {};
};

struct CounterSnapshot {
  double time_s = 0;               // when the sampling started (seconds, any fixed origin)
  double duration_s = 0;           // how long reading every port took
  std::vector<PortSample> ports;   // sorted by (sw, port)
};

// The switch ports worth sampling: every switch port with a cable (to a switch or a host) in the
// topology, sorted by (switch, port).
std::vector<std::pair<int, int>> sampled_ports(const Topology &topo);

struct CongestionThresholds {
  double utilization = 0.80;   // a direction carrying at least this share of its line rate
  double wait_ratio = 0.10;    // PortXmitWait ticks per word sent, over the interval
};

// The load of one cable direction: the traffic the switch port `sw`/`port` transmits.
struct LinkLoad {
  int sw = -1, port = 0;
  RouteTracer::Peer peer;          // where the cable leads
  double gbps = 0;                 // line data rate of the cable (0: unknown)
  bool measured = false;           // both samples valid and comparable
  std::string note;                // why not measured, or "counter reset", "saturated"
  double xmit_gbps = 0;            // measured transmit rate
  double utilization = 0;          // xmit_gbps / gbps
  double wait_ratio = 0;           // delta PortXmitWait / delta PortXmitData (words)
  bool congested = false;
  // Error counters that rose over the interval: (kPortCounterNames entry, increase).
  std::vector<std::pair<std::string, uint64_t>> errors;
  // Attribution: the jobs whose predicted flows take this direction, by predicted bytes per step,
  // and the jobs without a layout whose traffic could take it (unknown traffic).
  std::vector<std::pair<uint32_t, double>> jobs;  // (job id, predicted bytes per step), largest first
  std::vector<uint32_t> unknown_jobs;
};

// A running job as attribution sees it. With a layout and a rank order (`step.nodes`), its flows
// are predicted; without (`known` false), only its hosts are known.
struct RunningJob {
  uint32_t job_id = 0;
  bool known = false;
  StepJob step;                // when known
  std::vector<int> hosts;      // topology host indices it holds
  std::string why_unknown;     // when !known
};

struct JobCongestion {
  uint32_t job_id = 0;
  bool known = false;
  double cross_leaf_bytes = 0;        // predicted bytes per step of its flows that leave a leaf
  double congested_bytes = 0;         // of those, bytes whose route takes a congested direction
  double share() const { return cross_leaf_bytes > 0 ? congested_bytes / cross_leaf_bytes : 0; }
  std::vector<std::string> hot_cables;  // congested directions it crosses, by name
  std::string note;                   // unknown: why; routes missing for some flows, ...
};

struct CongestionReport {
  double interval_s = 0;
  size_t ports_sampled = 0, ports_measured = 0;
  size_t ports_with_errors = 0;         // measured ports whose error counters rose
  std::vector<LinkLoad> links;          // every sampled switch port, sorted by (sw, port)
  std::vector<JobCongestion> jobs;      // by job id
  std::vector<std::string> problems;    // ports not read, resets, routes missing: one line each
  size_t congested() const;
};

// The load of every switch port between two snapshots of the same ports (prev earlier than cur).
// A port missing from either, an interval <= 0, a counter lower than before (a reset: perfquery
// -R, a switch reboot) or a 32-bit counter at its maximum gives no measurement and a note, never
// a guessed value.
CongestionReport link_loads(const Topology &topo, const CounterSnapshot &prev, const CounterSnapshot &cur,
                            const CongestionThresholds &th);

// Maps every known job's predicted cross-leaf flows over the recorded routes onto the report's
// links (LinkLoad::jobs) and fills CongestionReport::jobs. A job whose flows cannot be traced (no
// routes, a broken route) says so in its note; jobs not known are listed as unknown traffic on
// every congested direction their traffic could take: a cable of a leaf holding one of their
// hosts, and every congested cable between switches above the leaves when they span leaves.
void attribute_jobs(const Topology &topo, const std::vector<RunningJob> &jobs, CongestionReport &report);

// "leaf01 p33 -> spine02 p5" (switch to switch) or "leaf01 p3 -> n0001 mlx5_0" (to a host).
std::string link_name(const Topology &topo, const LinkLoad &l);

// defrag's trigger: the jobs whose measured share of cross-leaf bytes on congested directions is at
// least `min_share` (jobs of unknown traffic never are: nothing says a move would help them).
std::vector<uint32_t> congested_jobs(const std::vector<JobCongestion> &jobs, double min_share);

// The state --once keeps between runs: the last snapshot, keyed to the topology's cabling hash so a
// snapshot of another fabric is never compared. Throws std::runtime_error on a damaged file.
std::string snapshot_to_json(const CounterSnapshot &s, const std::string &topo_hash);
CounterSnapshot snapshot_from_json(const std::string &text, const std::string &topo_hash, bool &same_fabric);

}  // namespace topoaware
