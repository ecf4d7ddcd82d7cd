// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the ibnetdiscover text parser (discovery/ibnetdiscover_parser.hpp), as
// `topoaware discover --ibnetdiscover FILE` uses it, then classification and topology.json.
//
// Each input is parsed three times: with format detection and with each format forced.
// Invariants: a ParseError is the only answer to bad input, its message starts with
// "<file>:" and is printable text; a parsed fabric keeps the invariants every consumer relies on
// (below); it classifies without an exception, and the topology.json written from it reads back
// (hash included) and writes the same bytes again. A leaf without hosts added under a level-2
// switch that a leaf with hosts reaches directly adds no level and moves no switch
// (docs/classification.md).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "empty_leaf.hpp"
#include "fuzz_common.hpp"
#include "ibnetdiscover_parser.hpp"
#include "topology.hpp"
#include "topology_json.hpp"

namespace {

// What every consumer of a parsed Fabric relies on.
void check_fabric(const topoaware::Fabric &f) {
  FUZZ_CHECK(!f.nodes.empty());
  FUZZ_CHECK(f.sources.size() == 1);
  for (const auto &n : f.nodes) {
    FUZZ_CHECK(f.find(n.guid) == &n);
    FUZZ_CHECK(n.nports >= 0 && n.nports <= 255);
    int last = 0;
    for (const auto &p : n.ports) {
      FUZZ_CHECK(p.num > last && p.num <= n.nports);  // sorted, unique, within the node
      last = p.num;
      FUZZ_CHECK(p.remote_port >= 1 && p.remote_port <= 255);
      FUZZ_CHECK(p.width == 0 || p.width == 1 || p.width == 2 || p.width == 4 || p.width == 8 || p.width == 12);
      FUZZ_CHECK(f.find(p.remote_guid) != nullptr);  // finish() keeps only ports to known nodes
    }
  }
}

// The first level-2 switch cabled to a leaf with hosts (its distance from the hosts is 2 whatever
// else the fabric holds), or -1.
int spine_over_hosts(const topoaware::Topology &t) {
  for (const auto &l : t.links) {
    int a = t.switch_index(l.a), b = t.switch_index(l.b);
    if (a < 0 || b < 0) continue;
    for (auto [leaf, spine] : {std::pair<int, int>{a, b}, std::pair<int, int>{b, a}})
      if (t.switches[leaf].level == 1 && !t.switches[leaf].hosts.empty() && t.switches[spine].level == 2) return spine;
  }
  return -1;
}

// An empty leaf under that switch hangs below it, and no other switch moves.
void check_empty_leaf(const topoaware::Fabric &f, const topoaware::Topology &t) {
  const int spine = spine_over_hosts(t);
  if (spine < 0) return;
  const topoaware::Fabric g =
      topoaware::testing::with_empty_leaf_under(f, "fuzz-empty-leaf", {t.switches[spine].guid}, 2);
  const topoaware::Topology u = topoaware::classify(g, {});
  FUZZ_CHECK(u.max_level == t.max_level);
  FUZZ_CHECK(u.switches.size() == t.switches.size() + 1);
  for (const auto &s : u.switches) {
    const int before = t.switch_index(s.guid);
    FUZZ_CHECK(before >= 0 ? s.level == t.switches[before].level : s.level == 1);
  }
}

// The fabric as `topoaware discover` writes it: classify, topology.json, and back.
void check_topology(const topoaware::Fabric &f) {
  topoaware::Topology t = topoaware::classify(f, {});
  const std::string json = topoaware::to_json(t);
  topoaware::Topology back = topoaware::topology_from_json(json);  // throws (uncaught) if unreadable
  FUZZ_CHECK(back.hash == t.hash);
  FUZZ_CHECK(topoaware::to_json(back) == json);
  check_empty_leaf(f, t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  bool classified = false;
  for (auto format : {topoaware::DumpFormat::Auto, topoaware::DumpFormat::Default, topoaware::DumpFormat::Ports}) {
    std::istringstream in(text);
    try {
      topoaware::Fabric f = topoaware::parse_ibnetdiscover(in, "fuzz-input", format);
      check_fabric(f);
      if (!classified) {  // the same fabric whichever format read it: classify once
        check_topology(f);
        classified = true;
      }
    } catch (const topoaware::ParseError &e) {
      // Bad input must still be reported as "<file>:<line>: ...", in printable text.
      const std::string msg = e.what();
      FUZZ_CHECK(msg.rfind("fuzz-input:", 0) == 0);
      FUZZ_CHECK(fuzz::printable(msg));
    }
  }
  return 0;
}
