// SPDX-License-Identifier: GPL-2.0-or-later
#include "route_trace.hpp"

namespace topoaware {

namespace {
// Longer than any real path (a 5-level tree crosses 9 switches, a dragonfly 5); a table that sends
// packets around in a circle is reported, not followed forever.
constexpr size_t kMaxHops = 64;
}  // namespace

RouteTracer::RouteTracer(const Topology &topo) : topo_(&topo) {
  const size_t ns = topo.switches.size();
  subnet_.assign(ns, -1);
  lft_.assign(ns, nullptr);
  // Topology::switch_index scans; a fabric has thousands of switches and links.
  std::unordered_map<uint64_t, int> sw_index;
  sw_index.reserve(ns);
  for (size_t i = 0; i < ns; ++i) sw_index.emplace(topo.switches[i].guid, int(i));
  auto index_of = [&](uint64_t guid) {
    auto it = sw_index.find(guid);
    return it == sw_index.end() ? -1 : it->second;
  };
  for (size_t n = 0; n < topo.routes.subnets.size(); ++n)
    for (const auto &s : topo.routes.subnets[n].switches) {
      int i = index_of(s.guid);
      if (i < 0) continue;  // a switch classification left out (never one that carries hosts)
      subnet_[size_t(i)] = int(n);
      lft_[size_t(i)] = &s;
    }
  std::unordered_map<uint64_t, std::pair<int, int>> host_port;  // (CA GUID, port) -> (host, port index)
  auto ca_key = [](uint64_t guid, int port) { return guid * 257u + uint64_t(port); };
  for (size_t h = 0; h < topo.hosts.size(); ++h)
    for (size_t p = 0; p < topo.hosts[h].ports.size(); ++p) {
      const HcaPort &hp = topo.hosts[h].ports[p];
      host_port[ca_key(hp.ca_guid, hp.port)] = {int(h), int(p)};
      if (hp.sw >= 0) peers_[key(hp.sw, hp.sw_port)] = Peer{Peer::HostPort, int(h), int(p)};
    }
  for (const auto &l : topo.links) {
    int a = index_of(l.a), b = index_of(l.b);
    if (a < 0 || b < 0) continue;  // host cables: done above from the hosts' side
    for (const auto &[pa, pb] : l.ports) {
      peers_[key(a, pa)] = Peer{Peer::Switch, b, pb};
      peers_[key(b, pb)] = Peer{Peer::Switch, a, pa};
    }
  }
}

RouteTracer::Peer RouteTracer::peer(int sw, int port) const {
  auto it = peers_.find(key(sw, port));
  return it == peers_.end() ? Peer{} : it->second;
}

int RouteTracer::subnet_of(int sw) const {
  return sw >= 0 && size_t(sw) < subnet_.size() ? subnet_[size_t(sw)] : -1;
}

uint16_t RouteTracer::lid_of(int host, int port, int via_switch) const {
  int sn = subnet_of(via_switch);
  if (sn < 0 || host < 0 || size_t(host) >= topo_->hosts.size()) return 0;
  const Host &h = topo_->hosts[size_t(host)];
  if (port < 0 || size_t(port) >= h.ports.size()) return 0;
  const PortLid *pl = topo_->routes.subnets[size_t(sn)].find_port(h.ports[size_t(port)].ca_guid,
                                                                   h.ports[size_t(port)].port);
  return pl ? pl->base_lid : 0;
}

TracedRoute RouteTracer::trace(int src_host, int src_port, int dst_host, int dst_port, int path_bits) const {
  TracedRoute r;
  const auto &hosts = topo_->hosts;
  if (src_host < 0 || size_t(src_host) >= hosts.size() || dst_host < 0 || size_t(dst_host) >= hosts.size() ||
      src_port < 0 || size_t(src_port) >= hosts[size_t(src_host)].ports.size() || dst_port < 0 ||
      size_t(dst_port) >= hosts[size_t(dst_host)].ports.size()) {
    r.error = "no such host port";
    return r;
  }
  const HcaPort &sp = hosts[size_t(src_host)].ports[size_t(src_port)];
  const std::string dst_name = hosts[size_t(dst_host)].name + " port " + std::to_string(dst_port);
  int sw = sp.sw, in = sp.sw_port;
  if (sw < 0) {
    r.error = hosts[size_t(src_host)].name + " port " + std::to_string(src_port) + " is not cabled to a switch";
    return r;
  }
  uint16_t base = lid_of(dst_host, dst_port, sw);
  if (base == 0) {
    r.error = subnet_of(sw) < 0 ? "no forwarding table recorded for " + topo_->switches[size_t(sw)].name
                                : dst_name + " has no LID in the subnet of " + topo_->switches[size_t(sw)].name;
    return r;
  }
  const PortLid *pl = topo_->routes.subnets[size_t(subnet_of(sw))].find_port(
      hosts[size_t(dst_host)].ports[size_t(dst_port)].ca_guid, hosts[size_t(dst_host)].ports[size_t(dst_port)].port);
  r.dlid = uint16_t(base + (path_bits & ((1 << pl->lmc) - 1)));
  while (true) {
    const Switch &s = topo_->switches[size_t(sw)];
    const SwitchLft *lft = lft_[size_t(sw)];
    if (!lft) {
      r.error = "no forwarding table recorded for " + s.name;
      return r;
    }
    uint8_t out = r.dlid < lft->out.size() ? lft->out[r.dlid] : kNoRoute;
    if (out == kNoRoute || (s.nports > 0 && out > s.nports)) {
      r.error = s.name + " has no route to LID " + std::to_string(r.dlid) + " (" + dst_name + ")";
      return r;
    }
    r.hops.push_back({sw, in, out});
    if (out == 0) {
      r.error = s.name + " takes LID " + std::to_string(r.dlid) + " as its own";
      return r;
    }
    Peer p = peer(sw, out);
    if (p.kind == Peer::HostPort) {
      if (p.index != dst_host || p.port != dst_port)
        r.error = "LID " + std::to_string(r.dlid) + " is delivered to " + hosts[size_t(p.index)].name + " port " +
                  std::to_string(p.port) + ", not " + dst_name;
      return r;
    }
    if (p.kind != Peer::Switch) {
      r.error = s.name + " port " + std::to_string(out) + " (its route to LID " + std::to_string(r.dlid) +
                ") leads to no cable of the topology";
      return r;
    }
    if (r.hops.size() >= kMaxHops) {
      r.error = "the route to LID " + std::to_string(r.dlid) + " loops (more than " + std::to_string(kMaxHops) +
                " switches)";
      return r;
    }
    sw = p.index;
    in = p.port;
  }
}

std::string route_to_text(const Topology &topo, const TracedRoute &r) {
  std::string out;
  for (size_t i = 0; i < r.hops.size(); ++i) {
    const RouteHop &h = r.hops[i];
    if (i) out += " -> ";
    out += topo.switches[size_t(h.sw)].name + " p" + std::to_string(h.in_port) + ">p" + std::to_string(h.out_port);
  }
  if (!r.ok()) out += (out.empty() ? "" : " ") + std::string("[") + r.error + "]";
  return out;
}

}  // namespace topoaware
