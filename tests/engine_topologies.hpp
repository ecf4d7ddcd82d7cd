// SPDX-License-Identifier: GPL-2.0-or-later
// Hand-built classified topologies for the engine's unit tests (no classify(), no JSON): what the
// classifier would produce for fat trees, pods, rail-optimized scalable units and oversubscription.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <random>
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

// Forwarding tables for a 2-level test topology (leaves, and upper switches cabled to leaves), as a
// subnet manager might program them, so that the rank order's entry classes come from routes:
// hosts without ports get one per rail (port p + 1 of their leaf, p their position on it); LIDs
// are given to host ports in a seeded random order (a subnet manager's order, not names'); the
// destinations of each leaf are balanced over its uplink cables in LID order, as OpenSM's ftree
// does: the k-th host LID of leaf D comes down D's uplink cable k mod K (its upper switch sends it
// there), and every other leaf sends it up one of its cables to that upper switch. by_port: the
// k-th in the leaf's port order instead (OpenSM's ftree walks a leaf's ports in order, so a host's
// NICs on consecutive ports come down consecutive cables whatever their LIDs). cable, if given:
// the cable (index into the leaf's uplinks in port order) that port p of host h comes down, in
// place of either rule (tables no subnet manager's port walk explains).
inline void add_test_routes(topoaware::Topology &t, uint32_t seed, bool by_port = false,
                            const std::function<size_t(size_t h, size_t p)> &cable = nullptr) {
  using namespace topoaware;
  std::map<int, int> on_leaf;  // switch -> hosts given a port there
  for (size_t h = 0; h < t.hosts.size(); ++h) {
    Host &host = t.hosts[h];
    if (!host.ports.empty() || host.leaf_group < 0) continue;
    const auto &leaves = t.leaf_groups[size_t(host.leaf_group)].leaves;
    for (size_t r = 0; r < leaves.size(); ++r) {
      HcaPort p;
      p.ca_guid = 0x700000 + h * 16 + r;
      p.port = 1;
      p.rail = int(r);
      p.sw = leaves[r];
      p.sw_port = 1 + on_leaf[leaves[r]]++;
      host.ports.push_back(p);
    }
  }
  std::vector<std::pair<int, int>> ports;  // (host, port index)
  for (size_t h = 0; h < t.hosts.size(); ++h)
    for (size_t p = 0; p < t.hosts[h].ports.size(); ++p) ports.emplace_back(int(h), int(p));
  std::mt19937 rng(seed);
  std::shuffle(ports.begin(), ports.end(), rng);
  const uint16_t first = uint16_t(t.switches.size() + 1);
  std::vector<std::vector<uint16_t>> lid(t.hosts.size());
  for (size_t i = 0; i < ports.size(); ++i) {
    auto &v = lid[size_t(ports[i].first)];
    v.resize(t.hosts[size_t(ports[i].first)].ports.size());
    v[size_t(ports[i].second)] = uint16_t(first + i);
  }
  const size_t top = first + ports.size();
  std::map<uint64_t, int> index;
  for (size_t i = 0; i < t.switches.size(); ++i) index[t.switches[i].guid] = int(i);
  std::vector<std::vector<int>> up(t.switches.size());       // leaf -> uplink ports, sorted
  std::map<std::pair<int, int>, std::pair<int, int>> peer;   // (switch, port) -> (switch, port)
  for (const Link &l : t.links) {
    if (!index.count(l.a) || !index.count(l.b)) continue;
    int a = index[l.a], b = index[l.b];
    for (auto [pa, pb] : l.ports) {
      if (t.switches[size_t(a)].level > t.switches[size_t(b)].level) std::swap(a, b), std::swap(pa, pb);
      up[size_t(a)].push_back(pa);
      peer[{a, pa}] = {b, pb};
      peer[{b, pb}] = {a, pa};
    }
  }
  for (auto &u : up) std::sort(u.begin(), u.end());
  std::map<int, std::vector<uint16_t>> by_leaf;  // leaf -> its host LIDs, sorted
  for (size_t h = 0; h < t.hosts.size(); ++h)
    for (size_t p = 0; p < t.hosts[h].ports.size(); ++p) by_leaf[t.hosts[h].ports[p].sw].push_back(lid[h][p]);
  for (auto &[leaf, lids] : by_leaf) std::sort(lids.begin(), lids.end());
  std::map<int, std::vector<int>> leaf_ports;  // leaf -> its host ports, sorted
  for (const Host &host : t.hosts)
    for (const HcaPort &hp : host.ports) leaf_ports[hp.sw].push_back(hp.sw_port);
  for (auto &[leaf, ps] : leaf_ports) std::sort(ps.begin(), ps.end());
  std::vector<SwitchLft> lfts;
  for (size_t s = 0; s < t.switches.size(); ++s) {
    lfts.push_back({t.switches[s].guid, uint16_t(s + 1), std::vector<uint8_t>(top, kNoRoute)});
    lfts.back().out[s + 1] = 0;
  }
  for (size_t h = 0; h < t.hosts.size(); ++h)
    for (size_t p = 0; p < t.hosts[h].ports.size(); ++p) {
      const HcaPort &hp = t.hosts[h].ports[p];
      const uint16_t l = lid[h][p];
      lfts[size_t(hp.sw)].out[l] = uint8_t(hp.sw_port);
      const auto &d_up = up[size_t(hp.sw)];
      if (d_up.empty()) continue;
      const auto &lids = by_leaf[hp.sw];
      const auto &ps = leaf_ports[hp.sw];
      const size_t k = cable     ? cable(h, p)
                       : by_port ? size_t(std::lower_bound(ps.begin(), ps.end(), hp.sw_port) - ps.begin())
                                 : size_t(std::lower_bound(lids.begin(), lids.end(), l) - lids.begin());
      const auto [spine, spine_port] = peer[{hp.sw, d_up[k % d_up.size()]}];
      lfts[size_t(spine)].out[l] = uint8_t(spine_port);
      for (size_t s = 0; s < t.switches.size(); ++s) {
        if (int(s) == hp.sw || t.switches[s].level != 1) continue;
        std::vector<int> to_spine;
        for (int u : up[s])
          if (peer[{int(s), u}].first == spine) to_spine.push_back(u);
        if (!to_spine.empty()) lfts[s].out[l] = uint8_t(to_spine[k % to_spine.size()]);
      }
    }
  Subnet sn;
  sn.switches = std::move(lfts);
  for (size_t h = 0; h < t.hosts.size(); ++h)
    for (size_t p = 0; p < t.hosts[h].ports.size(); ++p)
      sn.ports.push_back({t.hosts[h].ports[p].ca_guid, t.hosts[h].ports[p].port, lid[h][p], 0});
  t.routes.subnets.push_back(std::move(sn));
  t.routes.canonicalize();
}

}  // namespace enginetest
