// SPDX-License-Identifier: GPL-2.0-or-later
// Congestion from counter deltas, and the jobs behind it (corelib/congestion).
//
// The fabric: 4 leaves x 4 hosts, 2 spines, 2 cables from each leaf to each spine, HDR 4x (200 Gb/s
// data rate), forwarding tables as tests/engine_topologies.hpp programs them (LIDs in a seeded
// order, destinations balanced over uplinks). Which uplink a flow takes is read from the tables
// with RouteTracer, never assumed here.
#include <map>
#include <set>
#include <string>

#include "congestion.hpp"
#include "congestion_out.hpp"
#include "engine_topologies.hpp"
#include "layout.hpp"
#include "route_trace.hpp"
#include "topology.hpp"
#include "traffic.hpp"
// cmocka last: its macros clash with names in the C++ headers.
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

Topology fabric() {
  Topology t = enginetest::make_topology(0, 4, 4);
  enginetest::add_spines(t, 2, 2);
  enginetest::add_test_routes(t, 7);
  for (Host &h : t.hosts)
    for (HcaPort &p : h.ports) {
      p.width = 4;
      p.speed = LinkSpeed::HDR;
    }
  return t;
}

// Two snapshots of every sampled port: all zero, then `words` sent by the ports given.
struct Pair {
  CounterSnapshot a, b;
};
Pair snapshots(const Topology &t, double seconds) {
  Pair p;
  p.a.time_s = 1000;
  p.b.time_s = 1000 + seconds;
  for (const auto &[sw, port] : sampled_ports(t)) {
    PortSample s;
    s.sw = sw;
    s.port = port;
    s.ok = s.wide = true;
    p.a.ports.push_back(s);
    p.b.ports.push_back(s);
  }
  return p;
}
PortSample &at(CounterSnapshot &s, int sw, int port) {
  for (PortSample &p : s.ports)
    if (p.sw == sw && p.port == port) return p;
  fail_msg("port %d/%d not sampled", sw, port);
  return s.ports.front();
}
const LinkLoad &load(const CongestionReport &r, int sw, int port) {
  for (const LinkLoad &l : r.links)
    if (l.sw == sw && l.port == port) return l;
  fail_msg("port %d/%d not in the report", sw, port);
  return r.links.front();
}
// An uplink port of a leaf (a port cabled to a spine).
std::vector<int> uplinks(const Topology &t, int leaf) {
  const RouteTracer tr(t);
  std::vector<int> v;
  for (int p = 1; p < 256; ++p) {
    auto peer = tr.peer(leaf, p);
    if (peer.kind == RouteTracer::Peer::Switch) v.push_back(p);
  }
  return v;
}

void sampled_ports_are_every_cabled_switch_port(void **) {
  const Topology t = fabric();
  // 16 host cables + 4 leaves x 4 uplinks on the leaf side + the same on the spine side.
  assert_int_equal(sampled_ports(t).size(), 16 + 16 + 16);
}

void utilization_and_wait_ratio(void **) {
  const Topology t = fabric();
  Pair p = snapshots(t, 10);
  const int up = uplinks(t, 0)[0];
  // 80% of 200 Gb/s over 10 s = 160e9 * 10 / 32 words.
  at(p.b, 0, up).xmit_words = uint64_t(160e9 * 10 / 32);
  // 30% with a wait ratio of 0.5 ticks per word.
  const int up2 = uplinks(t, 0)[1];
  at(p.b, 0, up2).xmit_words = uint64_t(60e9 * 10 / 32);
  at(p.b, 0, up2).xmit_wait = uint64_t(60e9 * 10 / 32 / 2);
  // 50%, no wait: busy, not congested.
  const int up3 = uplinks(t, 1)[0];
  at(p.b, 1, up3).xmit_words = uint64_t(100e9 * 10 / 32);
  const CongestionReport r = link_loads(t, p.a, p.b, CongestionThresholds{});
  assert_int_equal(r.ports_measured, r.ports_sampled);
  const LinkLoad &a = load(r, 0, up), &b = load(r, 0, up2), &c = load(r, 1, up3);
  assert_true(a.gbps == 200);
  assert_true(std::abs(a.utilization - 0.8) < 1e-9);
  assert_true(a.congested);
  assert_true(std::abs(b.utilization - 0.3) < 1e-9);
  assert_true(std::abs(b.wait_ratio - 0.5) < 1e-9);
  assert_true(b.congested);
  assert_true(std::abs(c.utilization - 0.5) < 1e-9);
  assert_false(c.congested);
  assert_int_equal(r.congested(), 2);
  // Stricter thresholds: the 50% one too.
  CongestionThresholds th;
  th.utilization = 0.5;
  assert_int_equal(link_loads(t, p.a, p.b, th).congested(), 3);
}

void resets_saturation_and_missing_answers_are_notes(void **) {
  const Topology t = fabric();
  Pair p = snapshots(t, 10);
  const auto ups = uplinks(t, 2);
  at(p.a, 2, ups[0]).xmit_words = 1000;  // lower after: a reset
  at(p.b, 2, ups[0]).xmit_words = 10;
  PortSample &narrow_a = at(p.a, 2, ups[1]), &narrow_b = at(p.b, 2, ups[1]);
  narrow_a.wide = narrow_b.wide = false;
  narrow_b.xmit_words = 0xffffffffu;  // 32-bit counter at its maximum
  at(p.b, 2, ups[2]).ok = false;
  at(p.b, 2, ups[2]).error = "no answer after 3 tries";
  at(p.b, 2, ups[3]).wide = false;  // width changed between the readings
  // Error counters: a rise is reported, a lower value (a reset) counts from zero.
  const int host_port = 1;
  at(p.a, 2, host_port).errors[0] = 7;
  at(p.b, 2, host_port).errors[0] = 12;  // SymbolErrorCounter +5
  at(p.a, 2, host_port).errors[2] = 9;
  at(p.b, 2, host_port).errors[2] = 2;   // LinkDownedCounter reset, then 2
  const CongestionReport r = link_loads(t, p.a, p.b, CongestionThresholds{});
  assert_int_equal(r.ports_measured, r.ports_sampled - 4);
  assert_int_equal(r.problems.size(), 4);
  assert_false(load(r, 2, ups[0]).measured);
  assert_true(load(r, 2, ups[0]).note.find("reset") != std::string::npos);
  assert_true(load(r, 2, ups[1]).note.find("saturated") != std::string::npos);
  assert_true(load(r, 2, ups[2]).note.find("no answer") != std::string::npos);
  assert_true(load(r, 2, ups[3]).note.find("width") != std::string::npos);
  assert_int_equal(r.congested(), 0);
  const LinkLoad &h = load(r, 2, host_port);
  assert_int_equal(h.errors.size(), 2);
  assert_string_equal(h.errors[0].first.c_str(), "SymbolErrorCounter");
  assert_int_equal(h.errors[0].second, 5);
  assert_string_equal(h.errors[1].first.c_str(), "LinkDownedCounter");
  assert_int_equal(h.errors[1].second, 2);
  assert_int_equal(r.ports_with_errors, 1);
  assert_contains(congestion_text(t, r, 5), "SymbolErrorCounter +5");
  // No time between the readings: nothing measured, nothing divided by zero.
  p.b.time_s = p.a.time_s;
  assert_int_equal(link_loads(t, p.a, p.b, CongestionThresholds{}).ports_measured, 0);
}

RunningJob layout_job(const Topology &t, uint32_t id, std::vector<int> nodes) {
  RunningJob j;
  j.job_id = id;
  j.known = true;
  j.step.layout = parse_layout("tp=8,dp=" + std::to_string(nodes.size()));
  j.step.nodes = nodes;
  j.step.dp_bytes = 1e9;
  j.hosts = nodes;
  (void)t;
  return j;
}

void jobs_are_named_on_the_directions_they_cross(void **) {
  const Topology t = fabric();
  Pair p = snapshots(t, 10);
  // Job 7 on two hosts of leaf 0 and two of leaf 1; job 9 inside leaf 3 only.
  const RunningJob j7 = layout_job(t, 7, {0, 1, 4, 5}), j9 = layout_job(t, 9, {12, 13});
  RunningJob unknown;
  unknown.job_id = 11;
  unknown.hosts = {8, 9};  // leaf 2
  // Every uplink of leaves 0 and 1 congested: every cross-leaf byte of job 7 takes one of them.
  for (int leaf : {0, 1})
    for (int up : uplinks(t, leaf)) at(p.b, leaf, up).xmit_words = uint64_t(190e9 * 10 / 32);
  CongestionReport r = link_loads(t, p.a, p.b, CongestionThresholds{});
  attribute_jobs(t, {j7, j9, unknown}, r);
  assert_int_equal(r.jobs.size(), 3);
  const JobCongestion &c7 = r.jobs[0], &c9 = r.jobs[1], &c11 = r.jobs[2];
  assert_int_equal(c7.job_id, 7);
  assert_true(c7.known);
  assert_true(c7.note.empty());
  // The DP rings: 8 rings of 4 members, each crossing between the leaves twice per ring.
  assert_true(c7.cross_leaf_bytes > 0);
  assert_true(std::abs(c7.share() - 1.0) < 1e-12);
  assert_false(c7.hot_cables.empty());
  assert_int_equal(c9.job_id, 9);
  assert_true(c9.cross_leaf_bytes == 0);  // inside one leaf
  assert_true(c9.share() == 0);
  assert_false(c11.known);
  // Each direction lists exactly the jobs whose flows take it (traced here with RouteTracer): job 7
  // on leaves 0 and 1 and the uplinks between, job 9 on leaf 3's cables to its hosts only.
  const RouteTracer tr(t);
  std::map<std::pair<int, int>, std::set<uint32_t>> taken;
  for (const RunningJob *j : {&j7, &j9}) {
    const JobTraffic traffic = job_traffic(t, j->step);
    for (const Flow &f : traffic.phase[int(TrafficPhase::DP)]) {
      const TracedRoute route = tr.trace(f.src_host, f.src_port, f.dst_host, f.dst_port);
      assert_true(route.ok());
      for (const RouteHop &h : route.hops) taken[{h.sw, h.out_port}].insert(j->job_id);
    }
  }
  assert_false(taken.empty());
  for (const LinkLoad &l : r.links) {
    std::set<uint32_t> named;
    for (const auto &[id, bytes] : l.jobs) named.insert(id);
    const auto it = taken.find({l.sw, l.port});
    if (named != (it == taken.end() ? std::set<uint32_t>{} : it->second))
      fail_msg("%s: %zu jobs named, %zu traced", link_name(t, l).c_str(), named.size(),
               it == taken.end() ? size_t(0) : it->second.size());
    if (named.count(9)) assert_int_equal(l.sw, 3);
    // The unknown job (hosts on leaf 2) is listed only where leaf 2 is an end and the direction is
    // congested: none of leaf 2's cables are.
    assert_true(l.unknown_jobs.empty());
  }
  // Congest one uplink of leaf 2: the unknown job is listed there, job 7's share stays.
  at(p.b, 2, uplinks(t, 2)[0]).xmit_words = uint64_t(190e9 * 10 / 32);
  r = link_loads(t, p.a, p.b, CongestionThresholds{});
  attribute_jobs(t, {j7, j9, unknown}, r);
  assert_int_equal(load(r, 2, uplinks(t, 2)[0]).unknown_jobs.size(), 1);
  assert_int_equal(load(r, 2, uplinks(t, 2)[0]).unknown_jobs[0], 11);
  // Only one uplink of leaf 0 congested: a part of job 7's bytes, not all, not none.
  p = snapshots(t, 10);
  at(p.b, 0, uplinks(t, 0)[0]).xmit_words = uint64_t(190e9 * 10 / 32);
  r = link_loads(t, p.a, p.b, CongestionThresholds{});
  attribute_jobs(t, {j7}, r);
  const bool crosses = taken.count({0, uplinks(t, 0)[0]}) > 0 && taken[{0, uplinks(t, 0)[0]}].count(7);
  if (crosses) {
    assert_true(r.jobs[0].share() > 0 && r.jobs[0].share() < 1);
  } else {
    assert_true(r.jobs[0].share() == 0);
  }
}

void without_routes_the_jobs_say_so(void **) {
  Topology t = fabric();
  Pair p = snapshots(t, 10);
  t.routes = Routes{};
  CongestionReport r = link_loads(t, p.a, p.b, CongestionThresholds{});
  attribute_jobs(t, {layout_job(t, 5, {0, 4})}, r);
  assert_true(r.jobs[0].note.find("could not be traced") != std::string::npos);
  assert_true(r.jobs[0].note.find("--routes") != std::string::npos);
}

void state_round_trip_and_other_fabric(void **) {
  const Topology t = fabric();
  Pair p = snapshots(t, 3);
  p.b.ports[3].xmit_words = 123456789012345ull;
  p.b.ports[3].errors[11] = 65535;
  p.b.ports[4].ok = false;
  p.b.ports[4].error = "no answer";
  const std::string text = snapshot_to_json(p.b, "sha256:abc");
  bool same = false;
  const CounterSnapshot back = snapshot_from_json(text, "sha256:abc", same);
  assert_true(same);
  assert_int_equal(back.ports.size(), p.b.ports.size());
  assert_true(back.ports[3].xmit_words == 123456789012345ull);
  assert_int_equal(back.ports[3].errors[11], 65535);
  assert_false(back.ports[4].ok);
  assert_string_equal(back.ports[4].error.c_str(), "no answer");
  assert_true(snapshot_to_json(back, "sha256:abc") == text);
  snapshot_from_json(text, "sha256:other", same);
  assert_false(same);
  bool threw = false;
  try {
    snapshot_from_json("{\"schema\":\"topoaware-counters/2\",\"topology_hash\":\"sha256:abc\",\"time\":1,"
                       "\"duration\":0,\"ports\":[[1,2,3,4]]}",
                       "sha256:abc", same);
  } catch (const std::runtime_error &) {
    threw = true;
  }
  assert_true(threw);
}

void prometheus_label_sets_stay_bounded(void **) {
  const Topology t = fabric();
  Pair p = snapshots(t, 10);
  // Every port busy at 50%: not congested; only --top of them get series.
  for (PortSample &s : p.b.ports) s.xmit_words = uint64_t(100e9 * 10 / 32);
  CongestionReport r = link_loads(t, p.a, p.b, CongestionThresholds{});
  attribute_jobs(t, {}, r);
  const std::string text = congestion_prometheus(t, r, 5);
  size_t series = 0;
  for (size_t at = 0; (at = text.find("\ntopoaware_link_direction_utilization{", at)) != std::string::npos; ++at)
    ++series;
  assert_int_equal(series, 5);
  assert_true(text.find("topoaware_link_utilization_ratio_count 48\n") != std::string::npos);
  assert_true(text.find("topoaware_fabric_congested_directions 0\n") != std::string::npos);
}

// 40 leaves x 32 uplinks: 2,560 switch-to-switch directions, every one congested: still 1,000
// per-direction series (the worst), and the fabric-wide count says how many there are.
void prometheus_caps_the_congested_series(void **) {
  Topology t = enginetest::make_topology(0, 40, 4);
  enginetest::add_spines(t, 2, 16);
  CounterSnapshot a, b;
  a.time_s = 0;
  b.time_s = 1;
  for (const auto &[sw, port] : sampled_ports(t)) {
    PortSample s;
    s.sw = sw;
    s.port = port;
    s.ok = s.wide = true;
    a.ports.push_back(s);
    s.xmit_words = uint64_t(195e9 / 32) - uint64_t(port);  // all above 80%, not all equal
    b.ports.push_back(s);
  }
  CongestionReport r = link_loads(t, a, b, CongestionThresholds{});
  assert_int_equal(r.congested(), 2560);
  const std::string text = congestion_prometheus(t, r, 20);
  size_t series = 0;
  for (size_t at = 0; (at = text.find("\ntopoaware_link_direction_congested{", at)) != std::string::npos; ++at)
    ++series;
  assert_int_equal(series, 1000);
  assert_contains(text, "topoaware_fabric_congested_directions 2560\n");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sampled_ports_are_every_cabled_switch_port),
      cmocka_unit_test(utilization_and_wait_ratio),
      cmocka_unit_test(resets_saturation_and_missing_answers_are_notes),
      cmocka_unit_test(jobs_are_named_on_the_directions_they_cross),
      cmocka_unit_test(without_routes_the_jobs_say_so),
      cmocka_unit_test(state_round_trip_and_other_fabric),
      cmocka_unit_test(prometheus_label_sets_stay_bounded),
      cmocka_unit_test(prometheus_caps_the_congested_series),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
