// SPDX-License-Identifier: GPL-2.0-or-later
#include "optimum.hpp"

#include <algorithm>
#include <map>

#include "rank_order.hpp"

namespace topoaware::sim {

OptimumResult exact_optimum(const Cluster &c, const std::vector<uint8_t> &free, int nodes, const Layout &layout,
                            const CostParams &params, long limit) {
  const TopoIndex &ix = *c.index;
  struct Group {
    std::vector<int> free_hosts;
    int cls;  // interchangeability class: (pod, free count)
  };
  std::vector<Group> groups;
  std::map<std::pair<int, int>, int> classes;
  for (int g = 0; g < ix.leaf_group_count(); ++g) {
    Group gr;
    for (int h : ix.leaf_group_hosts(g))
      if (free[size_t(h)]) gr.free_hosts.push_back(h);
    if (gr.free_hosts.empty()) continue;
    auto key = std::make_pair(ix.leaf_group_pod(g), int(gr.free_hosts.size()));
    auto it = classes.emplace(key, int(classes.size())).first;
    gr.cls = it->second;
    groups.push_back(std::move(gr));
  }
  std::sort(groups.begin(), groups.end(), [](const Group &a, const Group &b) { return a.cls < b.cls; });
  std::vector<int> suffix(groups.size() + 1, 0);
  for (size_t i = groups.size(); i-- > 0;) suffix[i] = suffix[i + 1] + int(groups[i].free_hosts.size());
  OptimumResult res;
  if (suffix[0] < nodes) return res;
  RankOrderer orderer(ix);
  std::vector<int> take(groups.size(), 0), set, ordered;
  bool aborted = false;
  res.hop_bytes = 1e300;
  // depth-first over groups; counts non-increasing inside a class
  auto rec = [&](auto &&self, size_t i, int rem) -> void {
    if (aborted) return;
    if (rem == 0) {
      if (++res.vectors > limit) {
        aborted = true;
        return;
      }
      set.clear();
      for (size_t g = 0; g < groups.size(); ++g)
        for (int k = 0; k < take[g]; ++k) set.push_back(groups[g].free_hosts[size_t(k)]);
      std::sort(set.begin(), set.end());
      orderer.order(set, layout, ordered);
      const JobCost jc = job_cost(ix, ordered, layout, params);
      res.hop_bytes = std::min(res.hop_bytes, jc.hop_bytes);
      return;
    }
    if (i == groups.size() || suffix[i] < rem) return;
    int hi = std::min(rem, int(groups[i].free_hosts.size()));
    if (i > 0 && groups[i - 1].cls == groups[i].cls) hi = std::min(hi, take[i - 1]);
    for (int k = hi; k >= 0; --k) {
      take[i] = k;
      self(self, i + 1, rem - k);
    }
    take[i] = 0;
  };
  rec(rec, 0, nodes);
  res.done = !aborted;
  return res;
}

}  // namespace topoaware::sim
