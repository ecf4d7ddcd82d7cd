// SPDX-License-Identifier: GPL-2.0-or-later
// Placement and rank order on fabrics with multi-node NVLink domains (GB200/GB300 NVL72: trays of 4
// GPUs, 18 per domain), the domains assigned as `topoaware generate --nvlink-domain-size N
// --nvlink-gpus-per-node 4` does (synthetic_nvlink_domains): every TP group's nodes in one domain, a
// job that fits one domain in one, larger jobs on whole domains, busy nodes, refusals.
#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cmocka_cxx.hpp"
#include "engine_topologies.hpp"
#include "nvlink.hpp"
#include "placement.hpp"
#include "policies.hpp"
#include "select_policy.hpp"

using namespace topoaware;

namespace {

Topology nvl(int groups, int hosts_per_group, int domain_size, int pods = 0) {
  Topology t = enginetest::make_topology(pods, groups, hosts_per_group);
  apply_nvlink_domains(t, synthetic_nvlink_domains(t, domain_size, 4), nullptr, nullptr);
  return t;
}

Job J(uint32_t tp, uint32_t pp, uint32_t dp, uint32_t gpn = 4) {
  Job j;
  j.layout.tp = tp;
  j.layout.pp = pp;
  j.layout.dp = dp;
  j.gpus_per_node = gpn;
  j.nodes = uint32_t(j.layout.world() / gpn);
  return j;
}

// All hosts free except `busy`.
PlaceResult place_all(Placer &p, const Topology &t, const Job &job, const std::set<int> &busy = {},
                      PlaceMode mode = PlaceMode::Prefer) {
  std::vector<int> hosts;
  std::vector<uint32_t> gpus;
  for (int h = 0; h < int(t.hosts.size()); ++h)
    if (!busy.count(h)) hosts.push_back(h), gpus.push_back(4);
  PlaceResult r;
  p.place(hosts.data(), gpus.data(), hosts.size(), job, mode, r);
  return r;
}

// Every TP group (tp / 4 consecutive nodes of the order) in one domain; returns the domains used.
std::set<int> check_tp_groups(const Topology &t, const PlaceResult &r, const Job &job) {
  const uint32_t k = tp_group_nodes(job.layout, job.gpus_per_node);
  assert_int_equal(r.nodes.size(), job.nodes);
  std::set<int> domains;
  for (size_t j = 0; j < r.nodes.size(); j += k) {
    const int d = t.hosts[size_t(r.nodes[j])].nvlink_domain;
    assert_true(d >= 0);
    for (size_t i = j; i < j + k; ++i) assert_int_equal(t.hosts[size_t(r.nodes[i])].nvlink_domain, d);
  }
  for (int h : r.nodes) domains.insert(t.hosts[size_t(h)].nvlink_domain);
  return domains;
}

// tp=8 on 4-GPU trays: TP groups are pairs of nodes of one domain; the job fits one domain.
void test_tp8_pairs(void **) {
  const Topology t = nvl(4, 18, 18);  // 4 leaves x 18 trays, one NVL72 domain per leaf
  TopoIndex ix(t);
  assert_true(ix.has_domains());
  assert_int_equal(ix.domain_count(), 4);
  Placer p(ix);
  const Job job = J(8, 1, 4);  // 8 nodes
  const PlaceResult r = place_all(p, t, job);
  assert_int_equal(int(r.status), int(PlaceStatus::Ideal));
  assert_int_equal(check_tp_groups(t, r, job).size(), 1);
  assert_int_equal(r.quality.leaf_groups, 1);
}

// Domains of 2 trays: tp=16 (4 trays) is refused at submit, and the engine finds no block.
void test_tp16_small_domains(void **) {
  const Topology t = nvl(2, 8, 2);
  std::vector<uint32_t> sizes;
  for (const auto &d : t.nvlink_domains) sizes.push_back(uint32_t(d.hosts.size()));
  try {
    complete_request(J(16, 1, 1).layout, Request{}, 4, sizes);
    fail_msg("tp=16 accepted on domains of 2 nodes");
  } catch (const LayoutError &e) {
    assert_non_null(std::strstr(e.what(), "tp=16 spans 4 nodes of 4 GPUs"));
    assert_non_null(std::strstr(e.what(), "the largest NVLink domain here has 8 GPUs (2 nodes of 4): use tp=1, 2 or 4, or a multiple of 4 up to 8"));
  }
  complete_request(J(8, 1, 1).layout, Request{}, 4, sizes);  // a pair fits
  TopoIndex ix(t);
  Placer p(ix);
  const PlaceResult r = place_all(p, t, J(16, 1, 1));
  assert_int_equal(int(r.status), int(PlaceStatus::NoNodes));
  const PlaceResult ok = place_all(p, t, J(8, 1, 2));  // two pairs: two domains
  assert_int_equal(check_tp_groups(t, ok, J(8, 1, 2)).size(), 2);
}

// Busy trays inside domains: a domain with an odd number of free trays offers only whole pairs, and
// the tightest domain that holds the job is taken, leaving whole domains whole.
void test_busy_inside_domains(void **) {
  const Topology t = nvl(4, 18, 18);
  TopoIndex ix(t);
  Placer p(ix);
  // domain 0: 13 free (12 usable in pairs), domain 1: 17 free, domains 2, 3 whole
  std::set<int> busy{0, 1, 2, 3, 4, 18};
  const Job job = J(8, 1, 6);  // 12 nodes
  const PlaceResult r = place_all(p, t, job, busy);
  assert_int_equal(int(r.status), int(PlaceStatus::Ideal));
  const std::set<int> d = check_tp_groups(t, r, job);
  assert_int_equal(d.size(), 1);
  assert_int_equal(*d.begin(), 0);  // the tightest: 12 usable, exactly the job
  for (int h : r.nodes) assert_true(!busy.count(h));
  // 14 nodes no longer fit domain 0 (12 usable in pairs): domain 1 (17 free, 16 usable)
  const Job j14 = J(8, 1, 7);
  const PlaceResult r14 = place_all(p, t, j14, busy);
  const std::set<int> d14 = check_tp_groups(t, r14, j14);
  assert_int_equal(d14.size(), 1);
  assert_int_equal(*d14.begin(), 1);
}

// A job larger than one domain takes whole domains, under as few leaf groups (and pods) as it can,
// and the tightest domain for the remainder.
void test_larger_than_domain(void **) {
  const Topology t = nvl(4, 18, 18, 2);  // 2 pods x 4 leaf groups of 18 trays: 8 domains
  TopoIndex ix(t);
  Placer p(ix);
  const Job job = J(8, 1, 18);  // 36 trays: two whole domains
  const PlaceResult r = place_all(p, t, job);
  assert_int_equal(int(r.status), int(PlaceStatus::Ideal));
  assert_int_equal(check_tp_groups(t, r, job).size(), 2);
  assert_int_equal(r.quality.leaf_groups, 2);
  assert_int_equal(r.quality.pods, 1);
  // 40 trays: two whole domains and 4 of a third (the tightest: domain 0 with 6 free)
  std::set<int> busy;
  for (int h = 0; h < 12; ++h) busy.insert(h);
  const Job j40 = J(8, 1, 20);
  const PlaceResult r40 = place_all(p, t, j40, busy);
  const std::set<int> d40 = check_tp_groups(t, r40, j40);
  assert_int_equal(d40.size(), 3);
  assert_true(d40.count(0));
  uint32_t in0 = 0;
  for (int h : r40.nodes) in0 += t.hosts[size_t(h)].nvlink_domain == 0;
  assert_int_equal(in0, 4);
  assert_int_equal(r40.quality.pods, 1);
  // domains that straddle leaves (18 trays on leaves of 16): TP groups still never leave a domain
  const Topology s = nvl(9, 16, 18);
  TopoIndex sx(s);
  Placer sp(sx);
  const Job j72 = J(72, 1, 2);  // two whole domains, each TP group one domain
  const PlaceResult r72 = place_all(sp, s, j72);
  assert_int_equal(check_tp_groups(s, r72, j72).size(), 2);
}

// The rank order from the node set alone (what the SPANK plugin computes): grouped by domain, and a
// set that would split a TP group over two domains is refused, never ranked.
void test_rank_order_domains(void **) {
  const Topology t = nvl(2, 8, 4);  // 4 domains of 4 trays
  TopoIndex ix(t);
  RankOrderer ro(ix);
  Layout l;
  l.tp = 8;
  l.dp = 4;  // 8 nodes
  std::vector<int> out;
  ro.order({9, 0, 8, 1, 2, 10, 3, 11}, l, out);  // two whole domains, shuffled
  const std::vector<int> want{0, 1, 2, 3, 8, 9, 10, 11};
  assert_true(out == want);
  ro.order({0, 1, 4, 5, 8, 9, 12, 13}, l, out);  // pairs of four domains
  assert_true((out == std::vector<int>{0, 1, 4, 5, 8, 9, 12, 13}));
  try {
    ro.order({0, 1, 2, 4, 5, 6, 8, 9}, l, out);  // 3 + 3 + 2: a pair would straddle domains
    fail_msg("a TP group across two NVLink domains was ranked");
  } catch (const LayoutError &e) {
    assert_non_null(std::strstr(e.what(), "whole TP groups of 2 nodes inside NVLink domains"));
  }
  // tp inside a node: any set is ranked, grouped by domain
  l.tp = 4;
  l.dp = 8;
  ro.order({4, 0, 5, 1, 8, 12, 2, 6}, l, out);
  assert_true((out == std::vector<int>{0, 1, 2, 4, 5, 6, 8, 12}));
}

// The select plugin's decision never hands a job whose TP groups span nodes to plain cons_tres
// (which knows no domains): with no room it waits.
void test_select_never_plain(void **) {
  const Topology t = nvl(2, 8, 4);
  TopoIndex ix(t);
  std::vector<std::string> names;
  for (const Host &h : t.hosts) names.push_back(h.name);
  NodeMap map(ix, names);
  const auto p = make_placement_policy("topoaware", ix);
  // every domain has 3 free trays of 4: no room for tp=16 (4 trays)
  std::vector<uint64_t> usable(1, 0);
  std::vector<uint16_t> free_now(names.size(), 4);
  for (size_t i = 0; i < names.size(); ++i)
    if (i % 4 != 3) usable[0] |= uint64_t(1) << i;
  SelectRequest req;
  req.job = J(16, 1, 1);
  req.now = 1000;
  req.deadline = 1000;
  req.usable = usable.data();
  req.nbits = names.size();
  req.free_now = free_now.data();
  int plain = 0, blocks = 0;
  SelectBackend be;
  be.try_block = [&](const std::vector<int> &, int64_t *) { return ++blocks, true; };
  be.keep_best = [] {};
  be.try_plain = [&](bool, int64_t *, int *) { return ++plain, true; };
  be.clock_ms = [] { return uint64_t(0); };
  be.wall_s = [] { return int64_t(1000); };
  SelectSettings set;
  SelectAnswer a = select_decide(*p, map, req, set, be);
  assert_int_equal(int(a.verdict), int(SelectVerdict::Wait));
  assert_int_equal(plain, 0);
  assert_non_null(std::strstr(a.wait.c_str(), "no NVLink domains with room for its TP groups of 4 nodes"));
  // with one whole domain free it gets a block inside it
  usable[0] |= uint64_t(1) << 3;
  a = select_decide(*p, map, req, set, be);
  assert_int_equal(int(a.verdict), int(SelectVerdict::Block));
  assert_int_equal(plain, 0);
}

// The keys of the choice among units, on hand-made units: the unit for a job that fits one is the
// tightest, a domain before hosts in none of the same size, then canonical order; a job that no
// unit holds takes the largest first, domains first among equals, then canonical order.
void test_domain_unit_ranks(void **) {
  const auto unit = [](uint32_t avail, bool domain, uint32_t first) {
    DomainUnit u;
    u.avail = avail;
    u.domain = domain;
    u.first = first;
    return u;
  };
  // Listed in neither key's order: index 0..4.
  const std::vector<DomainUnit> units = {unit(8, true, 40), unit(8, false, 0), unit(6, true, 60), unit(8, true, 20),
                                         unit(12, false, 10)};
  const auto order = [&units](auto key) {
    std::vector<int> idx = {0, 1, 2, 3, 4};
    std::sort(idx.begin(), idx.end(), [&](int a, int b) { return key(units[size_t(a)]) < key(units[size_t(b)]); });
    return idx;
  };
  // Tightest first (6); among the 8s the domains (canonical order: 20 before 40), then hosts in
  // no domain although their first host comes earliest; the largest last.
  assert_true((order(domain_unit_fit_rank) == std::vector<int>{2, 3, 0, 1, 4}));
  // Largest first (12, hosts in no domain: size comes before kind); then the 8s as above; the
  // smallest last.
  assert_true((order(domain_unit_take_rank) == std::vector<int>{4, 3, 0, 1, 2}));
  // The kind and the canonical rank only break ties of size.
  assert_true(domain_unit_fit_rank(unit(4, false, 99)) < domain_unit_fit_rank(unit(5, true, 0)));
  assert_true(domain_unit_take_rank(unit(5, false, 99)) < domain_unit_take_rank(unit(4, true, 0)));
  assert_true(domain_unit_fit_rank(unit(4, true, 7)) < domain_unit_fit_rank(unit(4, true, 8)));
}


// A job that no domain holds spreads by leaf group first: traffic between domains under one leaf
// switch stays on it, between leaf groups it crosses uplinks (where static routes collide). Two
// domains per leaf group; free trays: leaf group 0 has 10 + 10, group 1 12 (its other domain
// busy), group 2 14, group 3 none. A 20-tray job fits no domain but fits leaf group 0 alone;
// taking the largest domains anywhere (14, then the tightest that holds the rest) would use two
// leaf groups. The same for tp = 8 (pairs of trays).
void test_spread_by_leaf_group(void **) {
  const Topology t = nvl(4, 36, 18);
  TopoIndex ix(t);
  assert_int_equal(ix.domain_count(), 8);
  // free trays wanted per domain, by the leaf group of its hosts and its order in the group
  std::vector<int> dom_lg(8, -1), free_of(8, 0);
  for (const auto &h : t.hosts) dom_lg[size_t(h.nvlink_domain)] = ix.host_leaf_group(int(&h - &t.hosts[0]));
  std::vector<std::vector<int>> lg_doms(4);
  for (int d = 0; d < 8; ++d) lg_doms[size_t(dom_lg[size_t(d)])].push_back(d);
  for (const auto &ds : lg_doms) assert_int_equal(ds.size(), 2);
  free_of[size_t(lg_doms[0][0])] = 10, free_of[size_t(lg_doms[0][1])] = 10;
  free_of[size_t(lg_doms[1][0])] = 12;
  free_of[size_t(lg_doms[2][1])] = 14;
  std::set<int> busy;
  std::vector<int> seen(8, 0);
  for (int h = 0; h < int(t.hosts.size()); ++h) {
    const int d = t.hosts[size_t(h)].nvlink_domain;
    if (seen[size_t(d)]++ >= free_of[size_t(d)]) busy.insert(h);
  }
  Placer p(ix);
  for (uint32_t tp : {4u, 8u}) {
    const Job job = J(tp, 1, 80 / tp);  // 20 trays
    const PlaceResult r = place_all(p, t, job, busy);
    const std::set<int> doms = check_tp_groups(t, r, job);
    assert_true((doms == std::set<int>{lg_doms[0][0], lg_doms[0][1]}));
    assert_int_equal(r.quality.leaf_groups, 1);
    for (int h : r.nodes) assert_false(busy.count(h));
  }
}
}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tp8_pairs),           cmocka_unit_test(test_tp16_small_domains),
      cmocka_unit_test(test_busy_inside_domains), cmocka_unit_test(test_larger_than_domain),
      cmocka_unit_test(test_rank_order_domains),  cmocka_unit_test(test_select_never_plain),
      cmocka_unit_test(test_domain_unit_ranks),  cmocka_unit_test(test_spread_by_leaf_group),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
