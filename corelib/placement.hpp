// SPDX-License-Identifier: GPL-2.0-or-later
// Placement engine: given the usable nodes now (as Slurm's bitmap over its node table, or as
// topology host indices), free GPUs per node and a job (nodes, GPUs per node, layout), choose the
// job's nodes and return them in rank order (rank_order.hpp), or say that no good block exists now
// together with the best fallback.
//
// Goals, in order (docs/design.md "Placement model"):
//  1. TP inside nodes: only nodes with at least the job's GPUs per node free are candidates, and a
//     layout whose TP group does not fit a node is refused (LayoutError).
//  2. Each segment (DP ring under Megatron's order, PP chain under tp-pp-dp; rank_order.hpp) on
//     its ideal number of leaf groups, ceil(segment nodes / largest leaf group).
//  3. The whole job on its ideal number of pods, ceil(job nodes / largest pod).
//  4. Fragmentation-aware best fit (buddy-style: leave the largest free blocks intact). Per pod
//     (smallest sufficient pod first) three candidate sets are built: whole segments from partly
//     used leaf groups only, whole segments from all groups, whole nodes by Slurm-style best fit
//     (tightest group holding the job, else largest groups first and the tightest for the rest).
//     They are ranked lexicographically by: pods above ideal; leaf groups above
//     ceil(job nodes / leaf group) (the whole job compact: every PP chain in one group when the
//     job fits one); holes, i.e. leaf groups touched but left partly free; segments above their
//     ideal (goal 2); wholly free groups broken; groups touched. Strict mode puts "ideal on goals
//     2 and 3" first. Holes rank above segment splits in prefer mode because, over a trace, a
//     hole ties a leaf group to two jobs' lifetimes and it rarely becomes whole again: with
//     segment splits first (the earlier rule) the free pool fragmented and the ideal-span rate
//     fell below Slurm's (docs/design.md, "Placement model"). Inside a group, nodes with the fewest free GPUs first.
// Rail-optimized fabrics: a leaf group (all rails of a scalable unit) is one unit; its leaves
// are never counted apart.
//
// How this differs from Slurm 22.05's _eval_nodes_topo (cons_tres/job_test.c), which picks the
// lowest switch with enough nodes (best fit by node count), then takes leaves best-fit: the leaf
// whose free nodes cover the remainder most tightly, else the one with the most free nodes, taking
// all nodes it can from each leaf. That node-level best fit is one of our three candidates, and
// it wins whenever the segment-aware ones would touch more leaf groups or leave more holes:
//  - granularity: when the counts are equal we keep segments (DP rings / PP chains) whole, so
//    e.g. 8 nodes of pp=2 x dp=4 on leaves with 4, 4 and 3 free take 4 + 4; but on 5, 5 and 3
//    free prefer mode takes Slurm's 5 + 3 (no hole left, one ring split) and strict mode 4 + 4
//    (an ideal block first);
//  - the whole job: leaf groups touched is ranked before segments, so a job that fits one group
//    goes to one group (its PP chains too), which Slurm's tightest-leaf rule also does;
//  - ties: fewer wholly free groups broken (partly used groups first), where Slurm takes the
//    first leaf in table order;
//  - the order: Slurm hands nodes to ranks in node-table order; we return the rank order that the
//    scoring used, which the SPANK plugin recomputes from the node set;
//  - the unit: a rail group's leaves are one unit (Slurm would see one leaf switch per rail);
//  - per-node GPUs: among a leaf group's candidates we prefer nodes with fewer free GPUs (best
//    fit for shared nodes); Slurm's order there is node weight, then index.
// Degraded leaves (a leaf group whose uplinks lost bandwidth: fewer cables, narrower or slower
// ones; TopoIndex::leaf_group_uplink_factor): when the choice is otherwise equal, a job that
// spans several leaf groups takes the healthy ones (among groups of equal whole segments and
// free nodes, and as the last criterion of the ranking), and a job that fits one leaf group takes
// a degraded one, whose uplinks it never uses, keeping the healthy groups for jobs that cross.
// Every criterion above comes first, and a fabric without degraded leaves places exactly as
// before.
// NVLink domains (a topology with multi-node domains, GB200/GB300 NVL72; TopoIndex::has_domains):
// the domain is the innermost level. Units are the domains (and, for a job whose TP group fits a
// node, the hosts of a leaf group that are in no domain); a unit offers its candidates rounded
// down to whole TP groups (tp / GPUs per node nodes each). A job that fits one unit takes the
// tightest such unit (domains first on a tie, then canonical order: domain_unit_fit_rank); a
// larger job, inside the smallest pod that holds it if one does, first picks leaf groups (their
// units' free places summed) the same way, the tightest that holds it, else the largest whole and
// the tightest for the remainder, and inside each its units largest first (domain_unit_take_rank)
// and the tightest for the remainder: whole domains under few leaves (traffic between leaf groups
// crosses uplinks, where static routes collide) and pods. Every TP group then lies in one
// domain; the rank order (RankOrderer, grouped by domain) keeps it there. Ideal: no more
// domains than ceil(job nodes / largest domain's whole-group capacity) and no more pods than the
// ideal.
// A fabric without multi-node domains never takes this path: it decides as described above.
// Cost per call: one pass over the usable nodes to count candidates per leaf group, the choice over
// leaf groups (O(leaf groups * log(leaf groups)) per region), then only the chosen groups' hosts
// are visited, in canonical order (so the rank order needs no sort); no allocation once the
// scratch buffers of the Placer have grown to the cluster's size.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "layout.hpp"
#include "rank_order.hpp"

namespace topoaware {

enum class PlaceMode : uint8_t { Strict, Prefer };

struct Job {
  uint32_t nodes = 0;
  uint32_t gpus_per_node = 0;
  Layout layout;
};

enum class PlaceStatus : uint8_t {
  Ideal,      // every segment and the job on their ideal spans
  Fallback,   // prefer mode: the best available, not ideal (nodes filled)
  NoBlock,    // strict mode: no ideal block now; nodes holds the best fallback. Either mode: no
              // part of the fabric that no path splits holds the job (TopoIndex islands); nodes empty
  NoNodes,    // fewer usable nodes with enough free GPUs than the job needs; nodes empty
};
const char *place_status_name(PlaceStatus s);

// Span of a placement, as the rank order lays it out.
struct PlaceQuality {
  uint32_t segments = 0;
  uint32_t segment_excess = 0;   // sum over segments of (leaf groups spanned - ideal)
  uint32_t split_segments = 0;   // segments above their ideal
  uint32_t leaf_groups = 0;      // leaf groups the job touches
  uint32_t ideal_leaf_groups = 0;  // ceil(job nodes / largest leaf group)
  uint32_t fresh_groups = 0;     // leaf groups touched that were wholly free (broken by this job)
  uint32_t holes = 0;            // leaf groups touched and left with free nodes (partly taken)
  uint32_t pods = 0, ideal_pods = 0;
  // Sum of (uplink factor - 1) over the leaf groups touched when there are several (0 on a
  // healthy fabric and for a job inside one leaf group): the last criterion of the choice.
  double degraded_uplinks = 0;
  bool ideal() const { return segment_excess == 0 && pods <= ideal_pods; }
};

// The ranking of placements, lexicographic (smaller is better): (strict mode: not ideal), pods
// above ideal, leaf groups above ceil(N / largest leaf group), holes (leaf groups touched but
// left partly free), split DP rings / PP chains, whole groups broken, leaf groups, degraded
// uplinks. Holes come before split rings: over a trace a hole left in a leaf group ties that
// group to two jobs' lifetimes, so it rarely becomes whole again and later jobs split (in the
// trace simulator at 2,048 nodes and 90% load, ranking split rings first gave 39-49% ideal spans
// and 1.9x Slurm tree's excess hop-bytes; holes first 50.6% and 0.91x). Strict mode asks for an
// ideal block first, so it ranks ideal placements before everything else.
using PlacementRank = std::tuple<bool, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, double>;
PlacementRank placement_rank(const PlaceQuality &q, bool strict);
// The (pods, leaf groups, holes) part of placement_rank, known before the rings are cut: a
// candidate whose prefix already loses to the best so far is not packed.
std::tuple<uint32_t, uint32_t, uint32_t> placement_rank_prefix(const PlaceQuality &q);

// A unit of the placement on NVLink domains ("NVLink domains" above): a domain, or the hosts of a
// leaf group that are in no domain, as the choice among units sees it.
struct DomainUnit {
  uint32_t avail = 0;   // candidates, rounded down to whole TP groups
  bool domain = false;  // an NVLink domain (else hosts in none)
  uint32_t first = 0;   // canonical rank of its first candidate
};
// The unit a job that fits one takes is the smallest by this key: the tightest that holds it (the
// larger units stay whole for larger jobs), a domain before hosts in none on a tie (its nodes
// share NVLink), then canonical order (the same answer for the same state).
using DomainUnitRank = std::tuple<uint32_t, bool, uint32_t>;
DomainUnitRank domain_unit_fit_rank(const DomainUnit &u);
// A job that no unit holds takes units in the order of this key (smallest first): the largest
// first (fewest units touched), domains first, then canonical order.
using DomainUnitTakeRank = std::tuple<int64_t, bool, uint32_t>;
DomainUnitTakeRank domain_unit_take_rank(const DomainUnit &u);

struct PlaceResult {
  PlaceStatus status = PlaceStatus::NoNodes;
  std::vector<int> nodes;   // topology host indices in rank order
  std::vector<int> slurm;   // the same nodes as Slurm node-table indices (place_slurm only)
  PlaceQuality quality;
  uint32_t candidates = 0;  // usable nodes with enough free GPUs
};

// Slurm node-table index <-> topology host, built once per (topology, node table) pair.
class NodeMap {
 public:
  NodeMap(const TopoIndex &index, const std::vector<std::string> &slurm_names);
  size_t size() const { return to_host_.size(); }
  int host(size_t slurm_index) const { return to_host_[slurm_index]; }  // -1: not in the topology
  int slurm(int host) const { return to_slurm_[size_t(host)]; }          // -1: not in Slurm
  int leaf_group(size_t slurm_index) const { return to_lg_[slurm_index]; }  // -1: not in the topology
  const std::vector<std::string> &missing() const { return missing_; }   // Slurm names not in topology
  size_t known() const { return size() - missing_.size(); }              // Slurm names in the topology

 private:
  std::vector<int> to_host_, to_slurm_, to_lg_;
  std::vector<std::string> missing_;
};

// Why a topology cannot serve Slurm's node table at all, "" if it can. A topology that holds none
// of Slurm's nodes (another cluster's file, or host names written otherwise than Slurm's NodeName:
// FQDNs against short names) would offer every layout job an empty set of nodes, so it counts as
// unusable, like a file that does not parse: the reason says so, with how many of Slurm's nodes it
// holds (0 of N) and a few names of each side. A node table without nodes (only defunct slots)
// asks nothing of the topology: "".
std::string node_map_unusable(const TopoIndex &index, const NodeMap &map);

// Not thread-safe (scratch buffers); one Placer per thread. The TopoIndex must outlive it.
class Placer {
 public:
  explicit Placer(const TopoIndex &index);

  // hosts[i] (topology index, each at most once) is usable with free_gpus[i] GPUs free.
  // Throws LayoutError if the job is inconsistent (world != nodes * gpus_per_node, TP split).
  PlaceStatus place(const int *hosts, const uint32_t *free_gpus, size_t n, const Job &job, PlaceMode mode,
                    PlaceResult &out);
  // Slurm's view: bit i of words (word i/64, bit i%64, as in Slurm's bitstr_t after its two header
  // words) marks node-table index i usable; free_gpus[i] per node-table index. Nodes missing from
  // the topology are never chosen. Fills out.slurm too.
  PlaceStatus place_slurm(const NodeMap &map, const uint64_t *words, size_t nbits, const uint16_t *free_gpus,
                          const Job &job, PlaceMode mode, PlaceResult &out);

  const TopoIndex &index() const { return *index_; }

 private:
  // Validates the job, clears out and the per-leaf-group counts; throws LayoutError.
  JobGeometry begin_call(const Job &job, PlaceResult &out);
  // The decision once lg_count_ holds the candidates (usable nodes with enough free GPUs) per leaf
  // group; usable(host, &free) says whether a host is usable and its free GPUs.
  template <class Usable>
  PlaceStatus run(const Job &job, const JobGeometry &geo, uint32_t total, PlaceMode mode, PlaceResult &out,
                  const Usable &usable);
  // The decision on a topology with multi-node NVLink domains (TopoIndex::has_domains), after the
  // candidates were counted per leaf group: see "NVLink domains" above.
  template <class Usable>
  PlaceStatus run_domains(const Job &job, const JobGeometry &geo, PlaceMode mode, PlaceResult &out,
                          const Usable &usable);
  // run_domains' steps, in order (placement.cpp says what each decides).
  template <class Usable>
  uint32_t add_unit(const std::vector<int> &hosts, bool domain, uint32_t gpn, uint32_t k, const Usable &usable);
  template <class Usable>
  uint32_t collect_units(uint32_t gpn, uint32_t k, const Usable &usable, uint32_t &cap_max);
  int tightest_unit(uint32_t n) const;
  bool spread_region(uint32_t n, int &region, int &part);
  bool spread_units(uint32_t n);
  uint32_t take_unit_nodes(const Layout &layout, std::vector<int> &nodes);
  void domain_quality(uint32_t n, const JobGeometry &geo, const std::vector<int> &nodes, PlaceQuality &q);
  // run's search for the best candidate set: the job's shape, its ideal spans, the best so far
  // (its node counts in best_take_ over best_lgs_, its segments in best_pieces_/best_packing_).
  struct Search {
    uint32_t seg = 0, nseg = 0, nodes = 0;  // segment nodes, segments, job nodes
    uint32_t ideal_pods = 0, ideal_lgs = 0;
    bool strict = false;
    bool have_best = false;
    PlaceQuality best_q;
  };
  void try_tier(Search &s, const std::vector<int> &lgs, uint32_t unit, uint32_t units, bool partial_only);
  void consider(Search &s, const std::vector<int> &lgs);
  void cross_pod_region(const Search &s, int island);
  template <class Usable>
  size_t collect_chosen(uint32_t gpn, const Usable &usable);
  bool greedy(const std::vector<int> &lgs, uint32_t seg, uint32_t nseg, bool partial_only, std::vector<uint32_t> &take);
  void evaluate(const std::vector<uint32_t> &take, const std::vector<int> &lgs, uint32_t seg, PlaceQuality &q);
  void sort_opts();
  // The part of the fabric for a job of n nodes across pods (pod_free_ set), or -1; see run.
  int pick_island(uint32_t n);

  const TopoIndex *index_;
  RankOrderer orderer_;
  // per call, sized once: candidates counted by leaf group
  std::vector<uint32_t> lg_count_;
  std::vector<uint32_t> host_free_;  // place(): free GPUs of the hosts given (marked in host_mark_)
  std::vector<uint8_t> host_mark_;
  std::vector<int> marked_;
  std::vector<uint64_t> keys_;  // (free GPUs, canonical rank) of one leaf group's candidates
  std::vector<uint32_t> pod_free_, island_free_;
  std::vector<int> region_, pods_sorted_, chosen_hosts_;
  std::vector<uint32_t> take_, best_take_;
  std::vector<int> best_lgs_;
  struct Opt { uint32_t k, c; int lg; float bad = 1; };  // bad: the leaf group's uplink factor
  std::vector<Opt> opts_;
  std::vector<uint64_t> opt_keys_, opt_tmp_;
  bool packed_opts_ = false;  // opts_ sort as packed integer keys (no degraded leaves)
  unsigned opt_c_bits_ = 1, opt_lg_bits_ = 1;
  std::vector<Piece> pieces_, best_pieces_;
  Packing packing_, best_packing_;
  PackScratch pool_;
  // run_domains: candidates per unit (a domain, or a leaf group's hosts in none), flat, and the
  // units: their candidates are unit_hosts_[begin, begin + count), `take` of them chosen.
  struct Unit : DomainUnit {
    uint32_t begin = 0, count = 0, take = 0;
    int pod = 0, lg = 0;  // its first host's pod and leaf group
  };
  std::vector<Unit> units_;
  std::vector<int> unit_hosts_, unit_order_, dom_chosen_;
  std::vector<uint32_t> lg_take_, lg_avail_, avail_tmp_, take_tmp_;
  std::vector<int> lg_order_;
  std::vector<uint8_t> pod_seen_;
};

}  // namespace topoaware
