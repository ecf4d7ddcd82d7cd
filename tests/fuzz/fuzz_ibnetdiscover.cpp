// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the ibnetdiscover text parser (discovery/ibnetdiscover_parser.hpp), as
// `topoaware discover --ibnetdiscover FILE` uses it, then classification and topology.json.
//
// Each input is parsed three times: with format detection and with each format forced.
// Invariants: a ParseError is the only answer to bad input, its message starts with
// "<file>:" and is printable text; a parsed fabric keeps the invariants every consumer relies on
// (below); it classifies without an exception, and the topology.json written from it reads back
// (hash included) and writes the same bytes again.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

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

// The fabric as `topoaware discover` writes it: classify, topology.json, and back.
void check_topology(const topoaware::Fabric &f) {
  topoaware::Topology t = topoaware::classify(f, {});
  const std::string json = topoaware::to_json(t);
  topoaware::Topology back = topoaware::topology_from_json(json);  // throws (uncaught) if unreadable
  FUZZ_CHECK(back.hash == t.hash);
  FUZZ_CHECK(topoaware::to_json(back) == json);
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
