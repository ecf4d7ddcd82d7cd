// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the topology.json reader, as slurmctld (select plugin) and slurmstepd (SPANK
// plugin) reach it: through the C API (capi/topoaware_c.h), from a file, then the engine built on
// what was read (the placer, the select decision, the rank order).
//
// The file's "hash" is SHA-256 over its own text, which anyone can recompute: a hand-edited file
// with a recomputed hash is as plausible an input as a damaged one. So the target fills in the hash
// of what the fuzzer wrote (when the input has a "hash" field), letting mutations reach the
// structure checks and the engine; inputs that keep a wrong hash still test the hash check.
//
// Invariants: TopologyError is the only error of the core reader; the C API answers NULL with a
// printable message, or a topology whose hash is the core reader's; what reads writes canonical
// JSON that reads back and writes the same bytes; the engine never crashes on what was accepted.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <openssl/evp.h>

#include "fuzz_common.hpp"
#include "topoaware_c.h"
#include "topology.hpp"
#include "topology_json.hpp"

namespace {

std::string sha256_hex(const std::string &data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  FUZZ_CHECK(EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) == 1);
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; i++) out += hex[md[i] >> 4], out += hex[md[i] & 15];
  return out;
}

// The text with its first "hash" value replaced by the hash topoaware would write for it.
std::string rehash(const std::string &text) {
  static const std::string key = "\"hash\": \"";
  const size_t at = text.find(key);
  if (at == std::string::npos) return text;
  const size_t end = text.find('"', at + key.size());
  if (end == std::string::npos) return text;
  const std::string blanked = text.substr(0, at + key.size()) + text.substr(end);
  return text.substr(0, at + key.size()) + "sha256:" + sha256_hex(blanked) + text.substr(end);
}

struct Backend {
  uint64_t clock = 0;
  int blocks = 0;
  static int try_block(void *arg, const uint32_t *nodes, uint32_t n, int64_t *start) {
    auto *b = static_cast<Backend *>(arg);
    for (uint32_t i = 0; i < n; ++i) FUZZ_CHECK(nodes[i] < 4096);
    if (start) *start = 100;
    return ++b->blocks % 2;  // accept every other block
  }
  static void keep_best(void *) {}
  static int try_plain(void *, int, int64_t *start, int *preempted) {
    if (start) *start = 200;
    if (preempted) *preempted = 0;
    return 1;
  }
  static uint64_t clock_ms(void *arg) { return static_cast<Backend *>(arg)->clock++; }
  static int64_t wall_s(void *) { return 1000; }
  static void log(void *, int, int, const char *text) { FUZZ_CHECK(text && fuzz::printable(text)); }
};

// What slurmctld and slurmstepd do with a topology they loaded.
void exercise_engine(topoaware_topo_t *topo, const topoaware::Topology &t, uint8_t knob) {
  char err[TOPOAWARE_ERR_LEN];
  // Slurm's node table: the topology's hosts (at most 512) and one node it does not know.
  std::vector<std::string> names;
  for (size_t i = 0; i < t.hosts.size() && i < 512; ++i) names.push_back(t.hosts[i].name);
  names.push_back("fuzz-not-in-topology");
  std::vector<const char *> cn;
  for (const auto &n : names) cn.push_back(n.c_str());
  const uint32_t n = uint32_t(cn.size());
  topoaware_placer_t *p = topoaware_placer_create(topo, cn.data(), n, err, sizeof err);
  if (!p) {
    FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));
    return;
  }
  FUZZ_CHECK(topoaware_placer_missing(p) >= 1);
  const uint32_t hosts = n - 1;
  const uint32_t gpn = 1u << (knob & 3);  // 1, 2, 4 or 8 GPUs per node
  const uint32_t nodes = hosts ? 1 + (knob >> 2) % hosts : 1;
  topoaware_layout_t l = {gpn,   1, 1,
                          nodes, 1, (knob & 0x80) ? TOPOAWARE_ORDER_TP_PP_DP : TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
  if (nodes % 2 == 0 && (knob & 0x40)) l.dp = nodes / 2, l.pp = 2;
  // Now and then a MoE job (--ep): its expert groups steer the order of a split ring's parts.
  if (knob & 0x04)
    for (uint32_t e : {8u, 4u, 2u})
      if (l.dp % e == 0) {
        l.ep = e;
        break;
      }
  std::vector<uint64_t> usable((n + 63) / 64, 0);
  std::vector<uint16_t> free_now(n, uint16_t(gpn)), free_all(n, uint16_t(gpn));
  for (uint32_t i = 0; i < n; ++i)
    if ((i + knob) % 5 != 0) usable[i / 64] |= uint64_t(1) << (i % 64);
  // will-run with the nodes' job end times: a third of the nodes busy until one of 7 ends
  std::vector<uint16_t> busy_now(n, uint16_t(gpn));
  std::vector<int64_t> all_free_at(n, 0), earliest_free_at(n, 0);
  for (uint32_t i = 0; i < n; ++i)
    if ((i + knob) % 3 == 0) {
      busy_now[i] = 0;
      all_free_at[i] = 1000 + int64_t((i * 37 + knob) % 7) * 100;
      earliest_free_at[i] = (knob & 0x20) && i % 4 == 0 ? INT64_MAX : all_free_at[i] - (i % 2) * 50;
    }
  for (int pass = 0; pass < 3; ++pass) {
    const int will_run = pass > 0, timed = pass == 2;
    Backend b;
    topoaware_select_backend_t be = {
        &b,          Backend::try_block, Backend::keep_best, Backend::try_plain, Backend::clock_ms, Backend::wall_s,
        Backend::log};
    topoaware_select_request_t r = {};
    r.nodes = nodes;
    r.gpus_per_node = gpn;
    r.layout = &l;
    r.mode = (knob & 1) ? TOPOAWARE_MODE_STRICT : TOPOAWARE_MODE_PREFER;
    r.now = 1000;
    r.deadline = 2000;
    r.will_run = will_run;
    r.usable = usable.data();
    r.nbits = n;
    r.free_now = timed ? busy_now.data() : free_now.data();
    r.free_all = free_all.data();
    if (timed) {
      r.all_free_at = all_free_at.data();
      r.earliest_free_at = earliest_free_at.data();
    }
    r.max_tries = 4;
    r.max_time_ms = 200;
    r.missing_mode = (knob & 2) ? TOPOAWARE_MISSING_FALLBACK : TOPOAWARE_MISSING_AVOID;
    topoaware_select_answer_t a;
    if (topoaware_select_decide(p, &r, &be, &a, err, sizeof err) != 0) {
      FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));
      continue;
    }
    FUZZ_CHECK(a.verdict >= TOPOAWARE_SELECT_BLOCK && a.verdict <= TOPOAWARE_SELECT_WAIT);
    FUZZ_CHECK(fuzz::printable(a.note) && fuzz::printable(a.wait) && fuzz::printable(a.placement));
  }
  topoaware_placer_free(p);

  // slurmstepd: the rank order of a job on the first `nodes` hosts, and each node's ranks.
  if (hosts == 0) return;
  std::vector<uint32_t> order(nodes);
  if (topoaware_rank_order(topo, cn.data(), nodes, &l, order.data(), err, sizeof err) != 0) {
    FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));
    return;
  }
  std::vector<bool> seen(nodes, false);
  for (uint32_t k = 0; k < nodes; ++k) {
    FUZZ_CHECK(order[k] < nodes && !seen[order[k]]);  // a permutation of the nodes
    seen[order[k]] = true;
  }
  std::vector<topoaware_rank_t> ranks(gpn);
  uint32_t count = 0;
  if (topoaware_node_ranks(topo, cn.data(), nodes, &l, cn[0], ranks.data(), gpn, &count, err, sizeof err) != 0) {
    FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));
    return;
  }
  FUZZ_CHECK(count == gpn);
  for (uint32_t k = 0; k < count; ++k) FUZZ_CHECK(ranks[k].rank < gpn * nodes && ranks[k].local_rank == k);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const uint8_t knob = data[0];  // the engine's parameters; the rest is the file
  const std::string raw(reinterpret_cast<const char *>(data + 1), size - 1);
  const std::string text = (knob & 0x20) ? raw : rehash(raw);  // keep a wrong hash now and then

  // The core reader, as `topoaware plan` and `show` use it.
  std::optional<topoaware::Topology> core;
  try {
    core = topoaware::topology_from_json(text);
  } catch (const topoaware::TopologyError &e) {
    FUZZ_CHECK(std::string(e.what()).rfind("topology.json: ", 0) == 0);
  }
  if (core) {
    topoaware::Topology t = *core;
    const std::string json = topoaware::to_json(t);
    topoaware::Topology back = topoaware::topology_from_json(json);
    FUZZ_CHECK(topoaware::to_json(back) == json);
  }

  // The C API, from a file, as the plugins load it.
  fuzz::MemFile file("topology.json", reinterpret_cast<const uint8_t *>(text.data()), text.size());
  char err[TOPOAWARE_ERR_LEN];
  topoaware_topo_t *topo = topoaware_topo_load(file.path(), err, sizeof err);
  FUZZ_CHECK(!topo == !core);  // the same verdict as the core reader
  if (!topo) {
    FUZZ_CHECK(fuzz::good_c_message(err, sizeof err));
    return 0;
  }
  FUZZ_CHECK(core->hash == topoaware_topo_hash(topo));
  FUZZ_CHECK(topoaware_topo_hosts(topo) == core->hosts.size());
  exercise_engine(topo, *core, knob);
  topoaware_topo_free(topo);
  return 0;
}
