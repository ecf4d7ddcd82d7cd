// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware.conf parsing and the option parsers of config.hpp: every error path, with its line.
#include <cstring>
#include <string>

#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "config.hpp"
#include "layout_c.h"
#include "child.hpp"
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

void expect_error(const std::string &text, const char *part) {
  try {
    parse_config(text, "topoaware.conf");
  } catch (const ConfigError &e) {
    if (!std::strstr(e.what(), part)) {
      print_error("message '%s' lacks '%s'\n", e.what(), part);
      fail();
    }
    return;
  }
  print_error("'%s' parsed, expected an error containing '%s'\n", text.c_str(), part);
  fail();
}

void test_empty_and_defaults(void **) {
  Config c = parse_config("", "x");
  assert_true(c.topology_file.empty());
  assert_true(c.default_mode == TopoMode::Prefer);
  assert_int_equal(c.default_max_wait, 3600);
  assert_true(c.partitions.empty());
  c = parse_config("# only a comment\n\n   \t\n", "x");
  assert_true(c.partitions.empty());
}

void test_full(void **) {
  Config c = parse_config(
      "TopologyFile=/etc/slurm/topology.json  # the fabric\r\n"
      "defaultmode=strict DEFAULTMAXWAIT=45m\n"
      "PartitionName=gpu DefaultMode=prefer\n"
      "PartitionName=big.gpu-2 DefaultMaxWait=2h DefaultMode=strict\n",
      "x");
  assert_string_equal(c.topology_file.c_str(), "/etc/slurm/topology.json");
  assert_true(c.default_mode == TopoMode::Strict);
  assert_int_equal(c.default_max_wait, 45 * 60);
  assert_true(c.mode_for("gpu") == TopoMode::Prefer);
  assert_int_equal(c.max_wait_for("gpu"), 45 * 60);  // not set on the line: global default
  assert_true(c.mode_for("big.gpu-2") == TopoMode::Strict);
  assert_int_equal(c.max_wait_for("big.gpu-2"), 7200);
  assert_true(c.mode_for("other") == TopoMode::Strict);
  assert_true(c.mode_for("") == TopoMode::Strict);
  assert_true(c.mode_for("GPU") == TopoMode::Strict);  // partition names are case-sensitive
}

void test_errors(void **) {
  expect_error("Foo=bar\n", "line 1: unknown key 'Foo'");
  expect_error("\n\nDefaultMode\n", "line 3: 'DefaultMode' is not Key=Value");
  expect_error("=strict\n", "is not Key=Value");
  expect_error("DefaultMode=\n", "DefaultMode= needs a value");
  expect_error("DefaultMode=fast\n", "line 1: DefaultMode: topo-mode 'fast' is not known");
  expect_error("DefaultMode=strict\nDefaultMode=prefer\n", "line 2: DefaultMode is set twice");
  expect_error("DefaultMaxWait=1w\n", "unknown unit");
  expect_error("DefaultMaxWait=40d\n", "more than 30 days");
  expect_error("DefaultMaxWait=1\nDefaultMaxWait=2\n", "DefaultMaxWait is set twice");
  expect_error("TopologyFile=topology.json\n", "not an absolute path");
  expect_error("TopologyFile=/a\nTopologyFile=/b\n", "TopologyFile is set twice");
  expect_error("PartitionName=gpu\n", "sets nothing");
  expect_error("PartitionName=\n", "PartitionName= needs a value");
  expect_error("PartitionName=g/pu DefaultMode=strict\n", "is not a partition name");
  expect_error("PartitionName=gpu DefaultMode=strict\nPartitionName=gpu DefaultMode=prefer\n",
               "line 2: partition gpu is already configured");
  expect_error("PartitionName=gpu TopologyFile=/x\n", "unknown key 'TopologyFile' on a PartitionName line");
  expect_error("PartitionName=gpu DefaultMode=strict DefaultMode=prefer\n", "DefaultMode given twice");
  expect_error("PartitionName=gpu DefaultMaxWait=1 DefaultMaxWait=2\n", "DefaultMaxWait given twice");
  expect_error("PartitionName=gpu DefaultMode=quick\n", "line 1: DefaultMode: topo-mode 'quick'");
  expect_error("PartitionName=gpu DefaultMaxWait=x\n", "does not start with a number");
  expect_error("DefaultMode=strict\x01\n", "control character");
  expect_error(std::string(5000, 'A') + "\n", "longer than 4096 bytes");
  expect_error(std::string((1u << 20) + 1, '#'), "larger than 1 MiB");
  std::string many;
  for (int i = 0; i <= 4096; ++i) many += "PartitionName=p" + std::to_string(i) + " DefaultMode=strict\n";
  expect_error(many, "more than 4096 PartitionName lines");
}

// The select plugin's keys: defaults, every value, case-insensitive keys, case-sensitive values.
void test_plugin_keys(void **) {
  Config d = parse_config("", "x");
  assert_int_equal(d.max_tries, 4);
  assert_int_equal(d.max_time_ms, 200);
  assert_true(d.log_level == LogLevel::Info);
  assert_true(d.missing_nodes == MissingNodes::Avoid);
  assert_true(d.rank_order == RankOrderMode::Neighbours);
  assert_false(d.status_none);
  assert_true(d.status_file.empty());
  assert_int_equal(d.status_interval, 2);
  Config c = parse_config(
      "maxtriespercall=64 MAXTIMEPERCALL=10000ms\n"
      "LogLevel=debug missingnodes=fallback rankorder=alone\n"
      "StatusFile=/var/spool/slurmctld/ta.json StatusInterval=3600s\n"
      "PartitionName=gpu DefaultMode=strict\n",
      "x");
  assert_int_equal(c.max_tries, 64);
  assert_int_equal(c.max_time_ms, 10000);
  assert_true(c.log_level == LogLevel::Debug);
  assert_true(c.missing_nodes == MissingNodes::Fallback);
  assert_true(c.rank_order == RankOrderMode::Alone);
  assert_string_equal(c.status_file.c_str(), "/var/spool/slurmctld/ta.json");
  assert_int_equal(c.status_interval, 3600);
  assert_true(c.mode_for("gpu") == TopoMode::Strict);  // PartitionName lines keep working
  c = parse_config("MaxTriesPerCall=1 MaxTimePerCall=1 StatusInterval=0 StatusFile=none LogLevel=quiet\n", "x");
  assert_int_equal(c.max_tries, 1);
  assert_int_equal(c.max_time_ms, 1);
  assert_int_equal(c.status_interval, 0);
  assert_true(c.status_none);
  assert_true(c.log_level == LogLevel::Quiet);
  assert_true(parse_config("LogLevel=verbose", "x").log_level == LogLevel::Verbose);
  assert_true(parse_config("LogLevel=info", "x").log_level == LogLevel::Info);
  assert_true(parse_config("MissingNodes=avoid", "x").missing_nodes == MissingNodes::Avoid);
  for (LogLevel l : {LogLevel::Quiet, LogLevel::Info, LogLevel::Verbose, LogLevel::Debug})
    assert_true(parse_log_level(log_level_name(l)) == l);
  assert_string_equal(missing_nodes_name(MissingNodes::Fallback), "fallback");
  assert_true(parse_config("RankOrder=neighbours", "x").rank_order == RankOrderMode::Neighbours);
  for (RankOrderMode m : {RankOrderMode::Neighbours, RankOrderMode::Alone})
    assert_true(parse_rank_order_mode(rank_order_mode_name(m)) == m);

  expect_error("MaxTriesPerCall=0\n",
               "line 1: MaxTriesPerCall=0 is out of range; write a whole number of blocks from 1 to 64");
  expect_error("MaxTriesPerCall=65\n", "MaxTriesPerCall=65 is out of range");
  expect_error("MaxTriesPerCall=4x\n", "MaxTriesPerCall=4x: unknown unit 'x'");
  expect_error("MaxTriesPerCall=-1\n", "MaxTriesPerCall=-1 is not a whole number");
  expect_error("MaxTriesPerCall=04\n", "leading zeros");
  expect_error("MaxTriesPerCall=99999999999\n", "out of range");
  expect_error("MaxTriesPerCall=\n", "MaxTriesPerCall= needs a value");
  expect_error("MaxTriesPerCall=2\nmaxtriespercall=3\n", "line 2: MaxTriesPerCall is set twice");
  expect_error("MaxTimePerCall=0\n", "MaxTimePerCall=0 is out of range; write milliseconds from 1 to 10000");
  expect_error("MaxTimePerCall=10001\n", "out of range");
  expect_error("MaxTimePerCall=1s\n", "MaxTimePerCall=1s: unknown unit 's'");
  expect_error("MaxTimePerCall=200 ms\n", "'ms' is not Key=Value");
  expect_error("LogLevel=Debug\n", "line 1: LogLevel=Debug is not known; use quiet");
  expect_error("LogLevel=error\n", "LogLevel=error is not known");
  expect_error("MissingNodes=use\n", "line 1: MissingNodes=use is not known; use avoid");
  expect_error("RankOrder=neighbors\n", "line 1: RankOrder=neighbors is not known; use neighbours (");
  expect_error("RankOrder=Alone\n", "or alone (each job's order as if it were alone");
  expect_error("RankOrder=alone\nrankorder=alone\n", "line 2: RankOrder is set twice");
  expect_error("StatusFile=status.json\n", "StatusFile=status.json is not an absolute path");
  expect_error("StatusFile=/var/spool/\n", "names a folder");
  expect_error("StatusFile=\n", "StatusFile= needs a value");
  expect_error("StatusFile=none StatusFile=/x\n", "StatusFile is set twice");
  expect_error("StatusInterval=3601\n", "StatusInterval=3601 is out of range; write seconds from 0 to 3600");
  expect_error("StatusInterval=2m\n", "unknown unit 'm'");
  expect_error("PartitionName=gpu LogLevel=debug\n", "unknown key 'LogLevel' on a PartitionName line");
  expect_error("StatusIntervall=2\n", "unknown key 'StatusIntervall'; use TopologyFile=");
}

void test_status_path(void **) {
  Config c;
  assert_string_equal(status_path(c, "/var/spool/slurmctld").c_str(), "/var/spool/slurmctld/topoaware-status.json");
  assert_string_equal(status_path(c, "/var/spool/slurmctld//").c_str(), "/var/spool/slurmctld/topoaware-status.json");
  assert_string_equal(status_path(c, "/").c_str(), "/topoaware-status.json");
  bool threw = false;
  try {
    status_path(c, "");
  } catch (const ConfigError &e) {
    threw = std::strstr(e.what(), "StatusFile=") != nullptr;
  }
  assert_true(threw);
  c.status_file = "/srv/ta.json";
  assert_string_equal(status_path(c, "").c_str(), "/srv/ta.json");
  c.status_none = true;
  assert_string_equal(status_path(c, "/var/spool").c_str(), "");
}

// The C accessors the select plugin uses (layout_c.h), on a loaded file and on NULL (defaults).
void test_c_accessors(void **) {
  char buf[TOPOAWARE_ERR_LEN], err[TOPOAWARE_ERR_LEN];
  assert_int_equal(topoaware_conf_max_tries(nullptr), 4);
  assert_int_equal(topoaware_conf_max_time_ms(nullptr), 200);
  assert_int_equal(topoaware_conf_log_level(nullptr), TOPOAWARE_LOG_INFO);
  assert_int_equal(topoaware_conf_missing_nodes(nullptr), TOPOAWARE_MISSING_AVOID);
  assert_int_equal(topoaware_conf_rank_order(nullptr), TOPOAWARE_RANK_ORDER_NEIGHBOURS);
  assert_int_equal(topoaware_conf_status_interval(nullptr), 2);
  assert_int_equal(topoaware_conf_status_file(nullptr, "/var/spool/ctld", buf, sizeof buf), 0);
  assert_string_equal(buf, "/var/spool/ctld/topoaware-status.json");
  assert_int_equal(topoaware_conf_status_file(nullptr, nullptr, buf, sizeof buf), -1);
  assert_non_null(std::strstr(buf, "StateSaveLocation"));
  assert_int_equal(topoaware_conf_status_file(nullptr, "/var/spool/ctld", buf, 8), -1);  // too small
  assert_int_equal(topoaware_conf_status_file(nullptr, "/x", nullptr, 0), -1);
  assert_string_equal(topoaware_log_level_name(TOPOAWARE_LOG_QUIET), "quiet");
  assert_string_equal(topoaware_log_level_name(TOPOAWARE_LOG_VERBOSE), "verbose");
  assert_string_equal(topoaware_log_level_name(TOPOAWARE_LOG_DEBUG), "debug");
  assert_string_equal(topoaware_log_level_name(42), "info");
  assert_string_equal(topoaware_missing_nodes_name(TOPOAWARE_MISSING_FALLBACK), "fallback");
  assert_string_equal(topoaware_missing_nodes_name(TOPOAWARE_MISSING_AVOID), "avoid");
  assert_string_equal(topoaware_rank_order_mode_name(TOPOAWARE_RANK_ORDER_ALONE), "alone");
  assert_string_equal(topoaware_rank_order_mode_name(TOPOAWARE_RANK_ORDER_NEIGHBOURS), "neighbours");

  char dir[] = "/tmp/ta-conf-XXXXXX";
  assert_non_null(mkdtemp(dir));
  std::string path = std::string(dir) + "/topoaware.conf";
  {
    std::ofstream f(path);
    f << "MaxTriesPerCall=8 MaxTimePerCall=50ms LogLevel=verbose\nMissingNodes=fallback StatusInterval=10\n"
         "RankOrder=alone\n"
         "StatusFile=/srv/ta/status.json\n";
  }
  int found = 0;
  topoaware_conf_t *conf = topoaware_conf_load(path.c_str(), &found, err, sizeof err);
  assert_non_null(conf);
  assert_int_equal(found, 1);
  assert_int_equal(topoaware_conf_max_tries(conf), 8);
  assert_int_equal(topoaware_conf_max_time_ms(conf), 50);
  assert_int_equal(topoaware_conf_log_level(conf), TOPOAWARE_LOG_VERBOSE);
  assert_int_equal(topoaware_conf_missing_nodes(conf), TOPOAWARE_MISSING_FALLBACK);
  assert_int_equal(topoaware_conf_rank_order(conf), TOPOAWARE_RANK_ORDER_ALONE);
  assert_int_equal(topoaware_conf_status_interval(conf), 10);
  assert_int_equal(topoaware_conf_status_file(conf, nullptr, buf, sizeof buf), 0);
  assert_string_equal(buf, "/srv/ta/status.json");
  assert_int_equal(topoaware_conf_mode(conf, "any"), TOPOAWARE_MODE_PREFER);
  topoaware_conf_free(conf);
  {
    std::ofstream f(path);
    f << "StatusFile=none LogLevel=quiet\n";
  }
  conf = topoaware_conf_load(path.c_str(), &found, err, sizeof err);
  assert_non_null(conf);
  assert_int_equal(topoaware_conf_status_file(conf, "/var/spool", buf, sizeof buf), 1);
  assert_string_equal(buf, "");
  assert_int_equal(topoaware_conf_log_level(conf), TOPOAWARE_LOG_QUIET);
  topoaware_conf_free(conf);
  {
    std::ofstream f(path);
    f << "# a typo\nMaxTriesPerCall=0\n";
  }
  assert_null(topoaware_conf_load(path.c_str(), &found, err, sizeof err));
  assert_non_null(std::strstr(err, "topoaware.conf line 2: MaxTriesPerCall=0 is out of range"));
  std::remove(path.c_str());
  rmdir(dir);
}

void test_parsers(void **) {
  assert_true(parse_topo_mode("strict") == TopoMode::Strict);
  assert_true(parse_topo_mode("prefer") == TopoMode::Prefer);
  assert_string_equal(topo_mode_name(TopoMode::Strict), "strict");
  assert_true(parse_nccl_hints("print") == NcclHints::Print);
  assert_string_equal(nccl_hints_name(NcclHints::Off), "off");
  assert_int_equal(parse_wait("w", "0"), 0);
  assert_int_equal(parse_wait("w", "30d"), 30 * 86400);
  assert_string_equal(wait_to_string(3 * 3600).c_str(), "3h");
  assert_string_equal(wait_to_string(61).c_str(), "61s");
  for (const char *bad : {"", "s", "-5", "+5", "5 ", "5ms", "05", "1e3", "99999999999"}) {
    bool threw = false;
    try {
      parse_wait("topo-max-wait", bad);
    } catch (const ConfigError &e) {
      threw = std::strstr(e.what(), "topo-max-wait") != nullptr;
    }
    if (!threw) {
      print_error("parse_wait('%s') did not fail with a message naming the option\n", bad);
      fail();
    }
  }
}

void test_paths(void **) {
  assert_string_equal(config_path(nullptr, "/etc/slurm-llnl/slurm.conf").c_str(), "/etc/slurm-llnl/topoaware.conf");
  assert_string_equal(config_path("", "slurm.conf").c_str(), "topoaware.conf");
  assert_string_equal(config_path("/x.conf", "/etc/slurm/slurm.conf").c_str(), "/x.conf");
  assert_string_equal(config_path(nullptr, nullptr).c_str(), "/etc/slurm/topoaware.conf");
  Config c;
  assert_string_equal(topology_path(c, "/etc/slurm/topoaware.conf").c_str(), "/etc/slurm/topology.json");
  c.topology_file = "/srv/t.json";
  assert_string_equal(topology_path(c, "/etc/slurm/topoaware.conf").c_str(), "/srv/t.json");
}

void test_load(void **) {
  bool found = true;
  Config c = load_config("/nonexistent/dir/topoaware.conf", &found);
  assert_false(found);
  assert_true(c.default_mode == TopoMode::Prefer);
  bool threw = false;
  try {
    load_config("/", &found);  // a folder
  } catch (const ConfigError &e) {
    threw = std::strstr(e.what(), "not a regular file") != nullptr;
  }
  assert_true(threw);
  // A FIFO or a device is refused at once, never waited on or read without end (the file is read by
  // slurmctld on reconfigure and by every task's SPANK plugin); in a child so that blocking fails.
  char dir[] = "/tmp/ta-config-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string fifo = std::string(dir) + "/topoaware.conf";
  assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string &path : {fifo, std::string("/dev/zero")}) {
    const int rc = run_in_child([&] {
      try {
        load_config(path, nullptr);
      } catch (const ConfigError &e) {
        return std::string(e.what()) == path + ": not a regular file (a FIFO, device or folder is never read)" ? 0 : 2;
      }
      return 4;
    });
    if (rc != 0) fail_msg("load_config(%s): %s", path.c_str(), rc < 0 ? "blocked" : "not refused as expected");
  }
  unlink(fifo.c_str());
  rmdir(dir);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_and_defaults), cmocka_unit_test(test_full), cmocka_unit_test(test_errors),
      cmocka_unit_test(test_parsers),            cmocka_unit_test(test_paths), cmocka_unit_test(test_load),
      cmocka_unit_test(test_plugin_keys),        cmocka_unit_test(test_status_path),
      cmocka_unit_test(test_c_accessors),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
