// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware show: the running and waiting jobs on the fabric, from a Topology, the select plugin's
// status file (status.hpp, may be missing) and what Slurm reports about jobs and nodes.
//
// The public entry: the model (show_model.hpp: build_show, rank_map, job_order_disagrees) and its
// renderers: text (show_text.cpp), JSON of schema "topoaware-show/1" (show_json.cpp), Graphviz DOT
// with leaf groups as tables of nodes coloured by job (show_dot.cpp), and the rank map of one job
// in each.
#pragma once

#include <cstdint>
#include <string>

#include "show_model.hpp"

namespace topoaware {

inline constexpr const char *kShowSchema = "topoaware-show/1";

std::string show_text(const ShowModel &m);
std::string show_json(const ShowModel &m);
std::string show_dot(const ShowModel &m);

// The job's details and rank map; throws std::out_of_range if the model has no such job.
std::string show_job_text(const ShowModel &m, uint32_t job_id);
std::string show_job_json(const ShowModel &m, uint32_t job_id);
std::string show_job_dot(const ShowModel &m, uint32_t job_id);

}  // namespace topoaware
