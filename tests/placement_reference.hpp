// SPDX-License-Identifier: GPL-2.0-or-later
// The placement engine and rank order as they were before the speed work (commit 71100c4), kept
// verbatim (renamed) as the reference of tests/test_placement_differential.cpp: the faster code
// must take exactly the same decisions. The rank order's choice of a split part's entry host has
// changed since, and is written out plainly here the way the engine takes it. Not built into the
// project.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "placement.hpp"

namespace topoaware {
namespace reference {

class RefOrderer {
 public:
  explicit RefOrderer(const TopoIndex &index) : index_(&index) {}
  void order(const std::vector<int> &hosts, const Layout &layout, std::vector<int> &out);

 private:
  const TopoIndex *index_;
  std::vector<int> sorted_;
  std::vector<Piece> pieces_;
  std::vector<uint32_t> piece_start_;
  std::vector<char> used_;
  std::vector<uint32_t> entry_;
  Packing packing_;
  std::vector<SegmentPart> pool_;
};

class RefPlacer {
 public:
  explicit RefPlacer(const TopoIndex &index);
  PlaceStatus place(const int *hosts, const uint32_t *free_gpus, size_t n, const Job &job, PlaceMode mode,
                    PlaceResult &out);
  PlaceStatus place_slurm(const NodeMap &map, const uint64_t *words, size_t nbits, const uint16_t *free_gpus,
                          const Job &job, PlaceMode mode, PlaceResult &out);

 private:
  PlaceStatus run(const Job &job, PlaceMode mode, PlaceResult &out);
  bool greedy(const std::vector<int> &lgs, uint32_t seg, uint32_t nseg, bool partial_only, std::vector<uint32_t> &take);
  void evaluate(const std::vector<uint32_t> &take, const std::vector<int> &lgs, uint32_t seg, PlaceQuality &q);

  const TopoIndex *index_;
  RefOrderer orderer_;
  std::vector<uint32_t> lg_count_, lg_fill_, lg_off_;
  std::vector<std::pair<uint32_t, int>> cand_;
  std::vector<std::pair<int, uint32_t>> raw_;
  std::vector<uint32_t> pod_free_;
  std::vector<int> region_, pods_sorted_, chosen_hosts_;
  std::vector<uint32_t> take_, best_take_;
  std::vector<int> best_lgs_;
  struct Opt { uint32_t k, c; int lg; };
  std::vector<Opt> opts_;
  std::vector<Piece> pieces_;
  Packing packing_;
  std::vector<SegmentPart> pool_;
};

}  // namespace reference
}  // namespace topoaware
