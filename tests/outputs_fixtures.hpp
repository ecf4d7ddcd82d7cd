// SPDX-License-Identifier: GPL-2.0-or-later
// Hand-built classified topologies for the output tests (independent of classify(), so that the
// outputs are tested against values written down by hand). Each builder says what it models.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "topology.hpp"

namespace fixtures {

using namespace topoaware;

struct Builder {
  Topology t;
  uint64_t next_guid = 0x1000;

  int sw(const std::string &name, int level) {
    Switch s;
    s.guid = next_guid++;
    s.name = name;
    s.desc = name;
    s.nports = 40;
    s.level = level;
    t.switches.push_back(s);
    t.max_level = std::max(t.max_level, level);
    return static_cast<int>(t.switches.size()) - 1;
  }
  // A host with one HCA per leaf in `leaves` (rail r on leaves[r]); the first is its leaf.
  int host(const std::string &name, std::vector<int> leaves, int width = 4, LinkSpeed speed = LinkSpeed::HDR) {
    Host h;
    h.name = name;
    for (size_t r = 0; r < leaves.size(); ++r) {
      HcaPort p;
      p.ca_guid = next_guid++;
      p.port_guid = p.ca_guid;
      p.port = 1;
      p.device = "mlx5_" + std::to_string(r);
      p.rail = static_cast<int>(r);
      p.sw = leaves[r];
      Switch &s = t.switches[static_cast<size_t>(leaves[r])];
      p.sw_port = static_cast<int>(s.hosts.size()) + 1;
      p.width = width;
      p.speed = speed;
      h.ports.push_back(p);
      s.hosts.push_back(static_cast<int>(t.hosts.size()));
      link(p.ca_guid, s.guid, 1, width, speed);
    }
    h.leaf = leaves.empty() ? -1 : leaves[0];
    t.hosts.push_back(h);
    return static_cast<int>(t.hosts.size()) - 1;
  }
  void link(uint64_t a, uint64_t b, int cables, int width = 4, LinkSpeed speed = LinkSpeed::HDR) {
    Link l;
    l.a = std::min(a, b);
    l.b = std::max(a, b);
    for (int c = 0; c < cables; ++c) l.ports.push_back({c + 1, c + 1});
    l.width = width;
    l.speed = speed;
    t.links.push_back(l);
  }
  void up(int lower, int upper, int cables = 1, int width = 4, LinkSpeed speed = LinkSpeed::HDR) {
    link(t.switches[static_cast<size_t>(lower)].guid, t.switches[static_cast<size_t>(upper)].guid, cables, width,
         speed);
  }
  int group(std::vector<int> leaves, int pod = -1) {
    LeafGroup g;
    g.leaves = leaves;
    g.pod = pod;
    int gi = static_cast<int>(t.leaf_groups.size());
    for (int l : leaves) {
      t.switches[static_cast<size_t>(l)].leaf_group = gi;
      t.switches[static_cast<size_t>(l)].pod = pod;
      for (int h : t.switches[static_cast<size_t>(l)].hosts)
        if (std::find(g.hosts.begin(), g.hosts.end(), h) == g.hosts.end()) g.hosts.push_back(h);
    }
    for (int h : g.hosts) {
      t.hosts[static_cast<size_t>(h)].leaf_group = gi;
      t.hosts[static_cast<size_t>(h)].pod = pod;
    }
    t.leaf_groups.push_back(g);
    return gi;
  }
};

inline std::string num(const char *prefix, int i, int width) {
  std::string s = std::to_string(i);
  while (static_cast<int>(s.size()) < width) s.insert(0, "0");
  return prefix + s;
}

// 2-level fat tree: leaf01 (n01-n04) and leaf02 (n05-n08), spine1 and spine2, every leaf with 2
// cables to each spine (leaf02-spine2 at EDR: a slow pair). Also a switch nobody reaches
// ("orphan", level 0) and a host with no leaf ("lost1").
inline Topology fat_tree() {
  Builder b;
  int l1 = b.sw("leaf01", 1), l2 = b.sw("leaf02", 1);
  int s1 = b.sw("spine1", 2), s2 = b.sw("spine2", 2);
  b.sw("orphan", 0);
  for (int i = 1; i <= 8; ++i) b.host(num("n", i, 2), {i <= 4 ? l1 : l2});
  b.host("lost1", {});
  b.up(l1, s1, 2);
  b.up(l1, s2, 2);
  b.up(l2, s1, 2);
  b.up(l2, s2, 2, 4, LinkSpeed::EDR);
  b.group({l1});
  b.group({l2});
  b.t.levels = {{1, 2, 1.0, 2.0, 1.5}, {2, 2, 0, 0, 0}};
  b.t.anomalies.push_back({"slow-link", "leaf02", "link leaf02 - spine2 runs at EDR, its peers at HDR"});
  b.t.ignored.push_back({0xabc, "Mellanox Technologies Aggregation Node", "", "SHARP Aggregation Node"});
  b.t.hash = "sha256:0123abcd";
  return b.t;
}

// 3 levels: pods 0 and 1, each with two leaves of 2 hosts and one spine; two cores above.
// Switch order (canonical): leaves, spines, cores.
inline Topology pods() {
  Builder b;
  int lv[4];
  for (int i = 0; i < 4; ++i) lv[i] = b.sw(num("leaf", i + 1, 1), 1);
  int sp0 = b.sw("spine-p0", 2), sp1 = b.sw("spine-p1", 2);
  int c1 = b.sw("core1", 3), c2 = b.sw("core2", 3);
  for (int i = 0; i < 8; ++i) b.host(num("gpu", i + 1, 3), {lv[i / 2]});
  b.up(lv[0], sp0);
  b.up(lv[1], sp0);
  b.up(lv[2], sp1);
  b.up(lv[3], sp1);
  for (int s : {sp0, sp1})
    for (int c : {c1, c2}) b.up(s, c);
  b.group({lv[0]}, 0);
  b.group({lv[1]}, 0);
  b.group({lv[2]}, 1);
  b.group({lv[3]}, 1);
  b.t.pods = {{{0, 1}, {sp0}}, {{2, 3}, {sp1}}};
  b.t.switches[static_cast<size_t>(sp0)].pod = 0;
  b.t.switches[static_cast<size_t>(sp1)].pod = 1;
  b.t.hash = "sha256:pods";
  return b.t;
}

// Rail-optimized: 2 rails, 2 scalable units. Unit 1 = r0-leaf01 + r1-leaf01 with n[1-3], unit 2 =
// r0-leaf02 + r1-leaf02 with n[4-6]; each rail's leaves go up to that rail's spine.
inline Topology rail() {
  Builder b;
  int a0 = b.sw("r0-leaf01", 1), a1 = b.sw("r1-leaf01", 1);
  int b0 = b.sw("r0-leaf02", 1), b1 = b.sw("r1-leaf02", 1);
  int sp0 = b.sw("r0-spine", 2), sp1 = b.sw("r1-spine", 2);
  for (int i = 1; i <= 6; ++i) {
    if (i <= 3)
      b.host(num("n", i, 1), {a0, a1});
    else
      b.host(num("n", i, 1), {b0, b1});
  }
  b.up(a0, sp0);
  b.up(b0, sp0);
  b.up(a1, sp1);
  b.up(b1, sp1);
  b.group({a0, a1});
  b.group({b0, b1});
  b.t.rail_optimized = true;
  b.t.hash = "sha256:rail";
  return b.t;
}

// Dragonfly: 3 groups of 2 routers (all-to-all inside a group, one global link between groups),
// 2 hosts per router; every router is a leaf and its own leaf group.
inline Topology dragonfly() {
  Builder b;
  int r[6];
  for (int i = 0; i < 6; ++i) r[i] = b.sw(num("rtr", i + 1, 2), 1);
  for (int i = 0; i < 12; ++i) b.host(num("c", i + 1, 2), {r[i / 2]});
  for (int g = 0; g < 3; ++g) b.up(r[2 * g], r[2 * g + 1], 2);
  b.up(r[1], r[2]);
  b.up(r[3], r[4]);
  b.up(r[5], r[0]);
  for (int i = 0; i < 6; ++i) b.group({r[i]});
  for (int g = 0; g < 3; ++g) {
    DragonflyGroup d;
    d.switches = {r[2 * g], r[2 * g + 1]};
    for (int h = 4 * g; h < 4 * g + 4; ++h) {
      d.hosts.push_back(h);
      b.t.hosts[static_cast<size_t>(h)].dragonfly_group = g;
    }
    b.t.switches[static_cast<size_t>(r[2 * g])].dragonfly_group = g;
    b.t.switches[static_cast<size_t>(r[2 * g + 1])].dragonfly_group = g;
    b.t.dragonfly_groups.push_back(d);
  }
  b.t.hash = "sha256:df";
  return b.t;
}

// A wide 2-level tree with names that do not compress (GUID-like): `leaves` leaves of
// `hosts_per_leaf` hosts and 2 spines, for line-length checks against a real slurmctld.
inline Topology wide(int leaves, int hosts_per_leaf) {
  Builder b;
  std::vector<int> lv;
  for (int i = 0; i < leaves; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "S-0008f1%010xa", 0x50020369u + 7919u * static_cast<unsigned>(i));
    lv.push_back(b.sw(name, 1));
  }
  int s1 = b.sw("spine1", 2), s2 = b.sw("spine2", 2);
  int h = 0;
  for (int i = 0; i < leaves; ++i)
    for (int k = 0; k < hosts_per_leaf; ++k, ++h) b.host(num("w", h * 3 + 1, 4), {lv[static_cast<size_t>(i)]});
  for (int l : lv) {
    b.up(l, s1);
    b.up(l, s2);
    b.group({l});
  }
  b.t.hash = "sha256:wide";
  return b.t;
}

}  // namespace fixtures
