// libFuzzer target for the ibnetdiscover text parser.
//
// Run it with tests/fuzz/run-fuzz.sh [seconds] (clang++ -fsanitize=fuzzer,address,undefined;
// the fixtures are the seed corpus). It is not part of `make check`.
//
// Each input is parsed three times: with format detection and with each format forced. A
// ParseError is the expected answer to bad input; any other exception, a sanitizer report, or a
// fabric that breaks the invariants below is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "ibnetdiscover_parser.hpp"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// What every consumer of a parsed Fabric relies on.
void check_fabric(const topoaware::Fabric &f) {
  check(!f.nodes.empty());
  check(f.sources.size() == 1);
  for (const auto &n : f.nodes) {
    check(f.find(n.guid) == &n);
    check(n.nports >= 0 && n.nports <= 255);
    int last = 0;
    for (const auto &p : n.ports) {
      check(p.num > last && p.num <= n.nports);  // sorted, unique, within the node
      last = p.num;
      check(p.remote_port >= 1 && p.remote_port <= 255);
      check(p.width == 0 || p.width == 1 || p.width == 2 || p.width == 4 || p.width == 8 || p.width == 12);
      check(f.find(p.remote_guid) != nullptr);  // finish() keeps only ports to known nodes
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  for (auto format : {topoaware::DumpFormat::Auto, topoaware::DumpFormat::Default, topoaware::DumpFormat::Ports}) {
    std::istringstream in(text);
    try {
      check_fabric(topoaware::parse_ibnetdiscover(in, "fuzz-input", format));
    } catch (const topoaware::ParseError &e) {
      // Bad input must still be reported as "<file>:<line>: ...".
      check(std::string(e.what()).rfind("fuzz-input:", 0) == 0);
    }
  }
  return 0;
}
