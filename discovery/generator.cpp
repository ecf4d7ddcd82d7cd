// SPDX-License-Identifier: GPL-2.0-or-later
// Fabric generators (fat tree, rail-optimized, dragonfly) and writers for ibsim net files and
// ibnetdiscover text. Everything here is deterministic: the same spec gives the same Fabric, the
// same GUIDs and byte-identical text, so expected outputs can be regenerated and diffed.
//
// GUIDs. Node GUIDs use the Mellanox/NVIDIA OUI 00:02:c9 as real ConnectX/Quantum parts do, with a
// type tag so that switches and CAs never collide:
//   switch i (0-based, generation order): 0x0002c90301000000 + i + 1   (port GUID = node GUID)
//   CA i:                                 0x0002c90302000000 + 2*i     (port 1 GUID = node GUID + 1)
// "Node GUID + port number" is exactly how ibsim derives CA port GUIDs from the node GUID it is
// given (sim_net.c, init_ports), so a live walk under ibsim sees the same port GUIDs as the Fabric.
//
// Radix. Every switch of a generated fabric has the same port count (one switch model per fabric,
// as in real clusters): the spec's radix when given, else the smallest of 36 (EDR/HDR 1U switches),
// 40 (HDR Quantum QM87xx), 64 (NDR Quantum-2 QM97xx) and 128 (Quantum-2 at split 200G ports) that
// fits, else the exact need up to 254 (NodeInfo.NumPorts is 8 bits and port 255 is reserved).
// Only connected ports are listed in the Fabric; nports carries the radix.

#include "generator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <string>
#include <vector>

namespace topoaware {

namespace {

constexpr uint64_t kSwitchGuidBase = 0x0002c90301000000ULL;
constexpr uint64_t kCaGuidBase = 0x0002c90302000000ULL;
constexpr int kMaxRadix = 254;
constexpr int kStandardRadix[] = {36, 40, 64, 128};
// IB NodeDescription is 64 bytes; ibsim keeps 63 characters plus the terminator.
constexpr size_t kMaxDesc = 63;

// ibsim 0.10 built-in limits (sim.h: MAXNETNODES, MAXNETSWITCHS, MAXNETPORTS = switches*36 +
// nodes*2 as printed by "ibsim -s" at start-up, MAXLINEARCAP = 30*1024).
constexpr long kIbsimNodes = 2048;
constexpr long kIbsimSwitches = 256;
constexpr long kIbsimPorts = 13312;
constexpr long kIbsimLinearCap = 30 * 1024;

[[noreturn]] void bad(const std::string &msg) { throw std::invalid_argument(msg); }

int digits(long n) {
  int d = 1;
  while (n >= 10) {
    n /= 10;
    ++d;
  }
  return d;
}

// "n" + 7 with width 4 -> "n0007".
std::string numbered(const std::string &prefix, long n, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*ld", width, n);
  return prefix + buf;
}

void check_positive(const char *spec, const char *name, long v) {
  if (v <= 0) bad(std::string(spec) + ": " + name + " must be a positive number (got " + std::to_string(v) + ")");
}

void check_multiple(const char *spec, const char *name, long v, const char *of_name, long of) {
  if (v % of != 0) {
    long lo = v / of * of, hi = lo + of;
    std::string alt = lo > 0 ? std::to_string(lo) + " or " + std::to_string(hi) : std::to_string(hi);
    bad(std::string(spec) + ": " + name + " (" + std::to_string(v) + ") must be a multiple of " + of_name + " (" +
        std::to_string(of) + ") so that the cables spread evenly; " + alt + " would work");
  }
}

// Common link and naming parameters of every spec.
struct LinkParams {
  int width;
  LinkSpeed speed;
};

LinkParams check_link(const char *spec, int width, const std::string &speed, const std::string &prefix) {
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 12)
    bad(std::string(spec) + ": width " + std::to_string(width) +
        " is not an InfiniBand link width; use 1, 2, 4, 8 or 12");
  LinkSpeed s = speed_from_name(speed);
  if (s == LinkSpeed::Unknown)
    bad(std::string(spec) + ": speed \"" + speed +
        "\" is unknown; use SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR");
  if (prefix.empty() || !std::isalpha(static_cast<unsigned char>(prefix[0])))
    bad(std::string(spec) + ": host_prefix \"" + prefix + "\" must start with a letter (Slurm node names), e.g. \"n\"");
  for (char c : prefix)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      bad(std::string(spec) + ": host_prefix \"" + prefix + "\" may only contain letters, digits, '-' and '_'");
  // Longest description: "<prefix><digits> mlx5_<k>"; digits up to 10 for any int count.
  if (prefix.size() + 10 + 10 > kMaxDesc)
    bad(std::string(spec) + ": host_prefix \"" + prefix +
        "\" is too long for a 64-byte node description; keep it to at most 43 characters");
  return {width, s};
}

int choose_radix(const char *spec, int needed, int requested) {
  if (needed > kMaxRadix)
    bad(std::string(spec) + ": a switch would need " + std::to_string(needed) +
        " ports, more than an InfiniBand switch can have (" + std::to_string(kMaxRadix) +
        "); use fewer hosts or uplinks per switch");
  if (requested > 0) {
    if (requested > kMaxRadix)
      bad(std::string(spec) + ": radix " + std::to_string(requested) + " exceeds " + std::to_string(kMaxRadix));
    if (requested < needed)
      bad(std::string(spec) + ": radix " + std::to_string(requested) + " is too small, a switch needs " +
          std::to_string(needed) + " ports; use radix >= " + std::to_string(needed) + " or 0 to choose automatically");
    return requested;
  }
  if (requested < 0)
    bad(std::string(spec) + ": radix must be 0 (automatic) or a port count, got " + std::to_string(requested));
  for (int r : kStandardRadix)
    if (r >= needed) return r;
  return needed;
}

// Builds a Fabric with the GUID scheme above. Ports are recorded on both ends as they are made.
class Builder {
 public:
  Builder(const LinkParams &link, const std::string &source) : link_(link) { fabric_.sources.push_back(source); }

  size_t add_switch(const std::string &desc, int nports) {
    FabricNode n;
    n.type = NodeType::Switch;
    n.guid = kSwitchGuidBase + ++switches_;
    n.desc = desc;
    n.nports = nports;
    return fabric_.add_node(std::move(n));
  }
  size_t add_ca(const std::string &desc) {
    FabricNode n;
    n.type = NodeType::Ca;
    n.guid = kCaGuidBase + 2 * cas_++;
    n.desc = desc;
    n.nports = 1;
    return fabric_.add_node(std::move(n));
  }
  void link(size_t a, int pa, size_t b, int pb) {
    FabricNode &na = fabric_.nodes[a];
    FabricNode &nb = fabric_.nodes[b];
    na.ports.push_back(make_port(na, pa, nb, pb));
    nb.ports.push_back(make_port(nb, pb, na, pa));
  }
  Fabric done() {
    fabric_.finish();
    return std::move(fabric_);
  }

 private:
  Port make_port(const FabricNode &self, int num, const FabricNode &peer, int peer_num) const {
    Port p;
    p.num = num;
    p.port_guid = self.type == NodeType::Switch ? self.guid : self.guid + static_cast<uint64_t>(num);
    p.remote_guid = peer.guid;
    p.remote_port = peer_num;
    p.width = link_.width;
    p.speed = link_.speed;
    return p;
  }
  LinkParams link_;
  Fabric fabric_;
  uint64_t switches_ = 0, cas_ = 0;
};

std::string host_ca_desc(const std::string &host, int k) { return host + " mlx5_" + std::to_string(k); }

// The down-port slot of each of a leaf's n hosts: identity without a seed, else a permutation drawn
// from (seed, leaf). SplitMix64 and a plain Fisher-Yates shuffle rather than <random>: the standard
// leaves std::shuffle and the distributions to the library, and a seed must give the same cabling
// (and the same expected outputs) everywhere.
std::vector<long> down_slots(uint64_t seed, uint64_t leaf, long n) {
  std::vector<long> slot(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) slot[static_cast<size_t>(i)] = i;
  if (seed == 0) return slot;
  uint64_t state = seed ^ (leaf * 0x9e3779b97f4a7c15ULL);
  auto next = [&state]() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  for (long i = n - 1; i > 0; --i)
    std::swap(slot[static_cast<size_t>(i)], slot[static_cast<size_t>(next() % static_cast<uint64_t>(i + 1))]);
  return slot;
}

// A fat tree's counts, checked: uplinks per leaf (U), spines per pod (S), hosts per leaf (H),
// HCAs per host (K), cables per leaf-spine pair, the pods and, with 3 levels, each spine's core
// uplinks (C) and the cores; then the hosts and the switches' radix.
struct FatTreeShape {
  long U = 0, S = 0, H = 0, K = 0, per_pair = 0;
  long pods = 1, leaves_per_pod = 0, C = 0, cores = 0;
  long hosts = 0;
  int radix = 0;
};

// The core level of a 3-level fat tree (pods of leaves_per_pod leaves, the cores), checked so that
// every core gets the same cables from each pod.
void check_core_level(const char *what, const FatTreeSpec &s, FatTreeShape &t) {
  check_positive(what, "leaves_per_pod", s.leaves_per_pod);
  check_positive(what, "cores", s.cores);
  check_positive(what, "core_uplinks_per_spine", s.core_uplinks_per_spine);
  t.leaves_per_pod = s.leaves_per_pod;
  if (s.leaves % t.leaves_per_pod != 0)
    bad(std::string(what) + ": leaves (" + std::to_string(s.leaves) + ") must be a multiple of leaves_per_pod (" +
        std::to_string(t.leaves_per_pod) + "), e.g. " +
        std::to_string((s.leaves / t.leaves_per_pod + 1) * t.leaves_per_pod));
  t.pods = s.leaves / t.leaves_per_pod;
  t.C = s.core_uplinks_per_spine;
  t.cores = s.cores;
  // Spine s of a pod sends its uplink j to core (s*C + j) mod cores: with C >= cores every spine
  // reaches every core, with C < cores the spines of a pod cover the cores in planes. Every core
  // must receive the same number of cables from each pod, or the top level is lopsided.
  if ((t.S * t.C) % t.cores != 0)
    bad(std::string(what) + ": spines * core_uplinks_per_spine (" + std::to_string(t.S) + " * " +
        std::to_string(t.C) + ") must be a multiple of cores (" + std::to_string(t.cores) +
        ") so that every core gets the same cables from each pod");
}

// The spec's counts, each checked with a message naming the field, and the radix that fits the
// busiest switch.
FatTreeShape fat_tree_shape(const char *what, const FatTreeSpec &s) {
  if (s.levels != 2 && s.levels != 3)
    bad(std::string(what) + ": levels must be 2 (leaf/spine) or 3 (leaf/spine/core with pods), got " +
        std::to_string(s.levels));
  check_positive(what, "leaves", s.leaves);
  check_positive(what, "hosts_per_leaf", s.hosts_per_leaf);
  check_positive(what, "hcas_per_host", s.hcas_per_host);
  check_positive(what, "spines", s.spines);
  if (s.leaves > 1 || s.levels == 3) check_positive(what, "uplinks_per_leaf", s.uplinks_per_leaf);
  if (s.uplinks_per_leaf < 0) bad(std::string(what) + ": uplinks_per_leaf must not be negative");
  FatTreeShape t;
  t.U = s.uplinks_per_leaf, t.S = s.spines, t.H = s.hosts_per_leaf, t.K = s.hcas_per_host;
  if (t.U > 0) check_multiple(what, "uplinks_per_leaf", t.U, "spines", t.S);
  t.per_pair = t.U / t.S;  // cables between one leaf and one spine
  t.leaves_per_pod = s.leaves;
  if (s.levels == 3) check_core_level(what, s, t);

  const long leaf_ports = t.H * t.K + t.U;
  const long spine_ports = t.leaves_per_pod * t.per_pair + t.C;
  const long core_ports = s.levels == 3 ? t.pods * t.S * t.C / t.cores : 0;
  t.hosts = s.leaves * t.H;
  if (t.hosts > 10000000)
    bad(std::string(what) + ": " + std::to_string(t.hosts) +
        " hosts is beyond what the generator supports (10 million)");
  t.radix = choose_radix(what, static_cast<int>(std::max({leaf_ports, spine_ports, core_ports})), s.radix);
  return t;
}

// Every leaf's cables: its hosts' HCAs on its down ports, its uplinks spread over its pod's spines.
void cable_leaves(const FatTreeSpec &s, const FatTreeShape &t, Builder &b, const std::vector<size_t> &leaf,
                  const std::vector<size_t> &spine, const std::vector<std::vector<size_t>> &cas) {
  const long U = t.U, S = t.S, H = t.H, K = t.K;
  for (long l = 0; l < s.leaves; ++l) {
    // Down ports 1..H*K: HCA k of host h on port slot(h)*K + k + 1 (a host's HCAs side by side;
    // slot(h) = h unless the cabling is shuffled).
    const std::vector<long> slot = down_slots(s.cabling_seed, static_cast<uint64_t>(l), H);
    for (long h = 0; h < H; ++h)
      for (long k = 0; k < K; ++k)
        b.link(leaf[l], static_cast<int>(slot[static_cast<size_t>(h)] * K + k + 1), cas[l * H + h][k], 1);
    // Up ports H*K+1..: uplink j to spine j mod S of the leaf's pod, cable j / S of that pair; on
    // the spine, leaf l (index within the pod) uses ports l*per_pair+1 .. (l+1)*per_pair.
    const long pod = l / t.leaves_per_pod, lp = l % t.leaves_per_pod;
    for (long j = 0; j < U; ++j) {
      long si = j % S, cable = j / S;
      b.link(leaf[l], static_cast<int>(H * K + j + 1), spine[pod * S + si],
             static_cast<int>(lp * t.per_pair + cable + 1));
    }
  }
}

// A 3-level tree's spine-to-core cables. On a core, ports are filled in pod order, then spine
// order, then cable order.
void cable_cores(const FatTreeShape &t, Builder &b, const std::vector<size_t> &spine,
                 const std::vector<size_t> &core) {
  std::vector<int> next_core_port(t.cores, 1);
  for (long pod = 0; pod < t.pods; ++pod)
    for (long si = 0; si < t.S; ++si)
      for (long j = 0; j < t.C; ++j) {
        long c = (si * t.C + j) % t.cores;
        b.link(spine[pod * t.S + si], static_cast<int>(t.leaves_per_pod * t.per_pair + j + 1), core[c],
               next_core_port[c]++);
      }
}

}  // namespace

Fabric generate_fat_tree(const FatTreeSpec &s) {
  const char *what = "fat-tree";
  LinkParams link = check_link(what, s.width, s.speed, s.host_prefix);
  const FatTreeShape t = fat_tree_shape(what, s);
  const long hosts = t.hosts, cores = t.cores, K = t.K;

  Builder b(link, "generated fat tree (" + std::to_string(s.levels) + " levels)");
  const int hw = std::max(4, digits(hosts));
  const int lw = std::max(3, digits(s.leaves));
  const int sw = std::max(2, digits(t.pods * t.S));
  const int cw = std::max(2, digits(cores));

  // Hosts first (generation order = order in the Fabric), so that the first node is a host CA:
  // ibsim attaches its local port to the first node of the net file.
  // A single leaf without uplinks is a valid (one-switch) fabric: then there are no spines.
  const long nspines = t.U > 0 ? t.pods * t.S : 0;
  std::vector<size_t> leaf(s.leaves), spine(nspines), core(cores);
  std::vector<std::vector<size_t>> cas(hosts, std::vector<size_t>(K));
  for (long h = 0; h < hosts; ++h) {
    std::string host = numbered(s.host_prefix, h + 1, hw);
    for (long k = 0; k < K; ++k) cas[h][k] = b.add_ca(host_ca_desc(host, static_cast<int>(k)));
  }
  for (long l = 0; l < s.leaves; ++l) leaf[l] = b.add_switch(numbered("leaf", l + 1, lw), t.radix);
  for (long i = 0; i < nspines; ++i) spine[i] = b.add_switch(numbered("spine", i + 1, sw), t.radix);
  for (long c = 0; c < cores; ++c) core[c] = b.add_switch(numbered("core", c + 1, cw), t.radix);

  cable_leaves(s, t, b, leaf, spine, cas);
  if (s.levels == 3) cable_cores(t, b, spine, core);
  return b.done();
}

Fabric generate_rail(const RailSpec &s) {
  const char *what = "rail";
  LinkParams link = check_link(what, s.width, s.speed, s.host_prefix);
  check_positive(what, "rails", s.rails);
  check_positive(what, "units", s.units);
  check_positive(what, "hosts_per_unit", s.hosts_per_unit);
  if (s.shared_spines < 0) bad(std::string(what) + ": shared_spines must not be negative");
  const bool shared = s.shared_spines > 0;
  const char *spines_name = shared ? "shared_spines" : "spines_per_rail";
  if (!shared) check_positive(what, "spines_per_rail", s.spines_per_rail);
  check_positive(what, "uplinks_per_leaf", s.uplinks_per_leaf);
  const long R = s.rails, SU = s.units, H = s.hosts_per_unit, U = s.uplinks_per_leaf;
  const long S = shared ? s.shared_spines : s.spines_per_rail;
  check_multiple(what, "uplinks_per_leaf", U, spines_name, S);
  const long per_pair = U / S;
  const long hosts = SU * H;
  if (hosts * R > 10000000)
    bad(std::string(what) + ": " + std::to_string(hosts * R) + " HCAs is beyond what the generator supports");
  // A spine takes per_pair cables from every leaf it serves: the units' leaves of its rail, or of
  // every rail when shared.
  const long spine_ports = (shared ? SU * R : SU) * per_pair;
  int radix = choose_radix(what, static_cast<int>(std::max(H + U, spine_ports)), 0);

  Builder b(link, shared ? "generated rail-optimized fabric (spines shared by all rails)"
                         : "generated rail-optimized fabric");
  const int hw = std::max(4, digits(hosts));
  const int uw = digits(SU), rw = digits(R), sw = std::max(2, digits(S));
  // Names are 1-based like NVIDIA's SuperPOD documents ("SU1", "rail 1"): HCA mlx5_(r-1) of a
  // host plugs into leaf "su<u>-rail<r>-leaf"; rail r's spines are "rail<r>-spine<NN>", spines
  // shared by all rails "spine<NN>".
  std::vector<std::vector<size_t>> cas(hosts, std::vector<size_t>(R));
  for (long h = 0; h < hosts; ++h) {
    std::string host = numbered(s.host_prefix, h + 1, hw);
    for (long r = 0; r < R; ++r) cas[h][r] = b.add_ca(host_ca_desc(host, static_cast<int>(r)));
  }
  std::vector<std::vector<size_t>> leaf(SU, std::vector<size_t>(R));
  for (long u = 0; u < SU; ++u)
    for (long r = 0; r < R; ++r)
      leaf[u][r] = b.add_switch(numbered("su", u + 1, uw) + numbered("-rail", r + 1, rw) + "-leaf", radix);
  // spine[r] is rail r's spines; with shared spines every rail's entry is the same list.
  std::vector<std::vector<size_t>> spine(shared ? 1 : R, std::vector<size_t>(S));
  for (size_t r = 0; r < spine.size(); ++r)
    for (long i = 0; i < S; ++i)
      spine[r][i] = b.add_switch(
          (shared ? std::string() : numbered("rail", static_cast<long>(r) + 1, rw) + "-") + numbered("spine", i + 1, sw),
          radix);

  for (long u = 0; u < SU; ++u)
    for (long r = 0; r < R; ++r) {
      const std::vector<long> slot = down_slots(s.cabling_seed, static_cast<uint64_t>(u * R + r), H);
      for (long h = 0; h < H; ++h)
        b.link(leaf[u][r], static_cast<int>(slot[static_cast<size_t>(h)] + 1), cas[u * H + h][r], 1);
      // On a spine, the leaves that reach it take its ports in (unit, rail) order, per_pair each.
      const std::vector<size_t> &up = spine[shared ? 0 : static_cast<size_t>(r)];
      const long index = shared ? u * R + r : u;
      for (long j = 0; j < U; ++j)
        b.link(leaf[u][r], static_cast<int>(H + j + 1), up[static_cast<size_t>(j % S)],
               static_cast<int>(index * per_pair + j / S + 1));
    }
  return b.done();
}

Fabric generate_dragonfly(const DragonflySpec &s) {
  const char *what = "dragonfly";
  LinkParams link = check_link(what, s.width, s.speed, s.host_prefix);
  check_positive(what, "groups", s.groups);
  check_positive(what, "routers_per_group", s.routers_per_group);
  check_positive(what, "hosts_per_router", s.hosts_per_router);
  check_positive(what, "global_links_per_router", s.global_links_per_router);
  const long G = s.groups, A = s.routers_per_group, P = s.hosts_per_router, Hg = s.global_links_per_router;
  if (G < 2) bad(std::string(what) + ": groups must be at least 2 (one group is a full mesh, not a dragonfly)");
  // Links are laid out along ring offsets 1, 2, ... so the group graph is connected as soon as each
  // group has two global ports (a ring); with one port per group only pairs would be joined.
  if (G > 2 && A * Hg < 2)
    bad(std::string(what) + ": with " + std::to_string(G) +
        " groups, routers_per_group * global_links_per_router must be at least 2 " +
        "or the groups cannot all be connected; " + std::to_string(G - 1) +
        " gives every pair of groups a direct link");
  const long hosts = G * A * P;
  if (hosts > 10000000)
    bad(std::string(what) + ": " + std::to_string(hosts) + " hosts is beyond what the generator supports");
  int radix = choose_radix(what, static_cast<int>(P + (A - 1) + Hg), 0);

  Builder b(link, "generated dragonfly");
  const int hw = std::max(4, digits(hosts));
  const int gw = std::max(2, digits(G)), rw = std::max(2, digits(A));
  std::vector<size_t> ca(hosts);
  for (long h = 0; h < hosts; ++h) ca[h] = b.add_ca(host_ca_desc(numbered(s.host_prefix, h + 1, hw), 0));
  std::vector<std::vector<size_t>> router(G, std::vector<size_t>(A));
  for (long g = 0; g < G; ++g)
    for (long r = 0; r < A; ++r)
      router[g][r] = b.add_switch(numbered("grp", g + 1, gw) + numbered("-sw", r + 1, rw), radix);

  // Router ports: 1..P hosts; P+1..P+A-1 the other routers of the group (in router order, skipping
  // itself); P+A..P+A+Hg-1 global links.
  for (long g = 0; g < G; ++g)
    for (long r = 0; r < A; ++r) {
      for (long i = 0; i < P; ++i) b.link(router[g][r], static_cast<int>(i + 1), ca[(g * A + r) * P + i], 1);
      for (long q = r + 1; q < A; ++q)
        b.link(router[g][r], static_cast<int>(P + 1 + (q - 1)), router[g][q], static_cast<int>(P + 1 + r));
    }
  // Global links. A group's global slot k belongs to router k mod A (port P+A + k/A), so consecutive
  // links of a group land on different routers. Pairs of groups are visited in rounds, by ring
  // offset d = 1..G/2 and then by group; each round gives every pair that still has a free slot on
  // both sides one more link. With A*Hg = G-1 (the balanced dragonfly) every pair gets exactly one.
  const long slots = A * Hg;
  std::vector<long> used(G, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (long d = 1; d <= G / 2; ++d)
      for (long i = 0; i < G; ++i) {
        if (2 * d == G && i >= d) break;  // offset G/2 pairs each pair twice
        long j = (i + d) % G;
        if (used[i] >= slots || used[j] >= slots) continue;
        long ki = used[i]++, kj = used[j]++;
        b.link(router[i][ki % A], static_cast<int>(P + A + ki / A), router[j][kj % A],
               static_cast<int>(P + A + kj / A));
        progress = true;
      }
  }
  return b.done();
}

// ---------------------------------------------------------------------------------------------
// Writers

namespace {

const char *id_prefix(NodeType t) { return t == NodeType::Switch ? "S-" : t == NodeType::Router ? "R-" : "H-"; }

std::string node_id(const FabricNode &n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "\"%s%016llx\"", id_prefix(n.type), static_cast<unsigned long long>(n.guid));
  return buf;
}

std::string hex(uint64_t v) {  // ibnetdiscover prints port GUIDs with PRIx64: no padding
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string link_str(const Port &p) {
  return (p.width > 0 ? std::to_string(p.width) + "x" : std::string("?x")) + speed_name(p.speed);
}

// LIDs as an SM would hand them out: per subnet (connected component), switches and then CA
// ports numbered from 1. LIDs are only decoration (nothing downstream keys on them),
// but a dump with realistic LIDs exercises parsers the way real dumps do.
struct Lids {
  std::vector<int> base;  // per node: switch LID, or LID of CA port 1 (port p = base + p - 1)
  int max = 0;
};

Lids assign_lids(const Fabric &f) {
  std::unordered_map<uint64_t, size_t> idx;
  for (size_t i = 0; i < f.nodes.size(); ++i) idx.emplace(f.nodes[i].guid, i);
  Lids l;
  l.base.assign(f.nodes.size(), 0);
  std::vector<char> seen(f.nodes.size(), 0);
  for (size_t start = 0; start < f.nodes.size(); ++start) {
    if (seen[start]) continue;
    std::vector<size_t> comp{start}, stack{start};
    seen[start] = 1;
    while (!stack.empty()) {
      size_t n = stack.back();
      stack.pop_back();
      for (const auto &p : f.nodes[n].ports) {
        auto it = idx.find(p.remote_guid);
        if (it != idx.end() && !seen[it->second]) {
          seen[it->second] = 1;
          comp.push_back(it->second);
          stack.push_back(it->second);
        }
      }
    }
    // Switches first, then CAs, each in Fabric order (OpenSM also tends to give switches the low LIDs).
    std::sort(comp.begin(), comp.end(), [&](size_t a, size_t b) {
      bool sa = f.nodes[a].type == NodeType::Switch, sb = f.nodes[b].type == NodeType::Switch;
      return sa != sb ? sa : a < b;
    });
    int next = 1;
    for (size_t n : comp) {
      l.base[n] = next;
      const FabricNode &node = f.nodes[n];
      next += node.type == NodeType::Switch ? 1 : std::max(1, node.nports);
    }
    l.max = std::max(l.max, next - 1);
  }
  return l;
}

int port_lid(const Fabric &f, const Lids &lids, const std::unordered_map<uint64_t, size_t> &idx, uint64_t guid,
             int port) {
  auto it = idx.find(guid);
  if (it == idx.end()) return 0;
  const FabricNode &n = f.nodes[it->second];
  return n.type == NodeType::Switch ? lids.base[it->second] : lids.base[it->second] + port - 1;
}

// Vendor and device ids as NVIDIA parts report them: ConnectX-6 (0x101b) and Quantum (0xd2f0)
// for HDR and older, ConnectX-7 (0x1021) and Quantum-2 (0xd2f2) for NDR and faster.
unsigned devid(const FabricNode &n) {
  bool ndr = false;
  for (const auto &p : n.ports) ndr = ndr || p.speed >= LinkSpeed::NDR;
  if (n.type == NodeType::Switch) return ndr ? 0xd2f2 : 0xd2f0;
  return ndr ? 0x1021 : 0x101b;
}

void write_node(std::ostringstream &out, const Fabric &f, const FabricNode &n, const Lids &lids,
                const std::unordered_map<uint64_t, size_t> &idx) {
  const size_t self = idx.at(n.guid);
  out << "\nvendid=0x2c9\n";
  out << "devid=0x" << std::hex << devid(n) << std::dec << "\n";
  out << "sysimgguid=0x" << hex(n.guid) << "\n";
  if (n.type == NodeType::Switch) {
    out << "switchguid=0x" << hex(n.guid) << "(" << hex(n.guid) << ")\n";
    out << "Switch\t" << n.nports << " " << node_id(n) << "\t\t# \"" << n.desc << "\" enhanced port 0 lid "
        << lids.base[self] << " lmc 0\n";
    for (const auto &p : n.ports) {
      auto it = idx.find(p.remote_guid);
      if (it == idx.end()) continue;
      const FabricNode &peer = f.nodes[it->second];
      out << "[" << p.num << "]\t" << node_id(peer) << "[" << p.remote_port << "]";
      if (peer.type != NodeType::Switch) out << "(" << hex(peer.guid + static_cast<uint64_t>(p.remote_port)) << ") ";
      out << "\t\t# \"" << peer.desc << "\" lid " << port_lid(f, lids, idx, peer.guid, p.remote_port) << " "
          << link_str(p) << "\n";
    }
  } else {
    out << (n.type == NodeType::Router ? "rtguid=0x" : "caguid=0x") << hex(n.guid) << "\n";
    out << (n.type == NodeType::Router ? "Rt" : "Ca") << "\t" << n.nports << " " << node_id(n) << "\t\t# \"" << n.desc
        << "\"\n";
    for (const auto &p : n.ports) {
      auto it = idx.find(p.remote_guid);
      if (it == idx.end()) continue;
      const FabricNode &peer = f.nodes[it->second];
      out << "[" << p.num << "](" << hex(p.port_guid) << ") \t" << node_id(peer) << "[" << p.remote_port << "]";
      if (peer.type != NodeType::Switch) out << " (" << hex(peer.guid + static_cast<uint64_t>(p.remote_port)) << ") ";
      out << "\t\t# lid " << lids.base[self] + p.num - 1 << " lmc 0 \"" << peer.desc << "\" lid "
          << port_lid(f, lids, idx, peer.guid, p.remote_port) << " " << link_str(p) << "\n";
    }
  }
}

const FabricNode *first_ca(const Fabric &f) {
  for (const auto &n : f.nodes)
    if (n.type == NodeType::Ca && !n.ports.empty()) return &n;
  return nullptr;
}

std::unordered_map<uint64_t, size_t> index_of(const Fabric &f) {
  std::unordered_map<uint64_t, size_t> idx;
  for (size_t i = 0; i < f.nodes.size(); ++i) idx.emplace(f.nodes[i].guid, i);
  return idx;
}

}  // namespace

std::string to_ibnetdiscover_text(const Fabric &f) {
  auto idx = index_of(f);
  Lids lids = assign_lids(f);
  std::ostringstream out;
  out << "#\n# Topology file: generated by topoaware from a synthetic fabric (no walk)\n#\n";
  if (const FabricNode *ca = first_ca(f)) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "# Initiated from node %016llx port %016llx\n",
                  static_cast<unsigned long long>(ca->guid),
                  static_cast<unsigned long long>(ca->ports.front().port_guid));
    out << buf;
  }
  // ibnetdiscover prints switches, then CAs, then routers.
  for (NodeType t : {NodeType::Switch, NodeType::Ca, NodeType::Router})
    for (const auto &n : f.nodes)
      if (n.type == t) write_node(out, f, n, lids, idx);
  return out.str();
}

std::string ibsim_args(const Fabric &f) {
  long nodes = static_cast<long>(f.nodes.size()), switches = 0, ports = 0;
  for (const auto &n : f.nodes) {
    if (n.type == NodeType::Switch) ++switches;
    ports += n.nports + (n.type == NodeType::Switch ? 1 : 0);  // ibsim allocates port 0 of switches too
  }
  long maxlid = assign_lids(f).max;
  std::string args;
  auto add = [&](const char *opt, long v) {
    args += (args.empty() ? "" : " ") + std::string(opt) + " " + std::to_string(v);
  };
  if (nodes > kIbsimNodes) add("-N", nodes);
  if (switches > kIbsimSwitches) add("-S", switches);
  if (ports > kIbsimPorts) add("-P", ports);
  if (maxlid >= kIbsimLinearCap) add("-L", maxlid + 1);
  return args;
}

// The net file is ibnetdiscover text, which ibsim reads natively (sim_net.c, parse_netconf):
//  - "switchguid=0x<g>(...)" and "caguid=0x<g>" set the GUID of the next node absolutely; a
//    CA's port p then gets GUID g + p (init_ports), a switch's ports all get g. "sysimgguid=" sets
//    the next node's system image GUID, "vendid=" its vendor id (reset after each node), "devid="
//    the device id of this and later nodes.
//  - The quoted id ("S-<guid>") names the node inside the file (port lines refer to it; '#' and '@'
//    are reserved); the `# "desc"` comment after it becomes the NodeDescription, else the id does.
//  - The trailing "lid <L> <w>x<SPEED>" of each port line sets that port's enabled width and
//    speed; both ends of a link are listed, and ibsim activates the best common width and speed.
//    ibsim 0.10 (Debian bookworm) knows SDR, DDR, QDR, FDR, EDR and HDR; FDR10, NDR and XDR are
//    not simulated (newer upstream ibsim adds NDR), hence the check below.
//  - "lid" values are given to the ports and reported by a walk (no SM is needed for a walk).
//  - The first node of the file is where the local port attaches (unless SIM_HOST names another
//    node id), so a host CA comes first. Lines are read into a 256-byte buffer.
//  - Limits: 2048 nodes, 256 switches, 13312 ports (switch ports count port 0), 30720 LIDs unless
//    raised with -N, -S, -P, -L; see ibsim_args(). Several simulators can run side by side with
//    different IBSIM_SOCKNAME values (read by both ibsim and libumad2sim).
std::string to_ibsim_net(const Fabric &f) {
  for (const auto &n : f.nodes) {
    if (n.desc.size() > kMaxDesc)
      bad("ibsim net: node description \"" + n.desc + "\" of " + guid_str(n.guid) + " is longer than 63 characters");
    if (n.desc.find_first_of("\"=\n") != std::string::npos)
      bad("ibsim net: node description \"" + n.desc + "\" of " + guid_str(n.guid) +
          " contains '\"', '=' or a newline, which ibsim's net file parser cannot carry");
    if (n.nports < 1 || n.nports > 255)
      bad("ibsim net: node " + guid_str(n.guid) + " has " + std::to_string(n.nports) + " ports; ibsim takes 1-255");
    for (const auto &p : n.ports) {
      if (p.speed == LinkSpeed::FDR10 || p.speed == LinkSpeed::NDR || p.speed == LinkSpeed::XDR ||
          p.speed == LinkSpeed::Unknown)
        bad(std::string("ibsim net: ibsim 0.10 simulates SDR, DDR, QDR, FDR, EDR and HDR links, not ") +
            speed_name(p.speed) + " (port " + std::to_string(p.num) + " of " + guid_str(n.guid) +
            "); write ibnetdiscover text for such fabrics instead");
      if (p.width != 1 && p.width != 2 && p.width != 4 && p.width != 8 && p.width != 12)
        bad("ibsim net: port " + std::to_string(p.num) + " of " + guid_str(n.guid) + " has no valid width");
      uint64_t expect = n.type == NodeType::Switch ? n.guid : n.guid + static_cast<uint64_t>(p.num);
      if (p.port_guid != 0 && p.port_guid != expect)
        bad("ibsim net: port " + std::to_string(p.num) + " of " + guid_str(n.guid) + " has GUID " +
            guid_str(p.port_guid) + "; ibsim can only give " +
            (n.type == NodeType::Switch ? std::string("switch ports the node GUID")
                                        : std::string("CA port p the GUID node GUID + p")));
    }
  }
  auto idx = index_of(f);
  Lids lids = assign_lids(f);
  std::ostringstream out;
  out << "# ibsim net file written by topoaware (ibnetdiscover format; GUIDs are set by the\n"
         "# switchguid=/caguid= lines, so a walk finds the GUIDs of the generated fabric).\n";
  std::string args = ibsim_args(f);
  out << "# ibsim-args: " << (args.empty() ? "(none needed)" : args) << "\n";
  out << "#   e.g. ibsim " << (args.empty() ? "" : args + " ") << "-s <this file>\n";
  const FabricNode *ca = first_ca(f);
  if (ca) write_node(out, f, *ca, lids, idx);
  for (const auto &n : f.nodes)
    if (&n != ca) write_node(out, f, n, lids, idx);
  return out.str();
}

}  // namespace topoaware
