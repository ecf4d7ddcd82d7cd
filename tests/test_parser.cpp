// SPDX-License-Identifier: GPL-2.0-or-later
// Tests of the ibnetdiscover parser and the node-name map, on the recorded fabric dumps in
// tests/fixtures/ib/ (see tests/fixtures/PROVENANCE.md) and on the broken files in
// tests/fixtures/bad/. The expected counts were taken by reading the dumps (and cross-checked
// with grep/awk over the raw text), not from the parser's output.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "text.hpp"
#include "cmocka_cxx.hpp"
#include "ibnetdiscover_parser.hpp"
#include "node_name_map.hpp"

using namespace topoaware;

namespace {

std::string ib(const char *name) { return std::string(TEST_FIXTURES) + "/ib/" + name; }
std::string bad(const char *name) { return std::string(TEST_FIXTURES) + "/bad/" + name; }

Fabric parse_text(const std::string &text, DumpFormat format = DumpFormat::Auto) {
  std::istringstream in(text);
  return parse_ibnetdiscover(in, "inline.txt", format);
}

// Runs f, which must throw ParseError; checks the file and line it names and that what() is
// "<file>:<line>: ..." containing every word in `words` and the word "expected".
void expect_parse_error(const std::function<void()> &f, const std::string &file, int line,
                        std::initializer_list<const char *> words) {
  // The checks run after the handler: CMocka's failures longjmp, which must not leave a catch.
  std::string problem;
  try {
    f();
    problem = "no ParseError";
  } catch (const ParseError &e) {
    std::string what = e.what();
    std::string prefix = file + ":" + std::to_string(line) + ": ";
    if (what.compare(0, prefix.size(), prefix) != 0)
      problem = "message '" + what + "' does not start with '" + prefix + "'";
    else if (e.file != file || e.line != line) problem = "file/line members disagree with '" + what + "'";
    else if (what.find("expected") == std::string::npos)
      problem = "message '" + what + "' does not say what was expected";
    for (const char *w : words)
      if (problem.empty() && what.find(w) == std::string::npos) problem = "message '" + what + "' lacks '" + w + "'";
  }
  if (!problem.empty()) fail_msg("%s:%d: %s", file.c_str(), line, problem.c_str());
}

void expect_text_error(const std::string &text, int line, std::initializer_list<const char *> words,
                       DumpFormat format = DumpFormat::Auto) {
  expect_parse_error([&] { parse_text(text, format); }, "inline.txt", line, words);
}

struct Counts {
  int switches = 0, cas = 0, routers = 0;
  int ends = 0;   // connected ports over all nodes
  int links = 0;  // each cable once
};

Counts count(const Fabric &f) {
  Counts c;
  for (const auto &n : f.nodes) {
    if (n.type == NodeType::Switch) ++c.switches;
    else if (n.type == NodeType::Ca) ++c.cas;
    else ++c.routers;
    for (const auto &p : n.ports) {
      ++c.ends;
      if (std::make_pair(n.guid, p.num) < std::make_pair(p.remote_guid, p.remote_port)) ++c.links;
    }
  }
  return c;
}

const FabricNode *by_guid(const Fabric &f, uint64_t guid) {
  const FabricNode *n = f.find(guid);
  if (!n) fail_msg("no node %s", guid_str(guid).c_str());
  return n;
}

const FabricNode *by_desc(const Fabric &f, const std::string &desc) {
  for (const auto &n : f.nodes)
    if (n.desc == desc) return &n;
  fail_msg("no node described '%s'", desc.c_str());
  return nullptr;
}

const Port *port(const FabricNode *n, int num) {
  for (const auto &p : n->ports)
    if (p.num == num) return &p;
  fail_msg("%s has no connected port %d", guid_str(n->guid).c_str(), num);
  return nullptr;
}

void check_port(const Port *p, uint64_t port_guid, uint64_t remote, int remote_port, int width, LinkSpeed speed) {
  assert_true(p->port_guid == port_guid);
  assert_true(p->remote_guid == remote);
  assert_int_equal(p->remote_port, remote_port);
  assert_int_equal(p->width, width);
  assert_int_equal(static_cast<int>(p->speed), static_cast<int>(speed));
}

// Every link must be listed from both ends with the same peer (the two ends agree).
void check_symmetric(const Fabric &f) {
  for (const auto &n : f.nodes)
    for (const auto &p : n.ports) {
      const FabricNode *peer = by_guid(f, p.remote_guid);
      const Port *back = port(peer, p.remote_port);
      assert_true(back->remote_guid == n.guid);
      assert_int_equal(back->remote_port, p.num);
    }
}

// Distinct switches (by description) and distinct CAs a switch is cabled to.
std::set<std::string> switch_neighbours(const Fabric &f, const FabricNode *sw) {
  std::set<std::string> out;
  for (const auto &p : sw->ports) {
    const FabricNode *peer = by_guid(f, p.remote_guid);
    if (peer->type == NodeType::Switch && peer != sw) out.insert(peer->desc);
  }
  return out;
}
std::set<uint64_t> host_neighbours(const Fabric &f, const FabricNode *sw) {
  std::set<uint64_t> out;
  for (const auto &p : sw->ports)
    if (by_guid(f, p.remote_guid)->type == NodeType::Ca) out.insert(p.remote_guid);
  return out;
}

int speed_ends(const Fabric &f, LinkSpeed s) {
  int n = 0;
  for (const auto &node : f.nodes)
    for (const auto &p : node.ports) n += p.speed == s;
  return n;
}

// ------------------------------------------------------------------ every fixture parses

struct Expect {
  const char *file;
  int switches, cas, ends, links, problems;
};

// Counted from the files: Switch/Ca lines for the default format, distinct GUIDs per type for
// the ports format; ends = port lines (default format: every link is printed from both ends);
// links = ends / 2 where the ends agree (exporter-test2: 3 cables claimed by 5 ends, one of them
// from one end only). Problems: ibtopotool-3 starts with a libibnetdisc
// timeout message (a partial walk); exporter-test2 lists the Aggregation Node's port 1 as cabled
// to port 81 of two different switches (lines 1 and 5).
const Expect kFixtures[] = {
    {"loginoff-2014-qdr-fdr.ibnetdiscover", 8, 144, 384, 192, 0},
    {"x5-2020-qdr.ibnetdiscover", 11, 89, 318, 159, 0},
    {"ibtopotool-1.ibnetdiscover", 2, 4, 14, 7, 0},
    {"ibtopotool-2.ibnetdiscover", 1, 2, 4, 2, 0},
    {"ibtopotool-3.ibnetdiscover", 2, 6, 20, 10, 1},
    {"ibtopotool-4.ibnetdiscover", 1, 1, 2, 1, 0},
    {"exporter-test.ibnetdiscover-p", 4, 3, 8, 4, 0},
    {"exporter-test2.ibnetdiscover-p", 5, 2, 5, 3, 1},
    {"exporter-test3.ibnetdiscover-p", 1, 0, 0, 0, 0},
};

void test_all_fixtures_parse(void **) {
  for (const auto &x : kFixtures) {
    Fabric f = parse_ibnetdiscover_file(ib(x.file));
    Counts c = count(f);
    if (c.switches != x.switches || c.cas != x.cas || c.ends != x.ends || c.links != x.links ||
        static_cast<int>(f.problems.size()) != x.problems)
      fail_msg("%s: switches %d cas %d ends %d links %d problems %zu; expected %d %d %d %d %d", x.file, c.switches,
               c.cas, c.ends, c.links, f.problems.size(), x.switches, x.cas, x.ends, x.links, x.problems);
    assert_int_equal(c.routers, 0);
    assert_int_equal(f.sources.size(), 1);
    assert_string_equal(f.sources[0].c_str(), ib(x.file).c_str());
    if (x.problems == 0) check_symmetric(f);
  }
}

// ------------------------------------------------------------------ the 2014 QDR/FDR10 fabric

void test_loginoff_structure(void **) {
  Fabric f = parse_ibnetdiscover_file(ib("loginoff-2014-qdr-fdr.ibnetdiscover"));
  const char *leaves[] = {"MF0;ib1:SX6036/U1", "MF0;ib2:SX6036/U1", "MF0;ib3:SX6036/U1",
                          "MF0;ib4:SX6036/U1", "MF0;ib5:SX6036/U1", "MF0;ib6:SX6036/U1"};
  // Distinct hosts per leaf, counted from the switch blocks.
  const size_t hosts[] = {24, 24, 24, 24, 24, 22};
  // Uplink cables per leaf (ib1 has one fewer: 4 to ib7, 3 to ib8).
  const size_t uplinks[] = {7, 8, 8, 8, 8, 8};
  std::set<std::string> leafset(std::begin(leaves), std::end(leaves));
  for (int i = 0; i < 6; ++i) {
    const FabricNode *leaf = by_desc(f, leaves[i]);
    assert_int_equal(leaf->type, NodeType::Switch);
    assert_int_equal(leaf->nports, 36);
    assert_int_equal(host_neighbours(f, leaf).size(), hosts[i]);
    assert_int_equal(leaf->ports.size(), hosts[i] + uplinks[i]);
    std::set<std::string> up = switch_neighbours(f, leaf);
    assert_int_equal(up.size(), 2);
    assert_true(up.count("MF0;ib7:SX6036/U1") && up.count("MF0;ib8:SX6036/U1"));
  }
  const FabricNode *ib7 = by_desc(f, "MF0;ib7:SX6036/U1");
  const FabricNode *ib8 = by_desc(f, "MF0;ib8:SX6036/U1");
  assert_true(switch_neighbours(f, ib7) == leafset);
  assert_true(switch_neighbours(f, ib8) == leafset);
  assert_int_equal(host_neighbours(f, ib8).size(), 0);
  std::set<std::string> ib7hosts;
  for (uint64_t g : host_neighbours(f, ib7)) ib7hosts.insert(by_guid(f, g)->desc);
  assert_true(ib7hosts == (std::set<std::string>{"tank1 mlx4_0", "tank2 mlx4_0"}));
  assert_int_equal(ib7->ports.size(), 3 + 24);  // tank1 is cabled twice
  assert_int_equal(ib8->ports.size(), 23);
  // 145 host cables at QDR, 47 switch-to-switch cables at FDR10, both ends each.
  assert_int_equal(speed_ends(f, LinkSpeed::QDR), 290);
  assert_int_equal(speed_ends(f, LinkSpeed::FDR10), 94);
}

void test_loginoff_ports(void **) {
  Fabric f = parse_ibnetdiscover_file(ib("loginoff-2014-qdr-fdr.ibnetdiscover"));
  const FabricNode *ib5 = by_guid(f, 0xf4521403001165a0ULL);
  assert_string_equal(ib5->desc.c_str(), "MF0;ib5:SX6036/U1");
  // [1] "H-24be05ffff980030"[1](24be05ffff980031) # "stage114 mlx4_0" lid 105 4xQDR
  // A switch port carries the switch's port-0 GUID (switchguid=...(f4521403001165a0)).
  check_port(port(ib5, 1), 0xf4521403001165a0ULL, 0x24be05ffff980030ULL, 1, 4, LinkSpeed::QDR);
  // [21] "S-f4521403007ea570"[26] # "MF0;ib8:SX6036/U1" lid 1 4xFDR10
  check_port(port(ib5, 21), 0xf4521403001165a0ULL, 0xf4521403007ea570ULL, 26, 4, LinkSpeed::FDR10);
  const FabricNode *stage114 = by_guid(f, 0x24be05ffff980030ULL);
  assert_int_equal(stage114->type, NodeType::Ca);
  assert_string_equal(stage114->desc.c_str(), "stage114 mlx4_0");
  assert_int_equal(stage114->nports, 2);
  assert_int_equal(stage114->ports.size(), 1);
  check_port(port(stage114, 1), 0x24be05ffff980031ULL, 0xf4521403001165a0ULL, 1, 4, LinkSpeed::QDR);
  // tank1: both ports cabled to ib7, ports 12 and 9; port GUIDs ...21 and ...22.
  const FabricNode *tank1 = by_desc(f, "tank1 mlx4_0");
  assert_int_equal(tank1->ports.size(), 2);
  check_port(port(tank1, 1), 0xf452140300081a21ULL, 0xf4521403007eaa70ULL, 12, 4, LinkSpeed::QDR);
  check_port(port(tank1, 2), 0xf452140300081a22ULL, 0xf4521403007eaa70ULL, 9, 4, LinkSpeed::QDR);
}

// ------------------------------------------------------------------ other fixtures

void test_x5(void **) {
  Fabric f = parse_ibnetdiscover_file(ib("x5-2020-qdr.ibnetdiscover"));
  // A description with '#' in it: "Voltaire 4036 # 4036-8C5C".
  const FabricNode *sw = by_guid(f, 0x0008f10500108c5cULL);
  assert_string_equal(sw->desc.c_str(), "Voltaire 4036 # 4036-8C5C");
  const FabricNode *first = by_guid(f, 0x0008f10500200b50ULL);
  assert_string_equal(first->desc.c_str(), "Voltaire 4036 - 36 QDR ports switch");
  // [4] "H-003048c749cd0000"[1](3048c749cd0001) # "MT25408 ConnectX ..." lid 72 4xDDR
  check_port(port(first, 4), 0x0008f10500200b50ULL, 0x003048c749cd0000ULL, 1, 4, LinkSpeed::DDR);
  check_port(port(first, 1), 0x0008f10500200b50ULL, 0x0008f10500108c5cULL, 15, 4, LinkSpeed::QDR);
  assert_int_equal(speed_ends(f, LinkSpeed::DDR), 46);
  assert_int_equal(speed_ends(f, LinkSpeed::QDR), 272);
  int connectx = 0;
  for (const auto &n : f.nodes) connectx += n.desc.rfind("MT25408 ConnectX", 0) == 0;
  assert_int_equal(connectx, 89);
}

void test_ibtopotool_variants(void **) {
  // 2007: "Non-Chassis Nodes", "# Max of 3 hops", 1x links, a CA with two cabled ports.
  Fabric f1 = parse_ibnetdiscover_file(ib("ibtopotool-1.ibnetdiscover"));
  const FabricNode *sw6ib4 = by_guid(f1, 0x0008f10400410015ULL);
  assert_string_equal(sw6ib4->desc.c_str(), "SW-6IB4 Voltaire");
  assert_int_equal(sw6ib4->nports, 8);
  check_port(port(sw6ib4, 1), 0x0008f10400410015ULL, 0x005442ba00003080ULL, 10, 1, LinkSpeed::SDR);
  const FabricNode *hca = by_guid(f1, 0x0008f10403960558ULL);
  check_port(port(hca, 1), 0x0008f10403960559ULL, 0x005442ba00003080ULL, 12, 1, LinkSpeed::SDR);
  check_port(port(hca, 2), 0x0008f1040396055aULL, 0x005442ba00003080ULL, 8, 4, LinkSpeed::SDR);

  // 2016 EDR/FDR with a libibnetdisc timeout on line 1, and cables looped on one switch.
  Fabric f3 = parse_ibnetdiscover_file(ib("ibtopotool-3.ibnetdiscover"));
  assert_int_equal(f3.problems.size(), 1);
  assert_true(f3.problems[0].what.find("ibtopotool-3.ibnetdiscover:1:") != std::string::npos);
  assert_true(f3.problems[0].what.find("Connection timed out") != std::string::npos);
  const FabricNode *sib = by_guid(f3, 0xe41d2d030003e470ULL);
  check_port(port(sib, 1), 0xe41d2d030003e470ULL, 0xe41d2d030003e470ULL, 2, 4, LinkSpeed::EDR);
  check_port(port(sib, 3), 0xe41d2d030003e470ULL, 0xf4521403005764b0ULL, 1, 4, LinkSpeed::FDR);
  check_port(port(sib, 34), 0xe41d2d030003e470ULL, 0xe41d2d030061f957ULL, 1, 4, LinkSpeed::EDR);
  const FabricNode *ufm216 = by_desc(f3, "r-ufm216 HCA-2");
  assert_int_equal(ufm216->nports, 1);
  check_port(port(ufm216, 1), 0xe41d2d030061f957ULL, 0xe41d2d030003e470ULL, 34, 4, LinkSpeed::EDR);
  const FabricNode *sx6012 = by_guid(f3, 0xf4521403005764b0ULL);
  check_port(port(sx6012, 8), 0xf4521403005764b0ULL, 0xe41d2d03005cf1f8ULL, 1, 4, LinkSpeed::SDR);

  // A line holding a single space between blocks.
  Fabric f4 = parse_ibnetdiscover_file(ib("ibtopotool-4.ibnetdiscover"));
  assert_string_equal(by_guid(f4, 0x0021283a8389a0a0ULL)->desc.c_str(), "Sun DCS 36 QDR switch localhost");
}

void test_ports_format(void **) {
  Fabric f = parse_ibnetdiscover_file(ib("exporter-test.ibnetdiscover-p"));
  // CAs are keyed by the port GUID printed (the ports report has no node GUIDs).
  const FabricNode *o1 = by_guid(f, 0x7cfe9003003b4bdeULL);
  assert_int_equal(o1->type, NodeType::Ca);
  assert_string_equal(o1->desc.c_str(), "o0001 HCA-1");
  check_port(port(o1, 1), 0x7cfe9003003b4bdeULL, 0x7cfe9003009ce5b0ULL, 10, 4, LinkSpeed::EDR);
  const FabricNode *s01 = by_guid(f, 0x7cfe9003009ce5b0ULL);
  assert_string_equal(s01->desc.c_str(), "ib-i1l1s01");
  check_port(port(s01, 11), 0x7cfe9003009ce5b0ULL, 0x7cfe9003003b4b96ULL, 1, 4, LinkSpeed::EDR);
  // Seen only as the far end of line 6: created from that line, its port filled in.
  const FabricNode *l2 = by_guid(f, 0x7cfe900300b07320ULL);
  assert_int_equal(l2->type, NodeType::Switch);
  assert_string_equal(l2->desc.c_str(), "ib-i1l2s01");
  check_port(port(l2, 1), 0x7cfe900300b07320ULL, 0x7cfe9003009ce5b0ULL, 1, 4, LinkSpeed::EDR);
  // Unconnected ports ("4x ???", "4x SDR" with no peer): the node exists with no links.
  const FabricNode *i4 = by_guid(f, 0x506b4b03005c2740ULL);
  assert_int_equal(i4->ports.size(), 1);
  assert_int_equal(i4->nports, 37);
  const FabricNode *i7 = by_guid(f, 0x08c0eb0300add20eULL);
  assert_string_equal(i7->desc.c_str(), "ib-i7l2s01");
  assert_int_equal(i7->ports.size(), 0);
  assert_int_equal(i7->nports, 80);

  Fabric f2 = parse_ibnetdiscover_file(ib("exporter-test2.ibnetdiscover-p"));
  const FabricNode *sharp = by_guid(f2, 0x946dae0300630bfeULL);
  assert_string_equal(sharp->desc.c_str(), "Mellanox Technologies Aggregation Node");
  check_port(port(sharp, 1), 0x946dae0300630bfeULL, 0x946dae0300630bf6ULL, 81, 4, LinkSpeed::HDR);
  // Descriptions are kept exactly as quoted, blanks included.
  assert_string_equal(by_guid(f2, 0x946dae0300630bf6ULL)->desc.c_str(), "5FB0405-leaf-IB01 ");
  assert_string_equal(by_guid(f2, 0x946dae0300618c83ULL)->desc.c_str(), " 5FB0406-spine-IB02 ");
  // The two ends disagree: kept as a problem naming the lines, never silently resolved.
  assert_int_equal(f2.problems.size(), 1);
  const std::string &what = f2.problems[0].what;
  assert_true(what.find("exporter-test2.ibnetdiscover-p:5:") != std::string::npos);
  assert_true(what.find("line 1") != std::string::npos);
  assert_true(what.find("disagree") != std::string::npos);

  // An unconnected port with its description unquoted.
  Fabric f3 = parse_ibnetdiscover_file(ib("exporter-test3.ibnetdiscover-p"));
  assert_string_equal(by_guid(f3, 0x0002c9020040f161ULL)->desc.c_str(), "Infiniscale-IV Mellanox Technologies");
  assert_int_equal(f3.nodes[0].nports, 22);
}

// ------------------------------------------------------------------ variants written inline

// A two-node dump in the default format with a given width/speed token on both ends.
std::string pair_dump(const std::string &ws, const std::string &extra = "") {
  return "vendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0xb83fd20300da1100\nswitchguid=0xb83fd20300da1100(b83fd20300da1100)\n"
         "Switch\t64 \"S-b83fd20300da1100\"\t\t# \"leaf01\" enhanced port 0 lid 1 lmc 0\n"
         "[7]\t\"H-b83fd20300da1138\"[1](b83fd20300da1139) \t\t# \"gpu001 mlx5_0\" lid 2 " + ws + extra + "\n"
         "\nvendid=0x2c9\ndevid=0x101b\nsysimgguid=0xb83fd20300da1138\ncaguid=0xb83fd20300da1138\n"
         "Ca\t1 \"H-b83fd20300da1138\"\t\t# \"gpu001 mlx5_0\"\n"
         "[1](b83fd20300da1139) \t\"S-b83fd20300da1100\"[7]\t\t# lid 2 lmc 0 \"leaf01\" lid 1 " + ws + "\n";
}

void test_widths_and_speeds(void **) {
  struct {
    const char *token;
    int width;
    LinkSpeed speed;
  } cases[] = {
      {"4xNDR", 4, LinkSpeed::NDR},   {"4xXDR", 4, LinkSpeed::XDR},     {"4xHDR", 4, LinkSpeed::HDR},
      {"2xNDR", 2, LinkSpeed::NDR},   {"1xSDR", 1, LinkSpeed::SDR},     {"8xQDR", 8, LinkSpeed::QDR},
      {"12xEDR", 12, LinkSpeed::EDR}, {"4xFDR10", 4, LinkSpeed::FDR10}, {"4xFDR", 4, LinkSpeed::FDR},
      {"4x???", 4, LinkSpeed::Unknown}, {"?????", 0, LinkSpeed::Unknown}, {"??DDR", 0, LinkSpeed::DDR},
  };
  for (const auto &c : cases) {
    Fabric f = parse_text(pair_dump(c.token));
    const FabricNode *ca = by_guid(f, 0xb83fd20300da1138ULL);
    check_port(port(ca, 1), 0xb83fd20300da1139ULL, 0xb83fd20300da1100ULL, 7, c.width, c.speed);
    const FabricNode *sw = by_guid(f, 0xb83fd20300da1100ULL);
    check_port(port(sw, 7), 0xb83fd20300da1100ULL, 0xb83fd20300da1138ULL, 1, c.width, c.speed);
  }
  // What -f and Xsigo add after the speed.
  parse_text(pair_dump("4xNDR", " s=4 w=2 v=4"));
  parse_text(pair_dump("4xNDR", " slot 3"));
  parse_text(pair_dump("4xNDR", " (scp)"));
  expect_text_error(pair_dump("4xGDR"), 6, {"link width and speed", "4xGDR"});
  expect_text_error(pair_dump("4x"), 6, {"link width and speed"});
  expect_text_error(pair_dump("3xQDR"), 6, {"link width and speed"});
  expect_text_error(pair_dump("4xNDR", " bogus"), 6, {"end of the port line", "bogus"});
}

void test_tolerated_layout(void **) {
  // CRLF line ends, trailing blanks, comments and blank lines anywhere.
  std::string text = pair_dump("4xHDR");
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("  \r\n") : std::string(1, c);
  Fabric f = parse_text("# saved on the login node\r\n\r\n" + crlf);
  assert_int_equal(count(f).links, 1);
  assert_string_equal(by_guid(f, 0xb83fd20300da1138ULL)->desc.c_str(), "gpu001 mlx5_0");
  // No final newline.
  std::string cut = text.substr(0, text.size() - 1);
  assert_int_equal(count(parse_text(cut)).links, 1);
}

void test_grouping_and_routers(void **) {
  // ibnetdiscover -g: chassis sections, "[ext N]" port mappings, comments after switchguid and
  // sysimgguid; a router (Rt) cabled to the switch and a CA cabled directly to the router.
  const std::string text =
      "#\n# Topology file: generated on Tue Jun  5 14:15:10 2007\n#\n# Reported max hops discovered: 1\n"
      "# Total MADs used: 12\n# Initiated from node 0008f10403960558 port 0008f10403960559\n"
      "\nChassis 1 (guid 0x8f104004121f9)\n\n# Spine Nodes\n\n# Line Nodes\n"
      "\nvendid=0x8f1\ndevid=0x5a31\nsysimgguid=0x8f104004121f9\t\t# Chassis 1 (ISR9288) \n"
      "switchguid=0x8f10400411f56(8f10400411f56)\t# ISR9288/ISR9096 Voltaire sLB-24D 2\n"
      "Switch\t24 \"S-0008f10400411f56\"\t\t# \"ISR9288/ISR9096 Voltaire sLB-24D\" base port 0 lid 6 lmc 0\n"
      "[1][ext 3]\t\"R-0008f10403960600\"[2]\t\t# \"gateway rt0\" lid 9 4xDDR\n"
      "\n# Chassis Switches\n\n# Chassis CAs\n\nNon-Chassis Nodes\n"
      "\nvendid=0x8f1\ndevid=0x5a60\nsysimgguid=0x8f10403960603\nrtguid=0x8f10403960600\n"
      "Rt\t2 \"R-0008f10403960600\"\t\t# \"gateway rt0\"\n"
      "[2](8f10403960602) \t\"S-0008f10400411f56\"[1][ext 3]\t\t# lid 9 lmc 0 \"ISR9288/ISR9096 Voltaire sLB-24D\" "
      "lid 6 4xDDR\n"
      "[1](8f10403960601) \t\"H-0008f10403960558\"[1] (8f10403960559) \t\t# lid 8 lmc 0 \"node7 HCA-1\" lid 7 4xDDR\n"
      "\nvendid=0x2c9\ndevid=0x5a44\ncaguid=0x8f10403960558\n"
      "Ca\t2 \"H-0008f10403960558\"\t\t# \"node7 HCA-1\"\n"
      "[1](8f10403960559) \t\"R-0008f10403960600\"[1] (8f10403960601) \t\t# lid 7 lmc 0 \"gateway rt0\" lid 8 4xDDR\n";
  Fabric f = parse_text(text);
  Counts c = count(f);
  assert_int_equal(c.switches, 1);
  assert_int_equal(c.routers, 1);
  assert_int_equal(c.cas, 1);
  assert_int_equal(c.links, 2);
  check_symmetric(f);
  const FabricNode *rt = by_guid(f, 0x0008f10403960600ULL);
  assert_int_equal(rt->type, NodeType::Router);
  check_port(port(rt, 2), 0x0008f10403960602ULL, 0x0008f10400411f56ULL, 1, 4, LinkSpeed::DDR);
  check_port(port(rt, 1), 0x0008f10403960601ULL, 0x0008f10403960558ULL, 1, 4, LinkSpeed::DDR);
  const FabricNode *sw = by_guid(f, 0x0008f10400411f56ULL);
  // The router's port GUID, learnt from both sides, agrees.
  check_port(port(sw, 1), 0x0008f10400411f56ULL, 0x0008f10403960600ULL, 2, 4, LinkSpeed::DDR);
  assert_true(f.problems.empty());
}

void test_ports_format_inline(void **) {
  // A router, a 2x link, widths and speeds unknown, and a forced format.
  const std::string text =
      "RT     9  2 0x0008f10403960602 2x NDR - SW     1  5 0xb83fd20300da1100 ( 'gw rt0' - 'leaf01' )\n"
      "SW     1  5 0xb83fd20300da1100 2x NDR - RT     9  2 0x0008f10403960602 ( 'leaf01' - 'gw rt0' )\n"
      "SW     1  6 0xb83fd20300da1100 ?? ???                                    'leaf01'\n";
  Fabric f = parse_text(text, DumpFormat::Ports);
  const FabricNode *rt = by_guid(f, 0x0008f10403960602ULL);
  assert_int_equal(rt->type, NodeType::Router);
  check_port(port(rt, 2), 0x0008f10403960602ULL, 0xb83fd20300da1100ULL, 5, 2, LinkSpeed::NDR);
  assert_int_equal(by_guid(f, 0xb83fd20300da1100ULL)->nports, 6);
  assert_true(f.problems.empty());
  // A port listed as unconnected by one end and cabled by the other: kept as a problem.
  Fabric u = parse_text("SW     1  5 0xb83fd20300da1100 4x EDR                                    'leaf01'\n"
                        "CA     2  1 0xb83fd20300da1139 4x EDR - SW     1  5 0xb83fd20300da1100 ( 'h1' - 'leaf01' )\n");
  assert_int_equal(u.problems.size(), 1);
  assert_true(u.problems[0].what.find("inline.txt:2:") == 0);
  assert_true(u.problems[0].what.find("line 1 lists that port as unconnected") != std::string::npos);
  // Descriptions that differ for one GUID: kept as a problem too.
  Fabric dd = parse_text("CA     2  1 0xb83fd20300da1139 4x EDR - SW     1  5 0xb83fd20300da1100 ( 'h1' - 'leaf01' )\n"
                         "SW     1  6 0xb83fd20300da1100 4x EDR                                    'leaf02'\n");
  assert_int_equal(dd.problems.size(), 1);
  assert_true(dd.problems[0].what.find("'leaf02' but as 'leaf01' at line 1") != std::string::npos);
  // Each format refuses the other when forced.
  expect_text_error(text, 1, {"unrecognised line"}, DumpFormat::Default);
  expect_text_error(pair_dump("4xHDR"), 1, {"node type"}, DumpFormat::Ports);
}

// ------------------------------------------------------------------ bad input

void test_bad_files(void **) {
  expect_parse_error([] { parse_ibnetdiscover_file(bad("truncated-port-line.ibnetdiscover")); },
                     bad("truncated-port-line.ibnetdiscover"), 11, {"GUID", "end of the line", "truncated"});
  expect_parse_error([] { parse_ibnetdiscover_file(bad("truncated-after-ids.ibnetdiscover")); },
                     bad("truncated-after-ids.ibnetdiscover"), 12, {"truncated"});
  expect_parse_error([] { parse_ibnetdiscover_file(bad("missing-ca-block.ibnetdiscover")); },
                     bad("missing-ca-block.ibnetdiscover"), 10, {"H-24be05ffff980030", "no block", "truncated"});
  expect_parse_error([] { parse_ibnetdiscover_file(bad("port-outside-node.ibnetdiscover")); },
                     bad("port-outside-node.ibnetdiscover"), 4, {"outside any node"});
  expect_parse_error([] { parse_ibnetdiscover_file(bad("port-number-too-large.ibnetdiscover")); },
                     bad("port-number-too-large.ibnetdiscover"), 5, {"port number from 1 to 255", "300"});
  expect_parse_error([] { parse_ibnetdiscover_file(bad("no-nodes.ibnetdiscover")); },
                     bad("no-nodes.ibnetdiscover"), 5, {"no nodes"});
  expect_parse_error([] { parse_ibnetdiscover_file(bad("truncated.ibnetdiscover-p")); },
                     bad("truncated.ibnetdiscover-p"), 2, {"closed by ')'"});
  // Not a dump at all: the topology.conf beside the X5 dump, and its node-name map.
  expect_parse_error([] { parse_ibnetdiscover_file(ib("x5-2020-qdr.expected-topology.conf")); },
                     ib("x5-2020-qdr.expected-topology.conf"), 2, {"unrecognised line", "SwitchName"});
  expect_parse_error([] { parse_ibnetdiscover_file(ib("x5-2020-qdr.node-name-map")); },
                     ib("x5-2020-qdr.node-name-map"), 2, {"unrecognised line", "H-003048c74e4a0000"});
  expect_parse_error([] { parse_ibnetdiscover_file("/nonexistent/fabric.txt"); }, "/nonexistent/fabric.txt", 0,
                     {"cannot open", "No such file"});
  expect_parse_error([] { parse_ibnetdiscover_file(TEST_FIXTURES); }, TEST_FIXTURES, 0, {"directory"});
}

void test_bad_inline(void **) {
  const std::string sw = "switchguid=0xb83fd20300da1100(b83fd20300da1100)\n"
                         "Switch\t64 \"S-b83fd20300da1100\"\t\t# \"leaf01\" enhanced port 0 lid 1 lmc 0\n";
  const std::string ca = "caguid=0xb83fd20300da1138\nCa\t1 \"H-b83fd20300da1138\"\t\t# \"gpu001 mlx5_0\"\n"
                         "[1](b83fd20300da1139) \t\"S-b83fd20300da1100\"[7]\t\t# lid 2 lmc 0 \"leaf01\" lid 1 4xNDR\n";
  const std::string p7 = "[7]\t\"H-b83fd20300da1138\"[1](b83fd20300da1139) \t\t# \"gpu001 mlx5_0\" lid 2 4xNDR\n";
  assert_int_equal(count(parse_text(sw + p7 + ca)).links, 1);  // the base case is good

  expect_text_error("", 1, {"no nodes"});
  expect_text_error("\n\n# only a comment\n", 3, {"no nodes"});
  expect_text_error("ibwarn: [1234] mad_rpc_open_port: can't open UMAD port ((null):0)\n", 1,
                    {"no nodes", "can't open UMAD port"});
  expect_text_error("hello world\n", 1, {"unrecognised line", "hello world"});
  expect_text_error(sw + "[0]\t\"H-b83fd20300da1138\"[1] # \"x\" lid 2 4xNDR\n", 3, {"port number"});
  expect_text_error(sw + "[65]\t\"H-b83fd20300da1138\"[1] # \"x\" lid 2 4xNDR\n", 3, {"has 64 ports", "1 to 64"});
  expect_text_error(sw + p7 + p7 + ca, 4, {"port 7", "second time", "line 3"});
  expect_text_error(sw + p7 + ca + sw, 8, {"S-b83fd20300da1100", "second time", "line 2"});
  expect_text_error(sw + "[7]\t\"H-b83fd20300da1138\"[300] # \"x\" lid 2 4xNDR\n", 3, {"remote port"});
  expect_text_error(sw + "[7]\t\"X-b83fd20300da1138\"[1] # \"x\" lid 2 4xNDR\n", 3, {"S-, H- or R-"});
  expect_text_error(sw + "[7]\t\"H-b83fd20300da11380\"[1] # \"x\" lid 2 4xNDR\n", 3, {"16 hex digits"});
  expect_text_error(sw + "[7]\t\"H-b83fd20300da1138\"[1] # \"gpu001 mlx5_0 lid 2 4xNDR\n", 3, {"no closing quote"});
  expect_text_error(sw + "[7]\t\"H-b83fd20300da1138\"[1](b83fd20300da1139)\n" + ca, 3, {"truncated"});
  expect_text_error(sw + "[7]\t\"H-b83fd20300da1138\"[1] # \"x\" lid 70000 4xNDR\n", 3, {"remote LID"});
  // The CA's own line says it leads to switch port 9, which the switch block does not list.
  std::string ca9 = ca;
  ca9.replace(ca9.find("[7]"), 3, "[9]");
  expect_text_error(sw + p7 + ca9, 6, {"port 9", "does not list", "both ends"});
  // A switch port naming the CA as a switch.
  expect_text_error(sw + "[7]\t\"S-b83fd20300da1138\"[1] # \"gpu001 mlx5_0\" lid 2 4xNDR\n" + ca, 3,
                    {"is a CA", "H-b83fd20300da1138"});
  expect_text_error("switchguid=0xb83fd20300da1101(b83fd20300da1101)\n" + sw.substr(sw.find("Switch")), 2,
                    {"differs", "line 1"});
  expect_text_error("caguid=0xb83fd20300da1101\n" + sw.substr(sw.find("Switch")), 2, {"caguid"});
  expect_text_error("switchguid=0xzz\n", 1, {"hexadecimal"});
  expect_text_error("Switch\t0 \"S-b83fd20300da1100\" # \"leaf01\" enhanced port 0 lid 1 lmc 0\n", 1,
                    {"number of ports"});
  expect_text_error("Switch\t64 \"H-b83fd20300da1100\" # \"leaf01\" enhanced port 0 lid 1 lmc 0\n", 1,
                    {"start with S-"});
  expect_text_error("Switch\t64 \"S-b83fd20300da1100\" # \"leaf01\"\n", 1, {"enhanced port 0"});
  expect_text_error("Switch\t64 \"S-b83fd20300da1100\" \"leaf01\" enhanced port 0 lid 1 lmc 0\n", 1, {"'#"});
  expect_text_error("Switches here\n", 1, {"unrecognised line"});
  expect_text_error("devid=0x1003\ncaguid=0xb83fd20300da1138\n" + p7, 3, {"identification lines"});
  expect_text_error("Chassis x\n", 1, {"chassis number"});
  expect_text_error(sw + std::string(5000, 'a') + "\n", 3, {"longer than 4096"});
  expect_text_error(sw + "[7]\t\"H-b83fd\0020300da1138\"\n", 3, {"control character 0x02"});
  expect_text_error(std::string("\x7f" "ELF\x02\x01\x01", 7), 1, {"control character"});

  // Ports format.
  const std::string good = "CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0 ( 'o1' - 's1' )\n";
  assert_int_equal(count(parse_text(good)).links, 1);
  expect_text_error(good + "CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 12 0x7cfe9003009ce5b0 ( 'o1' - 's1' )\n",
                    2, {"port 1", "second time", "line 1"});
  expect_text_error(good + "SW   134  3 0x7cfe9003003b4bde 4x EDR                                    'o1'\n", 2,
                    {"is a switch here but a CA", "line 1"});
  expect_text_error(good + "CA   134  1 0x7cfe9003003b4bde 4x ZDR - SW  1719 12 0x7cfe9003009ce5b0 ( 'o1' - 's1' )\n",
                    2, {"link speed", "ZDR"});
  expect_text_error(good + "CA   134  1 0x7cfe9003003b4bde 5x EDR - SW  1719 12 0x7cfe9003009ce5b0 ( 'o1' - 's1' )\n",
                    2, {"link width", "5x"});
  expect_text_error(good + "CA   134  0 0x7cfe9003003b4bde 4x EDR - SW  1719 12 0x7cfe9003009ce5b0 ( 'o1' - 's1' )\n",
                    2, {"local port number"});
  expect_text_error(good + "CA   134  2 0x7cfe9003003b4bde 4x EDR - ?? 1719 12 0x7cfe9003009ce5b0 ( 'o1' - 's1' )\n",
                    2, {"unknown type"});
  expect_text_error(good + "CA   134  2 0x7cfe9003003b4bde 4x EDR - SW 1719 12 0x7cfe9003009ce5b0 'o1' - 's1'\n", 2,
                    {"( '<description>' - '<remote description>' )"});
  expect_text_error(good + "CA   134  2 0x7cfe9003003b4bde 4x EDR\n", 2, {"truncated"});
  expect_text_error(good + "CA   134  2 0x7cfe9003003b4bde 4x EDR - SW 1719 12 0x7cfe9003009ce5b0 ( ' - ' )\n", 2,
                    {"( '<description>' - '<remote description>' )"});
  expect_text_error(good + "CA   134  2 0x7cfe9003003b4bde 4x EDR   'o1\n", 2, {"closed by a quote"});
  expect_text_error(good + "Switch\t64 \"S-b83fd20300da1100\" # \"leaf01\" enhanced port 0 lid 1 lmc 0\n", 2,
                    {"node type CA, SW or RT"});
}

// ------------------------------------------------------------------ node-name map

// A scratch folder for map files, removed at the end of each test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/test_parser.XXXXXX";
    const char *p = mkdtemp(tmpl);
    if (!p) fail_msg("mkdtemp failed");
    path = p;
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) {
    }
  }
  std::string write(const char *name, const std::string &text) const {
    std::string file = path + "/" + name;
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
};

void test_node_name_map_fixture(void **) {
  NodeNameMap m = read_node_name_map(ib("x5-2020-qdr.node-name-map"));
  // 87 lines: one comment ("# cluster X5") and 86 entries, all with distinct GUIDs.
  assert_int_equal(m.names.size(), 86);
  assert_int_equal(m.lines.size(), 86);
  assert_string_equal(m.names.at(0x003048c74e4a0000ULL).c_str(), "x5570comp1");
  assert_int_equal(m.lines.at(0x003048c74e4a0000ULL), 2);
  assert_string_equal(m.names.at(0x0002c90300080e84ULL).c_str(), "r510gluster1");
  assert_string_equal(m.names.at(0x78e7d1030022a0dcULL).c_str(), "sl390lin3");
  assert_string_equal(m.names.at(0x003048c748b00000ULL).c_str(), "r422node104");
  assert_int_equal(m.lines.at(0x003048c748b00000ULL), 87);
  // Every name in the map is a CA of the dump it belongs to; 3 of its 89 CAs have no name.
  Fabric f = parse_ibnetdiscover_file(ib("x5-2020-qdr.ibnetdiscover"));
  int unnamed = 0;
  for (const auto &kv : m.names) assert_int_equal(by_guid(f, kv.first)->type, NodeType::Ca);
  for (const auto &n : f.nodes) unnamed += n.type == NodeType::Ca && !m.names.count(n.guid);
  assert_int_equal(unnamed, 3);
}

void test_node_name_map_forms(void **) {
  TempDir d;
  std::string file = d.write("forms.map",
                             "# every GUID form, quoted and unquoted names, comments\r\n"
                             "\n"
                             "0x0002c90300080e84 r510gluster1\n"
                             "  0002c90300080d58\t\"r510 gluster2\"   # quoted, with a blank inside\n"
                             "S-f4521403001165a0 \"MF0;ib5:SX6036/U1\"\n"
                             "H-003048c74e4a0000 x5570comp1 # trailing comment\r\n"
                             "0x0002c90300080e84 r510gluster1\n"   // the same entry again is harmless
                             "0x0002c90300080d3c r510gluster1\n");  // one host, two HCAs
  NodeNameMap m = read_node_name_map(file);
  assert_int_equal(m.names.size(), 5);
  assert_string_equal(m.names.at(0x0002c90300080e84ULL).c_str(), "r510gluster1");
  assert_int_equal(m.lines.at(0x0002c90300080e84ULL), 3);
  assert_string_equal(m.names.at(0x0002c90300080d58ULL).c_str(), "r510 gluster2");
  assert_string_equal(m.names.at(0xf4521403001165a0ULL).c_str(), "MF0;ib5:SX6036/U1");
  assert_string_equal(m.names.at(0x003048c74e4a0000ULL).c_str(), "x5570comp1");
  assert_string_equal(m.names.at(0x0002c90300080d3cULL).c_str(), "r510gluster1");
  // An empty map is valid.
  assert_int_equal(read_node_name_map(d.write("empty.map", "# nothing yet\n")).names.size(), 0);
}

void test_node_name_map_errors(void **) {
  expect_parse_error([] { read_node_name_map(bad("duplicate-guid.node-name-map")); },
                     bad("duplicate-guid.node-name-map"), 4, {"x5570comp2", "x5570comp1", "line 2", "one name"});
  expect_parse_error([] { read_node_name_map(bad("no-name.node-name-map")); }, bad("no-name.node-name-map"), 3,
                     {"no name", "0x0002c90300080d58"});
  expect_parse_error([] { read_node_name_map("/nonexistent/map"); }, "/nonexistent/map", 0, {"cannot open"});
  expect_parse_error([] { read_node_name_map(TEST_FIXTURES); }, TEST_FIXTURES, 0, {"directory"});
  TempDir d;
  struct {
    const char *text;
    int line;
    const char *word;
  } cases[] = {
      {"0x12 ok\nnode07 0x0002c90300080e84\n", 2, "not a GUID"},
      {"0x0002c90300080e84123 name\n", 1, "at most 16"},
      {"0x0002c90300080e84 \"unterminated\n", 1, "closing quote"},
      {"0x0002c90300080e84 \"a\" b\n", 1, "after the quoted name"},
      {"0x0002c90300080e84 \"\"\n", 1, "no name"},
      {"0x0002c90300080e84\n", 1, "no name"},
      {"0x0002c90300080e84 a\x01" "b\n", 1, "control character"},
  };
  for (const auto &c : cases) {
    std::string f = d.write("bad.map", c.text);
    expect_parse_error([&] { read_node_name_map(f); }, f, c.line, {c.word});
  }
}

// Messages quote the dump: bytes that are not UTF-8, C1 controls and an excerpt cut at its 40th byte
// inside a character all reach the user as printable text (found by tests/fuzz/fuzz_ibnetdiscover).
void test_messages_printable(void **) {
  std::string long_utf8 = "x";
  for (int i = 0; i < 30; i++) long_utf8 += "\xc3\xa9";  // 'e' acute: the 40-byte cut falls inside one
  for (const std::string &line : {std::string("\xcc\xcb\xf5\x9c\x9e\x98 hello"), std::string("\xc2\x85 next line"),
                                   long_utf8}) {
    std::string what;
    try {
      parse_text(line + "\n");
    } catch (const ParseError &e) {
      what = e.what();
    }
    if (what.empty()) fail_msg("no ParseError for a line of junk");
    if (printable_text(what) != what) fail_msg("message is not printable text: %s", printable_text(what).c_str());
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_fixtures_parse),   cmocka_unit_test(test_loginoff_structure),
      cmocka_unit_test(test_loginoff_ports),       cmocka_unit_test(test_x5),
      cmocka_unit_test(test_ibtopotool_variants),  cmocka_unit_test(test_ports_format),
      cmocka_unit_test(test_widths_and_speeds),    cmocka_unit_test(test_tolerated_layout),
      cmocka_unit_test(test_grouping_and_routers), cmocka_unit_test(test_ports_format_inline),
      cmocka_unit_test(test_bad_files),            cmocka_unit_test(test_bad_inline),
      cmocka_unit_test(test_node_name_map_fixture), cmocka_unit_test(test_node_name_map_forms),
      cmocka_unit_test(test_node_name_map_errors),
      cmocka_unit_test(test_messages_printable),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
