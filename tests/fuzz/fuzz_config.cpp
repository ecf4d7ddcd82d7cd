// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: topoaware.conf (corelib/config.hpp), as the job_submit and select plugins in
// slurmctld and the SPANK plugin read it: through the C API (topoaware_conf_load, from a file) and
// the core parser.
//
// Invariants: ConfigError is the only error, its message names the file and is printable text;
// the C API gives the same verdict and the same settings as the core parser, or NULL with a
// printable message; a configuration that parses, written back as topoaware.conf text, parses to
// the same settings.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "config.hpp"
#include "fuzz_common.hpp"
#include "layout_c.h"

namespace {

using namespace topoaware;

bool same(const Config &a, const Config &b) {
  if (a.topology_file != b.topology_file || a.default_mode != b.default_mode ||
      a.default_max_wait != b.default_max_wait || a.max_tries != b.max_tries || a.max_time_ms != b.max_time_ms ||
      a.log_level != b.log_level || a.missing_nodes != b.missing_nodes || a.rank_order != b.rank_order ||
      a.status_none != b.status_none ||
      a.status_file != b.status_file || a.status_interval != b.status_interval ||
      a.partitions.size() != b.partitions.size())
    return false;
  for (const auto &[name, p] : a.partitions) {
    auto it = b.partitions.find(name);
    if (it == b.partitions.end()) return false;
    const PartitionDefaults &q = it->second;
    if (p.has_mode != q.has_mode || p.has_max_wait != q.has_max_wait || p.mode != q.mode || p.max_wait != q.max_wait)
      return false;
  }
  return true;
}

// The configuration as topoaware.conf text (every global key, one line per partition).
std::string write(const Config &c) {
  std::string s;
  if (!c.topology_file.empty()) s += "TopologyFile=" + c.topology_file + "\n";
  s += std::string("DefaultMode=") + topo_mode_name(c.default_mode) + "\n";
  s += "DefaultMaxWait=" + wait_to_string(c.default_max_wait) + "\n";
  s += "MaxTriesPerCall=" + std::to_string(c.max_tries) + "\n";
  s += "MaxTimePerCall=" + std::to_string(c.max_time_ms) + "ms\n";
  s += std::string("LogLevel=") + log_level_name(c.log_level) + "\n";
  s += std::string("MissingNodes=") + missing_nodes_name(c.missing_nodes) + "\n";
  s += std::string("RankOrder=") + rank_order_mode_name(c.rank_order) + "\n";
  if (c.status_none)
    s += "StatusFile=none\n";
  else if (!c.status_file.empty())
    s += "StatusFile=" + c.status_file + "\n";
  s += "StatusInterval=" + std::to_string(c.status_interval) + "s\n";
  for (const auto &[name, p] : c.partitions) {
    s += "PartitionName=" + name;
    if (p.has_mode) s += std::string(" DefaultMode=") + topo_mode_name(p.mode);
    if (p.has_max_wait) s += " DefaultMaxWait=" + wait_to_string(p.max_wait);
    s += "\n";
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  std::optional<Config> core;
  try {
    core = parse_config(text, "fuzz.conf");
  } catch (const ConfigError &e) {
    const std::string msg = e.what();
    FUZZ_CHECK(msg.rfind("fuzz.conf", 0) == 0);
    FUZZ_CHECK(fuzz::printable(msg));
  }
  if (core) {
    const std::string again = write(*core);
    const Config back = parse_config(again, "rewritten.conf");  // throws (uncaught) if unreadable
    FUZZ_CHECK(same(*core, back));
    FUZZ_CHECK(write(back) == again);
  }

  fuzz::MemFile file("topoaware.conf", data, size);
  char err[TOPOAWARE_ERR_LEN];
  int found = -1;
  topoaware_conf_t *conf = topoaware_conf_load(file.path(), &found, err, sizeof err);
  FUZZ_CHECK(!conf == !core);
  if (!conf) {
    FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));
    return 0;
  }
  FUZZ_CHECK(found == 1);
  FUZZ_CHECK(topoaware_conf_max_tries(conf) == core->max_tries);
  FUZZ_CHECK(topoaware_conf_max_time_ms(conf) == core->max_time_ms);
  FUZZ_CHECK(topoaware_conf_status_interval(conf) == core->status_interval);
  FUZZ_CHECK(topoaware_conf_log_level(conf) == int(core->log_level));
  FUZZ_CHECK(std::string(topoaware_log_level_name(topoaware_conf_log_level(conf))) == log_level_name(core->log_level));
  FUZZ_CHECK((topoaware_conf_missing_nodes(conf) == TOPOAWARE_MISSING_FALLBACK) ==
             (core->missing_nodes == MissingNodes::Fallback));
  FUZZ_CHECK((topoaware_conf_rank_order(conf) == TOPOAWARE_RANK_ORDER_ALONE) ==
             (core->rank_order == RankOrderMode::Alone));
  FUZZ_CHECK(std::string(topoaware_rank_order_mode_name(topoaware_conf_rank_order(conf))) ==
             rank_order_mode_name(core->rank_order));
  for (const char *part : {"", "gpu", "batch"}) {
    FUZZ_CHECK((topoaware_conf_mode(conf, part) == TOPOAWARE_MODE_STRICT) ==
               (core->mode_for(part) == TopoMode::Strict));
    FUZZ_CHECK(topoaware_conf_max_wait(conf, part) == core->max_wait_for(part));
  }
  for (const auto &[name, p] : core->partitions) {
    FUZZ_CHECK((topoaware_conf_mode(conf, name.c_str()) == TOPOAWARE_MODE_STRICT) ==
               (core->mode_for(name) == TopoMode::Strict));
    FUZZ_CHECK(topoaware_conf_max_wait(conf, name.c_str()) == core->max_wait_for(name));
  }
  char buf[8192];
  FUZZ_CHECK(topoaware_conf_topology(conf, buf, sizeof buf) == 0);
  FUZZ_CHECK(buf == topology_path(*core, file.path()));
  const int rc = topoaware_conf_status_file(conf, "/var/spool/slurmctld", buf, sizeof buf);
  FUZZ_CHECK(rc == (core->status_none ? 1 : 0));
  FUZZ_CHECK(buf == status_path(*core, "/var/spool/slurmctld"));
  if (!core->status_none && core->status_file.empty()) {  // the default needs a StateSaveLocation
    FUZZ_CHECK(topoaware_conf_status_file(conf, "", buf, sizeof buf) == -1);
    FUZZ_CHECK(fuzz::good_c_message(buf, sizeof buf));
  }
  topoaware_conf_free(conf);
  return 0;
}
