// SPDX-License-Identifier: GPL-2.0-or-later
// Which trace jobs are mixture-of-experts models, and their expert-parallel size: drawn where the
// workload is made (bench/sim), as a user states it (--ep), so that the placement and the rank
// order see the same ep that the network judge (bench/netsim) replays. Header-only: the simulator
// and the judge are separate programs and must draw alike.
#pragma once

#include <cstdint>
#include <string>

#include "layout.hpp"

namespace topoaware::netsim {

// Share of the jobs that are MoE models (when their layout allows ep >= 2).
inline constexpr double kMoeShare = 0.25;

// A uniform draw in [0, 1) from (seed, name, salt), the same on every platform (FNV-1a + splitmix64).
inline double unit_draw(uint64_t seed, const std::string &name, uint64_t salt) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the name
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  uint64_t z = h ^ (seed * 0x9e3779b97f4a7c15ull) ^ (salt * 0xbf58476d1ce4e5b9ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;  // splitmix64 finaliser
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53;
}

// The expert-parallel size the job's user asks for: 1 (a dense model) unless the (seed, name) draw
// makes it a MoE model, then the largest of 8, 4, 2 that divides cp*dp (1 if none does). Whether a
// MoE model of that ep fits the layout's GPUs the judge decides (bench/netsim/model.hpp,
// apply_today: none fits, the job is dense).
inline uint32_t workload_ep(uint64_t seed, const std::string &name, const Layout &l, double share = kMoeShare) {
  if (unit_draw(seed, name, 2) >= share) return 1;
  for (uint32_t e : {8u, 4u, 2u})
    if ((uint64_t(l.cp) * l.dp) % e == 0) return e;
  return 1;
}

}  // namespace topoaware::netsim
