// SPDX-License-Identifier: GPL-2.0-or-later
// See hwloc_probe.hpp.
#include "hwloc_probe.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <tuple>

#include "text.hpp"

namespace topoaware {

const char *locality_name(Locality l) {
  switch (l) {
    case Locality::Switch: return "switch";
    case Locality::HostBridge: return "hostbridge";
    case Locality::NonIo: return "package";
    case Locality::Numa: return "numa";
    default: return "none";
  }
}

std::vector<std::string> split_names(const std::string &csv) { return split_list(csv, ',', " \t"); }

namespace {

struct TopoDeleter {
  void operator()(hwloc_topology *t) const { hwloc_topology_destroy(t); }
};
using Topo = std::unique_ptr<hwloc_topology, TopoDeleter>;

using BusKey = std::tuple<unsigned, unsigned, unsigned, unsigned>;

BusKey bus_key(hwloc_obj_t pci) {
  const auto &p = pci->attr->pcidev;
  return {p.domain, p.bus, p.dev, p.func};
}

std::string busid(hwloc_obj_t pci) {
  char buf[32];
  const auto &p = pci->attr->pcidev;
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%01x", p.domain, p.bus, p.dev, p.func);
  return buf;
}

hwloc_obj_t pci_parent(hwloc_obj_t o) {
  for (hwloc_obj_t p = o ? o->parent : nullptr; p; p = p->parent)
    if (p->type == HWLOC_OBJ_PCI_DEVICE) return p;
  return nullptr;
}

int numa_of(hwloc_topology_t topo, hwloc_obj_t o) {
  hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(topo, o);
  if (!a || !a->nodeset) return -1;
  return hwloc_bitmap_first(a->nodeset);
}

unsigned nic_port(hwloc_obj_t os) {
  unsigned best = 0;
  for (unsigned i = 0; i < os->infos_count; i++) {
    const char *n = os->infos[i].name;
    unsigned port = 0;
    char rest[16];
    if (n && std::sscanf(n, "Port%u%15s", &port, rest) == 2 && port > 0 &&
        (!std::strcmp(rest, "State") || !std::strcmp(rest, "LID")))
      if (best == 0 || port < best) best = port;
  }
  return best ? best : 1;
}

int depth_of(hwloc_obj_t o) {
  int d = 0;
  for (; o; o = o->parent) d++;
  return d;
}

// Locality of two objects (PCI devices, or a non-I/O object for a NIC without PCI parent).
Locality locality(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b, int *depth) {
  // hwloc_get_common_ancestor_obj compares depths, which are negative for I/O objects: walk up.
  hwloc_obj_t ca = nullptr;
  for (hwloc_obj_t x = a; x && !ca; x = x->parent)
    for (hwloc_obj_t y = b; y; y = y->parent)
      if (x == y) {
        ca = x;
        break;
      }
  *depth = depth_of(ca);
  if (ca && ca->type == HWLOC_OBJ_PCI_DEVICE) return Locality::Switch;
  if (ca && ca->type == HWLOC_OBJ_BRIDGE)
    return ca->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI ? Locality::Switch : Locality::HostBridge;
  hwloc_obj_t na = hwloc_get_non_io_ancestor_obj(topo, a), nb = hwloc_get_non_io_ancestor_obj(topo, b);
  if (na && na == nb) return Locality::NonIo;
  if (na && nb && na->nodeset && nb->nodeset && hwloc_bitmap_intersects(na->nodeset, nb->nodeset))
    return Locality::Numa;
  return Locality::None;
}

bool is_nvidia_gpu_class(hwloc_obj_t pci) {
  const auto &p = pci->attr->pcidev;
  return p.vendor_id == 0x10de && (p.class_id == 0x0302 || p.class_id == 0x0300);
}

// A GPU or NIC found, with the hwloc object its locality is judged from.
struct FoundGpu {
  HwlocGpu g;
  hwloc_obj_t obj;
};
struct FoundNic {
  HwlocNic n;
  hwloc_obj_t obj;  // PCI parent, or the non-I/O ancestor
  BusKey key;
};

// Loads this machine's topology (or opts.xml's) into raw, with the PCI devices and none of the
// backends that would initialise GPU libraries.
void load_topology(hwloc_topology_t raw, const ProbeOptions &opts) {
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // On a live node, never let hwloc initialise CUDA/NVML/... inside a task before it starts: the
  // PCI devices are enough (vendor and class). Recordings keep their OS devices (XML is read as is).
  for (const char *c : {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl"})
    hwloc_topology_set_components(raw, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, c);
  if (!opts.xml.empty() && hwloc_topology_set_xml(raw, opts.xml.c_str()) != 0)
    throw std::runtime_error("hwloc cannot read " + opts.xml + ": " + std::strerror(errno));
  if (hwloc_topology_load(raw) != 0)
    throw std::runtime_error(std::string("hwloc_topology_load failed: ") + std::strerror(errno));
}

// The NVIDIA GPUs (by PCI class, or by a CUDA/NVML OS device below them) in bus order; counts
// every PCI device into out.pci_devices.
std::vector<FoundGpu> find_gpus(hwloc_topology_t raw, NodeDevices &out) {
  std::vector<FoundGpu> gpus;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(raw, nullptr); pci; pci = hwloc_get_next_pcidev(raw, pci)) {
    out.pci_devices++;
    HwlocGpu g;
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
      if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name) continue;
      if (!std::strncmp(c->name, "cuda", 4) && g.cuda.empty()) g.cuda = c->name;
      if (!std::strncmp(c->name, "nvml", 4) && g.nvml.empty()) g.nvml = c->name;
    }
    if (!is_nvidia_gpu_class(pci) && g.cuda.empty() && g.nvml.empty()) continue;
    g.busid = busid(pci);
    g.vendor = pci->attr->pcidev.vendor_id;
    g.device = pci->attr->pcidev.device_id;
    g.pci_class = pci->attr->pcidev.class_id;
    g.numa = numa_of(raw, pci);
    gpus.push_back({g, pci});
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const FoundGpu &a, const FoundGpu &b) { return bus_key(a.obj) < bus_key(b.obj); });
  return gpus;
}

// The InfiniBand NICs (OpenFabrics OS devices) in bus order, then name; those opts excludes go to
// out.excluded instead.
std::vector<FoundNic> find_nics(hwloc_topology_t raw, const ProbeOptions &opts, NodeDevices &out) {
  std::vector<FoundNic> nics;
  for (hwloc_obj_t os = hwloc_get_next_osdev(raw, nullptr); os; os = hwloc_get_next_osdev(raw, os)) {
    if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || !os->name) continue;
    if (std::find(opts.exclude_nics.begin(), opts.exclude_nics.end(), os->name) != opts.exclude_nics.end()) {
      out.excluded.push_back(os->name);
      continue;
    }
    FoundNic n;
    n.n.name = os->name;
    n.n.port = nic_port(os);
    hwloc_obj_t pci = pci_parent(os);
    if (pci) {
      n.n.busid = busid(pci);
      n.key = bus_key(pci);
      n.obj = pci;
    } else {
      n.key = {~0u, ~0u, ~0u, ~0u};
      n.obj = hwloc_get_non_io_ancestor_obj(raw, os);
    }
    n.n.numa = n.obj ? numa_of(raw, n.obj) : -1;
    nics.push_back(n);
  }
  std::sort(nics.begin(), nics.end(), [](const FoundNic &a, const FoundNic &b) {
    return std::tie(a.key, a.n.name) < std::tie(b.key, b.n.name);
  });
  return nics;
}

// Each GPU's NIC, in bus order: the closest (best locality, then the deepest common ancestor),
// ties to the NIC fewer GPUs have taken so far, so that equal GPUs spread over equal NICs.
void pair_gpus_with_nics(hwloc_topology_t raw, std::vector<FoundGpu> &gpus, const std::vector<FoundNic> &nics) {
  std::vector<unsigned> load(nics.size(), 0);
  for (auto &g : gpus) {
    int best = -1, best_depth = 0;
    Locality best_loc = Locality::None;
    for (size_t j = 0; j < nics.size(); j++) {
      if (!nics[j].obj) continue;
      int depth = 0;
      Locality l = locality(raw, g.obj, nics[j].obj, &depth);
      if (l == Locality::None) continue;
      bool better = best < 0 || l > best_loc || (l == best_loc && depth > best_depth) ||
                    (l == best_loc && depth == best_depth && load[j] < load[best]);
      if (better) best = static_cast<int>(j), best_loc = l, best_depth = depth;
    }
    g.g.nic = best;
    g.g.locality = best_loc;
    if (best >= 0) load[best]++;
  }
}

}  // namespace

NodeDevices probe_node_devices(const ProbeOptions &opts) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw std::runtime_error("hwloc_topology_init failed");
  Topo topo(raw);
  load_topology(raw, opts);
  NodeDevices out;
  std::vector<FoundGpu> gpus = find_gpus(raw, out);
  const std::vector<FoundNic> nics = find_nics(raw, opts, out);
  pair_gpus_with_nics(raw, gpus, nics);
  for (auto &g : gpus) out.gpus.push_back(g.g);
  for (auto &n : nics) out.nics.push_back(n.n);
  return out;
}

std::string nccl_ib_hca(const NodeDevices &d) {
  std::vector<bool> used(d.nics.size(), false);
  std::string s;
  auto add = [&](size_t j) {
    if (used[j]) return;
    used[j] = true;
    s += s.empty() ? "=" : ",";
    s += d.nics[j].name + ":" + std::to_string(d.nics[j].port);
  };
  for (const auto &g : d.gpus)
    if (g.nic >= 0 && static_cast<size_t>(g.nic) < d.nics.size()) add(static_cast<size_t>(g.nic));
  for (size_t j = 0; j < d.nics.size(); j++) add(j);
  return s;
}

}  // namespace topoaware
