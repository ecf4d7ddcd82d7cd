// SPDX-License-Identifier: GPL-2.0-or-later
// C API of the placement engine and rank order (see topoaware_c.h). Every entry point catches
// every exception: these run inside slurmctld and slurmstepd.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "c_api_util.hpp"
#include "layout.hpp"
#include "placement.hpp"
#include "rank_order.hpp"
#include "select_policy.hpp"
#include "status.hpp"
#include "text.hpp"
#include "topoaware_c.h"
#include "topology_json.hpp"

using namespace topoaware;

struct topoaware_topo {
  Topology topo;
  std::unique_ptr<TopoIndex> index;
  // The file it was read from and the SHA-256 of the bytes read: the last good copy is those very
  // bytes, copied in pieces (never the whole file, nor a JSON tree of it, in slurmctld's memory).
  std::string source, source_sha256;
};

const Topology &topoaware::topology_of(const topoaware_topo *t) { return t->topo; }

struct topoaware_placer {
  const topoaware_topo *topo;
  NodeMap map;
  std::unique_ptr<PlacementPolicy> engine;  // "topoaware": the select decision's named policy
  topoaware_placer(const topoaware_topo *t, const std::vector<std::string> &names)
      : topo(t), map(*t->index, names), engine(make_placement_policy("topoaware", *t->index)) {}
};

namespace {


Layout to_layout(const topoaware_layout_t *l) {
  if (!l) throw LayoutError("no layout given");
  Layout out = layout_from_c(*l);
  validate_layout(out);
  return out;
}

topoaware_topo *make_topo(Topology &&t) {
  auto h = std::make_unique<topoaware_topo>();
  h->topo = std::move(t);
  h->index = std::make_unique<TopoIndex>(h->topo);  // refers to h->topo, which never moves again
  return h.release();
}

std::vector<std::string> names_of(const char *const *names, uint32_t n) {
  if (n && !names) throw LayoutError("no node names given");
  std::vector<std::string> v;
  v.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (!names[i]) throw LayoutError("node name " + std::to_string(i) + " is NULL");
    v.emplace_back(names[i]);
  }
  return v;
}

void fill_rank(const Layout &l, uint32_t rank, uint32_t G, topoaware_rank_t *out) {
  const RankCoord c = rank_coord(l, rank);
  out->rank = rank;
  out->node_rank = rank / G;
  out->local_rank = rank % G;
  out->tp = c.tp;
  out->cp = c.cp;
  out->ep = c.ep;
  out->dp = c.dp;
  out->pp = c.pp;
  out->edp = c.edp;
}

}  // namespace

struct topoaware_ring_book {
  const topoaware_topo *topo;
  RingEdgeBook book;
  explicit topoaware_ring_book(const topoaware_topo *t) : topo(t), book(*t->index) {}
};

namespace {

// The topology's host index of each name; throws LayoutError naming one that is not in it.
template <class Names>
std::vector<int> hosts_of(const topoaware_topo *topo, const Names &names, size_t n) {
  std::vector<int> hosts;
  hosts.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const int h = topo->index->find_host(names[i]);
    if (h < 0) throw LayoutError("node " + std::string(names[i]) + " is not in the topology file (stale topology?)");
    hosts.push_back(h);
  }
  return hosts;
}

// A job's order as indices into its names: order[k] = i where hosts[i] == ordered[k] (the hosts
// are distinct: the orderer has checked). Sorting the job's own hosts, not a table of every host
// of the topology, keeps the cost of a call in the job's size.
void order_indices(const std::vector<int> &hosts, const std::vector<int> &ordered, uint32_t *order) {
  std::vector<std::pair<int, uint32_t>> pos(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) pos[i] = {hosts[i], uint32_t(i)};
  std::sort(pos.begin(), pos.end());
  for (size_t k = 0; k < ordered.size(); ++k)
    order[k] = std::lower_bound(pos.begin(), pos.end(), std::make_pair(ordered[k], uint32_t(0)))->second;
}

}  // namespace

extern "C" {

topoaware_topo_t *topoaware_topo_load(const char *path, char *err, size_t errlen) {
  return c_boundary<topoaware_topo_t *>(err, errlen, nullptr, [&] {
    if (!path) throw LayoutError("no topology path given");
    std::string digest;
    topoaware_topo_t *t = make_topo(load_topology_file(path, &digest));
    t->source = path;
    t->source_sha256 = std::move(digest);
    return t;
  });
}

void topoaware_topo_free(topoaware_topo_t *topo) { delete topo; }

int topoaware_topo_save(const topoaware_topo_t *topo, const char *path, char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!topo || !path || !*path) throw LayoutError("no topology or no path to save it to");
    if (!topo->source.empty()) {
      copy_status_file(topo->source, path, topo->source_sha256);
      return 0;
    }
    Topology copy = topo->topo;  // to_json fills in the hash: never on the topology in use
    write_status_file(path, to_json(copy));
    return 0;
  });
}

const char *topoaware_topo_hash(const topoaware_topo_t *topo) {
  return topo ? topo->topo.placement_hash.c_str() : "";
}

uint32_t topoaware_topo_hosts(const topoaware_topo_t *topo) { return topo ? uint32_t(topo->topo.hosts.size()) : 0; }

uint32_t topoaware_topo_nvlink_domains(const topoaware_topo_t *topo) {
  return topo ? uint32_t(topo->topo.nvlink_domains.size()) : 0;
}

int topoaware_topo_rail_optimized(const topoaware_topo_t *topo) { return topo && topo->topo.rail_optimized ? 1 : 0; }

struct topoaware_nvlink {
  std::unordered_map<std::string, int> domain;  // hosts of multi-node domains only
  uint32_t domains = 0;
};

topoaware_nvlink_t *topoaware_nvlink_from_topo(const topoaware_topo_t *topo, char *err, size_t errlen) {
  return c_boundary<topoaware_nvlink_t *>(err, errlen, nullptr, [&] {
    if (!topo) throw LayoutError("no topology");
    auto nv = std::make_unique<topoaware_nvlink>();
    const Topology &t = topo->topo;
    for (const NvlinkDomain &d : t.nvlink_domains) {
      if (d.hosts.size() < 2) continue;  // NVLink inside one node: no TP group spans nodes there
      for (int h : d.hosts) nv->domain.emplace(t.hosts[size_t(h)].name, int(nv->domains));
      ++nv->domains;
    }
    return nv.release();
  });
}

void topoaware_nvlink_free(topoaware_nvlink_t *nv) { delete nv; }

uint32_t topoaware_nvlink_domains(const topoaware_nvlink_t *nv) { return nv ? nv->domains : 0; }

int topoaware_nvlink_domain_of(const topoaware_nvlink_t *nv, const char *host) {
  if (!nv || !host) return -1;
  try {
    const auto it = nv->domain.find(host);
    return it == nv->domain.end() ? -1 : it->second;
  } catch (...) {  // the key's copy could not be allocated: not known
    return -1;
  }
}

topoaware_placer_t *topoaware_placer_create(const topoaware_topo_t *topo, const char *const *names, uint32_t n,
                                            char *err, size_t errlen) {
  return c_boundary<topoaware_placer_t *>(err, errlen, nullptr, [&] {
    if (!topo) throw LayoutError("no topology");
    return new topoaware_placer(topo, names_of(names, n));
  });
}

void topoaware_placer_free(topoaware_placer_t *placer) { delete placer; }

uint32_t topoaware_placer_missing(const topoaware_placer_t *p) { return p ? uint32_t(p->map.missing().size()) : 0; }

const char *topoaware_placer_missing_name(const topoaware_placer_t *p, uint32_t i) {
  return p && i < p->map.missing().size() ? p->map.missing()[i].c_str() : nullptr;
}

int topoaware_placer_check(const topoaware_placer_t *p, char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!p) throw LayoutError("no placer");
    const std::string why = node_map_unusable(*p->topo->index, p->map);
    if (why.empty()) return 0;
    copy_c_error(why.c_str(), err, errlen);
    return -1;
  });
}

int topoaware_select_decide(topoaware_placer_t *p, const topoaware_select_request_t *req,
                            const topoaware_select_backend_t *be, topoaware_select_answer_t *answer, char *err,
                            size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!p || !req || !be || !answer || (req->nbits && (!req->usable || !req->free_now)) ||
        (req->will_run && req->nbits && !req->free_all))
      throw LayoutError("topoaware_select_decide: missing argument");
    if (req->nbits != p->map.size())
      throw LayoutError("node table has " + std::to_string(req->nbits) + " nodes but the placer was built for " +
                        std::to_string(p->map.size()) + "; rebuild it after a reconfigure");
    SelectRequest r;
    r.job.layout = to_layout(req->layout);
    r.job.nodes = req->nodes;
    r.job.gpus_per_node = req->gpus_per_node;
    r.strict = req->mode == TOPOAWARE_MODE_STRICT;
    r.now = req->now;
    r.deadline = req->deadline;
    r.will_run = req->will_run != 0;
    r.may_preempt = req->may_preempt != 0;
    r.usable = req->usable;
    r.nbits = req->nbits;
    r.free_now = req->free_now;
    r.free_all = req->free_all;
    if (req->will_run && req->all_free_at && req->earliest_free_at) {
      r.all_free_at = req->all_free_at;
      r.earliest_free_at = req->earliest_free_at;
    }
    SelectSettings s;
    s.max_tries = req->max_tries;
    s.max_time_ms = req->max_time_ms;
    s.missing = req->missing_mode == TOPOAWARE_MISSING_FALLBACK ? MissingNodes::Fallback : MissingNodes::Avoid;
    s.missing_count = uint32_t(p->map.missing().size());
    std::vector<uint32_t> nodes;
    SelectBackend b;
    b.try_block = [&](const std::vector<int> &v, int64_t *start) {
      nodes.assign(v.begin(), v.end());
      return be->try_block(be->arg, nodes.data(), uint32_t(nodes.size()), start) != 0;
    };
    b.keep_best = [&] { be->keep_best(be->arg); };
    b.try_plain = [&](bool any, int64_t *start, int *preempted) {
      return be->try_plain(be->arg, any ? 1 : 0, start, preempted) != 0;
    };
    b.clock_ms = [&] { return be->clock_ms(be->arg); };
    b.wall_s = [&] { return be->wall_s(be->arg); };
    if (be->block_start) b.block_start = [&](int64_t fits_at) { return be->block_start(be->arg, fits_at); };
    SelectAnswer a = select_decide(*p->engine, p->map, r, s, b);
    answer->verdict = a.verdict == SelectVerdict::Block   ? TOPOAWARE_SELECT_BLOCK
                      : a.verdict == SelectVerdict::Plain ? TOPOAWARE_SELECT_PLAIN
                                                          : TOPOAWARE_SELECT_WAIT;
    answer->start = a.start;
    std::snprintf(answer->placement, sizeof(answer->placement), "%s", a.placement);
    std::snprintf(answer->note, sizeof(answer->note), "%s", a.note.c_str());
    std::snprintf(answer->wait, sizeof(answer->wait), "%s", a.wait.c_str());
    answer->wait_hint = a.wait_hint ? 1 : 0;
    answer->tries = a.tries;
    for (const SelectLog &l : a.logs) {
      const int level = l.level == SelectLogLevel::Error  ? TOPOAWARE_LOG_QUIET
                        : l.level == SelectLogLevel::Info ? TOPOAWARE_LOG_INFO
                                                          : TOPOAWARE_LOG_DEBUG;
      be->log(be->arg, level, l.key, l.text.c_str());
    }
    return 0;
  });
}

int topoaware_rank_order(const topoaware_topo_t *topo, const char *const *names, uint32_t n,
                         const topoaware_layout_t *layout, uint32_t *order, char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!topo || !order) throw LayoutError("topoaware_rank_order: missing argument");
    const Layout l = to_layout(layout);
    const std::vector<int> hosts = hosts_of(topo, names_of(names, n), n);
    RankOrderer ro(*topo->index);
    std::vector<int> ordered;
    ro.order(hosts, l, ordered);  // throws on duplicates
    order_indices(hosts, ordered, order);
    return 0;
  });
}

topoaware_ring_book_t *topoaware_ring_book_create(const topoaware_topo_t *topo) {
  if (!topo) return nullptr;
  try {
    return new topoaware_ring_book(topo);
  } catch (...) {
    return nullptr;
  }
}

void topoaware_ring_book_free(topoaware_ring_book_t *book) { delete book; }

int topoaware_rank_order_booked(topoaware_ring_book_t *book, uint32_t job_id, const char *const *names, uint32_t n,
                                const topoaware_layout_t *layout, uint32_t *order, char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!book || !order) throw LayoutError("topoaware_rank_order_booked: missing argument");
    const Layout l = to_layout(layout);
    const std::vector<int> hosts = hosts_of(book->topo, names_of(names, n), n);
    std::vector<int> ordered;
    book->book.order(job_id, hosts, l, ordered);  // throws on duplicates, booking nothing
    order_indices(hosts, ordered, order);
    return 0;
  });
}

int topoaware_ring_book_add_placed(topoaware_ring_book_t *book, uint32_t job_id, const char *order,
                                   const char *layout, char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!book || !order || !layout) throw LayoutError("topoaware_ring_book_add_placed: missing argument");
    const Layout l = parse_layout(layout);
    const std::vector<std::string> names = split_list(order, ',');
    book->book.add_placed(job_id, hosts_of(book->topo, names, names.size()), l);
    return 0;
  });
}

void topoaware_ring_book_remove(topoaware_ring_book_t *book, uint32_t job_id) {
  if (book) book->book.remove(job_id);  // never throws: a map erase and decrements
}

uint32_t topoaware_ring_book_jobs(const topoaware_ring_book_t *book) {
  return book ? uint32_t(book->book.jobs()) : 0;
}

uint64_t topoaware_ring_book_edges(const topoaware_ring_book_t *book) { return book ? book->book.edges() : 0; }

int topoaware_node_ranks(const topoaware_topo_t *topo, const char *const *names, uint32_t n,
                         const topoaware_layout_t *layout, const char *self, topoaware_rank_t *out, uint32_t cap,
                         uint32_t *count, char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!topo || !self || !out || !count) throw LayoutError("topoaware_node_ranks: missing argument");
    const Layout l = to_layout(layout);
    std::vector<uint32_t> order(n);
    char buf[1024];
    if (topoaware_rank_order(topo, names, n, layout, order.data(), buf, sizeof buf) != 0) throw LayoutError(buf);
    const uint32_t G = uint32_t(l.world() / n);
    for (uint32_t k = 0; k < n; ++k) {
      if (std::strcmp(names[order[k]], self) != 0) continue;
      if (cap < G) throw LayoutError("room for " + std::to_string(cap) + " ranks, node holds " + std::to_string(G));
      for (uint32_t j = 0; j < G; ++j) fill_rank(l, k * G + j, G, &out[j]);
      *count = G;
      return 0;
    }
    throw LayoutError(std::string("node ") + self + " is not in the job's node list");
  });
}

}  // extern "C"
