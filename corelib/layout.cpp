// SPDX-License-Identifier: GPL-2.0-or-later
// Layout parsing, validation and request completion (see layout.hpp).
#include "layout.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "text.hpp"

namespace topoaware {
namespace {

std::string str(std::string_view v) { return std::string(v); }

// "1, 2, 4 or 8" (at most `limit` values, then "...").
std::string list_values(const std::vector<uint64_t> &v, size_t limit = 12) {
  std::string out;
  const size_t n = std::min(v.size(), limit);
  for (size_t i = 0; i < n; ++i) {
    if (i) out += (i + 1 == n && n == v.size()) ? " or " : ", ";
    out += std::to_string(v[i]);
  }
  if (n < v.size()) out += ", ...";
  return out;
}

std::vector<uint64_t> divisors(uint64_t n) {
  std::vector<uint64_t> small, large;
  for (uint64_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

// GPUs per node a job of this layout may use on nodes of `node_gpus` GPUs: divides node_gpus, is a
// multiple of tp (whole TP groups per node) and divides the world size (whole nodes). Ascending.
std::vector<uint64_t> usable_gpus_per_node(const Layout &l, uint32_t node_gpus) {
  std::vector<uint64_t> out;
  // A TP group larger than a node (checked against the NVLink domains) fills its nodes.
  if (l.tp > node_gpus && node_gpus && l.tp % node_gpus == 0) return {node_gpus};
  for (uint64_t g : divisors(node_gpus))
    if (g % l.tp == 0 && l.world() % g == 0) out.push_back(g);
  return out;
}

// Node counts that would fit: world / g for every usable g, ascending.
std::string fitting_node_counts(const Layout &l, uint32_t node_gpus) {
  std::vector<uint64_t> n;
  for (uint64_t g : usable_gpus_per_node(l, node_gpus)) n.push_back(l.world() / g);
  std::sort(n.begin(), n.end());
  std::string out;
  for (size_t i = 0; i < n.size() && i < 6; ++i) out += (i ? " or -N " : "-N ") + std::to_string(n[i]);
  return out;
}

std::string layout_product(const Layout &l) {
  std::string s = "tp*cp*dp*pp = " + std::to_string(l.tp) + "*" + std::to_string(l.cp) + "*" +
                  std::to_string(l.dp) + "*" + std::to_string(l.pp);
  return s;
}

// The tp values that fit nodes of g GPUs, as advice: the divisors of g (inside a node) and, where
// multi-node NVLink domains exist, the multiples of g up to the largest domain (whole nodes of one
// domain; a domain need not split evenly into TP groups: the nodes left over serve other jobs).
std::string fitting_tp_text(uint32_t g, uint32_t largest_domain_nodes) {
  std::string s = "use tp=" + list_values(divisors(g));
  if (largest_domain_nodes >= 2)
    s += ", or a multiple of " + std::to_string(g) + " up to " + std::to_string(uint64_t(g) * largest_domain_nodes) +
         " (whole nodes of one NVLink domain)";
  return s;
}

// The tp check. `source` is empty for the nodes' own GPU count, else the option that set the GPUs
// per node ("--gpus-per-node"), so the message names what the user typed. `node_gpus` is the
// nodes' own count (0 unknown) and `domain_nodes` the multi-node NVLink domains (validate_tp_fits).
void check_tp(const Layout &l, uint32_t g, const std::string &source, uint32_t node_gpus,
              const std::vector<uint32_t> &domain_nodes) {
  const std::string gs = std::to_string(g), tps = std::to_string(l.tp);
  const std::string have = source.empty() ? "nodes have " + gs + " GPUs"
                                          : "the job asks for " + gs + " GPUs per node (" + source + "=" + gs + ")";
  if (l.tp > g && !domain_nodes.empty() && node_gpus != 0 && g == node_gpus) {
    // A TP group spanning nodes: whole nodes of one domain, never a node shared with another group.
    uint32_t largest = 0;
    for (uint32_t s : domain_nodes) largest = std::max(largest, s);
    const std::string ok = fitting_tp_text(g, largest);
    if (l.tp % g != 0)
      throw LayoutError("tp=" + tps + " is more than the " + gs + " GPUs of a node but not a multiple of " + gs +
                            ", so a node would hold parts of two TP groups; " + ok,
                        RequestPart::Gpus);
    const uint32_t k = l.tp / g;
    if (largest < k)
      throw LayoutError("tp=" + tps + " spans " + std::to_string(k) + " nodes of " + gs +
                            " GPUs, which must lie in one NVLink domain; the largest NVLink domain here has " +
                            std::to_string(uint64_t(largest) * g) + " GPUs (" + std::to_string(largest) +
                            " nodes of " + gs + "): " + ok,
                        RequestPart::Gpus);
    return;
  }
  if (l.tp > g) {
    std::string why = "tp=" + tps + " needs " + tps + " GPUs in one NVLink domain but " + have + "; use tp=" + gs +
                      " or less";
    if (!domain_nodes.empty() && node_gpus > g)
      why += " (a TP group spans the nodes of an NVLink domain only when it uses all " + std::to_string(node_gpus) +
             " GPUs of each)";
    throw LayoutError(why, RequestPart::Gpus);
  }
  if (g % l.tp != 0) {
    std::vector<uint64_t> ok;
    for (uint64_t d : divisors(g)) ok.push_back(d);
    throw LayoutError("tp=" + tps + " does not divide the " + gs + " GPUs per node (" + have +
                          "), so a TP group would span two nodes; use tp=" + list_values(ok),
                      RequestPart::Gpus);
  }
}

}  // namespace

uint32_t parse_axis(std::string_view name, std::string_view text) {
  const std::string who = str(name) + "=" + str(text);
  if (text.empty()) throw LayoutError(str(name) + " needs a value (a whole number from 1 to 65536)");
  if (text.size() > 1 && text[0] == '0')
    throw LayoutError(who + ": leading zeros are not accepted; write a plain decimal number");
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      throw LayoutError(who + " is not a whole number; use decimal digits only (e.g. " + str(name) +
                        "=8), without sign or spaces");
    v = v * 10 + uint64_t(c - '0');
    if (v > kMaxAxis) break;  // no overflow: at most 5 more digits than kMaxAxis before we stop
  }
  if (v == 0) throw LayoutError(who + ": must be at least 1");
  if (v > kMaxAxis)
    throw LayoutError(who + " is too large; each of tp, cp, ep, dp, pp is at most " +
                      std::to_string(kMaxAxis));
  return uint32_t(v);
}

RankOrder parse_rank_order(std::string_view text) {
  if (text == "tp-cp-ep-dp-pp") return RankOrder::TpCpEpDpPp;
  if (text == "tp-pp-dp") return RankOrder::TpPpDp;
  throw LayoutError("unknown rank order '" + str(text) +
                    "'; use tp-cp-ep-dp-pp (Megatron's default) or tp-pp-dp");
}

const char *rank_order_name(RankOrder order) {
  return order == RankOrder::TpPpDp ? "tp-pp-dp" : "tp-cp-ep-dp-pp";
}

void set_layout_option(Layout &l, std::string_view name, std::string_view value) {
  if (name == "tp") l.tp = parse_axis(name, value);
  else if (name == "cp") l.cp = parse_axis(name, value);
  else if (name == "ep") l.ep = parse_axis(name, value);
  else if (name == "dp") l.dp = parse_axis(name, value);
  else if (name == "pp") l.pp = parse_axis(name, value);
  else if (name == "rank-order" || name == "order") l.order = parse_rank_order(value);
  else
    throw LayoutError("unknown layout key '" + str(name) + "'; use tp, cp, ep, dp, pp or rank-order");
}

Layout parse_layout(std::string_view spec) {
  Layout l;
  if (spec.empty()) throw LayoutError("empty layout; write e.g. tp=8,pp=4,dp=16");
  unsigned seen = 0;  // bit per key, so that "tp=2,tp=4" is refused instead of silently last-wins
  for (const std::string &field : split(spec, ',')) {
    const std::string_view item = field;
    size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos)
      throw LayoutError("layout item '" + str(item) + "' is not key=value; write e.g. tp=8,pp=4,dp=16");
    std::string_view key = item.substr(0, eq);
    static const char *const keys[] = {"tp", "cp", "ep", "dp", "pp", "rank-order"};
    unsigned bit = 0;
    for (unsigned i = 0; i < 6; ++i)
      if (key == keys[i] || (i == 5 && key == "order")) bit = 1u << i;
    if (bit && (seen & bit)) throw LayoutError("layout key '" + str(key) + "' given twice");
    seen |= bit;
    set_layout_option(l, key, item.substr(eq + 1));  // throws on unknown key
  }
  return l;
}

std::string to_string(const Layout &l) {
  return "tp=" + std::to_string(l.tp) + ",cp=" + std::to_string(l.cp) + ",ep=" + std::to_string(l.ep) +
         ",dp=" + std::to_string(l.dp) + ",pp=" + std::to_string(l.pp) +
         ",rank-order=" + rank_order_name(l.order);
}

void validate_layout(const Layout &l) {
  const std::pair<const char *, uint32_t> axes[] = {
      {"tp", l.tp}, {"cp", l.cp}, {"ep", l.ep}, {"dp", l.dp}, {"pp", l.pp}};
  for (const auto &[name, v] : axes) {
    if (v == 0) throw LayoutError(std::string(name) + "=0: must be at least 1");
    if (v > kMaxAxis)
      throw LayoutError(std::string(name) + "=" + std::to_string(v) + " is too large; at most " +
                        std::to_string(kMaxAxis));
  }
  if (l.world() > kMaxWorld)
    throw LayoutError("world size " + layout_product(l) + " = " +
                      (l.world() == UINT64_MAX ? std::string("2^64 or more") : std::to_string(l.world())) +
                      " GPUs exceeds the limit of " + std::to_string(kMaxWorld));
  const uint64_t cpdp = uint64_t(l.cp) * l.dp;
  if (cpdp % l.ep != 0)
    throw LayoutError("ep=" + std::to_string(l.ep) + " must divide cp*dp = " + std::to_string(cpdp) +
                      " (expert parallelism subdivides data parallelism); use ep=" +
                      list_values(divisors(cpdp)));
}

void validate_tp_fits(const Layout &l, uint32_t gpus_per_node) { validate_tp_fits(l, gpus_per_node, {}); }

void validate_tp_fits(const Layout &l, uint32_t gpus_per_node, const std::vector<uint32_t> &domain_nodes) {
  if (gpus_per_node == 0)
    throw LayoutError("nodes have no GPUs; a tp/pp/dp layout needs GPU nodes", RequestPart::Gpus);
  check_tp(l, gpus_per_node, "", gpus_per_node, domain_nodes);
}

uint32_t tp_group_nodes(const Layout &l, uint32_t gpus_per_node) {
  return gpus_per_node && l.tp > gpus_per_node ? l.tp / gpus_per_node : 1;
}

Request complete_request(const Layout &l, const Request &given, uint32_t node_gpus) {
  return complete_request(l, given, node_gpus, {});
}

Request complete_request(const Layout &l, const Request &given, uint32_t node_gpus,
                         const std::vector<uint32_t> &domains) {
  validate_layout(l);
  const uint64_t W = l.world();
  const std::string ws = std::to_string(W);
  if (node_gpus > kMaxGpusPerNode) node_gpus = kMaxGpusPerNode;  // absurd partition data: clamp
  if (node_gpus) validate_tp_fits(l, node_gpus, domains);

  uint64_t g = 0;
  if (given.gpus_per_node) {
    g = given.gpus_per_node;
    if (node_gpus && g > node_gpus)
      throw LayoutError("--gpus-per-node=" + std::to_string(g) + " but the partition's nodes have " +
                        std::to_string(node_gpus) + " GPUs; use --gpus-per-node=" +
                            std::to_string(node_gpus) + " or less",
                        RequestPart::Gpus);
    check_tp(l, uint32_t(g), "--gpus-per-node", node_gpus, domains);
  } else if (given.nodes) {
    if (W % given.nodes != 0) {
      std::string fit = node_gpus ? "; use " + fitting_node_counts(l, node_gpus) : "";
      throw LayoutError("the layout needs " + ws + " GPUs (" + layout_product(l) + "), which -N " +
                            std::to_string(given.nodes) + " cannot split evenly over the nodes" + fit,
                        RequestPart::Nodes);
    }
    g = W / given.nodes;
    if (node_gpus && g > node_gpus)
      throw LayoutError("-N " + std::to_string(given.nodes) + " would need " + std::to_string(g) +
                        " GPUs per node for the layout's " + ws + " GPUs, but nodes have " +
                            std::to_string(node_gpus) + "; use " + fitting_node_counts(l, node_gpus),
                        RequestPart::Nodes);
    // A TP group may span the nodes of an NVLink domain when the job fills them.
    const bool spans = g < l.tp && !domains.empty() && g == node_gpus;
    if (spans) check_tp(l, uint32_t(g), "", node_gpus, domains);
    if (!spans && (g < l.tp || g % l.tp != 0)) {
      std::string fit = node_gpus ? "; use " + fitting_node_counts(l, node_gpus) : "";
      throw LayoutError("-N " + std::to_string(given.nodes) + " gives " + std::to_string(g) +
                        " GPUs per node, which does not hold whole TP groups of tp=" +
                            std::to_string(l.tp) + fit,
                        RequestPart::Nodes);
    }
  } else if (given.ntasks_per_node) {
    g = given.ntasks_per_node;  // one task per GPU
    if (node_gpus && g > node_gpus)
      throw LayoutError("--ntasks-per-node=" + std::to_string(g) + " needs one GPU per task but nodes have " +
                        std::to_string(node_gpus) + " GPUs; use --ntasks-per-node=" +
                            std::to_string(node_gpus) + " or less",
                        RequestPart::Tasks);
    check_tp(l, uint32_t(g), "--ntasks-per-node", node_gpus, domains);
  } else if (node_gpus) {
    std::vector<uint64_t> ok = usable_gpus_per_node(l, node_gpus);
    g = ok.back();  // never empty: tp divides node_gpus (checked) and the world
  } else {
    throw LayoutError("cannot tell how many GPUs per node the layout should use; give --gpus-per-node or -N",
                      RequestPart::Gpus);
  }

  // Where the partition's count is unknown (its nodes differ) nothing above bounds g; beyond this a
  // node's tasks no longer fit Slurm's 16-bit count, and no real node has so many GPUs.
  if (g > kMaxGpusPerNode) {
    const std::string most = std::to_string(kMaxGpusPerNode);
    const uint64_t min_nodes = (W + kMaxGpusPerNode - 1) / kMaxGpusPerNode;
    const std::string fix = given.gpus_per_node ? "--gpus-per-node=N with the GPUs of one node, at most " + most
                            : given.nodes       ? "-N " + std::to_string(min_nodes) + " or more"
                                                : "--ntasks-per-node=" + most + " or less";
    throw LayoutError(std::to_string(g) + " GPUs per node (one task each) is more than the " + most +
                          " per node topoaware accepts; use " + fix,
                      given.gpus_per_node ? RequestPart::Gpus : given.nodes ? RequestPart::Nodes : RequestPart::Tasks);
  }
  if (W % g != 0) {
    // dp values near the given one that make the world a whole number of nodes of g GPUs.
    const uint64_t rest = uint64_t(l.tp) * l.cp * l.pp;
    const uint64_t step = g / std::gcd(g, rest);
    uint64_t lo = (l.dp / step) * step, hi = lo + step;
    std::string alt = lo ? "dp=" + std::to_string(lo) + " or dp=" + std::to_string(hi) : "dp=" + std::to_string(hi);
    throw LayoutError("the layout needs " + ws + " GPUs (" + layout_product(l) +
                      "), not a whole number of nodes of " + std::to_string(g) + " GPUs; use " + alt);
  }
  const uint64_t n = W / g;
  if (given.nodes && given.nodes != n)
    throw LayoutError("-N " + std::to_string(given.nodes) + " but the layout needs " + ws + " GPUs = " +
                      std::to_string(n) + " nodes x " + std::to_string(g) + " GPUs; use -N " +
                          std::to_string(n) + " or leave -N out",
                      RequestPart::Nodes);
  if (given.ntasks && given.ntasks != W)
    throw LayoutError("--ntasks=" + std::to_string(given.ntasks) + " but the layout has " + ws +
                      " ranks (" + layout_product(l) + ", one task per GPU); use --ntasks=" + ws +
                          " or leave it out",
                      RequestPart::Tasks);
  if (given.ntasks_per_node && given.ntasks_per_node != g)
    throw LayoutError("--ntasks-per-node=" + std::to_string(given.ntasks_per_node) + " but the layout puts " +
                      std::to_string(g) + " ranks on each node (one task per GPU); use --ntasks-per-node=" +
                          std::to_string(g),
                      RequestPart::Tasks);
  if (given.gpus && given.gpus != W)
    throw LayoutError("--gpus=" + std::to_string(given.gpus) + " but the layout needs " + ws + " GPUs (" +
                          layout_product(l) + "); use --gpus=" + ws + " or leave it out",
                      RequestPart::Gpus);
  if (n > UINT32_MAX) throw LayoutError("node count " + std::to_string(n) + " out of range");

  Request out;
  out.nodes = uint32_t(n);
  out.gpus_per_node = uint32_t(g);
  out.ntasks = uint32_t(W);
  out.ntasks_per_node = uint32_t(g);
  out.gpus = uint32_t(W);
  return out;
}

}  // namespace topoaware
