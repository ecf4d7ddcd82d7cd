// topoaware.conf parsing and the option parsers of config.hpp: every error path, with its line.
#include <cstring>
#include <string>

#include "config.hpp"
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
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_and_defaults), cmocka_unit_test(test_full), cmocka_unit_test(test_errors),
      cmocka_unit_test(test_parsers),            cmocka_unit_test(test_paths), cmocka_unit_test(test_load),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
