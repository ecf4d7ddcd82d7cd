// SPDX-License-Identifier: GPL-2.0-or-later
// topology.json: canonical output, round trip, hash check, and strict rejection of bad files.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "ibnetdiscover_parser.hpp"
#include "safe_folder.hpp"
#include "topology.hpp"
#include "topology_json.hpp"
// cmocka last: its macros (fail, ...) clash with names in the C++ headers.
#include "child.hpp"
#include "cmocka_cxx.hpp"

using namespace topoaware;

static const std::string kIb = std::string(TEST_FIXTURES) + "/ib/";

static std::string fixture_json() {
  Fabric f = parse_ibnetdiscover_file(kIb + "loginoff-2014-qdr-fdr.ibnetdiscover");
  Topology t = classify(f, {});
  return to_json(t);
}

static void test_round_trip(void **) {
  std::string text = fixture_json();
  assert_true(text.find("\"schema\": \"topoaware/1\"") != std::string::npos);
  Topology back = topology_from_json(text);
  assert_int_equal(back.hosts.size(), 144 - 0);
  assert_int_equal(back.switches.size(), 8);
  std::string again = to_json(back);
  assert_true(again == text);
  // Derived host lists are rebuilt on load.
  int leaves_with_hosts = 0;
  for (const auto &s : back.switches) leaves_with_hosts += !s.hosts.empty();
  assert_int_equal(leaves_with_hosts, 7);
}

static void expect_error(const std::string &text, const char *needle) {
  try {
    topology_from_json(text);
    fail_msg("accepted a bad topology (expected an error containing \"%s\")", needle);
  } catch (const TopologyError &e) {
    if (std::string(e.what()).find(needle) == std::string::npos)
      fail_msg("error \"%s\" does not mention \"%s\"", e.what(), needle);
  }
}

// A node description that is not UTF-8 (found by tests/fuzz/fuzz_ibnetdiscover): topology.json is
// still written (U+FFFD for the bad bytes) and reads back.
static void test_non_utf8_names(void **) {
  Topology t = topology_from_json(fixture_json());
  assert_true(!t.switches.empty());
  t.switches[0].desc = "switch \xff\xfe in rack \xc3";
  const std::string text = to_json(t);
  assert_true(text.find("switch \xef\xbf\xbd\xef\xbf\xbd in rack \xef\xbf\xbd") != std::string::npos);
  Topology back = topology_from_json(text);
  assert_string_equal(to_json(back).c_str(), text.c_str());
}

static void test_rejects(void **) {
  std::string text = fixture_json();
  expect_error("", "not valid JSON");
  expect_error(text.substr(0, text.size() / 2), "not valid JSON");
  expect_error("[]", "not a JSON object");
  // A number beyond a double is nlohmann's out_of_range, not parse_error: still a TopologyError
  // (found by tests/fuzz/fuzz_topology_json).
  expect_error("{\"schema\": 2e2700}", "not valid JSON");
  expect_error("{\"max_level\": -1e999}", "not valid JSON");
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  auto edited = [&](auto change) {
    nlohmann::ordered_json k = j;
    change(k);
    return k.dump(1) + "\n";
  };
  expect_error(edited([](auto &k) { k["schema"] = "topoaware/9"; }), "schema");
  expect_error(edited([](auto &k) { k["hosts"][0]["name"] = "renamed"; }), "");
  expect_error(edited([](auto &k) { k["hosts"][3]["name"] = "zzz"; }), "canonical");
  expect_error(edited([](auto &k) { k["switches"][0]["level"] = "one"; }), "must be an integer");
  expect_error(edited([](auto &k) { k["switches"][0].erase("level"); }), "missing \"level\"");
  expect_error(edited([](auto &k) { k["hosts"][0]["leaf_group"] = 999; }), "refers to nothing");
  expect_error(edited([](auto &k) { k["hosts"][0]["ports"][0]["switch"] = "0x1234"; }), "not in switches");
  expect_error(edited([](auto &k) { k["links"][0]["speed"] = "WARP"; }), "bad speed");
  // Any change to the content, even a valid one, breaks the hash.
  expect_error(edited([](auto &k) { k["switches"][0]["desc"] = "renamed"; }), "does not match");
  // hosts and links are read element by element while the text is parsed: an element that is not
  // an object, an array that is not one, a missing array, and a schema of another version (said
  // first, before what its hosts look like) are refused as before.
  expect_error(edited([](auto &k) { k["hosts"][1] = 7; }), "hosts[1] is not an object");
  expect_error(edited([](auto &k) { k["links"][0] = nlohmann::ordered_json::array(); }), "links[0] is not an object");
  expect_error(edited([](auto &k) { k["hosts"] = nlohmann::ordered_json::object(); }), "\"hosts\" must be an array");
  expect_error(edited([](auto &k) { k.erase("links"); }), "missing \"links\"");
  expect_error(edited([](auto &k) {
                 k["schema"] = "topoaware/9";
                 k["hosts"][0].erase("name");
               }),
               "schema \"topoaware/9\"");
  expect_error(edited([](auto &k) { k["hosts"][0]["pod"] = "one"; }), "must be an integer or null");
  expect_error(edited([](auto &k) { k["hosts"][0]["leaf"] = "0x99"; }), "switch 0x0000000000000099 is not in switches");
  // A key given twice (by hand: the writer never does): each array's elements are read and checked.
  std::string twice = text;
  const size_t at = twice.find("\"hosts\": [");
  assert_true(at != std::string::npos);
  twice.insert(at, "\"hosts\": [{\"name\": 5}],\n ");
  expect_error(twice, "hosts[0]: \"name\" must be a string");
}

static void test_atomic_write_and_load(void **) {
  char dir[] = "/tmp/topoaware-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  std::string path = std::string(dir) + "/topology.json";
  write_file_safely(path, fixture_json());
  Topology t = load_topology_file(path);
  assert_int_equal(t.switches.size(), 8);
  try {
    load_topology_file(std::string(dir) + "/missing.json");
    fail();
  } catch (const TopologyError &e) {
    assert_true(std::string(e.what()).find("missing.json: cannot open") != std::string::npos);
  }
  {
    std::ofstream(path) << "{\"schema\": ";
  }
  try {
    load_topology_file(path);
    fail();
  } catch (const TopologyError &e) {
    assert_true(std::string(e.what()).find(path + ": not valid JSON") == 0);
  }
  std::remove(path.c_str());
  rmdir(dir);
}

// What slurmctld must never wait on: a FIFO at TopologyFile would block the reader, /dev/zero
// would be read without end. Each is refused at once (in a
// child process, so that a blocking read fails the test instead of hanging it).
static void test_refuses_what_is_not_a_file(void **) {
  char dir[] = "/tmp/topoaware-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string fifo = std::string(dir) + "/fifo.json";
  assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string &path : {fifo, std::string("/dev/zero"), std::string(dir)}) {
    const int rc = run_in_child([&] {
      try {
        load_topology_file(path);
      } catch (const TopologyError &e) {
        return std::string(e.what()) == path + ": not a regular file (a FIFO, device or folder is never read)" ? 0 : 2;
      }
      return 4;
    });
    if (rc != 0) fail_msg("load_topology_file(%s): %s", path.c_str(), rc < 0 ? "blocked" : "not refused as expected");
  }
  unlink(fifo.c_str());
  rmdir(dir);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_rejects), cmocka_unit_test(test_non_utf8_names),
      cmocka_unit_test(test_atomic_write_and_load),
      cmocka_unit_test(test_refuses_what_is_not_a_file),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
