// SPDX-License-Identifier: GPL-2.0-or-later
// classify(): from a raw Fabric to the classified Topology.
//
// Steps, each a function below:
//  1. name the CAs and decide which are compute hosts (the rest go to `ignored` with a reason);
//  2. levels: BFS over the switch graph from the switches that compute hosts plug into; a host-less
//     switch that this distance puts above the switches it hangs from is moved below them;
//  3. canonical order of switches (level, then the first host below them, then name, then GUID)
//     so that the output never depends on discovery order;
//  4. links aggregated per node pair, width and speed;
//  5. leaf groups (leaves serving the same hosts), rails, pods, dragonfly groups;
//  6. bandwidth up/down per switch, oversubscription per level;
//  7. anomalies.
#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "text.hpp"
#include "topology.hpp"

namespace topoaware {

bool natural_less(const std::string &a, const std::string &b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    unsigned char ca = a[i], cb = b[j];
    if (std::isdigit(ca) && std::isdigit(cb)) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ie++;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) je++;
      // Compare numerically without overflow: strip leading zeros, then length, then digits.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') is++;
      while (js + 1 < je && b[js] == '0') js++;
      if (ie - is != je - js) return ie - is < je - js;
      int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      if (ie - i != je - j) return ie - i < je - j;  // "n01" after "n1": fewer zeros first
      i = ie;
      j = je;
    } else {
      if (ca != cb) return ca < cb;
      i++;
      j++;
    }
  }
  return a.size() - i < b.size() - j;
}

int Topology::host_index(const std::string &name) const {
  auto it = std::lower_bound(hosts.begin(), hosts.end(), name,
                             [](const Host &h, const std::string &n) { return natural_less(h.name, n); });
  if (it != hosts.end() && it->name == name) return static_cast<int>(it - hosts.begin());
  // natural_less is a strict weak order in which distinct strings can compare equal only if they
  // differ in nothing; fall back to a scan for safety (never hit with canonical input).
  for (size_t i = 0; i < hosts.size(); i++)
    if (hosts[i].name == name) return static_cast<int>(i);
  return -1;
}

int Topology::switch_index(uint64_t guid) const {
  for (size_t i = 0; i < switches.size(); i++)
    if (switches[i].guid == guid) return static_cast<int>(i);
  return -1;
}

double Link::gbps() const { return width * lane_gbps(speed); }

namespace {

std::string first_word(const std::string &s) {
  std::istringstream in(s);
  std::string w;
  in >> w;
  return w;
}

std::string second_word(const std::string &s) {
  std::istringstream in(s);
  std::string w;
  in >> w >> w;
  return in ? w : std::string();
}

// Descriptions that HCAs carry before the host sets its own ("MT25408 ConnectX Mellanox
// Technologies", "MT4123 ConnectX6 Mellanox Technologies"); such a CA has no host name.
bool is_default_description(const std::string &desc) {
  std::string w = first_word(desc);
  if (w.empty() || w == "(null)" || w == "localhost") return true;
  static const std::regex mt("^MT[0-9]+$");
  if (std::regex_match(w, mt)) return true;
  static const char *vendor_words[] = {"Mellanox", "ConnectX", "InfiniHost", "NVIDIA", "HCA-1", "HCA"};
  for (const char *v : vendor_words)
    if (w == v) return true;
  return false;
}

bool is_sharp_node(const std::string &desc) { return desc.find("Aggregation Node") != std::string::npos; }

// A switch name Slurm accepts: no blanks, commas, brackets or '='; unique. Mellanox switches
// describe themselves as "MF0;<hostname>:<model>/U1": the hostname is the name admins use.
std::string switch_name_from_desc(const std::string &desc) {
  std::string d = desc;
  if (d.rfind("MF0;", 0) == 0) {
    d = d.substr(4);
    auto colon = d.find(':');
    if (colon != std::string::npos) d = d.substr(0, colon);
  }
  if (d.empty() || d.size() > 64) return "";
  for (char c : d)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return "";
  return d;
}

std::string guid_switch_name(uint64_t guid) {
  std::string g = guid_str(guid);
  return "S-" + g.substr(2);
}

struct CaPortRef {
  uint64_t ca_guid;
  int port;
  uint64_t port_guid;
  uint64_t sw_guid;
  int sw_port;
  int width;
  LinkSpeed speed;
  std::string device;
};

template <typename T>
T median_of(std::vector<T> v) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The most common value; on a tie the largest, so that with two peers one dead cable still
// shows (the usual value is what a healthy switch has).
template <typename K>
K mode_of(const std::vector<K> &v) {
  std::map<K, int> count;
  for (const auto &k : v) count[k]++;
  K best{};
  int n = -1;
  for (const auto &[k, c] : count)
    if (c >= n) best = k, n = c;
  return best;
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
  void unite(int a, int b) { parent[find(a)] = find(b); }
};

// Levels of the switches that carry no compute host, beyond the distance from the hosts.
//
// The distance from the nearest host places a switch that has hosts below it; a switch with none
// is placed as far up as its path round the fabric is long: an empty leaf under a spine comes out
// above the spine, and under the spine of a pod without hosts (reached through the cores) two
// levels above the cores. So a host-less switch that is a peak (every switch it is cabled to sits
// one level below it) hangs below its neighbours when it joins nothing they do not already join:
// it is cabled to one switch only (no traffic can cross it), or its neighbours already reach each
// other through switches below them (the spines of one pod through their leaves; a top switch
// over the spines of several pods stays). Hanging one switch can make a peak of the one it hangs
// from (the spine of an empty pod, once its empty leaf hangs), so the rule runs until nothing moves.
class HostlessFold {
 public:
  HostlessFold(std::vector<int> &level, const std::vector<std::set<int>> &adj, const std::vector<bool> &seed)
      : level_(level), adj_(adj), seed_(seed), parents_(level.size()) {}

  void run() {
    // Every round decides on the levels the round starts with, so the result does not depend on
    // the order switches are looked at; each move lowers a level by two, so the loop ends.
    for (;;) {
      std::vector<std::pair<int, std::vector<int>>> moves;
      for (int v = 0; v < static_cast<int>(level_.size()); v++) {
        std::vector<int> above = hangs_from(v);
        if (!above.empty()) moves.push_back({v, std::move(above)});
      }
      if (moves.empty()) return;
      for (auto &[v, above] : moves) {
        level_[v] -= 2;
        parents_[v] = std::move(above);
      }
      follow_parents();
    }
  }

 private:
  bool hung(int u) const { return !parents_[u].empty(); }

  // A hung switch cabled only to the switches it hangs from: it decides nothing about them (an
  // empty leaf under its spine), and it moves with them.
  bool pendant(int u) const {
    if (!hung(u)) return false;
    for (int w : adj_[u])
      if (std::find(parents_[u].begin(), parents_[u].end(), w) == parents_[u].end()) return false;
    return true;
  }

  std::vector<int> pendants_of(int v) const {
    std::vector<int> out;
    for (int u : adj_[v])
      if (pendant(u) && std::find(parents_[u].begin(), parents_[u].end(), v) != parents_[u].end()) out.push_back(u);
    return out;
  }

  // Levels a switch needs below it for the pendant switches that hang from it (the budget bounds
  // the walk on fabrics whose cabling makes no sense).
  int pendant_depth(int v, int budget) const {
    int depth = 0;
    if (budget <= 0) return depth;
    for (int u : pendants_of(v)) depth = std::max(depth, 1 + pendant_depth(u, budget - 1));
    return depth;
  }

  // The switches v hangs from, or none when it stays where it is.
  std::vector<int> hangs_from(int v) const {
    if (seed_[v] || level_[v] < 3) return {};
    const int below = level_[v] - 1;  // the level of its neighbours when v is a peak
    std::vector<int> above;
    for (int u : adj_[v]) {
      if (pendant(u) && std::find(parents_[u].begin(), parents_[u].end(), v) != parents_[u].end()) continue;
      if (level_[u] != below) return {};
      above.push_back(u);
    }
    if (above.empty() || below - 1 - pendant_depth(v, below) < 1) return {};
    if (above.size() > 1 && !joined_below(above, below)) return {};
    return above;
  }

  // Whether the switches `above` (all at level `lvl`) reach each other through switches one
  // level down, without going higher.
  bool joined_below(const std::vector<int> &above, int lvl) const {
    std::set<int> in(above.begin(), above.end()), seen{above.front()};
    std::vector<int> todo{above.front()};
    while (!todo.empty()) {
      int u = todo.back();
      todo.pop_back();
      for (int w : adj_[u]) {
        if (level_[w] != lvl - 1) continue;
        for (int x : adj_[w])
          if (in.count(x) && seen.insert(x).second) todo.push_back(x);
      }
    }
    return seen.size() == in.size();
  }

  // A pendant switch sits one level below the lowest switch it hangs from.
  void follow_parents() {
    for (bool moved = true; moved;) {
      moved = false;
      for (int u = 0; u < static_cast<int>(level_.size()); u++) {
        if (!pendant(u)) continue;
        int lvl = std::numeric_limits<int>::max();
        for (int p : parents_[u]) lvl = std::min(lvl, level_[p] - 1);
        if (lvl >= 1 && lvl != level_[u]) level_[u] = lvl, moved = true;
      }
    }
  }

  std::vector<int> &level_;
  const std::vector<std::set<int>> &adj_;
  const std::vector<bool> &seed_;
  std::vector<std::vector<int>> parents_;  // the switches a hung switch hangs from
};

class Classifier {
 public:
  Classifier(const Fabric &f, const ClassifyOptions &o) : fabric_(f), opts_(o) {}
  Topology run();

 private:
  void collect_hosts();
  std::string ca_name(const FabricNode &n, bool &unnamed,
                      std::map<std::string, std::vector<uint64_t>> &cas_by_desc) const;
  std::string ignore_reason(const FabricNode &n, const std::string &name, bool unnamed,
                            const std::set<std::string> &wanted) const;
  std::vector<CaPortRef> switch_ports(const FabricNode &n) const;
  void report_duplicate_descriptions(const std::map<std::string, std::vector<uint64_t>> &cas_by_desc);
  void add_host(const std::string &name, std::vector<CaPortRef> refs);
  void collect_switches();
  void order_switches();
  void build_links();
  void build_leaf_groups();
  void build_pods_and_dragonfly();
  bool same_router_group(int u, int v) const;
  bool router_groups_ok(const std::map<int, std::vector<int>> &comps, UnionFind &uf, bool any_global) const;
  void build_classic_dragonfly();
  UnionFind pod_union() const;
  void build_pods();
  bool pods_linked_at_level2() const;
  void build_dragonfly_plus();
  void bandwidth();
  void anomalies();
  void switch_anomalies();
  void same_level_links(const std::set<std::string> &spine_hosts);
  int end_level(uint64_t guid) const;
  std::string end_name(uint64_t guid) const;
  void slow_links();
  void missing_uplinks(const std::set<std::string> &spine_hosts);
  void missing_rails();
  void disconnected_parts();
  void report_empty_leaf(int i);

  bool is_switch(const FabricNode &n) const { return n.type != NodeType::Ca; }
  bool empty_leaf(int i) const { return t_.switches[i].level == 1 && t_.switches[i].hosts.empty(); }
  int sw_of(uint64_t guid) const {
    auto it = sw_index_.find(guid);
    return it == sw_index_.end() ? -1 : it->second;
  }
  void anomaly(std::string kind, std::string where, std::string detail) {
    t_.anomalies.push_back({std::move(kind), std::move(where), std::move(detail)});
  }

  const Fabric &fabric_;
  const ClassifyOptions &opts_;
  Topology t_;
  std::unordered_set<uint64_t> compute_cas_;           // CA GUIDs that belong to compute hosts
  std::unordered_map<uint64_t, int> sw_index_;         // switch GUID -> index in t_.switches
  std::vector<std::vector<int>> sw_adj_;               // switch index -> neighbour switch indices (unique)
  std::vector<std::vector<uint64_t>> host_sw_guids_;   // host -> switch GUID of each of its ports
  bool dragonfly_ = false;
};

// The name a CA goes by: the node-name map's, else the first word of a description its host set,
// else its GUID (then `unnamed`, and it is no compute host unless unnamed HCAs are kept).
std::string Classifier::ca_name(const FabricNode &n, bool &unnamed,
                                std::map<std::string, std::vector<uint64_t>> &cas_by_desc) const {
  unnamed = false;
  auto mapped = opts_.node_names.find(n.guid);
  if (mapped != opts_.node_names.end()) return mapped->second;
  if (!is_default_description(n.desc) && !is_sharp_node(n.desc)) {
    cas_by_desc[n.desc].push_back(n.guid);
    return first_word(n.desc);
  }
  unnamed = true;
  return guid_str(n.guid);
}

// Why a CA is no compute host whatever its cables (empty when it may be one).
std::string Classifier::ignore_reason(const FabricNode &n, const std::string &name, bool unnamed,
                                      const std::set<std::string> &wanted) const {
  // A name a Slurm host list cannot hold is no Slurm node name (and topology.json lists hosts
  // as host lists): a blank, ',', '[', ']' or a control byte, from a description or a map. Nor
  // is one that is not UTF-8: topology.json would hold another name (U+FFFD for each bad byte),
  // out of the hosts' canonical order or equal to another host's, and its reader would refuse it.
  const bool bad_name = name.empty() || printable_text(name) != name ||
                        std::any_of(name.begin(), name.end(), [](char c) {
                          return c == ' ' || c == ',' || c == '[' || c == ']';
                        });
  if (is_sharp_node(n.desc)) return "SHARP Aggregation Node";
  if (bad_name) return "name is not a Slurm node name (blank, ',', '[', ']', a control character or not UTF-8)";
  if (opts_.compute_nodes) return wanted.count(name) ? "" : "not in the node list";
  if (unnamed && !opts_.keep_unnamed) return "unnamed HCA (default description, no node-name map entry)";
  return "";
}

// A CA's ports cabled to a switch: the only ports a compute host talks through.
std::vector<CaPortRef> Classifier::switch_ports(const FabricNode &n) const {
  std::vector<CaPortRef> refs;
  for (const auto &p : n.ports) {
    const FabricNode *peer = fabric_.find(p.remote_guid);
    if (!peer || !is_switch(*peer)) continue;
    refs.push_back({n.guid, p.num, p.port_guid, p.remote_guid, p.remote_port, p.width, p.speed,
                    second_word(n.desc)});
  }
  return refs;
}

// Everything is keyed by GUID, so two HCAs with one description stay two HCAs; but if they
// land on one host name it is worth saying (a cloned image often leaves a stale description).
void Classifier::report_duplicate_descriptions(const std::map<std::string, std::vector<uint64_t>> &cas_by_desc) {
  for (const auto &[desc, guids] : cas_by_desc)
    if (guids.size() > 1) {
      std::vector<uint64_t> g = guids;
      std::sort(g.begin(), g.end());
      std::string list;
      for (auto x : g) list += (list.empty() ? "" : ", ") + guid_str(x);
      anomaly("duplicate-description", first_word(desc),
              std::to_string(g.size()) + " HCAs describe themselves as \"" + desc + "\": " + list);
    }
}

// One compute host from its ports, numbered into rails.
void Classifier::add_host(const std::string &name, std::vector<CaPortRef> refs) {
  Host h;
  h.name = name;
  // Rails: a host's compute ports in device order (mlx5_0 before mlx5_1 before mlx5_10), then
  // GUID and port, so that rail r is "the r-th NIC" on every host of a rail-optimized fabric.
  std::sort(refs.begin(), refs.end(), [](const CaPortRef &a, const CaPortRef &b) {
    if (a.device != b.device) return natural_less(a.device, b.device);
    if (a.ca_guid != b.ca_guid) return a.ca_guid < b.ca_guid;
    return a.port < b.port;
  });
  std::vector<uint64_t> sw_guids;
  for (const auto &r : refs) {
    HcaPort hp;
    hp.ca_guid = r.ca_guid;
    hp.port_guid = r.port_guid;
    hp.port = r.port;
    hp.device = r.device;
    hp.rail = static_cast<int>(h.ports.size());
    hp.sw_port = r.sw_port;
    hp.width = r.width;
    hp.speed = r.speed;
    h.ports.push_back(hp);
    sw_guids.push_back(r.sw_guid);
  }
  t_.hosts.push_back(std::move(h));
  host_sw_guids_.push_back(std::move(sw_guids));
}

void Classifier::collect_hosts() {
  std::set<std::string> wanted;
  if (opts_.compute_nodes) wanted.insert(opts_.compute_nodes->begin(), opts_.compute_nodes->end());
  std::map<std::string, std::vector<CaPortRef>> ports_by_host;
  std::map<std::string, std::vector<uint64_t>> cas_by_desc;  // named-by-description CAs

  for (const auto &n : fabric_.nodes) {
    if (n.type != NodeType::Ca) continue;
    bool unnamed = false;
    const std::string name = ca_name(n, unnamed, cas_by_desc);
    std::string reason = ignore_reason(n, name, unnamed, wanted);
    std::vector<CaPortRef> refs;
    if (reason.empty()) {
      refs = switch_ports(n);
      if (refs.empty()) reason = "not connected to a switch";
    }
    if (!reason.empty()) {
      t_.ignored.push_back({n.guid, n.desc, name, reason});
      continue;
    }
    compute_cas_.insert(n.guid);
    auto &v = ports_by_host[name];
    v.insert(v.end(), refs.begin(), refs.end());
  }
  report_duplicate_descriptions(cas_by_desc);

  std::vector<std::string> names;
  for (const auto &kv : ports_by_host) names.push_back(kv.first);
  std::sort(names.begin(), names.end(), natural_less);
  for (const auto &name : names) add_host(name, ports_by_host[name]);
}

void Classifier::collect_switches() {
  // Provisional switch list in fabric order; order_switches() makes it canonical.
  for (const auto &n : fabric_.nodes) {
    if (!is_switch(n)) continue;
    Switch s;
    s.guid = n.guid;
    s.desc = n.desc;
    s.nports = n.nports;
    sw_index_[n.guid] = static_cast<int>(t_.switches.size());
    t_.switches.push_back(std::move(s));
  }
  // Levels: BFS from the switches compute hosts plug into. CAs that are not compute nodes seed
  // nothing, so a storage-only switch is at the distance of its nearest compute leaf.
  std::vector<int> level(t_.switches.size(), 0);
  std::vector<bool> seed(t_.switches.size(), false);
  std::vector<int> queue;
  for (const auto &g : host_sw_guids_)
    for (uint64_t sw : g) {
      int i = sw_of(sw);
      if (i >= 0 && level[i] == 0) level[i] = 1, seed[i] = true, queue.push_back(i);
    }
  std::vector<std::set<int>> adj(t_.switches.size());
  for (const auto &n : fabric_.nodes) {
    if (!is_switch(n)) continue;
    int a = sw_of(n.guid);
    for (const auto &p : n.ports) {
      int b = sw_of(p.remote_guid);
      if (b >= 0 && b != a) adj[a].insert(b), adj[b].insert(a);
    }
  }
  for (size_t qi = 0; qi < queue.size(); qi++) {
    int u = queue[qi];
    for (int v : adj[u])
      if (level[v] == 0) level[v] = level[u] + 1, queue.push_back(v);
  }
  HostlessFold(level, adj, seed).run();
  for (size_t i = 0; i < t_.switches.size(); i++) {
    t_.switches[i].level = level[i];
    t_.max_level = std::max(t_.max_level, level[i]);
  }
  sw_adj_.assign(t_.switches.size(), {});
  for (size_t i = 0; i < adj.size(); i++) sw_adj_[i].assign(adj[i].begin(), adj[i].end());
}

void Classifier::order_switches() {
  const size_t n = t_.switches.size();
  // "First host below" of each switch: leaves take their smallest host index, upper levels the
  // smallest of their lower neighbours. This orders switches along the hosts, so the output is
  // readable and does not depend on the order the fabric was walked in.
  const int kNone = std::numeric_limits<int>::max();
  std::vector<int> first_host(n, kNone);
  for (size_t h = 0; h < host_sw_guids_.size(); h++)
    for (uint64_t g : host_sw_guids_[h]) {
      int i = sw_of(g);
      if (i >= 0) first_host[i] = std::min(first_host[i], static_cast<int>(h));
    }
  for (int lvl = 2; lvl <= t_.max_level; lvl++)
    for (size_t i = 0; i < n; i++)
      if (t_.switches[i].level == lvl)
        for (int v : sw_adj_[i])
          if (t_.switches[v].level == lvl - 1) first_host[i] = std::min(first_host[i], first_host[v]);

  // Names: from the description when it is a valid, unique Slurm name; else from the GUID.
  std::map<std::string, int> name_count;
  std::vector<std::string> cand(n);
  for (size_t i = 0; i < n; i++) {
    cand[i] = switch_name_from_desc(t_.switches[i].desc);
    if (!cand[i].empty()) name_count[cand[i]]++;
  }
  for (size_t i = 0; i < n; i++) {
    bool ok = !cand[i].empty() && name_count[cand[i]] == 1;
    t_.switches[i].name = ok ? cand[i] : guid_switch_name(t_.switches[i].guid);
  }

  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const Switch &sa = t_.switches[a], &sb = t_.switches[b];
    int la = sa.level == 0 ? kNone : sa.level, lb = sb.level == 0 ? kNone : sb.level;
    if (la != lb) return la < lb;
    if (first_host[a] != first_host[b]) return first_host[a] < first_host[b];
    if (sa.name != sb.name) return natural_less(sa.name, sb.name);
    return sa.guid < sb.guid;
  });
  std::vector<int> new_index(n);
  std::vector<Switch> sorted;
  sorted.reserve(n);
  for (size_t k = 0; k < n; k++) {
    new_index[order[k]] = static_cast<int>(k);
    sorted.push_back(std::move(t_.switches[order[k]]));
  }
  t_.switches = std::move(sorted);
  std::vector<std::vector<int>> adj(n);
  for (size_t i = 0; i < n; i++) {
    for (int v : sw_adj_[i]) adj[new_index[i]].push_back(new_index[v]);
    std::sort(adj[new_index[i]].begin(), adj[new_index[i]].end());
  }
  sw_adj_ = std::move(adj);
  for (size_t k = 0; k < n; k++) sw_index_[t_.switches[k].guid] = static_cast<int>(k);

  for (size_t h = 0; h < t_.hosts.size(); h++) {
    Host &host = t_.hosts[h];
    for (size_t p = 0; p < host.ports.size(); p++) {
      int s = sw_of(host_sw_guids_[h][p]);
      host.ports[p].sw = s;
      auto &list = t_.switches[s].hosts;
      if (list.empty() || list.back() != static_cast<int>(h)) list.push_back(static_cast<int>(h));
    }
    host.leaf = host.ports.empty() ? -1 : host.ports[0].sw;
  }
  for (auto &s : t_.switches) {
    std::sort(s.hosts.begin(), s.hosts.end());
    s.hosts.erase(std::unique(s.hosts.begin(), s.hosts.end()), s.hosts.end());
  }
}

void Classifier::build_links() {
  // Only the graph that matters for compute: switch-switch links and compute HCA ports.
  struct Key {
    uint64_t a, b;
    int width;
    LinkSpeed speed;
    bool operator<(const Key &o) const {
      return std::tie(a, b, width, speed) < std::tie(o.a, o.b, o.width, o.speed);
    }
  };
  std::map<Key, std::vector<std::pair<int, int>>> links;
  for (const auto &n : fabric_.nodes) {
    bool n_in = is_switch(n) || compute_cas_.count(n.guid);
    if (!n_in) continue;
    for (const auto &p : n.ports) {
      const FabricNode *peer = fabric_.find(p.remote_guid);
      if (!peer) continue;
      bool peer_in = is_switch(*peer) || compute_cas_.count(peer->guid);
      if (!peer_in || peer->guid == n.guid) continue;
      if (!is_switch(n) && !is_switch(*peer)) continue;
      // Each cable is listed from both ends; keep the end with the lower GUID.
      if (n.guid > peer->guid) continue;
      links[{n.guid, peer->guid, p.width, p.speed}].push_back({p.num, p.remote_port});
    }
  }
  for (auto &[k, ports] : links) {
    Link l;
    l.a = k.a;
    l.b = k.b;
    l.width = k.width;
    l.speed = k.speed;
    std::sort(ports.begin(), ports.end());
    l.ports = std::move(ports);
    t_.links.push_back(std::move(l));
  }
}

void Classifier::build_leaf_groups() {
  // Leaves that serve exactly the same hosts form one group: the rails of one scalable unit on a
  // rail-optimized fabric, a single leaf on a plain fat tree.
  std::map<std::vector<int>, std::vector<int>> by_hosts;
  for (size_t i = 0; i < t_.switches.size(); i++)
    if (t_.switches[i].level == 1 && !t_.switches[i].hosts.empty())
      by_hosts[t_.switches[i].hosts].push_back(static_cast<int>(i));
  std::vector<LeafGroup> groups;
  for (auto &[hosts, leaves] : by_hosts) {
    LeafGroup g;
    g.hosts = hosts;
    g.leaves = leaves;  // already in switch order
    groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end(), [](const LeafGroup &a, const LeafGroup &b) {
    if (a.hosts.front() != b.hosts.front()) return a.hosts.front() < b.hosts.front();
    return a.leaves.front() < b.leaves.front();
  });
  for (size_t g = 0; g < groups.size(); g++)
    for (int leaf : groups[g].leaves) t_.switches[leaf].leaf_group = static_cast<int>(g);
  t_.leaf_groups = std::move(groups);
  for (auto &h : t_.hosts) {
    if (h.leaf >= 0) h.leaf_group = t_.switches[h.leaf].leaf_group;
    std::set<int> gs;
    for (const auto &p : h.ports) gs.insert(t_.switches[p.sw].leaf_group);
    if (gs.size() > 1)
      anomaly("host-on-several-leaf-groups", h.name,
              h.name + " has ports on leaves of " + std::to_string(gs.size()) +
                  " different leaf groups; it is placed with the leaf of its first port (" +
                  t_.switches[h.leaf].name + ")");
  }
  // Such a host is listed by the group it is placed with only: topology.json's reader refuses a
  // group that lists a host of another group (a written file must read back).
  for (size_t g = 0; g < t_.leaf_groups.size(); g++) {
    auto &hs = t_.leaf_groups[g].hosts;
    hs.erase(std::remove_if(hs.begin(), hs.end(),
                            [&](int h) { return t_.hosts[h].leaf_group != static_cast<int>(g); }),
             hs.end());
  }
  for (const auto &g : t_.leaf_groups)
    if (g.leaves.size() > 1) t_.rail_optimized = true;
}

// Whether the edge u-v is local to a dragonfly group: the two routers' closed neighbourhoods
// overlap by more than a third (inside a group of a routers with h global links each the overlap
// is about a/(a+2h), 1/2 for the canonical a = 2h; across a global link it is about 1/(a+h)).
bool Classifier::same_router_group(int u, int v) const {
  std::vector<int> nu = sw_adj_[u], nv = sw_adj_[v];
  nu.push_back(u);
  nv.push_back(v);
  std::sort(nu.begin(), nu.end());
  std::sort(nv.begin(), nv.end());
  std::vector<int> common, all;
  std::set_intersection(nu.begin(), nu.end(), nv.begin(), nv.end(), std::back_inserter(common));
  std::set_union(nu.begin(), nu.end(), nv.begin(), nv.end(), std::back_inserter(all));
  return 3 * common.size() > all.size();
}

// Whether the dense clusters `comps` (root -> routers) are dragonfly groups: at least two, each of
// two routers or more with at least half its pairs linked, and some link between them.
bool Classifier::router_groups_ok(const std::map<int, std::vector<int>> &comps, UnionFind &uf, bool any_global) const {
  bool groups_ok = any_global && comps.size() >= 2;
  for (const auto &[r, members] : comps) {
    if (members.size() < 2) groups_ok = false;
    size_t links = 0;
    for (int u : members)
      for (int v : sw_adj_[u])
        if (uf.find(v) == r) links++;
    size_t pairs = members.size() * (members.size() - 1);  // links counted twice
    if (links * 2 < pairs) groups_ok = false;               // less than half the pairs linked
  }
  return groups_ok;
}

// Classic dragonfly: routers carry hosts and link to each other directly (no level 2). Groups
// are the dense clusters, joined by the edges same_router_group() calls local. Groups of two
// routers cannot be told from global links and are not detected.
void Classifier::build_classic_dragonfly() {
  const int n = static_cast<int>(t_.switches.size());
  auto lvl = [&](int i) { return t_.switches[i].level; };
  UnionFind uf(n);
  bool any_global = false;
  for (int u = 0; u < n; u++)
    for (int v : sw_adj_[u]) {
      if (v <= u || lvl(u) != 1 || lvl(v) != 1) continue;
      if (same_router_group(u, v)) uf.unite(u, v);
      else any_global = true;
    }
  std::map<int, std::vector<int>> comps;
  for (int i = 0; i < n; i++)
    if (lvl(i) == 1) comps[uf.find(i)].push_back(i);
  if (!router_groups_ok(comps, uf, any_global)) return;
  dragonfly_ = true;
  std::vector<std::vector<int>> groups;
  for (auto &kv : comps) groups.push_back(kv.second);
  std::sort(groups.begin(), groups.end());  // members are switch indices in canonical order
  for (size_t g = 0; g < groups.size(); g++) {
    DragonflyGroup dg;
    dg.switches = groups[g];
    for (int s : groups[g]) {
      t_.switches[s].dragonfly_group = static_cast<int>(g);
      dg.hosts.insert(dg.hosts.end(), t_.switches[s].hosts.begin(), t_.switches[s].hosts.end());
    }
    std::sort(dg.hosts.begin(), dg.hosts.end());
    dg.hosts.erase(std::unique(dg.hosts.begin(), dg.hosts.end()), dg.hosts.end());
    t_.dragonfly_groups.push_back(std::move(dg));
  }
}

// Pods: what leaves reach through level-2 switches without going higher. On a 2-level fat
// tree that is one pod; on a 3-level tree one pod per spine block; on a dragonfly+ (leaf/spine
// groups joined by spine-spine global links) one pod per group. Without level 2 the pod is
// the dragonfly group, or else the connected set of leaves. Returns the union of each pod.
UnionFind Classifier::pod_union() const {
  const int n = static_cast<int>(t_.switches.size());
  auto lvl = [&](int i) { return t_.switches[i].level; };
  UnionFind uf(n);
  for (int u = 0; u < n; u++)
    for (int v : sw_adj_[u]) {
      int lu = lvl(u), lv = lvl(v);
      bool l1l2 = (lu == 1 && lv == 2) || (lu == 2 && lv == 1);
      // Leaves linked directly (a leaf that is also a spine, or a fabric without level 2) are
      // one pod; on a dragonfly only inside a group.
      bool l1l1 = lu == 1 && lv == 1 &&
                  (!dragonfly_ || t_.switches[u].dragonfly_group == t_.switches[v].dragonfly_group);
      if (l1l2 || l1l1) uf.unite(u, v);
    }
  // A leaf group's leaves belong together even if (a rail-optimized fabric with rail-separate
  // spines) only their hosts join them.
  for (const auto &g : t_.leaf_groups)
    for (int leaf : g.leaves) uf.unite(leaf, g.leaves.front());
  return uf;
}

// Pods numbered by their first leaf group; each leaf group, switch and host learns its pod.
void Classifier::build_pods() {
  const int n = static_cast<int>(t_.switches.size());
  UnionFind uf = pod_union();
  std::map<int, std::vector<int>> pod_groups;  // root -> leaf groups
  for (size_t g = 0; g < t_.leaf_groups.size(); g++)
    pod_groups[uf.find(t_.leaf_groups[g].leaves.front())].push_back(static_cast<int>(g));
  std::vector<std::pair<int, std::vector<int>>> pods(pod_groups.begin(), pod_groups.end());
  std::sort(pods.begin(), pods.end(), [](const auto &a, const auto &b) { return a.second.front() < b.second.front(); });
  std::map<int, int> pod_of_root;
  for (size_t p = 0; p < pods.size(); p++) {
    Pod pod;
    pod.leaf_groups = pods[p].second;
    pod_of_root[pods[p].first] = static_cast<int>(p);
    for (int g : pod.leaf_groups) {
      t_.leaf_groups[g].pod = static_cast<int>(p);
      for (int leaf : t_.leaf_groups[g].leaves) t_.switches[leaf].pod = static_cast<int>(p);
    }
    t_.pods.push_back(std::move(pod));
  }
  for (int i = 0; i < n; i++)
    if (t_.switches[i].level == 2) {
      auto it = pod_of_root.find(uf.find(i));
      if (it != pod_of_root.end()) {
        t_.switches[i].pod = it->second;
        t_.pods[it->second].switches.push_back(i);
      }
    }
  for (auto &h : t_.hosts) {
    if (h.leaf < 0) continue;
    h.pod = t_.switches[h.leaf].pod;
    h.dragonfly_group = t_.switches[h.leaf].dragonfly_group;
  }
}

// Whether level-2 switches of different pods are linked directly: the global links of a dragonfly+.
bool Classifier::pods_linked_at_level2() const {
  const int n = static_cast<int>(t_.switches.size());
  for (int u = 0; u < n; u++)
    for (int v : sw_adj_[u]) {
      const Switch &a = t_.switches[u], &b = t_.switches[v];
      if (a.level == 2 && b.level == 2 && a.pod >= 0 && b.pod >= 0 && a.pod != b.pod) return true;
    }
  return false;
}

// Dragonfly+: one group per pod, its leaves, spines and hosts.
void Classifier::build_dragonfly_plus() {
  dragonfly_ = true;
  for (size_t p = 0; p < t_.pods.size(); p++) {
    DragonflyGroup dg;
    for (int g : t_.pods[p].leaf_groups) {
      const auto &lg = t_.leaf_groups[g];
      dg.switches.insert(dg.switches.end(), lg.leaves.begin(), lg.leaves.end());
      dg.hosts.insert(dg.hosts.end(), lg.hosts.begin(), lg.hosts.end());
    }
    dg.switches.insert(dg.switches.end(), t_.pods[p].switches.begin(), t_.pods[p].switches.end());
    std::sort(dg.switches.begin(), dg.switches.end());
    std::sort(dg.hosts.begin(), dg.hosts.end());
    dg.hosts.erase(std::unique(dg.hosts.begin(), dg.hosts.end()), dg.hosts.end());
    for (int s : dg.switches) t_.switches[s].dragonfly_group = static_cast<int>(p);
    t_.dragonfly_groups.push_back(std::move(dg));
  }
  for (auto &h : t_.hosts)
    if (h.leaf >= 0) h.dragonfly_group = t_.switches[h.leaf].dragonfly_group;
}

void Classifier::build_pods_and_dragonfly() {
  if (t_.max_level == 1) build_classic_dragonfly();
  build_pods();
  if (!dragonfly_ && t_.pods.size() >= 2 && pods_linked_at_level2()) build_dragonfly_plus();
}

void Classifier::bandwidth() {
  for (const auto &l : t_.links) {
    int a = sw_of(l.a), b = sw_of(l.b);
    double bw = l.gbps() * l.cables();
    if (a >= 0 && b >= 0) {
      int la = t_.switches[a].level, lb = t_.switches[b].level;
      if (la == 0 || lb == 0 || la == lb) continue;  // same-level links carry neither way
      int lo = la < lb ? a : b, hi = la < lb ? b : a;
      t_.switches[lo].up_gbps += bw;
      // A leaf without hosts sends no host traffic up: its cables would only dilute the figures
      // of the switches above it.
      if (!empty_leaf(lo)) t_.switches[hi].down_gbps += bw;
    } else {
      int s = a >= 0 ? a : b;  // the other end is a compute HCA
      if (s >= 0) t_.switches[s].down_gbps += bw;
    }
  }
  std::map<int, std::vector<double>> ratios;
  std::map<int, int> count;
  for (const auto &s : t_.switches) {
    if (s.level == 0) continue;
    count[s.level]++;
    if (s.up_gbps > 0 && s.down_gbps > 0) ratios[s.level].push_back(s.down_gbps / s.up_gbps);
  }
  for (const auto &[level, c] : count) {
    LevelStats ls;
    ls.level = level;
    ls.switches = c;
    auto &r = ratios[level];
    if (!r.empty()) {
      ls.oversub_min = *std::min_element(r.begin(), r.end());
      ls.oversub_max = *std::max_element(r.begin(), r.end());
      ls.oversub_median = median_of(r);
    }
    t_.levels.push_back(ls);
  }
}

// A switch placed at level 1 that no compute host plugs into (a SHARP or storage-only switch, a
// leaf whose hosts are not installed or not in the node list): its cables say where it sits.
void Classifier::report_empty_leaf(int i) {
  int cables = 0;
  std::set<int> above;
  for (const auto &l : t_.links) {
    int a = sw_of(l.a), b = sw_of(l.b);
    if (a < 0 || b < 0 || (a != i && b != i)) continue;
    cables += l.cables();
    above.insert(a == i ? b : a);
  }
  const Switch &s = t_.switches[i];
  anomaly("leaf-without-hosts", s.name,
          s.name + " has no compute host; it is a leaf below " + std::to_string(above.size()) + " switch(es) (" +
              std::to_string(cables) + " cable(s)), left out of leaf groups, pods and oversubscription");
}

// Switches out of place: connected to no host, leaves without hosts, leaves cabled as spines.
void Classifier::switch_anomalies() {
  const int n = static_cast<int>(t_.switches.size());
  for (int i = 0; i < n; i++) {
    const Switch &s = t_.switches[i];
    if (s.level == 0) {
      anomaly("disconnected", s.name,
              s.name + " (" + guid_str(s.guid) + ") is not connected to any compute host");
      continue;
    }
    if (empty_leaf(i)) {
      report_empty_leaf(i);
      continue;
    }
    if (s.level == 1 && !dragonfly_) {
      int peer_leaves = 0;
      for (int v : sw_adj_[i])
        if (t_.switches[v].level == 1) peer_leaves++;
      if (peer_leaves >= 2)
        anomaly("hosts-on-spine", s.name,
                s.name + " has " + std::to_string(s.hosts.size()) + " compute hosts and also links to " +
                    std::to_string(peer_leaves) + " other leaves, as a spine would");
    }
  }
}

// Same-level links (not on a dragonfly, where they are the design; not around a leaf already
// reported as hosts-on-spine, whose links would only repeat it).
void Classifier::same_level_links(const std::set<std::string> &spine_hosts) {
  auto name = [&](int i) { return t_.switches[i].name; };
  for (const auto &l : t_.links) {
    int a = sw_of(l.a), b = sw_of(l.b);
    if (a < 0 || b < 0) continue;
    if (t_.switches[a].level != t_.switches[b].level || t_.switches[a].level == 0) continue;
    if (spine_hosts.count(name(a)) || spine_hosts.count(name(b))) continue;
    anomaly("same-level-link", name(a) + "-" + name(b),
            name(a) + " and " + name(b) + " are both level " + std::to_string(t_.switches[a].level) +
                " and linked by " + std::to_string(l.cables()) + " cable(s)");
  }
}

// The level of a link's end (hosts count as level 0).
int Classifier::end_level(uint64_t guid) const {
  int s = sw_of(guid);
  return s < 0 ? 0 : t_.switches[s].level;
}

// The name of a link's end: its switch's, its host's, or else its GUID.
std::string Classifier::end_name(uint64_t guid) const {
  int s = sw_of(guid);
  if (s >= 0) return t_.switches[s].name;
  for (const auto &h : t_.hosts)
    for (const auto &p : h.ports)
      if (p.ca_guid == guid) return h.name;
  return guid_str(guid);
}

// Slow or narrow links: against the most common width x speed of links between the same
// levels (hosts count as level 0 here).
void Classifier::slow_links() {
  std::map<std::pair<int, int>, std::vector<double>> gbps_by_levels;
  for (const auto &l : t_.links) {
    const std::pair<int, int> key = std::minmax(end_level(l.a), end_level(l.b));  // a copy: minmax returns references
    for (int c = 0; c < l.cables(); c++) gbps_by_levels[key].push_back(l.gbps());
  }
  std::map<std::pair<int, int>, double> usual;
  for (const auto &[k, v] : gbps_by_levels) usual[k] = mode_of(v);
  for (const auto &l : t_.links) {
    const std::pair<int, int> key = std::minmax(end_level(l.a), end_level(l.b));  // a copy: minmax returns references
    if (l.gbps() >= usual[key] || l.width == 0 || l.speed == LinkSpeed::Unknown) continue;
    std::string where = end_name(l.a) + "-" + end_name(l.b);
    anomaly("slow-link", where,
            where + ": " + std::to_string(l.cables()) + " cable(s) at " + width_name(l.width) +
                speed_name(l.speed) + " (" + std::to_string(static_cast<int>(l.gbps())) +
                " Gb/s) where links between these levels usually run at " +
                std::to_string(static_cast<int>(usual[key])) + " Gb/s");
  }
}

// Missing uplinks: fewer up cables than the usual count of the switch's level and kind.
void Classifier::missing_uplinks(const std::set<std::string> &spine_hosts) {
  const int n = static_cast<int>(t_.switches.size());
  std::map<int, std::vector<int>> up_cables;  // level -> per switch
  std::vector<int> ups(n, 0);
  for (const auto &l : t_.links) {
    int a = sw_of(l.a), b = sw_of(l.b);
    if (a < 0 || b < 0) continue;
    int la = t_.switches[a].level, lb = t_.switches[b].level;
    if (la == 0 || lb == 0 || la == lb) continue;
    ups[la < lb ? a : b] += l.cables();
  }
  // Leaves without hosts are reported as such and do not set what a leaf usually has.
  for (int i = 0; i < n; i++)
    if (t_.switches[i].level > 0 && t_.switches[i].level < t_.max_level && !empty_leaf(i))
      up_cables[t_.switches[i].level].push_back(ups[i]);
  for (const auto &[level, v] : up_cables) {
    int usual_ups = mode_of(v);
    for (int i = 0; i < n; i++) {
      const Switch &s = t_.switches[i];
      if (s.level != level || ups[i] >= usual_ups || spine_hosts.count(s.name) || empty_leaf(i)) continue;
      anomaly("missing-uplink", s.name,
              s.name + " has " + std::to_string(ups[i]) + " uplink cable(s); level " + std::to_string(level) +
                  " switches usually have " + std::to_string(usual_ups) + " (a dead or unplugged cable?)");
    }
  }
}

// Hosts missing a rail: fewer compute ports than the leaves of their group.
void Classifier::missing_rails() {
  for (const auto &h : t_.hosts) {
    if (h.leaf_group < 0) continue;
    size_t rails = t_.leaf_groups[h.leaf_group].leaves.size();
    if (h.ports.size() < rails)
      anomaly("missing-rail", h.name,
              h.name + " has " + std::to_string(h.ports.size()) + " compute port(s) but its leaf group has " +
                  std::to_string(rails) + " rails");
  }
}

// Several disconnected parts: leaves that cannot reach each other. Hosts join the parts their
// ports are on: a rail-optimized fabric built as one subnet per rail is one fabric to a job.
void Classifier::disconnected_parts() {
  const int n = static_cast<int>(t_.switches.size());
  UnionFind uf(n);
  for (int u = 0; u < n; u++)
    for (int v : sw_adj_[u]) uf.unite(u, v);
  for (const auto &h : t_.hosts)
    for (const auto &p : h.ports) uf.unite(p.sw, h.ports.front().sw);
  std::set<int> parts;
  for (int i = 0; i < n; i++)
    if (t_.switches[i].level == 1) parts.insert(uf.find(i));
  if (parts.size() > 1)
    anomaly("disconnected-parts", "fabric",
            "the compute hosts are on " + std::to_string(parts.size()) +
                " parts of the fabric that have no path between them (several subnets merged, or cut links)");
}

void Classifier::anomalies() {
  switch_anomalies();
  std::set<std::string> spine_hosts;
  for (const auto &a : t_.anomalies)
    if (a.kind == "hosts-on-spine") spine_hosts.insert(a.where);
  if (!dragonfly_) same_level_links(spine_hosts);
  slow_links();
  if (!dragonfly_) missing_uplinks(spine_hosts);
  missing_rails();
  disconnected_parts();
  std::stable_sort(t_.anomalies.begin(), t_.anomalies.end(), [](const Anomaly &a, const Anomaly &b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    return natural_less(a.where, b.where);
  });
}

Topology Classifier::run() {
  collect_hosts();
  collect_switches();
  order_switches();
  build_links();
  build_leaf_groups();
  build_pods_and_dragonfly();
  bandwidth();
  anomalies();
  std::sort(t_.ignored.begin(), t_.ignored.end(), [](const IgnoredCa &a, const IgnoredCa &b) {
    if (a.reason != b.reason) return a.reason < b.reason;
    if (a.name != b.name) return natural_less(a.name, b.name);
    return a.guid < b.guid;
  });
  t_.routes = fabric_.routes;
  t_.routes.canonicalize();
  return std::move(t_);
}

}  // namespace

Topology classify(const Fabric &fabric, const ClassifyOptions &opts) { return Classifier(fabric, opts).run(); }

}  // namespace topoaware
