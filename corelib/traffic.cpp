// SPDX-License-Identifier: GPL-2.0-or-later
// The traffic of one training step of a job (see traffic.hpp).
#include "traffic.hpp"

#include <stdexcept>

#include "rank_order.hpp"

namespace topoaware {

const char *phase_name(TrafficPhase p) {
  switch (p) {
    case TrafficPhase::PP:
      return "pp";
    case TrafficPhase::EP:
      return "ep";
    case TrafficPhase::DP:
      return "dp";
    case TrafficPhase::TP:
      return "tp";
  }
  return "?";
}

JobTraffic job_traffic(const Topology &topo, const StepJob &job) {
  const Layout &l = job.layout;
  const uint32_t G = job_geometry(l, uint32_t(job.nodes.size()), !topo.nvlink_domains.empty()).gpus_per_node;
  JobTraffic t;
  auto add = [&](TrafficPhase ph, uint32_t a, uint32_t b, double bytes) {
    const int ha = job.nodes[a / G], hb = job.nodes[b / G];
    if (ha == hb || bytes <= 0) return -1;  // same node: NVLink
    // Same multi-node NVLink domain: NCCL's NVLink transport (MNNVL), no NIC involved.
    const int da = topo.hosts[size_t(ha)].nvlink_domain;
    if (da >= 0 && da == topo.hosts[size_t(hb)].nvlink_domain) return -1;
    const size_t ra = topo.hosts[size_t(ha)].ports.size(), rb = topo.hosts[size_t(hb)].ports.size();
    if (ra == 0 || rb == 0) throw std::runtime_error("host without a NIC port in the topology");
    Flow f;
    f.src_host = ha;
    f.dst_host = hb;
    f.dst_port = int(size_t(b % G) * rb / G);
    // PXN (NCCL >= 2.12): with as many NICs on both sides, the data crosses NVLink to the GPU on
    // the destination's rail and leaves through that rail's NIC, so rails never cross.
    f.src_port = ra == rb ? f.dst_port : int(size_t(a % G) * ra / G);
    f.bytes = bytes;
    t.phase[int(ph)].push_back(f);
    return int(t.phase[int(ph)].size()) - 1;
  };
  RankCoord c;
  // TP rings: fixed (cp, dp, pp), members in tp order, closed. Only edges between nodes of
  // different NVLink domains become flows: a TP group inside one node or one domain sends nothing
  // over the NICs, one split over two domains sends its largest bytes of the step through them.
  if (l.tp > 1 && job.tp_bytes > 0) {
    const double e = 2.0 * (l.tp - 1) / l.tp * job.tp_bytes;
    for (c.pp = 0; c.pp < l.pp; ++c.pp)
      for (c.dp = 0; c.dp < l.dp; ++c.dp)
        for (c.cp = 0; c.cp < l.cp; ++c.cp)
          for (uint32_t i = 0; i < l.tp; ++i) {
            RankCoord a = c, b = c;
            a.tp = i;
            b.tp = (i + 1) % l.tp;
            add(TrafficPhase::TP, rank_of(l, a), rank_of(l, b), e);
          }
  }
  for (c.tp = 0; c.tp < l.tp; ++c.tp) {
    // DP rings: fixed (tp, cp, pp), members in dp order, closed.
    if (l.dp > 1 && job.dp_bytes > 0) {
      const double e = 2.0 * (l.dp - 1) / l.dp * job.dp_bytes;
      t.ring_steps = 2 * (l.dp - 1);
      for (c.pp = 0; c.pp < l.pp; ++c.pp)
        for (c.cp = 0; c.cp < l.cp; ++c.cp) {
          t.rings.emplace_back();
          for (uint32_t i = 0; i < l.dp; ++i) {
            RankCoord a = c, b = c;
            a.dp = i;
            b.dp = (i + 1) % l.dp;
            t.rings.back().push_back(add(TrafficPhase::DP, rank_of(l, a), rank_of(l, b), e));
          }
        }
    }
    // PP boundaries: fixed (tp, cp, dp), stage s to s+1 forward and back.
    if (l.pp > 1 && job.pp_bytes > 0)
      for (c.dp = 0; c.dp < l.dp; ++c.dp)
        for (c.cp = 0; c.cp < l.cp; ++c.cp)
          for (uint32_t s = 0; s + 1 < l.pp; ++s) {
            RankCoord a = c, b = c;
            a.pp = s;
            b.pp = s + 1;
            add(TrafficPhase::PP, rank_of(l, a), rank_of(l, b), job.pp_bytes);
            add(TrafficPhase::PP, rank_of(l, b), rank_of(l, a), job.pp_bytes);
          }
    // EP all-to-all: groups of EP consecutive q = cp + CP*dp at fixed (tp, pp).
    if (l.ep > 1 && job.ep_bytes > 0) {
      const uint32_t Q = l.cp * l.dp;
      auto rank_q = [&](uint32_t pp, uint32_t q) {
        RankCoord m = c;
        m.pp = pp;
        m.cp = q % l.cp;
        m.dp = q / l.cp;
        return rank_of(l, m);
      };
      for (uint32_t pp = 0; pp < l.pp; ++pp)
        for (uint32_t g = 0; g < Q; g += l.ep)
          for (uint32_t x = 0; x < l.ep; ++x)
            for (uint32_t y = 0; y < l.ep; ++y)
              if (x != y) add(TrafficPhase::EP, rank_q(pp, g + x), rank_q(pp, g + y), job.ep_bytes / l.ep);
    }
  }
  return t;
}

}  // namespace topoaware
