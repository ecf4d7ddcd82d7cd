// SPDX-License-Identifier: GPL-2.0-or-later
// Test helper of tests/golden.sh: prints what topoaware::probe_node_devices (node/hwloc_probe.hpp)
// finds in one recorded hwloc XML (no NIC excluded), in a stable text form that tests/golden.sh
// compares with tests/golden/hwloc/<name>.pairs:
//
//   gpu <bus id> <cuda name|-> <paired NIC|-> <locality>     one line per GPU, in probe order
//   nic <name> <bus id|-> <port>                             one line per compute NIC, in probe order
//
// Usage: golden_node_pairs FILE.xml. Exit status: 0 printed, 1 usage, 2 hwloc failed.
#include <cstdio>
#include <exception>
#include <string>

#include "hwloc_probe.hpp"

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: golden_node_pairs FILE.xml\n");
    return 1;
  }
  topoaware::ProbeOptions opts;
  opts.xml = argv[1];
  topoaware::NodeDevices d;
  try {
    d = topoaware::probe_node_devices(opts);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "golden_node_pairs: %s: %s\n", argv[1], e.what());
    return 2;
  }
  auto or_dash = [](const std::string &s) { return s.empty() ? std::string("-") : s; };
  for (const auto &g : d.gpus) {
    std::string nic = "-";
    if (g.nic >= 0 && size_t(g.nic) < d.nics.size()) nic = d.nics[size_t(g.nic)].name;
    std::printf("gpu %s %s %s %s\n", g.busid.c_str(), or_dash(g.cuda).c_str(), nic.c_str(),
                topoaware::locality_name(g.locality));
  }
  for (const auto &n : d.nics) std::printf("nic %s %s %u\n", n.name.c_str(), or_dash(n.busid).c_str(), n.port);
  return std::fflush(stdout) == 0 ? 0 : 2;
}
