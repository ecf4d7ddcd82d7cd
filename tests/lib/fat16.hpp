// SPDX-License-Identifier: GPL-2.0-or-later
// The 16-host fabric of the cluster tests (tests/lib/select_fabric.sh): 4 leaves x 4 hosts
// (n0001..n0016), 4 uplinks per leaf to 2 spines, classified and hashed as topology.json holds it.
#pragma once

#include "generator.hpp"
#include "topology.hpp"
#include "topology_json.hpp"

inline topoaware::Topology fat16() {
  topoaware::FatTreeSpec s;
  s.leaves = 4;
  s.hosts_per_leaf = 4;
  s.uplinks_per_leaf = 4;
  s.spines = 2;
  topoaware::Fabric f = topoaware::generate_fat_tree(s);
  f.finish();
  topoaware::Topology t = topoaware::classify(f, {});
  topoaware::to_json(t);  // fills the hash
  return t;
}
