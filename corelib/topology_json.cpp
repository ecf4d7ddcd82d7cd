// SPDX-License-Identifier: GPL-2.0-or-later
// topology.json, schema "topoaware/1".
//
// Canonical form: keys in a fixed order (ordered_json), arrays in the Topology's canonical order,
// one-space indentation, a trailing newline. The hash is SHA-256 over the canonical text written
// with "hash" empty, so anyone can recompute it, and an unchanged fabric gives the same bytes.
// Derived per-switch host lists are not stored (they follow from hosts[].ports[].switch).
#include "topology_json.hpp"

#include "file_read.hpp"

#include <openssl/evp.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <nlohmann/json.hpp>
#ifdef __GLIBC__  // defined by the C library's headers above
#include <malloc.h>
#endif
#include <memory>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "hostlist.hpp"

namespace topoaware {

using ojson = nlohmann::ordered_json;  // writing: keys in our fixed order
using rjson = nlohmann::json;          // reading: key order does not matter, lookups are faster

namespace {

// SHA-256 of the bytes of `parts` one after the other (no copy of a large text to join them).
std::string sha256_hex(std::initializer_list<std::string_view> parts) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX *)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1;
  for (std::string_view p : parts) ok = ok && EVP_DigestUpdate(ctx.get(), p.data(), p.size()) == 1;
  if (!ok || EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) throw std::runtime_error("SHA-256 failed (OpenSSL)");
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; i++) out += hex[md[i] >> 4], out += hex[md[i] & 15];
  return out;
}

ojson opt_index(int i) { return i < 0 ? ojson(nullptr) : ojson(i); }

// The routes are the last member of the file, written with their own hash (empty here; to_json
// fills it): tables base64-encoded, one per switch, and each CA port's LIDs as
// [node GUID, port, base LID, LMC].
ojson build_routes(const Routes &r) {
  ojson j = ojson::object();
  j["version"] = kRoutesVersion;
  j["hash"] = "";
  j["switches"] = r.switch_count();
  ojson subnets = ojson::array();
  for (const auto &sn : r.subnets) {
    ojson sw = ojson::array();
    for (const auto &s : sn.switches) {
      ojson o = ojson::object();
      o["guid"] = guid_str(s.guid);
      o["lid"] = s.lid;
      o["lft"] = lft_to_base64(s.out);
      sw.push_back(std::move(o));
    }
    ojson ports = ojson::array();
    for (const auto &p : sn.ports) {
      ojson a = ojson::array();
      a.push_back(guid_str(p.guid));
      a.push_back(p.port);
      a.push_back(p.base_lid);
      a.push_back(p.lmc);
      ports.push_back(std::move(a));
    }
    ojson o = ojson::object();
    o["switches"] = std::move(sw);
    o["ports"] = std::move(ports);
    subnets.push_back(std::move(o));
  }
  j["subnets"] = std::move(subnets);
  return j;
}

// The topology.json members of one Topology, each built by its own method in the file's key order.
struct TopologyWriter {
  const Topology &t;

  std::string sw_guid(int i) const { return guid_str(t.switches.at(i).guid); }
  // A list of host indices as a compressed host list of their names.
  std::string host_names(const std::vector<int> &idx) const {
    std::vector<std::string> names;
    for (int h : idx) names.push_back(t.hosts.at(h).name);
    return hostlist_compress(names);
  }
  ojson guids(const std::vector<int> &idx) const {
    ojson a = ojson::array();
    for (int s : idx) a.push_back(sw_guid(s));
    return a;
  }

  ojson counts() const {
    size_t cables = 0;
    for (const auto &l : t.links) cables += l.ports.size();
    return {{"hosts", t.hosts.size()},
            {"switches", t.switches.size()},
            {"links", t.links.size()},
            {"cables", cables},
            {"leaf_groups", t.leaf_groups.size()},
            {"pods", t.pods.size()},
            {"dragonfly_groups", t.dragonfly_groups.size()},
            {"ignored", t.ignored.size()}};
  }

  // Objects are filled key by key with moves: nlohmann's initializer lists copy every value, which
  // dominated the time of writing a 10,000-host fabric.
  ojson hosts() const {
    ojson hosts = ojson::array();
    hosts.get_ref<ojson::array_t &>().reserve(t.hosts.size());
    for (const auto &h : t.hosts) {
      ojson ports = ojson::array();
      for (const auto &p : h.ports) {
        ojson o = ojson::object();
        o["ca_guid"] = guid_str(p.ca_guid);
        o["port_guid"] = guid_str(p.port_guid);
        o["port"] = p.port;
        o["device"] = p.device;
        o["rail"] = p.rail;
        o["switch"] = sw_guid(p.sw);
        o["switch_port"] = p.sw_port;
        o["width"] = width_name(p.width);
        o["speed"] = speed_name(p.speed);
        ports.push_back(std::move(o));
      }
      ojson o = ojson::object();
      o["name"] = h.name;
      o["leaf"] = h.leaf < 0 ? ojson(nullptr) : ojson(sw_guid(h.leaf));
      o["leaf_group"] = opt_index(h.leaf_group);
      o["pod"] = opt_index(h.pod);
      o["dragonfly_group"] = opt_index(h.dragonfly_group);
      o["ports"] = std::move(ports);
      hosts.push_back(std::move(o));
    }
    return hosts;
  }

  ojson switches() const {
    ojson switches = ojson::array();
    for (const auto &s : t.switches)
      switches.push_back({{"guid", guid_str(s.guid)},
                          {"name", s.name},
                          {"desc", s.desc},
                          {"ports", s.nports},
                          {"level", s.level},
                          {"leaf_group", opt_index(s.leaf_group)},
                          {"pod", opt_index(s.pod)},
                          {"dragonfly_group", opt_index(s.dragonfly_group)},
                          {"down_gbps", s.down_gbps},
                          {"up_gbps", s.up_gbps}});
    return switches;
  }

  ojson links() const {
    ojson links = ojson::array();
    links.get_ref<ojson::array_t &>().reserve(t.links.size());
    for (const auto &l : t.links) {
      ojson ports = ojson::array();
      for (const auto &[pa, pb] : l.ports) {
        ojson pair = ojson::array();
        pair.push_back(pa);
        pair.push_back(pb);
        ports.push_back(std::move(pair));
      }
      ojson o = ojson::object();
      o["a"] = guid_str(l.a);
      o["b"] = guid_str(l.b);
      o["width"] = width_name(l.width);
      o["speed"] = speed_name(l.speed);
      o["gbps"] = l.gbps();
      o["cables"] = l.cables();
      o["ports"] = std::move(ports);
      links.push_back(std::move(o));
    }
    return links;
  }

  // One object per index below n, built by item(index).
  template <class Item>
  static ojson array_of(size_t n, Item item) {
    ojson a = ojson::array();
    for (size_t i = 0; i < n; i++) a.push_back(item(i));
    return a;
  }

  // Leaf groups, pods and dragonfly groups: their switches by GUID, their hosts as host lists.
  ojson leaf_groups() const {
    return array_of(t.leaf_groups.size(), [&](size_t g) -> ojson {
      return {{"id", g},
              {"pod", opt_index(t.leaf_groups[g].pod)},
              {"leaves", guids(t.leaf_groups[g].leaves)},
              {"nhosts", t.leaf_groups[g].hosts.size()},
              {"hosts", host_names(t.leaf_groups[g].hosts)}};
    });
  }
  ojson pods() const {
    return array_of(t.pods.size(), [&](size_t p) -> ojson {
      return {{"id", p}, {"leaf_groups", t.pods[p].leaf_groups}, {"switches", guids(t.pods[p].switches)}};
    });
  }
  ojson dragonfly_groups() const {
    return array_of(t.dragonfly_groups.size(), [&](size_t g) -> ojson {
      return {{"id", g},
              {"switches", guids(t.dragonfly_groups[g].switches)},
              {"hosts", host_names(t.dragonfly_groups[g].hosts)}};
    });
  }

  ojson levels() const {
    ojson levels = ojson::array();
    for (const auto &l : t.levels)
      levels.push_back(
          {{"level", l.level},
           {"switches", l.switches},
           {"oversubscription", {{"min", l.oversub_min}, {"median", l.oversub_median}, {"max", l.oversub_max}}}});
    return levels;
  }
  ojson anomalies() const {
    ojson anomalies = ojson::array();
    for (const auto &a : t.anomalies) anomalies.push_back({{"kind", a.kind}, {"where", a.where}, {"detail", a.detail}});
    return anomalies;
  }
  ojson ignored() const {
    ojson ignored = ojson::array();
    for (const auto &i : t.ignored)
      ignored.push_back({{"guid", guid_str(i.guid)}, {"name", i.name}, {"desc", i.desc}, {"reason", i.reason}});
    return ignored;
  }

  ojson nvlink_domains() const {
    ojson doms = ojson::array();
    for (size_t d = 0; d < t.nvlink_domains.size(); d++) {
      const NvlinkDomain &nd = t.nvlink_domains[d];
      ojson o = ojson::object();
      o["id"] = d;
      o["cluster_uuid"] = nd.cluster_uuid;
      o["clique_id"] = nd.clique_id;
      o["gpus_per_node"] = nd.gpus_per_node;
      o["nhosts"] = nd.hosts.size();
      o["hosts"] = host_names(nd.hosts);
      doms.push_back(std::move(o));
    }
    return doms;
  }
};

ojson build(const Topology &t) {
  const TopologyWriter w{t};
  ojson j;
  j["schema"] = kSchema;
  j["hash"] = t.hash;
  j["counts"] = w.counts();
  j["max_level"] = t.max_level;
  j["rail_optimized"] = t.rail_optimized;
  j["hosts"] = w.hosts();
  j["switches"] = w.switches();
  j["links"] = w.links();
  j["leaf_groups"] = w.leaf_groups();
  j["pods"] = w.pods();
  j["dragonfly_groups"] = w.dragonfly_groups();
  j["levels"] = w.levels();
  j["anomalies"] = w.anomalies();
  j["ignored"] = w.ignored();
  if (!t.nvlink_domains.empty()) j["nvlink_domains"] = w.nvlink_domains();
  if (!t.routes.empty()) j["routes"] = build_routes(t.routes);
  return j;
}

// Strict readers: every field must be present with the right type.
class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}
  [[noreturn]] void fail(const std::string &what) const { throw TopologyError(where_ + ": " + what); }
  const rjson &get(const rjson &o, const char *key, const std::string &ctx) const {
    if (!o.is_object()) fail(ctx + " is not an object");
    auto it = o.find(key);
    if (it == o.end()) fail(ctx + ": missing \"" + key + "\"");
    return *it;
  }
  std::string str(const rjson &o, const char *key, const std::string &ctx) const {
    const auto &v = get(o, key, ctx);
    if (!v.is_string()) fail(ctx + ": \"" + key + "\" must be a string");
    return v.get<std::string>();
  }
  long integer(const rjson &o, const char *key, const std::string &ctx, long lo, long hi) const {
    const auto &v = get(o, key, ctx);
    if (!v.is_number_integer()) fail(ctx + ": \"" + key + "\" must be an integer");
    long x = v.get<long>();
    if (x < lo || x > hi) fail(ctx + ": \"" + key + "\" = " + std::to_string(x) + " is out of range");
    return x;
  }
  int opt_index(const rjson &o, const char *key, const std::string &ctx, size_t n) const {
    const auto &v = get(o, key, ctx);
    if (v.is_null()) return -1;
    if (!v.is_number_integer()) fail(ctx + ": \"" + key + "\" must be an integer or null");
    long x = v.get<long>();
    if (x < 0 || static_cast<size_t>(x) >= n)
      fail(ctx + ": \"" + key + "\" = " + std::to_string(x) + " refers to nothing");
    return static_cast<int>(x);
  }
  // An index whose range is checked later (the array it points into is read after it): the
  // value, or -1 for null; `is_null` tells the two apart.
  long raw_index(const rjson &o, const char *key, const std::string &ctx, bool *is_null) const {
    const auto &v = get(o, key, ctx);
    *is_null = v.is_null();
    if (*is_null) return -1;
    if (!v.is_number_integer()) fail(ctx + ": \"" + key + "\" must be an integer or null");
    return v.get<long>();
  }
  int index_in(long x, bool is_null, const char *key, const std::string &ctx, size_t n) const {
    if (is_null) return -1;
    if (x < 0 || static_cast<size_t>(x) >= n)
      fail(ctx + ": \"" + key + "\" = " + std::to_string(x) + " refers to nothing");
    return static_cast<int>(x);
  }
  double number(const rjson &o, const char *key, const std::string &ctx) const {
    const auto &v = get(o, key, ctx);
    if (!v.is_number()) fail(ctx + ": \"" + key + "\" must be a number");
    return v.get<double>();
  }
  const rjson &array(const rjson &o, const char *key, const std::string &ctx) const {
    const auto &v = get(o, key, ctx);
    if (!v.is_array()) fail(ctx + ": \"" + key + "\" must be an array");
    return v;
  }
  uint64_t guid(const rjson &o, const char *key, const std::string &ctx) const {
    std::string s = str(o, key, ctx);
    uint64_t g;
    if (!parse_guid(s, &g)) fail(ctx + ": \"" + key + "\" = \"" + s + "\" is not a GUID");
    return g;
  }
  int width(const rjson &o, const std::string &ctx) const {
    std::string w = str(o, "width", ctx);
    if (w == "?") return 0;
    if (w.size() < 2 || w.back() != 'x') fail(ctx + ": bad width \"" + w + "\"");
    int lanes = std::atoi(w.c_str());
    if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 12) fail(ctx + ": bad width \"" + w + "\"");
    return lanes;
  }
  LinkSpeed speed(const rjson &o, const std::string &ctx) const {
    std::string s = str(o, "speed", ctx);
    if (s == "?") return LinkSpeed::Unknown;
    LinkSpeed sp = speed_from_name(s);
    if (sp == LinkSpeed::Unknown) fail(ctx + ": bad speed \"" + s + "\"");
    return sp;
  }

 private:
  std::string where_;
};

// A host as its element of "hosts" gives it, before the switches and groups it names are read
// (they come later in the file): the references as written, resolved by parse().
struct HostRead {
  Host h;
  bool leaf_null = true;
  uint64_t leaf_guid = 0;
  std::vector<uint64_t> port_switch;  // per port: the GUID of the switch it plugs into
  long leaf_group = -1, pod = -1, dragonfly_group = -1;
  bool leaf_group_null = true, pod_null = true, dragonfly_group_null = true;
};

// The big arrays ("hosts", "links": nearly all of a file) read element by element while the text
// is parsed (read_streamed), so that their JSON trees never exist all at once: the tree of a whole
// file takes about 9 times its size, the Topology about half of it (bench/RESULTS.md, "How much memory
// does a topology take?").
struct Streamed {
  std::vector<HostRead> hosts;
  std::vector<Link> links;
  std::unordered_map<std::string, int> host_index;
  bool hosts_seen = false, links_seen = false;
};

HostRead read_host(const rjson &o, size_t i, const Reader &r, Streamed &st) {
  const std::string ctx = "hosts[" + std::to_string(i) + "]";
  HostRead hr;
  Host &h = hr.h;
  h.name = r.str(o, "name", ctx);
  if (h.name.empty()) r.fail(ctx + ": empty name");
  const auto &leaf = r.get(o, "leaf", ctx);
  hr.leaf_null = leaf.is_null();
  if (!hr.leaf_null) hr.leaf_guid = r.guid(o, "leaf", ctx);
  hr.leaf_group = r.raw_index(o, "leaf_group", ctx, &hr.leaf_group_null);
  hr.pod = r.raw_index(o, "pod", ctx, &hr.pod_null);
  hr.dragonfly_group = r.raw_index(o, "dragonfly_group", ctx, &hr.dragonfly_group_null);
  const auto &ports = r.array(o, "ports", ctx);
  for (size_t p = 0; p < ports.size(); p++) {
    std::string pctx = ctx + ".ports[" + std::to_string(p) + "]";
    HcaPort hp;
    hp.ca_guid = r.guid(ports[p], "ca_guid", pctx);
    hp.port_guid = r.guid(ports[p], "port_guid", pctx);
    hp.port = static_cast<int>(r.integer(ports[p], "port", pctx, 0, 255));
    hp.device = r.str(ports[p], "device", pctx);
    hp.rail = static_cast<int>(r.integer(ports[p], "rail", pctx, 0, 1024));
    hr.port_switch.push_back(r.guid(ports[p], "switch", pctx));
    hp.sw_port = static_cast<int>(r.integer(ports[p], "switch_port", pctx, 0, 255));
    hp.width = r.width(ports[p], pctx);
    hp.speed = r.speed(ports[p], pctx);
    h.ports.push_back(std::move(hp));
  }
  if (i > 0 && !natural_less(st.hosts.back().h.name, h.name))
    r.fail(ctx + ": hosts are not in canonical (natural name) order at \"" + h.name + "\"");
  if (!st.host_index.emplace(h.name, static_cast<int>(i)).second) r.fail(ctx + ": duplicate host " + h.name);
  return hr;
}

Link read_link(const rjson &o, size_t i, const Reader &r) {
  const std::string ctx = "links[" + std::to_string(i) + "]";
  Link l;
  l.a = r.guid(o, "a", ctx);
  l.b = r.guid(o, "b", ctx);
  l.width = r.width(o, ctx);
  l.speed = r.speed(o, ctx);
  const auto &ports = r.array(o, "ports", ctx);
  for (const auto &pp : ports) {
    if (!pp.is_array() || pp.size() != 2 || !pp[0].is_number_integer() || !pp[1].is_number_integer())
      r.fail(ctx + ": ports must be [port on a, port on b] pairs");
    l.ports.emplace_back(pp[0].get<int>(), pp[1].get<int>());
  }
  return l;
}

// Parses the text into a tree without the elements of the top-level "hosts" and "links" arrays,
// which go to *st as they complete (a later key of the same name starts them again: the last one
// counts, as for any key). Throws TopologyError (an element that does not read, or the schema
// of another version before it) or nlohmann's exceptions (not JSON).
rjson read_streamed(const std::string &text, const Reader &r, Streamed *st) {
  enum class In { Other, Hosts, Links };
  std::string key;     // the top-level key being read
  In in = In::Other;   // inside the top-level "hosts" or "links" array
  std::string schema;  // as soon as it is read: a file of another version is said to be so first
  size_t index = 0;
  auto cb = [&](int depth, rjson::parse_event_t ev, rjson &parsed) -> bool {
    using E = rjson::parse_event_t;
    if (depth == 1) {
      if (ev == E::key) {
        key = parsed.get<std::string>();
        in = In::Other;
      } else if (ev == E::array_start && (key == "hosts" || key == "links")) {
        in = key == "hosts" ? In::Hosts : In::Links;
        index = 0;
        if (in == In::Hosts) {
          st->hosts.clear();
          st->host_index.clear();
          st->hosts_seen = true;
        } else {
          st->links.clear();
          st->links_seen = true;
        }
      } else if (ev == E::value && key == "schema" && parsed.is_string()) {
        schema = parsed.get<std::string>();
      } else if (ev == E::array_end) {
        in = In::Other;
      }
      return true;
    }
    if (depth != 2 || in == In::Other) return true;
    // An element of the array: an object (its end), or anything else (a value, an array's end).
    if (ev == E::object_start || ev == E::array_start || ev == E::key) return true;
    if (!schema.empty() && schema != kSchema)
      r.fail("schema \"" + schema + "\" is not \"" + kSchema + "\" (written by another version?)");
    const char *what = in == In::Hosts ? "hosts[" : "links[";
    if (ev != E::object_end) r.fail(what + std::to_string(index) + "] is not an object");
    if (in == In::Hosts)
      st->hosts.push_back(read_host(parsed, index, r, *st));
    else
      st->links.push_back(read_link(parsed, index, r));
    index++;
    return false;  // read: not kept in the tree
  };
  return rjson::parse(text, cb);
}

Routes parse_routes(const rjson &o, const Reader &r) {
  const std::string ctx = "routes";
  long version = r.integer(o, "version", ctx, 0, 1L << 30);
  if (version != kRoutesVersion)
    r.fail("routes: version " + std::to_string(version) + " is not " + std::to_string(kRoutesVersion) +
           " (written by another version?)");
  Routes routes;
  routes.hash = r.str(o, "hash", ctx);
  const auto &subnets = r.array(o, "subnets", ctx);
  for (size_t n = 0; n < subnets.size(); ++n) {
    const std::string sctx = ctx + ".subnets[" + std::to_string(n) + "]";
    Subnet sn;
    const auto &sw = r.array(subnets[n], "switches", sctx);
    for (size_t i = 0; i < sw.size(); ++i) {
      const std::string wctx = sctx + ".switches[" + std::to_string(i) + "]";
      SwitchLft s;
      s.guid = r.guid(sw[i], "guid", wctx);
      s.lid = static_cast<uint16_t>(r.integer(sw[i], "lid", wctx, 0, kMaxUnicastLid));
      try {
        s.out = lft_from_base64(r.str(sw[i], "lft", wctx));
      } catch (const std::invalid_argument &e) {
        r.fail(wctx + ": " + e.what());
      }
      if (!sn.switches.empty() && sn.switches.back().guid >= s.guid) r.fail(wctx + ": switches not in GUID order");
      sn.switches.push_back(std::move(s));
    }
    if (sn.switches.empty()) r.fail(sctx + ": no switches");
    const auto &ports = r.array(subnets[n], "ports", sctx);
    for (size_t i = 0; i < ports.size(); ++i) {
      const std::string pctx = sctx + ".ports[" + std::to_string(i) + "]";
      const auto &a = ports[i];
      if (!a.is_array() || a.size() != 4 || !a[0].is_string() || !a[1].is_number_integer() ||
          !a[2].is_number_integer() || !a[3].is_number_integer())
        r.fail(pctx + ": must be [node GUID, port, base LID, LMC]");
      PortLid p;
      if (!parse_guid(a[0].get<std::string>(), &p.guid)) r.fail(pctx + ": not a GUID");
      long port = a[1].get<long>(), lid = a[2].get<long>(), lmc = a[3].get<long>();
      if (port < 0 || port > 255 || lid < 1 || lid > long(kMaxUnicastLid) || lmc < 0 || lmc > 7)
        r.fail(pctx + ": port, LID or LMC out of range");
      p.port = int(port);
      p.base_lid = uint16_t(lid);
      p.lmc = int(lmc);
      if (!sn.ports.empty() && std::make_pair(sn.ports.back().guid, sn.ports.back().port) >= std::make_pair(p.guid, p.port))
        r.fail(pctx + ": ports not in (GUID, port) order");
      sn.ports.push_back(p);
    }
    routes.subnets.push_back(std::move(sn));
  }
  if (r.integer(o, "switches", ctx, 0, 1L << 30) != long(routes.switch_count()))
    r.fail("routes: \"switches\" does not match the tables listed");
  return routes;
}

// The switches[] array into t.switches; their index by GUID.
std::unordered_map<uint64_t, int> parse_switches(const rjson &switches, const Reader &r, size_t nleaf_groups,
                                                 size_t npods, size_t ndfly, Topology &t) {
  std::unordered_map<uint64_t, int> sw_index;
  for (size_t i = 0; i < switches.size(); i++) {
    std::string ctx = "switches[" + std::to_string(i) + "]";
    const auto &o = switches[i];
    Switch s;
    s.guid = r.guid(o, "guid", ctx);
    s.name = r.str(o, "name", ctx);
    s.desc = r.str(o, "desc", ctx);
    s.nports = static_cast<int>(r.integer(o, "ports", ctx, 0, 65535));
    s.level = static_cast<int>(r.integer(o, "level", ctx, 0, 64));
    s.leaf_group = r.opt_index(o, "leaf_group", ctx, nleaf_groups);
    s.pod = r.opt_index(o, "pod", ctx, npods);
    s.dragonfly_group = r.opt_index(o, "dragonfly_group", ctx, ndfly);
    s.down_gbps = r.number(o, "down_gbps", ctx);
    s.up_gbps = r.number(o, "up_gbps", ctx);
    if (!sw_index.emplace(s.guid, static_cast<int>(i)).second)
      r.fail(ctx + ": duplicate switch GUID " + guid_str(s.guid));
    t.switches.push_back(std::move(s));
  }
  return sw_index;
}

// The hosts read element by element (read_streamed) into t.hosts, their switches and groups
// resolved to indices; each switch's hosts listed.
void resolve_hosts(Streamed &st, const Reader &r, const std::unordered_map<uint64_t, int> &sw_index,
                   size_t nleaf_groups, size_t npods, size_t ndfly, Topology &t) {
  t.hosts.reserve(st.hosts.size());
  for (size_t i = 0; i < st.hosts.size(); i++) {
    std::string ctx = "hosts[" + std::to_string(i) + "]";
    HostRead &hr = st.hosts[i];
    Host h = std::move(hr.h);
    h.leaf = -1;
    if (!hr.leaf_null) {
      auto it = sw_index.find(hr.leaf_guid);
      if (it == sw_index.end()) r.fail(ctx + ": switch " + guid_str(hr.leaf_guid) + " is not in switches[]");
      h.leaf = it->second;
    }
    h.leaf_group = r.index_in(hr.leaf_group, hr.leaf_group_null, "leaf_group", ctx, nleaf_groups);
    h.pod = r.index_in(hr.pod, hr.pod_null, "pod", ctx, npods);
    h.dragonfly_group = r.index_in(hr.dragonfly_group, hr.dragonfly_group_null, "dragonfly_group", ctx, ndfly);
    for (size_t p = 0; p < h.ports.size(); p++) {
      auto it = sw_index.find(hr.port_switch[p]);
      if (it == sw_index.end())
        r.fail(ctx + ".ports[" + std::to_string(p) + "]: switch " + guid_str(hr.port_switch[p]) +
               " is not in switches[]");
      h.ports[p].sw = it->second;
    }
    t.hosts.push_back(std::move(h));
  }
  std::vector<HostRead>().swap(st.hosts);
  for (size_t h = 0; h < t.hosts.size(); h++)
    for (const auto &p : t.hosts[h].ports) {
      auto &list = t.switches[p.sw].hosts;
      if (list.empty() || list.back() != static_cast<int>(h)) list.push_back(static_cast<int>(h));
    }
}

// The lists of hosts (a Slurm host list) and of switches (GUIDs) that groups and domains name.
struct MemberLists {
  const Reader &r;
  const std::unordered_map<std::string, int> &host_index;
  const std::unordered_map<uint64_t, int> &sw_index;

  std::vector<int> hosts(const rjson &o, const std::string &ctx) const {
    std::vector<int> out;
    std::vector<std::string> names;
    try {
      names = hostlist_expand(r.str(o, "hosts", ctx));
    } catch (const std::invalid_argument &e) {
      r.fail(ctx + ": " + e.what());
    }
    for (const auto &n : names) {
      auto it = host_index.find(n);
      if (it == host_index.end()) r.fail(ctx + ": host " + n + " is not in hosts[]");
      out.push_back(it->second);
    }
    return out;
  }
  std::vector<int> switches(const rjson &o, const char *key, const std::string &ctx) const {
    std::vector<int> out;
    const auto &a = r.array(o, key, ctx);
    for (size_t k = 0; k < a.size(); k++) {
      if (!a[k].is_string()) r.fail(ctx + ": \"" + key + "\" must list GUID strings");
      uint64_t g;
      if (!parse_guid(a[k].get<std::string>(), &g) || !sw_index.count(g))
        r.fail(ctx + ": unknown switch in \"" + key + "\"");
      out.push_back(sw_index.at(g));
    }
    return out;
  }
};

// leaf_groups[], pods[] and dragonfly_groups[].
void parse_groups(const rjson &leaf_groups, const rjson &pods, const rjson &dfly, const Reader &r,
                  const MemberLists &m, Topology &t) {
  for (size_t g = 0; g < leaf_groups.size(); g++) {
    std::string ctx = "leaf_groups[" + std::to_string(g) + "]";
    LeafGroup lg;
    lg.pod = r.opt_index(leaf_groups[g], "pod", ctx, pods.size());
    lg.leaves = m.switches(leaf_groups[g], "leaves", ctx);
    lg.hosts = m.hosts(leaf_groups[g], ctx);
    if (lg.leaves.empty()) r.fail(ctx + ": no leaves");
    t.leaf_groups.push_back(std::move(lg));
  }
  for (size_t p = 0; p < pods.size(); p++) {
    std::string ctx = "pods[" + std::to_string(p) + "]";
    Pod pod;
    const auto &lgs = r.array(pods[p], "leaf_groups", ctx);
    for (const auto &x : lgs) {
      if (!x.is_number_integer() || x.get<long>() < 0 || static_cast<size_t>(x.get<long>()) >= leaf_groups.size())
        r.fail(ctx + ": bad leaf group index");
      pod.leaf_groups.push_back(x.get<int>());
    }
    pod.switches = m.switches(pods[p], "switches", ctx);
    t.pods.push_back(std::move(pod));
  }
  for (size_t g = 0; g < dfly.size(); g++) {
    std::string ctx = "dragonfly_groups[" + std::to_string(g) + "]";
    DragonflyGroup dg;
    dg.switches = m.switches(dfly[g], "switches", ctx);
    dg.hosts = m.hosts(dfly[g], ctx);
    t.dragonfly_groups.push_back(std::move(dg));
  }
}

// levels[], anomalies[] and ignored[]: what classification said about the fabric.
void parse_findings(const rjson &j, const Reader &r, Topology &t) {
  const auto &levels = r.array(j, "levels", "top level");
  for (size_t i = 0; i < levels.size(); i++) {
    std::string ctx = "levels[" + std::to_string(i) + "]";
    LevelStats ls;
    ls.level = static_cast<int>(r.integer(levels[i], "level", ctx, 0, 64));
    ls.switches = static_cast<int>(r.integer(levels[i], "switches", ctx, 0, 1 << 30));
    const auto &o = r.get(levels[i], "oversubscription", ctx);
    ls.oversub_min = r.number(o, "min", ctx);
    ls.oversub_median = r.number(o, "median", ctx);
    ls.oversub_max = r.number(o, "max", ctx);
    t.levels.push_back(ls);
  }
  const auto &anomalies = r.array(j, "anomalies", "top level");
  for (size_t i = 0; i < anomalies.size(); i++) {
    std::string ctx = "anomalies[" + std::to_string(i) + "]";
    t.anomalies.push_back(
        {r.str(anomalies[i], "kind", ctx), r.str(anomalies[i], "where", ctx), r.str(anomalies[i], "detail", ctx)});
  }
  const auto &ignored = r.array(j, "ignored", "top level");
  for (size_t i = 0; i < ignored.size(); i++) {
    std::string ctx = "ignored[" + std::to_string(i) + "]";
    t.ignored.push_back({r.guid(ignored[i], "guid", ctx), r.str(ignored[i], "desc", ctx),
                         r.str(ignored[i], "name", ctx), r.str(ignored[i], "reason", ctx)});
  }
}

// nvlink_domains[] (present only when the fabric has multi-node domains), hosts marked.
void parse_nvlink_domains(const rjson &doms, const Reader &r, const MemberLists &m, Topology &t) {
  for (size_t d = 0; d < doms.size(); d++) {
    std::string ctx = "nvlink_domains[" + std::to_string(d) + "]";
    NvlinkDomain nd;
    nd.cluster_uuid = r.str(doms[d], "cluster_uuid", ctx);
    if (nd.cluster_uuid.empty()) r.fail(ctx + ": empty cluster_uuid");
    nd.clique_id = static_cast<uint32_t>(r.integer(doms[d], "clique_id", ctx, 0, 0xffffffffL));
    nd.gpus_per_node = static_cast<int>(r.integer(doms[d], "gpus_per_node", ctx, 1, 1024));
    nd.hosts = m.hosts(doms[d], ctx);
    if (nd.hosts.empty()) r.fail(ctx + ": no hosts");
    if (!t.nvlink_domains.empty() &&
        std::tie(t.nvlink_domains.back().cluster_uuid, t.nvlink_domains.back().clique_id) >=
            std::tie(nd.cluster_uuid, nd.clique_id))
      r.fail(ctx + ": domains not in (cluster_uuid, clique_id) order");
    for (int h : nd.hosts) {
      if (t.hosts[h].nvlink_domain >= 0) r.fail(ctx + ": host " + t.hosts[h].name + " is in two domains");
      t.hosts[h].nvlink_domain = static_cast<int>(d);
    }
    t.nvlink_domains.push_back(std::move(nd));
  }
}

// Cross-checks that keep the engine's assumptions true.
void check_group_membership(const Topology &t, const Reader &r) {
  for (size_t h = 0; h < t.hosts.size(); h++) {
    const Host &host = t.hosts[h];
    if (host.leaf_group >= 0 && t.leaf_groups[host.leaf_group].pod != host.pod)
      r.fail("hosts[" + std::to_string(h) + "]: pod does not match its leaf group's pod");
  }
  for (size_t g = 0; g < t.leaf_groups.size(); g++)
    for (int h : t.leaf_groups[g].hosts)
      if (t.hosts[h].leaf_group != static_cast<int>(g))
        r.fail("leaf_groups[" + std::to_string(g) + "]: host " + t.hosts[h].name + " says it is in leaf group " +
               std::to_string(t.hosts[h].leaf_group));
}

Topology parse(const rjson &j, const Reader &r, Streamed &st) {
  if (!j.is_object()) r.fail("not a JSON object");
  std::string schema = r.str(j, "schema", "top level");
  if (schema != kSchema) r.fail("schema \"" + schema + "\" is not \"" + kSchema + "\" (written by another version?)");
  Topology t;
  t.hash = r.str(j, "hash", "top level");
  t.max_level = static_cast<int>(r.integer(j, "max_level", "top level", 0, 64));
  const auto &ro = r.get(j, "rail_optimized", "top level");
  if (!ro.is_boolean()) r.fail("\"rail_optimized\" must be true or false");
  t.rail_optimized = ro.get<bool>();

  const auto &switches = r.array(j, "switches", "top level");
  const auto &leaf_groups = r.array(j, "leaf_groups", "top level");
  const auto &pods = r.array(j, "pods", "top level");
  const auto &dfly = r.array(j, "dragonfly_groups", "top level");
  const std::unordered_map<uint64_t, int> sw_index =
      parse_switches(switches, r, leaf_groups.size(), pods.size(), dfly.size(), t);

  // hosts and links were read element by element (read_streamed); what is left of them in j
  // says only whether the keys are there with arrays.
  r.array(j, "hosts", "top level");
  resolve_hosts(st, r, sw_index, leaf_groups.size(), pods.size(), dfly.size(), t);
  r.array(j, "links", "top level");
  t.links = std::move(st.links);

  const MemberLists members{r, st.host_index, sw_index};
  parse_groups(leaf_groups, pods, dfly, r, members, t);
  parse_findings(j, r, t);
  if (j.contains("nvlink_domains")) parse_nvlink_domains(r.array(j, "nvlink_domains", "top level"), r, members, t);
  if (j.contains("routes")) t.routes = parse_routes(j["routes"], r);
  check_group_membership(t, r);
  return t;
}

// Names and descriptions come from the fabric (node descriptions are whatever an admin or a vendor
// set): bytes that are not UTF-8 are written as U+FFFD rather than refused with an exception.
std::string render(const ojson &j) { return j.dump(1, ' ', false, ojson::error_handler_t::replace) + "\n"; }

}  // namespace

namespace {

// Where the routes member sits in a rendered file: `,\n "routes": {...}` just before the closing
// "\n}\n". A JSON string holds no raw newline, so "\n \"routes\": " (one space: depth 1) can only be
// that member. The cabling hash covers the text without this span, so that a file with routes has
// the cabling hash of the same fabric without them.
struct RoutesSpan {
  size_t begin = std::string::npos;  // the comma before the key
  size_t value = 0, end = 0;         // the value: [value, end)
  bool found() const { return begin != std::string::npos; }
};
constexpr std::string_view kRoutesKey = "\n \"routes\": ";
constexpr std::string_view kFileEnd = "\n}\n";

RoutesSpan find_routes(std::string_view text) {
  RoutesSpan s;
  size_t at = text.rfind(kRoutesKey);
  if (at == std::string::npos || at == 0 || text[at - 1] != ',' || text.size() < at + kRoutesKey.size() + kFileEnd.size() ||
      text.substr(text.size() - kFileEnd.size()) != kFileEnd)
    return s;
  s.begin = at - 1;
  s.value = at + kRoutesKey.size();
  s.end = text.size() - kFileEnd.size();
  return s;
}

// The position of the value of the first `"hash": "` in text[from, to), and of its closing quote.
bool find_hash(std::string_view text, size_t from, size_t to, size_t *value, size_t *close) {
  static constexpr std::string_view key = "\"hash\": \"";
  size_t at = text.substr(0, to).find(key, from);
  if (at == std::string::npos) return false;
  *value = at + key.size();
  *close = text.find('"', *value);
  return *close != std::string::npos && *close < to;
}

}  // namespace

// Rank order depends on the routes when there are any, so both sides must have the same ones.
void set_placement_hash(Topology &t) {
  t.placement_hash = t.routes.empty() ? t.hash : "sha256:" + sha256_hex({t.hash, " ", t.routes.hash});
}

std::string to_json(Topology &topo) {
  topo.hash.clear();
  topo.routes.hash.clear();
  std::string text = render(build(topo));
  const std::string_view all(text);
  size_t v = 0, c = 0;
  RoutesSpan rs = find_routes(all);
  if (!topo.routes.empty()) {
    if (!rs.found() || !find_hash(all, rs.value, rs.end, &v, &c))
      throw std::logic_error("topology.json: no routes hash field to fill");
    topo.routes.hash = "sha256:" + sha256_hex({all.substr(rs.value, rs.end - rs.value)});
    text.insert(v, topo.routes.hash);  // after the top-level hash: its position does not move
  }
  // The cabling hash: the text without the routes member. "hash" is the second key, so its empty
  // value is the first occurrence of the key.
  const std::string_view now(text);
  if (!find_hash(now, 0, now.size(), &v, &c)) throw std::logic_error("topology.json: no hash field to fill");
  if (topo.routes.empty())
    topo.hash = "sha256:" + sha256_hex({now});
  else
    topo.hash = "sha256:" + sha256_hex({now.substr(0, rs.begin), kFileEnd});
  text.insert(v, topo.hash);
  set_placement_hash(topo);
  return text;
}

Topology topology_from_json(const std::string &text) {
  Reader r("topology.json");
  rjson j;
  Streamed st;
  try {
    j = read_streamed(text, r, &st);
  } catch (const nlohmann::json::exception &e) {
    // parse_error, and out_of_range for a number beyond a double ("1e400"): both are bad files.
    r.fail(std::string("not valid JSON: ") + e.what());
  }
  Topology t = parse(j, r, st);  // structure first: its messages say what is wrong where
  // The hash proves the file is what topoaware wrote: a hand-edited or damaged file must not
  // silently steer placement (and the SPANK side compares hashes with slurmctld). It is checked
  // on the text itself (the hash of the text with its hash value emptied, as to_json computes
  // it): one pass over the bytes instead of a second rendering. The routes have their own.
  const std::string_view all(text);
  size_t v = 0, c = 0;
  if (!find_hash(all, 0, all.size(), &v, &c)) r.fail("no \"hash\" field: not written by topoaware");
  RoutesSpan rs = find_routes(all);
  if (t.routes.empty() != !rs.found() || (rs.found() && rs.begin < c))
    r.fail("the \"routes\" member is not where topoaware writes it (last); the file was edited: regenerate it "
           "with topoaware discover");
  std::string actual =
      "sha256:" + (rs.found() ? sha256_hex({all.substr(0, v), all.substr(c, rs.begin - c), kFileEnd})
                              : sha256_hex({all.substr(0, v), all.substr(c)}));
  if (t.hash != actual)
    r.fail("content hash " + t.hash + " does not match the content (" + actual +
           "); the file was edited or damaged: regenerate it with topoaware discover");
  if (rs.found()) {
    size_t rv = 0, rc = 0;
    if (!find_hash(all, rs.value, rs.end, &rv, &rc)) r.fail("routes: no \"hash\" field");
    std::string routes_actual =
        "sha256:" + sha256_hex({all.substr(rs.value, rv - rs.value), all.substr(rc, rs.end - rc)});
    if (t.routes.hash != routes_actual)
      r.fail("routes hash " + t.routes.hash + " does not match the routes (" + routes_actual +
             "); the file was edited or damaged: regenerate it with topoaware discover --routes");
  }
  set_placement_hash(t);
  return t;
}

namespace {

// The reader's JSON tree takes about 9 times the file's size and is freed when the read is over, but
// glibc keeps freed heap pages resident: a 63 MB file (102,400 hosts) left the process ~400 MB larger
// while the topology itself holds ~40 MB (bench/topology_memory), in slurmctld for good and in each
// step's slurmstepd for the step's life. Hand the pages back once per file read (in slurmctld this
// runs in the loading thread, off its locks).
void release_freed_heap() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace

Topology load_topology_file(const std::string &path) { return load_topology_file(path, nullptr); }

Topology load_topology_file(const std::string &path, std::string *file_sha256) {
  std::string text;
  try {
    text = read_regular_file(path, kMaxTopologyBytes, "the 1 GiB a topology file may have");
  } catch (const FileReadError &e) {
    throw TopologyError(path + ": " + e.what());
  }
  if (file_sha256) *file_sha256 = sha256_hex({text});
  try {
    Topology t = topology_from_json(text);
    release_freed_heap();
    return t;
  } catch (const TopologyError &e) {
    release_freed_heap();
    std::string msg = e.what();
    const std::string prefix = "topology.json: ";
    if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
    throw TopologyError(path + ": " + msg);
  }
}

}  // namespace topoaware
