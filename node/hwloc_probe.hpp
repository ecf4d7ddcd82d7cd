// SPDX-License-Identifier: GPL-2.0-or-later
// The node's GPUs and InfiniBand NICs as hwloc sees them, and which NIC is nearest to each GPU.
// Used by spank_topoaware in every task (topology/hwloc_probe_c.h is the C API). No Slurm here.
//
// GPUs: PCI devices of vendor NVIDIA (0x10de) with class 3D (0x0302) or VGA (0x0300), and any PCI
// device that carries a CUDA ("cuda<N>") or NVML ("nvml<N>") OS device (recordings made without
// the CUDA backend have only the PCI devices). Other vendors' VGA chips (BMC graphics) and NVIDIA
// devices of other classes (NVSwitch, 0x0680) are not GPUs. Order: PCI bus id (domain, bus, device,
// function), which is CUDA's order under CUDA_DEVICE_ORDER=PCI_BUS_ID.
// NICs: OpenFabrics OS devices (mlx5_N, ...), minus an exclude list (storage/management NICs),
// ordered by PCI bus id, then name.
// Pairing, for each GPU in order: the NIC with the nearest locality (same PCIe switch, the deepest
// common bridge first; then same host bridge; then same non-I/O ancestor, e.g. the package; then a
// shared NUMA node); among equals the NIC with fewer GPUs already paired, then the first. A GPU
// with no NIC at any of those levels has none (nic = -1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace topoaware {

enum class Locality { None = 0, Numa = 1, NonIo = 2, HostBridge = 3, Switch = 4 };
const char *locality_name(Locality l);

struct HwlocGpu {
  std::string busid;          // "0000:03:00.0"
  uint16_t vendor = 0, device = 0, pci_class = 0;
  std::string cuda, nvml;     // OS device names, "" if none
  int numa = -1;              // OS index of the first NUMA node near it, -1 if unknown
  int nic = -1;               // index into NodeDevices::nics, -1 = no nearby NIC
  Locality locality = Locality::None;
};

struct HwlocNic {
  std::string name;   // "mlx5_0"
  std::string busid;  // "" if the OS device has no PCI parent
  unsigned port = 1;  // lowest port hwloc reports (Port<N>State/LID infos), else 1
  int numa = -1;
};

struct NodeDevices {
  std::vector<HwlocGpu> gpus;
  std::vector<HwlocNic> nics;           // compute NICs only
  std::vector<std::string> excluded;    // OpenFabrics devices left out by the exclude list
  // PCI devices hwloc saw at all. 0 on a live node means hwloc has no PCI backend: Debian ships it
  // (hwloc_pci.so) in libhwloc-plugins, which libhwloc15 only recommends.
  unsigned pci_devices = 0;
};

struct ProbeOptions {
  std::string xml;                      // "" = this machine (or $HWLOC_XMLFILE, read by hwloc)
  std::vector<std::string> exclude_nics;  // exact names
};

// Throws std::runtime_error when hwloc fails.
NodeDevices probe_node_devices(const ProbeOptions &opts);

// "=mlx5_0:1,mlx5_1:1": the NICs paired with GPUs, in GPU order (each once), then the other
// compute NICs in NIC order. "" when there is no compute NIC.
std::string nccl_ib_hca(const NodeDevices &d);

// Splits "a,b, c" into names (empty parts dropped).
std::vector<std::string> split_names(const std::string &csv);

}  // namespace topoaware
