// SPDX-License-Identifier: GPL-2.0-or-later
// Rank order: from an allocated node SET, the topology and the layout alone, the order of the
// nodes and the (tp, cp, ep, dp, pp) coordinates of every rank. The SPANK plugin (in every task)
// and the select plugin (to score candidate sets) call the same function, so both sides agree
// without any private channel, whatever order Slurm lists the nodes in.
//
// How nodes are ordered. Ranks are laid out in order over the nodes: node k holds ranks
// k*G .. k*G+G-1 (G = GPUs per node), so the axes that vary fastest after tp live in consecutive
// nodes. The rank order says which group the user wants on the fastest links: with Megatron's
// tp-cp-ep-dp-pp, one DP ring (all tp, cp, dp for one pp stage) is a contiguous block of TP*CP*DP
// ranks; with tp-pp-dp, one PP chain (all tp, cp, pp for one dp index) is a contiguous block of
// TP*CP*PP ranks. We call that block's nodes a "segment" (the smallest run of whole nodes holding
// whole blocks: lcm(block, G) / G nodes). The order packs segments into as few leaf groups as
// possible: whole segments from each leaf group first, then the remainders of a pod combined by
// best fit, then the remainders of all pods. Segments that share a leaf group are adjacent, so the
// next axis (PP neighbours under Megatron's order) mostly stays inside a leaf group or pod. A MoE
// job's (ep > 1) segments split over leaf groups have their parts ordered so that the splits fall
// between expert groups where the parts allow (align_ep_groups): the all-to-all then stays inside
// leaf groups.
//
// Which hosts of a leaf group a segment gets changes nothing inside the leaf group, but a segment
// split over leaf groups enters each part at the part's first host, and the ring edges into it come
// down the leaf's uplink cables: which ones, the subnet manager's forwarding tables decide. Where
// topology.json records them (discover --routes or --lfts), each host has its entry cables, the
// uplink by which traffic to each of its NICs on the leaf enters (TopoIndex::entry_classes), and
// each split part of a job enters at a free host whose ring edges would meet the fewest of the
// job's earlier ones on a cable (down its entry cables into the leaf, and up the cables of the part
// before it in the ring to the switches those come from; with the tables, along the edge's whole
// traced path, which on a 3-level tree also crosses cables above the entry leaf's: all of a
// ring's edges run at once, so two on one cable halve each other for sure), among those at one
// whose cables the job holds whole in
// the leaf group (no other job's flow comes down them), and among those at the one whose first
// NIC's cable is nearest at or after (h + j R) mod K, h a hash of the node set and R a host's NICs
// on the leaf, so that two jobs do not start on the same cable. Given the other jobs' ring edges
// per cable (set_neighbour_edges), a traced candidate's paths are counted against those second,
// after the job's own edges: another job's edge on a cable halves both only while the two jobs
// communicate at once, the job's own edges always do. Without recorded routes nothing is guessed: the
// hosts of each part are handed out in canonical order. Leaf-group membership, hence the cost
// model's view, is the same either way.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "layout.hpp"
#include "topology.hpp"

namespace topoaware {

// Read-only views of a Topology built once per topology load (the per-call work of the engine
// never rebuilds them). Leaf groups and pods get dense indices; hosts without a leaf group get
// a leaf group of their own, leaf groups without a pod share one extra "no pod" pod (a 2-level
// fat tree is one pod).
// Parts ("islands"): the pieces of the fabric that no path joins, i.e. the connected components
// of the switches under their recorded switch-to-switch links (a host joins the switches its ports
// plug into, so the planes of a rail-optimized fabric are one part, and belongs to its leaf's
// part). A dump taken while uplinks were down, two subnets discovered together or a pod cut off
// from the core give several; the ranks of a job across two could not reach each other, so the
// placement keeps every job inside one. A pod never spans two parts: the leaf groups of a pod (the
// "no pod" pod included) in another part than its first leaf group's form extra pods, numbered
// after the others (a fabric in one piece keeps its pods). A topology that records no
// switch-to-switch link at all (one switch, or a hand-built one) is one part: nothing says its
// leaves are apart. Hosts without a leaf switch each form a part of their own.
class TopoIndex {
 public:
  explicit TopoIndex(const Topology &topo);  // keeps a reference: topo must outlive this
  const Topology &topology() const { return *topo_; }

  int host_count() const { return int(host_lg_.size()); }
  int leaf_group_count() const { return int(lg_pod_.size()); }
  int pod_count() const { return int(pod_lgs_.size()); }
  int host_leaf_group(int h) const { return host_lg_[size_t(h)]; }
  int host_pod(int h) const { return lg_pod_[size_t(host_lg_[size_t(h)])]; }
  int host_leaf(int h) const { return host_leaf_[size_t(h)]; }
  int leaf_group_pod(int g) const { return lg_pod_[size_t(g)]; }
  int leaf_group_size(int g) const { return int(lg_hosts_[size_t(g)].size()); }
  const std::vector<int> &leaf_group_hosts(int g) const { return lg_hosts_[size_t(g)]; }
  // The same hosts in canonical order (by canonical_rank; differs from leaf_group_hosts when a
  // group has several leaves, as rail groups do).
  const std::vector<int> &leaf_group_hosts_canonical(int g) const { return lg_canon_hosts_[size_t(g)]; }
  const std::vector<int> &pod_leaf_groups(int p) const { return pod_lgs_[size_t(p)]; }
  int pod_size(int p) const { return pod_size_[size_t(p)]; }
  int max_leaf_group_size() const { return max_lg_size_; }
  // Uplink cables of the leaf group's (rail-0) leaf switch: K of D-mod-K routing at the leaf (1 if none).
  int leaf_group_uplinks(int g) const { return lg_uplinks_[size_t(g)]; }
  // The host's entry class: which of its leaf's uplinks (0..leaf_group_uplinks - 1) traffic to its
  // rail-0 NIC comes down, from the recorded routes; 0 for every host when there are none.
  uint32_t host_uplink_mod(int h) const { return host_mod_[size_t(h)]; }
  // Entry classes come from recorded routes; false: no routes, the rank order keeps canonical order.
  bool has_entry_classes() const { return entry_classes_; }
  // The uplinks traffic to each of the host's NICs on its (rail-0) leaf comes down, as read from
  // the recorded routes (entry_classes()): host_uplink_mod first, then one class per other NIC on
  // the leaf whose entry port the tables give, in port order (a class twice if two NICs share a
  // cable). Empty without routes.
  struct Classes {
    const uint16_t *first, *last;
    const uint16_t *begin() const { return first; }
    const uint16_t *end() const { return last; }
    size_t size() const { return size_t(last - first); }
  };
  Classes host_entry_classes(int h) const {
    return {host_entry_.data() + host_entry_begin_[size_t(h)], host_entry_.data() + host_entry_begin_[size_t(h) + 1]};
  }
  // A host's NICs on its (rail-0) leaf, the most common count over the group's hosts (1 when a host
  // has one NIC per leaf, as on rail-optimized fabrics): how many classes on the rank order's
  // search for the next split part's entry starts (RankOrderer::hand_out; which host it takes is
  // decided by the classes each candidate really occupies, host_entry_classes).
  uint32_t leaf_group_entry_stride(int g) const { return lg_entry_stride_[size_t(g)]; }
  // NIC entries of the leaf group's hosts per entry class (every NIC on the leaf, as
  // host_entry_classes lists them): leaf_group_uplinks(g) counts.
  const uint32_t *leaf_group_class_sizes(int g) const { return class_size_.data() + lg_class_begin_[size_t(g)]; }
  // The switch (index into the topology's switches) each entry class's cable comes from, per
  // class of the leaf group (leaf_group_uplinks(g) of them), kNoSwitch where routes were not read:
  // on a fat tree traffic to a host enters its leaf from that upper switch, so from another leaf
  // of the same upper switches it leaves by its cable to it.
  static constexpr uint32_t kNoSwitch = UINT32_MAX;
  const uint32_t *leaf_group_class_switches(int g) const { return class_switch_.data() + lg_class_begin_[size_t(g)]; }
  // Paths through the recorded forwarding tables (RankOrderer::hand_out traces the ring edges into
  // split parts): has_paths() when topology.json records tables. walk_path visits, in order, the
  // switch-to-switch cables (dense ids below cable_count(); a cable is one switch's egress port, so
  // the two directions of a wire are two ids) that packets from NIC `nic` of host `src` to NIC
  // `nic` of host `dst` (NCCL rings pair NICs of the same rail) cross, and returns true when the
  // tables lead them to that NIC's switch within kMaxPathHops switches; false (after visiting some cables
  // perhaps) when they do not say: no table, no route, a port that leads nowhere, another subnet,
  // a loop. Work: one table look-up per switch of the path.
  static constexpr int kMaxPathHops = 16;
  bool has_paths() const { return !sw_port_begin_.empty(); }
  uint32_t cable_count() const { return sw_port_begin_.empty() ? 0 : sw_port_begin_.back(); }
  uint32_t host_nic_count(int h) const {
    return nic_begin_.empty() ? 0 : nic_begin_[size_t(h) + 1] - nic_begin_[size_t(h)];
  }
  template <class Visit>
  bool walk_path(int src, int dst, uint32_t nic, Visit &&visit) const {
    if (nic >= host_nic_count(src) || nic >= host_nic_count(dst)) return false;
    const uint32_t a = nic_begin_[size_t(src)] + nic, b = nic_begin_[size_t(dst)] + nic;
    int sw = nic_sw_[a];
    const uint16_t lid = nic_lid_[b];
    if (sw < 0 || lid == 0 || sw_subnet_[size_t(sw)] != nic_subnet_[b]) return false;
    const int last = nic_sw_[b];
    for (int hop = 0; hop < kMaxPathHops; ++hop) {
      // At the destination's own switch the rest is its cable to the NIC, which no other edge of
      // the job takes (a table's entry for its own host is not read: one cache miss less).
      if (sw == last) return true;
      const std::vector<uint8_t> *lft = sw_lft_[size_t(sw)];
      if (!lft || lid >= lft->size()) return false;
      const uint32_t out = (*lft)[lid], begin = sw_port_begin_[size_t(sw)];
      if (out == 0 || begin + out >= sw_port_begin_[size_t(sw) + 1]) return false;  // kNoRoute is past every port
      const uint32_t cable = begin + out;
      const int next = cable_next_[cable];
      if (next < 0) return false;
      visit(cable);
      sw = next;
    }
    return false;
  }
  // How much thinner the leaf group's uplinks are than the fabric's nominal: nominal / real uplink
  // bandwidth of its worst leaf (rail), >= 1; 1 for a healthy group (how: TopoIndex::uplink_factors).
  double leaf_group_uplink_factor(int g) const { return lg_up_factor_[size_t(g)]; }
  bool degraded() const { return degraded_; }  // some leaf group's factor is above 1
  int max_pod_size() const { return max_pod_size_; }
  // Position of a host in the canonical order (pod, leaf group, leaf, host name order).
  uint32_t canonical_rank(int h) const { return canon_[size_t(h)]; }
  int find_host(const std::string &name) const;  // -1 if not in the topology
  // Parts, numbered by their first host (name order); see the class comment.
  int island_count() const { return int(island_hosts_.size()); }
  int host_island(int h) const { return host_island_[size_t(h)]; }
  int island_size(int i) const { return island_hosts_[size_t(i)]; }  // hosts of the part
  // The part of a pod's (a leaf group's) hosts; -1 for one without hosts.
  int pod_island(int p) const { return pod_island_[size_t(p)]; }
  int leaf_group_island(int g) const { return lg_island_[size_t(g)]; }

  // Multi-node NVLink domains (NVL72): the topology's domains of at least two hosts, densely
  // numbered in the order of their first host's canonical rank; hosts in none: -1. Without any,
  // every decision is the one of a fabric without domains.
  bool has_domains() const { return !domain_hosts_.empty(); }
  int domain_count() const { return int(domain_hosts_.size()); }
  int host_domain(int h) const { return host_domain_[size_t(h)]; }
  // The domain's hosts in canonical order.
  const std::vector<int> &domain_hosts(int d) const { return domain_hosts_[size_t(d)]; }
  int max_domain_size() const { return max_domain_size_; }

 private:
  const Topology *topo_;
  void leaf_groups();
  void pods();
  int switch_of(uint64_t guid) const;  // -1 if absent (switch_by_guid_, while building)
  void leaf_uplinks();
  void uplink_factors(const std::vector<double> &up_gbps);
  void entry_classes();
  void route_paths();
  void islands();
  void canonical_order();
  void nvlink_domains();

  std::vector<int> host_island_, island_hosts_, lg_island_, pod_island_;

  std::vector<int> host_lg_, host_leaf_, lg_pod_, pod_size_, lg_uplinks_;
  std::vector<double> lg_up_factor_;
  bool degraded_ = false;
  bool entry_classes_ = false;
  std::vector<std::vector<int>> lg_hosts_, lg_canon_hosts_, pod_lgs_;
  std::vector<uint32_t> canon_, host_mod_, lg_class_begin_, class_size_, class_switch_, lg_entry_stride_;
  std::vector<uint32_t> host_entry_begin_;  // host h's entry classes: host_entry_[begin[h] .. begin[h+1])
  std::vector<uint16_t> host_entry_;
  // walk_path's tables (empty without routes): per switch its forwarding table, subnet and first
  // cable id (egress port p of switch s is cable sw_port_begin_[s] + p); per cable the switch it
  // leads to (-1: a host or nothing); per host NIC (nic_begin_[h] + port index) its switch, and
  // its LID and subnet there.
  std::vector<const std::vector<uint8_t> *> sw_lft_;
  std::vector<int> sw_subnet_, cable_next_, nic_sw_, nic_subnet_;
  std::vector<uint32_t> sw_port_begin_, nic_begin_;
  std::vector<uint16_t> nic_lid_;
  std::unordered_map<std::string, int> by_name_;
  std::unordered_map<uint64_t, int> switch_by_guid_;  // while building only: switch GUID -> index
  int max_lg_size_ = 0, max_pod_size_ = 0;
  std::vector<int> host_domain_;
  std::vector<std::vector<int>> domain_hosts_;
  int max_domain_size_ = 0;
};

// The shape a layout takes on `nodes` nodes. Throws LayoutError if the layout does not fill the
// nodes evenly with whole TP groups.
struct JobGeometry {
  uint32_t nodes = 0;
  uint32_t gpus_per_node = 0;
  uint32_t segment_nodes = 0;  // nodes of one segment (see above); divides nodes
  // Nodes of the smallest run of the order that starts at a node boundary, ends at one and holds
  // whole expert-parallel (EP) groups (see ep_unit_nodes below); 1 when every node holds whole
  // groups (ep = 1, or tp*ep GPUs fit a node).
  uint32_t ep_unit_nodes = 1;
  uint32_t segments() const { return nodes / segment_nodes; }
};
JobGeometry job_geometry(const Layout &layout, uint32_t nodes);
// The same where TP groups may span nodes (a topology with multi-node NVLink domains): tp may be a
// multiple of the GPUs per node (its group then spans tp / GPUs-per-node consecutive nodes of the
// order, which the callers keep inside one domain).
JobGeometry job_geometry(const Layout &layout, uint32_t nodes, bool multi_node_tp);

// The EP unit of a layout on nodes of `gpus_per_node` GPUs: an EP group is EP consecutive values
// of q = cp + CP*dp at fixed (tp, pp). Under tp-cp-ep-dp-pp, rank = tp + TP*(q + CP*DP*pp): a
// group is TP*EP consecutive ranks. Under tp-pp-dp, rank = tp + TP*(cp + CP*(pp + PP*dp)): when EP
// divides CP a group is TP*EP consecutive ranks inside one (pp, dp); otherwise it spans dp indices
// and the smallest aligned block of whole groups is L = EP / gcd(EP, CP) PP chains, TP*CP*PP*L
// ranks. Blocks of R such ranks are aligned at multiples of R, so runs of lcm(R, G) / G nodes
// starting at multiples of that from the job's first node never cut a group.
uint32_t ep_unit_nodes(const Layout &layout, uint32_t gpus_per_node);

RankCoord rank_coord(const Layout &layout, uint32_t rank);   // rank < world
uint32_t rank_of(const Layout &layout, const RankCoord &c);   // inverse of rank_coord

// One leaf group's share of a node set, and how segments are cut from such shares.
struct Piece {
  int leaf_group = 0;
  int pod = 0;
  uint32_t count = 0;
};
struct SegmentPart {
  uint32_t piece = 0;  // index into the pieces
  uint32_t count = 0;
};
struct Packing {
  std::vector<SegmentPart> parts;   // segment i is parts[begin[i] .. begin[i+1])
  std::vector<uint32_t> begin;
  uint32_t segments() const { return begin.empty() ? 0 : uint32_t(begin.size() - 1); }
};
// Sorts distinct 64-bit keys ascending (the same result as std::sort): an LSD radix sort over
// the bytes in which the keys differ, linear in their number. The engine's sorts of packed keys
// (a few hundred leaf groups or pieces each, several per decision) were a large part of its time
// for the largest jobs. tmp: scratch.
void sort_keys(std::vector<uint64_t> &keys, std::vector<uint64_t> &tmp);

// Scratch storage of pack_segments (kept by the caller, so that a call allocates nothing once grown).
struct PackScratch {
  std::vector<SegmentPart> carry;
  std::vector<uint64_t> by_size, by_piece, tmp;  // packed keys (form_segments)
  std::vector<SegmentPart> order;                 // align_ep_groups: a segment's new part order
  std::vector<uint32_t> residues;                 // align_ep_groups: distinct residues of a pod's parts
};
// Cuts segments of `seg` nodes from pieces given in canonical order (pod, leaf group); the total
// must be a multiple of seg. Deterministic; reuses `out`'s and `scratch`'s storage.
void pack_segments(const std::vector<Piece> &pieces, uint32_t seg, Packing &out, PackScratch &scratch);

// Keeps a MoE job's expert all-to-all inside leaf groups where the pieces allow: reorders the parts
// of each segment split over leaf groups (pods kept contiguous and in canonical order) so that
// more part boundaries fall at multiples of `unit` nodes from the segment's start, i.e. between EP
// groups (unit = JobGeometry::ep_unit_nodes, which divides seg). A segment's order changes only
// when the new one cuts strictly fewer EP groups; the leaf groups, pods and parts stay the same.
// No-op for unit <= 1 or when unit does not divide seg. Deterministic; O(parts log parts).
void align_ep_groups(const std::vector<Piece> &pieces, uint32_t seg, uint32_t unit, Packing &packing,
                     PackScratch &scratch);

// Orders a node set. Keeps scratch storage between calls (one per thread).
class RankOrderer {
 public:
  explicit RankOrderer(const TopoIndex &index) : index_(&index) {}
  // hosts: topology host indices, any order, no duplicates. Returns the nodes in rank order
  // (node k holds ranks k*G..k*G+G-1). Throws LayoutError on a bad layout, duplicate or unknown
  // hosts.
  void order(const std::vector<int> &hosts, const Layout &layout, std::vector<int> &out);
  // Other jobs' ring edges between split parts, per cable (TopoIndex cable ids), for the traced
  // entry choice: among candidates whose paths meet equally few of the job's own edges, the one
  // whose paths meet the fewest of these wins, and each order() adds the job's own traced edges
  // to them. The caller owns the vector (grown here to cable_count()) and keeps it consistent
  // with the jobs it stands for. nullptr (the default): not counted. `added`, if given, receives
  // each cable an order() counted for the job (once per edge; cleared by the caller), so that the
  // caller can take the job's edges off again when it ends (RingEdgeBook).
  void set_neighbour_edges(std::vector<uint32_t> *edges, std::vector<uint32_t> *added = nullptr) {
    neighbour_edges_ = edges;
    neighbour_added_ = added;
  }
  // The same order for the placer, which has already cut the segments: hosts in canonical order,
  // each once (not checked), pieces and packing as pack_segments gives them for these hosts
  // (taken over: swapped with the orderer's scratch). Saves the check, the pieces and the packing.
  void order_placed(const int *hosts, size_t n, const Layout &layout, std::vector<Piece> &pieces, Packing &packing,
                    std::vector<int> &out);
  // The pieces and packing of the last order() call.
  const std::vector<Piece> &pieces() const { return pieces_; }
  const Packing &packing() const { return packing_; }

 private:
  // On a topology with NVLink domains: the hosts grouped by domain (domains in the order of their
  // first host's canonical rank, hosts in canonical order inside; a host in no domain is its own),
  // so that every TP group of `tp_nodes` consecutive nodes lies in one domain. Throws LayoutError
  // when the node set cannot give that (a domain holding part of a TP group).
  void order_domains(const std::vector<int> &hosts, uint32_t tp_nodes, std::vector<int> &out);
  // The entry hosts of split parts and the hand-out, once pieces_, piece_start_ and packing_ are set.
  void hand_out(const int *sorted, size_t n, uint64_t base, std::vector<int> &out);

  const TopoIndex *index_;
  std::vector<int> sorted_;
  std::vector<Piece> pieces_;
  std::vector<uint32_t> piece_start_;
  std::vector<char> used_;
  std::vector<uint32_t> entry_;
  std::vector<uint32_t> class_count_;  // per entry class: NIC entries of the leaf group minus the job's
  // The job's ring edges so far into split parts, per piece and cable (row stride: the largest K
  // among the pieces): down_load_ by the piece's entry class they come down, up_load_ by the
  // class of the piece's uplink to the upper switch they leave it by.
  std::vector<uint32_t> down_load_, up_load_;
  std::vector<uint32_t> switch_class_;  // per switch: the current predecessor piece's class of its cable to it
  std::vector<uint32_t> busy_;          // per entry class of the current piece: the job's edges on its two cables
  // With recorded tables: the job's ring edges into split parts so far per cable (TopoIndex's
  // cable ids), the cables set since the job began, and a part's candidates by their other keys.
  std::vector<uint32_t> path_load_, touched_, path_, best_path_;
  std::vector<uint32_t> *neighbour_edges_ = nullptr;  // see set_neighbour_edges
  std::vector<uint32_t> *neighbour_added_ = nullptr;
  std::vector<uint64_t> cand_;
  Packing packing_;
  PackScratch pool_;
};

// The cables that RankOrderer::order() with set_neighbour_edges counted for a job whose nodes it
// put in the order `ordered` (node k holds ranks k*G..k*G+G-1): the traced path of every ring edge
// into a part of a segment split over leaf groups, from the leaf group of the part before it in
// the ring (its first host in canonical order, as order() traces it), each NIC's; none for an edge
// of which one NIC's path the tables do not give, and none at all without recorded tables or with
// NVLink domains. As a multiset it equals what order() added (tested), so a scheduler that
// restarts or loads a new topology counts its running jobs again from their orders as placed.
// Throws LayoutError on a bad layout or a host not in the topology. Cost: one hash per node and a
// few table look-ups per NIC of each split part.
void ring_entry_cables(const TopoIndex &index, const std::vector<int> &ordered, const Layout &layout,
                       std::vector<uint32_t> &out);

// The ring edges of the running jobs per cable, for RankOrderer::set_neighbour_edges: what a
// scheduler keeps so that each job's order counts the edges of the jobs placed before it and still
// running, and takes a job's own edges off when it ends. Memory: one count per cable (only with
// recorded tables) and each booked job's traced cables (a few per split part and NIC).
class RingEdgeBook {
 public:
  explicit RingEdgeBook(const TopoIndex &index) : index_(&index), orderer_(index) {}
  // The job's rank order (as RankOrderer::order) counting the booked jobs' edges; books the job's
  // own edges (replacing any it had). Throws LayoutError as order() does, booking nothing.
  void order(uint32_t job, const std::vector<int> &hosts, const Layout &layout, std::vector<int> &out);
  // Books a job's edges from its nodes in rank order as they were placed (ring_entry_cables),
  // replacing any it had. Throws LayoutError as ring_entry_cables does, booking nothing.
  void add_placed(uint32_t job, const std::vector<int> &ordered, const Layout &layout);
  // Takes a job's edges off (nothing if it has none booked).
  void remove(uint32_t job);
  size_t jobs() const { return jobs_.size(); }  // jobs with at least one booked edge
  uint64_t edges() const { return edges_; }     // booked edge-cables in all
  const std::vector<uint32_t> &counts() const { return counts_; }

 private:
  void book(uint32_t job);  // added_ as the job's edges (already counted in counts_)

  const TopoIndex *index_;
  RankOrderer orderer_;
  std::vector<uint32_t> counts_;  // per cable
  std::unordered_map<uint32_t, std::vector<uint32_t>> jobs_;
  std::vector<uint32_t> added_;
  uint64_t edges_ = 0;
};

// Convenience: node names -> ordered node names (throws LayoutError naming a host that is not in
// the topology: a stale topology must never give a silently different order).
std::vector<std::string> order_node_names(const TopoIndex &index, const std::vector<std::string> &names,
                                          const Layout &layout);

}  // namespace topoaware
