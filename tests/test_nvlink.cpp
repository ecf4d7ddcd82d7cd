// SPDX-License-Identifier: GPL-2.0-or-later
// NVLink domains: the per-node line parser (both formats, with pdsh prefixes), merging into a
// Topology, and topology.json with and without domains (round trip, hash stability, rejection).
#include <nlohmann/json.hpp>
#include <string>

#include "ibnetdiscover_parser.hpp"
#include "nvlink.hpp"
#include "topology.hpp"
#include "topology_json.hpp"
// cmocka last: its macros (fail, ...) clash with names in the C++ headers.
#include "cmocka_cxx.hpp"

using namespace topoaware;

static const std::string kIb = std::string(TEST_FIXTURES) + "/ib/";
static const char *kU1 = "1a2b3c4d-0000-4000-8000-00000000abcd";
static const char *kU1Upper = "1A2B3C4D-0000-4000-8000-00000000ABCD";

static Topology fixture() {
  Fabric f = parse_ibnetdiscover_file(kIb + "loginoff-2014-qdr-fdr.ibnetdiscover");
  return classify(f, {});
}

static void expect_parse_error(const std::string &text, const char *needle) {
  try {
    parse_nvlink_lines(text, "f.txt");
    fail_msg("accepted \"%s\" (expected an error containing \"%s\")", text.c_str(), needle);
  } catch (const NvlinkError &e) {
    if (std::string(e.what()).find(needle) == std::string::npos)
      fail_msg("error \"%s\" does not mention \"%s\"", e.what(), needle);
  }
}

static void test_node_lines(void **) {
  NodeNvlink n;
  n.host = "a";
  n.reason = "libnvidia-ml.so.1 not found";
  assert_string_equal(format_node_nvlink(n).c_str(), "nvlink none (libnvidia-ml.so.1 not found)");
  n.in_domain = true;
  n.cluster_uuid = kU1;
  n.clique_id = 7;
  n.gpus = 4;
  std::string line = format_node_nvlink(n);
  assert_string_equal(line.c_str(), (std::string("nvlink cluster_uuid=") + kU1 + " clique_id=7 gpus=4").c_str());
  // What pdsh gives back reads as what was printed.
  auto nodes = parse_nvlink_lines("# collected\n\nn1: " + line + "\nn2: nvlink none (no GPU)\n", "f.txt");
  assert_int_equal(nodes.size(), 2);
  assert_string_equal(nodes[0].host.c_str(), "n1");
  assert_true(nodes[0].in_domain);
  assert_string_equal(nodes[0].cluster_uuid.c_str(), kU1);
  assert_int_equal(nodes[0].clique_id, 7);
  assert_int_equal(nodes[0].gpus, 4);
  assert_false(nodes[1].in_domain);
  assert_string_equal(nodes[1].reason.c_str(), "no GPU");
}

static void test_nvidia_smi_lines(void **) {
  // Interleaved as pdsh prints them; upper-case UUIDs; a header; a host without a fabric.
  std::string text = std::string("n2: fabric.clusterUuid, fabric.cliqueId\n") + "n2: " + kU1Upper + ", 3\n" +
                     "n1: " + kU1 + ", 3\n" + "n2: " + kU1 + ", 3\n" +
                     "n3: 00000000-0000-0000-0000-000000000000, 0\n" + "n4: [N/A], [N/A]\n" + "n4: N/A, N/A\r\n";
  auto nodes = parse_nvlink_lines(text, "f.txt");
  assert_int_equal(nodes.size(), 4);
  assert_string_equal(nodes[0].host.c_str(), "n2");
  assert_int_equal(nodes[0].gpus, 2);
  assert_string_equal(nodes[0].cluster_uuid.c_str(), kU1);
  assert_int_equal(nodes[1].gpus, 1);
  assert_false(nodes[2].in_domain);
  assert_false(nodes[3].in_domain);
}

static void test_parse_errors(void **) {
  expect_parse_error(std::string(kU1) + ", 3\n", "f.txt:1: no \"host: \" prefix");
  expect_parse_error("\n\nn1: nvlink cluster_uuid=zz clique_id=1 gpus=4\n", "f.txt:3: cluster_uuid \"zz\"");
  expect_parse_error("n1: nvlink cluster_uuid=" + std::string(kU1) + " clique_id=-1 gpus=4\n", "clique_id \"-1\"");
  expect_parse_error("n1: nvlink cluster_uuid=" + std::string(kU1) + " clique_id=1 gpus=0\n", "gpus \"0\"");
  expect_parse_error("n1: nvlink cluster_uuid=" + std::string(kU1) + " clique_id=1 gpus=4 x=1\n", "unknown field");
  expect_parse_error("n1: nvlink none\nn1: nvlink none\n", "f.txt:2: host n1 is listed more than once (first at line 1)");
  expect_parse_error("n1: " + std::string(kU1) + ", 1\nn1: nvlink none\n", "listed more than once");
  expect_parse_error("n1: " + std::string(kU1) + ", 1\nn1: " + kU1 + ", 2\n", "f.txt:2: host n1: its GPUs report different");
  expect_parse_error("n1: " + std::string(kU1) + ", 1\nn1: N/A, N/A\n", "some GPUs are in an NVLink domain");
  expect_parse_error("n1: hello\n", "expected \"<cluster UUID>, <clique ID>\"");
  expect_parse_error("n1: a, b, c\n", "expected");
  expect_parse_error("n1: " + std::string(kU1) + ", x\n", "do not read together");
  expect_parse_error("n1: xyz, 1\n", "cluster UUID \"xyz\" is not a UUID");
  expect_parse_error("n 1: nvlink none\n", "is not a host name");
  assert_int_equal(parse_nvlink_lines("", "f").size(), 0);
}

static void test_merge_and_json(void **) {
  Topology t = fixture();
  const std::string plain = to_json(t);
  const std::string plain_hash = t.hash;
  assert_true(plain.find("nvlink_domains") == std::string::npos);  // fabrics without domains: unchanged
  assert_true(t.hosts.size() > 4);
  std::vector<NodeNvlink> nodes;
  for (int i : {3, 0, 1}) {  // any order
    NodeNvlink n;
    n.host = t.hosts[i].name;
    n.in_domain = true;
    n.cluster_uuid = kU1;
    n.clique_id = i == 3 ? 9 : 2;
    n.gpus = i == 1 ? 3 : 4;
    nodes.push_back(n);
  }
  NodeNvlink none;
  none.host = t.hosts[2].name;
  nodes.push_back(none);
  NodeNvlink stranger;
  stranger.host = "not-a-host";
  stranger.in_domain = true;
  stranger.cluster_uuid = kU1;
  nodes.push_back(stranger);
  std::vector<std::string> unknown, warnings;
  apply_nvlink_domains(t, nodes, &unknown, &warnings);
  assert_int_equal(unknown.size(), 1);
  assert_string_equal(unknown[0].c_str(), "not-a-host");
  assert_int_equal(warnings.size(), 1);
  assert_int_equal(t.nvlink_domains.size(), 2);
  assert_int_equal(t.nvlink_domains[0].clique_id, 2);
  assert_int_equal(t.nvlink_domains[0].gpus_per_node, 3);
  assert_int_equal(t.nvlink_domains[0].hosts.size(), 2);
  assert_int_equal(t.nvlink_domains[0].hosts[0], 0);
  assert_int_equal(t.hosts[3].nvlink_domain, 1);
  assert_int_equal(t.hosts[2].nvlink_domain, -1);
  const std::string with = to_json(t);
  assert_true(t.hash != plain_hash);  // domains enter the hash
  Topology back = topology_from_json(with);
  assert_int_equal(back.nvlink_domains.size(), 2);
  assert_int_equal(back.hosts[1].nvlink_domain, 0);
  assert_int_equal(back.hosts[3].nvlink_domain, 1);
  assert_true(to_json(back) == with);
  // Removing them gives back the bytes and hash of the fabric alone.
  apply_nvlink_domains(back, {}, nullptr, nullptr);
  assert_true(to_json(back) == plain);
  assert_string_equal(back.hash.c_str(), plain_hash.c_str());

  // Strict reading: structure is checked before the hash, so edits are named.
  auto reject = [&](auto change, const char *needle) {
    Topology x = topology_from_json(with);
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(with);
    change(j);
    std::string text = j.dump(1) + "\n";
    try {
      topology_from_json(text);
      fail_msg("accepted an edited file (expected \"%s\")", needle);
    } catch (const TopologyError &e) {
      if (std::string(e.what()).find(needle) == std::string::npos)
        fail_msg("error \"%s\" does not mention \"%s\"", e.what(), needle);
    }
  };
  reject([](auto &j) { j["nvlink_domains"][0]["gpus_per_node"] = 0; }, "out of range");
  reject([](auto &j) { j["nvlink_domains"][1]["hosts"] = j["nvlink_domains"][0]["hosts"]; }, "in two domains");
  reject([](auto &j) { std::swap(j["nvlink_domains"][0], j["nvlink_domains"][1]); }, "order");
  reject([](auto &j) { j["nvlink_domains"][0]["hosts"] = "nobody"; }, "is not in hosts[]");
  reject([](auto &j) { j["nvlink_domains"][0]["clique_id"] = 5; }, "content hash");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_node_lines),
      cmocka_unit_test(test_nvidia_smi_lines),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_merge_and_json),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
