// SPDX-License-Identifier: GPL-2.0-or-later
// Multi-node NVLink domains: what one node reports (NVML's fabric cluster UUID and clique ID), the
// per-node lines an admin collects from every node (pdsh/clush "host: " prefixes), and how they
// become the Topology's domains.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology.hpp"

namespace topoaware {

struct NvlinkError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One node's NVLink fabric membership. `in_domain` false: no multi-node domain (no NVML, no GPU,
// a GPU outside any NVLink fabric); `reason` then says why.
struct NodeNvlink {
  std::string host;
  bool in_domain = false;
  std::string cluster_uuid;  // lower-case
  uint32_t clique_id = 0;
  int gpus = 0;
  std::string reason;
};

// The line `topoaware node --nvlink` prints (without the host):
//   "nvlink cluster_uuid=<uuid> clique_id=<n> gpus=<k>"  or  "nvlink none (<reason>)".
std::string format_node_nvlink(const NodeNvlink &n);

// A cluster UUID as NVML/nvidia-smi print it, lower-cased; false for "N/A", "[N/A]", "Not
// Supported", an all-zero UUID (a GPU in no fabric) and anything else that is not hex and dashes.
bool normalize_cluster_uuid(const std::string &in, std::string *out);

// Parses per-node lines, each "host: " + either a `topoaware node --nvlink` line or one GPU's line
// of `nvidia-smi --query-gpu=fabric.clusterUuid,fabric.cliqueId --format=csv,noheader`
// ("<uuid>, <clique>"; one line per GPU, counted as the node's GPUs). Blank lines and lines
// starting with '#' are skipped; an nvidia-smi header line is skipped too. Throws NvlinkError
// "<source>:<line>: ..." for a line that does not read, a host listed both ways or twice, or GPUs
// of one host in different domains. Result: one entry per host, in order of first appearance.
std::vector<NodeNvlink> parse_nvlink_lines(const std::string &text, const std::string &source);

// Replaces topo.nvlink_domains (and hosts' nvlink_domain) with the domains of `nodes`: hosts with
// the same (cluster UUID, clique ID) share one. Hosts of `nodes` absent from topo go to *unknown;
// hosts of a domain that report different GPU counts are noted in *warnings (the domain keeps the
// smallest). Not part of the fabric's cabling: callers re-hash with to_json.
void apply_nvlink_domains(Topology &topo, const std::vector<NodeNvlink> &nodes, std::vector<std::string> *unknown,
                          std::vector<std::string> *warnings);

// NVL72-style domains for generated fabrics: the hosts in natural name order, in consecutive runs of
// `size` (the last may be shorter), each run one domain of `gpus` GPUs per node with a synthetic
// cluster UUID (00000000-0000-4000-8000-<run number, 12 hex digits>) and clique ID 1.
std::vector<NodeNvlink> synthetic_nvlink_domains(const Topology &topo, int size, int gpus);

}  // namespace topoaware
