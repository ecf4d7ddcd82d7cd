// SPDX-License-Identifier: GPL-2.0-or-later
// C API over the partitions' Slurm topologies (part_topo_c.h, corelib/part_topology.hpp).
#include "part_topo_c.h"

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "c_api_util.hpp"
#include "part_topology.hpp"

using namespace topoaware;

struct topoaware_parts {
  std::deque<SlurmTopo> topos;  // deque: the partitions point into it
  std::map<std::string, size_t> topo_by_name;
  struct Part {
    std::string name, nodes, topo;
  };
  std::vector<Part> parts;
  std::map<std::string, int> use;
  struct Line {
    std::string text;
    bool disagrees;
  };
  std::vector<Line> lines;
};

namespace {
std::string str(const char *s) { return s ? s : ""; }

SlurmTopoKind kind_from_c(int k) {
  switch (k) {
    case TOPOAWARE_STOPO_TREE: return SlurmTopoKind::Tree;
    case TOPOAWARE_STOPO_BLOCK: return SlurmTopoKind::Block;
    case TOPOAWARE_STOPO_FLAT: return SlurmTopoKind::Flat;
    case TOPOAWARE_STOPO_RING: return SlurmTopoKind::Ring;
    case TOPOAWARE_STOPO_TORUS: return SlurmTopoKind::Torus;
    default: return SlurmTopoKind::Unknown;
  }
}
}  // namespace

extern "C" {

topoaware_parts_t *topoaware_parts_new(void) {
  return c_boundary<topoaware_parts_t *>(nullptr, 0, nullptr, [] { return new topoaware_parts; });
}

void topoaware_parts_free(topoaware_parts_t *p) { delete p; }

int topoaware_parts_add_topology(topoaware_parts_t *p, const char *name, int kind, int cluster_default,
                                 int only_one, const char *why, char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!p) throw std::invalid_argument("no partition table");
    SlurmTopo t;
    t.name = str(name);
    t.kind = kind_from_c(kind);
    t.cluster_default = cluster_default != 0;
    t.only_one = only_one != 0;
    t.lookup_error = str(why);
    p->topo_by_name[t.name] = p->topos.size();
    p->topos.push_back(std::move(t));
    return 0;
  });
}

int topoaware_parts_add_record(topoaware_parts_t *p, const char *name, const char *nodes, int level, int aggregated,
                               uint32_t size, char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!p || p->topos.empty()) throw std::invalid_argument("a topology record before any topology");
    SlurmTopoRecord r;
    r.name = str(name);
    r.nodes = str(nodes);
    r.level = level;
    r.aggregated = aggregated != 0;
    r.size = size;
    p->topos.back().records.push_back(std::move(r));
    return 0;
  });
}

int topoaware_parts_add_partition(topoaware_parts_t *p, const char *part, const char *nodes, const char *topo_name,
                                  char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!p || !part) throw std::invalid_argument("no partition");
    p->parts.push_back({part, str(nodes), str(topo_name)});
    return 0;
  });
}

int topoaware_parts_decide(topoaware_parts_t *p, const topoaware_topo_t *topo, char *err, size_t errlen) {
  return c_boundary<int>(err, errlen, -1, [&] {
    if (!p || !topo) throw std::invalid_argument("no partition table or topology");
    const Topology &t = topology_of(topo);
    p->use.clear();
    p->lines.clear();
    for (const auto &part : p->parts) {
      const auto it = p->topo_by_name.find(part.topo);
      const SlurmTopo *st = it == p->topo_by_name.end() ? nullptr : &p->topos[it->second];
      const PartitionTopoVerdict v = decide_partition_topology(t, {part.name, part.nodes, st});
      p->use[part.name] = v.use == PartitionTopoUse::Plain ? TOPOAWARE_PART_PLAIN : TOPOAWARE_PART_PLACE;
      std::string topo_name = st ? (st->name.empty() ? "the cluster default" : st->name) : part.topo;
      std::string kind = st ? slurm_topo_kind_name(st->kind) : "unknown";
      p->lines.push_back({"partition " + part.name + ", Slurm topology " + topo_name + " (" + kind + "): " + v.rule,
                          false});
      for (const auto &d : v.disagreements)
        p->lines.push_back({"partition " + part.name + ": Slurm topology " + topo_name +
                                " disagrees with topology.json: " + d,
                            true});
    }
    return 0;
  });
}

uint32_t topoaware_parts_lines(const topoaware_parts_t *p) { return p ? static_cast<uint32_t>(p->lines.size()) : 0; }

const char *topoaware_parts_line(const topoaware_parts_t *p, uint32_t i) {
  return (p && i < p->lines.size()) ? p->lines[i].text.c_str() : "";
}

int topoaware_parts_line_disagrees(const topoaware_parts_t *p, uint32_t i) {
  return (p && i < p->lines.size() && p->lines[i].disagrees) ? 1 : 0;
}

int topoaware_parts_use(const topoaware_parts_t *p, const char *part) {
  if (!p || !part) return TOPOAWARE_PART_UNLISTED;
  return c_boundary<int>(nullptr, 0, TOPOAWARE_PART_UNLISTED, [&] {
    const auto it = p->use.find(part);
    return it == p->use.end() ? static_cast<int>(TOPOAWARE_PART_UNLISTED) : it->second;
  });
}

}  // extern "C"
