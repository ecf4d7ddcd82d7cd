// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: saved forwarding tables (discovery/lft_dump.hpp), as `topoaware discover
// --lfts FILE` reads them: parsed, resolved against a small generated fabric, kept in
// topology.json and followed hop by hop.
//
// Invariants: a ParseError is the only answer to bad input, its message starts with "<file>:";
// every table the parser returns fits the unicast LID space; the resolved routes written into
// topology.json read back (both hashes checked) and write the same bytes; a trace between any two
// hosts ends (delivered, or stopped with a reason) within a bounded number of hops, whatever the
// tables say.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_common.hpp"
#include "generator.hpp"
#include "lft_dump.hpp"
#include "route_trace.hpp"
#include "topology.hpp"
#include "topology_json.hpp"

namespace {

// 4 leaves x 4 hosts, 2 spines: GUIDs the inputs can name (the seeds use them).
const topoaware::Fabric &fabric() {
  static const topoaware::Fabric f = [] {
    topoaware::FatTreeSpec spec;
    spec.leaves = 4;
    spec.hosts_per_leaf = 4;
    spec.spines = 2;
    spec.uplinks_per_leaf = 2;
    topoaware::Fabric g = topoaware::generate_fat_tree(spec);
    g.finish();
    return g;
  }();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  std::istringstream in(text);
  topoaware::LftDump dump;
  try {
    dump = topoaware::parse_lft_dump(in, "fuzz-input");
  } catch (const topoaware::ParseError &e) {
    FUZZ_CHECK(std::string(e.what()).rfind("fuzz-input:", 0) == 0);
    FUZZ_CHECK(fuzz::printable(e.what()));
    return 0;
  }
  FUZZ_CHECK(!dump.switches.empty());
  for (const auto &s : dump.switches) FUZZ_CHECK(!s.out.empty() && s.out.size() <= topoaware::kMaxUnicastLid + 1);
  topoaware::Fabric f = fabric();
  f.routes.subnets.push_back(topoaware::resolve_lft_dump(dump, f, f.route_problems));
  topoaware::Topology t = topoaware::classify(f, {});
  const std::string json = topoaware::to_json(t);
  topoaware::Topology back = topoaware::topology_from_json(json);  // throws (uncaught) if unreadable
  FUZZ_CHECK(back.hash == t.hash && back.routes.hash == t.routes.hash);
  FUZZ_CHECK(topoaware::to_json(back) == json);
  const topoaware::RouteTracer tracer(back);
  for (size_t a = 0; a < back.hosts.size(); ++a)
    for (size_t b = 0; b < back.hosts.size(); ++b) {
      const topoaware::TracedRoute r = tracer.trace(int(a), 0, int(b), 0);
      FUZZ_CHECK(r.hops.size() <= 64);
      FUZZ_CHECK(r.ok() || !r.error.empty());
    }
  return 0;
}
