// SPDX-License-Identifier: GPL-2.0-or-later
// netsim's routed fabric (bench/netsim/model.hpp) under its as-routed mode, on a topology whose
// forwarding tables are written here by hand, so that every expected path is known:
//   2 leaves x 4 hosts, 2 spines, one cable from each leaf to each spine (generated).
//   LIDs: switches 1..4; hosts from 8 on in *reverse* name order (n0008 = 8, ..., n0001 = 15), as a
//   subnet manager that found the ports in another order would give them.
//   Tables: a leaf sends every LID of the other leaf up to spine01 (never spine02), its own hosts
//   down; a spine sends every host LID down to its leaf. With LMC 1, base + 1 goes up to spine02.
// So every flow between the leaves crosses spine01, whatever its destination's index, while the
// synthetic D-mod-K sends half of them (odd destination index) through spine02.
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "generator.hpp"
#include "model.hpp"
#include "route_trace.hpp"
#include "routes.hpp"
#include "topology.hpp"
// cmocka last: its macros clash with names in the C++ headers.
#include "cmocka_cxx.hpp"

using namespace topoaware;
using namespace topoaware::netsim;

namespace {

struct Built {
  Fabric fabric;
  std::vector<uint64_t> leaves, spines, hosts;  // hosts in name order
  std::map<uint64_t, uint16_t> lid;
};

const FabricNode &node(const Fabric &f, uint64_t g) { return *f.find(g); }

int port_to(const Fabric &f, uint64_t from, uint64_t to) {
  for (const auto &p : node(f, from).ports)
    if (p.remote_guid == to) return p.num;
  return -1;
}

// tamper: called with the subnet before it is stored (to break a table).
template <class F>
Topology make_topology(int lmc, F tamper) {
  Built b;
  FatTreeSpec spec;
  spec.leaves = 2;
  spec.hosts_per_leaf = 4;
  spec.uplinks_per_leaf = 2;
  spec.spines = 2;
  b.fabric = generate_fat_tree(spec);
  b.fabric.finish();
  std::map<std::string, uint64_t> host_by_name;
  for (const auto &n : b.fabric.nodes) {
    if (n.type != NodeType::Switch) {
      host_by_name[n.desc] = n.guid;
      continue;
    }
    (n.desc.rfind("leaf", 0) == 0 ? b.leaves : b.spines).push_back(n.guid);
  }
  for (const auto &[name, g] : host_by_name) b.hosts.push_back(g);
  assert_int_equal(b.leaves.size(), 2);
  assert_int_equal(b.spines.size(), 2);
  assert_int_equal(b.hosts.size(), 8);
  uint16_t next = 1;
  for (uint64_t g : b.leaves) b.lid[g] = next++;
  for (uint64_t g : b.spines) b.lid[g] = next++;
  next = 8;
  for (auto it = b.hosts.rbegin(); it != b.hosts.rend(); ++it) b.lid[*it] = next, next = uint16_t(next + (1 << lmc));
  const size_t top = next - 1;
  auto leaf_of = [&](uint64_t host) { return node(b.fabric, host).ports.front().remote_guid; };
  Subnet sn;
  for (uint64_t sw : b.leaves) {
    SwitchLft t{sw, b.lid[sw], std::vector<uint8_t>(top + 1, kNoRoute)};
    t.out[b.lid[sw]] = 0;
    for (uint64_t h : b.hosts)
      for (int bit = 0; bit < (1 << lmc); ++bit)
        t.out[size_t(b.lid[h] + bit)] = leaf_of(h) == sw ? uint8_t(port_to(b.fabric, sw, h))
                                                         : uint8_t(port_to(b.fabric, sw, b.spines[size_t(bit)]));
    sn.switches.push_back(t);
  }
  for (uint64_t sw : b.spines) {
    SwitchLft t{sw, b.lid[sw], std::vector<uint8_t>(top + 1, kNoRoute)};
    t.out[b.lid[sw]] = 0;
    for (uint64_t h : b.hosts)
      for (int bit = 0; bit < (1 << lmc); ++bit) t.out[size_t(b.lid[h] + bit)] = uint8_t(port_to(b.fabric, sw, leaf_of(h)));
    sn.switches.push_back(t);
  }
  for (uint64_t h : b.hosts) sn.ports.push_back({h, node(b.fabric, h).ports.front().num, b.lid[h], lmc});
  tamper(sn, b);
  b.fabric.routes.subnets.push_back(sn);
  b.fabric.routes.canonicalize();
  return classify(b.fabric, {});
}

Topology make_topology(int lmc = 0) {
  return make_topology(lmc, [](Subnet &, const Built &) {});
}

int host(const Topology &t, const std::string &name) {
  for (size_t h = 0; h < t.hosts.size(); ++h)
    if (t.hosts[h].name == name) return int(h);
  fail_msg("no host %s", name.c_str());
  return -1;
}

// The names of the links of a flow's single path.
std::vector<std::string> path_of(const FabricModel &m, const Topology &t, const std::string &src,
                                 const std::string &dst) {
  Flow f;
  f.src_host = host(t, src);
  f.dst_host = host(t, dst);
  f.bytes = 1;
  std::vector<std::vector<Hop>> paths;
  m.route(f, paths);
  assert_int_equal(paths.size(), 1);
  std::vector<std::string> out;
  for (const Hop &h : paths[0]) out.push_back(m.links()[size_t(h.link)].name + (h.up ? " up" : " down"));
  return out;
}

std::string cable(const Topology &t, const std::string &leaf, const std::string &spine) {
  int l = -1, s = -1;
  for (size_t i = 0; i < t.switches.size(); ++i) {
    if (t.switches[i].name == leaf) l = int(i);
    if (t.switches[i].name == spine) s = int(i);
  }
  assert_true(l >= 0 && s >= 0);
  for (const Link &lk : t.links) {
    const int a = t.switch_index(lk.a), b = t.switch_index(lk.b);
    if ((a == l && b == s) || (a == s && b == l)) {
      const auto [pa, pb] = lk.ports.front();
      const int pl = a == l ? pa : pb, ps = a == l ? pb : pa;
      return leaf + ":" + std::to_string(pl) + "-" + spine + ":" + std::to_string(ps);
    }
  }
  fail_msg("no cable %s-%s", leaf.c_str(), spine.c_str());
  return "";
}

void expect_path(const std::vector<std::string> &got, const std::vector<std::string> &want) {
  if (got == want) return;
  std::string g, w;
  for (const auto &x : got) g += x + "; ";
  for (const auto &x : want) w += x + "; ";
  fail_msg("path: got [%s], expected [%s]", g.c_str(), w.c_str());
}

bool throws_with(const std::function<void()> &f, const std::string &needle, std::string *msg = nullptr) {
  try {
    f();
  } catch (const std::runtime_error &e) {
    if (msg) *msg = e.what();
    return std::string(e.what()).find(needle) != std::string::npos;
  }
  return false;
}

}  // namespace

// Every flow between the leaves takes spine01, in both directions; D-mod-K's paths differ.
static void test_as_routed_follows_tables(void **) {
  const Topology t = make_topology();
  assert_false(t.routes.empty());
  FabricModel routed(t, Routing::AsRouted), dmodk(t, Routing::DModK);
  // Every cable its own link: 8 NICs + 4 cables.
  assert_int_equal(routed.links().size(), 12);
  const std::string up1 = "r:" + cable(t, "leaf001", "spine01"), up2 = "r:" + cable(t, "leaf002", "spine01");
  for (int a = 1; a <= 4; ++a)
    for (int b = 5; b <= 8; ++b) {
      char s[8], d[8];
      std::snprintf(s, sizeof s, "n%04d", a);
      std::snprintf(d, sizeof d, "n%04d", b);
      expect_path(path_of(routed, t, s, d),
                  {"r:" + std::string(s) + ":0 up", up1 + " up", up2 + " down", "r:" + std::string(d) + ":0 down"});
      expect_path(path_of(routed, t, d, s),
                  {"r:" + std::string(d) + ":0 up", up2 + " up", up1 + " down", "r:" + std::string(s) + ":0 down"});
    }
  // Inside a leaf: the two NIC cables only.
  expect_path(path_of(routed, t, "n0001", "n0004"), {"r:n0001:0 up", "r:n0004:0 down"});
  // The synthetic model sends n0001 -> n0006 (index 5, odd) through spine02: the tables do not.
  const std::vector<std::string> d = path_of(dmodk, t, "n0001", "n0006");
  assert_int_equal(d.size(), 4);
  assert_string_equal(d[1].c_str(), ("d:" + cable(t, "leaf001", "spine02") + " up").c_str());
}

// LMC 1: the flow is addressed to the base LID (NCCL's queue pairs), routed through spine01; the
// other LID of each port (base + 1, through spine02) is not used.
static void test_as_routed_base_lid(void **) {
  const Topology t = make_topology(1);
  FabricModel routed(t, Routing::AsRouted);
  expect_path(path_of(routed, t, "n0002", "n0007"),
              {"r:n0002:0 up", "r:" + cable(t, "leaf001", "spine01") + " up",
               "r:" + cable(t, "leaf002", "spine01") + " down", "r:n0007:0 down"});
}

// A flow the tables do not deliver is an error that names it; no routes at all, an error too.
static void test_as_routed_errors(void **) {
  // leaf001 forgets n0006's LID.
  const Topology t = make_topology(0, [](Subnet &sn, const Built &b) {
    const uint16_t l = b.lid.at(b.hosts[5]);
    for (SwitchLft &s : sn.switches)
      if (s.guid == b.leaves[0]) s.out[l] = kNoRoute;
  });
  FabricModel routed(t, Routing::AsRouted);
  std::string msg;
  assert_true(throws_with([&] { path_of(routed, t, "n0001", "n0006"); }, "n0001 port 0 -> n0006 port 0", &msg));
  assert_true(msg.find("no route to LID") != std::string::npos);
  path_of(routed, t, "n0001", "n0005");  // the other LIDs still route
  // A loop: spine01 sends n0008's LID back up... to leaf001, which sends it to spine01 again.
  const Topology loop = make_topology(0, [](Subnet &sn, const Built &b) {
    const uint16_t l = b.lid.at(b.hosts[7]);
    for (SwitchLft &s : sn.switches)
      if (s.guid == b.spines[0]) s.out[l] = uint8_t(port_to(b.fabric, b.spines[0], b.leaves[0]));
  });
  FabricModel looping(loop, Routing::AsRouted);
  assert_true(throws_with([&] { path_of(looping, loop, "n0002", "n0008"); }, "n0002 port 0 -> n0008 port 0", &msg));
  assert_true(msg.find("loops") != std::string::npos);
  // Without routes: refused when the model is built.
  Topology bare = t;
  bare.routes = Routes{};
  assert_true(throws_with([&] { FabricModel m(bare, Routing::AsRouted); }, "forwarding tables"));
}

static void test_routing_names(void **) {
  assert_string_equal(routing_name(Routing::AsRouted), "as-routed");
  assert_string_equal(routing_label(Routing::DModK), "dmodk (synthetic)");
  assert_true(routing_from_name("as-routed") == Routing::AsRouted);
  assert_true(routing_from_name("dmodk") == Routing::DModK);
  bool threw = false;
  try {
    routing_from_name("ftree");
  } catch (const std::invalid_argument &) {
    threw = true;
  }
  assert_true(threw);
}

// Today's traffic (model.hpp: apply_today, model_sizes, unit_draw; corelib job_traffic).

// n hosts of `ports` NIC ports each, no switches: job_traffic only needs the ports.
Topology hosts_with_ports(int n, int ports) {
  Topology t;
  for (int h = 0; h < n; ++h) {
    Host host;
    host.name = "n" + std::to_string(h);
    host.ports.resize(size_t(ports));
    t.hosts.push_back(host);
  }
  return t;
}

static void test_per_nic_rings(void **) {
  // tp=8 on 8-GPU nodes, dp=2 over 2 nodes, 8 NICs each: the DP ring of the rank on GPU g is
  // the g-th ring and leaves and enters by NIC g, so the 8 rings use 8 different NICs.
  const Topology t = hosts_with_ports(2, 8);
  StepJob job;
  job.layout = parse_layout("tp=8,pp=1,dp=2");
  job.nodes = {0, 1};
  job.dp_bytes = 1e9;
  const JobTraffic tr = job_traffic(t, job);
  const auto &dp = tr.phase[int(Phase::DP)];
  assert_int_equal(dp.size(), 16);  // 8 rings x 2 edges between the nodes
  assert_int_equal(tr.rings.size(), 8);
  std::vector<int> used(8, 0);
  for (size_t r = 0; r < tr.rings.size(); ++r)
    for (int e : tr.rings[r]) {
      assert_true(e >= 0);
      const Flow &f = dp[size_t(e)];
      assert_int_equal(f.src_port, int(r));  // ring r: the ranks on GPU r, NIC r
      assert_int_equal(f.dst_port, int(r));
      used[r]++;
    }
  for (int u : used) assert_int_equal(u, 2);
  // PP (tp=8, pp=2 over 2 nodes): the rank on GPU g sends to its next stage by NIC g.
  job.layout = parse_layout("tp=8,pp=2,dp=1");
  job.dp_bytes = 0;
  job.pp_bytes = 1e6;
  const JobTraffic pp = job_traffic(t, job);
  assert_int_equal(pp.phase[int(Phase::PP)].size(), 16);
  for (const Flow &f : pp.phase[int(Phase::PP)]) assert_int_equal(f.src_port, f.dst_port);
  std::vector<int> ports(8, 0);
  for (const Flow &f : pp.phase[int(Phase::PP)]) ports[size_t(f.src_port)]++;
  for (int u : ports) assert_int_equal(u, 2);
}

// 4 trays of 4 GPUs, 4 NICs each; `split`: trays 0-1 and 2-3 in two NVLink domains, else all in one.
static Topology nvl_trays(bool split) {
  Topology t = hosts_with_ports(4, 4);
  t.nvlink_domains.resize(split ? 2 : 1);
  for (int h = 0; h < 4; ++h) {
    const int d = split ? h / 2 : 0;
    t.hosts[size_t(h)].nvlink_domain = d;
    t.nvlink_domains[size_t(d)].gpus_per_node = 4;
    t.nvlink_domains[size_t(d)].hosts.push_back(h);
  }
  return t;
}

static void test_tp_in_nvlink_domain(void **) {
  // tp=16 over 4 trays of 4 GPUs: one TP ring of 16 ranks, 4 of its edges between trays
  // (ranks 3-4, 7-8, 11-12, 15-0). Inside one NVLink domain they are NVLink: no NIC flow at all.
  StepJob job;
  job.layout = parse_layout("tp=16,pp=1,dp=1");
  job.nodes = {0, 1, 2, 3};
  job.tp_bytes = 1e9;
  const JobTraffic one = job_traffic(nvl_trays(false), job);
  for (int ph = 0; ph < kPhases; ++ph) assert_int_equal(one.phase[ph].size(), 0);
  // Split over two domains (trays 0-1, 2-3): the edges 7-8 (tray 1 -> 2) and 15-0 (tray 3 -> 0)
  // cross the NICs, each 2(t-1)/t * S = 2 * 15/16 * 1e9 bytes, from GPU 3's rail (PXN: sent on
  // the destination GPU's rail) to GPU 0's NIC.
  const JobTraffic two = job_traffic(nvl_trays(true), job);
  const auto &tp = two.phase[int(Phase::TP)];
  assert_int_equal(tp.size(), 2);
  double total = 0;
  for (const Flow &f : tp) {
    total += f.bytes;
    assert_true(std::abs(f.bytes - 1.875e9) < 1);
    assert_int_equal(f.dst_port, 0);
    assert_int_equal(f.src_port, 0);
    assert_true((f.src_host == 1 && f.dst_host == 2) || (f.src_host == 3 && f.dst_host == 0));
  }
  assert_true(std::abs(total - 3.75e9) < 1);
  assert_true(tp[0].src_host != tp[1].src_host);
  // DP between trays of one domain is NVLink too; between domains it takes the NICs (4 rings x 2 edges).
  job.layout = parse_layout("tp=8,pp=1,dp=2");
  job.tp_bytes = 0;
  job.dp_bytes = 1e9;
  job.nodes = {0, 1, 2, 3};
  assert_int_equal(job_traffic(nvl_trays(false), job).phase[int(Phase::DP)].size(), 0);
  const JobTraffic dp = job_traffic(nvl_trays(true), job);
  assert_int_equal(dp.phase[int(Phase::DP)].size(), 16);  // 8 rings (tp ranks) x 2 edges
  assert_int_equal(dp.phase[int(Phase::TP)].size(), 0);    // each TP group inside one domain
}

static void test_ep_all_to_all(void **) {
  // tp=8, dp=4 over 4 nodes, ep=4: per tp rank one expert group of 4 members, each sending
  // ep_bytes/4 to the 3 others: 8 x 12 flows, ep_bytes * 3/4 leaving each rank.
  const Topology t = hosts_with_ports(4, 8);
  StepJob job;
  job.layout = parse_layout("tp=8,pp=1,dp=4,ep=4");
  job.nodes = {0, 1, 2, 3};
  job.ep_bytes = 4e6;
  const JobTraffic tr = job_traffic(t, job);
  const auto &ep = tr.phase[int(Phase::EP)];
  assert_int_equal(ep.size(), 8 * 12);
  std::map<std::pair<int, int>, double> out;  // (host, port) -> bytes sent
  for (const Flow &f : ep) {
    assert_true(f.bytes == 1e6);
    assert_int_equal(f.src_port, f.dst_port);
    out[{f.src_host, f.src_port}] += f.bytes;
  }
  assert_int_equal(out.size(), 32);
  for (const auto &[k, b] : out) assert_true(b == 3e6);
}

static void test_phases_reproducible(void **) {
  SnapshotJob a;
  a.name = "j42";
  a.layout = parse_layout("tp=8,pp=2,dp=8");
  a.nodes.resize(16);
  a.pp_bytes = 1e8;
  SnapshotJob b = a;
  const TodayJob ta = apply_today(a, 101), tb = apply_today(b, 101);
  assert_true(ta.phase == tb.phase);  // same seed and name: same draw, same model
  assert_true(ta.model == tb.model && ta.moe == tb.moe && a.layout == b.layout && a.dp_bytes == b.dp_bytes);
  // Different seeds give different phases; draws are uniform in [0, 1).
  int differ = 0;
  double sum = 0;
  const int N = 2000;
  for (int s = 0; s < N; ++s) {
    const double u = unit_draw(uint64_t(s), "j42", 1);
    assert_true(u >= 0 && u < 1);
    sum += u;
    differ += u != ta.phase;
  }
  assert_true(differ >= N - 1);
  assert_true(std::abs(sum / N - 0.5) < 0.03);
  // The MoE share over many jobs is near the stated 25%: the workload's draw gives ep > 1 and
  // today's traffic makes such a job a MoE model (one fits this layout); ep 1 stays dense.
  int moe = 0;
  for (int j = 0; j < N; ++j) {
    SnapshotJob x = a;
    x.name = "j" + std::to_string(j);
    x.layout.ep = workload_ep(7, x.name, x.layout);
    const bool drawn = x.layout.ep > 1;
    assert_true(!drawn || x.layout.ep == 8);  // cp*dp = 8: the largest of 8, 4, 2 dividing it
    const bool got = apply_today(x, 7).moe;
    assert_true(got == drawn);
    moe += got;
  }
  assert_true(std::abs(double(moe) / N - kMoeShare) < 0.04);
  // Dense unless the draw says MoE: no ep divides cp*dp = 3, so the job stays dense whatever the draw.
  for (int j = 0; j < 200; ++j) assert_int_equal(workload_ep(7, "j" + std::to_string(j), parse_layout("tp=8,dp=3")), 1);
}

static void test_model_sizes_fit(void **) {
  const TodayParams p;
  const double budget = p.state_share * p.gpu_bytes;
  // tp*pp = 8: 60 GB / 16 B = 3.75 G params per GPU, 30 G in all: 13B fits, 34B does not.
  const ModelSize *m = largest_fitting(parse_layout("tp=8,pp=1,dp=4"), 1, false);
  assert_non_null(m);
  assert_string_equal(m->name, "13B");
  // tp*pp = 64: 240 G: 175B fits, 405B does not.
  m = largest_fitting(parse_layout("tp=8,pp=8,dp=2"), 1, false);
  assert_non_null(m);
  assert_string_equal(m->name, "175B");
  // Every layout's pick fits, and the next larger model of its kind does not.
  for (uint32_t pp : {1u, 2u, 4u, 8u, 16u})
    for (uint32_t ep : {1u, 8u}) {
      const Layout l = parse_layout("tp=8,pp=" + std::to_string(pp) + ",dp=8");
      const ModelSize *got = largest_fitting(l, ep, ep > 1);
      assert_non_null(got);
      assert_true(state_bytes_per_gpu(*got, l, ep) <= budget);
      const auto &all = model_sizes();
      const size_t i = size_t(got - all.data());
      if (i + 1 < all.size() && (all[i + 1].expert_params > 0) == (ep > 1))
        assert_true(state_bytes_per_gpu(all[i + 1], l, ep) > budget);
    }
  // A MoE job: ep divides cp*dp, dp_bytes are the bf16 gradients of its shard.
  SnapshotJob j;
  j.layout = parse_layout("tp=8,pp=2,dp=8");
  j.nodes.resize(16);
  j.pp_bytes = 1e8;
  for (int k = 0; k < 200; ++k) {
    SnapshotJob x = j;
    x.name = "m" + std::to_string(k);
    x.layout.ep = workload_ep(3, x.name, x.layout);
    const TodayJob t = apply_today(x, 3);
    assert_non_null(t.model);
    assert_int_equal((x.layout.cp * x.layout.dp) % x.layout.ep, 0);
    assert_true(t.moe == (x.layout.ep > 1));
    assert_true(t.moe == (x.ep_bytes > 0));
    const double want = 2 * (t.model->dense_params / 16 + t.model->expert_params / (16.0 * x.layout.ep));
    assert_true(std::abs(x.dp_bytes / want - 1) < 1e-12);
  }
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_per_nic_rings),
      cmocka_unit_test(test_tp_in_nvlink_domain),
      cmocka_unit_test(test_ep_all_to_all),
      cmocka_unit_test(test_phases_reproducible),
      cmocka_unit_test(test_model_sizes_fit),
      cmocka_unit_test(test_as_routed_follows_tables),
      cmocka_unit_test(test_as_routed_base_lid),
      cmocka_unit_test(test_as_routed_errors),
      cmocka_unit_test(test_routing_names),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
