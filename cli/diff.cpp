// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware diff OLD NEW: what changed between two topologies (topology.json files or saved
// ibnetdiscover dumps), as text or JSON; exit status 0 when they are the same, 1 when they differ
// (for cron, as diff(1)), 2 on trouble.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli_commands.hpp"
#include "ibnetdiscover_parser.hpp"
#include "node_name_map.hpp"
#include "topology_diff.hpp"
#include "topology_json.hpp"

namespace topoaware {

void add_diff_command(CLI::App &app, DiffOptions &o) {
  auto *diff = app.add_subcommand(
      "diff", "Show what changed between two topologies (topology.json or saved ibnetdiscover output)");
  o.command = diff;
  diff->add_option("old", o.before, "The earlier topology: topology.json or ibnetdiscover output (FILE)")
      ->required()
      ->check(CLI::ExistingFile);
  diff->add_option("new", o.after, "The later topology: topology.json or ibnetdiscover output (FILE)")
      ->required()
      ->check(CLI::ExistingFile);
  diff->add_option("--node-name-map", o.node_name_map, "ibnetdiscover node-name-map for dumps: GUID to host name")
      ->check(CLI::ExistingFile);
  diff->add_option("--format", o.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  diff->add_flag("-q,--quiet", o.quiet, "Print nothing; only the exit status says whether they differ");
}

Topology read_topology_or_dump(const std::string &path, const std::string &node_name_map) {
  std::ifstream in(path, std::ios::binary);
  char first = 0;
  while (in.get(first) && (first == ' ' || first == '\t' || first == '\r' || first == '\n')) {
  }
  if (first == '{') return load_topology_file(path);
  Fabric fabric = parse_ibnetdiscover_file(path, DumpFormat::Auto);
  fabric.finish();
  ClassifyOptions copts;
  if (!node_name_map.empty()) copts.node_names = read_node_name_map(node_name_map).names;
  Topology t = classify(fabric, copts);
  to_json(t);  // fills in the hash, as topology.json would have it
  return t;
}

int run_diff(const DiffOptions &o) {
  const Topology before = read_topology_or_dump(o.before, o.node_name_map);
  const Topology after = read_topology_or_dump(o.after, o.node_name_map);
  const TopologyDiff d = diff_topologies(before, after);
  if (!o.quiet)
    std::cout << (o.format == "json" ? diff_to_json(d, before, after, o.before, o.after)
                                     : diff_to_text(d, before, after, o.before, o.after));
  return d.same() ? 0 : kDiffExitChanged;
}

}  // namespace topoaware
