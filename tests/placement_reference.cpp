// SPDX-License-Identifier: GPL-2.0-or-later
// See placement_reference.hpp: the code of commit 71100c4 (corelib/placement.cpp, the rank order
// and segment packing of corelib/rank_order.cpp), renamed; the choice of a split part's entry host
// is today's rule, written out plainly.
#include "placement_reference.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace topoaware {
namespace reference {

namespace {

// Forms one segment of `seg` nodes from a pool of remainders (count > 0 each, in canonical
// order). First the largest remainder (fewest leaf groups); then, while nodes are missing, the
// smallest remainder that completes the segment (best fit, so large remainders stay whole for
// later segments), else the largest. Ties go to the earlier piece. Appends parts to out.
void form_segment(std::vector<SegmentPart> &pool, uint32_t seg, Packing &out) {
  uint32_t need = seg;
  const size_t first_part = out.parts.size();
  while (need > 0) {
    size_t best = pool.size();
    // a remainder that completes the segment, smallest first
    for (size_t i = 0; i < pool.size(); ++i)
      if (pool[i].count >= need && (best == pool.size() || pool[i].count < pool[best].count)) best = i;
    if (need == seg || best == pool.size()) {  // opening a segment, or nothing completes it
      best = 0;
      for (size_t i = 1; i < pool.size(); ++i)
        if (pool[i].count > pool[best].count) best = i;
    }
    const uint32_t take = std::min(need, pool[best].count);
    out.parts.push_back({pool[best].piece, take});
    need -= take;
    pool[best].count -= take;
    if (pool[best].count == 0) pool.erase(pool.begin() + std::ptrdiff_t(best));
  }
  // Parts in canonical order, so a ring inside the segment visits each leaf group once.
  std::sort(out.parts.begin() + std::ptrdiff_t(first_part), out.parts.end(),
            [](const SegmentPart &a, const SegmentPart &b) { return a.piece < b.piece; });
  out.begin.push_back(uint32_t(out.parts.size()));
}

}  // namespace

void ref_pack_segments(const std::vector<Piece> &pieces, uint32_t seg, Packing &out,
                   std::vector<SegmentPart> &pool) {
  out.parts.clear();
  out.begin.assign(1, 0);
  std::vector<SegmentPart> &carry = pool;  // remainders of all pods, in canonical order
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
    // Combine this pod's remainders while they make whole segments.
    if (left >= seg) {
      std::vector<SegmentPart> local(carry.begin() + std::ptrdiff_t(pod_start), carry.end());
      carry.resize(pod_start);
      while (left >= seg) {
        form_segment(local, seg, out);
        left -= seg;
      }
      carry.insert(carry.end(), local.begin(), local.end());
    }
  }
  // What is left crosses pods.
  while (!carry.empty()) {
    uint64_t total = 0;
    for (const auto &p : carry) total += p.count;
    if (total < seg) throw LayoutError("node count is not a multiple of the segment size");
    form_segment(carry, seg, out);
  }
}

void RefOrderer::order(const std::vector<int> &hosts, const Layout &layout, std::vector<int> &out) {
  const TopoIndex &ix = *index_;
  const JobGeometry geo = job_geometry(layout, uint32_t(hosts.size()));
  sorted_.assign(hosts.begin(), hosts.end());
  for (int h : sorted_)
    if (h < 0 || h >= ix.host_count()) throw LayoutError("host index " + std::to_string(h) + " is not in the topology");
  std::sort(sorted_.begin(), sorted_.end(),
            [&ix](int a, int b) { return ix.canonical_rank(a) < ix.canonical_rank(b); });
  for (size_t i = 1; i < sorted_.size(); ++i)
    if (sorted_[i] == sorted_[i - 1])
      throw LayoutError("host " + ix.topology().hosts[size_t(sorted_[i])].name + " is listed twice");
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
  ref_pack_segments(pieces_, geo.segment_nodes, packing_, pool_);
  // Which hosts of a piece a part gets does not matter inside the leaf group, but a segment split
  // over leaf groups enters each of its parts at the part's first host, whose ring edges come down
  // the uplinks of the host's entry classes (one per NIC on the leaf, from the recorded routes). So
  // each split part of the job enters at the free host of its piece with the least (the job's
  // earlier ring edges on the cables its edge would take: down its classes into the piece, and up
  // from the part before it in the ring to the switches those classes come from, its classes are
  // not all held whole by the job in the leaf group, (first class - (base + j R)) mod K) (R: the
  // group's entry stride), the first in canonical order on a tie. With the tables, the job's
  // earlier edges along the edge's whole traced path come first (below). Without routes (no
  // classes) canonical order.
  std::vector<uint32_t> &cursor = piece_start_;  // reused: start of the unused hosts of a piece
  used_.assign(sorted_.size(), 0);
  entry_.assign(packing_.parts.size(), UINT32_MAX);
  uint64_t base = 0x9e3779b97f4a7c15ULL;
  for (int h : sorted_) base = (base ^ uint64_t(h)) * 0x100000001b3ULL;
  base ^= base >> 29;
  uint64_t split_parts = 0;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> down;  // (piece, class) -> the job's edges down it
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> up;    // (piece, upper switch) -> the job's edges to it
  std::map<std::pair<int, int>, uint64_t> on_cable;        // (switch, egress port) -> the job's traced edges
  // The cabling between switches ((switch, port) -> the switch at the other end) and each switch's
  // subnet, for tracing paths through the recorded tables.
  std::map<std::pair<int, int>, int> peer;
  std::map<int, size_t> subnet_of;
  for (const Link &l : ix.topology().links) {
    const int a = ix.topology().switch_index(l.a), b = ix.topology().switch_index(l.b);
    if (a < 0 || b < 0) continue;
    for (const auto &[pa, pb] : l.ports) peer[{a, pa}] = b, peer[{b, pb}] = a;
  }
  for (size_t n = 0; n < ix.topology().routes.subnets.size(); ++n)
    for (const SwitchLft &lft : ix.topology().routes.subnets[n].switches)
      if (const int s = ix.topology().switch_index(lft.guid); s >= 0) subnet_of.emplace(s, n);
  for (uint32_t s = 0; s < packing_.segments(); ++s) {
    if (packing_.begin[s + 1] - packing_.begin[s] < 2) continue;  // inside one leaf group
    for (uint32_t q = packing_.begin[s]; q < packing_.begin[s + 1]; ++q) {
      const uint32_t pc = packing_.parts[q].piece;
      const int g = pieces_[pc].leaf_group;
      const uint64_t K = uint64_t(ix.leaf_group_uplinks(g));
      const uint64_t target = (base + split_parts++ * ix.leaf_group_entry_stride(g)) % K;
      if (K < 2 || !ix.has_entry_classes()) continue;  // no uplinks or routes known: canonical order
      const uint32_t end = pc + 1 < pieces_.size() ? piece_start_[pc + 1] : uint32_t(sorted_.size());
      const uint32_t pred = packing_.parts[q == packing_.begin[s] ? packing_.begin[s + 1] - 1 : q - 1].piece;
      const int pg = pieces_[pred].leaf_group;
      const uint32_t *pred_sw = ix.leaf_group_class_switches(pg);
      const uint32_t *entry_sw = ix.leaf_group_class_switches(g);
      // The upper switch class c's cable comes from, when the part before has a cable to it.
      const auto via = [&](uint16_t c) {
        const uint32_t sw = entry_sw[c];
        for (int k = 0; k < ix.leaf_group_uplinks(pg); ++k)
          if (sw != TopoIndex::kNoSwitch && pred_sw[k] == sw) return sw;
        return TopoIndex::kNoSwitch;
      };
      // NIC entries per class of the leaf group that are not the job's
      std::vector<int> others(K, 0);
      for (int h : ix.leaf_group_hosts(g))
        for (uint16_t c : ix.host_entry_classes(h)) ++others[c];
      for (uint32_t i = piece_start_[pc]; i < end; ++i)
        for (uint16_t c : ix.host_entry_classes(sorted_[i])) --others[c];
      uint32_t best = UINT32_MAX;
      std::vector<std::tuple<uint64_t, int, uint64_t, uint32_t>> cands;  // (class load, held?, distance, i)
      for (uint32_t i = piece_start_[pc]; i < end; ++i) {
        if (used_[i]) continue;
        uint64_t l = 0;
        bool held = true;
        for (uint16_t c : ix.host_entry_classes(sorted_[i])) {
          l += down[{pc, c}];
          if (via(c) != TopoIndex::kNoSwitch) l += up[{pred, via(c)}];
          held = held && others[c] == 0;
        }
        cands.emplace_back(std::min<uint64_t>(l, 0x7fff), held ? 0 : 1, (ix.host_uplink_mod(sorted_[i]) + K - target) % K, i);
      }
      std::sort(cands.begin(), cands.end());
      // With tables: the job's earlier edges on the cables of the candidate's traced path (every
      // NIC to the same NIC of the part before's first host's), the first 16 candidates in that
      // order, the first at 0 or else the least; the classes' load where a path is not known.
      const int src = sorted_[piece_start_[pred]];
      const auto trace = [&](int h, std::vector<std::pair<int, int>> &cables) {
        const Topology &t = ix.topology();
        const size_t nics = std::min(t.hosts[size_t(src)].ports.size(), t.hosts[size_t(h)].ports.size());
        cables.clear();
        for (size_t p = 0; p < nics; ++p) {
          const HcaPort &from = t.hosts[size_t(src)].ports[p], &to = t.hosts[size_t(h)].ports[p];
          int sw = from.sw;
          const auto sub = subnet_of.find(sw);
          if (sw < 0 || sub == subnet_of.end()) return false;
          const PortLid *pl = t.routes.subnets[size_t(sub->second)].find_port(to.ca_guid, to.port);
          if (!pl) return false;
          bool reached = false;
          for (int hop = 0; hop < 16 && !reached; ++hop) {
            const SwitchLft *lft = t.routes.subnets[size_t(sub->second)].find_switch(t.switches[size_t(sw)].guid);
            if (sw == to.sw) {  // the rest is the switch's own cable down to the NIC
              reached = true;
            } else {
              if (!lft || pl->base_lid >= lft->out.size()) return false;
              const int out = lft->out[pl->base_lid];
              const auto next = peer.find({sw, out});
              if (out == 0 || next == peer.end()) return false;
              cables.emplace_back(sw, out);
              sw = next->second;
            }
          }
          if (!reached) return false;
        }
        return nics > 0;
      };
      std::vector<std::pair<int, int>> cables;
      if (ix.topology().routes.empty()) {
        best = std::get<3>(cands.front());
      } else {
        uint64_t best_load = UINT64_MAX;
        for (size_t j = 0; j < cands.size() && j < 16 && best_load != 0; ++j) {
          const uint32_t i = std::get<3>(cands[j]);
          uint64_t l = 0;
          if (trace(sorted_[i], cables))
            for (const auto &c : cables) l += on_cable[c];
          else
            l = std::get<0>(cands[j]);
          if (l < best_load) best_load = l, best = i;
        }
        if (trace(sorted_[best], cables))
          for (const auto &c : cables) ++on_cable[c];
      }
      used_[best] = 1;  // a piece has as many free hosts as its parts take
      entry_[q] = best;
      for (uint16_t c : ix.host_entry_classes(sorted_[best])) {
        ++down[{pc, c}];
        if (via(c) != TopoIndex::kNoSwitch) ++up[{pred, via(c)}];
      }
    }
  }
  // Hand out each piece's hosts: a split part's entry host first, then the piece's free hosts in
  // canonical order.
  out.clear();
  out.reserve(sorted_.size());
  for (uint32_t q = 0; q < packing_.parts.size(); ++q) {
    const SegmentPart &part = packing_.parts[q];
    uint32_t k = 0;
    if (entry_[q] != UINT32_MAX) out.push_back(sorted_[entry_[q]]), ++k;
    for (; k < part.count; ++k) {
      while (used_[cursor[part.piece]]) ++cursor[part.piece];
      used_[cursor[part.piece]] = 1;
      out.push_back(sorted_[cursor[part.piece]++]);
    }
  }
}


RefPlacer::RefPlacer(const TopoIndex &index) : index_(&index), orderer_(index) {
  const size_t nlg = size_t(index.leaf_group_count());
  lg_count_.assign(nlg, 0);
  lg_fill_.assign(nlg, 0);
  lg_off_.assign(nlg + 1, 0);
  take_.assign(nlg, 0);
  best_take_.assign(nlg, 0);
  pod_free_.assign(size_t(index.pod_count()), 0);
  cand_.reserve(size_t(index.host_count()));
  raw_.reserve(size_t(index.host_count()));
}

PlaceStatus RefPlacer::place(const int *hosts, const uint32_t *free_gpus, size_t n, const Job &job, PlaceMode mode,
                          PlaceResult &out) {
  raw_.clear();
  for (size_t i = 0; i < n; ++i)
    if (hosts[i] >= 0 && hosts[i] < index_->host_count()) raw_.emplace_back(hosts[i], free_gpus[i]);
  return run(job, mode, out);
}

PlaceStatus RefPlacer::place_slurm(const NodeMap &map, const uint64_t *words, size_t nbits, const uint16_t *free_gpus,
                                const Job &job, PlaceMode mode, PlaceResult &out) {
  raw_.clear();
  nbits = std::min(nbits, map.size());
  for (size_t w = 0; w * 64 < nbits; ++w) {
    uint64_t bits = words[w];
    while (bits) {
      const size_t i = w * 64 + size_t(__builtin_ctzll(bits));
      bits &= bits - 1;
      if (i >= nbits) break;
      const int h = map.host(i);
      if (h >= 0) raw_.emplace_back(h, free_gpus[i]);
    }
  }
  const PlaceStatus s = run(job, mode, out);
  out.slurm.clear();
  for (int h : out.nodes) out.slurm.push_back(map.slurm(h));
  return s;
}

// Takes whole segments (units of `seg` nodes; seg = 1: single nodes), then single nodes, from the
// leaf groups `lgs` (candidates counted in lg_count_), writing the node count taken from each into
// take (indexed by leaf group, zero on entry for lgs). partial_only: only groups that are partly
// used (false if they cannot hold every segment). Returns false if the region holds too few.
//
// Segments: if one group holds the remaining segments, the one that holds them most tightly
// (fewest whole segments, then fewest free nodes, then lowest index); else the group with the most
// whole segments (then fewest free nodes, lowest index), which keeps the job on few groups. Single
// nodes (only when segments must be split): the same best fit by free nodes over what is left.
bool RefPlacer::greedy(const std::vector<int> &lgs, uint32_t seg, uint32_t nseg, bool partial_only,
                    std::vector<uint32_t> &take) {
  uint64_t remaining = nseg;
  auto best_fit = [&](uint64_t &need, uint32_t unit) {
    // opts_ sorted by (k asc, c desc, lg desc): the back is the largest k with the fewest free
    // nodes and the lowest index, and the end of a run of equal k is its tightest member.
    std::sort(opts_.begin(), opts_.end(), [](const Opt &a, const Opt &b) {
      return std::tie(a.k, b.c, b.lg) < std::tie(b.k, a.c, a.lg);
    });
    size_t end = opts_.size();
    while (need > 0 && end > 0) {
      const Opt &last = opts_[end - 1];
      if (last.k < need) {
        take[size_t(last.lg)] += last.k * unit;
        need -= last.k;
        --end;
        continue;
      }
      size_t i = size_t(std::lower_bound(opts_.begin(), opts_.begin() + std::ptrdiff_t(end), need,
                                         [](const Opt &o, uint64_t v) { return o.k < v; }) -
                        opts_.begin());
      while (i + 1 < end && opts_[i + 1].k == opts_[i].k) ++i;
      take[size_t(opts_[i].lg)] += uint32_t(need) * unit;
      need = 0;
    }
  };
  // Tier: partially used groups alone (the caller asks for it only when they hold every
  // segment), or all groups.
  opts_.clear();
  for (int g : lgs) {
    const uint32_t c = lg_count_[size_t(g)];
    if (c / seg == 0) continue;
    if (partial_only && c >= uint32_t(index_->leaf_group_size(g))) continue;
    opts_.push_back({c / seg, c, g});
  }
  best_fit(remaining, seg);
  if (partial_only && remaining > 0) return false;
  if (remaining == 0) return true;
  uint64_t need = remaining * seg;
  opts_.clear();
  for (int g : lgs) {
    const uint32_t c = lg_count_[size_t(g)] - take[size_t(g)];
    if (c > 0) opts_.push_back({c, c, g});
  }
  best_fit(need, 1);
  return need == 0;
}

// Span of the node counts in take over lgs, exactly as the rank order will cut it.
void RefPlacer::evaluate(const std::vector<uint32_t> &take, const std::vector<int> &lgs, uint32_t seg, PlaceQuality &q) {
  const TopoIndex &ix = *index_;
  pieces_.clear();
  for (int g : lgs)
    if (take[size_t(g)] > 0) pieces_.push_back({g, ix.leaf_group_pod(g), take[size_t(g)]});
  std::sort(pieces_.begin(), pieces_.end(), [](const Piece &a, const Piece &b) {
    return std::tie(a.pod, a.leaf_group) < std::tie(b.pod, b.leaf_group);
  });
  ref_pack_segments(pieces_, seg, packing_, pool_);
  const uint32_t lmax = uint32_t(std::max(1, ix.max_leaf_group_size()));
  const uint32_t ideal_seg = (seg + lmax - 1) / lmax;
  q = PlaceQuality{};
  q.segments = packing_.segments();
  for (uint32_t s = 0; s < q.segments; ++s) {
    const uint32_t span = packing_.begin[s + 1] - packing_.begin[s];  // parts = distinct leaf groups
    if (span > ideal_seg) {
      q.segment_excess += span - ideal_seg;
      ++q.split_segments;
    }
  }
  q.leaf_groups = uint32_t(pieces_.size());
  for (size_t i = 0; i < pieces_.size(); ++i) {
    if (i == 0 || pieces_[i].pod != pieces_[i - 1].pod) ++q.pods;
    const int g = pieces_[i].leaf_group;
    if (lg_count_[size_t(g)] >= uint32_t(ix.leaf_group_size(g))) ++q.fresh_groups;
    if (take[size_t(g)] < lg_count_[size_t(g)]) ++q.holes;
  }
}

PlaceStatus RefPlacer::run(const Job &job, PlaceMode mode, PlaceResult &out) {
  const TopoIndex &ix = *index_;
  out.nodes.clear();
  out.slurm.clear();
  out.quality = PlaceQuality{};
  out.candidates = 0;
  const JobGeometry geo = job_geometry(job.layout, job.nodes);  // throws on a bad layout
  if (job.gpus_per_node != geo.gpus_per_node)
    throw LayoutError("the layout's " + std::to_string(job.layout.world()) + " GPUs on " +
                      std::to_string(job.nodes) + " nodes means " + std::to_string(geo.gpus_per_node) +
                      " GPUs per node, but the job asks for " + std::to_string(job.gpus_per_node));
  const uint32_t N = job.nodes, seg = geo.segment_nodes, nseg = geo.segments();
  const uint32_t gpn = geo.gpus_per_node;

  // Bucket the candidates with enough free GPUs by leaf group: O(candidates + leaf groups).
  std::fill(lg_count_.begin(), lg_count_.end(), 0);
  std::fill(pod_free_.begin(), pod_free_.end(), 0);
  uint32_t total = 0;
  for (const auto &[h, free] : raw_) {
    if (free < gpn) continue;
    ++lg_count_[size_t(ix.host_leaf_group(h))];
    ++pod_free_[size_t(ix.host_pod(h))];
    ++total;
  }
  out.candidates = total;
  if (total < N) return out.status = PlaceStatus::NoNodes;
  const size_t nlg = lg_count_.size();
  lg_off_[0] = 0;
  for (size_t g = 0; g < nlg; ++g) lg_off_[g + 1] = lg_off_[g] + lg_count_[g];
  std::copy(lg_off_.begin(), lg_off_.end() - 1, lg_fill_.begin());
  cand_.resize(total);
  for (const auto &[h, free] : raw_)
    if (free >= gpn) cand_[lg_fill_[size_t(ix.host_leaf_group(h))]++] = {free, h};

  const uint32_t pmax = uint32_t(std::max(1, ix.max_pod_size()));
  const uint32_t ideal_pods = (N + pmax - 1) / pmax;
  const uint32_t lmax = uint32_t(std::max(1, ix.max_leaf_group_size()));
  const uint32_t ideal_lgs = (N + lmax - 1) / lmax;
  // The choice among placements, lexicographic (smaller is better); see the header, goal 4:
  // (strict: not ideal), pods above ideal, leaf groups above ceil(N / leaf group), holes (leaf
  // groups touched but left partly free), split DP rings / PP chains, whole groups broken, groups.
  // Holes before segment splits: over a trace a hole left in a leaf group ties that group to two
  // jobs' lifetimes, so it rarely becomes whole again and later jobs split (measured in bench/:
  // segment-first ranking gave 39-49% ideal spans and 1.9x Slurm tree's excess hop-bytes at
  // 2,048 nodes, 90% load; hole-first 50.6% and 0.91x). Strict mode asks for an ideal block
  // first, so it ranks ideal placements before everything else.
  const bool strict = mode == PlaceMode::Strict;
  const auto key = [strict](const PlaceQuality &x) {
    const uint32_t lg_excess = x.leaf_groups - std::min(x.leaf_groups, x.ideal_leaf_groups);
    const uint32_t pe = x.pods > x.ideal_pods ? x.pods - x.ideal_pods : 0u;
    return std::make_tuple(strict && !x.ideal(), pe, lg_excess, x.holes, x.segment_excess, x.fresh_groups,
                           x.leaf_groups);
  };
  const auto prefix = [](const PlaceQuality &x) {  // (pods, leaf groups, holes) part of the key
    return std::make_tuple(x.pods > x.ideal_pods ? x.pods - x.ideal_pods : 0u,
                           x.leaf_groups - std::min(x.leaf_groups, x.ideal_leaf_groups), x.holes);
  };
  bool have_best = false;
  PlaceQuality best_q;
  auto try_tier = [&](const std::vector<int> &lgs, uint32_t unit, uint32_t units, bool partial_only) {
    for (int g : lgs) take_[size_t(g)] = 0;
    if (!greedy(lgs, unit, units, partial_only, take_)) return;
    PlaceQuality q;
    q.ideal_pods = ideal_pods;
    q.ideal_leaf_groups = ideal_lgs;
    if (have_best && !strict) {
      // The spans and holes are known without cutting segments (regions list their leaf groups
      // pod by pod): skip the packing when they already lose.
      int last_pod = -1;
      for (int g : lgs) {
        const uint32_t t = take_[size_t(g)];
        if (!t) continue;
        ++q.leaf_groups;
        q.holes += t < lg_count_[size_t(g)];
        if (ix.leaf_group_pod(g) != last_pod) ++q.pods;
        last_pod = ix.leaf_group_pod(g);
      }
      if (prefix(best_q) < prefix(q)) return;
    }
    evaluate(take_, lgs, seg, q);
    q.ideal_pods = ideal_pods;
    q.ideal_leaf_groups = ideal_lgs;
    if (have_best && !(key(q) < key(best_q))) return;  // earlier options win ties (best fit)
    for (int g : best_lgs_) best_take_[size_t(g)] = 0;
    best_lgs_.clear();
    for (int g : lgs)
      if (take_[size_t(g)]) {
        best_lgs_.push_back(g);
        best_take_[size_t(g)] = take_[size_t(g)];
      }
    best_q = q;
    have_best = true;
  };
  // Three candidate selections per region, the key decides (earlier wins ties): whole segments
  // from partly used groups only (when they hold every segment: no whole group is broken); whole
  // segments from all groups; whole nodes, Slurm-style best fit (the tightest group that holds the
  // job, else the largest groups and the tightest for the rest: takes every free node of all
  // groups but the last, so it leaves at most one hole). The rank order then cuts segments from
  // whichever set wins. O(leaf groups log leaf groups) each.
  auto consider = [&](const std::vector<int> &lgs) {
    uint64_t partial = 0;
    for (int g : lgs) {
      const uint32_t c = lg_count_[size_t(g)];
      if (c < uint32_t(ix.leaf_group_size(g))) partial += c / seg;
    }
    if (partial >= nseg) try_tier(lgs, seg, nseg, true);
    if (seg > 1) try_tier(lgs, seg, nseg, false);
    try_tier(lgs, 1, N, false);
  };
  // Good enough to stop looking at further (larger) pods.
  auto settled = [&] { return have_best && best_q.ideal(); };

  // One pod at a time, smallest sufficient pod first (best fit); stop at the first ideal one.
  pods_sorted_.clear();
  for (int p = 0; p < ix.pod_count(); ++p)
    if (pod_free_[size_t(p)] >= N) pods_sorted_.push_back(p);
  std::sort(pods_sorted_.begin(), pods_sorted_.end(), [this](int a, int b) {
    return std::tie(pod_free_[size_t(a)], a) < std::tie(pod_free_[size_t(b)], b);
  });
  for (int p : pods_sorted_) {
    region_.clear();
    for (int g : ix.pod_leaf_groups(p))
      if (lg_count_[size_t(g)]) region_.push_back(g);
    consider(region_);
    if (settled()) break;
  }
  // Several pods: chosen best-fit by whole segments (by nodes when segments cannot all be whole),
  // the same rule as for leaf groups, then leaf groups across them.
  if (ix.pod_count() > 1 && !settled()) {
    opts_.clear();
    uint64_t seg_total = 0;
    for (int p = 0; p < ix.pod_count(); ++p) {
      uint32_t k = 0;
      for (int g : ix.pod_leaf_groups(p)) k += lg_count_[size_t(g)] / seg;
      seg_total += k;
      opts_.push_back({k, pod_free_[size_t(p)], p});
    }
    const bool by_segments = seg_total >= nseg;
    if (!by_segments)
      for (auto &o : opts_) o.k = o.c;
    uint64_t need = by_segments ? nseg : N;
    std::sort(opts_.begin(), opts_.end(), [](const Opt &a, const Opt &b) {
      return std::tie(a.k, b.c, b.lg) < std::tie(b.k, a.c, a.lg);
    });
    std::vector<int> &chosen = pods_sorted_;  // reused
    chosen.clear();
    size_t end = opts_.size();
    while (need > 0 && end > 0) {
      if (opts_[end - 1].k < need) {
        need -= opts_[end - 1].k;
        chosen.push_back(opts_[--end].lg);
        continue;
      }
      size_t i = size_t(std::lower_bound(opts_.begin(), opts_.begin() + std::ptrdiff_t(end), need,
                                         [](const Opt &o, uint64_t v) { return o.k < v; }) - opts_.begin());
      while (i + 1 < end && opts_[i + 1].k == opts_[i].k) ++i;
      chosen.push_back(opts_[i].lg);
      need = 0;
    }
    std::sort(chosen.begin(), chosen.end());
    region_.clear();
    for (int p : chosen)
      for (int g : ix.pod_leaf_groups(p))
        if (lg_count_[size_t(g)]) region_.push_back(g);
    consider(region_);
  }
  if (!have_best) return out.status = PlaceStatus::NoNodes;  // unreachable: total >= N

  // The nodes: in each chosen leaf group, those with the fewest free GPUs (best fit), then by
  // canonical order. Only the chosen groups are sorted.
  chosen_hosts_.clear();
  std::sort(best_lgs_.begin(), best_lgs_.end());
  for (int g : best_lgs_) {
    auto b = cand_.begin() + std::ptrdiff_t(lg_off_[size_t(g)]);
    auto e = cand_.begin() + std::ptrdiff_t(lg_off_[size_t(g) + 1]);
    const uint32_t t = best_take_[size_t(g)];
    auto cmp = [&ix](const std::pair<uint32_t, int> &a, const std::pair<uint32_t, int> &c) {
      return std::make_pair(a.first, ix.canonical_rank(a.second)) <
             std::make_pair(c.first, ix.canonical_rank(c.second));
    };
    std::partial_sort(b, b + t, e, cmp);
    for (auto it = b; it != b + t; ++it) chosen_hosts_.push_back(it->second);
  }
  orderer_.order(chosen_hosts_, job.layout, out.nodes);
  out.quality = best_q;
  if (best_q.ideal()) return out.status = PlaceStatus::Ideal;
  return out.status = mode == PlaceMode::Strict ? PlaceStatus::NoBlock : PlaceStatus::Fallback;
}

}  // namespace reference
}  // namespace topoaware
