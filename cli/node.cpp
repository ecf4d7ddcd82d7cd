// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware node: this node's GPUs and NICs as spank_topoaware sees them (hwloc), which NIC each
// GPU is paired with, and, for a layout, the variables each task on this node would get: the same
// code the SPANK plugin runs in slurmstepd (node/hwloc_probe.hpp, the task plan of capi/task_c.h),
// so that an admin can check a new node type (or its recorded hwloc XML) before users run on it.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_commands.hpp"
#include "config.hpp"
#include "hostlist.hpp"
#include "hwloc_probe.hpp"
#include "nvlink.hpp"
#include "layout_c.h"
#include "task_c.h"
#include "topoaware_c.h"

namespace topoaware {

void add_node_command(CLI::App &app, NodeOptions &o) {
  auto *node = app.add_subcommand(
      "node", "Show this node's GPUs and NICs as spank_topoaware sees them, and what a layout's tasks would get");
  o.command = node;
  node->add_option("--hwloc-xml", o.hwloc_xml, "Read a recorded hwloc XML (FILE) instead of this machine")
      ->check(CLI::ExistingFile);
  node->add_option("--exclude-nics", o.exclude_nics, "NICs left out, as spank_topoaware's exclude_nics= (mlx5_8,...)");
  node->add_option("--tp", o.axes[0], "Tensor parallel size: show the variables of the tasks on this node");
  node->add_option("--cp", o.axes[1], "Context parallel size");
  node->add_option("--ep", o.axes[2], "Expert parallel size");
  node->add_option("--dp", o.axes[3], "Data parallel size");
  node->add_option("--pp", o.axes[4], "Pipeline parallel size");
  node->add_option("--rank-order", o.order, "tp-cp-ep-dp-pp (Megatron, default) or tp-pp-dp");
  node->add_option("--nodes", o.nodes, "The job's nodes, a Slurm host list (default: this node alone)");
  node->add_option("--self", o.self, "This node's Slurm name (default: the host name up to the first dot)");
  node->add_option("--local-rank", o.local_rank, "Show only this task of the node (default: every task)")
      ->check(CLI::Range(0, 1023));
  node->add_option("--topology", o.topology,
                   "topology.json (FILE; default: TopologyFile= of topoaware.conf, else topology.json beside it)");
  node->add_option("--format", o.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  node->add_flag("--nvlink", o.nvlink,
                 "Print only this node's NVLink domain (NVML fabric cluster UUID, clique ID, GPUs), one line for "
                 "discover --nvlink-domains");
}

namespace {

using nlohmann::json;

std::string short_hostname() {
  char buf[256] = "";
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  std::string h(buf);
  return h.substr(0, h.find('.'));
}

struct TaskVars {
  uint32_t local_id = 0;
  std::vector<std::pair<std::string, std::string>> vars;
  std::string map_line, note;
};

// The task plans of this node's tasks, exactly as spank_topoaware's task_init asks for them.
std::vector<TaskVars> task_plans(const NodeOptions &o, const topoaware_layout_t &layout, const std::string &topo,
                                 const std::string &self, const std::string &nodes, std::string &hash) {
  const uint64_t world = uint64_t(layout.tp) * layout.cp * layout.dp * layout.pp;
  const size_t n = hostlist_expand(nodes, 1u << 17).size();
  if (n == 0 || world % n) throw Failure("the layout's " + std::to_string(world) + " ranks do not split evenly over " +
                                          std::to_string(n) + " node(s) (--nodes)");
  const uint32_t per_node = uint32_t(world / n);
  std::string cvd;  // Slurm's CUDA_VISIBLE_DEVICES for --gpus-per-node=<per_node>
  for (uint32_t i = 0; i < per_node; ++i) cvd += (i ? "," : "") + std::to_string(i);
  std::vector<TaskVars> out;
  for (uint32_t id = 0; id < per_node; ++id) {
    if (o.local_rank >= 0 && uint32_t(o.local_rank) != id) continue;
    topoaware_task_in_t in = {};
    in.topology_path = topo.c_str();
    in.nodelist = nodes.c_str();
    in.self = self.c_str();
    in.local_id = id;
    in.local_tasks = per_node;
    in.total_tasks = uint32_t(world);
    in.job_id = 1;
    in.layout = &layout;
    in.cuda_visible_devices = cvd.c_str();
    in.exclude_nics = o.exclude_nics.empty() ? nullptr : o.exclude_nics.c_str();
    in.hwloc_xml = o.hwloc_xml.empty() ? nullptr : o.hwloc_xml.c_str();
    in.gpu_hints = 1;
    char err[TOPOAWARE_ERR_LEN];
    topoaware_task_plan_t *p = topoaware_task_plan(&in, err, sizeof err);
    if (!p) throw Failure(std::string("a task on ") + self + " would get no hints: " + err);
    TaskVars t;
    t.local_id = id;
    for (uint32_t i = 0; i < topoaware_task_plan_vars(p); ++i)
      t.vars.push_back({topoaware_task_plan_name(p, i), topoaware_task_plan_value(p, i)});
    t.map_line = topoaware_task_plan_map_line(p);
    t.note = topoaware_task_plan_note(p);
    hash = topoaware_task_plan_hash(p);
    topoaware_task_plan_free(p);
    out.push_back(std::move(t));
  }
  if (o.local_rank >= 0 && out.empty())
    throw Failure("--local-rank " + std::to_string(o.local_rank) + ": this node runs " + std::to_string(per_node) +
                  " tasks (local ranks 0-" + std::to_string(per_node - 1) + ")");
  return out;
}

// The layout options, checked as the SPANK plugin checks them; true when a layout was given.
bool checked_layout(const NodeOptions &o, topoaware_options_t &opts) {
  topoaware_options_init(&opts);
  static const char *const kAxes[] = {"tp", "cp", "ep", "dp", "pp"};
  char err[TOPOAWARE_ERR_LEN];
  for (int i = 0; i < 5; ++i)
    if (!o.axes[i].empty() && topoaware_options_set(&opts, kAxes[i], o.axes[i].c_str(), err, sizeof err) != 0)
      throw Failure(err, 1);
  if (!o.order.empty() && topoaware_options_set(&opts, "rank-order", o.order.c_str(), err, sizeof err) != 0)
    throw Failure(err, 1);
  const bool layout = topoaware_options_has_layout(&opts) != 0;
  if (layout && topoaware_options_check(&opts, err, sizeof err) != 0) throw Failure(err, 1);
  return layout;
}

// A layout's part of the output: the job's nodes, this node, the topology and this node's tasks.
struct NodeTasks {
  std::string nodes, self, topo, hash;
  std::vector<TaskVars> tasks;
};

// The NIC a GPU is paired with ("" when none).
std::string gpu_nic_name(const NodeDevices &d, int i) {
  return i >= 0 && size_t(i) < d.nics.size() ? d.nics[size_t(i)].name : std::string();
}

// --format json: the devices, then the layout's tasks when one was given (layout non-null).
json node_json(const NodeDevices &d, const std::string &source, const NodeTasks *layout) {
  json j = {{"source", source}, {"pci_devices", d.pci_devices}, {"nccl_ib_hca", nccl_ib_hca(d)}};
  j["gpus"] = json::array();
  for (size_t i = 0; i < d.gpus.size(); ++i) {
    const HwlocGpu &g = d.gpus[i];
    j["gpus"].push_back({{"index", i}, {"busid", g.busid}, {"cuda", g.cuda}, {"numa", g.numa},
                         {"nic", gpu_nic_name(d, g.nic)}, {"locality", locality_name(g.locality)}});
  }
  j["nics"] = json::array();
  for (const HwlocNic &n : d.nics)
    j["nics"].push_back({{"name", n.name}, {"busid", n.busid}, {"port", n.port}, {"numa", n.numa}});
  j["excluded_nics"] = d.excluded;
  if (layout) {
    j["layout"] = {{"nodes", layout->nodes}, {"self", layout->self}, {"topology", layout->topo},
                   {"topology_hash", layout->hash}};
    j["tasks"] = json::array();
    for (const TaskVars &t : layout->tasks) {
      json vars = json::object();
      for (const auto &[k, v] : t.vars) vars[k] = v;
      j["tasks"].push_back({{"local_rank", t.local_id}, {"map", t.map_line}, {"note", t.note}, {"env", vars}});
    }
  }
  return j;
}

// The text form of the devices: a summary line, the GPU and NIC tables, the NICs left out and
// the NCCL_IB_HCA a task here gets.
std::string devices_text(const NodeDevices &d, const std::string &source) {
  std::string s = "Node: " + source + ": " + std::to_string(d.gpus.size()) + " GPUs, " +
                  std::to_string(d.nics.size()) + " compute NICs, " + std::to_string(d.pci_devices) +
                  " PCI devices seen by hwloc\n";
  if (d.pci_devices == 0)
    s += "WARNING: hwloc sees no PCI device: no GPU or NIC hints on this node (install libhwloc-plugins)\n";
  char line[512];
  s += "GPU  bus id        CUDA    NUMA  NIC       locality\n";
  for (size_t i = 0; i < d.gpus.size(); ++i) {
    const HwlocGpu &g = d.gpus[i];
    std::snprintf(line, sizeof line, "%-4zu %-13s %-7s %-5s %-9s %s\n", i, g.busid.c_str(),
                  g.cuda.empty() ? "-" : g.cuda.c_str(), g.numa < 0 ? "-" : std::to_string(g.numa).c_str(),
                  g.nic < 0 ? "-" : gpu_nic_name(d, g.nic).c_str(), locality_name(g.locality));
    s += line;
  }
  s += "NIC      bus id        port  NUMA\n";
  for (const HwlocNic &n : d.nics) {
    std::snprintf(line, sizeof line, "%-8s %-13s %-5u %s\n", n.name.c_str(), n.busid.empty() ? "-" : n.busid.c_str(),
                  n.port, n.numa < 0 ? "-" : std::to_string(n.numa).c_str());
    s += line;
  }
  if (!d.excluded.empty()) {
    s += "Excluded NICs:";
    for (const std::string &e : d.excluded) s += " " + e;
    s += "\n";
  }
  s += "NCCL_IB_HCA for tasks here: " + (nccl_ib_hca(d).empty() ? std::string("(none)") : nccl_ib_hca(d)) + "\n";
  return s;
}

// The text form of a layout's tasks on this node: each one's map line, variables and note.
std::string tasks_text(const NodeTasks &l) {
  std::string s = "\nTasks on " + l.self + " of a job on " + l.nodes + " (topology " + l.topo + ", " + l.hash + "):\n";
  for (const TaskVars &t : l.tasks) {
    s += "  local rank " + std::to_string(t.local_id) + ": " + t.map_line + "\n";
    for (const auto &[k, v] : t.vars) s += "    " + k + "=" + v + "\n";
    if (!t.note.empty()) s += "    note: " + t.note + "\n";
  }
  return s;
}

}  // namespace

int run_node(const NodeOptions &o) {
  if (o.nvlink) {
    // A node without a domain is an answer, not an error: exit 0 so that pdsh collects every node.
    std::cout << format_node_nvlink(probe_nvlink_domain("libnvidia-ml.so.1")) << "\n";
    return 0;
  }
  ProbeOptions po;
  po.xml = o.hwloc_xml;
  po.exclude_nics = split_names(o.exclude_nics);
  const NodeDevices d = probe_node_devices(po);
  const std::string self = o.self.empty() ? short_hostname() : o.self;
  const std::string source = o.hwloc_xml.empty() ? "this machine (" + self + ")" : o.hwloc_xml;

  topoaware_options_t opts;
  const bool layout = checked_layout(o, opts);
  NodeTasks l;
  l.topo = o.topology;
  l.nodes = o.nodes.empty() ? self : o.nodes;
  l.self = self;
  if (layout) {
    if (self.empty()) throw Failure("cannot tell this node's name: give --self NAME", 1);
    if (l.topo.empty()) {
      const char *env = std::getenv("TOPOAWARE_CONF");
      const std::string conf = config_path(env, std::getenv("SLURM_CONF"));
      l.topo = topology_path(load_config(conf), conf);
    }
    l.tasks = task_plans(o, opts.layout, l.topo, self, l.nodes, l.hash);
  }
  if (o.format == "json") {
    std::cout << node_json(d, source, layout ? &l : nullptr).dump(1) << "\n";
    return 0;
  }
  std::cout << devices_text(d, source) + (layout ? tasks_text(l) : std::string());
  return 0;
}

}  // namespace topoaware
