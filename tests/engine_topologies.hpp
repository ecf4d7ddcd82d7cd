// Hand-built classified topologies for the engine's unit tests (no classify(), no JSON): what the
// classifier would produce for fat trees, pods, rail-optimized scalable units and oversubscription.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "topology.hpp"

namespace enginetest {

// pods x leaves_per_pod leaf groups, each of `rails` leaves serving hosts_per_group hosts.
// Hosts are named n0001.. in canonical order (natural order = index order). levels: 2 if
// pods == 0 (no pods: a 2-level tree), else 3. Oversubscription per level as given.
inline topoaware::Topology make_topology(int pods, int groups_per_pod, int hosts_per_group, int rails = 1,
                                         double oversub_leaf = 1.0, double oversub_spine = 1.0) {
  topoaware::Topology t;
  const int npods = pods == 0 ? 1 : pods;
  int host = 0;
  for (int p = 0; p < npods; ++p) {
    if (pods) t.pods.emplace_back();
    for (int g = 0; g < groups_per_pod; ++g) {
      topoaware::LeafGroup lg;
      lg.pod = pods ? p : -1;
      const int gi = int(t.leaf_groups.size());
      for (int r = 0; r < rails; ++r) {
        topoaware::Switch sw;
        sw.level = 1;
        sw.guid = 0x100000 + t.switches.size();
        sw.leaf_group = gi;
        sw.pod = lg.pod;
        sw.name = "leaf" + std::to_string(gi) + "r" + std::to_string(r);
        lg.leaves.push_back(int(t.switches.size()));
        t.switches.push_back(sw);
      }
      for (int h = 0; h < hosts_per_group; ++h) {
        topoaware::Host hs;
        char name[32];
        std::snprintf(name, sizeof name, "n%04d", ++host);
        hs.name = name;
        hs.leaf = lg.leaves[0];
        hs.leaf_group = gi;
        hs.pod = lg.pod;
        for (int r = 0; r < rails; ++r) t.switches[size_t(lg.leaves[size_t(r)])].hosts.push_back(int(t.hosts.size()));
        lg.hosts.push_back(int(t.hosts.size()));
        t.hosts.push_back(hs);
      }
      if (pods) t.pods.back().leaf_groups.push_back(gi);
      t.leaf_groups.push_back(lg);
    }
  }
  t.rail_optimized = rails > 1;
  t.max_level = pods ? 3 : 2;
  topoaware::LevelStats l1;
  l1.level = 1;
  l1.oversub_min = l1.oversub_max = l1.oversub_median = oversub_leaf;
  t.levels.push_back(l1);
  if (pods) {
    topoaware::LevelStats l2;
    l2.level = 2;
    l2.oversub_min = l2.oversub_max = l2.oversub_median = oversub_spine;
    t.levels.push_back(l2);
  }
  t.hash = "sha256:test";
  return t;
}

// Adds `spines` level-2 switches to a 2-level topology of make_topology (pods == 0), each linked to
// every leaf by `cables` cables of `width` x `speed`: the links the uplink factors are read from.
inline void add_spines(topoaware::Topology &t, int spines, int cables, int width = 4,
                       topoaware::LinkSpeed speed = topoaware::LinkSpeed::HDR) {
  const size_t leaves = t.switches.size();
  for (int s = 0; s < spines; ++s) {
    topoaware::Switch sw;
    sw.level = 2;
    sw.guid = 0x200000 + uint64_t(s);
    sw.name = "spine" + std::to_string(s);
    t.switches.push_back(sw);
    for (size_t l = 0; l < leaves; ++l) {
      topoaware::Link link;
      link.a = t.switches[l].guid;
      link.b = sw.guid;
      for (int c = 0; c < cables; ++c) link.ports.push_back({100 + s * cables + c, 1 + int(l) * cables + c});
      link.width = width;
      link.speed = speed;
      t.links.push_back(link);
    }
  }
}

// Every uplink cable of switch `leaf` at `width` x `speed` (a link that trained down).
inline void degrade_leaf(topoaware::Topology &t, int leaf, int width,
                         topoaware::LinkSpeed speed = topoaware::LinkSpeed::HDR) {
  for (topoaware::Link &l : t.links)
    if (l.a == t.switches[size_t(leaf)].guid || l.b == t.switches[size_t(leaf)].guid) {
      l.width = width;
      l.speed = speed;
    }
}

}  // namespace enginetest
