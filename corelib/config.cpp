// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware.conf and the scheduling option parsers (see config.hpp).
#include "config.hpp"

#include "file_read.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <set>
#include <vector>

namespace topoaware {
namespace {

std::string str(std::string_view v) { return std::string(v); }

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Printable text for a message: at most 64 bytes, control bytes shown as '?'.
std::string shown(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < 64; ++i) out += (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
  if (v.size() > 64) out += "...";
  return out;
}

bool valid_partition_name(std::string_view v) {
  if (v.empty() || v.size() > 256) return false;
  for (char c : v)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.'))
      return false;
  return true;
}

}  // namespace

TopoMode parse_topo_mode(std::string_view text) {
  if (text == "strict") return TopoMode::Strict;
  if (text == "prefer") return TopoMode::Prefer;
  throw ConfigError("topo-mode '" + shown(text) +
                    "' is not known; use strict (wait for a good block, up to the maximum wait) or prefer "
                    "(the best block available now)");
}

const char *topo_mode_name(TopoMode mode) { return mode == TopoMode::Strict ? "strict" : "prefer"; }

NcclHints parse_nccl_hints(std::string_view text) {
  if (text == "auto") return NcclHints::Auto;
  if (text == "off") return NcclHints::Off;
  if (text == "print") return NcclHints::Print;
  throw ConfigError("nccl-hints '" + shown(text) + "' is not known; use auto, off or print");
}

const char *nccl_hints_name(NcclHints hints) {
  switch (hints) {
    case NcclHints::Off: return "off";
    case NcclHints::Print: return "print";
    default: return "auto";
  }
}

uint32_t parse_wait(std::string_view name, std::string_view text) {
  const std::string who = str(name) + "=" + shown(text);
  const std::string fix = "; write a whole number with an optional unit s, m, h or d (no unit = minutes), e.g. " +
                          str(name) + "=30m, at most 30d";
  if (text.empty()) throw ConfigError(str(name) + " needs a value" + fix);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) throw ConfigError(who + " does not start with a number" + fix);
  if (digits > 1 && text[0] == '0') throw ConfigError(who + ": leading zeros are not accepted" + fix);
  uint64_t unit = 60;
  std::string_view rest = text.substr(digits);
  if (rest == "s") unit = 1;
  else if (rest == "m" || rest.empty()) unit = 60;
  else if (rest == "h") unit = 3600;
  else if (rest == "d") unit = 86400;
  else throw ConfigError(who + ": unknown unit '" + shown(rest) + "'" + fix);
  if (digits > 9) throw ConfigError(who + " is too long" + fix);
  uint64_t v = 0;
  for (size_t i = 0; i < digits; ++i) v = v * 10 + uint64_t(text[i] - '0');
  v *= unit;
  if (v > kMaxWaitLimit) throw ConfigError(who + " is more than 30 days" + fix);
  return uint32_t(v);
}

std::string wait_to_string(uint32_t s) {
  if (s == 0) return "0";
  if (s % 86400 == 0) return std::to_string(s / 86400) + "d";
  if (s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

LogLevel parse_log_level(std::string_view text) {
  if (text == "quiet") return LogLevel::Quiet;
  if (text == "info") return LogLevel::Info;
  if (text == "verbose") return LogLevel::Verbose;
  if (text == "debug") return LogLevel::Debug;
  throw ConfigError("LogLevel=" + shown(text) +
                    " is not known; use quiet (errors and topology problems only), info (the default: also "
                    "topology loads, fallbacks and waits), verbose (also every placement) or debug (every decision)");
}

const char *log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Quiet: return "quiet";
    case LogLevel::Verbose: return "verbose";
    case LogLevel::Debug: return "debug";
    default: return "info";
  }
}

MissingNodes parse_missing_nodes(std::string_view text) {
  if (text == "avoid") return MissingNodes::Avoid;
  if (text == "fallback") return MissingNodes::Fallback;
  throw ConfigError("MissingNodes=" + shown(text) +
                    " is not known; use avoid (layout jobs never get nodes that are not in the topology) or "
                    "fallback (plain select/cons_tres may use them when the topology's nodes cannot hold a job)");
}

const char *missing_nodes_name(MissingNodes m) { return m == MissingNodes::Fallback ? "fallback" : "avoid"; }

RankOrderMode parse_rank_order_mode(std::string_view text) {
  if (text == "neighbours") return RankOrderMode::Neighbours;
  if (text == "alone") return RankOrderMode::Alone;
  throw ConfigError("RankOrder=" + shown(text) +
                    " is not known; use neighbours (a job's ring edges between leaves avoid the cables that "
                    "running jobs' rings take, where the topology has routes) or alone (each job's order as if "
                    "it were alone on the fabric, the same for the same nodes)");
}

const char *rank_order_mode_name(RankOrderMode m) { return m == RankOrderMode::Alone ? "alone" : "neighbours"; }

namespace {

// A whole number lo..hi with an optional unit suffix (`unit`, may be empty: none accepted).
// `fix` says what would work.
uint32_t parse_bounded(std::string_view name, std::string_view text, uint32_t lo, uint32_t hi, std::string_view unit,
                       const std::string &fix) {
  const std::string who = str(name) + "=" + shown(text);
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) throw ConfigError(who + " is not a whole number; " + fix);
  std::string_view rest = text.substr(digits);
  if (!rest.empty() && (unit.empty() || rest != unit))
    throw ConfigError(who + ": unknown unit '" + shown(rest) + "'; " + fix);
  if (digits > 1 && text[0] == '0') throw ConfigError(who + ": leading zeros are not accepted; " + fix);
  if (digits > 9) throw ConfigError(who + " is out of range; " + fix);
  uint64_t v = 0;
  for (size_t i = 0; i < digits; ++i) v = v * 10 + uint64_t(text[i] - '0');
  if (v < lo || v > hi) throw ConfigError(who + " is out of range; " + fix);
  return uint32_t(v);
}

using Words = std::vector<std::pair<std::string_view, std::string_view>>;

// One line's whitespace-separated Key=Value words (comment already cut); `at` names the line.
Words split_words(std::string_view line, const std::string &at) {
  Words words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i >= line.size()) break;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    std::string_view w = line.substr(i, j - i);
    i = j;
    for (char c : w)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        throw ConfigError(at + "control character in '" + shown(w) + "'");
    size_t eq = w.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw ConfigError(at + "'" + shown(w) + "' is not Key=Value (e.g. DefaultMode=strict)");
    words.emplace_back(w.substr(0, eq), w.substr(eq + 1));
  }
  return words;
}

// A key's value, which may not be empty.
std::string_view value_of(const std::string &at, std::string_view key, std::string_view v) {
  if (v.empty()) throw ConfigError(at + str(key) + "= needs a value");
  return v;
}

// A PartitionName= line: a new partition's DefaultMode and DefaultMaxWait, each at most once.
void partition_line(Config &cfg, const Words &words, const std::string &at) {
  std::string_view name = value_of(at, "PartitionName", words[0].second);
  if (!valid_partition_name(name))
    throw ConfigError(at + "PartitionName=" + shown(name) +
                      " is not a partition name (letters, digits, '_', '-', '.')");
  if (cfg.partitions.count(str(name)))
    throw ConfigError(at + "partition " + str(name) + " is already configured above");
  if (cfg.partitions.size() >= kMaxPartitions) throw ConfigError(at + "more than 4096 PartitionName lines");
  if (words.size() == 1)
    throw ConfigError(at + "PartitionName=" + str(name) + " sets nothing; add DefaultMode= or DefaultMaxWait=");
  PartitionDefaults p;
  for (size_t k = 1; k < words.size(); ++k) {
    auto [key, v] = words[k];
    if (iequal(key, "DefaultMode")) {
      if (p.has_mode) throw ConfigError(at + "DefaultMode given twice");
      try {
        p.mode = parse_topo_mode(value_of(at, key, v));
      } catch (const ConfigError &e) {
        throw ConfigError(at + "DefaultMode: " + e.what());
      }
      p.has_mode = true;
    } else if (iequal(key, "DefaultMaxWait")) {
      if (p.has_max_wait) throw ConfigError(at + "DefaultMaxWait given twice");
      try {
        p.max_wait = parse_wait("DefaultMaxWait", value_of(at, key, v));
      } catch (const ConfigError &e) {
        throw ConfigError(at + e.what());
      }
      p.has_max_wait = true;
    } else {
      throw ConfigError(at + "unknown key '" + shown(key) +
                        "' on a PartitionName line; use DefaultMode= or DefaultMaxWait=");
    }
  }
  cfg.partitions.emplace(str(name), p);
}

// StatusFile=: none, or an absolute path to a file.
void status_file(Config &cfg, std::string_view v, const std::string &at) {
  if (v == "none") {
    cfg.status_none = true;
  } else if (v[0] != '/') {
    throw ConfigError(at + "StatusFile=" + shown(v) + " is not an absolute path; give one, or none (no status file)");
  } else if (v.back() == '/') {
    throw ConfigError(
        at + "StatusFile=" + shown(v) +
        " names a folder; give the file's path, e.g. StatusFile=/var/spool/slurmctld/topoaware-status.json");
  } else {
    cfg.status_file = str(v);
  }
}

// One Key=Value word of a global line; each global key once in the file (keys compared
// case-insensitively, `seen` by canonical name). Every error names the line.
void global_word(Config &cfg, std::set<std::string> &seen, std::string_view key, std::string_view v,
                 const std::string &at) {
  auto once = [&](const char *canonical) {
    if (!iequal(key, canonical)) return false;
    if (!seen.insert(canonical).second) throw ConfigError(at + canonical + " is set twice");
    value_of(at, key, v);
    return true;
  };
  try {
    if (once("TopologyFile")) {
      if (v[0] != '/') throw ConfigError(at + "TopologyFile=" + shown(v) + " is not an absolute path");
      cfg.topology_file = str(v);
    } else if (once("DefaultMode")) {
      try {
        cfg.default_mode = parse_topo_mode(v);
      } catch (const ConfigError &e) {
        throw ConfigError(at + "DefaultMode: " + e.what());
      }
    } else if (once("DefaultMaxWait")) {
      cfg.default_max_wait = parse_wait("DefaultMaxWait", v);
    } else if (once("MaxTriesPerCall")) {
      cfg.max_tries = parse_bounded("MaxTriesPerCall", v, 1, kMaxTriesLimit, "",
                                    "write a whole number of blocks from 1 to 64, e.g. MaxTriesPerCall=4");
    } else if (once("MaxTimePerCall")) {
      cfg.max_time_ms = parse_bounded(
          "MaxTimePerCall", v, 1, kMaxTimeLimitMs, "ms",
          "write milliseconds from 1 to 10000, with an optional unit ms, e.g. MaxTimePerCall=200 or 200ms");
    } else if (once("LogLevel")) {
      cfg.log_level = parse_log_level(v);
    } else if (once("MissingNodes")) {
      cfg.missing_nodes = parse_missing_nodes(v);
    } else if (once("RankOrder")) {
      cfg.rank_order = parse_rank_order_mode(v);
    } else if (once("StatusFile")) {
      status_file(cfg, v, at);
    } else if (once("StatusInterval")) {
      cfg.status_interval =
          parse_bounded("StatusInterval", v, 0, kMaxStatusInterval, "s",
                        "write seconds from 0 to 3600, with an optional unit s, e.g. StatusInterval=2");
    } else {
      throw ConfigError(at + "unknown key '" + shown(key) +
                        "'; use TopologyFile=, DefaultMode=, DefaultMaxWait=, MaxTriesPerCall=, MaxTimePerCall=, "
                        "LogLevel=, MissingNodes=, RankOrder=, StatusFile=, StatusInterval= or PartitionName= lines");
    }
  } catch (const ConfigError &e) {
    // Messages of the value parsers get the line; those built here have it already.
    if (std::strncmp(e.what(), at.c_str(), at.size()) == 0) throw;
    throw ConfigError(at + e.what());
  }
}

}  // namespace

TopoMode Config::mode_for(std::string_view partition) const {
  auto it = partitions.find(str(partition));
  if (it != partitions.end() && it->second.has_mode) return it->second.mode;
  return default_mode;
}

uint32_t Config::max_wait_for(std::string_view partition) const {
  auto it = partitions.find(str(partition));
  if (it != partitions.end() && it->second.has_max_wait) return it->second.max_wait;
  return default_max_wait;
}

Config parse_config(std::string_view text, std::string_view source) {
  Config cfg;
  if (text.size() > kMaxConfigBytes)
    throw ConfigError(str(source) + " is larger than 1 MiB; it holds a few key=value lines");
  std::set<std::string> seen;  // global keys already set, by canonical name
  size_t pos = 0, lineno = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineno;
    const std::string at = str(source) + " line " + std::to_string(lineno) + ": ";
    if (line.size() > kMaxConfigLine) throw ConfigError(at + "longer than 4096 bytes");
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const Words words = split_words(line, at);
    if (words.empty()) continue;
    if (iequal(words[0].first, "PartitionName")) {
      partition_line(cfg, words, at);
      continue;
    }
    for (const auto &[key, v] : words) global_word(cfg, seen, key, v, at);
  }
  return cfg;
}

Config load_config(const std::string &path, bool *found) {
  if (found) *found = false;
  std::string text;
  try {
    text = read_regular_file(path, kMaxConfigBytes, "1 MiB");
  } catch (const FileReadError &e) {
    if (e.error == ENOENT) return Config{};
    throw ConfigError(path + ": " + e.what());
  }
  if (found) *found = true;
  return parse_config(text, path);
}

std::string config_path(const char *topoaware_conf_env, const char *slurm_conf_env) {
  if (topoaware_conf_env && *topoaware_conf_env) return topoaware_conf_env;
  if (slurm_conf_env && *slurm_conf_env) {
    std::string s(slurm_conf_env);
    size_t slash = s.rfind('/');
    if (slash == std::string::npos) return "topoaware.conf";
    return s.substr(0, slash + 1) + "topoaware.conf";
  }
  return "/etc/slurm/topoaware.conf";
}

std::string status_path(const Config &cfg, const std::string &state_save_location) {
  if (cfg.status_none) return "";
  if (!cfg.status_file.empty()) return cfg.status_file;
  if (state_save_location.empty())
    throw ConfigError("no StateSaveLocation for the default status file; set StatusFile=PATH or StatusFile=none");
  std::string d = state_save_location;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  if (d == "/") return d + kDefaultStatusName;
  return d + "/" + kDefaultStatusName;
}

std::string topology_path(const Config &cfg, const std::string &conf_path) {
  if (!cfg.topology_file.empty()) return cfg.topology_file;
  size_t slash = conf_path.rfind('/');
  if (slash == std::string::npos) return "topology.json";
  return conf_path.substr(0, slash + 1) + "topology.json";
}

}  // namespace topoaware
