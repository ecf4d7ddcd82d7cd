// SPDX-License-Identifier: GPL-2.0-or-later
// Replica of Slurm 24.11.5 eval_nodes_block (src/plugins/topology/block/eval_nodes_block.c:174,
// from Debian trixie's source package slurm-wlm 24.11.5), for exclusive whole-node jobs, one node
// weight, no required nodes, CPUs never limiting. Line numbers refer to that file.
#include <algorithm>
#include <cmath>
#include <functional>

#include "policies.hpp"

namespace topoaware {

namespace {

// bit_ffs_from_bit / bit_fls_from_bit on block_levels: first set bit >= b / last set bit <= b.
int ffs_from(const std::vector<bool> &bits, int b) {
  for (int i = std::max(b, 0); i < int(bits.size()); ++i)
    if (bits[size_t(i)]) return i;
  return -1;
}
int fls_from(const std::vector<bool> &bits, int b) {
  for (int i = std::min(b, int(bits.size()) - 1); i >= 0; --i)
    if (bits[size_t(i)]) return i;
  return -1;
}

// :53 _bblocks_in_same_block
bool same_llblock(int a, int b, int level) { return (a >> level) == (b >> level); }

// :64 _choose_best_bblock
void choose_best_bblock(const std::vector<uint8_t> &required, int nrec, int llblock_level, int rem_nodes,
                        const std::vector<uint32_t> &on_bblock, const std::vector<uint32_t> *on_llblock, int i,
                        bool &best_same_block, bool &best_fit, int &best) {
  const bool fit = int(on_bblock[size_t(i)]) >= rem_nodes;
  bool same_block = false;
  if (on_llblock && !same_llblock(best, i, llblock_level)) {  // minimize number of llblocks
    const int mask = int(~0u << llblock_level);
    const int lo = i & mask, hi = i | ~mask;
    for (int j = lo; j < nrec && j <= hi; ++j) {
      if (!required[size_t(j)]) continue;
      if ((same_block = same_llblock(j, i, llblock_level))) break;
    }
    if (best == -1 || (same_block && !best_same_block)) {
      best = i;
      best_fit = fit;
      best_same_block = same_block;
      return;
    }
    if (!same_block && best_same_block) return;
    const uint32_t best_cnt = (*on_llblock)[size_t(best >> llblock_level)];
    const uint32_t cnt = (*on_llblock)[size_t(i >> llblock_level)];
    const bool ll_fit = int(cnt) >= rem_nodes, best_ll_fit = int(best_cnt) >= rem_nodes;
    if (ll_fit && !best_ll_fit) {
      best = i;
      best_fit = fit;
      best_same_block = same_block;
      return;
    }
    if (!ll_fit && best_ll_fit) return;
    if (ll_fit && best_ll_fit) {  // both fit: fewer nodes, less fragmentation
      if (cnt < best_cnt) {
        best = i;
        best_fit = fit;
        best_same_block = same_block;
        return;
      }
      if (cnt > best_cnt) return;
    } else {  // neither fits: more nodes, fewer llblocks
      if (cnt > best_cnt) {
        best = i;
        best_fit = fit;
        best_same_block = same_block;
        return;
      }
      if (cnt < best_cnt) return;
    }
  }
  // :161 minimize number of bblocks
  if (best == -1 || (fit && !best_fit) || (!fit && !best_fit && on_bblock[size_t(i)] >= on_bblock[size_t(best)]) ||
      (fit && on_bblock[size_t(i)] <= on_bblock[size_t(best)])) {
    best = i;
    best_fit = fit;
  }
}

}  // namespace

bool slurm_block_select(const SlurmFabricView &c, const std::vector<uint8_t> &free, int nodes, int segment,
                        std::vector<int> &out) {
  out.clear();
  const int nrec = int(c.blocks.size());
  const int bb = c.bblock_node_cnt;
  int rem_nodes = nodes;  // :226 "Always use min_nodes"
  int segment_cnt = 1, rem_segment_cnt = 0;
  if (segment > bb) return false;                        // :231 not supported
  if (segment && rem_nodes % segment) return false;      // :238
  if (segment) {                                         // :245
    segment_cnt = rem_nodes / segment;
    rem_segment_cnt = segment_cnt;
    rem_nodes = segment;
  }
  int bblock_per_block = (rem_nodes + bb - 1) / bb;      // :251
  int block_level = int(std::ceil(std::log2(double(bblock_per_block))));
  const int llblock_level = block_level > 0 ? fls_from(c.block_levels, block_level - 1) : 0;
  block_level = ffs_from(c.block_levels, block_level);
  const int bblock_per_llblock = 1 << llblock_level;
  const int llblock_size = bblock_per_llblock * bb;
  int max_llblock = (rem_nodes + llblock_size - 1) / llblock_size;

  std::vector<uint8_t> node_map = free, alloc_node_map(free.size(), 0);
  bool have_alloc = false;
  std::vector<uint32_t> on_llblock_store;
  bool have_llblock = false;
  int llblock_cnt = 0;
  uint32_t block_node_cnt = 0;  // :180, not reset between segments (as in Slurm)
  std::vector<uint8_t> bblock_required(size_t(nrec), 0);
  std::vector<uint32_t> on_bblock(size_t(nrec), 0);

  while (true) {  // :308 next_segment
    if (rem_segment_cnt) {
      rem_nodes = segment;
      max_llblock = (rem_nodes + llblock_size - 1) / llblock_size;
    }
    bool any = false;
    for (uint8_t f : node_map) any = any || f;
    if (!any) return false;  // :330 node_map is empty
    int block_cnt;
    if (block_level < 0) {   // :376
      bblock_per_block = nrec;
      block_cnt = 1;
    } else {
      bblock_per_block = 1 << block_level;
      block_cnt = (nrec + bblock_per_block - 1) / bblock_per_block;
    }
    if (bblock_per_block != bblock_per_llblock * max_llblock && !have_llblock) {  // :395
      llblock_cnt = (nrec + bblock_per_llblock - 1) / bblock_per_llblock;
      on_llblock_store.assign(size_t(llblock_cnt), 0);
      have_llblock = true;
    }
    std::vector<uint32_t> *on_llblock = have_llblock ? &on_llblock_store : nullptr;
    std::fill(bblock_required.begin(), bblock_required.end(), 0);
    // :410-432: blocks are runs of bblock_per_block base blocks; llblock counts accumulate
    // (the array is only cleared at :778, as in Slurm).
    auto in_block = [&](int h, int blk) { return c.host_block[size_t(h)] / bblock_per_block == blk; };
    if (on_llblock)
      for (int i = 0; i < nrec; ++i)
        for (int h : c.blocks[size_t(i)]) (*on_llblock)[size_t(i / bblock_per_llblock)] += node_map[size_t(h)] != 0;
    // :434-509: choose the block: enough nodes (through the largest max_llblock llblocks when
    // llblocks are counted), then the fewest usable nodes ("<=": the last such block).
    int block_inx = -1;
    for (int b = 0; b < block_cnt; ++b) {
      uint32_t bnc = 0, avail_bnc = 0;
      const int r0 = b * bblock_per_block, r1 = std::min(nrec, r0 + bblock_per_block);
      for (int r = r0; r < r1; ++r)
        for (int h : c.blocks[size_t(r)]) bnc += node_map[size_t(h)] != 0;
      if (!on_llblock) {
        avail_bnc = bnc;
      } else {
        int llblock_per_block = bblock_per_block / bblock_per_llblock;
        const int offset = b * llblock_per_block;
        llblock_per_block = std::min(llblock_per_block, llblock_cnt - offset);
        // :454 qsort in place, descending (this reorders the llblock counts, as Slurm does)
        std::sort(on_llblock->begin() + offset, on_llblock->begin() + offset + llblock_per_block,
                  std::greater<uint32_t>());
        const int tmp_max = std::min(max_llblock, llblock_per_block);
        for (int j = 0; j < tmp_max; ++j) avail_bnc += (*on_llblock)[size_t(offset + j)];
      }
      if (int(avail_bnc) < rem_nodes) continue;
      if (block_inx == -1 || bnc <= block_node_cnt) {
        block_inx = b;
        block_node_cnt = bnc;
      }
    }
    if (block_inx == -1) return false;  // :518 unable to find block
    // :557-605: best_nodes_bitmap = usable nodes of the block (one weight); sufficient.
    std::vector<uint8_t> best_nodes(free.size(), 0);
    int best_node_cnt = 0;
    for (size_t h = 0; h < free.size(); ++h)
      if (node_map[h] && in_block(int(h), block_inx)) {
        best_nodes[h] = 1;
        ++best_node_cnt;
      }
    std::fill(node_map.begin(), node_map.end(), 0);  // :511 bit_clear_all(node_map)
    if (best_node_cnt < rem_nodes) return false;      // :625
    // :760-787: nodes per base block of the chosen block; llblock counts cleared and rebuilt.
    if (on_llblock) std::fill(on_llblock->begin(), on_llblock->end(), 0);
    for (int i = 0; i < nrec; ++i) {
      if (i / bblock_per_block != block_inx) continue;
      on_bblock[size_t(i)] = 0;
      for (int h : c.blocks[size_t(i)]) on_bblock[size_t(i)] += best_nodes[size_t(h)];
      if (on_llblock) (*on_llblock)[size_t(i / bblock_per_llblock)] += on_bblock[size_t(i)];
    }
    // :801-858: add base blocks one at a time.
    bool ok = false;
    int prev_rem_nodes = rem_nodes + 1;
    while (!ok) {
      int best = -1;
      bool best_fit = false, best_same_block = true;
      if (prev_rem_nodes == rem_nodes) break;  // stalled
      prev_rem_nodes = rem_nodes;
      for (int i = 0; i < nrec; ++i) {
        if (i / bblock_per_block != block_inx || bblock_required[size_t(i)]) continue;
        choose_best_bblock(bblock_required, nrec, llblock_level, rem_nodes, on_bblock, on_llblock, i,
                           best_same_block, best_fit, best);
      }
      if (best == -1) break;
      if (max_llblock <= 0 && !best_same_block) break;  // llblock limit
      bblock_required[size_t(best)] = 1;
      for (int h : c.blocks[size_t(best)]) {  // node-index order (same NOTE as in 22.05)
        if (!best_nodes[size_t(h)] || node_map[size_t(h)]) continue;
        --rem_nodes;
        node_map[size_t(h)] = 1;
        if (rem_nodes <= 0) {
          ok = true;
          break;
        }
      }
      if (!best_same_block) --max_llblock;
    }
    if (!ok) return false;  // :868 rc = SLURM_ERROR
    // :874 fini: next segment on the nodes not yet allocated
    if (rem_segment_cnt && --rem_segment_cnt > 0) {
      for (size_t h = 0; h < free.size(); ++h) alloc_node_map[h] |= node_map[h];
      have_alloc = true;
      for (size_t h = 0; h < free.size(); ++h) node_map[h] = free[h] && !alloc_node_map[h];
      continue;
    }
    if (have_alloc)
      for (size_t h = 0; h < free.size(); ++h) node_map[h] |= alloc_node_map[h];
    break;
  }
  for (size_t h = 0; h < node_map.size(); ++h)
    if (node_map[h]) out.push_back(int(h));
  return int(out.size()) == nodes;
}

}  // namespace topoaware
