// SPDX-License-Identifier: GPL-2.0-or-later
// The classified switch graph (what topology.json holds): hosts, switches, links, levels, leaf
// groups, pods, dragonfly groups, oversubscription, anomalies and ignored CAs.
//
// A Topology is self-contained: the plugins load it from topology.json alone, without the Fabric
// it was classified from. All vectors are in canonical order (see classify.cpp), so that the JSON
// of an unchanged fabric is byte-identical whatever the discovery order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fabric.hpp"

namespace topoaware {

inline constexpr const char *kSchema = "topoaware/1";

struct HcaPort {
  uint64_t ca_guid = 0;        // node GUID of the HCA
  uint64_t port_guid = 0;
  int port = 0;                // HCA port number
  std::string device;          // "mlx5_0" from the description's second word, else ""
  int rail = 0;                // index of this port among the host's compute ports
  int sw = -1;                 // index into Topology::switches of the switch it plugs into
  int sw_port = 0;
  int width = 0;
  LinkSpeed speed = LinkSpeed::Unknown;
};

struct Host {
  std::string name;            // Slurm node name
  std::vector<HcaPort> ports;  // sorted by rail
  int leaf = -1;               // switch index of the rail-0 leaf
  int leaf_group = -1;         // index into Topology::leaf_groups
  int pod = -1;                // index into Topology::pods
  int dragonfly_group = -1;    // index into Topology::dragonfly_groups, -1 if not a dragonfly
  int nvlink_domain = -1;      // index into Topology::nvlink_domains; -1: its own domain (no fabric info)
};

struct Switch {
  uint64_t guid = 0;
  std::string desc;            // node description as discovered
  std::string name;            // valid, unique Slurm switch name
  int nports = 0;
  int level = 0;               // 1 = leaf; BFS distance from hosts, host-less peaks hung below; 0 = unreached
  int leaf_group = -1;         // leaves only
  int pod = -1;
  int dragonfly_group = -1;
  std::vector<int> hosts;      // indices into Topology::hosts of compute hosts on this switch
  double down_gbps = 0;        // towards the hosts (hosts or lower level switches)
  double up_gbps = 0;          // towards higher levels
};

// All cables between two nodes with the same width and speed, as one entry.
struct Link {
  uint64_t a = 0, b = 0;       // node GUIDs, a < b
  std::vector<std::pair<int, int>> ports;  // (port on a, port on b), sorted
  int width = 0;
  LinkSpeed speed = LinkSpeed::Unknown;
  int cables() const { return static_cast<int>(ports.size()); }
  double gbps() const;         // of one cable
};

struct LeafGroup {
  std::vector<int> leaves;     // switch indices, one per rail
  std::vector<int> hosts;      // host indices, in name order
  int pod = -1;
};

struct Pod {
  std::vector<int> leaf_groups;
  std::vector<int> switches;   // level >= 2 switches that belong to this pod only
};

struct DragonflyGroup {
  std::vector<int> switches;
  std::vector<int> hosts;
};

// A multi-node NVLink domain (GB200/GB300 NVL72: 18 trays of 4 GPUs), as NVML reports it per GPU:
// the fabric's cluster UUID and clique ID. Hosts without fabric information are in no domain: each
// is its own (NVLink inside the node only), and is not listed, so that files stay small.
struct NvlinkDomain {
  std::string cluster_uuid;    // lower-case, as NVML prints it
  uint32_t clique_id = 0;
  int gpus_per_node = 0;       // GPUs of each host in the domain (the smallest reported, if they differ)
  std::vector<int> hosts;      // host indices, in name order
};

struct LevelStats {
  int level = 0;
  int switches = 0;
  // Oversubscription of a switch = down_gbps / up_gbps (only switches with uplinks count).
  double oversub_min = 0, oversub_max = 0, oversub_median = 0;
};

struct Anomaly {
  std::string kind;            // stable identifier, e.g. "hosts-on-spine", "missing-uplink"
  std::string where;           // switch/host name or GUID it concerns
  std::string detail;          // human sentence
};

struct IgnoredCa {
  uint64_t guid = 0;
  std::string desc;
  std::string name;            // the name it would have had
  std::string reason;          // "SHARP Aggregation Node", "unnamed HCA", "not in --nodes", ...
};

struct Topology {
  std::vector<Host> hosts;
  std::vector<Switch> switches;
  std::vector<Link> links;
  std::vector<LeafGroup> leaf_groups;
  std::vector<Pod> pods;
  std::vector<DragonflyGroup> dragonfly_groups;
  std::vector<LevelStats> levels;
  std::vector<Anomaly> anomalies;
  std::vector<IgnoredCa> ignored;
  // In (cluster UUID, clique ID) order. Part of `hash`: which hosts share NVLink decides where a
  // TP group may go, so both plugins must agree on it; absent from the file when empty, so a
  // fabric without domains keeps the bytes and hash it always had.
  std::vector<NvlinkDomain> nvlink_domains;
  int max_level = 0;
  bool rail_optimized = false;  // leaf groups hold several leaves, one per rail
  std::string hash;             // "sha256:<hex>" of the canonical JSON without this field and routes
  // The forwarding tables and LIDs, when discovery read them (routes.hpp); not part of `hash`:
  // a re-route is not a cabling change.
  Routes routes;
  // What the select and SPANK plugins compare to know they order ranks over the same topology:
  // `hash`, or with routes (the rank order reads them) "sha256:<hex>" of both hashes. Set with them.
  std::string placement_hash;

  int host_index(const std::string &name) const;  // -1 if absent (binary search: hosts are sorted)
  int switch_index(uint64_t guid) const;           // -1 if absent
};

// How a Fabric becomes a Topology.
struct ClassifyOptions {
  // Host naming: node GUID -> name (ibnetdiscover node-name-map), else the first word of the
  // description, else the GUID.
  std::map<uint64_t, std::string> node_names;
  // If set, exactly these names are compute hosts; other CAs are ignored ("not in the node list").
  std::optional<std::vector<std::string>> compute_nodes;
  // Unnamed HCAs (vendor default description, no map entry) are ignored unless this is set, in
  // which case they become hosts named by GUID.
  bool keep_unnamed = false;
};

Topology classify(const Fabric &fabric, const ClassifyOptions &opts);

// Natural order: "n2" < "n10"; used for hosts, so that host lists compress.
bool natural_less(const std::string &a, const std::string &b);

}  // namespace topoaware
