// SPDX-License-Identifier: GPL-2.0-or-later
// Fabric generators for tests, the demo and the benchmarks: fat trees (2 and 3 levels, any
// oversubscription), rail-optimized fabrics and dragonflies, with Slurm-style host names.
// They produce a Fabric (the same model discovery produces), which can be written as an ibsim
// net file, as ibnetdiscover text, or classified and written as the expected topology.json.
#pragma once

#include <cstdint>
#include <string>

#include "fabric.hpp"

namespace topoaware {

struct FatTreeSpec {
  int levels = 2;             // 2 (leaf/spine) or 3 (leaf/spine/core, spines grouped in pods)
  int leaves = 16;            // total leaves
  int hosts_per_leaf = 32;
  int uplinks_per_leaf = 32;  // hosts_per_leaf / uplinks_per_leaf = oversubscription at level 1
  int spines = 8;             // 2 levels: total spines; 3 levels: spines per pod
  int leaves_per_pod = 8;     // 3 levels only
  int cores = 4;              // 3 levels only
  int core_uplinks_per_spine = 4;  // 3 levels: uplinks of each spine (oversubscription above pods)
  int hcas_per_host = 1;      // >1: every HCA of a host on the same leaf (multi-port, not rails)
  int radix = 0;              // switch port count; 0 = as many as needed (min 36)
  std::string speed = "HDR";
  int width = 4;
  std::string host_prefix = "n";
  // 0: host h of a leaf on its h-th down port(s), so port order follows host names. Otherwise each
  // leaf's hosts take its down ports in an order drawn from this seed (host names unchanged): port
  // order, the LIDs a subnet manager gives as it finds ports, and name order then disagree, as on
  // fabrics cabled by hand. Anything that guesses routes from names is then visibly wrong.
  uint64_t cabling_seed = 0;
};

struct RailSpec {
  int rails = 8;              // HCAs per host, HCA r plugs into leaf r of its scalable unit
  int units = 4;              // scalable units (leaf groups)
  int hosts_per_unit = 32;
  int spines_per_rail = 4;    // each rail's leaves uplink to their rail's spines (a subnet per rail)
  // > 0: instead, this many spines shared by every rail (one subnet, as most rail-optimized
  // clusters are built): each leaf spreads its uplinks over all of them, so traffic from one rail
  // to another can cross a spine. spines_per_rail is then ignored.
  int shared_spines = 0;
  int uplinks_per_leaf = 32;
  std::string speed = "HDR";
  int width = 4;
  std::string host_prefix = "n";
  uint64_t cabling_seed = 0;  // as FatTreeSpec::cabling_seed, a separate order on every leaf
};

struct DragonflySpec {
  int groups = 9;
  int routers_per_group = 4;  // all-to-all inside a group
  int hosts_per_router = 4;
  int global_links_per_router = 2;
  std::string speed = "HDR";
  int width = 4;
  std::string host_prefix = "n";
};

Fabric generate_fat_tree(const FatTreeSpec &spec);
Fabric generate_rail(const RailSpec &spec);
Fabric generate_dragonfly(const DragonflySpec &spec);

// ibsim net file (see /usr/share/doc/ibsim-utils/net-examples): node ids are the descriptions,
// GUIDs are written so that a live walk finds the same GUIDs as the Fabric.
std::string to_ibsim_net(const Fabric &fabric);
// ibnetdiscover default-format text of the Fabric (as ibnetdiscover prints it).
std::string to_ibnetdiscover_text(const Fabric &fabric);
// The ibsim command-line options this fabric needs beyond ibsim's built-in limits ("-N 2600 -S 300
// -P 20000"), or "" when the defaults (2048 nodes, 256 switches, 13312 ports) are enough.
std::string ibsim_args(const Fabric &fabric);

}  // namespace topoaware
