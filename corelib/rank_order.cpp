// SPDX-License-Identifier: GPL-2.0-or-later
// Rank order (see rank_order.hpp).
#include "rank_order.hpp"

#include "route_trace.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace topoaware {

namespace {
// The rank order's hash of a node set (FNV-style over the host indices in canonical order).
constexpr uint64_t kHashSeed = 0x9e3779b97f4a7c15ULL, kHashMul = 0x100000001b3ULL;
}  // namespace

TopoIndex::TopoIndex(const Topology &topo) : topo_(&topo) {
  // Switch GUID -> index for the link walks below (Topology::switch_index scans: quadratic over
  // a fabric's links); dropped once the index is built.
  switch_by_guid_.reserve(topo.switches.size());
  for (size_t i = 0; i < topo.switches.size(); ++i) switch_by_guid_.emplace(topo.switches[i].guid, int(i));
  leaf_groups();
  pods();
  leaf_uplinks();
  lg_class_begin_.assign(lg_hosts_.size() + 1, 0);
  for (size_t g = 0; g < lg_hosts_.size(); ++g) lg_class_begin_[g + 1] = lg_class_begin_[g] + uint32_t(lg_uplinks_[g]);
  entry_classes();
  class_size_.assign(lg_class_begin_.back(), 0);
  for (size_t g = 0; g < lg_hosts_.size(); ++g)
    for (int h : lg_hosts_[g])
      for (uint16_t c : host_entry_classes(h)) ++class_size_[lg_class_begin_[g] + c];
  canonical_order();
  nvlink_domains();
  route_paths();
  std::unordered_map<uint64_t, int>().swap(switch_by_guid_);
}

int TopoIndex::switch_of(uint64_t guid) const {
  const auto it = switch_by_guid_.find(guid);
  return it == switch_by_guid_.end() ? -1 : it->second;
}

// Each host's leaf and leaf group. Leaf groups of the topology keep their indices; hosts without
// one get their own after them. A leaf group's pod: its topology pod, or the "no pod" pod after them.
void TopoIndex::leaf_groups() {
  const Topology &topo = *topo_;
  const size_t nh = topo.hosts.size();
  const int real_pods = int(topo.pods.size());
  host_lg_.assign(nh, -1);
  host_leaf_.assign(nh, -1);
  lg_hosts_.assign(topo.leaf_groups.size(), {});
  lg_pod_.assign(topo.leaf_groups.size(), -1);
  for (size_t g = 0; g < topo.leaf_groups.size(); ++g) {
    const int p = topo.leaf_groups[g].pod;
    lg_pod_[g] = (p >= 0 && p < real_pods) ? p : real_pods;  // real_pods = the "no pod" pod
  }
  for (size_t h = 0; h < nh; ++h) {
    const Host &host = topo.hosts[h];
    host_leaf_[h] = host.leaf;
    int g = host.leaf_group;
    if (g < 0 || size_t(g) >= topo.leaf_groups.size()) {
      g = int(lg_hosts_.size());
      lg_hosts_.emplace_back();
      lg_pod_.push_back(real_pods);
    }
    host_lg_[h] = g;
    lg_hosts_[size_t(g)].push_back(int(h));  // ascending host index = natural name order
  }
}

// The pods' leaf groups and sizes (after islands, which may give pods of their own), the largest
// leaf group and pod, and each pod's part.
void TopoIndex::pods() {
  const int real_pods = int(topo_->pods.size());
  const bool no_pod_used = std::find(lg_pod_.begin(), lg_pod_.end(), real_pods) != lg_pod_.end();
  int npods = real_pods + (no_pod_used ? 1 : 0);
  islands();  // may give the leaf groups of a pod that lie in another part pods of their own
  for (int p : lg_pod_) npods = std::max(npods, p + 1);
  pod_lgs_.assign(size_t(npods), {});
  pod_size_.assign(pod_lgs_.size(), 0);
  for (size_t g = 0; g < lg_hosts_.size(); ++g) {
    pod_lgs_[size_t(lg_pod_[g])].push_back(int(g));
    pod_size_[size_t(lg_pod_[g])] += int(lg_hosts_[g].size());
    max_lg_size_ = std::max(max_lg_size_, int(lg_hosts_[g].size()));
  }
  for (int s : pod_size_) max_pod_size_ = std::max(max_pod_size_, s);
  pod_island_.assign(pod_lgs_.size(), -1);
  for (size_t p = 0; p < pod_lgs_.size(); ++p)
    for (int g : pod_lgs_[p])
      if (lg_island_[size_t(g)] >= 0) {
        pod_island_[p] = lg_island_[size_t(g)];
        break;
      }
}

// Uplink cables of every leaf switch (cables to a switch of a higher level), and their
// bandwidth by each cable's width and speed; cables of unknown width or speed apart. Each leaf
// group's uplinks are those of its first host's leaf; uplink_factors weighs their bandwidth.
void TopoIndex::leaf_uplinks() {
  const Topology &topo = *topo_;
  std::vector<int> up(topo.switches.size(), 0), up_unknown(topo.switches.size(), 0);
  std::vector<double> up_gbps(topo.switches.size(), 0);
  std::map<double, int> cable_gbps;  // known uplink cable bandwidths, counted
  for (const Link &l : topo.links) {
    const int a = switch_of(l.a), b = switch_of(l.b);
    if (a < 0 || b < 0) continue;
    const int la = topo.switches[size_t(a)].level, lb = topo.switches[size_t(b)].level;
    const int leaf = la == 1 && lb > 1 ? a : (lb == 1 && la > 1 ? b : -1);
    if (leaf < 0) continue;
    up[size_t(leaf)] += l.cables();
    if (l.gbps() > 0) {
      cable_gbps[l.gbps()] += l.cables();
      up_gbps[size_t(leaf)] += l.gbps() * l.cables();
    } else {
      up_unknown[size_t(leaf)] += l.cables();
    }
  }
  // A cable of unknown width or speed counts at the most common uplink cable's bandwidth.
  double usual_cable = 0;
  int usual_count = 0;
  for (const auto &[gbps, count] : cable_gbps)
    if (count >= usual_count) usual_cable = gbps, usual_count = count;
  for (size_t s = 0; s < up_gbps.size(); ++s) up_gbps[s] += up_unknown[s] * usual_cable;
  lg_uplinks_.assign(lg_hosts_.size(), 1);
  for (size_t g = 0; g < lg_hosts_.size(); ++g) {
    if (lg_hosts_[g].empty()) continue;
    const int leaf = host_leaf_[size_t(lg_hosts_[g].front())];
    if (leaf >= 0 && size_t(leaf) < up.size() && up[size_t(leaf)] > 0) lg_uplinks_[g] = up[size_t(leaf)];
  }
  uplink_factors(up_gbps);
}

// Canonical order: pod, leaf group, leaf, host index (hosts are sorted by natural name order);
// each leaf group's hosts in it, and the hosts by name.
void TopoIndex::canonical_order() {
  const Topology &topo = *topo_;
  const size_t nh = topo.hosts.size();
  std::vector<int> order(nh);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [this](int a, int b) {
    return std::make_tuple(host_pod(a), host_lg_[size_t(a)], host_leaf_[size_t(a)], a) <
           std::make_tuple(host_pod(b), host_lg_[size_t(b)], host_leaf_[size_t(b)], b);
  });
  canon_.assign(nh, 0);
  for (size_t i = 0; i < nh; ++i) canon_[size_t(order[i])] = uint32_t(i);
  lg_canon_hosts_.assign(lg_hosts_.size(), {});
  for (size_t g = 0; g < lg_hosts_.size(); ++g) lg_canon_hosts_[g].reserve(lg_hosts_[g].size());
  for (int h : order) lg_canon_hosts_[size_t(host_lg_[size_t(h)])].push_back(h);
  by_name_.reserve(nh);
  for (size_t h = 0; h < nh; ++h) by_name_.emplace(topo.hosts[h].name, int(h));
}

// NVLink domains of several hosts, numbered by their first host in canonical order; a host in
// two keeps the first.
void TopoIndex::nvlink_domains() {
  const Topology &topo = *topo_;
  const size_t nh = topo.hosts.size();
  host_domain_.assign(nh, -1);
  std::vector<std::pair<uint32_t, size_t>> first;  // (first host's canonical rank, topology domain)
  for (size_t d = 0; d < topo.nvlink_domains.size(); ++d) {
    const auto &hs = topo.nvlink_domains[d].hosts;
    if (hs.size() < 2) continue;
    uint32_t lo = UINT32_MAX;
    for (int h : hs)
      if (h >= 0 && size_t(h) < nh) lo = std::min(lo, canon_[size_t(h)]);
    if (lo != UINT32_MAX) first.emplace_back(lo, d);
  }
  std::sort(first.begin(), first.end());
  for (const auto &[lo, d] : first) {
    std::vector<int> hs;
    for (int h : topo.nvlink_domains[d].hosts)
      if (h >= 0 && size_t(h) < nh && host_domain_[size_t(h)] < 0) hs.push_back(h);
    if (hs.size() < 2) continue;
    std::sort(hs.begin(), hs.end(), [this](int a, int b) { return canon_[size_t(a)] < canon_[size_t(b)]; });
    for (int h : hs) host_domain_[size_t(h)] = int(domain_hosts_.size());
    max_domain_size_ = std::max(max_domain_size_, int(hs.size()));
    domain_hosts_.push_back(std::move(hs));
  }
}

// Entry classes. A split part of a job enters a leaf group at its first host: the ring edges into
// it come down the leaf's uplink cables, one per NIC of the host (NCCL gives each NIC its own ring),
// and which ones the recorded forwarding tables say (a switch forwards by destination LID; OpenSM's
// ftree gives each destination one spine whatever the source, minhop and updn balance each switch
// on its own). The class of a NIC is the position, among its host's rail-0 leaf's uplink ports, of
// the port that traffic to the NIC's LID enters the leaf by: the most common one over routes from
// up to kEntrySources other leaves. A host's classes are those of its NICs on that leaf, its rail-0
// NIC's first (host_uplink_mod, 0 when the tables do not give it): nothing is assumed of how a
// subnet manager spreads one host's LIDs over the uplinks. Cost: kEntrySources traces (a few hops
// each) per NIC on a leaf, at load time. Without recorded routes nothing is known of it, every
// host is in class 0 and has no classes listed: the rank order then hands hosts out in canonical
// order (it never guesses a routing from names or indexes, which a fabric cabled in another order,
// or a subnet manager that assigns LIDs in its own order, would prove wrong).
void TopoIndex::entry_classes() {
  const Topology &t = *topo_;
  const size_t nh = host_lg_.size();
  host_mod_.assign(nh, 0);
  host_entry_begin_.assign(nh + 1, 0);
  host_entry_.clear();
  lg_entry_stride_.assign(lg_hosts_.size(), 1);
  entry_classes_ = false;
  if (t.routes.empty()) return;
  // The stride: a host's NICs on its rail-0 leaf, the most common count over the group's hosts.
  for (size_t g = 0; g < lg_hosts_.size(); ++g) {
    std::map<uint32_t, uint32_t> counts;
    for (int h : lg_hosts_[g]) {
      const Host &host = t.hosts[size_t(h)];
      uint32_t on_leaf = 0;
      for (const HcaPort &p : host.ports) on_leaf += p.sw == host_leaf_[size_t(h)];
      if (on_leaf > 0) ++counts[on_leaf];
    }
    uint32_t most = 0;
    for (const auto &[r, n] : counts)
      if (n > most) lg_entry_stride_[g] = r, most = n;
  }
  constexpr int kEntrySources = 4;
  std::vector<std::vector<int>> up_ports(t.switches.size());
  std::map<std::pair<int, int>, uint32_t> far;  // (leaf, uplink port) -> the switch at its other end
  for (const Link &l : t.links) {
    const int a = switch_of(l.a), b = switch_of(l.b);
    if (a < 0 || b < 0) continue;
    const int la = t.switches[size_t(a)].level, lb = t.switches[size_t(b)].level;
    for (const auto &[pa, pb] : l.ports) {
      if (la == 1 && lb > 1) up_ports[size_t(a)].push_back(pa), far[{a, pa}] = uint32_t(b);
      if (lb == 1 && la > 1) up_ports[size_t(b)].push_back(pb), far[{b, pb}] = uint32_t(a);
    }
  }
  for (auto &p : up_ports) std::sort(p.begin(), p.end());
  // The switch each class's cable comes from (the group's rail-0 leaf's uplink of that position).
  class_switch_.assign(lg_class_begin_.back(), kNoSwitch);
  for (size_t g = 0; g < lg_hosts_.size(); ++g) {
    if (lg_hosts_[g].empty()) continue;
    const int leaf = host_leaf_[size_t(lg_hosts_[g].front())];
    if (leaf < 0) continue;
    const auto &ups = up_ports[size_t(leaf)];
    for (uint32_t c = 0; c < uint32_t(lg_uplinks_[g]) && c < ups.size(); ++c)
      class_switch_[lg_class_begin_[g] + c] = far[{leaf, ups[c]}];
  }
  std::vector<int> sources;  // the first host of each leaf, in host order
  std::vector<char> seen(t.switches.size(), 0);
  for (size_t h = 0; h < nh; ++h) {
    const int leaf = host_leaf_[h];
    if (leaf >= 0 && !seen[size_t(leaf)] && !t.hosts[h].ports.empty()) seen[size_t(leaf)] = 1, sources.push_back(int(h));
  }
  const RouteTracer tracer(t);
  std::map<int, int> votes;
  // The class of port `p` of host h on `leaf` (-1 if the tables do not give it).
  const auto nic_class = [&](size_t h, int leaf, int p) {
    votes.clear();
    int asked = 0;
    for (int src : sources) {
      if (host_leaf_[size_t(src)] == leaf) continue;
      const TracedRoute r = tracer.trace(src, 0, int(h), p);
      if (r.ok() && !r.hops.empty() && r.hops.back().sw == leaf) ++votes[r.hops.back().in_port];
      if (++asked == kEntrySources) break;
    }
    int port = -1, most = 0;
    for (const auto &[q, n] : votes)
      if (n > most) port = q, most = n;
    const auto &ups = up_ports[size_t(leaf)];
    const auto it = std::lower_bound(ups.begin(), ups.end(), port);
    if (port < 0 || it == ups.end() || *it != port) return -1;
    // a leaf has at most 255 ports, so the class fits host_entry_'s 16 bits
    return int((uint32_t(it - ups.begin()) % uint32_t(lg_uplinks_[size_t(host_lg_[h])])) & 0xffff);
  };
  for (size_t h = 0; h < nh; ++h) {
    host_entry_begin_[h] = uint32_t(host_entry_.size());
    const int leaf = host_leaf_[h];
    const auto &ports = t.hosts[h].ports;
    if (leaf < 0 || ports.empty() || up_ports[size_t(leaf)].size() < 2) continue;
    const int c0 = nic_class(h, leaf, 0);
    if (c0 >= 0) host_mod_[h] = uint32_t(c0), entry_classes_ = true;
    host_entry_.push_back(uint16_t(host_mod_[h]));
    for (size_t p = 1; p < ports.size(); ++p)
      if (ports[p].sw == leaf)
        if (const int c = nic_class(h, leaf, int(p)); c >= 0) host_entry_.push_back(uint16_t(c));
  }
  host_entry_begin_[nh] = uint32_t(host_entry_.size());
}

// walk_path's tables, from the recorded forwarding tables and the cabling: linear in the switches'
// ports, the links and the hosts' ports. Nothing without routes (has_paths() is then false).
void TopoIndex::route_paths() {
  const Topology &t = *topo_;
  if (t.routes.empty()) return;
  const size_t ns = t.switches.size(), nh = t.hosts.size();
  sw_lft_.assign(ns, nullptr);
  sw_subnet_.assign(ns, -1);
  for (size_t n = 0; n < t.routes.subnets.size(); ++n)
    for (const SwitchLft &lft : t.routes.subnets[n].switches) {
      const int s = switch_of(lft.guid);
      if (s < 0) continue;  // a switch classification left out (never one on a host's path)
      sw_lft_[size_t(s)] = &lft.out;
      sw_subnet_[size_t(s)] = int(n);
    }
  // Ports per switch: its port count, or more where a cable says so (a hand-built topology).
  std::vector<uint32_t> nports(ns, 0);
  for (size_t s = 0; s < ns; ++s) nports[s] = uint32_t(std::clamp(t.switches[s].nports, 0, 254));
  const auto see = [&](int s, int port) {
    if (s >= 0 && size_t(s) < ns && port > 0 && port < 255) nports[size_t(s)] = std::max(nports[size_t(s)], uint32_t(port));
  };
  for (const Link &l : t.links)
    for (const auto &[pa, pb] : l.ports) see(switch_of(l.a), pa), see(switch_of(l.b), pb);
  for (const Host &h : t.hosts)
    for (const HcaPort &p : h.ports) see(p.sw, p.sw_port);
  sw_port_begin_.assign(ns + 1, 0);
  for (size_t s = 0; s < ns; ++s) sw_port_begin_[s + 1] = sw_port_begin_[s] + nports[s] + 1;  // port 0 too
  cable_next_.assign(sw_port_begin_.back(), -1);
  for (const Link &l : t.links) {
    const int a = switch_of(l.a), b = switch_of(l.b);
    if (a < 0 || b < 0) continue;
    for (const auto &[pa, pb] : l.ports) {
      if (pa > 0 && uint32_t(pa) <= nports[size_t(a)]) cable_next_[sw_port_begin_[size_t(a)] + uint32_t(pa)] = b;
      if (pb > 0 && uint32_t(pb) <= nports[size_t(b)]) cable_next_[sw_port_begin_[size_t(b)] + uint32_t(pb)] = a;
    }
  }
  nic_begin_.assign(nh + 1, 0);
  for (size_t h = 0; h < nh; ++h) nic_begin_[h + 1] = nic_begin_[h] + uint32_t(t.hosts[h].ports.size());
  nic_sw_.assign(nic_begin_.back(), -1);
  nic_subnet_.assign(nic_begin_.back(), -1);
  nic_lid_.assign(nic_begin_.back(), 0);
  for (size_t h = 0; h < nh; ++h)
    for (size_t p = 0; p < t.hosts[h].ports.size(); ++p) {
      const HcaPort &hp = t.hosts[h].ports[p];
      const uint32_t i = nic_begin_[h] + uint32_t(p);
      if (hp.sw < 0 || size_t(hp.sw) >= ns || hp.sw_port <= 0 || uint32_t(hp.sw_port) > nports[size_t(hp.sw)]) continue;
      nic_sw_[i] = hp.sw;
      const int n = sw_subnet_[size_t(hp.sw)];
      if (n < 0) continue;
      if (const PortLid *pl = t.routes.subnets[size_t(n)].find_port(hp.ca_guid, hp.port)) {
        nic_lid_[i] = pl->base_lid;  // NCCL's queue pairs use the base LID
        nic_subnet_[i] = n;
      }
    }
}

// Degraded uplinks. A leaf's real uplink bandwidth is the sum of its uplink cables' width x
// speed; the nominal one is the most common real value among the leaves that have uplinks (the
// larger on a tie), so a leaf that lost cables (a "missing-uplink" anomaly) or whose cables trained
// down (a "slow-link": 4x -> 2x, NDR -> HDR) is below it, and a fabric built thinner everywhere is
// not (its oversubscription says so already). A leaf group's factor is nominal / real of its worst
// leaf: a collective split evenly over the rails ends when the slowest rail does. A leaf without
// any uplink (a dragonfly router, a single-switch fabric, a leaf linked only sideways) is not
// judged: its traffic leaves by cables this model does not weigh. Error counters are not used:
// they count since the last reset without a time base, and a cable that errs badly enough to
// lose bandwidth retrains to a narrower width or lower speed, or goes down, which is seen here.
void TopoIndex::uplink_factors(const std::vector<double> &up_gbps) {
  const Topology &t = *topo_;
  std::map<double, int> count;
  for (size_t s = 0; s < t.switches.size(); ++s)
    if (t.switches[s].level == 1 && up_gbps[s] > 0) ++count[up_gbps[s]];
  double nominal = 0;
  int n = 0;
  for (const auto &[gbps, c] : count)
    if (c >= n) nominal = gbps, n = c;
  lg_up_factor_.assign(lg_hosts_.size(), 1.0);
  degraded_ = false;
  if (nominal <= 0) return;
  auto leaf_factor = [&](int s) {
    if (s < 0 || size_t(s) >= up_gbps.size() || t.switches[size_t(s)].level != 1) return 1.0;
    const double real = up_gbps[size_t(s)];
    return real > 0 && real < nominal ? nominal / real : 1.0;
  };
  for (size_t g = 0; g < lg_hosts_.size(); ++g) {
    double f = 1;
    if (g < t.leaf_groups.size())
      for (int s : t.leaf_groups[g].leaves) f = std::max(f, leaf_factor(s));
    else if (!lg_hosts_[g].empty())
      f = leaf_factor(host_leaf_[size_t(lg_hosts_[g].front())]);
    lg_up_factor_[g] = f;
    degraded_ = degraded_ || f > 1;
  }
}

// Union-find over the switches (path halving, the smaller index as the root): near-linear in the
// switches, the links and the hosts' ports; the GUIDs are looked up in a hash map.
void TopoIndex::islands() {
  const Topology &t = *topo_;
  const size_t ns = t.switches.size(), nh = host_lg_.size();
  std::vector<int> root(ns);
  std::iota(root.begin(), root.end(), 0);
  const auto find = [&root](int x) {
    while (root[size_t(x)] != x) x = root[size_t(x)] = root[size_t(root[size_t(x)])];
    return x;
  };
  const auto unite = [&](int a, int b) {
    a = find(a), b = find(b);
    if (a != b) root[size_t(std::max(a, b))] = std::min(a, b);
  };
  const auto is_switch = [ns](int s) { return s >= 0 && size_t(s) < ns; };
  std::unordered_map<uint64_t, int> by_guid;
  by_guid.reserve(ns);
  for (size_t s = 0; s < ns; ++s) by_guid.emplace(t.switches[s].guid, int(s));
  bool linked = false;
  for (const Link &l : t.links) {
    const auto a = by_guid.find(l.a), b = by_guid.find(l.b);
    if (l.cables() == 0 || a == by_guid.end() || b == by_guid.end()) continue;
    unite(a->second, b->second);
    linked = true;
  }
  for (const Host &h : t.hosts)
    if (is_switch(h.leaf))
      for (const HcaPort &port : h.ports)
        if (is_switch(port.sw)) unite(h.leaf, port.sw);
  // Parts numbered by their first host.
  host_island_.assign(nh, 0);
  island_hosts_.clear();
  std::vector<int> part_of_root(ns, -1);
  const auto new_part = [this] {
    island_hosts_.push_back(0);
    return int(island_hosts_.size()) - 1;
  };
  for (size_t h = 0; h < nh; ++h) {
    int part;
    if (!linked) {
      part = island_hosts_.empty() ? new_part() : 0;
    } else if (is_switch(host_leaf_[h])) {
      int &r = part_of_root[size_t(find(host_leaf_[h]))];
      if (r < 0) r = new_part();
      part = r;
    } else {
      part = new_part();
    }
    host_island_[h] = part;
    ++island_hosts_[size_t(part)];
  }
  lg_island_.assign(lg_hosts_.size(), -1);
  for (size_t g = 0; g < lg_hosts_.size(); ++g)
    if (!lg_hosts_[g].empty()) lg_island_[g] = host_island_[size_t(lg_hosts_[g].front())];
  if (island_hosts_.size() < 2) return;
  // A pod keeps its leaf groups in the part of its first one with hosts; those in another part
  // form a pod per (pod, part), numbered after every pod in the order of their first leaf group.
  int npods = 0;
  for (int p : lg_pod_) npods = std::max(npods, p + 1);
  std::vector<int> home(size_t(npods), -1);
  for (size_t g = 0; g < lg_pod_.size(); ++g)
    if (lg_island_[g] >= 0 && home[size_t(lg_pod_[g])] < 0) home[size_t(lg_pod_[g])] = lg_island_[g];
  std::map<std::pair<int, int>, int> extra;  // (pod, part) -> its pod
  for (size_t g = 0; g < lg_pod_.size(); ++g) {
    const int p = lg_pod_[g], part = lg_island_[g];
    if (part < 0 || part == home[size_t(p)]) continue;
    lg_pod_[g] = extra.emplace(std::make_pair(p, part), npods + int(extra.size())).first->second;
  }
}

int TopoIndex::find_host(const std::string &name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

JobGeometry job_geometry(const Layout &l, uint32_t nodes) { return job_geometry(l, nodes, false); }

JobGeometry job_geometry(const Layout &l, uint32_t nodes, bool multi_node_tp) {
  validate_layout(l);
  if (nodes == 0) throw LayoutError("a job needs at least one node");
  const uint64_t W = l.world();
  if (W % nodes != 0)
    throw LayoutError("the layout's " + std::to_string(W) + " ranks do not spread evenly over " +
                      std::to_string(nodes) + " nodes");
  JobGeometry g;
  g.nodes = nodes;
  g.gpus_per_node = uint32_t(W / nodes);
  // Spanning nodes: whole nodes per TP group (which domains hold them is the callers' check).
  if (multi_node_tp && g.gpus_per_node && l.tp > g.gpus_per_node) {
    if (l.tp % g.gpus_per_node != 0)
      throw LayoutError("tp=" + std::to_string(l.tp) + " is more than the " + std::to_string(g.gpus_per_node) +
                            " GPUs per node but not a multiple of them, so a node would hold parts of two TP groups",
                        RequestPart::Gpus);
  } else {
    validate_tp_fits(l, g.gpus_per_node);
  }
  // The contiguous block of ranks of one talkative group: a DP ring under Megatron's order, a PP
  // chain under tp-pp-dp (see the header).
  const uint64_t block = l.order == RankOrder::TpCpEpDpPp ? uint64_t(l.tp) * l.cp * l.dp
                                                           : uint64_t(l.tp) * l.cp * l.pp;
  const uint64_t G = g.gpus_per_node;
  const uint64_t lcm = block / std::gcd(block, G) * G;  // divides W: block | W and G | W
  g.segment_nodes = uint32_t(lcm / G);
  g.ep_unit_nodes = ep_unit_nodes(l, g.gpus_per_node);
  return g;
}

uint32_t ep_unit_nodes(const Layout &l, uint32_t gpus_per_node) {
  if (l.ep <= 1 || gpus_per_node == 0) return 1;
  uint64_t ranks;  // R: the aligned block of whole EP groups (rank_order.hpp)
  if (l.order == RankOrder::TpCpEpDpPp || l.cp % l.ep == 0)
    ranks = uint64_t(l.tp) * l.ep;
  else
    ranks = uint64_t(l.tp) * l.cp * l.pp * (l.ep / std::gcd(l.ep, l.cp));
  return uint32_t(ranks / std::gcd(ranks, uint64_t(gpus_per_node)));  // lcm(R, G) / G
}


RankCoord rank_coord(const Layout &l, uint32_t rank) {
  RankCoord c;
  uint32_t r = rank;
  c.tp = r % l.tp;
  r /= l.tp;
  c.cp = r % l.cp;
  r /= l.cp;
  if (l.order == RankOrder::TpCpEpDpPp) {
    c.dp = r % l.dp;
    c.pp = r / l.dp;
  } else {
    c.pp = r % l.pp;
    c.dp = r / l.pp;
  }
  const uint32_t q = c.cp + l.cp * c.dp;  // combined (cp, dp) index: expert groups fold both
  c.ep = q % l.ep;
  c.edp = q / l.ep;
  return c;
}

uint32_t rank_of(const Layout &l, const RankCoord &c) {
  const uint32_t outer = l.order == RankOrder::TpCpEpDpPp ? c.dp + l.dp * c.pp : c.pp + l.pp * c.dp;
  return c.tp + l.tp * (c.cp + l.cp * outer);
}

void sort_keys(std::vector<uint64_t> &keys, std::vector<uint64_t> &tmp) {
  const size_t n = keys.size();
  if (n < 48) {  // insertion sort territory: std::sort is as fast
    std::sort(keys.begin(), keys.end());
    return;
  }
  uint64_t differ = 0;
  for (uint64_t k : keys) differ |= k ^ keys[0];
  tmp.resize(n);
  uint64_t *src = keys.data(), *dst = tmp.data();
  for (unsigned shift = 0; shift < 64; shift += 8) {
    if (!(differ >> shift & 0xff)) continue;  // a byte equal in every key orders nothing
    uint32_t at[256] = {};
    for (size_t i = 0; i < n; ++i) ++at[src[i] >> shift & 0xff];
    uint32_t sum = 0;
    for (uint32_t &a : at) {
      const uint32_t c = a;
      a = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; ++i) dst[at[src[i] >> shift & 0xff]++] = src[i];
    std::swap(src, dst);
  }
  if (src != keys.data()) std::copy(src, src + n, keys.data());
}

namespace {

// Forms `nsegs` segments of `seg` nodes from a pool of remainders, pool[from..] (count > 0 each,
// sorted by piece, i.e. canonical order; together at least nsegs * seg nodes). Each segment: first the
// largest remainder (fewest leaf groups); then, while nodes are missing, the smallest remainder
// that completes the segment (best fit, so large remainders stay whole for later segments), else
// the largest. Ties go to the earlier piece. Appends the segments to out and leaves the unused
// remainders in pool[from..], still sorted by piece.
// The pool is kept sorted by (count, piece), so each choice is a binary search: the first entry
// at or above (need, 0) is the smallest sufficient remainder and the earliest of its size, the
// first entry at (largest count, 0) the earliest largest one (a linear scan per choice was the
// engine's largest cost for jobs of thousands of nodes, whose segments span many leaf groups).
void form_segments(std::vector<SegmentPart> &pool, size_t from, uint32_t seg, uint64_t nsegs, Packing &out,
                   PackScratch &scratch) {
  std::vector<uint64_t> &by_size = scratch.by_size, &by_piece = scratch.by_piece;
  // A segment that takes every remainder left (the pool holds exactly its nodes) is those
  // remainders whole, in piece order, whatever the choice rule: no search needed. The common case
  // is a job whose one segment is the job (a DP ring over every node under Megatron's order, pp = 1).
  uint64_t pool_nodes = 0;
  for (size_t i = from; i < pool.size(); ++i) pool_nodes += pool[i].count;
  if (nsegs == 1 && pool_nodes == seg) {
    out.parts.insert(out.parts.end(), pool.begin() + std::ptrdiff_t(from), pool.end());
    out.begin.push_back(uint32_t(out.parts.size()));
    pool.resize(from);
    return;
  }
  // Packed keys, count << 32 | piece: their integer order is the (count, piece) order, and plain
  // integer sorts and searches are what the engine's largest jobs spend their time on here. A
  // piece is in the pool at most once (a rest replaces the entry it was cut from), so keys are
  // unique and the sorts need no stability.
  const auto key = [](uint32_t count, uint32_t piece) { return uint64_t(count) << 32 | piece; };
  by_size.clear();
  for (size_t i = from; i < pool.size(); ++i) by_size.push_back(key(pool[i].count, pool[i].piece));
  sort_keys(by_size, scratch.tmp);
  const auto first_at_least = [&](uint32_t count) {
    return std::lower_bound(by_size.begin(), by_size.end(), key(count, 0));
  };
  for (uint64_t s = 0; s < nsegs; ++s) {
    uint32_t need = seg;
    const size_t first_part = out.parts.size();
    while (need > 0) {
      auto best = by_size.end();
      if (need < seg) best = first_at_least(need);  // a remainder that completes the segment
      if (best == by_size.end()) best = first_at_least(uint32_t(by_size.back() >> 32));  // opening, or none does
      const uint32_t count = uint32_t(*best >> 32), piece = uint32_t(*best);
      const uint32_t take = std::min(need, count);
      out.parts.push_back({piece, take});
      need -= take;
      by_size.erase(best);
      if (count > take) {
        const uint64_t rest = key(count - take, piece);
        by_size.insert(std::lower_bound(by_size.begin(), by_size.end(), rest), rest);
      }
    }
    // Parts in canonical order, so a ring inside the segment visits each leaf group once (a
    // segment takes from a piece once: its last part is the only one that leaves a rest).
    SegmentPart *p = out.parts.data() + first_part;
    const size_t np = out.parts.size() - first_part;
    const auto piece_order = [](const SegmentPart &x, const SegmentPart &y) { return x.piece < y.piece; };
    if (np > 1 && !std::is_sorted(p, p + np, piece_order)) {
      by_piece.clear();
      for (size_t i = 0; i < np; ++i) by_piece.push_back(key(p[i].piece, p[i].count));
      sort_keys(by_piece, scratch.tmp);
      for (size_t i = 0; i < np; ++i) p[i] = {uint32_t(by_piece[i] >> 32), uint32_t(by_piece[i])};
    }
    out.begin.push_back(uint32_t(out.parts.size()));
  }
  // The unused remainders back in piece order.
  for (uint64_t &k : by_size) k = key(uint32_t(k), uint32_t(k >> 32));
  sort_keys(by_size, scratch.tmp);
  pool.resize(from);
  for (uint64_t k : by_size) pool.push_back({uint32_t(k >> 32), uint32_t(k)});
}

}  // namespace

void pack_segments(const std::vector<Piece> &pieces, uint32_t seg, Packing &out, PackScratch &scratch) {
  out.parts.clear();
  out.begin.assign(1, 0);
  std::vector<SegmentPart> &carry = scratch.carry;  // remainders of all pods, in canonical order
  carry.clear();
  // Remainders of the current pod live at the end of `carry` from pod_start on.
  size_t i = 0;
  while (i < pieces.size()) {
    const int pod = pieces[i].pod;
    const size_t pod_start = carry.size();
    uint64_t left = 0;
    for (; i < pieces.size() && pieces[i].pod == pod; ++i) {
      const uint32_t full = pieces[i].count / seg;
      for (uint32_t k = 0; k < full; ++k) {
        out.parts.push_back({uint32_t(i), seg});
        out.begin.push_back(uint32_t(out.parts.size()));
      }
      if (const uint32_t r = pieces[i].count % seg) {
        carry.push_back({uint32_t(i), r});
        left += r;
      }
    }
    // Combine this pod's remainders while they make whole segments (the pod's remainders are the
    // sorted tail of carry; the unused ones stay there, in order).
    if (left >= seg) form_segments(carry, pod_start, seg, left / seg, out, scratch);
  }
  // What is left crosses pods.
  if (!carry.empty()) {
    uint64_t total = 0;
    for (const auto &p : carry) total += p.count;
    if (total % seg) throw LayoutError("node count is not a multiple of the segment size");
    form_segments(carry, 0, seg, total / seg, out, scratch);
  }
}

namespace {

// EP groups of `unit` nodes that a part boundary cuts (boundaries at the parts' cumulative sizes,
// not at a multiple of unit; two in one group count once).
uint32_t cut_groups(const SegmentPart *p, size_t np, uint32_t unit) {
  uint32_t cuts = 0, last = UINT32_MAX;
  uint64_t at = 0;
  for (size_t i = 0; i + 1 < np; ++i) {
    at += p[i].count;
    if (at % unit == 0) continue;
    const uint32_t g = uint32_t(at / unit);
    if (g != last) ++cuts, last = g;
  }
  return cuts;
}

}  // namespace

void align_ep_groups(const std::vector<Piece> &pieces, uint32_t seg, uint32_t unit, Packing &packing,
                     PackScratch &scratch) {
  if (unit <= 1 || seg % unit != 0) return;
  std::vector<uint64_t> &keys = scratch.by_piece;
  std::vector<SegmentPart> &order = scratch.order;
  for (uint32_t s = 0; s < packing.segments(); ++s) {
    SegmentPart *p = packing.parts.data() + packing.begin[s];
    const size_t np = packing.begin[s + 1] - packing.begin[s];
    if (np < 2) continue;
    const uint32_t before = cut_groups(p, np, unit);
    if (before == 0) continue;
    // Greedy, pod by pod (a ring inside the segment crosses each pod boundary once, as in
    // canonical order), with rho = the nodes so far mod unit: at a group boundary (rho = 0) a part
    // of whole groups, else one whose residue (count mod unit) another part completes; inside a
    // group the part that completes it; else the part of the largest residue. Within a residue the
    // parts go in canonical order. The parts of a pod sorted by (residue, index) and a cursor per
    // residue make every choice a binary search.
    order.clear();
    uint32_t rho = 0;
    for (size_t a = 0; a < np;) {
      size_t b = a + 1;
      while (b < np && pieces[p[b].piece].pod == pieces[p[a].piece].pod) ++b;
      keys.clear();
      for (size_t i = a; i < b; ++i) keys.push_back(uint64_t(p[i].count % unit) << 32 | uint32_t(i - a));
      sort_keys(keys, scratch.tmp);
      const size_t n = keys.size();
      // Distinct residues and, per residue, the next unused entry of keys (cursor) and its end.
      std::vector<uint64_t> &cur = scratch.tmp;  // (end << 32 | cursor) per distinct residue
      std::vector<uint32_t> &res = scratch.residues;
      res.clear();
      cur.clear();
      for (size_t i = 0; i < n; ++i) {
        const uint32_t r = uint32_t(keys[i] >> 32);
        if (res.empty() || res.back() != r) {
          res.push_back(r);
          cur.push_back(uint64_t(i) << 32 | i);  // end filled below
        }
      }
      for (size_t k = 0; k < res.size(); ++k) {
        const uint64_t end = k + 1 < res.size() ? (cur[k + 1] & 0xffffffff) : n;
        cur[k] = end << 32 | (cur[k] & 0xffffffff);
      }
      const auto left = [&](size_t k) { return uint32_t(cur[k] >> 32) - uint32_t(cur[k]); };
      const auto find = [&](uint32_t r) -> size_t {  // index of residue r with parts left, else res.size()
        const auto it = std::lower_bound(res.begin(), res.end(), r);
        const size_t k = size_t(it - res.begin());
        return it != res.end() && *it == r && left(k) > 0 ? k : res.size();
      };
      size_t top = res.size();  // residues above `top` are used up
      for (size_t taken = 0; taken < n; ++taken) {
        size_t k = res.size();
        if (rho != 0) k = find(unit - rho);
        if (k == res.size() && rho == 0) {
          k = find(0);
          if (k == res.size())  // a residue whose complement is left too (the pair closes a group)
            for (size_t j = 0; j < res.size() && k == res.size(); ++j) {
              if (left(j) == 0) continue;
              const size_t c = find(unit - res[j]);
              if (c < res.size() && (c != j || left(j) > 1)) k = j;
            }
        }
        if (k == res.size()) {
          while (top > 0 && left(top - 1) == 0) --top;
          k = top - 1;
        }
        const uint32_t i = uint32_t(keys[uint32_t(cur[k])]);
        ++cur[k];
        order.push_back(p[a + i]);
        rho = uint32_t((rho + p[a + i].count) % unit);
      }
      a = b;
    }
    if (cut_groups(order.data(), np, unit) < before) std::copy(order.begin(), order.end(), p);
  }
}

void RankOrderer::order_domains(const std::vector<int> &hosts, uint32_t tp_nodes, std::vector<int> &out) {
  const TopoIndex &ix = *index_;
  // Key: (domain's first host, or the host's own canonical rank for a host in none; canonical rank).
  auto key = [&ix](int h) {
    const int d = ix.host_domain(h);
    const uint64_t k = d >= 0 ? ix.canonical_rank(ix.domain_hosts(d).front()) : ix.canonical_rank(h);
    return k << 32 | ix.canonical_rank(h);
  };
  for (int h : hosts)
    if (h < 0 || h >= ix.host_count()) throw LayoutError("host index " + std::to_string(h) + " is not in the topology");
  out.assign(hosts.begin(), hosts.end());
  std::sort(out.begin(), out.end(), [&key](int a, int b) { return key(a) < key(b); });
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i] == out[i - 1])
      throw LayoutError("host " + ix.topology().hosts[size_t(out[i])].name + " is listed twice");
  if (tp_nodes <= 1) return;
  // TP group j is out[j*tp_nodes .. (j+1)*tp_nodes): all in one domain, or the node set cannot
  // hold the layout's TP groups on NVLink (never ranked as if it could).
  for (size_t j = 0; j < out.size(); j += tp_nodes) {
    const int d = ix.host_domain(out[j]);
    for (size_t i = j; i < j + tp_nodes; ++i)
      if (d < 0 || ix.host_domain(out[i]) != d)
        throw LayoutError("the nodes do not hold whole TP groups of " + std::to_string(tp_nodes) +
                          " nodes inside NVLink domains (host " + ix.topology().hosts[size_t(out[i])].name +
                          (ix.host_domain(out[i]) < 0 ? " is in no multi-node domain)" : " would share a TP group "
                                                                                         "with another domain)"));
  }
}

void RankOrderer::order(const std::vector<int> &hosts, const Layout &layout, std::vector<int> &out) {
  const TopoIndex &ix = *index_;
  const JobGeometry geo = job_geometry(layout, uint32_t(hosts.size()), ix.has_domains());
  if (ix.has_domains()) {
    // NVLink domains are the innermost level: TP groups (and a job that fits one domain) stay in
    // one; the segments' leaf groups follow from the domains' (docs/design.md, "NVLink domains").
    pieces_.clear();
    packing_ = Packing{};
    order_domains(hosts, tp_group_nodes(layout, geo.gpus_per_node), out);
    return;
  }
  sorted_.assign(hosts.begin(), hosts.end());
  // `base`, a hash of the node set in canonical order (see below). The placer hands its nodes over
  // in canonical order already, so one pass checks the range, the order and duplicates (strictly
  // increasing ranks) and hashes; otherwise sort, check and hash again.
  const uint64_t hash_seed = kHashSeed, hash_mul = kHashMul;
  uint64_t base = hash_seed;
  bool increasing = true;
  uint32_t prev_rank = 0;
  for (size_t i = 0; i < sorted_.size(); ++i) {
    const int h = sorted_[i];
    if (h < 0 || h >= ix.host_count()) throw LayoutError("host index " + std::to_string(h) + " is not in the topology");
    const uint32_t r = ix.canonical_rank(h);
    if (i > 0 && r <= prev_rank) increasing = false;
    prev_rank = r;
    base = (base ^ uint64_t(h)) * hash_mul;
  }
  if (!increasing) {
    std::sort(sorted_.begin(), sorted_.end(),
              [&ix](int a, int b) { return ix.canonical_rank(a) < ix.canonical_rank(b); });
    for (size_t i = 1; i < sorted_.size(); ++i)
      if (sorted_[i] == sorted_[i - 1])
        throw LayoutError("host " + ix.topology().hosts[size_t(sorted_[i])].name + " is listed twice");
    base = hash_seed;
    for (int h : sorted_) base = (base ^ uint64_t(h)) * hash_mul;
  }
  pieces_.clear();
  piece_start_.clear();
  for (size_t i = 0; i < sorted_.size(); ++i) {
    const int g = ix.host_leaf_group(sorted_[i]);
    if (pieces_.empty() || pieces_.back().leaf_group != g) {
      pieces_.push_back({g, ix.leaf_group_pod(g), 0});
      piece_start_.push_back(uint32_t(i));
    }
    ++pieces_.back().count;
  }
  pack_segments(pieces_, geo.segment_nodes, packing_, pool_);
  align_ep_groups(pieces_, geo.segment_nodes, geo.ep_unit_nodes, packing_, pool_);
  hand_out(sorted_.data(), sorted_.size(), base, out);
}

void RankOrderer::order_placed(const int *hosts, size_t n, const Layout &layout, std::vector<Piece> &pieces,
                               Packing &packing, std::vector<int> &out) {
  const JobGeometry geo = job_geometry(layout, uint32_t(n));  // throws on a bad layout, as order() does
  // The same hash as order(), without its checks (the placer's hosts are in canonical order, each once).
  uint64_t base = kHashSeed;
  for (size_t i = 0; i < n; ++i) base = (base ^ uint64_t(hosts[i])) * kHashMul;
  pieces_.swap(pieces);
  std::swap(packing_, packing);
  align_ep_groups(pieces_, geo.segment_nodes, geo.ep_unit_nodes, packing_, pool_);
  piece_start_.clear();
  uint32_t start = 0;
  for (const Piece &p : pieces_) {
    piece_start_.push_back(start);
    start += p.count;
  }
  hand_out(hosts, n, base, out);
}

void RankOrderer::hand_out(const int *sorted, size_t n, uint64_t base, std::vector<int> &out) {
  const TopoIndex &ix = *index_;
  // Which hosts of a piece a part gets does not matter inside the leaf group, but a segment split
  // over leaf groups enters each of its parts at the part's first host, and the ring edges into that
  // host come down the uplink cables of its entry classes, one per NIC on the leaf
  // (TopoIndex::entry_classes, from the recorded routes). Taking the hosts in canonical order would
  // enter every leaf group's remainder at the same position (whole segments first, remainders
  // last), which may share cables. So each split part of the job enters at a free host of its
  // piece whose ring edges meet the fewest of the job's earlier ones on a cable: the edge into the
  // part comes down the host's classes into the leaf and leaves the part before it in the ring by
  // that leaf's cables to the upper switches those classes come from (on a fat tree a destination
  // is reached through the switch its entry cable hangs from; a ring's edges all run at once, so
  // two on one cable halve each other). Only cables count: two parts entering different leaves by
  // the same class, or by one leaf's entry and the other's exit, share none. Among those it enters
  // at one whose classes the job holds whole in the leaf group if there is one (no other job's
  // flow comes down those cables into the leaf), and among those at the one
  // whose first class is nearest at or after (base + j R) mod K (K = the leaf's uplinks, R = a
  // host's NICs on it): `base`, a hash of the node set, keeps two jobs from starting on the same
  // cable, and the search for the j-th part starts R classes on from the previous one's. Which
  // cables a host occupies is read, never assumed: where a subnet manager brings a host's LIDs down
  // R consecutive cables (OpenSM's ftree on every fat tree routed so far) the search start keeps
  // the parts apart when the piece has hosts at the targets, and the decisions are those of
  // stepping by R wherever that gave disjoint cables; where the piece lacks them, or the subnet
  // manager interleaves a host's cables (minhop, updn and dfsssp with two cables from a leaf to
  // each spine), the classes do. On a 3-level tree the classes do not see the cables an edge
  // between pods crosses above its entry leaf's (leaf to spine in the predecessor's pod, spine to
  // core, core to spine), which the tables pick per destination too: with recorded tables the
  // load is counted along each candidate's whole traced path instead (below), which on a 2-level
  // tree is the same two cables. Without routes there are no classes: canonical order. Cost: two
  // passes over the piece's hosts' classes and a few over K classes per split part (a piece is
  // one leaf group), a scan of the piece's free hosts per traced candidate and at most kTraceHosts traces of a few
  // table look-ups per NIC, and two rows of K counts per piece cleared once per job with split
  // parts, as are the cables its traced edges set.
  std::vector<uint32_t> &cursor = piece_start_;  // reused: start of the unused hosts of a piece
  used_.assign(n, 0);
  entry_.assign(packing_.parts.size(), UINT32_MAX);
  // Rows of down_load_ / up_load_ per piece, sized and cleared at the first split part.
  uint32_t kmax = 0;
  bool loads_ready = false;
  base ^= base >> 29;
  uint64_t split_parts = 0;
  // (base + split_parts R) mod K, kept up to date without a division while K and R stay the same
  // (usually every leaf has as many uplinks).
  uint32_t target = 0, target_k = 0, target_stride = 0;
  for (uint32_t s = 0; s < packing_.segments(); ++s) {
    if (packing_.begin[s + 1] - packing_.begin[s] < 2) continue;  // inside one leaf group
    for (uint32_t q = packing_.begin[s]; q < packing_.begin[s + 1]; ++q) {
      const uint32_t pc = packing_.parts[q].piece;
      const uint32_t k32 = uint32_t(ix.leaf_group_uplinks(pieces_[pc].leaf_group));  // an int >= 1
      const uint32_t stride = ix.leaf_group_entry_stride(pieces_[pc].leaf_group);
      if (k32 == target_k && stride == target_stride) {
        target += stride;
        while (target >= k32) target -= k32;
      } else {
        target_k = k32;
        target_stride = stride;
        target = uint32_t((base + split_parts * stride) % k32);
      }
      ++split_parts;
      if (k32 < 2 || !ix.has_entry_classes()) continue;  // no uplinks or no routes known: canonical order
      if (!loads_ready) {
        for (const Piece &p : pieces_) kmax = std::max(kmax, uint32_t(ix.leaf_group_uplinks(p.leaf_group)));
        down_load_.assign(size_t(pieces_.size()) * kmax, 0);
        up_load_.assign(size_t(pieces_.size()) * kmax, 0);
        switch_class_.resize(ix.topology().switches.size(), UINT32_MAX);
        for (uint32_t c : touched_) path_load_[c] = 0;
        touched_.clear();
        path_load_.resize(ix.cable_count(), 0);
        loads_ready = true;
      }
      // The ring edge into this part comes from the part before it in the ring (the segment's
      // last part for its first): down one of this piece's entry cables and, on a fat tree, up
      // the predecessor's cable to the upper switch that entry cable comes from. busy_[c]: the
      // job's edges already on the two cables of class c.
      const uint32_t pred = packing_.parts[q == packing_.begin[s] ? packing_.begin[s + 1] - 1 : q - 1].piece;
      const int pred_lg = pieces_[pred].leaf_group;
      const uint32_t pred_k = uint32_t(ix.leaf_group_uplinks(pred_lg));
      const uint32_t *pred_sw = ix.leaf_group_class_switches(pred_lg);
      for (uint32_t c = pred_k; c-- > 0;)  // the first of several cables to one switch stands for all
        if (pred_sw[c] != TopoIndex::kNoSwitch) switch_class_[pred_sw[c]] = c;
      const uint32_t *entry_sw = ix.leaf_group_class_switches(pieces_[pc].leaf_group);
      busy_.assign(down_load_.begin() + std::ptrdiff_t(size_t(pc) * kmax),
                   down_load_.begin() + std::ptrdiff_t(size_t(pc) * kmax + k32));
      for (uint32_t c = 0; c < k32; ++c)
        if (entry_sw[c] != TopoIndex::kNoSwitch && switch_class_[entry_sw[c]] != UINT32_MAX)
          busy_[c] += up_load_[size_t(pred) * kmax + switch_class_[entry_sw[c]]];
      const uint32_t end = pc + 1 < pieces_.size() ? piece_start_[pc + 1] : uint32_t(n);
      // NIC entries per class of the leaf group that are not the job's: a class at 0 is held whole,
      // no other job's flow comes down its cable into the leaf.
      const uint32_t *class_size = ix.leaf_group_class_sizes(pieces_[pc].leaf_group);
      class_count_.assign(class_size, class_size + k32);
      for (uint32_t i = piece_start_[pc]; i < end; ++i)
        for (uint16_t c : ix.host_entry_classes(sorted[i])) --class_count_[c];
      // The free host with the least (load: the job's edges already on its cables, not held
      // whole, (first class - target) mod K), the first in canonical order on a tie; a taken host
      // sorts after every free one. Load comes before held whole: a ring's edges all run at once,
      // so a second edge of the job on one cable halves both for sure, while another job's flow
      // on a cable the job does not hold whole slows it only when that job crosses leaves at the
      // same moment.
      uint64_t best = UINT64_MAX;
      uint32_t at = 0;
      if (!ix.has_paths()) {
        for (uint32_t i = piece_start_[pc]; i < end && best != 0; ++i) {
          uint64_t load = 0;
          uint32_t others = 0;
          for (uint16_t c : ix.host_entry_classes(sorted[i])) load += busy_[c], others |= class_count_[c];
          uint32_t d = ix.host_uplink_mod(sorted[i]) + k32 - target;  // (first class - target) mod K
          d -= d >= k32 ? k32 : 0;
          const uint64_t key = uint64_t(used_[i] != 0) << 63 | std::min<uint64_t>(load, 0x3fffffff) << 33 |
                               uint64_t(others != 0) << 32 | d;
          if (key < best) best = key, at = i;
        }
      } else {
        // The whole path of each candidate's ring edge, traced through the tables from the
        // predecessor's piece (a switch forwards by destination alone, so from the predecessor's
        // leaf on the path is the same whichever of its hosts the edge leaves): on a 3-level tree
        // an edge between pods also crosses a leaf-to-spine, a spine-to-core and a core-to-spine
        // cable that no entry class names, and two of the job's edges met there. Its load: the
        // job's earlier edges on those cables, all of its NICs' paths summed. The free hosts are
        // traced in the order of the other keys (the classes' count, held whole, target distance,
        // canonical order); the first whose paths meet none of the job's edges wins, else the
        // least loaded of the first kTraceHosts traced. A candidate whose path the tables do not
        // give counts its classes' load, as without paths. With other jobs' edges given
        // (set_neighbour_edges) they are the second key of the load, and the first candidate
        // whose paths meet none of either wins.
        constexpr uint32_t kTraceHosts = 16;
        constexpr uint32_t kOwnShift = 24;  // other jobs' edges on a path: fewer than 2^24
        cand_.clear();
        for (uint32_t i = piece_start_[pc]; i < end; ++i) {
          if (used_[i]) continue;
          uint64_t load = 0;
          uint32_t others = 0;
          for (uint16_t c : ix.host_entry_classes(sorted[i])) load += busy_[c], others |= class_count_[c];
          uint32_t d = ix.host_uplink_mod(sorted[i]) + k32 - target;  // (first class - target) mod K
          d -= d >= k32 ? k32 : 0;
          cand_.push_back(std::min<uint64_t>(load, 0x7fff) << 49 | uint64_t(others != 0) << 48 | uint64_t(d & 0xffff) << 32 | i);
        }
        const int src = sorted[piece_start_[pred]];
        const uint32_t src_nics = ix.host_nic_count(src);
        uint64_t best_load = UINT64_MAX;
        bool best_known = false;
        // With other jobs' edges given, a path's load is (own edges, others' edges), compared in
        // that order: own << kOwnShift, others capped below it.
        std::vector<uint32_t> *neighbours = neighbour_edges_;
        if (neighbours && neighbours->size() < ix.cable_count()) neighbours->resize(ix.cable_count(), 0);
        const uint32_t own_shift = neighbours ? kOwnShift : 0;
        const uint64_t theirs_max = (uint64_t(1) << own_shift) - 1;
        // The candidates in key order by selection (usually the first is traced and meets none of
        // the job's edges: one scan and one trace, no sort); the traced cables kept for the best.
        for (size_t j = 0; j < cand_.size() && j < kTraceHosts && best_load != 0; ++j) {
          size_t m = j;
          for (size_t k = j + 1; k < cand_.size(); ++k) m = cand_[k] < cand_[m] ? k : m;
          std::swap(cand_[j], cand_[m]);
          const int h = sorted[uint32_t(cand_[j])];
          const uint32_t nics = std::min(src_nics, ix.host_nic_count(h));
          uint64_t load = 0, theirs = 0;
          bool known = nics > 0;
          path_.clear();
          for (uint32_t nic = 0; nic < nics && known; ++nic)
            known = ix.walk_path(src, h, nic, [&](uint32_t c) {
              load += path_load_[c], path_.push_back(c);
              if (neighbours) theirs += (*neighbours)[c];
            });
          if (!known) load = cand_[j] >> 49, theirs = theirs_max;  // a path not known is not preferred
          load = load << own_shift | std::min(theirs, theirs_max);
          if (load < best_load) best_load = load, at = uint32_t(cand_[j]), best_known = known, best_path_.swap(path_);
        }
        // The chosen edge's cables, if its every path is known (an unknown one counts nowhere).
        if (best_known)
          for (uint32_t c : best_path_) {
            if (path_load_[c]++ == 0) touched_.push_back(c);
            if (neighbours) {
              ++(*neighbours)[c];
              if (neighbour_added_) neighbour_added_->push_back(c);
            }
          }
      }
      used_[at] = 1;  // a piece has as many free hosts as its parts take
      entry_[q] = at;
      for (uint16_t c : ix.host_entry_classes(sorted[at])) {
        ++down_load_[size_t(pc) * kmax + c];
        if (entry_sw[c] != TopoIndex::kNoSwitch && switch_class_[entry_sw[c]] != UINT32_MAX)
          ++up_load_[size_t(pred) * kmax + switch_class_[entry_sw[c]]];
      }
      for (uint32_t c = 0; c < pred_k; ++c)
        if (pred_sw[c] != TopoIndex::kNoSwitch) switch_class_[pred_sw[c]] = UINT32_MAX;
    }
  }
  // Hand out each piece's hosts: a split part's entry host first, then the piece's free hosts in
  // canonical order.
  out.resize(n);
  int *o = out.data();
  for (uint32_t q = 0; q < packing_.parts.size(); ++q) {
    const SegmentPart &part = packing_.parts[q];
    uint32_t k = 0;
    if (entry_[q] != UINT32_MAX) *o++ = sorted[entry_[q]], ++k;
    // The rest in runs between the marked (entry) hosts, which are the only marks past the cursor:
    // a copy per run rather than a test per host.
    uint32_t c = cursor[part.piece];
    uint32_t need = part.count - k;
    while (need > 0) {
      const char *from = used_.data() + c;
      const char *mark = static_cast<const char *>(std::memchr(from, 1, need));
      const uint32_t run = mark ? uint32_t(mark - from) : need;
      std::copy(sorted + c, sorted + c + run, o);
      o += run;
      c += run + (mark ? 1 : 0);
      need -= run;
    }
    cursor[part.piece] = c;
  }
}

void ring_entry_cables(const TopoIndex &ix, const std::vector<int> &ordered, const Layout &layout,
                       std::vector<uint32_t> &out) {
  out.clear();
  const JobGeometry geo = job_geometry(layout, uint32_t(ordered.size()), ix.has_domains());  // throws
  // hand_out traces only with recorded tables and classes, and never with domains (order_domains).
  if (ix.has_domains() || !ix.has_paths() || !ix.has_entry_classes() || ordered.empty()) return;
  // Each leaf group's first host of the job in canonical order: the source order() traces from.
  std::unordered_map<int, int> first;
  first.reserve(ordered.size());
  for (int h : ordered) {
    if (h < 0 || h >= ix.host_count()) throw LayoutError("host index " + std::to_string(h) + " is not in the topology");
    const auto [it, fresh] = first.emplace(ix.host_leaf_group(h), h);
    if (!fresh && ix.canonical_rank(h) < ix.canonical_rank(it->second)) it->second = h;
  }
  // A segment's parts are its runs of one leaf group: hand_out gives each part's hosts together,
  // and the parts of one segment come from distinct leaf groups.
  std::vector<uint32_t> part_begin;
  std::vector<uint32_t> path;
  const uint32_t seg = geo.segment_nodes;
  for (uint32_t s0 = 0; s0 + seg <= ordered.size(); s0 += seg) {
    part_begin.clear();
    for (uint32_t i = s0; i < s0 + seg; ++i)
      if (i == s0 || ix.host_leaf_group(ordered[i]) != ix.host_leaf_group(ordered[i - 1])) part_begin.push_back(i);
    if (part_begin.size() < 2) continue;
    for (size_t q = 0; q < part_begin.size(); ++q) {
      const int h = ordered[part_begin[q]];
      if (ix.leaf_group_uplinks(ix.host_leaf_group(h)) < 2) continue;
      const int pred = ordered[part_begin[q == 0 ? part_begin.size() - 1 : q - 1]];
      const int src = first.at(ix.host_leaf_group(pred));
      const uint32_t nics = std::min(ix.host_nic_count(src), ix.host_nic_count(h));
      bool known = nics > 0;
      path.clear();
      for (uint32_t nic = 0; nic < nics && known; ++nic)
        known = ix.walk_path(src, h, nic, [&](uint32_t c) { path.push_back(c); });
      if (known) out.insert(out.end(), path.begin(), path.end());
    }
  }
}

void RingEdgeBook::book(uint32_t job) {
  if (!added_.empty()) jobs_[job] = added_;  // may throw (memory): before anything else changes
  edges_ += added_.size();
}

void RingEdgeBook::order(uint32_t job, const std::vector<int> &hosts, const Layout &layout, std::vector<int> &out) {
  remove(job);
  added_.clear();
  orderer_.set_neighbour_edges(&counts_, &added_);
  try {
    orderer_.order(hosts, layout, out);
    book(job);
  } catch (...) {  // a refused order (before it counts) or no memory: the counts as they were
    for (uint32_t c : added_) --counts_[c];
    added_.clear();
    throw;
  }
}

void RingEdgeBook::add_placed(uint32_t job, const std::vector<int> &ordered, const Layout &layout) {
  remove(job);
  ring_entry_cables(*index_, ordered, layout, added_);  // throws before anything is counted
  if (added_.empty()) return;
  if (counts_.size() < index_->cable_count()) counts_.resize(index_->cable_count(), 0);
  book(job);  // may throw (memory) before anything is counted
  for (uint32_t c : added_) ++counts_[c];
}

void RingEdgeBook::remove(uint32_t job) {
  const auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  for (uint32_t c : it->second) counts_[c] -= counts_[c] > 0 ? 1 : 0;
  edges_ -= it->second.size();
  jobs_.erase(it);
}

std::vector<std::string> order_node_names(const TopoIndex &index, const std::vector<std::string> &names,
                                          const Layout &layout) {
  std::vector<int> hosts;
  hosts.reserve(names.size());
  for (const std::string &n : names) {
    const int h = index.find_host(n);
    if (h < 0) throw LayoutError("node " + n + " is not in the topology file (stale topology?)");
    hosts.push_back(h);
  }
  RankOrderer ro(index);
  std::vector<int> ordered;
  ro.order(hosts, layout, ordered);
  std::vector<std::string> out;
  out.reserve(ordered.size());
  for (int h : ordered) out.push_back(index.topology().hosts[size_t(h)].name);
  return out;
}

}  // namespace topoaware
