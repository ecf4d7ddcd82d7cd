// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware defrag over the model of `topoaware show` (show_model.hpp: Slurm's jobs and nodes as
// plain values, the select plugin's status file, the topology) plus a few per-job times the command
// reads from Slurm: the model turned into the core's input (corelib/defrag_plan.hpp, where every
// decision of the plan is made and documented), and the plan as text and JSON. Nothing here talks
// to Slurm or changes anything.
// Free nodes are the idle ones (sinfo's idle and planned); shared (mixed) nodes are not counted.
// A running job is planned when the engine can place it again: running, with a layout, a cost, a
// status entry and a rank order, and no node outside the topology; a waiting job when it is
// pending with a layout and a status entry.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "defrag_plan.hpp"
#include "show_model.hpp"

namespace topoaware {

// Why a job may or may not be moved by --apply ("" when it may).
std::string defrag_refusal(const ShowJob &job, const DefragJobTimes &times);

// The plan over the model; times by job id (missing: unknown). Never throws for odd inputs (a job
// whose layout or nodes do not fit is left out with a note).
DefragPlan plan_defrag(const ShowModel &m, const std::map<uint32_t, DefragJobTimes> &times,
                       const DefragParams &params = {});

std::string defrag_text(const ShowModel &m, const DefragPlan &plan);
nlohmann::ordered_json defrag_json(const ShowModel &m, const DefragPlan &plan);
nlohmann::ordered_json defrag_move_json(const ShowModel &m, const DefragMove &mv);

}  // namespace topoaware
