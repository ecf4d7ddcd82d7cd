// SPDX-License-Identifier: GPL-2.0-or-later
// Helper of tests/slurm_topology_conf.sh: writes, for one hand-built topology,
//   DIR/topology.conf  (topology/tree, or topology/block with "block")
//   DIR/hosts          (all host names as one Slurm host list, for slurm.conf's NodeName=)
//   DIR/count          (number of hosts, for the Port= range)
//   DIR/switches       (names of the SwitchName=/BlockName= lines, one a line)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "hostlist.hpp"
#include "outputs.hpp"
#include "outputs_fixtures.hpp"

int main(int argc, char **argv) {
  if (argc < 3) {
    std::cerr << "usage: gen_topology_conf fat|pods|rail|dragonfly|wide DIR [tree|block]\n";
    return 2;
  }
  std::string kind = argv[1], dir = argv[2], plugin = argc > 3 ? argv[3] : "tree";
  topoaware::Topology t;
  if (kind == "fat") t = fixtures::fat_tree();
  else if (kind == "pods") t = fixtures::pods();
  else if (kind == "rail") t = fixtures::rail();
  else if (kind == "dragonfly") t = fixtures::dragonfly();
  else if (kind == "wide") t = fixtures::wide(96, 24);
  else {
    std::cerr << "gen_topology_conf: unknown topology " << kind << "\n";
    return 2;
  }
  std::string conf = plugin == "block" ? topoaware::to_topology_conf_block(t) : topoaware::to_topology_conf_tree(t);
  std::vector<std::string> names;
  for (const auto &h : t.hosts) names.push_back(h.name);
  std::ofstream(dir + "/topology.conf") << conf;
  std::ofstream(dir + "/hosts") << topoaware::hostlist_compress(names) << "\n";
  std::ofstream(dir + "/count") << names.size() << "\n";
  std::ofstream sw(dir + "/switches");
  const std::string key = plugin == "block" ? "BlockName=" : "SwitchName=";
  size_t pos = 0;
  while ((pos = conf.find(key, pos)) != std::string::npos) {
    if (pos == 0 || conf[pos - 1] == '\n') {
      size_t end = conf.find(' ', pos);
      sw << conf.substr(pos + key.size(), end - pos - key.size()) << "\n";
    }
    pos += key.size();
  }
  return 0;
}
