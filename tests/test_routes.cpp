// SPDX-License-Identifier: GPL-2.0-or-later
// Routes: saved forwarding tables read (dump_fts / ibroute text), their LIDs resolved against the
// cabling, kept in topology.json with a hash of their own, and followed hop by hop.
//
// The fabric: 2 leaves x 2 hosts, 2 spines, one cable from each leaf to each spine (generated).
// Routes written by hand here, so that every expected path is known: leaves send a LID of the other
// leaf up to spine (LID mod 2), spines send every host LID down to its leaf.
#include <cstring>
#include <sstream>
#include <string>

#include "generator.hpp"
#include "lft_dump.hpp"
#include "route_trace.hpp"
#include "routes.hpp"
#include "topology_diff.hpp"
#include "topology.hpp"
#include "topology_json.hpp"
// cmocka last: its macros clash with names in the C++ headers.
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

struct Fixture {
  Fabric fabric;
  Routes routes;                       // the tables as "programmed"
  std::map<uint64_t, uint16_t> lid;    // node GUID -> LID (hosts and switches)
  std::vector<uint64_t> leaves, spines, hosts;
};

const FabricNode &node(const Fabric &f, uint64_t g) { return *f.find(g); }

int port_to(const Fabric &f, uint64_t from, uint64_t to) {
  for (const auto &p : node(f, from).ports)
    if (p.remote_guid == to) return p.num;
  return -1;
}

Fixture make_fixture(int lmc = 0) {
  Fixture fx;
  FatTreeSpec spec;
  spec.levels = 2;
  spec.leaves = 2;
  spec.hosts_per_leaf = 2;
  spec.uplinks_per_leaf = 2;
  spec.spines = 2;
  fx.fabric = generate_fat_tree(spec);
  fx.fabric.finish();
  for (const auto &n : fx.fabric.nodes) {
    if (n.type != NodeType::Switch) {
      fx.hosts.push_back(n.guid);
      continue;
    }
    bool has_host = false;
    for (const auto &p : n.ports) has_host = has_host || node(fx.fabric, p.remote_guid).type != NodeType::Switch;
    (has_host ? fx.leaves : fx.spines).push_back(n.guid);
  }
  assert_int_equal(fx.leaves.size(), 2);
  assert_int_equal(fx.spines.size(), 2);
  assert_int_equal(fx.hosts.size(), 4);
  // LIDs: switches 1..4, hosts from 8 on, aligned to 2^lmc as a subnet manager assigns them.
  uint16_t next = 1;
  for (uint64_t g : fx.leaves) fx.lid[g] = next++;
  for (uint64_t g : fx.spines) fx.lid[g] = next++;
  next = 8;
  for (uint64_t g : fx.hosts) fx.lid[g] = next, next = uint16_t(next + (1 << lmc));
  const size_t top = next - 1;
  auto leaf_of = [&](uint64_t host) { return node(fx.fabric, host).ports.front().remote_guid; };
  Subnet sn;
  for (uint64_t sw : fx.leaves) {
    SwitchLft t{sw, fx.lid[sw], std::vector<uint8_t>(top + 1, kNoRoute)};
    t.out[fx.lid[sw]] = 0;
    for (uint64_t o : fx.leaves)
      if (o != sw) t.out[fx.lid[o]] = uint8_t(port_to(fx.fabric, sw, fx.spines[0]));
    for (uint64_t s : fx.spines) t.out[fx.lid[s]] = uint8_t(port_to(fx.fabric, sw, s));
    for (uint64_t h : fx.hosts)
      for (int b = 0; b < (1 << lmc); ++b) {
        uint16_t l = uint16_t(fx.lid[h] + b);
        t.out[l] = leaf_of(h) == sw ? uint8_t(port_to(fx.fabric, sw, h))
                                    : uint8_t(port_to(fx.fabric, sw, fx.spines[l % 2]));
      }
    sn.switches.push_back(t);
  }
  for (uint64_t sw : fx.spines) {
    SwitchLft t{sw, fx.lid[sw], std::vector<uint8_t>(top + 1, kNoRoute)};
    t.out[fx.lid[sw]] = 0;
    for (uint64_t o : fx.leaves) t.out[fx.lid[o]] = uint8_t(port_to(fx.fabric, sw, o));
    for (uint64_t o : fx.spines)
      if (o != sw) t.out[fx.lid[o]] = uint8_t(port_to(fx.fabric, sw, fx.leaves[0]));
    for (uint64_t h : fx.hosts)
      for (int b = 0; b < (1 << lmc); ++b) t.out[fx.lid[h] + b] = uint8_t(port_to(fx.fabric, sw, leaf_of(h)));
    sn.switches.push_back(t);
  }
  for (uint64_t h : fx.hosts) sn.ports.push_back({h, node(fx.fabric, h).ports.front().num, fx.lid[h], lmc});
  fx.routes.subnets.push_back(sn);
  fx.routes.canonicalize();
  return fx;
}

// The tables as dump_fts prints them (with or without the destination column).
std::string as_dump_fts(const Fixture &fx, bool destinations, int lmc = 0) {
  std::ostringstream o;
  std::map<uint16_t, uint64_t> owner;
  for (const auto &[g, l] : fx.lid) owner[l] = g;
  char line[256];
  for (const auto &s : fx.routes.subnets[0].switches) {
    const FabricNode &n = node(fx.fabric, s.guid);
    std::snprintf(line, sizeof line, "Unicast lids [0x0-0x%zx] of switch DR path slid 0; dlid 0; 0,1 guid 0x%016llx (%s):\n",
                  s.out.size() - 1, (unsigned long long)s.guid, n.desc.c_str());
    o << line << "  Lid  Out   Destination\n       Port     Info \n";
    int listed = 0;
    for (size_t l = 0; l < s.out.size(); ++l) {
      if (s.out[l] == kNoRoute) continue;
      std::snprintf(line, sizeof line, "0x%04zx %03u ", l, unsigned(s.out[l]));
      o << line;
      ++listed;
      if (!destinations) {
        o << "\n";
        continue;
      }
      auto it = owner.find(uint16_t(l));
      if (it != owner.end()) {
        const FabricNode &d = node(fx.fabric, it->second);
        bool sw = d.type == NodeType::Switch;
        uint64_t pg = sw ? d.guid : d.ports.front().port_guid;
        std::snprintf(line, sizeof line, ": (%s portguid 0x%016llx: '%s')\n", sw ? "Switch" : "Channel Adapter",
                      (unsigned long long)pg, d.desc.c_str());
      } else {
        std::snprintf(line, sizeof line, ": (path #%d out of %d)\n", int(l % (1 << lmc)) + 1, 1 << lmc);
      }
      o << line;
    }
    o << listed << " valid lids dumped \n";
  }
  return o.str();
}

Topology classified(const Fixture &fx) {
  Fabric f = fx.fabric;
  f.routes = fx.routes;
  return classify(f, {});
}

int host_named(const Topology &t, uint64_t guid) {
  for (size_t h = 0; h < t.hosts.size(); ++h)
    if (t.hosts[h].ports.front().ca_guid == guid) return int(h);
  return -1;
}

}  // namespace

static void test_lft_base64_round_trip(void **) {
  std::vector<uint8_t> lft = {255, 0, 1, 2, 3, 36, 255};
  for (size_t n = 0; n <= lft.size(); ++n) {
    std::vector<uint8_t> part(lft.begin(), lft.begin() + long(n));
    assert_true(lft_from_base64(lft_to_base64(part)) == part);
  }
  bool threw = false;
  try {
    lft_from_base64("AAE*");
  } catch (const std::invalid_argument &) {
    threw = true;
  }
  assert_true(threw);
}

static void test_dump_read_and_resolved(void **) {
  for (bool dest : {true, false}) {
    Fixture fx = make_fixture();
    std::istringstream in(as_dump_fts(fx, dest));
    LftDump d = parse_lft_dump(in, "fts.txt");
    assert_int_equal(d.switches.size(), 4);
    std::vector<std::string> problems;
    Subnet sn = resolve_lft_dump(d, fx.fabric, problems);
    assert_true(problems.empty());
    Routes r;
    r.subnets.push_back(sn);
    r.canonicalize();
    const Subnet &want = fx.routes.subnets[0];
    assert_int_equal(r.subnets[0].switches.size(), want.switches.size());
    for (size_t i = 0; i < want.switches.size(); ++i) {
      assert_true(r.subnets[0].switches[i].out == want.switches[i].out);
      assert_int_equal(r.subnets[0].switches[i].lid, want.switches[i].lid);  // from its port-0 entry
    }
    assert_int_equal(r.subnets[0].ports.size(), want.ports.size());
    for (size_t i = 0; i < want.ports.size(); ++i) {
      assert_true(r.subnets[0].ports[i].guid == want.ports[i].guid);
      assert_int_equal(r.subnets[0].ports[i].base_lid, want.ports[i].base_lid);
    }
  }
}

// LMC 1: every host answers to two LIDs; dump_fts names the base one and marks the other
// "path #2 out of 2". Without destinations, the run of two aligned LIDs into one port says the same.
static void test_dump_lmc(void **) {
  for (bool dest : {true, false}) {
    Fixture fx = make_fixture(1);
    std::istringstream in(as_dump_fts(fx, dest, 1));
    std::vector<std::string> problems;
    Subnet sn = resolve_lft_dump(parse_lft_dump(in, "fts.txt"), fx.fabric, problems);
    assert_true(problems.empty());
    assert_int_equal(sn.ports.size(), 4);
    for (const auto &p : sn.ports) {
      assert_int_equal(p.lmc, 1);
      assert_int_equal(p.base_lid, fx.lid[p.guid]);
    }
  }
}

static void expect_parse_error(const std::string &text, const char *needle) {
  std::istringstream in(text);
  try {
    parse_lft_dump(in, "x.txt");
    fail_msg("accepted a bad dump (expected \"%s\")", needle);
  } catch (const ParseError &e) {
    assert_contains(e.what(), needle);
  }
}

static void test_dump_refused(void **) {
  Fixture fx = make_fixture();
  std::string good = as_dump_fts(fx, true);
  // Truncated inside a table, and a table whose count does not match what it lists.
  expect_parse_error(good.substr(0, good.rfind('\n', good.find("valid lids dumped")) + 1), "truncated");
  std::string miscount = good;
  miscount.replace(miscount.find(" valid lids dumped") - 1, 1, "9");
  expect_parse_error(miscount, "says 9 LIDs");
  expect_parse_error("hello\n", "header expected");
  expect_parse_error("", "no unicast forwarding table");
  expect_parse_error("Unicast lids [0x0-0xc000] of switch Lid 3 guid 0x1 (x):\n0 valid lids dumped\n", "0xbfff");
  // ibroute's header (by LID), multicast tables and ibwarn lines in between are read or skipped.
  std::string ibroute = "ibwarn: [1] sim_connect: attached\n"
                        "Unicast lids [0x0-0x2] of switch Lid 1 guid 0x0000000000000002 (sw):\n"
                        "  Lid  Out   Destination\n       Port     Info \n"
                        "0x0001 000 : (Switch portguid 0x0000000000000002: 'sw')\n"
                        "0x0002 255 : (illegal port)\n"
                        "2 lids dumped \n"
                        "Multicast mlids [0xc000-0xc001] of switch Lid 1 guid 0x0000000000000002 (sw):\n"
                        "0xc000      x   \n1 valid mlids dumped \n";
  std::istringstream in(ibroute);
  LftDump d = parse_lft_dump(in, "ibroute.txt");
  assert_int_equal(d.switches.size(), 1);
  assert_int_equal(d.switches[0].out.size(), 3);
  assert_int_equal(d.switches[0].out[1], 0);
  assert_int_equal(d.switches[0].out[2], kNoRoute);
}

// dump_fts (infiniband-diags 44.0) prints a range ending at a LID that starts a 64-LID block (0x80
// here) but stops listing before that block: the route to that LID is unknown, and reading the dump
// says so instead of recording "no route". A range ending elsewhere, or a listed top LID, is not this.
static void test_dump_unlisted_top_lid(void **) {
  Fixture fx = make_fixture();
  const std::string text = as_dump_fts(fx, true);
  const size_t at = text.find("[0x0-0x"), close = text.find(']', at);
  for (const char *range : {"0x0-0x80", "0x0-0x7e"}) {
    std::string cut = text;
    cut.replace(at + 1, close - at - 1, range);
    std::istringstream in(cut);
    LftDump d = parse_lft_dump(in, "fts.txt");
    std::vector<std::string> problems;
    resolve_lft_dump(d, fx.fabric, problems);
    const bool block = std::string(range) == "0x0-0x80";
    assert_int_equal(d.unlisted_top.size(), block ? 1 : 0);
    assert_int_equal(problems.size(), block ? 1 : 0);
    if (block) {
      assert_int_equal(d.unlisted_top[0].second, 0x80);
      assert_non_null(std::strstr(problems[0].c_str(), "LID 0x0080"));
      assert_non_null(std::strstr(problems[0].c_str(), "dump_fts"));
    }
  }
}

// A destination named on LID 0 (reserved: no port answers to it) is not taken as a port's base LID:
// the routes read back from topology.json (its reader refuses LID 0). Found by the lft_dump fuzzer.
static void test_dump_lid0_destination(void **) {
  Fixture fx = make_fixture();
  std::string text = as_dump_fts(fx, true);
  // A line for LID 0 naming the first host, in every table.
  const std::string host_note = text.substr(text.find(": (Channel Adapter"));
  std::string with0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    with0 += line + "\n";
    if (line.find("Port     Info") != std::string::npos)
      with0 += "0x0000 001 " + host_note.substr(0, host_note.find('\n')) + "\n";
  }
  for (size_t at = 0; (at = with0.find(" valid lids dumped", at)) != std::string::npos; at += 18) {
    const size_t start = with0.rfind('\n', at) + 1;
    const int n = std::atoi(with0.c_str() + start) + 1;
    with0.replace(start, at - start, std::to_string(n));
  }
  std::istringstream in(with0);
  std::vector<std::string> problems;
  Subnet sn = resolve_lft_dump(parse_lft_dump(in, "fts.txt"), fx.fabric, problems);
  assert_int_equal(sn.ports.size(), 4);
  for (const auto &p : sn.ports) assert_true(p.base_lid >= 1);
  Fabric f = fx.fabric;
  f.routes.subnets.push_back(sn);
  Topology t = classify(f, {});
  const Topology back = topology_from_json(to_json(t));
  assert_true(back.routes.hash == t.routes.hash);
}

// OpenSM's own record of what it programmed (opensm-lfts.dump): decimal range, "#" before the
// destination, and a trailer that counts the top LID rather than the lines.
static void test_opensm_dump(void **) {
  Fixture fx = make_fixture();
  std::istringstream in(as_dump_fts(fx, true));
  std::string osm, line;
  unsigned lo = 0, top = 0;
  while (std::getline(in, line)) {
    const size_t colon = line.find(" : (");
    if (std::sscanf(line.c_str(), "Unicast lids [0x%x-0x%x]", &lo, &top) == 2)
      osm += "Unicast lids [0-" + std::to_string(top) + "] of switch Lid 1" + line.substr(line.find(" guid ")) + "\n";
    else if (line.find("valid lids dumped") != std::string::npos)
      osm += std::to_string(top) + " lids dumped\n";
    else if (colon != std::string::npos)
      osm += line.substr(0, colon) + " # " + line.substr(colon + 4, line.size() - colon - 5) + "\n";
  }
  std::istringstream fin(osm);
  std::vector<std::string> problems;
  Subnet sn = resolve_lft_dump(parse_lft_dump(fin, "opensm-lfts.dump"), fx.fabric, problems);
  assert_true(problems.empty());
  assert_int_equal(sn.switches.size(), 4);
  for (size_t i = 0; i < sn.switches.size(); ++i) assert_true(sn.switches[i].out == fx.routes.subnets[0].switches[i].out);
  assert_int_equal(sn.ports.size(), 4);
}

static void test_trace_follows_tables(void **) {
  Fixture fx = make_fixture(1);
  Topology t = classified(fx);
  RouteTracer tr(t);
  assert_true(tr.has_routes());
  const int a = host_named(t, fx.hosts[0]), c = host_named(t, fx.hosts[2]), b = host_named(t, fx.hosts[1]);
  // Same leaf: one hop. Other leaf: up to spine (LID mod 2), down to the destination's leaf.
  TracedRoute same = tr.trace(a, 0, b, 0);
  assert_true(same.ok());
  assert_int_equal(same.hops.size(), 1);
  for (int bits = 0; bits < 2; ++bits) {
    TracedRoute r = tr.trace(a, 0, c, 0, bits);
    assert_true(r.ok());
    assert_int_equal(r.dlid, fx.lid[fx.hosts[2]] + bits);
    assert_int_equal(r.hops.size(), 3);
    assert_true(t.switches[size_t(r.hops[1].sw)].guid == fx.spines[r.dlid % 2]);
  }
}

static void test_trace_reports_broken_tables(void **) {
  Fixture fx = make_fixture();
  const uint16_t dl = fx.lid[fx.hosts[2]];
  // No route on the first leaf.
  Fixture hole = fx;
  for (auto &s : hole.routes.subnets[0].switches)
    if (s.guid == fx.leaves[0]) s.out[dl] = kNoRoute;
  Topology t1 = classified(hole);
  TracedRoute r1 = RouteTracer(t1).trace(host_named(t1, fx.hosts[0]), 0, host_named(t1, fx.hosts[2]), 0);
  assert_false(r1.ok());
  assert_contains(r1.error, "has no route to LID");
  // A loop: the spine sends the LID back up to the leaf it came from.
  Fixture loop = fx;
  for (auto &s : loop.routes.subnets[0].switches)
    if (s.guid == fx.spines[dl % 2]) s.out[dl] = uint8_t(port_to(fx.fabric, s.guid, fx.leaves[0]));
  Topology t2 = classified(loop);
  TracedRoute r2 = RouteTracer(t2).trace(host_named(t2, fx.hosts[0]), 0, host_named(t2, fx.hosts[2]), 0);
  assert_false(r2.ok());
  assert_contains(r2.error, "loops");
  // Delivered to the wrong host.
  Fixture wrong = fx;
  for (auto &s : wrong.routes.subnets[0].switches)
    if (s.guid == fx.leaves[1]) s.out[dl] = uint8_t(port_to(fx.fabric, s.guid, fx.hosts[3]));
  Topology t3 = classified(wrong);
  TracedRoute r3 = RouteTracer(t3).trace(host_named(t3, fx.hosts[0]), 0, host_named(t3, fx.hosts[2]), 0);
  assert_false(r3.ok());
  assert_contains(r3.error, "is delivered to");
}

// The cabling hash does not change with the routes; the routes hash does; both are checked.
static void test_json_hashes(void **) {
  Fixture fx = make_fixture();
  Topology bare = classify(fx.fabric, {});
  const std::string bare_text = to_json(bare);
  Topology routed = classified(fx);
  const std::string text = to_json(routed);
  assert_true(routed.hash == bare.hash);
  assert_false(routed.routes.hash.empty());
  // Less the routes member, the file is the file of the same fabric without routes.
  assert_true(text.substr(0, text.find(",\n \"routes\"")) + "\n}\n" == bare_text);
  Topology back = topology_from_json(text);
  assert_true(to_json(back) == text);
  assert_int_equal(back.routes.subnets.size(), 1);
  assert_true(back.routes.subnets[0].switches[0].out == routed.routes.subnets[0].switches[0].out);
  // A re-route: one entry changed. The cabling hash stays, the routes hash moves.
  Topology rerouted = classified(fx);
  auto &out = rerouted.routes.subnets[0].switches[0].out;
  out[fx.lid[fx.hosts[3]]] = out[fx.lid[fx.hosts[3]]] == 1 ? 2 : 1;
  to_json(rerouted);
  assert_true(rerouted.hash == routed.hash);
  assert_false(rerouted.routes.hash == routed.routes.hash);
  // What the plugins compare: the cabling hash without routes; with routes (the rank order reads
  // them) a hash of both, which a re-route changes; read back the same.
  assert_true(bare.placement_hash == bare.hash);
  assert_false(routed.placement_hash == routed.hash);
  assert_false(rerouted.placement_hash == routed.placement_hash);
  assert_true(back.placement_hash == routed.placement_hash);
  // Edited routes are refused by their own hash, edited cabling by the file's.
  std::string edited = text;
  size_t at = edited.find("\"lft\": \"") + 9;
  edited[at] = edited[at] == 'A' ? 'B' : 'A';
  try {
    topology_from_json(edited);
    fail_msg("accepted edited routes");
  } catch (const TopologyError &e) {
    assert_contains(e.what(), "routes hash");
  }
  std::string cabling = text;
  cabling.replace(cabling.find("\"max_level\": 2"), 14, "\"max_level\": 3");
  try {
    topology_from_json(cabling);
    fail_msg("accepted an edited cabling");
  } catch (const TopologyError &e) {
    assert_contains(e.what(), "content hash");
  }
}

// topoaware diff: a re-route is reported as one, apart from the cabling.
static void test_diff_reports_reroute(void **) {
  Fixture fx = make_fixture();
  Topology a = classified(fx), b = classified(fx), bare = classify(fx.fabric, {});
  to_json(a);
  to_json(bare);
  auto &out = b.routes.subnets[0].switches[0].out;
  out[fx.lid[fx.hosts[3]]] = out[fx.lid[fx.hosts[3]]] == 1 ? 2 : 1;
  to_json(b);
  assert_true(diff_topologies(a, a).same());
  TopologyDiff d = diff_topologies(a, b);
  assert_int_equal(d.changes.size(), 1);
  assert_string_equal(d.changes[0].kind.c_str(), "routes-changed");
  assert_contains(d.changes[0].detail, "1 switch table of 4 changed (1 entry), 0 port LIDs changed");
  TopologyDiff added = diff_topologies(bare, a);
  assert_int_equal(added.changes.size(), 1);
  assert_string_equal(added.changes[0].kind.c_str(), "routes-added");
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lft_base64_round_trip), cmocka_unit_test(test_dump_read_and_resolved),
      cmocka_unit_test(test_dump_lmc),              cmocka_unit_test(test_dump_refused),
      cmocka_unit_test(test_opensm_dump),           cmocka_unit_test(test_dump_lid0_destination),
      cmocka_unit_test(test_dump_unlisted_top_lid),
      cmocka_unit_test(test_trace_follows_tables),  cmocka_unit_test(test_trace_reports_broken_tables),
      cmocka_unit_test(test_json_hashes),           cmocka_unit_test(test_diff_reports_reroute),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
