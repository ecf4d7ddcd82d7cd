// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware.conf (topoaware.conf(5)): a small key=value file beside slurm.conf, read by the
// job_submit and select plugins in slurmctld and by the SPANK plugin. Also the strict parsers of
// the scheduling options that are not part of the layout itself (--topo-mode, --topo-max-wait,
// --nccl-hints), so that every entry point judges them the same way. No Slurm here.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace topoaware {

// A bad option value or configuration line; what() says what is wrong and what would work.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class TopoMode : uint8_t { Prefer, Strict };
enum class NcclHints : uint8_t { Auto, Off, Print };
// LogLevel= of the select plugin: which of its own messages reach Slurm's info level.
enum class LogLevel : uint8_t { Quiet = 0, Info = 1, Verbose = 2, Debug = 3 };
// MissingNodes= of the select plugin: Slurm nodes that are not in the topology.
enum class MissingNodes : uint8_t { Avoid, Fallback };
// RankOrder= of the select plugin: whether a layout job's rank order, decided when it starts,
// counts the ring edges of the layout jobs already running (with recorded routes), or is the
// order the job would have alone (the same for the same nodes, as `topoaware plan` shows it).
enum class RankOrderMode : uint8_t { Neighbours, Alone };

// Bounds, declared once (also in the man pages).
inline constexpr uint32_t kMaxWaitLimit = 30u * 24 * 3600;  // --topo-max-wait at most 30 days
inline constexpr uint32_t kDefaultMaxWait = 3600;           // strict waits at most 1 hour by default
inline constexpr size_t kMaxConfigBytes = 1u << 20;         // topoaware.conf at most 1 MiB
inline constexpr size_t kMaxConfigLine = 4096;              // and lines of at most 4096 bytes
inline constexpr size_t kMaxPartitions = 4096;              // PartitionName= lines
// Limits of one select_p_job_test call (select_cons_tres_topoaware(8)).
inline constexpr uint32_t kDefaultMaxTries = 4, kMaxTriesLimit = 64;             // MaxTriesPerCall=
inline constexpr uint32_t kDefaultMaxTimeMs = 200, kMaxTimeLimitMs = 10000;      // MaxTimePerCall= (ms)
inline constexpr uint32_t kDefaultStatusInterval = 2, kMaxStatusInterval = 3600;  // StatusInterval= (s)
inline constexpr const char *kDefaultStatusName = "topoaware-status.json";       // in StateSaveLocation

TopoMode parse_topo_mode(std::string_view text);  // "strict" | "prefer"
const char *topo_mode_name(TopoMode mode);
NcclHints parse_nccl_hints(std::string_view text);  // "auto" | "off" | "print"
const char *nccl_hints_name(NcclHints hints);
// A duration in seconds: digits with an optional unit s, m, h or d (no unit = minutes, as Slurm's
// --time and --switches=N@TIME). "0" is allowed (strict then falls back at once). At most
// kMaxWaitLimit. `name` appears in the message.
uint32_t parse_wait(std::string_view name, std::string_view text);
std::string wait_to_string(uint32_t seconds);  // "90s", "30m", "2h", "1d" (exact, largest unit)
LogLevel parse_log_level(std::string_view text);  // "quiet" | "info" | "verbose" | "debug"
const char *log_level_name(LogLevel level);
MissingNodes parse_missing_nodes(std::string_view text);  // "avoid" | "fallback"
const char *missing_nodes_name(MissingNodes m);
RankOrderMode parse_rank_order_mode(std::string_view text);  // "neighbours" | "alone"
const char *rank_order_mode_name(RankOrderMode m);

struct PartitionDefaults {
  bool has_mode = false, has_max_wait = false;
  TopoMode mode = TopoMode::Prefer;
  uint32_t max_wait = kDefaultMaxWait;
};

struct Config {
  std::string topology_file;  // empty = "<folder of slurm.conf>/topology.json"
  TopoMode default_mode = TopoMode::Prefer;
  uint32_t default_max_wait = kDefaultMaxWait;
  std::map<std::string, PartitionDefaults> partitions;  // by partition name (case-sensitive, as Slurm)
  // The select plugin's own settings (select_cons_tres_topoaware(8)).
  uint32_t max_tries = kDefaultMaxTries;      // blocks tried per select_p_job_test call, 1..64
  uint32_t max_time_ms = kDefaultMaxTimeMs;   // no new block after this many ms in one call, 1..10000
  LogLevel log_level = LogLevel::Info;
  MissingNodes missing_nodes = MissingNodes::Avoid;
  RankOrderMode rank_order = RankOrderMode::Neighbours;
  bool status_none = false;                   // StatusFile=none: no status file
  std::string status_file;                    // empty = "<StateSaveLocation>/topoaware-status.json"
  uint32_t status_interval = kDefaultStatusInterval;  // seconds between two writes, 0..3600

  // The mode and maximum wait for a job in `partition` (may be empty): the partition's line,
  // else the global default.
  TopoMode mode_for(std::string_view partition) const;
  uint32_t max_wait_for(std::string_view partition) const;
};

// Parses the text of a topoaware.conf. `source` names it in messages ("topoaware.conf line 3: ...").
// Keys are case-insensitive (as in slurm.conf); unknown keys, repeated keys and bad values throw.
Config parse_config(std::string_view text, std::string_view source);
// Reads and parses `path`. A missing file gives the defaults (`*found` = false); an unreadable,
// oversized or invalid file throws ConfigError.
Config load_config(const std::string &path, bool *found = nullptr);
// Where topoaware.conf is: TOPOAWARE_CONF if set, else beside slurm.conf (the folder of
// `slurm_conf`, normally $SLURM_CONF), else /etc/slurm/topoaware.conf.
std::string config_path(const char *topoaware_conf_env, const char *slurm_conf_env);
// The topology file in effect: cfg.topology_file, else topology.json beside `conf_path`.
std::string topology_path(const Config &cfg, const std::string &conf_path);
// The status file in effect: "" for StatusFile=none, cfg.status_file, else
// topoaware-status.json in `state_save_location` (Slurm's StateSaveLocation). Throws ConfigError
// if the default is asked for and state_save_location is empty.
std::string status_path(const Config &cfg, const std::string &state_save_location);

}  // namespace topoaware
