// SPDX-License-Identifier: GPL-2.0-or-later
// See task_c.h.
#include "task_c.h"

#include "c_api_util.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "devices_cache.hpp"
#include "hostlist.hpp"
#include "hwloc_probe.hpp"
#include "rank_order.hpp"
#include "spank_settings.hpp"
#include "topoaware_c.h"
#include "topology_json.hpp"

struct topoaware_task_plan {
  struct Var {
    std::string name, value;
    int kind;
  };
  std::vector<Var> vars;
  std::string map_line, note, hash;
};

struct topoaware_job_map {
  std::string hostfile, rankmap, hash;
  uint32_t ranks = 0, nodes = 0;
};

namespace {

// Every variable a plan sets only when the task's environment does not have it yet (kind
// TOPOAWARE_VAR_DEFAULT) is in the core's one list (kTaskDefaultVars), which plugstack.conf's
// override_env= names are checked against.
bool is_default_var(const char *name) { return name && topoaware::task_default_var_index(name) >= 0; }

struct TopoFree {
  void operator()(topoaware_topo_t *t) const { topoaware_topo_free(t); }
};

// A value of the step's environment against its bound (task_c.h): the plugin reads no longer one,
// callers of the C API are held to the same.
void check_length(const char *value, size_t max, const char *what) {
  if (value && strnlen(value, max + 1) > max)
    throw std::invalid_argument(std::string(what) + " is longer than " + std::to_string(max) + " bytes");
}

// The step's (or job's) node names, bounded in count and in bytes (a client's node list).
std::vector<std::string> step_names(const char *nodelist) {
  check_length(nodelist, TOPOAWARE_NODELIST_MAX_LEN, "the node list");
  return topoaware::hostlist_expand(nodelist, TOPOAWARE_NODELIST_MAX_HOSTS, TOPOAWARE_NODELIST_MAX_NAME_BYTES);
}

// "0,1,2,3" -> indices; false if any entry is not a plain number (UUIDs, MIG names).
bool parse_indices(const std::string &s, std::vector<unsigned> *out) {
  for (const auto &p : topoaware::split_names(s)) {
    if (p.empty() || p.size() > 6 || p.find_first_not_of("0123456789") != std::string::npos) return false;
    out->push_back(static_cast<unsigned>(std::stoul(p)));
  }
  return !out->empty();
}

// What every task of a step on this node shares: the topology, the node's ranks, the job's node
// order and (for GPU hints) the node's GPUs and NICs. slurmstepd computes it once, before it forks
// the tasks (topoaware_task_prepare from spank's user_init), and each forked task finds it here:
// a step of 8 tasks per node reads the topology and probes hwloc once, not 8 times.
struct NodeStep {
  std::string key;  // the inputs it was computed from, with the topology file's identity
  std::string hash;
  std::vector<std::string> names;
  std::vector<topoaware_rank_t> ranks;  // this node's ranks, in local rank order
  std::string master;                   // the node of rank 0
  uint64_t world = 0;
  uint32_t per_node = 0;
  bool rail_optimized = false, probed = false;
  topoaware::NodeDevices devices;
  // This node shares a multi-node NVLink domain (NVL72) with other nodes of the step: the domain
  // ("<cluster UUID>:<clique ID>"), and whether the layout's TP groups span nodes.
  std::string nvlink_domain;
  bool tp_spans_nodes = false;
};

// The inputs of a NodeStep as one string, and the topology file's inode, size and modification
// time, so that a file replaced at the same path is read again.
std::string node_key(const topoaware_task_in_t &in) {
  struct stat st {};
  if (stat(in.topology_path, &st) != 0 && !in.placed_order) return "";  // never cached: the load reports it
  const topoaware_layout_t &l = *in.layout;
  std::string k;
  for (const char *s : {in.topology_path, in.expected_hash, in.nodelist, in.self, in.exclude_nics, in.hwloc_xml,
                        in.placed_layout, in.placed_order}) {
    k += s ? s : "\x01";
    k += '\0';
  }
  for (uint64_t v : {uint64_t(in.total_tasks), uint64_t(in.gpu_hints != 0), uint64_t(l.tp), uint64_t(l.cp),
                     uint64_t(l.ep), uint64_t(l.dp), uint64_t(l.pp), uint64_t(l.order), uint64_t(st.st_dev),
                     uint64_t(st.st_ino), uint64_t(st.st_size), uint64_t(st.st_mtim.tv_sec),
                     uint64_t(st.st_mtim.tv_nsec)})
    k += std::to_string(v) + ",";
  return k;
}

// The layout's ranks against the step's tasks and nodes: world and ranks per node, or why not.
void set_world(const topoaware_task_in_t &in, uint32_t n, NodeStep &ns) {
  const topoaware_layout_t &l = *in.layout;
  ns.world = topoaware_layout_world(&l);
  if (ns.world != in.total_tasks)
    throw std::runtime_error("the step has " + std::to_string(in.total_tasks) + " tasks, the layout " +
                             std::to_string(ns.world) + " ranks");
  if (n == 0 || ns.world % n != 0)
    throw std::runtime_error("the layout's ranks do not split evenly over the step's nodes");
  ns.per_node = static_cast<uint32_t>(ns.world / n);
}

// The step's ranks from slurmctld's node order, if the step is the job's own (its nodes and its
// layout): no topology file is read. Empty if not: the caller reads the topology, and finds the
// step's node names in *step if they were expanded here (a list of up to 131,072 names is
// expanded once per step, not twice).
std::vector<std::string> placed_order_for(const char *placed_order, const char *placed_layout,
                                         const char *expected_hash, const topoaware_layout_t *layout,
                                         const char *nodelist, std::optional<std::vector<std::string>> *step) {
  if (!placed_order || !placed_layout || !expected_hash || !*expected_hash) return {};
  char lay[256];
  if (topoaware_layout_string(layout, lay, sizeof(lay)) != 0 || std::strcmp(lay, placed_layout) != 0) return {};
  std::vector<std::string> order = topoaware::split_names(placed_order);
  *step = step_names(nodelist);
  std::vector<std::string> a = order, b = **step;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b || std::adjacent_find(a.begin(), a.end()) != a.end()) return {};
  return order;
}

std::vector<std::string> placed_order_for_step(const topoaware_task_in_t &in,
                                               std::optional<std::vector<std::string>> *step) {
  return placed_order_for(in.placed_order, in.placed_layout, in.expected_hash, in.layout, in.nodelist, step);
}

// This node's ranks once ns->names holds the job's nodes in rank order: the k-th node holds ranks
// k*G .. k*G+G-1 (G ranks per node), and rank 0's node is the master.
void ranks_from_node_order(const topoaware_task_in_t &in, NodeStep *ns) {
  const auto self = std::find(ns->names.begin(), ns->names.end(), in.self);
  if (self == ns->names.end())
    throw std::runtime_error(std::string("node ") + in.self + " is not in the job's node list");
  const uint32_t k = static_cast<uint32_t>(self - ns->names.begin());
  const topoaware::Layout layout = topoaware::layout_from_c(*in.layout);
  ns->ranks.clear();
  for (uint32_t j = 0; j < ns->per_node; ++j) {
    const uint32_t rank = k * ns->per_node + j;
    const topoaware::RankCoord c = topoaware::rank_coord(layout, rank);
    ns->ranks.push_back({rank, rank / ns->per_node, rank % ns->per_node, c.tp, c.cp, c.ep, c.dp, c.pp, c.edp});
  }
  ns->master = ns->names.front();
}

std::unique_ptr<NodeStep> node_from_placed_order(const topoaware_task_in_t &in, std::vector<std::string> order,
                                                 std::string key) {
  auto ns = std::make_unique<NodeStep>();
  ns->key = std::move(key);
  ns->hash = in.expected_hash;
  ns->names = std::move(order);
  set_world(in, static_cast<uint32_t>(ns->names.size()), *ns);
  ranks_from_node_order(in, ns.get());
  ns->rail_optimized = in.placed_rail_optimized != 0;
  return ns;
}

void probe_devices(const topoaware_task_in_t &in, NodeStep *ns) {
  if (!in.gpu_hints) return;
  topoaware::ProbeOptions po;
  if (in.hwloc_xml) po.xml = in.hwloc_xml;
  if (in.exclude_nics) po.exclude_nics = topoaware::split_names(in.exclude_nics);
  // slurmstepd's root side loaded them already (topoaware_node_devices_load): no second probe.
  const topoaware::NodeDevices *kept = topoaware::kept_node_devices(po);
  ns->devices = kept ? *kept : topoaware::probe_node_devices(po);
  ns->probed = true;
}

// The node's multi-node NVLink domain among the step's nodes (NodeStep::nvlink_domain), from the
// topology the job was placed with (its placement hash must match: a stale copy gives no hint
// rather than a wrong one). Only for the GPU hints.
void nvlink_domain_in(const topoaware::Topology &t, const topoaware_task_in_t &in, NodeStep *ns) {
  if (!in.gpu_hints || t.nvlink_domains.empty() || t.placement_hash != ns->hash) return;
  const int self = t.host_index(in.self);
  if (self < 0) return;
  const int d = t.hosts[size_t(self)].nvlink_domain;
  if (d < 0 || size_t(d) >= t.nvlink_domains.size()) return;
  uint32_t peers = 0;
  for (const std::string &n : ns->names) {
    const int h = t.host_index(n);
    peers += h >= 0 && t.hosts[size_t(h)].nvlink_domain == d;
  }
  if (peers < 2) return;  // no other node of the step in this domain: NVLink inside the node only
  const topoaware::NvlinkDomain &nd = t.nvlink_domains[size_t(d)];
  ns->nvlink_domain = nd.cluster_uuid + ":" + std::to_string(nd.clique_id);
  ns->tp_spans_nodes = in.layout->tp > ns->per_node;
}

// The same from the topology file, for a step whose ranks came from the placed order (no file
// read so far); a file that cannot be read leaves the hints out.
void nvlink_domain_from_file(const topoaware_task_in_t &in, NodeStep *ns) {
  if (!in.gpu_hints || !in.topology_path) return;
  try {
    nvlink_domain_in(topoaware::load_topology_file(in.topology_path), in, ns);
  } catch (const std::exception &) {  // unreadable now: no NVLink hints, never a failed task
  }
}

std::unique_ptr<NodeStep> compute_node(const topoaware_task_in_t &in, std::string key) {
  std::optional<std::vector<std::string>> step;
  if (std::vector<std::string> order = placed_order_for_step(in, &step); !order.empty()) {
    auto ns = node_from_placed_order(in, std::move(order), std::move(key));
    probe_devices(in, ns.get());
    // The placed order needs no topology file; reading one for every step on every node (tens of
    // MB on a large cluster) is paid only where TP groups span nodes, which happens only inside
    // NVLink domains and needs NCCL's multi-node NVLink required. With TP inside a node the hint
    // would be NCCL's own default (2).
    if (in.layout->tp > ns->per_node) nvlink_domain_from_file(in, ns.get());
    return ns;
  }
  const topoaware_layout_t &l = *in.layout;
  char err[TOPOAWARE_ERR_LEN];
  std::unique_ptr<topoaware_topo_t, TopoFree> topo(topoaware_topo_load(in.topology_path, err, sizeof(err)));
  if (!topo) throw std::runtime_error(std::string("topology file ") + in.topology_path + ": " + err);
  auto ns = std::make_unique<NodeStep>();
  ns->key = std::move(key);
  ns->hash = topoaware_topo_hash(topo.get());
  if (in.expected_hash && *in.expected_hash && ns->hash != in.expected_hash)
    throw std::runtime_error(std::string("topology file ") + in.topology_path + " has hash " + ns->hash +
                             " but the job was placed with " + in.expected_hash + " (stale copy?)");

  ns->names = step ? std::move(*step) : step_names(in.nodelist);
  const uint32_t n = static_cast<uint32_t>(ns->names.size());
  set_world(in, n, *ns);
  // The job's node order, computed once; the node's own ranks follow from its place in it.
  std::vector<const char *> cnames;
  cnames.reserve(n);
  for (const auto &name : ns->names) cnames.push_back(name.c_str());
  std::vector<uint32_t> order(n);
  if (topoaware_rank_order(topo.get(), cnames.data(), n, &l, order.data(), err, sizeof(err)) != 0)
    throw std::runtime_error(err);
  std::vector<std::string> ordered(n);
  for (uint32_t k = 0; k < n; ++k) ordered[k] = std::move(ns->names[order[k]]);
  ns->names = std::move(ordered);
  ranks_from_node_order(in, ns.get());
  ns->rail_optimized = topoaware_topo_rail_optimized(topo.get()) != 0;
  probe_devices(in, ns.get());
  // The topology is in memory already: no second read of the file for the NVLink hints.
  nvlink_domain_in(topoaware::topology_of(topo.get()), in, ns.get());
  return ns;
}

// The one NodeStep of this process (slurmstepd's, inherited by its tasks).
std::unique_ptr<NodeStep> g_node;

const NodeStep &node_step(const topoaware_task_in_t &in) {
  if (!in.topology_path || !in.nodelist || !in.self || !in.layout)
    throw std::invalid_argument("missing topology path, node list, node name or layout");
  check_length(in.nodelist, TOPOAWARE_NODELIST_MAX_LEN, "the node list");
  check_length(in.self, TOPOAWARE_NODENAME_MAX_LEN, "the node name");
  check_length(in.expected_hash, TOPOAWARE_SHORT_VAR_MAX_LEN, "the topology hash");
  std::string key = node_key(in);
  if (!key.empty() && g_node && g_node->key == key) return *g_node;
  g_node = compute_node(in, std::move(key));
  return *g_node;
}

std::string num(uint64_t v) { return std::to_string(v); }

// Adds one variable. Its kind must agree with kTaskDefaultVars: a default variable the plugin does
// not know as one would be set over the user's own value.
void add_var(topoaware_task_plan_t &p, const char *name, const std::string &v, int kind) {
  if ((kind == TOPOAWARE_VAR_DEFAULT) != is_default_var(name))
    throw std::logic_error(std::string("internal error: ") + name +
                           " is not declared in kTaskDefaultVars as its kind says");
  p.vars.push_back({name, v, kind});
}

// The rank's own variables (its coordinates, the step's sizes, the layout and the topology hash)
// and the defaults launchers read (RANK, WORLD_SIZE, MASTER_ADDR, ...).
void add_rank_vars(topoaware_task_plan_t &p, const NodeStep &ns, const topoaware_rank_t &r,
                   const topoaware_task_in_t &in) {
  char lay[256];
  topoaware_layout_string(in.layout, lay, sizeof(lay));
  const uint32_t n = uint32_t(ns.names.size());
  const uint64_t world = ns.world;
  add_var(p, "TOPOAWARE_RANK", num(r.rank), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_TP_RANK", num(r.tp), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_CP_RANK", num(r.cp), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_EP_RANK", num(r.ep), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_DP_RANK", num(r.dp), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_PP_RANK", num(r.pp), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_EDP_RANK", num(r.edp), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_NODE_RANK", num(r.node_rank), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_LOCAL_RANK", num(r.local_rank), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_NNODES", num(n), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_WORLD_SIZE", num(world), TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_LAYOUT", lay, TOPOAWARE_VAR_OURS);
  add_var(p, "TOPOAWARE_TOPO_HASH", p.hash, TOPOAWARE_VAR_OURS);
  add_var(p, "RANK", num(r.rank), TOPOAWARE_VAR_DEFAULT);
  add_var(p, "LOCAL_RANK", num(r.local_rank), TOPOAWARE_VAR_DEFAULT);
  add_var(p, "WORLD_SIZE", num(world), TOPOAWARE_VAR_DEFAULT);
  add_var(p, "LOCAL_WORLD_SIZE", num(ns.per_node), TOPOAWARE_VAR_DEFAULT);
  add_var(p, "MASTER_ADDR", ns.master, TOPOAWARE_VAR_DEFAULT);
  add_var(p, "MASTER_PORT", num(topoaware_master_port(in.job_id)), TOPOAWARE_VAR_DEFAULT);
}

// CUDA_VISIBLE_DEVICES as Slurm set it, sorted and without repeats, and this task's GPU and its
// NIC (gpu, nic) when the task has one of its own. A value that cannot be read (too long, UUIDs,
// a GPU hwloc does not see) is left as Slurm set it, with a note.
void add_cvd_vars(topoaware_task_plan_t &p, const topoaware::NodeDevices &d, const topoaware_rank_t &r,
                  const char *cuda_visible_devices, std::string &gpu, std::string &nic) {
  std::vector<unsigned> idx;
  if (strnlen(cuda_visible_devices, TOPOAWARE_CVD_MAX_LEN + 1) > TOPOAWARE_CVD_MAX_LEN) {
    p.note = "CUDA_VISIBLE_DEVICES is longer than " + num(TOPOAWARE_CVD_MAX_LEN) + " bytes: left as Slurm set it";
  } else if (!parse_indices(cuda_visible_devices, &idx)) {
    p.note = "CUDA_VISIBLE_DEVICES is not a list of indices (UUIDs?): left as Slurm set it";
  } else if (*std::max_element(idx.begin(), idx.end()) >= d.gpus.size()) {
    p.note = "CUDA_VISIBLE_DEVICES names GPU " + num(*std::max_element(idx.begin(), idx.end())) +
             " but hwloc finds " + num(d.gpus.size()) + " GPUs: left as Slurm set it";
  } else {
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    std::string cvd;
    for (unsigned i : idx) cvd += (cvd.empty() ? "" : ",") + num(i);
    add_var(p, "CUDA_VISIBLE_DEVICES", cvd, TOPOAWARE_VAR_SLURM);
    add_var(p, "CUDA_DEVICE_ORDER", "PCI_BUS_ID", TOPOAWARE_VAR_DEFAULT);
    unsigned mine = idx.size() == 1 ? idx[0] : (r.local_rank < idx.size() ? idx[r.local_rank] : ~0u);
    if (mine != ~0u) {
      gpu = d.gpus[mine].busid;
      if (d.gpus[mine].nic >= 0) nic = d.nics[static_cast<size_t>(d.gpus[mine].nic)].name;
      add_var(p, "TOPOAWARE_GPU", gpu, TOPOAWARE_VAR_OURS);
      if (nic != "-") add_var(p, "TOPOAWARE_NIC", nic, TOPOAWARE_VAR_OURS);
    }
  }
}

// The hints from this node's devices (with gpu_hints): the GPU of the task, the NICs NCCL may use
// and how, and multi-node NVLink.
void add_device_vars(topoaware_task_plan_t &p, const NodeStep &ns, const topoaware_rank_t &r,
                     const topoaware_task_in_t &in, std::string &gpu, std::string &nic) {
  const topoaware::NodeDevices &d = ns.devices;
  if (in.cuda_visible_devices && *in.cuda_visible_devices) add_cvd_vars(p, d, r, in.cuda_visible_devices, gpu, nic);
  // Said last: it explains any other note about GPUs.
  if (d.pci_devices == 0)
    p.note = "hwloc sees no PCI device on this node, so no GPU or NIC hints: install libhwloc-plugins "
             "(hwloc's PCI backend, hwloc_pci.so)";
  std::string hca = topoaware::nccl_ib_hca(d);
  if (!hca.empty()) add_var(p, "NCCL_IB_HCA", hca, TOPOAWARE_VAR_DEFAULT);
  // On a rail-optimized fabric NIC k of every node is on rail k's leaves: traffic that changes
  // rails crosses the spines, so NCCL should keep rings on one rail (NCCL_CROSS_NIC=0).
  if (!hca.empty() && ns.rail_optimized) add_var(p, "NCCL_CROSS_NIC", "0", TOPOAWARE_VAR_DEFAULT);
  // A multi-node NVLink domain (NVL72) holds other nodes of the step: NCCL's multi-node NVLink
  // (NCCL 2.21+), which needs its cuMem allocations (2.18+). Required (1: NCCL fails at init
  // rather than running on without it) when the TP groups span nodes, which the placement chose
  // NVLink for; else automatic (2). The IMEX channel it needs is Slurm's (switch/nvidia_imex).
  if (!ns.nvlink_domain.empty()) {
    add_var(p, "NCCL_MNNVL_ENABLE", ns.tp_spans_nodes ? "1" : "2", TOPOAWARE_VAR_DEFAULT);
    add_var(p, "NCCL_CUMEM_ENABLE", "1", TOPOAWARE_VAR_DEFAULT);
    add_var(p, "TOPOAWARE_NVLINK_DOMAIN", ns.nvlink_domain, TOPOAWARE_VAR_OURS);
  }
}

topoaware_task_plan_t *plan(const topoaware_task_in_t &in) {
  const NodeStep &ns = node_step(in);
  auto p = std::make_unique<topoaware_task_plan_t>();
  p->hash = ns.hash;
  const uint32_t count = uint32_t(ns.ranks.size());
  if (count != in.local_tasks || in.local_id >= count)
    throw std::runtime_error("this node runs " + std::to_string(in.local_tasks) +
                             " tasks of the step, the layout puts " + std::to_string(count) + " ranks on it");
  const topoaware_rank_t &r = ns.ranks[in.local_id];
  add_rank_vars(*p, ns, r, in);
  std::string gpu = "-", nic = "-";
  if (in.gpu_hints) add_device_vars(*p, ns, r, in, gpu, nic);
  p->map_line = "rank=" + num(r.rank) + " node=" + num(r.node_rank) + " host=" + in.self +
                " local=" + num(r.local_rank) + " tp=" + num(r.tp) + " cp=" + num(r.cp) + " ep=" + num(r.ep) +
                " dp=" + num(r.dp) + " pp=" + num(r.pp) + " gpu=" + gpu + " nic=" + nic;
  return p.release();
}

// The job as a whole (topoaware_job_map): slurmctld's placed order if it is for the job's nodes and
// layout (what its steps' tasks get: it may count other jobs' rings, which the node cannot see),
// else the node order of topoaware_rank_order; through the core's own types so that each node's
// leaf and pod are known too.
topoaware_job_map_t *job_map(const topoaware_job_in_t &in) {
  if (!in.topology_path || !in.nodelist || !in.layout)
    throw std::invalid_argument("missing topology path, node list or layout");
  const topoaware::Layout l = topoaware::layout_from_c(*in.layout);
  topoaware::validate_layout(l);
  const topoaware::Topology topo = topoaware::load_topology_file(in.topology_path);
  // The placement hash, as slurmctld's TOPOAWARE_TOPO_HASH (with routes it covers them too).
  if (in.expected_hash && *in.expected_hash && topo.placement_hash != in.expected_hash)
    throw std::runtime_error(std::string("topology file ") + in.topology_path + " has hash " + topo.placement_hash +
                             " but the job was placed with " + in.expected_hash + " (stale copy?)");
  std::optional<std::vector<std::string>> expanded;
  const std::vector<std::string> placed =
      placed_order_for(in.placed_order, in.placed_layout, in.expected_hash, in.layout, in.nodelist, &expanded);
  const std::vector<std::string> names = expanded ? std::move(*expanded) : step_names(in.nodelist);
  const uint64_t world = l.world();
  if (names.empty() || world % names.size() != 0)
    throw std::runtime_error("the layout's " + std::to_string(world) + " ranks do not split evenly over the job's " +
                             std::to_string(names.size()) + " nodes");
  if (world > TOPOAWARE_JOB_MAP_MAX_RANKS)
    throw std::runtime_error("the layout has " + std::to_string(world) + " ranks, more than the " +
                             std::to_string(TOPOAWARE_JOB_MAP_MAX_RANKS) + " a hostfile is written for");
  const topoaware::TopoIndex index(topo);
  std::vector<int> hosts;
  hosts.reserve(names.size());
  for (const std::string &n : names) {
    const int h = index.find_host(n);
    if (h < 0) throw std::runtime_error("node " + n + " is not in the topology file (stale topology?)");
    hosts.push_back(h);
  }
  std::vector<int> ordered;
  if (!placed.empty()) {
    for (const std::string &name : placed) ordered.push_back(index.find_host(name));  // the same names: all found
  } else {
    topoaware::RankOrderer ro(index);
    ro.order(hosts, l, ordered);  // throws on duplicates and on a layout that does not fit
  }
  const uint32_t n = static_cast<uint32_t>(ordered.size());
  const uint32_t per_node = static_cast<uint32_t>(world / n);
  auto m = std::make_unique<topoaware_job_map_t>();
  m->hash = topo.placement_hash;
  m->ranks = static_cast<uint32_t>(world);
  m->nodes = n;
  char lay[256];
  topoaware_layout_string(in.layout, lay, sizeof(lay));
  m->rankmap =
      std::string("# topoaware rank map: ") + lay + ", " + std::to_string(n) + " nodes, topology " + topo.placement_hash +
      "\n";
  auto u = [](uint64_t v) { return std::to_string(v); };
  auto idx = [&](int v) { return v < 0 ? std::string("-") : u(static_cast<uint64_t>(v)); };
  for (uint32_t k = 0; k < n; ++k) {
    const topoaware::Host &h = topo.hosts[size_t(ordered[k])];
    const std::string leaf =
        h.leaf >= 0 && size_t(h.leaf) < topo.switches.size() ? topo.switches[size_t(h.leaf)].name : "-";
    const std::string tail = " leaf=" + leaf + " leaf_group=" + idx(h.leaf_group) + " pod=" + idx(h.pod) + "\n";
    for (uint32_t j = 0; j < per_node; ++j) {
      const uint32_t r = k * per_node + j;
      const topoaware::RankCoord c = topoaware::rank_coord(l, r);
      m->hostfile += h.name + "\n";
      m->rankmap += "rank=" + u(r) + " node=" + u(k) + " host=" + h.name + " local=" + u(j) + " tp=" + u(c.tp) +
                    " cp=" + u(c.cp) + " ep=" + u(c.ep) + " dp=" + u(c.dp) + " pp=" + u(c.pp) + " edp=" + u(c.edp) +
                    tail;
    }
  }
  return m.release();
}

}  // namespace

extern "C" {

const char *topoaware_task_default_var(uint32_t i) {
  return i < topoaware::kTaskDefaultVarCount ? topoaware::kTaskDefaultVars[i] : nullptr;
}
int topoaware_task_is_default_var(const char *name) { return is_default_var(name) ? 1 : 0; }

topoaware_job_map_t *topoaware_job_map(const topoaware_job_in_t *in, char *err, size_t errlen) {
  return topoaware::c_boundary<topoaware_job_map_t *>(err, errlen, nullptr, [&] {
    if (!in) throw std::invalid_argument("no input");
    return job_map(*in);
  });
}
void topoaware_job_map_free(topoaware_job_map_t *m) { delete m; }
const char *topoaware_job_map_hostfile(const topoaware_job_map_t *m) { return m ? m->hostfile.c_str() : ""; }
const char *topoaware_job_map_rankmap(const topoaware_job_map_t *m) { return m ? m->rankmap.c_str() : ""; }
uint32_t topoaware_job_map_ranks(const topoaware_job_map_t *m) { return m ? m->ranks : 0; }
uint32_t topoaware_job_map_nodes(const topoaware_job_map_t *m) { return m ? m->nodes : 0; }
const char *topoaware_job_map_hash(const topoaware_job_map_t *m) { return m ? m->hash.c_str() : ""; }

uint32_t topoaware_master_port(uint32_t job_id) { return 20000u + job_id % 12000u; }

int topoaware_task_prepare(const topoaware_task_in_t *in, char *err, size_t errlen) {
  return topoaware::c_boundary(err, errlen, -1, [&] {
    if (!in) throw std::invalid_argument("no input");
    node_step(*in);
    return 0;
  });
}

topoaware_task_plan_t *topoaware_task_plan(const topoaware_task_in_t *in, char *err, size_t errlen) {
  return topoaware::c_boundary<topoaware_task_plan_t *>(err, errlen, nullptr, [&] {
    if (!in) throw std::invalid_argument("no input");
    return plan(*in);
  });
}

void topoaware_task_plan_free(topoaware_task_plan_t *p) { delete p; }
uint32_t topoaware_task_plan_vars(const topoaware_task_plan_t *p) {
  return p ? static_cast<uint32_t>(p->vars.size()) : 0;
}
const char *topoaware_task_plan_name(const topoaware_task_plan_t *p, uint32_t i) {
  return p && i < p->vars.size() ? p->vars[i].name.c_str() : nullptr;
}
const char *topoaware_task_plan_value(const topoaware_task_plan_t *p, uint32_t i) {
  return p && i < p->vars.size() ? p->vars[i].value.c_str() : nullptr;
}
int topoaware_task_plan_kind(const topoaware_task_plan_t *p, uint32_t i) {
  return p && i < p->vars.size() ? p->vars[i].kind : -1;
}
const char *topoaware_task_plan_map_line(const topoaware_task_plan_t *p) { return p ? p->map_line.c_str() : ""; }
const char *topoaware_task_plan_note(const topoaware_task_plan_t *p) { return p ? p->note.c_str() : ""; }
const char *topoaware_task_plan_hash(const topoaware_task_plan_t *p) { return p ? p->hash.c_str() : ""; }

}  // extern "C"
