// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware monitor's outputs of a congestion report (corelib/congestion.hpp): text for people,
// Prometheus text for node_exporter's textfile collector, JSON for scripts and defrag.
#pragma once

#include <cstddef>
#include <string>

#include "congestion.hpp"
#include "show_model.hpp"

namespace topoaware {

// Plain text for people: congested directions first, then the jobs paying, then problems.
std::string congestion_text(const Topology &topo, const CongestionReport &r, size_t max_links);

// Prometheus text exposition. Label sets stay bounded at any fabric size: per-direction series for
// the congested directions (the 1,000 worst) and the `top` busiest others, per-job series for the
// jobs crossing a congested direction (the 1,000 with the largest share); fabric-wide counts and a
// histogram of every measured direction for the rest.
std::string congestion_prometheus(const Topology &topo, const CongestionReport &r, size_t top);

// JSON (for defrag and scripts): every measured direction's utilization and wait ratio, the
// congested ones with their jobs, every job's share.
std::string congestion_json(const Topology &topo, const CongestionReport &r);

// The congested directions of a `monitor --format json` report over `topo` (for show
// --congestion); throws std::runtime_error when the text is not such a report or names a switch or
// host the topology does not have (a report of another fabric).
std::vector<HotCable> hot_cables_from_json(const std::string &text, const Topology &topo, double &interval);

// Every job of a `monitor --format json` report with its measured bytes (for defrag --congestion);
// throws std::runtime_error when the text is not such a report.
std::vector<JobCongestion> job_congestion_from_json(const std::string &text);

}  // namespace topoaware
