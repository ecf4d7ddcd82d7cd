// SPDX-License-Identifier: GPL-2.0-or-later
// `topoaware metrics`: the select plugin's status file (and the topology it names) as Prometheus
// text exposition format 0.0.4, for node_exporter's textfile collector. Names follow Prometheus
// conventions (topoaware_ prefix, base units: seconds; _total for counters; one gauge per state
// label value, so that a state with no job reads 0 rather than vanishing).
#pragma once

#include <cstdint>
#include <string>

#include "show_model.hpp"

namespace topoaware {

// A model built from the status file alone (every placed entry as a running job on its nodes,
// every waiting entry as a pending job: no squeue), so that each placed job's cost against its
// ideal is computed exactly as `topoaware show` does.
ShowInput metrics_input(const Status *status);

// The exposition text. `now` (unix seconds) gives the status file's age and the waits.
std::string metrics_text(const ShowModel &m, int64_t now);

}  // namespace topoaware
