// SPDX-License-Identifier: GPL-2.0-or-later
// See topology_diff.hpp. Kinds of change:
//   switch-added, switch-gone, switch-renamed
//   host-added, host-gone                      (one entry per kind: the hosts as a host list)
//   host-moved-leaf, host-moved-leaf-group, host-moved-pod   (one entry per from/to pair)
//   host-port-added, host-port-gone, host-port-slower, host-port-faster
//   cables-lost, cables-added                  (between two switches)
//   link-slower, link-faster                   (cables between two switches whose width x speed fell or rose)
//   shape                                      (levels, leaf groups, pods, dragonfly groups, rails)
//   routes-added, routes-gone, routes-changed  (forwarding tables and LIDs: a re-route, not a cabling change)
//   other                                      (nothing above, yet the topology hashes differ)
#include "topology_diff.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <utility>

#include "hostlist.hpp"
#include "text.hpp"

namespace topoaware {
namespace {

using nlohmann::json;

// A cable class: lanes and speed; ordered by bandwidth, then lanes.
struct CableClass {
  int width = 0;
  LinkSpeed speed = LinkSpeed::Unknown;
  double gbps() const { return width * lane_gbps(speed); }
  bool operator<(const CableClass &o) const {
    return std::make_tuple(gbps(), width, int(speed)) < std::make_tuple(o.gbps(), o.width, int(o.speed));
  }
  bool operator==(const CableClass &o) const { return width == o.width && speed == o.speed; }
  std::string name() const { return width_name(width) + speed_name(speed); }
};

// The cables between each pair of switches (GUIDs, smaller first), counted per class.
using CableCounts = std::map<std::pair<uint64_t, uint64_t>, std::map<CableClass, int>>;

CableCounts cable_counts(const Topology &t) {
  CableCounts c;
  for (const Link &l : t.links)
    if (t.switch_index(l.a) >= 0 && t.switch_index(l.b) >= 0)  // host cables are host ports
      c[{l.a, l.b}][CableClass{l.width, l.speed}] += l.cables();
  return c;
}

std::string switch_name(const Topology &a, const Topology &b, uint64_t guid) {
  for (const Topology *t : {&b, &a}) {
    const int i = t->switch_index(guid);
    if (i >= 0) return t->switches[size_t(i)].name;
  }
  return guid_str(guid);
}

// The identity of a host's leaf group and pod: the GUIDs of the group's leaves, of the pod's own
// switches (or, for a pod without switches of its own, of all its leaves).
std::vector<uint64_t> leaf_group_key(const Topology &t, int g) {
  std::vector<uint64_t> k;
  if (g < 0 || size_t(g) >= t.leaf_groups.size()) return k;
  for (int s : t.leaf_groups[size_t(g)].leaves) k.push_back(t.switches[size_t(s)].guid);
  std::sort(k.begin(), k.end());
  return k;
}

std::vector<uint64_t> pod_key(const Topology &t, int p) {
  std::vector<uint64_t> k;
  if (p < 0 || size_t(p) >= t.pods.size()) return k;
  const Pod &pod = t.pods[size_t(p)];
  for (int s : pod.switches) k.push_back(t.switches[size_t(s)].guid);
  if (k.empty())
    for (int g : pod.leaf_groups)
      for (uint64_t guid : leaf_group_key(t, g)) k.push_back(guid);
  std::sort(k.begin(), k.end());
  return k;
}

// How a group is shown: its leaves' names, "leaf001+leaf002".
std::string group_label(const Topology &a, const Topology &b, const std::vector<uint64_t> &key, size_t max = 4) {
  if (key.empty()) return "(none)";
  std::string s;
  for (size_t i = 0; i < key.size() && i < max; ++i) s += (i ? "+" : "") + switch_name(a, b, key[i]);
  if (key.size() > max) s += "+" + std::to_string(key.size() - max) + " more";
  return s;
}

std::string count_of(size_t n, const char *what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

class Collector {
 public:
  void add(std::string kind, std::string subject, std::string detail) {
    changes_.push_back({std::move(kind), std::move(subject), std::move(detail)});
  }
  // Hosts grouped by (kind, detail), written as one host list each.
  void add_host(const std::string &kind, const std::string &host, const std::string &detail) {
    hosts_[{kind, detail}].push_back(host);
  }
  std::vector<TopologyChange> take() {
    for (auto &[key, names] : hosts_) {
      std::string list;
      try {
        list = hostlist_compress(names);
      } catch (const std::exception &) {  // names a host list cannot hold: listed as they are
        for (const auto &n : names) list += (list.empty() ? "" : ",") + n;
      }
      const std::string count = count_of(names.size(), "host");
      changes_.push_back({key.first, list, key.second.empty() ? count : count + " " + key.second});
    }
    std::stable_sort(changes_.begin(), changes_.end(), [](const TopologyChange &x, const TopologyChange &y) {
      return std::tie(x.kind, x.subject) < std::tie(y.kind, y.subject);
    });
    return std::move(changes_);
  }

 private:
  std::vector<TopologyChange> changes_;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> hosts_;
};

void diff_switches(const Topology &a, const Topology &b, Collector &out) {
  std::map<uint64_t, const Switch *> before, after;
  for (const Switch &s : a.switches) before[s.guid] = &s;
  for (const Switch &s : b.switches) after[s.guid] = &s;
  for (const auto &[guid, s] : before) {
    const auto it = after.find(guid);
    if (it == after.end()) {
      out.add("switch-gone", s->name, "level " + std::to_string(s->level) + " switch " + guid_str(guid) + " (" +
                                          printable_text(s->desc) + ") is no longer in the fabric");
    } else if (it->second->name != s->name) {
      out.add("switch-renamed", it->second->name, guid_str(guid) + " was named " + s->name);
    }
  }
  for (const auto &[guid, s] : after)
    if (!before.count(guid))
      out.add("switch-added", s->name, "level " + std::to_string(s->level) + " switch " + guid_str(guid) + " (" +
                                           printable_text(s->desc) + ") is new");
}

void diff_host_ports(const Topology &a, const Host &ha, const Topology &b, const Host &hb, Collector &out) {
  std::map<std::pair<uint64_t, int>, const HcaPort *> before, after;
  for (const HcaPort &p : ha.ports) before[{p.ca_guid, p.port}] = &p;
  for (const HcaPort &p : hb.ports) after[{p.ca_guid, p.port}] = &p;
  auto port_name = [](const HcaPort &p) {
    return (p.device.empty() ? guid_str(p.ca_guid) : p.device) + " port " + std::to_string(p.port);
  };
  for (const auto &[key, p] : before) {
    const auto it = after.find(key);
    if (it == after.end()) {
      out.add_host("host-port-gone", ha.name, port_name(*p));
      continue;
    }
    const CableClass was{p->width, p->speed}, now{it->second->width, it->second->speed};
    if (was.gbps() > now.gbps())
      out.add_host("host-port-slower", ha.name, port_name(*p) + ": " + was.name() + " -> " + now.name());
    else if (was.gbps() < now.gbps())
      out.add_host("host-port-faster", ha.name, port_name(*p) + ": " + was.name() + " -> " + now.name());
  }
  for (const auto &[key, p] : after)
    if (!before.count(key)) out.add_host("host-port-added", hb.name, port_name(*p));
  (void)a;
  (void)b;
}

void diff_hosts(const Topology &a, const Topology &b, Collector &out) {
  std::map<std::string, const Host *> before, after;
  for (const Host &h : a.hosts) before[h.name] = &h;
  for (const Host &h : b.hosts) after[h.name] = &h;
  for (const auto &[name, h] : before) {
    const auto it = after.find(name);
    if (it == after.end()) {
      out.add_host("host-gone", name, "");
      continue;
    }
    const Host &g = *it->second;
    const uint64_t leaf_a = h->leaf >= 0 ? a.switches[size_t(h->leaf)].guid : 0;
    const uint64_t leaf_b = g.leaf >= 0 ? b.switches[size_t(g.leaf)].guid : 0;
    if (leaf_a != leaf_b)
      out.add_host("host-moved-leaf", name,
                   "from " + switch_name(a, b, leaf_a) + " to " + switch_name(a, b, leaf_b));
    const auto lg_a = leaf_group_key(a, h->leaf_group), lg_b = leaf_group_key(b, g.leaf_group);
    if (lg_a != lg_b)
      out.add_host("host-moved-leaf-group", name,
                   "from leaf group " + group_label(a, b, lg_a) + " to " + group_label(a, b, lg_b));
    const auto pod_a = pod_key(a, h->pod), pod_b = pod_key(b, g.pod);
    if (pod_a != pod_b)
      out.add_host("host-moved-pod", name, "from the pod of " + group_label(a, b, pod_a) + " to the pod of " +
                                               group_label(a, b, pod_b));
    diff_host_ports(a, *h, b, g, out);
  }
  for (const auto &[name, h] : after)
    if (!before.count(name)) out.add_host("host-added", name, "");
}

void diff_cables(const Topology &a, const Topology &b, Collector &out) {
  const CableCounts before = cable_counts(a), after = cable_counts(b);
  std::set<std::pair<uint64_t, uint64_t>> pairs;
  for (const auto &[k, v] : before) pairs.insert(k);
  for (const auto &[k, v] : after) pairs.insert(k);
  static const std::map<CableClass, int> kNone;
  for (const auto &pair : pairs) {
    const auto ib = before.find(pair), ia = after.find(pair);
    const auto &was = ib == before.end() ? kNone : ib->second;
    const auto &now = ia == after.end() ? kNone : ia->second;
    if (was == now) continue;
    const std::string subject = switch_name(a, b, pair.first) + " <-> " + switch_name(a, b, pair.second);
    int total_was = 0, total_now = 0;
    for (const auto &[c, n] : was) total_was += n;
    for (const auto &[c, n] : now) total_now += n;
    // Classes that lost cables and classes that gained some, fastest first: the first lost are
    // matched with the first gained (a cable that trained down), what is left over is lost or new.
    std::vector<CableClass> lost, gained;
    std::set<CableClass> classes;
    for (const auto &[c, n] : was) classes.insert(c);
    for (const auto &[c, n] : now) classes.insert(c);
    for (auto it = classes.rbegin(); it != classes.rend(); ++it) {
      const int w = was.count(*it) ? was.at(*it) : 0, n = now.count(*it) ? now.at(*it) : 0;
      for (int i = n; i < w; ++i) lost.push_back(*it);
      for (int i = w; i < n; ++i) gained.push_back(*it);
    }
    const size_t changed = std::min(lost.size(), gained.size());
    std::map<std::pair<std::string, std::string>, int> slower, faster;
    for (size_t i = 0; i < changed; ++i) {
      auto &m = gained[i] < lost[i] ? slower : faster;
      m[{lost[i].name(), gained[i].name()}]++;
    }
    for (const auto &[from_to, n] : slower)
      out.add("link-slower", subject,
              std::to_string(n) + " of " + count_of(size_t(total_was), "cable") + " " + from_to.first + " -> " +
                  from_to.second);
    for (const auto &[from_to, n] : faster)
      out.add("link-faster", subject,
              std::to_string(n) + " of " + count_of(size_t(total_was), "cable") + " " + from_to.first + " -> " +
                  from_to.second);
    if (total_now < total_was)
      out.add("cables-lost", subject,
              std::to_string(total_was - total_now) + " of " + count_of(size_t(total_was), "cable") + " gone (" +
                  std::to_string(total_now) + " left)");
    else if (total_now > total_was)
      out.add("cables-added", subject,
              count_of(size_t(total_now - total_was), "cable") + " more (" + std::to_string(total_now) + ", was " +
                  std::to_string(total_was) + ")");
  }
}

void diff_shape(const Topology &a, const Topology &b, Collector &out) {
  auto num = [&](const char *what, size_t x, size_t y) {
    if (x != y) out.add("shape", what, std::to_string(x) + " -> " + std::to_string(y));
  };
  num("levels", size_t(a.max_level), size_t(b.max_level));
  num("leaf groups", a.leaf_groups.size(), b.leaf_groups.size());
  num("pods", a.pods.size(), b.pods.size());
  num("dragonfly groups", a.dragonfly_groups.size(), b.dragonfly_groups.size());
  if (a.rail_optimized != b.rail_optimized)
    out.add("shape", "rails", b.rail_optimized ? "the fabric is now rail-optimized" : "no longer rail-optimized");
}

std::string side(const std::string &name, const Topology &t) {
  return name + " (" + std::to_string(t.hosts.size()) + " hosts, " + std::to_string(t.switches.size()) +
         " switches, " + (t.hash.empty() ? std::string("no hash") : t.hash) + ")";
}

}  // namespace

// The forwarding tables of each switch and the LIDs of each port, compared as they are recorded:
// a subnet manager that re-routed (a restart, a failover, a sweep after a link flap) changes them
// without a cable changing.
void diff_routes(const Topology &a, const Topology &b, Collector &out) {
  if (a.routes.empty() && b.routes.empty()) return;
  if (a.routes.empty() || b.routes.empty()) {
    const Routes &r = a.routes.empty() ? b.routes : a.routes;
    out.add(a.routes.empty() ? "routes-added" : "routes-gone", "routes",
            count_of(r.switch_count(), "switch table") + (a.routes.empty() ? " recorded" : " no longer recorded"));
    return;
  }
  std::map<uint64_t, const SwitchLft *> before, after;
  for (const auto &sn : a.routes.subnets)
    for (const auto &t : sn.switches) before[t.guid] = &t;
  for (const auto &sn : b.routes.subnets)
    for (const auto &t : sn.switches) after[t.guid] = &t;
  std::set<uint64_t> guids;
  for (const auto &[g, t] : before) guids.insert(g);
  for (const auto &[g, t] : after) guids.insert(g);
  size_t tables = 0, entries = 0;
  std::vector<std::pair<size_t, std::string>> most;  // (entries changed, switch)
  static const std::vector<uint8_t> none;
  for (uint64_t g : guids) {
    const auto &x = before.count(g) ? before[g]->out : none;
    const auto &y = after.count(g) ? after[g]->out : none;
    size_t n = 0;
    for (size_t l = 0; l < std::max(x.size(), y.size()); ++l)
      n += (l < x.size() ? x[l] : kNoRoute) != (l < y.size() ? y[l] : kNoRoute);
    if (!n && before.count(g) == after.count(g)) continue;
    ++tables;
    entries += n;
    most.emplace_back(n, switch_name(a, b, g));
  }
  std::map<std::pair<uint64_t, int>, std::pair<int, int>> lids_a, lids_b;
  for (const auto &sn : a.routes.subnets)
    for (const auto &p : sn.ports) lids_a[{p.guid, p.port}] = {p.base_lid, p.lmc};
  for (const auto &sn : b.routes.subnets)
    for (const auto &p : sn.ports) lids_b[{p.guid, p.port}] = {p.base_lid, p.lmc};
  size_t lids = 0;
  for (const auto &[k, v] : lids_a) lids += !lids_b.count(k) || lids_b[k] != v;
  for (const auto &[k, v] : lids_b) lids += !lids_a.count(k);
  if (!tables && !lids) return;
  std::stable_sort(most.begin(), most.end(), [](const auto &x, const auto &y) { return x.first > y.first; });
  std::string detail = count_of(tables, "switch table") + " of " + std::to_string(guids.size()) + " changed (" +
                       std::to_string(entries) + (entries == 1 ? " entry" : " entries") + "), " + count_of(lids, "port LID") + " changed";
  if (!most.empty()) {
    detail += "; most in";
    for (size_t i = 0; i < most.size() && i < 3; ++i)
      detail += (i ? ", " : " ") + most[i].second + " (" + std::to_string(most[i].first) + ")";
  }
  out.add("routes-changed", "routes", detail);
}

TopologyDiff diff_topologies(const Topology &before, const Topology &after) {
  Collector c;
  diff_routes(before, after, c);
  diff_shape(before, after, c);
  diff_switches(before, after, c);
  diff_hosts(before, after, c);
  diff_cables(before, after, c);
  TopologyDiff d{c.take()};
  // Anything else of topology.json (anomalies, ignored CAs, port GUIDs, switch port numbers) still
  // changes its hash: never call two topologies the same that the plugins would not.
  if (d.changes.empty() && (before.hash != after.hash || before.routes.hash != after.routes.hash))
    d.changes.push_back({"other", "topology.json", "differs in details not listed here (hash " + before.hash +
                                                       " -> " + after.hash + ")"});
  return d;
}

std::string diff_to_text(const TopologyDiff &d, const Topology &before, const Topology &after,
                         const std::string &before_name, const std::string &after_name) {
  std::string s = "before: " + side(printable_text(before_name), before) + "\n" +
                  "after:  " + side(printable_text(after_name), after) + "\n";
  if (d.same()) return s + "no change\n";
  s += std::to_string(d.changes.size()) + (d.changes.size() == 1 ? " change:\n" : " changes:\n");
  size_t width = 0;
  for (const auto &c : d.changes) width = std::max(width, c.kind.size());
  for (const auto &c : d.changes)
    s += "  " + c.kind + std::string(width - c.kind.size() + 2, ' ') + printable_text(c.subject) + ": " +
         printable_text(c.detail) + "\n";
  return s;
}

std::string diff_to_json(const TopologyDiff &d, const Topology &before, const Topology &after,
                         const std::string &before_name, const std::string &after_name) {
  auto side_json = [](const std::string &name, const Topology &t) {
    return json{{"file", printable_text(name)},
                {"hash", t.hash},
                {"hosts", t.hosts.size()},
                {"switches", t.switches.size()}};
  };
  json changes = json::array();
  for (const auto &c : d.changes)
    changes.push_back({{"kind", c.kind}, {"subject", printable_text(c.subject)}, {"detail", printable_text(c.detail)}});
  const json o = {{"schema", "topoaware-diff/1"},
                  {"before", side_json(before_name, before)},
                  {"after", side_json(after_name, after)},
                  {"same", d.same()},
                  {"changes", changes}};
  return o.dump(1) + "\n";
}

}  // namespace topoaware
