// SPDX-License-Identifier: GPL-2.0-or-later
// What changed between two classified topologies (topoaware diff, topoaware discover --compare):
// switches and hosts added or gone, hosts that moved to another leaf, leaf group or pod, cables
// lost or added between two switches, cables and host ports that became narrower or slower (or
// wider, faster), and changes of the fabric's shape (levels, leaf groups, pods, rails).
//
// Switches are matched by GUID (a replaced switch is "gone" + "added"), hosts by name, a host's
// ports by (HCA GUID, port). Leaf groups and pods have no identity of their own in topology.json
// (their indices are positions), so a host's leaf group is named by the GUIDs of its leaves and a
// pod by those of its own switches: a host "moved" only if that set differs.
#pragma once

#include <string>
#include <vector>

#include "topology.hpp"

namespace topoaware {

struct TopologyChange {
  std::string kind;     // stable identifier: see topology_diff.cpp's list (also in topoaware(1))
  std::string subject;  // what it concerns: a host list, a switch name, "leaf001 <-> spine01"
  std::string detail;   // one sentence
};

struct TopologyDiff {
  std::vector<TopologyChange> changes;  // sorted by kind, then subject
  bool same() const { return changes.empty(); }
};

TopologyDiff diff_topologies(const Topology &before, const Topology &after);

// "before" and "after" name the two sides (file names) in the outputs.
std::string diff_to_text(const TopologyDiff &d, const Topology &before, const Topology &after,
                         const std::string &before_name, const std::string &after_name);
std::string diff_to_json(const TopologyDiff &d, const Topology &before, const Topology &after,
                         const std::string &before_name, const std::string &after_name);

}  // namespace topoaware
