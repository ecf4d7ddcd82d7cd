// SPDX-License-Identifier: GPL-2.0-or-later
// What spank_topoaware(8) reads that is not Slurm's: its plugstack.conf arguments, the task
// variables that those arguments may name (override_env=), and the job's topology hash file that
// the job prolog writes and task_init reads back. Parsing only, no files and no Slurm here (the
// C API in capi/task_c.h and capi/job_dir_c.h does the I/O; node/ implements it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config.hpp"
#include "layout.hpp"

namespace topoaware {

// Bounds of the plugstack.conf arguments (a longer value is ignored with a message).
inline constexpr size_t kMaxTopologyArg = 4095;     // topology=PATH
inline constexpr size_t kMaxStateDirArg = 1023;     // state_dir=PATH
inline constexpr size_t kMaxExcludeNicsArg = 1023;  // exclude_nics=NAMES
inline constexpr size_t kMaxOverrideArg = 1023;     // override_env=NAMES
// The state folder when plugstack.conf names none.
inline constexpr const char *kDefaultStateDir = "/run/topoaware";

// Every variable a task plan sets only when the task's environment does not have it yet (kind
// TOPOAWARE_VAR_DEFAULT of capi/task_c.h), declared once: override_env= names are checked
// against it, and its index is the variable's bit in SpankSettings::override_env.
inline constexpr const char *kTaskDefaultVars[] = {
    "RANK",        "LOCAL_RANK",        "WORLD_SIZE",  "LOCAL_WORLD_SIZE", "MASTER_ADDR",
    "MASTER_PORT", "CUDA_DEVICE_ORDER", "NCCL_IB_HCA", "NCCL_CROSS_NIC",   "NCCL_MNNVL_ENABLE",
    "NCCL_CUMEM_ENABLE"};
inline constexpr size_t kTaskDefaultVarCount = sizeof(kTaskDefaultVars) / sizeof(kTaskDefaultVars[0]);
static_assert(kTaskDefaultVarCount <= 32, "override_env is a 32-bit mask");

// The index of `name` in kTaskDefaultVars, or -1.
int task_default_var_index(std::string_view name);
// "RANK,LOCAL_RANK,..." (for messages).
std::string task_default_var_list();

// plugstack.conf: `required|optional /path/spank_topoaware.so [topology=PATH] [exclude_nics=NAMES]
// [state_dir=PATH] [override_env=NAMES|all|none] [default_order=ORDER] [default_mode=strict|prefer]
// [default_max_wait=TIME]`.
struct SpankSettings {
  std::string topology;      // absolute path, "" = the default (topoaware.conf's)
  std::string exclude_nics;  // "mlx5_8,mlx5_9": storage/management NICs
  std::string state_dir;     // absolute path, "" = kDefaultStateDir
  // Bit i: topoaware's value of kTaskDefaultVars[i] replaces the one the task already has (the
  // lists of several override_env= arguments add up).
  uint32_t override_env = 0;
  std::optional<RankOrder> default_order;
  std::optional<TopoMode> default_mode;
  std::optional<uint32_t> default_max_wait;  // seconds

  // 1 if the admin lets topoaware's value of `name` replace the task's own.
  bool overrides(std::string_view name) const;
};

// Parses the arguments in order (a later argument of the same key replaces an earlier good one).
// A bad argument never stops anything (a typo of the admin must not break every srun and sbatch):
// it is ignored, and what is wrong with it is appended to *warnings (printable text that quotes at
// most 128 bytes of the argument); the other arguments still apply, and the other names of an
// override_env= list too. Null entries are skipped.
SpankSettings parse_spank_args(const std::vector<const char *> &args, std::vector<std::string> *warnings);

// "sha256:" and 64 lower-case hex digits (a topology hash as topology.json and the select plugin
// write it).
bool valid_topology_hash(std::string_view hash);

// The job's hash file <state_dir>/job.<JOBID>.hash: its name, its content for a hash, and the
// hash read back from (the first bytes of) a content: its first line if that is a valid hash,
// else "" (a missing, damaged or foreign file means "no hash": the tasks then use the variable).
inline constexpr size_t kMaxJobHashFile = 127;  // bytes of the first line that are looked at
std::string job_hash_file_name(uint32_t job_id);
std::string job_hash_file_text(std::string_view hash);  // throws ConfigError for an invalid hash
std::string job_hash_from_text(std::string_view text);

// The same file also keeps how slurmctld placed the job, after the hash line:
//   layout <the layout as topoaware_layout_string writes it>
//   rail_optimized <0|1>
//   order <node,node,...: the job's nodes in rank order>
// so that a step on the job's own nodes with the job's own layout needs no topology file on the
// node: its ranks follow from the order alone (a 1,000,000-host topology.json is not parsed by
// every step). Layout and order are both there or both absent.
inline constexpr size_t kMaxJobOrder = 64 * 1024;  // longer orders are not kept: steps parse the topology
inline constexpr size_t kMaxJobPlacementFile = kMaxJobOrder + 1024;
struct JobPlacement {
  std::string hash, layout, order;
  bool rail_optimized = false;
  bool has_order() const { return !layout.empty() && !order.empty(); }
};
// Throws ConfigError for an invalid hash; a layout or order that is empty, too long or has other
// characters than a layout string or a node name list may hold is left out (with the other one).
std::string job_placement_file_text(const JobPlacement &p);
// What job_placement_file_text wrote; hash "" if the first line is not a hash, layout and order
// "" unless both are there and well-formed. Never throws for any text.
JobPlacement job_placement_from_text(std::string_view text);

}  // namespace topoaware
