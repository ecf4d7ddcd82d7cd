// SPDX-License-Identifier: GPL-2.0-or-later
// What `topoaware defrag` reads from Slurm's commands, parsed (cli/defrag.cpp runs them). Only
// fields without user text and with the same spelling from Slurm 22.05 to 26.05 are asked for:
//   squeue -h -a -t RUNNING -O JobId:24,BatchFlag:8,Requeue:8,RestartCnt:8,TimeLeft:24,TimeUsed:24
//     (fixed-width columns: whitespace separates them, as no value holds a space);
//   squeue -h -j ID -o %A|%T|%N (one job's id, state and nodes, to check it before and after a move).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "defrag.hpp"

namespace topoaware {

// The -O fields of the first squeue call above, in that order.
inline constexpr const char *kDefragTimesFormat = "JobId:24,BatchFlag:8,Requeue:8,RestartCnt:8,TimeLeft:24,TimeUsed:24";
inline constexpr const char *kDefragJobFormat = "%A|%T|%N";

// Slurm's duration text ("2-03:04:05", "03:04:05", "04:05", "5") in seconds; -1 for UNLIMITED,
// INVALID, NOT_SET, N/A or anything else.
int64_t parse_slurm_duration(const std::string &text);

// Lines of the times call; lines that do not parse are counted in *bad.
std::map<uint32_t, DefragJobTimes> parse_defrag_times(const std::string &text, size_t *bad = nullptr);

struct DefragJobState {
  uint32_t job_id = 0;
  std::string state;  // RUNNING, PENDING, ...
  std::string nodes;  // host list, "" when it holds none
};
// The second call's output: false if it lists no such job (or does not parse).
bool parse_defrag_job_state(const std::string &text, uint32_t job_id, DefragJobState &out);

}  // namespace topoaware
