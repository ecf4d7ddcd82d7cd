// SPDX-License-Identifier: GPL-2.0-or-later
// C API of the engine: a topology file, Slurm's node table in its own order, the select decision
// (through C callbacks, as the select plugin calls it) and the rank order through plain C types,
// errors as messages.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cstdlib>
#include <new>
#include <stdexcept>

#include "c_api_util.hpp"
#include "cmocka_cxx.hpp"
#include "safe_folder.hpp"
#include "engine_topologies.hpp"
#include "nvlink.hpp"
#include "topoaware_c.h"
#include "topology_json.hpp"

// This test binary's operator new fails, when asked, for every allocation of at least
// fail_new_from bytes: how an exhausted heap looks to the C API's error handlers.
// Not inlined: GCC would otherwise see the free() of a pointer from operator new at every call site
// and warn of a mismatched pair (-Wmismatched-new-delete), which the pair here is not.
static size_t fail_new_from = 0;  // 0: never
__attribute__((noinline)) void *operator new(size_t n) {
  if (fail_new_from && n >= fail_new_from) throw std::bad_alloc();
  if (void *p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
__attribute__((noinline)) void operator delete(void *p) noexcept { std::free(p); }
__attribute__((noinline)) void operator delete(void *p, size_t) noexcept { std::free(p); }

namespace {

// The topology through a file, as the plugins read it.
topoaware_topo_t *load_topology(topoaware::Topology t, char *err, size_t len) {
  char path[] = "/tmp/ta-capi-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return nullptr;
  close(fd);
  topoaware::write_file_safely(path, topoaware::to_json(t));
  topoaware_topo_t *topo = topoaware_topo_load(path, err, len);
  unlink(path);
  return topo;
}

topoaware_topo_t *load(char *err, size_t len) { return load_topology(enginetest::make_topology(0, 8, 8), err, len); }

// cons_tres as the select plugin gives it to the decision: accepts every block (run-now) and
// keeps the last one; plain cons_tres refuses.
struct Backend {
  std::vector<uint32_t> last;
  int blocks = 0, plains = 0;
  std::vector<std::string> logs;
  static int try_block(void *arg, const uint32_t *nodes, uint32_t n, int64_t *) {
    auto *b = static_cast<Backend *>(arg);
    b->last.assign(nodes, nodes + n);
    b->blocks++;
    return 1;
  }
  static void keep_best(void *) {}
  static int try_plain(void *arg, int, int64_t *, int *) {
    static_cast<Backend *>(arg)->plains++;
    return 0;
  }
  static uint64_t clock_ms(void *) { return 0; }
  static int64_t wall_s(void *) { return 1000; }
  static void log(void *arg, int, int, const char *text) { static_cast<Backend *>(arg)->logs.push_back(text); }
  topoaware_select_backend_t c() { return {this, try_block, keep_best, try_plain, clock_ms, wall_s, log, nullptr}; }
};

int decide(topoaware_placer_t *p, const uint64_t *words, uint32_t nbits, const uint16_t *gpus,
           const topoaware_layout_t *l, int mode, Backend &b, topoaware_select_answer_t *a, char *err, size_t len) {
  topoaware_select_request_t r{};
  r.nodes = 8;
  r.gpus_per_node = 8;
  r.layout = l;
  r.mode = mode;
  r.now = 1000;
  r.deadline = 2000;
  r.usable = words;
  r.nbits = nbits;
  r.free_now = gpus;
  r.max_tries = 4;
  r.max_time_ms = 200;
  r.missing_mode = TOPOAWARE_MISSING_AVOID;
  const topoaware_select_backend_t be = b.c();
  return topoaware_select_decide(p, &r, &be, a, err, len);
}

topoaware_layout_t layout(uint32_t tp, uint32_t pp, uint32_t dp) {
  topoaware_layout_t l;
  l.tp = tp; l.cp = 1; l.ep = 1; l.dp = dp; l.pp = pp;
  l.order = TOPOAWARE_ORDER_TP_CP_EP_DP_PP;
  return l;
}

// The 64 hosts as a node table in reverse name order (n0064 first), as slurmctld's table need not
// follow the names. `ptrs` point into `names`.
struct NodeTable {
  std::vector<std::string> names;
  std::vector<const char *> ptrs;
};
NodeTable reverse_node_table() {
  NodeTable t;
  for (int i = 64; i >= 1; --i) {
    char b[16];
    std::snprintf(b, sizeof b, "n%04d", i);
    t.names.push_back(b);
  }
  for (auto &s : t.names) t.ptrs.push_back(s.c_str());
  return t;
}

// A MoE job's --ep reaches both sides: the select plugin's decision (order_placed) and the SPANK
// side's rank order (from the node set alone) keep the EP groups in leaf groups, and agree.
void test_ep_reaches_both_sides(void **) {
  char err[1024] = "";
  topoaware_topo_t *topo = load(err, sizeof err);
  assert_non_null(topo);
  const NodeTable nodes = reverse_node_table();
  topoaware_placer_t *p =
      topoaware_placer_create(topo, nodes.ptrs.data(), uint32_t(nodes.ptrs.size()), err, sizeof err);
  assert_non_null(p);
  // Only 8 nodes free: 2, 4 and 2 on leaves 0, 1, 2 (n0001-2, n0009-12, n0017-18 = table 63-62, 55-52, 47-46).
  uint64_t words[1] = {0};
  for (int h : {0, 1, 8, 9, 10, 11, 16, 17}) words[0] |= uint64_t(1) << (63 - h);
  std::vector<uint16_t> gpus(64, 8);
  const char *set[8] = {"n0017", "n0001", "n0010", "n0002", "n0009", "n0018", "n0011", "n0012"};
  for (uint32_t ep : {1u, 4u}) {
    topoaware_layout_t l = layout(8, 1, 8);
    l.ep = ep;
    Backend b;
    topoaware_select_answer_t a;
    assert_int_equal(decide(p, words, 64, gpus.data(), &l, TOPOAWARE_MODE_PREFER, b, &a, err, sizeof err), 0);
    assert_int_equal(a.verdict, TOPOAWARE_SELECT_BLOCK);
    assert_int_equal(b.last.size(), 8);
    // ep = 4: the leaf holding 4 first (one whole EP group), then the two pairs; ep = 1: name order.
    const char *want1[8] = {"n0001", "n0002", "n0009", "n0010", "n0011", "n0012", "n0017", "n0018"};
    const char *want4[8] = {"n0009", "n0010", "n0011", "n0012", "n0001", "n0002", "n0017", "n0018"};
    const char *const *want = ep == 4 ? want4 : want1;
    for (int k = 0; k < 8; ++k) assert_string_equal(nodes.names[b.last[size_t(k)]].c_str(), want[k]);
    uint32_t order[8];
    assert_int_equal(topoaware_rank_order(topo, set, 8, &l, order, err, sizeof err), 0);
    for (int k = 0; k < 8; ++k) assert_string_equal(set[order[k]], want[k]);
  }
  topoaware_placer_free(p);
  topoaware_topo_free(topo);
}

void test_place_and_order(void **) {
  char err[1024] = "";
  topoaware_topo_t *topo = load(err, sizeof err);
  if (!topo) print_error("%s\n", err);
  assert_non_null(topo);
  assert_int_equal(topoaware_topo_hosts(topo), 64);
  const NodeTable nodes = reverse_node_table();
  topoaware_placer_t *p =
      topoaware_placer_create(topo, nodes.ptrs.data(), uint32_t(nodes.ptrs.size()), err, sizeof err);
  assert_non_null(p);
  assert_int_equal(topoaware_placer_missing(p), 0);
  uint64_t words[1] = {0};
  std::vector<uint16_t> gpus(64, 8);
  // free: 5, 5 and 3 nodes on leaves 0, 1, 2 = n0001-5, n0009-13, n0017-19 = table 63-59, 55-51, 47-45
  for (int h : {0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 16, 17, 18}) words[0] |= uint64_t(1) << (63 - h);
  const topoaware_layout_t l = layout(8, 2, 4);
  Backend b;
  topoaware_select_answer_t a;
  assert_int_equal(decide(p, words, 64, gpus.data(), &l, TOPOAWARE_MODE_STRICT, b, &a, err, sizeof err), 0);
  assert_int_equal(a.verdict, TOPOAWARE_SELECT_BLOCK);
  assert_string_equal(a.placement, "ideal");
  assert_int_equal(a.tries, 1);
  assert_int_equal(b.plains, 0);
  const uint32_t want[8] = {63, 62, 61, 60, 55, 54, 53, 52};  // n0001-4, n0009-12, in rank order
  assert_int_equal(b.last.size(), 8);
  for (int i = 0; i < 8; ++i) assert_int_equal(b.last[size_t(i)], want[i]);
  // the SPANK side: same node set in another order gives the same order and coordinates
  const char *set[8] = {"n0012", "n0001", "n0010", "n0003", "n0011", "n0002", "n0009", "n0004"};
  uint32_t order[8];
  assert_int_equal(topoaware_rank_order(topo, set, 8, &l, order, err, sizeof err), 0);
  for (int k = 0; k < 8; ++k) assert_string_equal(set[order[k]], nodes.names[want[k]].c_str());
  topoaware_rank_t ranks[8];
  uint32_t count = 0;
  assert_int_equal(topoaware_node_ranks(topo, set, 8, &l, "n0009", ranks, 8, &count, err, sizeof err), 0);
  assert_int_equal(count, 8);
  assert_int_equal(ranks[3].rank, 35);  // node 4 of the order: ranks 32-39, pp 1, dp 0
  assert_int_equal(ranks[3].node_rank, 4);
  assert_int_equal(ranks[3].local_rank, 3);
  assert_int_equal(ranks[3].tp, 3);
  assert_int_equal(ranks[3].pp, 1);
  assert_int_equal(ranks[3].dp, 0);
  // errors come back as messages
  assert_int_equal(topoaware_node_ranks(topo, set, 8, &l, "n0099", ranks, 8, &count, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "not in the job's node list"));
  const char *bad[2] = {"n0001", "x1"};
  assert_int_equal(topoaware_rank_order(topo, bad, 2, &l, order, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "x1 is not in the topology"));
  // An engine error (tp=16 on 8-GPU nodes) never makes a job wait: plain cons_tres, and a log line.
  const topoaware_layout_t tp16 = layout(16, 1, 4);
  Backend e;
  assert_int_equal(decide(p, words, 64, gpus.data(), &tp16, TOPOAWARE_MODE_STRICT, e, &a, err, sizeof err), 0);
  assert_int_equal(e.plains, 1);
  assert_int_equal(a.verdict, TOPOAWARE_SELECT_WAIT);  // plain cons_tres refused too
  assert_true(!e.logs.empty() && std::strstr(e.logs[0].c_str(), "tp=16 needs 16 GPUs"));
  // A node table of another size than the placer's: an error, nothing decided.
  assert_int_equal(decide(p, words, 63, gpus.data(), &l, TOPOAWARE_MODE_STRICT, b, &a, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "rebuild it after a reconfigure"));
  // Nothing free, strict: it waits, with the reason for the status file.
  words[0] = 0;
  Backend w;
  assert_int_equal(decide(p, words, 64, gpus.data(), &l, TOPOAWARE_MODE_STRICT, w, &a, err, sizeof err), 0);
  assert_int_equal(a.verdict, TOPOAWARE_SELECT_WAIT);
  assert_int_equal(w.blocks + w.plains, 0);
  assert_non_null(std::strstr(a.wait, "not enough nodes with free GPUs; strict: waits until"));
  topoaware_placer_free(p);
  assert_int_equal(topoaware_topo_rail_optimized(topo), 0);
  topoaware_topo_free(topo);
  {
    topoaware_topo_t *r = load_topology(enginetest::make_topology(0, 4, 8, 4), err, sizeof err);
    assert_non_null(r);
    assert_int_equal(topoaware_topo_rail_optimized(r), 1);
    topoaware_topo_free(r);
  }
  assert_null(topoaware_topo_load("/nonexistent/topology.json", err, sizeof err));
}

// The ring book as the select plugin uses it, on a routed 4 x 8 fat tree (2 spines, 2 cables from
// each leaf to each): the first job's booked order is its order alone; a second job's edges add to
// the book; a job's edges taken off and booked again from its order as placed give the same count;
// refused input (a node not in the topology, a bad layout, a node listed twice) books nothing.
void test_ring_book(void **) {
  char err[1024] = "";
  assert_null(topoaware_ring_book_create(nullptr));
  topoaware::Topology t = enginetest::make_topology(0, 4, 8);
  enginetest::add_spines(t, 2, 2);
  enginetest::add_test_routes(t, 3);
  topoaware_topo_t *topo = load_topology(t, err, sizeof err);
  if (!topo) print_error("%s\n", err);
  assert_non_null(topo);
  topoaware_ring_book_t *book = topoaware_ring_book_create(topo);
  assert_non_null(book);
  const topoaware_layout_t l = layout(8, 1, 4);
  const char *a[4] = {"n0010", "n0001", "n0009", "n0002"}, *b[4] = {"n0003", "n0004", "n0011", "n0012"};
  uint32_t alone[4], got[4];
  assert_int_equal(topoaware_rank_order(topo, a, 4, &l, alone, err, sizeof err), 0);
  assert_int_equal(topoaware_rank_order_booked(book, 1, a, 4, &l, got, err, sizeof err), 0);
  for (int k = 0; k < 4; ++k) assert_int_equal(got[k], alone[k]);
  const uint64_t a_edges = topoaware_ring_book_edges(book);
  assert_true(a_edges > 0);  // a ring over two leaves: its two entry edges traced
  assert_int_equal(topoaware_ring_book_jobs(book), 1);
  assert_int_equal(topoaware_rank_order_booked(book, 2, b, 4, &l, got, err, sizeof err), 0);
  const uint64_t both = topoaware_ring_book_edges(book);
  assert_true(both > a_edges);
  assert_int_equal(topoaware_ring_book_jobs(book), 2);
  // A's edges off, then again from its order as placed (what a restarted slurmctld reads)
  std::string placed;
  for (int k = 0; k < 4; ++k) placed += std::string(k ? "," : "") + a[alone[k]];
  topoaware_ring_book_remove(book, 1);
  assert_int_equal(topoaware_ring_book_edges(book), both - a_edges);
  char lay[256];
  assert_int_equal(topoaware_layout_string(&l, lay, sizeof lay), 0);
  assert_int_equal(topoaware_ring_book_add_placed(book, 1, placed.c_str(), lay, err, sizeof err), 0);
  assert_int_equal(topoaware_ring_book_edges(book), both);
  // refused: nothing booked
  assert_int_equal(topoaware_ring_book_add_placed(book, 3, "n0005,x1,n0013,n0014", lay, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "x1 is not in the topology"));
  assert_int_equal(topoaware_ring_book_add_placed(book, 3, "n0005,n0006,n0013,n0014", "tp=x", err, sizeof err), -1);
  const char *twice[4] = {"n0005", "n0013", "n0005", "n0014"};
  assert_int_equal(topoaware_rank_order_booked(book, 3, twice, 4, &l, got, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "twice"));
  assert_int_equal(topoaware_ring_book_edges(book), both);
  assert_int_equal(topoaware_ring_book_jobs(book), 2);
  topoaware_ring_book_remove(book, 999);  // not booked: nothing
  topoaware_ring_book_remove(book, 1);
  topoaware_ring_book_remove(book, 2);
  assert_int_equal(topoaware_ring_book_edges(book), 0);
  assert_int_equal(topoaware_ring_book_jobs(book), 0);
  topoaware_ring_book_free(book);
  topoaware_ring_book_free(nullptr);
  topoaware_topo_free(topo);
}

// The select decision on a topology file whose leaf 1 has its uplinks trained down to 2x (half
// the bandwidth of the others): an 8-node job over two leaves gets two healthy ones.
void test_select_avoids_degraded_leaf(void **) {
  for (const bool degraded : {false, true}) {
    topoaware::Topology t = enginetest::make_topology(0, 4, 4);
    enginetest::add_spines(t, 2, 2);
    if (degraded) enginetest::degrade_leaf(t, 1, 2);
    char err[1024] = "";
    topoaware_topo_t *topo = load_topology(t, err, sizeof err);
    if (!topo) print_error("%s\n", err);
    assert_non_null(topo);
    std::vector<std::string> names;
    for (int i = 1; i <= 16; ++i) {
      char b[16];
      std::snprintf(b, sizeof b, "n%04d", i);
      names.push_back(b);
    }
    std::vector<const char *> cn;
    for (auto &s : names) cn.push_back(s.c_str());
    topoaware_placer_t *p = topoaware_placer_create(topo, cn.data(), uint32_t(cn.size()), err, sizeof err);
    assert_non_null(p);
    const uint64_t words[1] = {0xffff};
    std::vector<uint16_t> gpus(16, 8);
    const topoaware_layout_t l = layout(8, 1, 8);
    Backend b;
    topoaware_select_answer_t a;
    assert_int_equal(decide(p, words, 16, gpus.data(), &l, TOPOAWARE_MODE_STRICT, b, &a, err, sizeof err), 0);
    assert_int_equal(a.verdict, TOPOAWARE_SELECT_BLOCK);
    assert_string_equal(a.placement, "ideal");
    std::vector<uint32_t> got = b.last;
    std::sort(got.begin(), got.end());
    const std::vector<uint32_t> want = degraded ? std::vector<uint32_t>{0, 1, 2, 3, 8, 9, 10, 11}
                                                : std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7};
    assert_true(got == want);
    topoaware_placer_free(p);
    topoaware_topo_free(topo);
  }
}

std::string slurp(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return "<missing>";
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

// The last good copy: exactly the bytes the topology was read from, and only those: a file
// replaced after the load is not copied (the previous copy stays), and the copy loads again.
void test_save_copies_the_bytes_read(void **) {
  char dir[] = "/tmp/ta-capi-save-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string src = std::string(dir) + "/topology.json", copy = std::string(dir) + "/last-good.json";
  topoaware::Topology four = enginetest::make_topology(0, 4, 4), two = enginetest::make_topology(0, 2, 4);
  const std::string text = topoaware::to_json(four);
  topoaware::write_file_safely(src, text);
  char err[256] = "";
  topoaware_topo_t *topo = topoaware_topo_load(src.c_str(), err, sizeof err);
  if (!topo) fail_msg("%s", err);
  assert_int_equal(topoaware_topo_save(topo, copy.c_str(), err, sizeof err), 0);
  assert_true(slurp(copy) == text);
  topoaware_topo_t *again = topoaware_topo_load(copy.c_str(), err, sizeof err);
  assert_non_null(again);
  assert_string_equal(topoaware_topo_hash(again), topoaware_topo_hash(topo));
  topoaware_topo_free(again);
  // The file changes after the load: the save refuses, the copy keeps the old bytes.
  topoaware::write_file_safely(src, topoaware::to_json(two));
  err[0] = '\0';
  assert_int_equal(topoaware_topo_save(topo, copy.c_str(), err, sizeof err), -1);
  assert_contains(err, "changed since it was read");
  assert_true(slurp(copy) == text);
  // The source gone: refused with the reason, the copy kept.
  unlink(src.c_str());
  assert_int_equal(topoaware_topo_save(topo, copy.c_str(), err, sizeof err), -1);
  assert_contains(err, "cannot open it");
  assert_true(slurp(copy) == text);
  topoaware_topo_free(topo);
  unlink(copy.c_str());
  rmdir(dir);
}

// The NVLink domains job_submit/topoaware checks tp against: host -> domain, domains of one host
// left out, and nothing for a topology without domains.
void test_nvlink_domains(void **) {
  char dir[] = "/tmp/ta-capi-nvl-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string src = std::string(dir) + "/topology.json";
  topoaware::Topology t = enginetest::make_topology(0, 2, 5);  // n0001..n0010
  topoaware::apply_nvlink_domains(t, topoaware::synthetic_nvlink_domains(t, 4, 4), nullptr, nullptr);  // 4 + 4 + 2
  topoaware::write_file_safely(src, topoaware::to_json(t));
  char err[256] = "";
  topoaware_topo_t *topo = topoaware_topo_load(src.c_str(), err, sizeof err);
  if (!topo) fail_msg("%s", err);
  assert_int_equal(topoaware_topo_nvlink_domains(topo), 3);
  topoaware_nvlink_t *nv = topoaware_nvlink_from_topo(topo, err, sizeof err);
  assert_non_null(nv);
  topoaware_topo_free(topo);  // the domains are a copy
  assert_int_equal(topoaware_nvlink_domains(nv), 3);
  assert_int_equal(topoaware_nvlink_domain_of(nv, "n0001"), 0);
  assert_int_equal(topoaware_nvlink_domain_of(nv, "n0004"), 0);
  assert_int_equal(topoaware_nvlink_domain_of(nv, "n0005"), 1);
  assert_int_equal(topoaware_nvlink_domain_of(nv, "n0010"), 2);
  assert_int_equal(topoaware_nvlink_domain_of(nv, "n0011"), -1);
  assert_int_equal(topoaware_nvlink_domain_of(nv, nullptr), -1);
  topoaware_nvlink_free(nv);
  // without domains: none
  topoaware::Topology plain = enginetest::make_topology(0, 2, 5);
  topoaware::write_file_safely(src, topoaware::to_json(plain));
  topo = topoaware_topo_load(src.c_str(), err, sizeof err);
  assert_non_null(topo);
  assert_int_equal(topoaware_topo_nvlink_domains(topo), 0);
  nv = topoaware_nvlink_from_topo(topo, err, sizeof err);
  assert_non_null(nv);
  assert_int_equal(topoaware_nvlink_domains(nv), 0);
  assert_int_equal(topoaware_nvlink_domain_of(nv, "n0001"), -1);
  topoaware_nvlink_free(nv);
  topoaware_topo_free(topo);
  assert_null(topoaware_nvlink_from_topo(nullptr, err, sizeof err));
  unlink(src.c_str());
  rmdir(dir);
}

// A topology that holds none of Slurm's nodes (FQDNs against short names, another cluster's file)
// cannot serve the node table: topoaware_placer_check says so, with 0 of N and names of both sides.
// One node in common is enough; a table of defunct slots only asks nothing.
void test_placer_check(void **) {
  char err[1024] = "";
  topoaware_topo_t *topo = load(err, sizeof err);
  assert_non_null(topo);
  const auto check = [&](std::vector<std::string> names) {
    std::vector<const char *> cn;
    for (auto &s : names) cn.push_back(s.c_str());
    topoaware_placer_t *p = topoaware_placer_create(topo, cn.data(), uint32_t(cn.size()), err, sizeof err);
    assert_non_null(p);
    err[0] = '\0';
    const int rc = topoaware_placer_check(p, err, sizeof err);
    topoaware_placer_free(p);
    return rc;
  };
  std::vector<std::string> fqdn;
  for (int i = 1; i <= 16; ++i)
    fqdn.push_back("n" + std::string(i < 10 ? "000" : "00") + std::to_string(i) + ".example.org");
  fqdn.insert(fqdn.begin() + 1, "");  // a defunct slot is no node
  assert_int_equal(check(fqdn), -1);
  assert_string_equal(err,
                      "it holds 0 of slurmctld's 16 nodes (slurmctld's nodes: n0001.example.org, n0002.example.org, "
                      "n0003.example.org, ...; its 64 hosts: n0001, n0002, n0003, ...): another cluster's topology, "
                      "or host names other than Slurm's NodeName (FQDNs against short names?)");
  assert_int_equal(check({"other1", "other2"}), -1);
  assert_non_null(std::strstr(err, "0 of slurmctld's 2 nodes (slurmctld's nodes: other1, other2; its 64 hosts"));
  fqdn.push_back("n0064");
  assert_int_equal(check(fqdn), 0);
  assert_int_equal(check({"", ""}), 0);
  assert_int_equal(check({}), 0);
  assert_int_equal(topoaware_placer_check(nullptr, err, sizeof err), -1);
  topoaware_topo_free(topo);
}

}  // namespace

namespace {

// An exception whose message cannot be copied (no memory for the printable copy) still comes
// back as the failure value with a message: c_boundary is noexcept, and anything thrown from its
// handlers would end slurmctld through std::terminate.
void test_error_copy_without_memory(void **) {
  const std::runtime_error e(std::string(1 << 20, 'x') + "\x01");  // made before the heap "runs out"
  char err[64];
  fail_new_from = 1 << 19;
  const int r = topoaware::c_boundary(err, sizeof err, -7, [&]() -> int { throw e; });
  fail_new_from = 0;
  assert_int_equal(r, -7);
  assert_int_equal(std::strlen(err), sizeof err - 1);
  assert_int_equal(std::strspn(err, "x"), sizeof err - 1);
  // Short messages take the usual path.
  const int ok = topoaware::c_boundary(err, sizeof err, -7, []() -> int { throw std::runtime_error("bad\tvalue"); });
  assert_int_equal(ok, -7);
  assert_string_equal(err, "bad value");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_place_and_order),
                                     cmocka_unit_test(test_ep_reaches_both_sides),
                                     cmocka_unit_test(test_select_avoids_degraded_leaf),
                                     cmocka_unit_test(test_save_copies_the_bytes_read),
                                     cmocka_unit_test(test_nvlink_domains),
                                     cmocka_unit_test(test_ring_book),
                                     cmocka_unit_test(test_error_copy_without_memory),
                                     cmocka_unit_test(test_placer_check)};
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
