// SPDX-License-Identifier: GPL-2.0-or-later
// What select/cons_tres_topoaware does while holding a lock that select_p_job_test waits on, for
// the two pieces of work that grow with the cluster or the queue:
//
// 1. The status file writer, every StatusInterval, under the plugin lock. Before: a copy of the
//    whole status book (StatusBook's copy, what the writer took until it kept a copy of its own).
//    Now: StatusBook::take, which hands over the changes since the last take. The changes are
//    recorded as they happen, inside each verdict's own call, so the bench also prints what that
//    adds to one verdict (a book that records against one that does not: a writer's copy) and to
//    a scheduling pass over every waiting job.
// 2. The job's node order in select_p_job_begin, under slurmctld's job and node write locks.
//    Before: one Slurm xstrfmtcat per name, which formats the name into a new buffer and finds
//    the end of the text with strlen twice at every call (emulated here step by step as Slurm's
//    xstring.c does it, with its doubling growth, since Slurm's xmalloc is not linked into a
//    bench). Now: ta_order_join, one pass into one buffer.
// 3. malloc_trim(0) after each topology read (corelib topology_json.cpp), in slurmctld's loader
//    thread: glibc takes each arena's lock while it hands free pages back, so a thread that
//    allocates under slurmctld's locks might wait for it. Measured as what another thread, which
//    allocates and frees past the per-thread cache, gets done during the trim against an equally
//    long window without it, after the reader's JSON tree of a 100,000-host file was freed. Run it
//    also with MALLOC_ARENA_MAX=1, where every thread shares the trimmed arena.
//
//   bench/lock_hold [REPEATS]     (default 5; best of REPEATS per cell)
//
// Prints one table per piece. The machine is shared: compare the ratios within a run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <malloc.h>
#include <nlohmann/json.hpp>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "status.hpp"

extern "C" {
#include "ta_order_join.h"
}

using namespace topoaware;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

template <class F>
double best_ms(int repeats, F &&f) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) best = std::min(best, f());
  return best;
}

// A layout job as the plugin books it: placed jobs with a 16-node order, waiting ones with a reason.
StatusJob entry(uint32_t id, bool placed) {
  StatusJob j;
  j.job_id = id;
  j.layout = "tp=8,cp=1,ep=1,dp=4,pp=4,rank-order=tp-cp-ep-dp-pp";
  j.mode = "strict";
  j.gpus_per_node = 8;
  if (placed) {
    j.placement = "ideal";
    j.nodes = "gpu[" + std::to_string(id * 16) + "-" + std::to_string(id * 16 + 15) + "]";
    for (int k = 0; k < 16; ++k) j.node_order += (k ? ",gpu" : "gpu") + std::to_string(id * 16 + k);
  } else {
    j.reason = "no ideal block: 2 of 3 leaves hold a split ring";
  }
  return j;
}

void status_book(int repeats) {
  std::printf("status writer, under the plugin lock: a book of N placed and N waiting layout jobs\n");
  std::printf("%8s | %12s %12s %9s | %14s %14s %7s %12s | %12s\n", "N", "copy ms", "take ms", "ratio", "verdict us",
              "verdict us", "ratio", "pass ms", "apply ms");
  std::printf("%8s | %12s %12s %9s | %14s %14s %7s %12s | %12s\n", "", "(before)", "(now)", "", "(recording)",
              "(not)", "", "(+recording)", "(off-lock)");
  for (uint32_t n : {1000u, 10000u, 50000u}) {
    StatusBook book, quiet;  // quiet: a writer's copy, which records no changes
    int64_t now = 1000;
    for (uint32_t i = 1; i <= n; ++i) {
      book.placed(entry(i, true), now);
      book.waiting(entry(n + i, false), now);
    }
    StatusBook copy;
    copy.apply(book.take(now, true));
    quiet.apply(book.take(now, true));
    const double copy_ms = best_ms(repeats, [&] {
      auto t0 = Clock::now();
      std::map<uint32_t, StatusJob> c = book.jobs();  // what the writer copied under the lock before
      const double ms = ms_since(t0);
      if (c.size() != book.jobs().size()) std::abort();
      return ms;
    });
    // Worst case for a take: every waiting job got a new verdict since the last one (a scheduling
    // pass over the whole queue); the verdicts' own calls recorded them.
    double take_ms = 1e300, rec_us = 1e300, quiet_us = 1e300, apply_ms = 1e300;
    for (int r = 0; r < repeats; ++r) {
      ++now;
      const char *why = r % 2 ? "no ideal block: 2 of 3 leaves hold a split ring" : "waiting for 4 free leaves";
      auto t0 = Clock::now();
      for (uint32_t i = 1; i <= n; ++i) {
        StatusJob j = entry(n + i, false);
        j.reason = why;
        book.waiting(j, now);
      }
      rec_us = std::min(rec_us, ms_since(t0) * 1000.0 / n);
      t0 = Clock::now();
      for (uint32_t i = 1; i <= n; ++i) {
        StatusJob j = entry(n + i, false);
        j.reason = why;
        quiet.waiting(j, now);
      }
      quiet_us = std::min(quiet_us, ms_since(t0) * 1000.0 / n);
      t0 = Clock::now();
      StatusChanges c = book.take(now, false);
      take_ms = std::min(take_ms, ms_since(t0));
      if (c.full || c.jobs.size() != n) std::abort();
      t0 = Clock::now();
      copy.apply(std::move(c));
      apply_ms = std::min(apply_ms, ms_since(t0));
    }
    if (copy.render(now) != book.render(now)) std::abort();  // the copy renders what the book holds
    std::printf("%8u | %12.3f %12.4f %8.0fx | %14.3f %14.3f %6.2fx %12.2f | %12.2f\n", n, copy_ms, take_ms,
                copy_ms / std::max(take_ms, 1e-6), rec_us, quiet_us, rec_us / quiet_us,
                std::max(0.0, rec_us - quiet_us) * n / 1000.0, apply_ms);
  }
  std::printf("copy: the book's entries, as the writer copied them before (its index not included). take: the\n"
              "changes since the last take (here all N waiting entries) handed over. verdict: one refreshed\n"
              "waiting entry, in a book that records its change and in one that does not (both keep the\n"
              "index by last update); pass: what recording adds to a pass over all N waiting jobs, spread\n"
              "over their job_test calls (each a hold of the lock of its own).\n\n");
}

// What the plugin did before: Slurm's xstrfmtcat(&order, "%s%s", order ? "," : "", name) per
// node, as Slurm's xstring.c does it: the piece formatted into a new buffer, the text so far
// measured (strlen, in _makespace), the buffer grown to at least twice its size when short, the
// piece appended with strcat (which measures the text again) and freed.
char *join_by_appending(const char *const *names, const uint32_t *order, uint32_t n) {
  char *s = nullptr;
  size_t cap = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const int plen = std::snprintf(nullptr, 0, "%s%s", s ? "," : "", names[order[i]]);
    char *piece = static_cast<char *>(std::malloc(size_t(plen) + 1));
    if (!piece) std::abort();
    std::snprintf(piece, size_t(plen) + 1, "%s%s", s ? "," : "", names[order[i]]);
    if (!s) {
      s = piece;
      cap = size_t(plen) + 1;
      continue;
    }
    const size_t used = std::strlen(s) + 1, need = std::strlen(piece);
    if (used + need > cap) {
      size_t grown = std::max({used + need, cap + 64, cap * 2});
      char *bigger = static_cast<char *>(std::realloc(s, grown));
      if (!bigger) std::abort();
      s = bigger;
      cap = grown;
    }
    std::strcat(s, piece);
    std::free(piece);
  }
  return s;
}

void node_order(int repeats) {
  std::printf("node order of one job, under slurmctld's job and node write locks (select_p_job_begin)\n");
  std::printf("%8s | %14s %14s %9s\n", "nodes", "append ms", "join ms", "ratio");
  std::printf("%8s | %14s %14s %9s\n", "", "(before)", "(now)", "");
  for (uint32_t n : {1000u, 10000u, 50000u}) {
    std::vector<std::string> store(n);
    std::vector<const char *> names(n);
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) {
      store[i] = "gpu-node" + std::to_string(100000 + i);
      names[i] = store[i].c_str();
      order[i] = (i * 7919u) % n;  // a permutation when gcd(7919, n) = 1 (7919 is prime)
    }
    std::string appended;
    const double append_ms = best_ms(repeats, [&] {
      auto t0 = Clock::now();
      char *s = join_by_appending(names.data(), order.data(), n);
      const double ms = ms_since(t0);
      appended = s;
      std::free(s);
      return ms;
    });
    std::string joined;
    const double join_ms = best_ms(repeats, [&] {
      auto t0 = Clock::now();
      const size_t len = ta_order_join_len(names.data(), order.data(), n);
      char *s = static_cast<char *>(std::malloc(len + 1));
      if (!s) std::abort();
      ta_order_join(s, names.data(), order.data(), n);
      const double ms = ms_since(t0);
      joined = s;
      std::free(s);
      return ms;
    });
    if (joined != appended) std::abort();  // the same text both ways
    std::printf("%8u | %14.3f %14.3f %8.0fx\n", n, append_ms, join_ms, append_ms / std::max(join_ms, 1e-6));
  }
}

// A JSON text shaped like topology.json's host list: an array of small objects, about 60 MB.
std::string host_list_json(uint32_t hosts) {
  std::string t = "{\"hosts\": [";
  for (uint32_t i = 0; i < hosts; ++i) {
    if (i) t += ',';
    t += "{\"name\": \"gpu-node" + std::to_string(100000 + i) + "\", \"leaf\": " + std::to_string(i / 64) +
         ", \"guid\": \"0x" + std::to_string(1000000000000ull + i) +
         "\", \"ports\": [{\"port\": 1, \"switch\": " + std::to_string(i / 64) +
         ", \"switch_port\": " + std::to_string(i % 64 + 1) + "}], \"rail\": 0, \"pod\": " +
         std::to_string(i / 6400) + "}";
  }
  return t + "]}";
}

void trim_pause(int repeats) {
  const char *arenas = std::getenv("MALLOC_ARENA_MAX");
  std::printf("\nmalloc_trim(0) after a topology read (loader thread), MALLOC_ARENA_MAX=%s\n", arenas ? arenas : "(default)");
  std::printf("%10s | %9s | %14s %14s %7s | %12s %12s\n", "free heap", "trim ms", "ops during", "ops without",
              "ratio", "worst us", "worst us");
  std::printf("%10s | %9s | %14s %14s %7s | %12s %12s\n", "", "", "(other thread)", "(as long)", "", "(during)",
              "(without)");
  const std::string text = host_list_json(400000);
  std::atomic<bool> stop{false};
  std::atomic<long> ops{0}, worst_ns{0};
  std::thread other([&] {  // an RPC thread: sizes past glibc's per-thread cache, so each takes an arena lock
    while (!stop.load(std::memory_order_relaxed)) {
      const auto t0 = Clock::now();
      void *p = std::malloc(2000), *q = std::malloc(20000);
      std::free(p);
      std::free(q);
      const long ns = long(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
      if (ns > worst_ns.load(std::memory_order_relaxed)) worst_ns.store(ns, std::memory_order_relaxed);
      ops.fetch_add(1, std::memory_order_relaxed);
    }
  });
  for (int r = 0; r < repeats; ++r) {
    { nlohmann::json tree = nlohmann::json::parse(text); }  // the reader's tree, freed
    const double free_mb = double(mallinfo2().fordblks) / 1048576.0;
    ops = 0, worst_ns = 0;
    auto t0 = Clock::now();
    malloc_trim(0);
    const double trim_ms = ms_since(t0);
    const long ops_during = ops.load(), worst_during = worst_ns.load();
    ops = 0, worst_ns = 0;
    t0 = Clock::now();
    while (ms_since(t0) < trim_ms) {
    }
    const long ops_without = ops.load(), worst_without = worst_ns.load();
    std::printf("%7.0f MB | %9.1f | %14ld %14ld %6.2fx | %12.0f %12.0f\n", free_mb, trim_ms, ops_during, ops_without,
                double(ops_during) / double(std::max(ops_without, 1L)), worst_during / 1e3, worst_without / 1e3);
  }
  stop = true;
  other.join();
}

}  // namespace

int main(int argc, char **argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  status_book(repeats);
  node_order(repeats);
  trim_pause(repeats);
  return 0;
}
