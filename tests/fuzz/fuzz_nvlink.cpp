// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: per-node NVLink domain lines (corelib/nvlink.hpp), as
// `topoaware discover --nvlink-domains` reads them from a file an admin collected with pdsh.
//
// Invariants: NvlinkError is the only error and names "<source>:<line>: "; every node read has a
// plausible host and, in a domain, a normalized UUID and 1..1024 GPUs, or else a reason; a node's
// own line (format_node_nvlink, pdsh-prefixed) reads back to the same node; merging into a
// topology without those hosts reports every one of them as unknown.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "nvlink.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace topoaware;
  const std::string text(reinterpret_cast<const char *>(data), size);
  std::vector<NodeNvlink> nodes;
  try {
    nodes = parse_nvlink_lines(text, "f");
  } catch (const NvlinkError &e) {
    FUZZ_CHECK(std::string(e.what()).rfind("f:", 0) == 0);
    return 0;
  }
  for (const NodeNvlink &n : nodes) {
    FUZZ_CHECK(!n.host.empty() && n.host.find(':') == std::string::npos);
    if (n.in_domain) {
      std::string u;
      FUZZ_CHECK(normalize_cluster_uuid(n.cluster_uuid, &u) && u == n.cluster_uuid);
      FUZZ_CHECK(n.gpus >= 1 && n.gpus <= 1024);
    }
    if (n.reason.find('\n') != std::string::npos || n.reason.find(')') != std::string::npos) continue;
    const std::vector<NodeNvlink> again = parse_nvlink_lines(n.host + ": " + format_node_nvlink(n) + "\n", "g");
    FUZZ_CHECK(again.size() == 1 && again[0].host == n.host && again[0].in_domain == n.in_domain);
    if (n.in_domain)
      FUZZ_CHECK(again[0].cluster_uuid == n.cluster_uuid && again[0].clique_id == n.clique_id &&
                 again[0].gpus == n.gpus);
  }
  Topology empty;
  std::vector<std::string> unknown;
  apply_nvlink_domains(empty, nodes, &unknown, nullptr);
  FUZZ_CHECK(unknown.size() == nodes.size() && empty.nvlink_domains.empty());
  return 0;
}
