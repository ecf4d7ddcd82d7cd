// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm host lists. Expected values marked "scontrol" were produced by Slurm 22.05's own
// `scontrol show hostnames` / `scontrol show hostlist` on this machine.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cmocka_cxx.hpp"
#include "hostlist.hpp"
#include "topology.hpp"

using topoaware::hostlist_compress;
using topoaware::hostlist_expand;
using V = std::vector<std::string>;

namespace {

void expect_list(const V &got, const V &want, const char *what) {
  if (got != want) {
    std::string g, w;
    for (const auto &s : got) g += s + " ";
    for (const auto &s : want) w += s + " ";
    print_error("%s: got [%s], want [%s]\n", what, g.c_str(), w.c_str());
    fail();
  }
}

// The error must be std::invalid_argument and name the bad part.
void expect_error(const std::string &list, const char *part, size_t max_hosts = 1u << 20,
                  size_t max_bytes = topoaware::kHostlistMaxBytes) {
  try {
    hostlist_expand(list, max_hosts, max_bytes);
  } catch (const std::invalid_argument &e) {
    if (!std::strstr(e.what(), part)) {
      print_error("\"%.200s\": message \"%.400s\" does not name \"%s\"\n", list.c_str(), e.what(), part);
      fail();
    }
    return;
  }
  print_error("\"%.200s\" was accepted\n", list.c_str());
  fail();
}

void compress_cases(void **) {
  V n32;
  for (int i = 1; i <= 32; ++i) n32.push_back("n" + std::string(i < 10 ? "00" : "0") + std::to_string(i));
  assert_string_equal(hostlist_compress(n32).c_str(), "n[001-032]");
  assert_string_equal(hostlist_compress({}).c_str(), "");
  assert_string_equal(hostlist_compress({"n5"}).c_str(), "n5");                        // no brackets for one
  assert_string_equal(hostlist_compress({"n9", "n10"}).c_str(), "n[9-10]");            // scontrol
  assert_string_equal(hostlist_compress({"n09", "n10"}).c_str(), "n[09-10]");          // scontrol
  assert_string_equal(hostlist_compress({"n9", "n010", "n11"}).c_str(), "n[9,010,11]");  // scontrol
  assert_string_equal(hostlist_compress({"n08", "n9", "n10"}).c_str(), "n[08,9-10]");  // scontrol
  assert_string_equal(hostlist_compress({"n98", "n099", "n100"}).c_str(), "n[98,099-100]");  // scontrol
  assert_string_equal(hostlist_compress({"n1", "n01"}).c_str(), "n[1,01]");            // scontrol
  assert_string_equal(hostlist_compress({"n0001", "n002", "n3"}).c_str(), "n[0001,002,3]");  // scontrol
  // Only the last number is ranged (scontrol).
  assert_string_equal(hostlist_compress({"a1b2", "a1b3", "a2b3"}).c_str(), "a1b[2-3],a2b3");
  // Names without digits stay as they are and do not merge with numbered names (scontrol).
  assert_string_equal(hostlist_compress({"foo", "bar", "n1"}).c_str(), "foo,bar,n1");
  assert_string_equal(hostlist_compress({"foo", "foo1", "foo2"}).c_str(), "foo,foo[1-2]");
  // Prefix order of first appearance, numbers sorted and de-duplicated within a prefix.
  assert_string_equal(hostlist_compress({"n3", "m1", "n1", "n2", "n2"}).c_str(), "n[1-3],m1");
  assert_string_equal(hostlist_compress({"n1", "n3", "n5", "n6", "n7"}).c_str(), "n[1,3,5-7]");
  assert_string_equal(hostlist_compress({"r1-leaf02", "r1-leaf01", "r0-leaf01"}).c_str(), "r1-leaf[01-02],r0-leaf01");
  assert_string_equal(hostlist_compress({"S-0008f1050020369c", "S-0002c90200417670"}).c_str(),
                      "S-0008f1050020369c,S-0002c90200417670");
  // Digits only: the prefix is empty, as in Slurm.
  assert_string_equal(hostlist_compress({"1", "2", "3"}).c_str(), "[1-3]");
  // A run of more than 18 digits is not a number (it would overflow): kept as a plain name.
  assert_string_equal(hostlist_compress({"x1234567890123456789", "x1234567890123456790"}).c_str(),
                      "x1234567890123456789,x1234567890123456790");
}

void compress_rejects(void **) {
  for (const char *bad : {"", "a,b", "n[1]", "a b", "x\ty"}) {
    bool thrown = false;
    try {
      hostlist_compress({"n1", bad});
    } catch (const std::invalid_argument &e) {
      thrown = true;
      if (*bad) assert_non_null(std::strstr(e.what(), bad));
    }
    if (!thrown) {
      print_error("compress accepted \"%s\"\n", bad);
      fail();
    }
  }
}

void expand_cases(void **) {
  expect_list(hostlist_expand(""), {}, "empty");
  expect_list(hostlist_expand("  \t"), {}, "blank");
  expect_list(hostlist_expand("n[001-003]"), {"n001", "n002", "n003"}, "padding");
  expect_list(hostlist_expand("n[9-10]"), {"n9", "n10"}, "9-10");          // scontrol
  expect_list(hostlist_expand("n[09-10]"), {"n09", "n10"}, "09-10");       // scontrol
  expect_list(hostlist_expand("n[01-3]"), {"n01", "n02", "n03"}, "01-3");  // scontrol
  expect_list(hostlist_expand("rack[1-2]n[1-3]"), {"rack1n1", "rack1n2", "rack1n3", "rack2n1", "rack2n2", "rack2n3"},
              "two groups");                                                      // scontrol
  expect_list(hostlist_expand("n[1-2][3-4]"), {"n13", "n14", "n23", "n24"}, "adjacent groups");  // scontrol
  expect_list(hostlist_expand("a[1-2]b[3-4],c"), {"a1b3", "a1b4", "a2b3", "a2b4", "c"}, "product + name");  // scontrol
  expect_list(hostlist_expand("a,b c\td"), {"a", "b", "c", "d"}, "separators");  // scontrol
  expect_list(hostlist_expand(" n1, n2 "), {"n1", "n2"}, "comma and blank");
  expect_list(hostlist_expand("[1-3]"), {"1", "2", "3"}, "no prefix");         // scontrol
  expect_list(hostlist_expand("n[1-]"), {"n1"}, "open range");                 // scontrol
  expect_list(hostlist_expand("n1-3"), {"n1-3"}, "dash outside brackets");     // scontrol
  expect_list(hostlist_expand("n[1,3-4,7],gpu[08-09],login"), {"n1", "n3", "n4", "n7", "gpu08", "gpu09", "login"},
              "several ranges");
  expect_list(hostlist_expand("n[1-2],n2"), {"n1", "n2", "n2"}, "duplicates are kept when expanding");
}

void expand_errors(void **) {
  expect_error("n[3-1]", "3-1");            // reversed
  expect_error("n[3-1]", "reversed");
  expect_error("n[1-3", "unbalanced \"[\"");
  expect_error("n1-3]", "unbalanced \"]\"");
  expect_error("n[1-2]]", "unbalanced \"]\"");
  expect_error("n[1-2]x", "\"x\"");         // text after the brackets (Slurm 22.05 rejects it too)
  expect_error("n[]", "empty brackets");
  expect_error("n[1,,2]", "empty range");
  expect_error("n1,,n2", "empty name");
  expect_error("n1,", "empty name");
  expect_error(",n1", "empty name");
  expect_error("n[a-b]", "a-b");
  expect_error("n[-3]", "-3");
  expect_error("n[1--3]", "1--3");
  expect_error("n[1[2]]", "nested");
  expect_error("n[99999999999999999999]", "too large");
  expect_error("n[0-99]", "too many hosts", 50);
  expect_error("n[0-30],m[0-30]", "too many hosts", 50);  // the guard counts the whole list
  expect_error("a[0-999999]b[0-999999]", "too many hosts");
  expect_list(hostlist_expand("n[0-49]", 50).size() == 50 ? V{"ok"} : V{}, {"ok"}, "exactly max_hosts");
}

// The names' total size is bounded, not only their count: a client's node list of a long prefix
// and a wide range (a 1 MB name times 131,072 is 128 GiB) fails before the names are made.
void expand_byte_cap(void **) {
  const std::string kib(1024, 'x');
  expect_error(kib + "[1-131072]", "take more than 67108864 bytes", 1u << 17);  // 128 MiB of names
  expect_list(hostlist_expand("n[1-9]", 50, 18), {"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"}, "exactly");
  expect_error("n[1-9]", "more than 17 bytes", 50, 17);
  expect_error("n[8-10]", "more than 6 bytes", 50, 6);  // n10 is 3 bytes: the exact size counts
  expect_error("aaaa,bbbb", "more than 7 bytes", 50, 7);
  expect_error("a[1-1000]b[1-1000]", "take more than 1048576 bytes", 1u << 20, 1u << 20);
  const std::string mib(1u << 20, 'y');
  try {
    hostlist_expand(mib + "[1-131072]", 1u << 17);
    fail_msg("a 1 MB name times 131072 was accepted");
  } catch (const std::invalid_argument &e) {
    assert_non_null(std::strstr(e.what(), "take more than"));
    assert_true(std::strlen(e.what()) < 1000);  // the list is quoted by its start only
  }
}

// Round trip on a mixed set: expand(compress(x)) is x sorted by prefix group and number.
void round_trip(void **) {
  V names;
  for (int i = 0; i < 300; ++i)
    if (i % 7 != 3) names.push_back("gpu" + std::string(i < 10 ? "00" : i < 100 ? "0" : "") + std::to_string(i));
  for (int i = 1; i <= 12; ++i) names.push_back("login" + std::to_string(i));
  names.push_back("mgmt");
  V want = names;
  std::reverse(names.begin(), names.end());  // compress sorts within a prefix
  std::string c = hostlist_compress(names);
  V got = hostlist_expand(c);
  // Prefix groups come out in order of first appearance: reversed input puts mgmt first.
  V expect;
  expect.push_back("mgmt");
  for (int i = 1; i <= 12; ++i) expect.push_back("login" + std::to_string(i));
  for (const auto &n : want)
    if (n.rfind("gpu", 0) == 0) expect.push_back(n);
  expect_list(got, expect, c.c_str());
  assert_string_equal(hostlist_compress(got).c_str(), c.c_str());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compress_cases), cmocka_unit_test(compress_rejects), cmocka_unit_test(expand_cases),
      cmocka_unit_test(expand_errors),  cmocka_unit_test(expand_byte_cap),  cmocka_unit_test(round_trip),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
