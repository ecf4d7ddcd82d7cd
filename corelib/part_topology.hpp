// SPDX-License-Identifier: GPL-2.0-or-later
// Which of topoaware's levels apply to a partition, from the Slurm topology the partition uses
// (Slurm 25.05+: topology.yaml names several topologies, each partition picks one with Topology=)
// and what topology.json holds; and where the two disagree. A pure function of its inputs: the
// select plugin reads Slurm's side (its 25.05 family adapter), this decides and words the log.
//
// The rule (docs/design.md, "Partitions and Slurm's topologies"):
//   tree                 -> placed as without partitions: topology.json's leaf groups and pods.
//   block                -> placed the same way; cons_tres, run with the partition's block topology
//                           on each candidate set topoaware offers, keeps the job inside Slurm's
//                           blocks, and topoaware still orders the ranks.
//   flat named by the partition (Topology=)   -> plain cons_tres for the partition.
//   flat as the cluster's only topology (no topology.yaml/topology.conf) -> placed as today:
//                           topology.json is then the only topology there is.
//   ring, torus          -> plain cons_tres: topology.json describes a switched fabric, not these.
//   unknown kind, failed lookup -> placed as today, with a note.
//   a partition none of whose nodes, or a Slurm topology none of whose hosts, are in
//   topology.json        -> plain cons_tres for the partition.
// Disagreements (a note each, never a change of rule): partition nodes missing from
// topology.json; a tree whose leaf switches do not group the hosts as topology.json's leaf groups
// do; a block topology whose base blocks straddle topology.json's units (NVLink domains when it has
// them, else leaf groups) or whose base block size differs from them.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "topology.hpp"

namespace topoaware {

enum class SlurmTopoKind { Unknown, Tree, Block, Flat, Ring, Torus };

// One record of a Slurm topology: a switch (tree: level, its hosts directly attached, if any) or a
// block (block: `aggregated` for the blocks Slurm makes of base blocks; `size` in nodes).
struct SlurmTopoRecord {
  std::string name;
  std::string nodes;  // Slurm host list, "" when none
  int level = 0;
  bool aggregated = false;
  unsigned size = 0;
};

struct SlurmTopo {
  std::string name;            // "" when the partition names none (the cluster default)
  SlurmTopoKind kind = SlurmTopoKind::Unknown;
  bool cluster_default = false;
  bool only_one = false;       // the cluster has no other topology (no topology.yaml)
  std::string lookup_error;    // why it could not be read ("" = read)
  std::vector<SlurmTopoRecord> records;
};

struct PartitionTopoInput {
  std::string partition;
  std::string nodes;           // the partition's host list
  const SlurmTopo *topo = nullptr;
};

enum class PartitionTopoUse { Place, Plain };

struct PartitionTopoVerdict {
  PartitionTopoUse use = PartitionTopoUse::Place;
  std::string rule;                        // one sentence: what topoaware does in the partition, and why
  std::vector<std::string> disagreements;  // one sentence each
};

const char *slurm_topo_kind_name(SlurmTopoKind k);

// The decision for one partition. Work proportional to the partition's nodes and its topology's
// records (each host list is expanded once); throws nothing for bad host lists (noted instead).
PartitionTopoVerdict decide_partition_topology(const Topology &topo, const PartitionTopoInput &in);

}  // namespace topoaware
