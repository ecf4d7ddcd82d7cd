// SPDX-License-Identifier: GPL-2.0-or-later
// topology.json: the canonical, versioned form of a Topology (schema "topoaware/1").
// Writing is deterministic (sorted, no timestamps, no LIDs); reading validates strictly, because
// the plugins read this file inside slurmctld and slurmstepd.
#pragma once

#include <stdexcept>
#include <string>

#include "topology.hpp"

namespace topoaware {

struct TopologyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Canonical JSON text, with the "hash" field filled in; also sets topo.hash.
std::string to_json(Topology &topo);
// Parses and validates; throws TopologyError naming what is wrong.
Topology topology_from_json(const std::string &text);
// The largest topology file read (topoaware.conf(5), TopologyFile): far above a 100,000-host fabric.
inline constexpr size_t kMaxTopologyBytes = size_t(1) << 30;
// Reads a regular file of at most kMaxTopologyBytes, opened without blocking: a FIFO, a device
// (/dev/zero) or a folder is refused at once, never read (slurmctld reads it at reconfigure).
Topology load_topology_file(const std::string &path);  // throws TopologyError("<path>: ...")
// The same, and the SHA-256 (64 lower-case hex digits) of the file's bytes as read, so that a copy
// of exactly those bytes can be checked later (the select plugin's last good copy).
Topology load_topology_file(const std::string &path, std::string *file_sha256);

}  // namespace topoaware
