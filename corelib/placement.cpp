// SPDX-License-Identifier: GPL-2.0-or-later
// Placement engine (see placement.hpp for the goals and the comparison with Slurm).
#include "placement.hpp"

#include <algorithm>
#include <string_view>
#include <tuple>

#include "text.hpp"

namespace topoaware {

const char *place_status_name(PlaceStatus s) {
  switch (s) {
    case PlaceStatus::Ideal: return "ideal";
    case PlaceStatus::Fallback: return "fallback";
    case PlaceStatus::NoBlock: return "no-block";
    case PlaceStatus::NoNodes: return "no-nodes";
  }
  return "?";
}

NodeMap::NodeMap(const TopoIndex &index, const std::vector<std::string> &slurm_names) {
  to_host_.assign(slurm_names.size(), -1);
  to_lg_.assign(slurm_names.size(), -1);
  to_slurm_.assign(size_t(index.host_count()), -1);
  for (size_t i = 0; i < slurm_names.size(); ++i) {
    const int h = index.find_host(slurm_names[i]);
    if (h < 0 || to_slurm_[size_t(h)] >= 0) {  // unknown, or a duplicate name: never placeable
      missing_.push_back(slurm_names[i]);
      continue;
    }
    to_host_[i] = h;
    to_lg_[i] = index.host_leaf_group(h);
    to_slurm_[size_t(h)] = int(i);
  }
}

std::string node_map_unusable(const TopoIndex &index, const NodeMap &map) {
  constexpr size_t kExamples = 3, kNameChars = 64;
  if (map.known()) return "";
  // Every Slurm name is missing: "" names a defunct slot of the node table, not a node.
  std::vector<std::string_view> slurm;
  size_t nodes = 0;
  for (const std::string &n : map.missing()) {
    if (n.empty()) continue;
    if (slurm.size() < kExamples) slurm.push_back(n);
    ++nodes;
  }
  if (!nodes) return "";
  const auto examples = [&](size_t total, auto &&name_of) {
    std::string out;
    for (size_t i = 0; i < std::min(total, kExamples); ++i)
      out += (i ? ", " : "") + printable_text(name_of(i).substr(0, kNameChars));
    return out + (total > kExamples ? ", ..." : "");
  };
  const auto &hosts = index.topology().hosts;
  return "it holds 0 of slurmctld's " + std::to_string(nodes) + " nodes (slurmctld's nodes: " +
         examples(nodes, [&](size_t i) { return slurm[i]; }) + "; its " + std::to_string(hosts.size()) +
         " hosts: " + examples(hosts.size(), [&](size_t i) { return std::string_view(hosts[i].name); }) +
         "): another cluster's topology, or host names other than Slurm's NodeName (FQDNs against short names?)";
}

Placer::Placer(const TopoIndex &index) : index_(&index), orderer_(index) {
  const size_t nlg = size_t(index.leaf_group_count());
  lg_count_.assign(nlg, 0);
  take_.assign(nlg, 0);
  best_take_.assign(nlg, 0);
  pod_free_.assign(size_t(index.pod_count()), 0);
  host_free_.assign(size_t(index.host_count()), 0);
  host_mark_.assign(size_t(index.host_count()), 0);
  // Written branch-free (every host visited is stored, the count advanced when it is a
  // candidate), so both are sized for the most a call can store.
  chosen_hosts_.assign(size_t(index.host_count()), 0);
  keys_.assign(size_t(std::max(1, index.max_leaf_group_size())), 0);
  // k and c are at most a leaf group's size, lg below the group count (see sort_opts).
  const auto bits = [](uint64_t v) {
    unsigned b = 1;
    while (v >> b) ++b;
    return b;
  };
  opt_c_bits_ = bits(uint64_t(std::max(1, index.max_leaf_group_size())));
  opt_lg_bits_ = bits(uint64_t(std::max(1, index.leaf_group_count())));
  packed_opts_ = !index.degraded() && 2 * opt_c_bits_ + opt_lg_bits_ <= 64;
  opt_keys_.reserve(nlg);
}

JobGeometry Placer::begin_call(const Job &job, PlaceResult &out) {
  out.nodes.clear();
  out.slurm.clear();
  out.quality = PlaceQuality{};
  out.candidates = 0;
  out.status = PlaceStatus::NoNodes;
  const JobGeometry geo = job_geometry(job.layout, job.nodes, index_->has_domains());  // throws on a bad layout
  if (job.gpus_per_node != geo.gpus_per_node)
    throw LayoutError("the layout's " + std::to_string(job.layout.world()) + " GPUs on " +
                      std::to_string(job.nodes) + " nodes means " + std::to_string(geo.gpus_per_node) +
                      " GPUs per node, but the job asks for " + std::to_string(job.gpus_per_node));
  std::fill(lg_count_.begin(), lg_count_.end(), 0);
  return geo;
}

PlaceStatus Placer::place(const int *hosts, const uint32_t *free_gpus, size_t n, const Job &job, PlaceMode mode,
                          PlaceResult &out) {
  const JobGeometry geo = begin_call(job, out);
  const TopoIndex &ix = *index_;
  // The hosts given are marked for the visit of the chosen leaf groups, and unmarked on the way out.
  struct Unmark {
    Placer &p;
    ~Unmark() {
      for (int h : p.marked_) p.host_mark_[size_t(h)] = 0;
      p.marked_.clear();
    }
  } unmark{*this};
  uint32_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const int h = hosts[i];
    if (h < 0 || h >= ix.host_count() || host_mark_[size_t(h)]) continue;
    host_mark_[size_t(h)] = 1;
    host_free_[size_t(h)] = free_gpus[i];
    marked_.push_back(h);
    if (free_gpus[i] >= geo.gpus_per_node) {
      ++lg_count_[size_t(ix.host_leaf_group(h))];
      ++total;
    }
  }
  const auto usable = [this](int h, uint32_t &free) {
    free = host_free_[size_t(h)];  // stale for hosts not given: their mark says no
    return host_mark_[size_t(h)] != 0;
  };
  if (ix.has_domains()) return run_domains(job, geo, mode, out, usable);
  return run(job, geo, total, mode, out, usable);
}

PlaceStatus Placer::place_slurm(const NodeMap &map, const uint64_t *words, size_t nbits, const uint16_t *free_gpus,
                                const Job &job, PlaceMode mode, PlaceResult &out) {
  const JobGeometry geo = begin_call(job, out);
  nbits = std::min(nbits, map.size());
  // One pass over the set bits: candidates per leaf group (the node table's leaf groups are looked
  // up in the map's own array, in index order); pods are summed from the groups afterwards.
  uint32_t total = 0;
  const uint32_t gpn = geo.gpus_per_node;
  for (size_t w = 0; w * 64 < nbits; ++w) {
    uint64_t bits = words[w];
    if (nbits - w * 64 < 64) bits &= (uint64_t(1) << (nbits - w * 64)) - 1;  // bits past the table
    while (bits) {
      const size_t i = w * 64 + size_t(__builtin_ctzll(bits));
      bits &= bits - 1;
      const int g = map.leaf_group(i);
      if (g >= 0 && free_gpus[i] >= gpn) {
        ++lg_count_[size_t(g)];
        ++total;
      }
    }
  }
  const auto usable = [&](int h, uint32_t &free) {
    const int i = map.slurm(h);
    if (i < 0 || size_t(i) >= nbits) return false;  // not in Slurm's table: rare, predictable
    free = free_gpus[i];
    return (words[size_t(i) / 64] >> (size_t(i) % 64) & 1) != 0;
  };
  const PlaceStatus s = index_->has_domains() ? run_domains(job, geo, mode, out, usable)
                                              : run(job, geo, total, mode, out, usable);
  out.slurm.reserve(out.nodes.size());
  for (int h : out.nodes) out.slurm.push_back(map.slurm(h));
  return s;
}

// opts_ sorted by (k asc, c desc, bad desc, lg desc) (see greedy). Without degraded leaves every
// bad is 1 and the order is that of one integer, k << (cb + gb) | (cmax - c) << gb | (gmax - lg)
// (cb, gb: the bits of the largest group size and group index), sorted by radix (sort_keys):
// several times faster than the tuple comparison, which matters for the largest jobs (hundreds
// of leaf groups, sorted a few times per candidate set).
void Placer::sort_opts() {
  if (!packed_opts_) {
    std::sort(opts_.begin(), opts_.end(), [](const Opt &a, const Opt &b) {
      return std::tie(a.k, b.c, b.bad, b.lg) < std::tie(b.k, a.c, a.bad, a.lg);
    });
    return;
  }
  const unsigned cb = opt_c_bits_, gb = opt_lg_bits_;
  const uint64_t cmax = (uint64_t(1) << cb) - 1, gmax = (uint64_t(1) << gb) - 1;
  opt_keys_.clear();
  for (const Opt &o : opts_)
    opt_keys_.push_back(uint64_t(o.k) << (cb + gb) | (cmax - o.c) << gb | (gmax - uint64_t(o.lg)));
  sort_keys(opt_keys_, opt_tmp_);
  for (size_t i = 0; i < opts_.size(); ++i) {
    const uint64_t x = opt_keys_[i];
    opts_[i] = {uint32_t(x >> (cb + gb)), uint32_t(cmax - (x >> gb & cmax)), int(gmax - (x & gmax)), 1.0f};
  }
}

bool Placer::greedy(const std::vector<int> &lgs, uint32_t seg, uint32_t nseg, bool partial_only,
                    std::vector<uint32_t> &take) {
  uint64_t remaining = nseg;
  bool taken = false;  // some group already takes part: the job spans several
  auto best_fit = [&](uint64_t &need, uint32_t unit) {
    // opts_ sorted by (k asc, c desc, bad desc, lg desc): the back is the largest k with the fewest
    // free nodes, the healthiest uplinks and the lowest index, and the end of a run of equal k is
    // its tightest member.
    sort_opts();
    size_t end = opts_.size();
    while (need > 0 && end > 0) {
      const Opt &last = opts_[end - 1];
      if (last.k < need) {
        take[size_t(last.lg)] += last.k * unit;
        need -= last.k;
        taken = true;
        --end;
        continue;
      }
      size_t i = size_t(std::lower_bound(opts_.begin(), opts_.begin() + std::ptrdiff_t(end), need,
                                         [](const Opt &o, uint64_t v) { return o.k < v; }) -
                        opts_.begin());
      while (i + 1 < end && opts_[i + 1].k == opts_[i].k) ++i;
      if (!taken && index_->degraded()) {
        // The whole job in this one group: among the equally tight ones the most degraded, then
        // the lowest index (the run of equal (k, c) lists the most degraded first, each factor's
        // lowest index last).
        size_t s = i;
        while (s > 0 && opts_[s - 1].k == opts_[i].k && opts_[s - 1].c == opts_[i].c) --s;
        i = s;
        while (i + 1 < end && opts_[i + 1].k == opts_[s].k && opts_[i + 1].c == opts_[s].c &&
               opts_[i + 1].bad == opts_[s].bad)
          ++i;
      }
      take[size_t(opts_[i].lg)] += uint32_t(need) * unit;
      taken = true;
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
    opts_.push_back({c / seg, c, g, float(index_->leaf_group_uplink_factor(g))});
  }
  best_fit(remaining, seg);
  if (partial_only && remaining > 0) return false;
  if (remaining == 0) return true;
  uint64_t need = remaining * seg;
  opts_.clear();
  for (int g : lgs) {
    const uint32_t c = lg_count_[size_t(g)] - take[size_t(g)];
    if (c > 0) opts_.push_back({c, c, g, float(index_->leaf_group_uplink_factor(g))});
  }
  best_fit(need, 1);
  return need == 0;
}

// Span of the node counts in take over lgs, exactly as the rank order will cut it.
void Placer::evaluate(const std::vector<uint32_t> &take, const std::vector<int> &lgs, uint32_t seg, PlaceQuality &q) {
  const TopoIndex &ix = *index_;
  pieces_.clear();
  for (int g : lgs)
    if (take[size_t(g)] > 0) pieces_.push_back({g, ix.leaf_group_pod(g), take[size_t(g)]});
  // Regions list their leaf groups pod by pod already: sorting is then skipped.
  const auto canonical = [](const Piece &a, const Piece &b) {
    return std::tie(a.pod, a.leaf_group) < std::tie(b.pod, b.leaf_group);
  };
  if (!std::is_sorted(pieces_.begin(), pieces_.end(), canonical)) std::sort(pieces_.begin(), pieces_.end(), canonical);
  pack_segments(pieces_, seg, packing_, pool_);
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
  if (pieces_.size() > 1 && ix.degraded())
    for (const Piece &p : pieces_) q.degraded_uplinks += ix.leaf_group_uplink_factor(p.leaf_group) - 1;
}

PlacementRank placement_rank(const PlaceQuality &q, bool strict) {
  const auto [pods_above, groups_above, holes] = placement_rank_prefix(q);
  return {strict && !q.ideal(), pods_above, groups_above, holes, q.segment_excess, q.fresh_groups, q.leaf_groups,
          q.degraded_uplinks};
}

std::tuple<uint32_t, uint32_t, uint32_t> placement_rank_prefix(const PlaceQuality &q) {
  return {q.pods > q.ideal_pods ? q.pods - q.ideal_pods : 0u, q.leaf_groups - std::min(q.leaf_groups, q.ideal_leaf_groups),
          q.holes};
}

int Placer::pick_island(uint32_t n) {
  const TopoIndex &ix = *index_;
  if (ix.island_count() < 2) return 0;
  island_free_.assign(size_t(ix.island_count()), 0);
  for (int p = 0; p < ix.pod_count(); ++p)
    if (ix.pod_island(p) >= 0) island_free_[size_t(ix.pod_island(p))] += pod_free_[size_t(p)];
  int best = -1;
  for (int i = 0; i < ix.island_count(); ++i)
    if (island_free_[size_t(i)] >= n && (best < 0 || island_free_[size_t(i)] < island_free_[size_t(best)])) best = i;
  return best;
}

// One candidate set: take_ over lgs by greedy (units of `unit` nodes); kept as the best when its
// placement_rank beats the best so far (earlier sets win ties, best fit).
void Placer::try_tier(Search &s, const std::vector<int> &lgs, uint32_t unit, uint32_t units, bool partial_only) {
  const TopoIndex &ix = *index_;
  for (int g : lgs) take_[size_t(g)] = 0;
  if (!greedy(lgs, unit, units, partial_only, take_)) return;
  if (s.have_best) {
    // The same node counts per group as the best so far (the candidate sets often agree for
    // large jobs): the same quality, and the earlier wins ties, so nothing to evaluate.
    size_t groups = 0;
    bool differ = false;
    for (int g : lgs) {
      const uint32_t t = take_[size_t(g)];
      if (t != best_take_[size_t(g)]) {
        differ = true;
        break;
      }
      groups += t != 0;
    }
    if (!differ && groups == best_lgs_.size()) return;
  }
  PlaceQuality q;
  q.ideal_pods = s.ideal_pods;
  q.ideal_leaf_groups = s.ideal_lgs;
  if (s.have_best && !s.strict) {
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
    if (placement_rank_prefix(s.best_q) < placement_rank_prefix(q)) return;
  }
  evaluate(take_, lgs, s.seg, q);
  q.ideal_pods = s.ideal_pods;
  q.ideal_leaf_groups = s.ideal_lgs;
  if (s.have_best && !(placement_rank(q, s.strict) < placement_rank(s.best_q, s.strict)))
    return;  // earlier options win ties (best fit)
  for (int g : best_lgs_) best_take_[size_t(g)] = 0;
  best_lgs_.clear();
  for (int g : lgs)
    if (take_[size_t(g)]) {
      best_lgs_.push_back(g);
      best_take_[size_t(g)] = take_[size_t(g)];
    }
  s.best_q = q;
  s.have_best = true;
  // The winner's segments, as evaluate cut them, are the rank order's (order_placed).
  best_pieces_.swap(pieces_);
  std::swap(best_packing_, packing_);
}

// Three candidate selections per region, the key decides (earlier wins ties): whole segments
// from partly used groups only (when they hold every segment: no whole group is broken); whole
// segments from all groups; whole nodes, Slurm-style best fit (the tightest group that holds the
// job, else the largest groups and the tightest for the rest: takes every free node of all
// groups but the last, so it leaves at most one hole). The rank order then cuts segments from
// whichever set wins. O(leaf groups log leaf groups) each.
void Placer::consider(Search &s, const std::vector<int> &lgs) {
  uint64_t partial = 0;
  for (int g : lgs) {
    const uint32_t c = lg_count_[size_t(g)];
    if (c < uint32_t(index_->leaf_group_size(g))) partial += c / s.seg;
  }
  if (partial >= s.nseg) try_tier(s, lgs, s.seg, s.nseg, true);
  if (s.seg > 1) try_tier(s, lgs, s.seg, s.nseg, false);
  try_tier(s, lgs, 1, s.nodes, false);
}

// Several pods of one island, chosen best-fit by whole segments (by nodes when segments cannot all
// be whole), the same rule as for leaf groups; region_ = their leaf groups with candidates.
void Placer::cross_pod_region(const Search &s, int island) {
  const TopoIndex &ix = *index_;
  opts_.clear();
  uint64_t seg_total = 0;
  for (int p = 0; p < ix.pod_count(); ++p) {
    if (ix.island_count() > 1 && ix.pod_island(p) != island) continue;
    uint32_t k = 0;
    for (int g : ix.pod_leaf_groups(p)) k += lg_count_[size_t(g)] / s.seg;
    seg_total += k;
    opts_.push_back({k, pod_free_[size_t(p)], p});
  }
  const bool by_segments = seg_total >= s.nseg;
  if (!by_segments)
    for (auto &o : opts_) o.k = o.c;
  uint64_t need = by_segments ? s.nseg : s.nodes;
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
}

// The nodes of the best candidate set into chosen_hosts_ (their count returned): in each chosen
// leaf group, those with the fewest free GPUs (best fit), then by canonical order. Only the chosen
// groups' hosts are visited, in canonical order (groups by pod, then index), so the list reaches
// the rank order already sorted.
// Whether a host is a candidate is as good as random (busy runs), so the visit stores every
// host and advances the count by the test's outcome instead of branching on it.
template <class Usable>
size_t Placer::collect_chosen(uint32_t gpn, const Usable &usable) {
  const TopoIndex &ix = *index_;
  size_t nc = 0;
  int *const chosen = chosen_hosts_.data();
  const auto canonical = [&ix](int a, int b) {
    return std::make_pair(ix.leaf_group_pod(a), a) < std::make_pair(ix.leaf_group_pod(b), b);
  };
  // Regions list their groups pod by pod, so the winner's groups are usually in order already.
  if (!std::is_sorted(best_lgs_.begin(), best_lgs_.end(), canonical))
    std::sort(best_lgs_.begin(), best_lgs_.end(), canonical);
  for (int g : best_lgs_) {
    const std::vector<int> &hosts = ix.leaf_group_hosts_canonical(g);
    const uint32_t t = best_take_[size_t(g)];
    if (t == lg_count_[size_t(g)]) {  // every candidate of the group
      for (int h : hosts) {
        uint32_t free = 0;
        const bool ok = usable(h, free);
        chosen[nc] = h;
        nc += ok & (free >= gpn);
      }
      continue;
    }
    // The t candidates with the fewest free GPUs, ties by canonical rank (a total order, so the
    // set is unique), handed out in canonical order. A group's canonical ranks are consecutive.
    size_t nk = 0;
    for (int h : hosts) {
      uint32_t free = 0;
      const bool ok = usable(h, free);
      keys_[nk] = uint64_t(free) << 32 | ix.canonical_rank(h);
      nk += ok & (free >= gpn);
    }
    std::nth_element(keys_.begin(), keys_.begin() + std::ptrdiff_t(t), keys_.begin() + std::ptrdiff_t(nk));
    std::sort(keys_.begin(), keys_.begin() + std::ptrdiff_t(t),
              [](uint64_t a, uint64_t b) { return uint32_t(a) < uint32_t(b); });
    const uint32_t first = ix.canonical_rank(hosts.front());
    for (uint32_t k = 0; k < t; ++k) chosen[nc++] = hosts[uint32_t(keys_[k]) - first];
  }
  return nc;
}

template <class Usable>
PlaceStatus Placer::run(const Job &job, const JobGeometry &geo, uint32_t total, PlaceMode mode, PlaceResult &out,
                        const Usable &usable) {
  const TopoIndex &ix = *index_;
  const uint32_t N = job.nodes;
  out.candidates = total;
  if (total < N) return out.status = PlaceStatus::NoNodes;
  for (int p = 0; p < ix.pod_count(); ++p) {
    uint32_t c = 0;
    for (int g : ix.pod_leaf_groups(p)) c += lg_count_[size_t(g)];
    pod_free_[size_t(p)] = c;
  }

  const uint32_t pmax = uint32_t(std::max(1, ix.max_pod_size()));
  const uint32_t lmax = uint32_t(std::max(1, ix.max_leaf_group_size()));
  // The choice among placements: placement_rank (placement.hpp says the order and why).
  Search s;
  s.seg = geo.segment_nodes;
  s.nseg = geo.segments();
  s.nodes = N;
  s.ideal_pods = (N + pmax - 1) / pmax;
  s.ideal_lgs = (N + lmax - 1) / lmax;
  s.strict = mode == PlaceMode::Strict;
  // Good enough to stop looking at further (larger) pods.
  auto settled = [&s] { return s.have_best && s.best_q.ideal(); };

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
    consider(s, region_);
    if (settled()) break;
  }
  // Several pods, then leaf groups across them. Only pods of one part of the fabric (TopoIndex
  // islands: no path joins two parts): the part with the fewest candidates that still holds the
  // job (best fit, as pods; -1 when none does: no block).
  const int island = pick_island(N);
  if (ix.pod_count() > 1 && !settled() && island >= 0) {
    cross_pod_region(s, island);
    consider(s, region_);
  }
  if (!s.have_best) return out.status = PlaceStatus::NoBlock;  // no part of the fabric holds the job

  const size_t nc = collect_chosen(geo.gpus_per_node, usable);
  orderer_.order_placed(chosen_hosts_.data(), nc, job.layout, best_pieces_, best_packing_, out.nodes);
  out.quality = s.best_q;
  if (s.best_q.ideal()) return out.status = PlaceStatus::Ideal;
  return out.status = mode == PlaceMode::Strict ? PlaceStatus::NoBlock : PlaceStatus::Fallback;
}

DomainUnitRank domain_unit_fit_rank(const DomainUnit &u) { return {u.avail, !u.domain, u.first}; }

DomainUnitTakeRank domain_unit_take_rank(const DomainUnit &u) { return {-int64_t(u.avail), !u.domain, u.first}; }

// One unit's candidates (hosts usable with the job's GPUs free; for a leaf group, only its hosts in
// no domain) appended to unit_hosts_, and the unit to units_ when it has any. Returns their count.
template <class Usable>
uint32_t Placer::add_unit(const std::vector<int> &hosts, bool domain, uint32_t gpn, uint32_t k, const Usable &usable) {
  const TopoIndex &ix = *index_;
  Unit u;
  u.begin = uint32_t(unit_hosts_.size());
  u.domain = domain;
  for (int h : hosts) {
    if (!domain && ix.host_domain(h) >= 0) continue;
    uint32_t free = 0;
    if (usable(h, free) && free >= gpn) unit_hosts_.push_back(h);
  }
  u.count = uint32_t(unit_hosts_.size()) - u.begin;
  u.avail = u.count / k * k;  // whole TP groups only
  if (u.count == 0) return 0;
  u.first = ix.canonical_rank(unit_hosts_[u.begin]);
  u.pod = ix.host_pod(unit_hosts_[u.begin]);
  u.lg = ix.host_leaf_group(unit_hosts_[u.begin]);
  units_.push_back(u);
  return u.count;
}

// The units of a job whose TP groups are k nodes: every domain, and, when a TP group fits a node
// (k == 1: it needs no NVLink between nodes), each leaf group's hosts in no domain. Returns the
// candidates; cap_max: the largest domain's capacity in whole TP groups, free or not, which the
// ideal is measured against.
template <class Usable>
uint32_t Placer::collect_units(uint32_t gpn, uint32_t k, const Usable &usable, uint32_t &cap_max) {
  const TopoIndex &ix = *index_;
  units_.clear();
  unit_hosts_.clear();
  uint32_t total = 0;
  cap_max = 0;
  for (int d = 0; d < ix.domain_count(); ++d) {
    total += add_unit(ix.domain_hosts(d), true, gpn, k, usable);
    cap_max = std::max(cap_max, uint32_t(ix.domain_hosts(d).size()) / k * k);
  }
  if (k == 1)
    for (int g = 0; g < ix.leaf_group_count(); ++g)
      total += add_unit(ix.leaf_group_hosts_canonical(g), false, gpn, k, usable);
  return total;
}

// The unit for a job that fits one, by domain_unit_fit_rank (the tightest); -1 when none holds n.
int Placer::tightest_unit(uint32_t n) const {
  int one = -1;
  for (size_t i = 0; i < units_.size(); ++i)
    if (units_[i].avail >= n &&
        (one < 0 || domain_unit_fit_rank(units_[i]) < domain_unit_fit_rank(units_[size_t(one)])))
      one = int(i);
  return one;
}

// Where a job that no unit holds may spread, so that it stays under few leaves and pods: the
// smallest pod whose units hold it (region), else, on a fabric in several parts (TopoIndex
// islands: no path joins two), the part with the fewest free places that holds it (part; a unit
// counts in its first host's part). -1 for no restriction; false when no part holds the job.
bool Placer::spread_region(uint32_t n, int &region, int &part) {
  const TopoIndex &ix = *index_;
  region = part = -1;
  uint32_t region_avail = UINT32_MAX;
  pod_free_.assign(size_t(ix.pod_count()), 0);
  for (const Unit &u : units_) pod_free_[size_t(u.pod)] += u.avail;
  for (int p = 0; p < ix.pod_count(); ++p)
    if (pod_free_[size_t(p)] >= n && pod_free_[size_t(p)] < region_avail)
      region = p, region_avail = pod_free_[size_t(p)];
  if (region >= 0 || ix.island_count() <= 1) return true;
  island_free_.assign(size_t(ix.island_count()), 0);
  for (const Unit &u : units_) island_free_[size_t(ix.host_island(unit_hosts_[u.begin]))] += u.avail;
  for (int i = 0; i < ix.island_count(); ++i)
    if (island_free_[size_t(i)] >= n && (part < 0 || island_free_[size_t(i)] < island_free_[size_t(part)])) part = i;
  return part >= 0;
}

// Of items sorted largest first (avail), how many to take of each (take, same order) for n: each
// taken whole until the tightest remaining one holds the rest (the earliest of its size), so that
// few items are touched and the last leaves the least behind. Takes less than n only when the
// items together hold less.
static void take_largest_first(const std::vector<uint32_t> &avail, uint32_t n, std::vector<uint32_t> &take) {
  take.assign(avail.size(), 0);
  uint32_t left = n;
  size_t next = 0;  // avail[next..] not taken yet, largest first
  while (left > 0 && next < avail.size()) {
    size_t fit = SIZE_MAX;  // the smallest remaining item that holds the rest, the earliest of its size
    for (size_t i = next; i < avail.size() && avail[i] >= left; ++i)
      if (fit == SIZE_MAX || avail[i] < avail[fit]) fit = i;
    if (fit != SIZE_MAX) {
      take[fit] = left;
      left = 0;
    } else {
      take[next] = avail[next];
      left -= avail[next++];
    }
  }
}

// A job that no unit holds, inside the part spread_region gives, first by leaf group and then by
// unit: traffic between units under one leaf switch stays on it, while traffic between leaf groups
// crosses their uplinks (which static routing, OpenSM's, gives each destination one of, so
// scattered parts of jobs collide there). So the leaf groups' free places (their units' sum) are
// taken as units are: the tightest group that holds the job, else the largest groups whole until
// the tightest remaining one holds the rest; inside each group its units in the order of
// domain_unit_take_rank (largest first), the same way. A unit counts in its first host's leaf
// group. False when no part of the fabric holds the job (nothing taken).
bool Placer::spread_units(uint32_t n) {
  const TopoIndex &ix = *index_;
  int region = -1, part = -1;
  if (!spread_region(n, region, part)) return false;
  lg_avail_.assign(size_t(ix.leaf_group_count()), 0);
  unit_order_.clear();
  for (size_t i = 0; i < units_.size(); ++i)
    if (units_[i].avail && (region < 0 || units_[i].pod == region) &&
        (part < 0 || ix.host_island(unit_hosts_[units_[i].begin]) == part)) {
      unit_order_.push_back(int(i));
      lg_avail_[size_t(units_[i].lg)] += units_[i].avail;
    }
  // Leaf groups: largest first, then by index (the same answer for the same state).
  lg_order_.clear();
  for (int g = 0; g < ix.leaf_group_count(); ++g)
    if (lg_avail_[size_t(g)]) lg_order_.push_back(g);
  std::sort(lg_order_.begin(), lg_order_.end(), [this](int a, int b) {
    return lg_avail_[size_t(a)] != lg_avail_[size_t(b)] ? lg_avail_[size_t(a)] > lg_avail_[size_t(b)] : a < b;
  });
  avail_tmp_.clear();
  for (int g : lg_order_) avail_tmp_.push_back(lg_avail_[size_t(g)]);
  take_largest_first(avail_tmp_, n, take_tmp_);
  for (size_t j = 0; j < lg_order_.size(); ++j) lg_avail_[size_t(lg_order_[j])] = take_tmp_[j];  // now: to take
  // Units: grouped by leaf group, each group's units in domain_unit_take_rank order.
  std::sort(unit_order_.begin(), unit_order_.end(), [this](int a, int b) {
    const Unit &ua = units_[size_t(a)], &ub = units_[size_t(b)];
    if (ua.lg != ub.lg) return ua.lg < ub.lg;
    return domain_unit_take_rank(ua) < domain_unit_take_rank(ub);
  });
  for (size_t i = 0; i < unit_order_.size();) {
    const int g = units_[size_t(unit_order_[i])].lg;
    size_t e = i;
    avail_tmp_.clear();
    for (; e < unit_order_.size() && units_[size_t(unit_order_[e])].lg == g; ++e)
      avail_tmp_.push_back(units_[size_t(unit_order_[e])].avail);
    if (lg_avail_[size_t(g)]) {
      take_largest_first(avail_tmp_, lg_avail_[size_t(g)], take_tmp_);
      for (size_t j = i; j < e; ++j) units_[size_t(unit_order_[j])].take = take_tmp_[j - i];
    }
    i = e;
  }
  return true;
}

// The nodes taken: each unit's first `take` candidates in canonical order, then in rank order into
// nodes (RankOrderer groups them by domain, so a TP group stays in one). Clears the takes for the
// next call; returns the units used.
uint32_t Placer::take_unit_nodes(const Layout &layout, std::vector<int> &nodes) {
  dom_chosen_.clear();
  uint32_t units_used = 0;
  for (const Unit &u : units_) {
    if (!u.take) continue;
    ++units_used;
    dom_chosen_.insert(dom_chosen_.end(), unit_hosts_.begin() + u.begin, unit_hosts_.begin() + u.begin + u.take);
  }
  for (Unit &u : units_) u.take = 0;
  orderer_.order(dom_chosen_, layout, nodes);
  return units_used;
}

// The quality of the N nodes (in rank order) as the engine measures its own placements, so that both
// paths report alike: leaf groups and pods touched, wholly free groups broken, holes, and the
// segments' spans over leaf groups.
void Placer::domain_quality(uint32_t N, const JobGeometry &geo, const std::vector<int> &nodes, PlaceQuality &q) {
  const TopoIndex &ix = *index_;
  const uint32_t lmax = uint32_t(std::max(1, ix.max_leaf_group_size()));
  const uint32_t pmax = uint32_t(std::max(1, ix.max_pod_size()));
  q.ideal_leaf_groups = (N + lmax - 1) / lmax;
  q.ideal_pods = (N + pmax - 1) / pmax;
  lg_take_.assign(size_t(ix.leaf_group_count()), 0);
  std::vector<uint8_t> &pod_seen = pod_seen_;  // scratch kept between calls, as the engine's others
  pod_seen.assign(size_t(ix.pod_count()), 0);
  for (int h : nodes) {
    const int g = ix.host_leaf_group(h);
    if (lg_take_[size_t(g)]++ == 0) {
      ++q.leaf_groups;
      if (lg_take_[size_t(g)] <= lg_count_[size_t(g)] && lg_count_[size_t(g)] == uint32_t(ix.leaf_group_size(g)))
        ++q.fresh_groups;
    }
    if (!pod_seen[size_t(ix.host_pod(h))]) pod_seen[size_t(ix.host_pod(h))] = 1, ++q.pods;
  }
  for (int g = 0; g < ix.leaf_group_count(); ++g)
    if (lg_take_[size_t(g)] && lg_take_[size_t(g)] < lg_count_[size_t(g)]) ++q.holes;
  const uint32_t seg = geo.segment_nodes, seg_ideal = (seg + lmax - 1) / lmax;
  q.segments = geo.segments();
  std::fill(lg_take_.begin(), lg_take_.end(), 0);  // now: the last segment (+1) seen in each group
  for (uint32_t s = 0; s < q.segments; ++s) {
    uint32_t span = 0;
    for (uint32_t i = s * seg; i < (s + 1) * seg; ++i) {
      uint32_t &last = lg_take_[size_t(ix.host_leaf_group(nodes[i]))];
      span += last != s + 1;
      last = s + 1;
    }
    if (span > seg_ideal) q.segment_excess += span - seg_ideal, ++q.split_segments;
  }
}

// The steps: the units and their candidates, the choice of units (one, else several), the nodes
// taken from them in rank order, their quality. Ideal: no more units than the largest domain's
// capacity needs and no more pods than the ideal.
template <class Usable>
PlaceStatus Placer::run_domains(const Job &job, const JobGeometry &geo, PlaceMode mode, PlaceResult &out,
                                const Usable &usable) {
  const uint32_t N = job.nodes, G = geo.gpus_per_node;
  uint32_t cap_max = 0;
  out.candidates = collect_units(G, tp_group_nodes(job.layout, G), usable, cap_max);
  uint32_t avail = 0;
  for (const Unit &u : units_) avail += u.avail;
  if (avail < N) return out.status = PlaceStatus::NoNodes;
  const int one = tightest_unit(N);
  if (one >= 0)
    units_[size_t(one)].take = N;
  else if (!spread_units(N))
    return out.status = PlaceStatus::NoBlock;
  const uint32_t units_used = take_unit_nodes(job.layout, out.nodes);
  domain_quality(N, geo, out.nodes, out.quality);
  const uint32_t ideal_units = cap_max ? (N + cap_max - 1) / cap_max : 1;
  if (units_used <= ideal_units && out.quality.pods <= out.quality.ideal_pods) return out.status = PlaceStatus::Ideal;
  return out.status = mode == PlaceMode::Strict ? PlaceStatus::NoBlock : PlaceStatus::Fallback;
}

}  // namespace topoaware
