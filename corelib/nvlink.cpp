// SPDX-License-Identifier: GPL-2.0-or-later
// NVLink domain lines: parsing and merging into the Topology (nvlink.hpp).
#include "nvlink.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>

namespace topoaware {

namespace {

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// A decimal unsigned 32-bit number, the whole string.
bool parse_u32(const std::string &s, uint32_t *out) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > 0xffffffffULL) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// A Slurm node name as pdsh/clush print it before ": ": no blanks, no ':' and not empty.
bool plausible_host(const std::string &h) {
  if (h.empty() || h.size() > 255) return false;
  for (unsigned char c : h)
    if (std::isspace(c) || c == ':' || c == ',' || c < 0x20 || c == 0x7f) return false;
  return true;
}

}  // namespace

std::string format_node_nvlink(const NodeNvlink &n) {
  if (!n.in_domain) return "nvlink none (" + n.reason + ")";
  return "nvlink cluster_uuid=" + n.cluster_uuid + " clique_id=" + std::to_string(n.clique_id) +
         " gpus=" + std::to_string(n.gpus);
}

bool normalize_cluster_uuid(const std::string &in, std::string *out) {
  std::string s = trim(in);
  if (s.empty() || s.size() > 64) return false;
  bool nonzero = false;
  std::string low;
  for (unsigned char c : s) {
    if (c == '-') {
      low += '-';
      continue;
    }
    if (!std::isxdigit(c)) return false;
    if (c != '0') nonzero = true;
    low += static_cast<char>(std::tolower(c));
  }
  if (!nonzero) return false;
  *out = low;
  return true;
}

namespace {

// What the lines of one host said so far.
struct HostLines {
  NodeNvlink n;
  bool from_node_line = false;  // a `topoaware node --nvlink` line
  int gpu_lines = 0;            // nvidia-smi lines
  int gpus_in_domain = 0;
  int first_line = 0;
};

// A `topoaware node --nvlink` line's text after "nvlink": "none (reason)" or its domain's fields,
// each once.
void node_line(HostLines &a, const std::string &rest, const std::string &host, const std::string &where) {
  if (a.from_node_line || a.gpu_lines)
    throw NvlinkError(where + "host " + host + " is listed more than once (first at line " +
                      std::to_string(a.first_line) + ")");
  a.from_node_line = true;
  std::string body = trim(rest.substr(6));
  if (body.rfind("none", 0) == 0) {
    std::string r = trim(body.substr(4));
    if (r.size() >= 2 && r.front() == '(' && r.back() == ')') r = r.substr(1, r.size() - 2);
    a.n.in_domain = false;
    a.n.reason = r.empty() ? "no NVLink fabric" : r;
    return;
  }
  std::string uuid, clique, gpus;
  size_t p = 0;
  while (p < body.size()) {
    size_t e = body.find(' ', p);
    if (e == std::string::npos) e = body.size();
    std::string word = body.substr(p, e - p);
    p = e + 1;
    if (word.empty()) continue;
    size_t eq = word.find('=');
    std::string k = word.substr(0, eq), v = eq == std::string::npos ? "" : word.substr(eq + 1);
    std::string *slot = k == "cluster_uuid" ? &uuid : k == "clique_id" ? &clique : k == "gpus" ? &gpus : nullptr;
    if (!slot || eq == std::string::npos) throw NvlinkError(where + "unknown field \"" + word + "\"");
    if (!slot->empty()) throw NvlinkError(where + "\"" + k + "\" given twice");
    *slot = v;
  }
  uint32_t g = 0;
  if (!normalize_cluster_uuid(uuid, &a.n.cluster_uuid))
    throw NvlinkError(where + "cluster_uuid \"" + uuid + "\" is not a fabric UUID");
  if (!parse_u32(clique, &a.n.clique_id)) throw NvlinkError(where + "clique_id \"" + clique + "\" is not a number");
  if (!parse_u32(gpus, &g) || g < 1 || g > 1024) throw NvlinkError(where + "gpus \"" + gpus + "\" is not 1 to 1024");
  a.n.gpus = static_cast<int>(g);
  a.n.in_domain = true;
}

// An nvidia-smi CSV line, "<uuid>, <clique>" for one GPU: every GPU of a host in the same
// domain, or all in none.
void gpu_line(HostLines &a, const std::string &rest, const std::string &host, const std::string &where) {
  if (a.from_node_line)
    throw NvlinkError(where + "host " + host + " is listed more than once (first at line " +
                      std::to_string(a.first_line) + ")");
  size_t comma = rest.find(',');
  if (comma == std::string::npos || rest.find(',', comma + 1) != std::string::npos)
    throw NvlinkError(where + "expected \"<cluster UUID>, <clique ID>\" (nvidia-smi "
                              "--query-gpu=fabric.clusterUuid,fabric.cliqueId --format=csv,noheader) or a "
                              "topoaware node --nvlink line");
  std::string uuid_text = trim(rest.substr(0, comma)), clique_text = trim(rest.substr(comma + 1));
  a.gpu_lines++;
  std::string uuid;
  uint32_t clique = 0;
  bool has_uuid = normalize_cluster_uuid(uuid_text, &uuid);
  bool has_clique = parse_u32(clique_text, &clique);
  auto not_available = [](const std::string &v) {
    return v.find("N/A") != std::string::npos || v.find("Not Supported") != std::string::npos;
  };
  // A GPU in no fabric: an all-zero UUID (any clique) or N/A.
  bool no_fabric = !has_uuid && (not_available(uuid_text) ||
                                 (!uuid_text.empty() && uuid_text.find_first_not_of("0-") == std::string::npos));
  if (!no_fabric && !has_uuid) throw NvlinkError(where + "cluster UUID \"" + uuid_text + "\" is not a UUID");
  if (!no_fabric && !has_clique)
    throw NvlinkError(where + "\"" + rest + "\": cluster UUID and clique ID do not read together");
  if (no_fabric) {
    if (a.gpus_in_domain)
      throw NvlinkError(where + "host " + host + ": some GPUs are in an NVLink domain and some are not");
    a.n.reason = "nvidia-smi: GPU in no NVLink fabric";
    return;
  }
  if (a.gpu_lines > a.gpus_in_domain + 1)
    throw NvlinkError(where + "host " + host + ": some GPUs are in an NVLink domain and some are not");
  if (a.gpus_in_domain && (uuid != a.n.cluster_uuid || clique != a.n.clique_id))
    throw NvlinkError(where + "host " + host + ": its GPUs report different NVLink domains");
  a.n.cluster_uuid = uuid;
  a.n.clique_id = clique;
  a.n.in_domain = true;
  a.gpus_in_domain++;
  a.n.gpus = a.gpus_in_domain;
}

}  // namespace

std::vector<NodeNvlink> parse_nvlink_lines(const std::string &text, const std::string &source) {
  std::vector<HostLines> acc;
  std::unordered_map<std::string, size_t> index;
  size_t pos = 0;
  int lineno = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    lineno++;
    if (nl == text.size() && line.empty()) break;
    const std::string where = source + ":" + std::to_string(lineno) + ": ";
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t colon = t.find(": ");
    if (colon == std::string::npos)
      throw NvlinkError(where + "no \"host: \" prefix (collect with pdsh or clush, which add it)");
    std::string host = trim(t.substr(0, colon));
    std::string rest = trim(t.substr(colon + 2));
    if (!plausible_host(host)) throw NvlinkError(where + "\"" + host + "\" is not a host name");
    if (rest.rfind("fabric.clusterUuid", 0) == 0 || rest.rfind("fabric.cluster_uuid", 0) == 0) continue;  // a header
    auto it = index.find(host);
    if (it == index.end()) {
      it = index.emplace(host, acc.size()).first;
      acc.push_back({});
      acc.back().n.host = host;
      acc.back().first_line = lineno;
    }
    HostLines &a = acc[it->second];
    if (rest == "nvlink" || rest.rfind("nvlink ", 0) == 0)
      node_line(a, rest, host, where);
    else
      gpu_line(a, rest, host, where);
  }
  std::vector<NodeNvlink> out;
  out.reserve(acc.size());
  for (auto &a : acc) out.push_back(std::move(a.n));
  return out;
}

void apply_nvlink_domains(Topology &topo, const std::vector<NodeNvlink> &nodes, std::vector<std::string> *unknown,
                          std::vector<std::string> *warnings) {
  std::map<std::tuple<std::string, uint32_t>, std::vector<std::pair<int, int>>> by_key;  // -> (host, gpus)
  for (const auto &n : nodes) {
    int h = topo.host_index(n.host);
    if (h < 0) {
      if (unknown) unknown->push_back(n.host);
      continue;
    }
    if (n.in_domain) by_key[{n.cluster_uuid, n.clique_id}].emplace_back(h, n.gpus);
  }
  topo.nvlink_domains.clear();
  for (auto &host : topo.hosts) host.nvlink_domain = -1;
  for (auto &[key, members] : by_key) {
    NvlinkDomain d;
    d.cluster_uuid = std::get<0>(key);
    d.clique_id = std::get<1>(key);
    std::sort(members.begin(), members.end());  // host indices are in natural name order
    int lo = members.front().second, hi = lo;
    for (const auto &[h, g] : members) {
      d.hosts.push_back(h);
      lo = std::min(lo, g);
      hi = std::max(hi, g);
    }
    d.gpus_per_node = lo;
    if (lo != hi && warnings)
      warnings->push_back("NVLink domain " + d.cluster_uuid + "/" + std::to_string(d.clique_id) + ": hosts report " +
                          std::to_string(lo) + " to " + std::to_string(hi) + " GPUs; " + std::to_string(lo) +
                          " per node is assumed");
    int id = static_cast<int>(topo.nvlink_domains.size());
    for (int h : d.hosts) topo.hosts[h].nvlink_domain = id;
    topo.nvlink_domains.push_back(std::move(d));
  }
}

std::vector<NodeNvlink> synthetic_nvlink_domains(const Topology &topo, int size, int gpus) {
  if (size < 1 || gpus < 1) throw NvlinkError("NVLink domain size and GPUs per node must be at least 1");
  std::vector<NodeNvlink> out;
  for (size_t h = 0; h < topo.hosts.size(); h++) {
    NodeNvlink n;
    n.host = topo.hosts[h].name;
    n.in_domain = true;
    char uuid[48];
    std::snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012llx",
                  static_cast<unsigned long long>(h / static_cast<size_t>(size) + 1) & 0xffffffffffffULL);
    n.cluster_uuid = uuid;
    n.clique_id = 1;
    n.gpus = gpus;
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace topoaware
