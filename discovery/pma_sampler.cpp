// SPDX-License-Identifier: GPL-2.0-or-later
// Switch port traffic counters through libibumad, many PMA queries in flight (pma_sampler.hpp).
#include "pma_sampler.hpp"

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "fabric.hpp"

namespace topoaware {

namespace {

using Clock = std::chrono::steady_clock;

struct PortDeleter {
  void operator()(ibmad_port *p) const { mad_rpc_close_port(p); }
};
using MadPort = std::unique_ptr<ibmad_port, PortDeleter>;

std::string target_text(const WalkTarget &t) {
  return (t.ca.empty() ? std::string("<first CA>") : t.ca) + ":" +
         (t.port > 0 ? std::to_string(t.port) : std::string("<first active port>"));
}

MadPort open_port(const WalkTarget &t) {
  std::vector<char> ca(t.ca.begin(), t.ca.end());
  ca.push_back('\0');
  int classes[] = {IB_SMI_CLASS, IB_PERFORMANCE_CLASS};
  return MadPort(mad_rpc_open_port(t.ca.empty() ? nullptr : ca.data(), t.port, classes, 2));
}

// The node GUID behind a LID (SMP NodeInfo, LID routed), 0 if no answer.
uint64_t guid_at(ibmad_port *src, uint16_t lid, unsigned timeout) {
  ib_portid_t id;
  std::memset(&id, 0, sizeof id);
  ib_portid_set(&id, lid, 0, 0);
  uint8_t buf[IB_SMP_DATA_SIZE];
  std::memset(buf, 0, sizeof buf);
  if (!smp_query_via(buf, &id, IB_ATTR_NODE_INFO, 0, timeout, src)) return 0;
  uint64_t guid = 0;
  mad_decode_field(buf, IB_NODE_GUID_F, &guid);
  return guid;
}

struct Query {
  uint16_t lid = 0;
  int port = 0;
  unsigned attr = 0;
  int tries = 0;
  bool done = false, ok = false;
  std::string error;
  uint8_t data[IB_PC_DATA_SZ] = {};
};

// Sends every query through `src`, at most `window` in flight, each tried 1 + retries times.
// Answers are matched by transaction id; a late answer to a query already given up is dropped.
void run_queries(ibmad_port *src, std::vector<Query> &qs, const SampleOptions &o,
                 const std::function<void(size_t)> &answered) {
  const int fd = mad_rpc_portid(src);
  const int agent = mad_rpc_class_agent(src, IB_PERFORMANCE_CLASS);
  const size_t bufsz = umad_size() + IB_MAD_SIZE;
  std::vector<uint8_t> sbuf(bufsz), rbuf(bufsz);
  struct InFlight {
    size_t q;
    Clock::time_point deadline;
  };
  std::unordered_map<uint32_t, InFlight> flying;
  size_t next = 0, finished = 0;
  std::vector<size_t> again;  // timed out, to send once more
  const auto timeout = std::chrono::milliseconds(o.timeout_ms);
  auto finish = [&](size_t i, bool ok, std::string why) {
    qs[i].done = true;
    qs[i].ok = ok;
    qs[i].error = std::move(why);
    ++finished;
    answered(i);
  };
  auto send = [&](size_t i) {
    Query &q = qs[i];
    ++q.tries;
    ib_rpc_t rpc;
    std::memset(&rpc, 0, sizeof rpc);
    rpc.mgtclass = IB_PERFORMANCE_CLASS;
    rpc.method = IB_MAD_METHOD_GET;
    rpc.attr.id = q.attr;
    rpc.timeout = o.timeout_ms;
    rpc.datasz = IB_PC_DATA_SZ;
    rpc.dataoffs = IB_PC_DATA_OFFS;
    rpc.trid = mad_trid();
    uint8_t data[IB_PC_DATA_SZ];
    std::memset(data, 0, sizeof data);
    mad_set_field(data, 0, IB_PC_PORT_SELECT_F, uint32_t(q.port));
    ib_portid_t id;
    std::memset(&id, 0, sizeof id);
    ib_portid_set(&id, q.lid, 0, 0);
    id.qp = 1;
    id.qkey = IB_DEFAULT_QP1_QKEY;
    std::fill(sbuf.begin(), sbuf.end(), 0);
    const int len = mad_build_pkt(sbuf.data(), &rpc, &id, nullptr, data);
    if (len < 0) return finish(i, false, "cannot build the query");
    const uint32_t trid = uint32_t(mad_get_field64(umad_get_mad(sbuf.data()), 0, IB_MAD_TRID_F));
    if (umad_send(fd, agent, sbuf.data(), len, o.timeout_ms, 0) < 0)
      return finish(i, false, std::string("cannot send: ") + std::strerror(errno));
    flying[trid] = InFlight{i, Clock::now() + timeout};
  };
  while (finished < qs.size()) {
    while (flying.size() < size_t(std::max(1, o.window)) && (!again.empty() || next < qs.size())) {
      size_t i;
      if (!again.empty()) {
        i = again.back();
        again.pop_back();
      } else {
        i = next++;
      }
      send(i);
    }
    if (flying.empty()) continue;
    int len = int(IB_MAD_SIZE);
    const int r = umad_recv(fd, rbuf.data(), &len, 20);
    if (r >= 0) {
      const uint8_t *mad = static_cast<const uint8_t *>(umad_get_mad(rbuf.data()));
      const uint32_t trid = uint32_t(mad_get_field64(const_cast<uint8_t *>(mad), 0, IB_MAD_TRID_F));
      auto it = flying.find(trid);
      if (it != flying.end()) {
        const size_t i = it->second.q;
        flying.erase(it);
        const int transport = umad_status(rbuf.data());
        const unsigned status = mad_get_field(const_cast<uint8_t *>(mad), 0, IB_MAD_STATUS_F);
        if (transport != 0) {
          if (qs[i].tries <= o.retries)
            again.push_back(i);
          else
            finish(i, false, fmt::format("no answer ({})", std::strerror(transport)));
        } else if (status != 0) {
          finish(i, false, fmt::format("MAD status 0x{:04x}", status));
        } else {
          std::memcpy(qs[i].data, mad + IB_PC_DATA_OFFS, IB_PC_DATA_SZ);
          finish(i, true, "");
        }
      }
    }
    const auto now = Clock::now();
    for (auto it = flying.begin(); it != flying.end();) {
      if (it->second.deadline > now) {
        ++it;
        continue;
      }
      const size_t i = it->second.q;
      it = flying.erase(it);
      if (qs[i].tries <= o.retries)
        again.push_back(i);
      else
        finish(i, false, fmt::format("no answer after {} tries of {} ms (LID {}; has the switch gone, or the SM "
                                     "moved its LID?)",
                                     qs[i].tries, o.timeout_ms, qs[i].lid));
    }
  }
}

}  // namespace

CounterSnapshot sample_ports(const Topology &topo, const std::vector<std::pair<int, int>> &ports,
                             const SampleOptions &opts, std::vector<std::string> &problems) {
  if (topo.routes.empty())
    throw std::runtime_error(
        "the topology has no switch LIDs: discover it with --routes (or --lfts) so the counters can be "
        "addressed");
  // Switch index -> (subnet, LID).
  std::vector<std::pair<int, uint16_t>> lid_of(topo.switches.size(), {-1, 0});
  std::unordered_map<uint64_t, size_t> index;
  for (size_t i = 0; i < topo.switches.size(); ++i) index[topo.switches[i].guid] = i;
  for (size_t s = 0; s < topo.routes.subnets.size(); ++s)
    for (const SwitchLft &sl : topo.routes.subnets[s].switches) {
      auto it = index.find(sl.guid);
      if (it != index.end()) lid_of[it->second] = {int(s), sl.lid};
    }
  std::vector<WalkTarget> targets = opts.targets.empty() ? std::vector<WalkTarget>{WalkTarget{}} : opts.targets;
  const size_t S = topo.routes.subnets.size();
  std::vector<MadPort> opened;
  std::vector<int> target_of(S, -1);
  for (size_t t = 0; t < targets.size(); ++t) {
    MadPort p = open_port(targets[t]);
    if (!p) {
      problems.push_back("cannot open " + target_text(targets[t]) + " for PMA queries");
      opened.emplace_back();
      continue;
    }
    // Which subnet this port reaches: LIDs repeat between subnets, so ask a switch of each for its GUID.
    for (size_t s = 0; s < S; ++s) {
      if (target_of[s] >= 0) continue;
      for (const SwitchLft &sl : topo.routes.subnets[s].switches) {
        if (sl.lid == 0) continue;
        if (guid_at(p.get(), sl.lid, unsigned(opts.timeout_ms)) == sl.guid) target_of[s] = int(t);
        break;
      }
    }
    opened.push_back(std::move(p));
  }
  bool any = false;
  for (size_t s = 0; s < S; ++s) {
    if (target_of[s] >= 0)
      any = true;
    else
      problems.push_back(fmt::format("subnet {} (switch {}) is reached by no local port given{}", s,
                                     topo.routes.subnets[s].switches.empty()
                                         ? std::string("?")
                                         : guid_str(topo.routes.subnets[s].switches.front().guid),
                                     S > 1 ? ": give one --ca per subnet" : ": is the subnet manager running?"));
  }
  if (!any) throw std::runtime_error("no local port reaches the fabric of the topology: " + problems.back());

  CounterSnapshot snap;
  const auto t0 = Clock::now();
  snap.time_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  snap.ports.resize(ports.size());
  // Per target: two queries per port (extended data counters; PortCounters for XmitWait and the
  // data of a switch without the extended ones).
  std::vector<std::vector<Query>> qs(opened.size());
  std::vector<std::vector<size_t>> owner(opened.size());
  for (size_t k = 0; k < ports.size(); ++k) {
    PortSample &p = snap.ports[k];
    p.sw = ports[k].first;
    p.port = ports[k].second;
    const auto [subnet, lid] = lid_of[size_t(p.sw)];
    if (subnet < 0 || lid == 0) {
      p.error = "switch LID unknown (not in the recorded routes)";
      continue;
    }
    if (target_of[size_t(subnet)] < 0) {
      p.error = "its subnet is reached by no local port";
      continue;
    }
    const size_t t = size_t(target_of[size_t(subnet)]);
    for (unsigned attr : {unsigned(IB_GSI_PORT_COUNTERS_EXT), unsigned(IB_GSI_PORT_COUNTERS)}) {
      Query q;
      q.lid = lid;
      q.port = p.port;
      q.attr = attr;
      qs[t].push_back(q);
      owner[t].push_back(k);
    }
  }
  size_t answered = 0, total = 0;
  for (const auto &v : qs) total += v.size();
  for (size_t t = 0; t < opened.size(); ++t) {
    if (qs[t].empty()) continue;
    run_queries(opened[t].get(), qs[t], opts, [&](size_t) {
      if (opts.progress && (++answered % 256 == 0 || answered == total)) opts.progress(answered, total);
    });
    for (size_t j = 0; j + 1 < qs[t].size(); j += 2) {
      PortSample &p = snap.ports[owner[t][j]];
      const Query &ext = qs[t][j], &pc = qs[t][j + 1];
      if (!pc.ok) {
        p.error = "PortCounters: " + pc.error;
        continue;
      }
      uint32_t wait = 0;
      mad_decode_field(const_cast<uint8_t *>(pc.data), IB_PC_XMT_WAIT_F, &wait);
      p.xmit_wait = wait;
      static const int kErrorFields[12] = {
          IB_PC_ERR_SYM_F,        IB_PC_LINK_RECOVERS_F, IB_PC_LINK_DOWNED_F,   IB_PC_ERR_RCV_F,
          IB_PC_ERR_PHYSRCV_F,    IB_PC_ERR_SWITCH_REL_F, IB_PC_XMT_DISCARDS_F, IB_PC_ERR_XMTCONSTR_F,
          IB_PC_ERR_RCVCONSTR_F,  IB_PC_ERR_LOCALINTEG_F, IB_PC_ERR_EXCESS_OVR_F, IB_PC_VL15_DROPPED_F};
      for (size_t e = 0; e < 12; ++e) {
        uint32_t v = 0;
        mad_decode_field(const_cast<uint8_t *>(pc.data), static_cast<enum MAD_FIELDS>(kErrorFields[e]), &v);
        p.errors[e] = v;
      }
      if (ext.ok) {
        p.wide = true;
        mad_decode_field(const_cast<uint8_t *>(ext.data), IB_PC_EXT_XMT_BYTES_F, &p.xmit_words);
        mad_decode_field(const_cast<uint8_t *>(ext.data), IB_PC_EXT_RCV_BYTES_F, &p.rcv_words);
      } else {
        uint32_t x = 0, r = 0;
        mad_decode_field(const_cast<uint8_t *>(pc.data), IB_PC_XMT_BYTES_F, &x);
        mad_decode_field(const_cast<uint8_t *>(pc.data), IB_PC_RCV_BYTES_F, &r);
        p.xmit_words = x;
        p.rcv_words = r;
      }
      p.ok = true;
    }
  }
  snap.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return snap;  // ports that did not answer carry their reason (link_loads reports them)
}

}  // namespace topoaware
