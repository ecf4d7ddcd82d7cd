// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware: discover an InfiniBand fabric, classify it and write it out; generate test fabrics.
// See topoaware(1). Exit codes: 0 success, 1 usage, 2 bad input or failure, 3 partial walk;
// plan: 4 no nodes free for the job; show --job: 5 its rank order disagrees with the status file;
// discover --compare: 6 the fabric changed (outputs written); diff: 0 same, 1 changed, 2 trouble;
// defrag --apply: 7 a move was not done (the job keeps running), 8 a requeued job did not run again in time.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>

#include "cli_commands.hpp"
#include "safe_folder.hpp"
#include "config.h"
#include "fabric.hpp"
#include "generator.hpp"
#include "hostlist.hpp"
#include "layout.hpp"
#include "ibnd_walk.hpp"
#include "ibnetdiscover_parser.hpp"
#include "lft_dump.hpp"
#include "node_name_map.hpp"
#include "nvlink.hpp"
#include "file_read.hpp"
#include "outputs.hpp"
#include "topology.hpp"
#include "port_counters.hpp"
#include "topology_diff.hpp"
#include "topology_json.hpp"

namespace topoaware {

// --ca NAME[:PORT] of discover and monitor, one target per subnet; --port for those without :PORT.
std::vector<WalkTarget> ca_targets(const std::vector<std::string> &cas, int port) {
  std::vector<WalkTarget> targets;
  for (const auto &spec : cas) {
    WalkTarget t;
    auto colon = spec.find(':');
    t.ca = spec.substr(0, colon);
    t.port = port;
    if (colon != std::string::npos) {
      try {
        size_t used = 0;
        t.port = std::stoi(spec.substr(colon + 1), &used);
        if (used != spec.size() - colon - 1 || t.port < 1 || t.port > 255) throw std::invalid_argument("port");
      } catch (const std::exception &) {
        throw Failure("--ca " + spec + ": the port after ':' must be a number from 1 to 255", kExitUsage);
      }
    }
    targets.push_back(t);
  }
  if (targets.empty() && port) targets.push_back({"", port});
  return targets;
}

namespace {

constexpr int kExitPartial = 3;
constexpr int kExitChanged = 6;  // discover --compare

const std::vector<std::string> kFormats = {"json", "tree", "block", "dot", "svg", "summary"};

// Renders one output format of a topology. "svg" runs Graphviz's dot on the DOT text.
// Hosts are drawn (each NVLink domain a box around its hosts) when the fabric has multi-node NVLink
// domains and few enough hosts for a readable picture; otherwise they are folded into their leaf.
constexpr size_t kMaxDrawnHosts = 1152;  // 16 NVL72 racks

bool draw_hosts(const Topology &topo) { return !topo.nvlink_domains.empty() && topo.hosts.size() <= kMaxDrawnHosts; }

std::string render(Topology &topo, const std::string &format, const std::string &json,
                   const std::vector<int> &block_sizes = {}) {
  if (format == "json") return json;
  if (format == "yaml") {
    try {
      return to_topology_yaml(topo, block_sizes);
    } catch (const std::invalid_argument &e) {
      throw Failure(e.what());
    }
  }
  if (format == "tree" || format == "topology-conf") return to_topology_conf_tree(topo);
  if (format == "block") return to_topology_conf_block(topo);
  if (format == "dot") return to_dot(topo, draw_hosts(topo));
  if (format == "summary") return to_summary(topo);
  if (format == "svg") return dot_to_svg(to_dot(topo, draw_hosts(topo)));
  throw Failure("unknown format \"" + format + "\"; use one of json, tree, block, yaml, dot, svg, summary", kExitUsage);
}

struct OutputOptions {
  std::vector<std::string> formats;    // printed on stdout, in order
  std::string output;                  // -o: the single format goes there instead
  std::string json, tree, block, yaml, dot, svg;  // files written beside
  std::vector<int> block_sizes;        // --block-sizes: topology.yaml's block_sizes instead of inferred ones
};

void add_output_options(CLI::App *cmd, OutputOptions &o) {
  cmd->add_option("-f,--format", o.formats,
                  "What to print on stdout: json, tree (topology.conf for topology/tree), block "
                  "(topology.conf for topology/block), yaml (Slurm 25.05+ topology.yaml), dot, svg, summary; several "
                  "may be given, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember({"json", "tree", "topology-conf", "block", "yaml", "dot", "svg", "summary"}));
  cmd->add_option("-o,--output", o.output, "Write the (single) --format to FILE instead of stdout, atomically");
  cmd->add_option("--json", o.json, "Also write topology.json to FILE");
  cmd->add_option("--tree", o.tree, "Also write a topology/tree topology.conf to FILE");
  cmd->add_option("--block", o.block, "Also write a topology/block topology.conf to FILE");
  cmd->add_option("--yaml", o.yaml,
                  "Also write Slurm's topology.yaml (25.05+: tree \"fabric\", cluster_default, and block \"nvlink\" "
                  "or \"leaves\") to FILE");
  cmd->add_option("--block-sizes", o.block_sizes,
                  "topology.yaml block_sizes, comma-separated: the base block size, then it times powers of two "
                  "(default: inferred)")
      ->delimiter(',');
  cmd->add_option("--dot", o.dot, "Also write the Graphviz DOT picture to FILE");
  cmd->add_option("--svg", o.svg, "Also write an SVG picture to FILE (needs Graphviz's dot)");
}

void emit(Topology &topo, const OutputOptions &o) {
  std::vector<std::string> formats = o.formats;
  bool any_file = !o.json.empty() || !o.tree.empty() || !o.block.empty() || !o.yaml.empty() || !o.dot.empty() ||
                  !o.svg.empty();
  try {
    check_block_sizes(o.block_sizes);
  } catch (const std::invalid_argument &e) {
    throw Failure(std::string("--block-sizes: ") + e.what(), kExitUsage);
  }
  if (formats.empty() && !any_file) formats.push_back(o.output.empty() ? "summary" : "json");
  if (!o.output.empty() && formats.size() != 1)
    throw Failure("-o/--output takes exactly one --format (got " + std::to_string(formats.size()) +
                      "); use --json/--tree/--block/--yaml/--dot/--svg to write several files",
                  kExitUsage);
  const std::string json = to_json(topo);  // also computes the content hash the other formats quote
  // Render everything first: a failure in one format must not leave some files replaced.
  std::vector<std::pair<std::string, std::string>> files;
  auto add = [&](const std::string &path, const char *fmt) {
    if (!path.empty()) files.emplace_back(path, render(topo, fmt, json, o.block_sizes));
  };
  add(o.json, "json");
  add(o.tree, "tree");
  add(o.block, "block");
  add(o.yaml, "yaml");
  add(o.dot, "dot");
  add(o.svg, "svg");
  std::vector<std::string> printed;
  for (const auto &f : formats) printed.push_back(render(topo, f, json, o.block_sizes));
  // A target that cannot be replaced (a link, FIFO or folder there) stops before any file is.
  for (const auto &[path, text] : files) check_replaceable(path);
  if (!o.output.empty()) check_replaceable(o.output);
  for (const auto &[path, text] : files) write_file_safely(path, text);
  if (!o.output.empty()) {
    write_file_safely(o.output, printed.front());
    return;
  }
  for (size_t i = 0; i < printed.size(); i++) {
    if (i > 0) std::cout << "\n";
    std::cout << printed[i];
  }
  std::cout.flush();
}

std::vector<std::string> nodes_from_slurm() {
  // sinfo prints one node name per line with -N; a cluster without Slurm is an error here.
  FILE *p = popen("sinfo -h -N -o %N 2>/dev/null", "r");
  if (!p) throw Failure("--nodes-from-slurm: cannot run sinfo");
  std::vector<std::string> names;
  std::set<std::string> seen;
  char line[512];
  while (fgets(line, sizeof line, p)) {
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    if (!s.empty() && seen.insert(s).second) names.push_back(s);
  }
  int rc = pclose(p);
  if (rc != 0 || names.empty())
    throw Failure("--nodes-from-slurm: sinfo failed or listed no nodes (is slurmctld reachable?)");
  return names;
}

struct DiscoverOptions {
  std::vector<std::string> dumps;      // --ibnetdiscover, one per subnet
  std::string dump_format = "auto";
  std::string cache_load, cache_save;
  std::vector<std::string> cas;        // --ca NAME or NAME:PORT, one per subnet
  int port = 0;
  std::string node_name_map;
  std::string nodes;
  bool nodes_from_slurm = false;
  bool keep_unnamed = false;
  bool allow_partial = false;
  bool allow_unknown_guids = false;
  int retries = 2;
  int timeout_ms = 0;
  bool quiet = false;
  std::string compare;                 // --compare FILE: write only if the fabric differs from FILE
  bool counters = false;               // --counters: PMA PortCounters of every connected port
  bool routes = false;                 // --routes: every switch's forwarding table and every port's LID
  std::vector<std::string> lfts;       // --lfts: saved dump_fts / ibroute output, one per subnet
  std::string nvlink_domains;          // --nvlink-domains: per-node NVLink domain lines
  OutputOptions out;
};

// --nvlink-domains: the per-node lines (nvlink.hpp) merged into the topology. Hosts the fabric does
// not have are reported, not fatal: a node may be listed in Slurm and down in the fabric.
void add_nvlink_domains(Topology &topo, const std::string &path) {
  std::vector<NodeNvlink> nodes;
  try {
    nodes = parse_nvlink_lines(read_regular_file(path, size_t(1) << 28, "256 MiB"), path);
  } catch (const FileReadError &e) {
    throw Failure(path + ": " + e.what());
  } catch (const NvlinkError &e) {
    throw Failure(e.what());
  }
  std::vector<std::string> unknown, warnings;
  apply_nvlink_domains(topo, nodes, &unknown, &warnings);
  if (!unknown.empty()) {
    std::sort(unknown.begin(), unknown.end(), natural_less);
    std::fprintf(stderr, "topoaware: %s: %zu host(s) not in the fabric, ignored: %s\n", path.c_str(), unknown.size(),
                 hostlist_compress(unknown).c_str());
  }
  for (const auto &w : warnings) std::fprintf(stderr, "topoaware: %s: %s\n", path.c_str(), w.c_str());
  size_t in = 0;
  for (const auto &d : topo.nvlink_domains) in += d.hosts.size();
  std::fprintf(stderr, "topoaware: %s: %zu NVLink domain(s), %zu of %zu hosts in one\n", path.c_str(),
               topo.nvlink_domains.size(), in, topo.hosts.size());
}

// --lfts: one file of saved forwarding tables per subnet, resolved against the fabric's cabling.
void add_saved_routes(Fabric &fabric, const std::vector<std::string> &files) {
  for (const auto &path : files) {
    LftDump dump = parse_lft_dump_file(path);
    fabric.routes.subnets.push_back(resolve_lft_dump(dump, fabric, fabric.route_problems));
    fabric.routes.sources.push_back(path);
  }
}

Fabric read_fabric(const DiscoverOptions &o) {
  Fabric fabric;
  if (!o.dumps.empty()) {
    if (!o.cas.empty() || !o.cache_load.empty() || !o.cache_save.empty() || o.counters)
      throw Failure("--ibnetdiscover reads saved dumps; it cannot be combined with --ca, --cache, --save-cache "
                    "or --counters",
                    kExitUsage);
    DumpFormat fmt = o.dump_format == "default" ? DumpFormat::Default
                     : o.dump_format == "ports" ? DumpFormat::Ports
                                                : DumpFormat::Auto;
    if (o.routes)
      throw Failure("--routes reads the forwarding tables of a live fabric; with saved dumps give the saved tables "
                    "with --lfts (dump_fts output)",
                    kExitUsage);
    for (const auto &path : o.dumps) fabric.merge(parse_ibnetdiscover_file(path, fmt));
    fabric.finish();
    add_saved_routes(fabric, o.lfts);
    return fabric;
  }
  WalkOptions w;
  w.targets = ca_targets(o.cas, o.port);
  if (o.counters && !o.cache_load.empty())
    throw Failure("--counters reads the ports of a live fabric; it cannot be combined with --cache", kExitUsage);
  w.counters = o.counters;
  if (o.routes && !o.cache_load.empty())
    throw Failure("--routes reads the forwarding tables of a live fabric; a cache holds none (give saved tables "
                  "with --lfts)",
                  kExitUsage);
  if (o.routes && !o.lfts.empty()) throw Failure("give --routes or --lfts, not both", kExitUsage);
  w.routes = o.routes;
  w.retries = o.retries;
  w.timeout_ms = o.timeout_ms;
  w.cache_load = o.cache_load;
  w.cache_save = o.cache_save;
  if (!o.quiet && isatty(STDERR_FILENO)) {
    w.progress = [](double seconds, int switches, int cas, bool done) {
      if (done)
        std::fprintf(stderr, "\rtopoaware: walked in %.1f s: %d switches, %d CAs\033[K\n", seconds, switches, cas);
      else
        std::fprintf(stderr, "\rtopoaware: walking the fabric... %.1f s\033[K", seconds);
    };
  }
  fabric = walk_fabric(w);
  fabric.finish();
  add_saved_routes(fabric, o.lfts);
  return fabric;
}

// The classification's inputs from the command line: the node-name map (every GUID it names must be
// in the fabric, unless --allow-unknown-guids) and the compute nodes (--nodes or Slurm's list).
ClassifyOptions classify_options(const DiscoverOptions &o, const Fabric &fabric) {
  ClassifyOptions copts;
  copts.keep_unnamed = o.keep_unnamed;
  if (!o.node_name_map.empty()) {
    NodeNameMap map = read_node_name_map(o.node_name_map);
    std::vector<std::string> unknown;
    for (const auto &[guid, name] : map.names)
      if (!fabric.find(guid))
        unknown.push_back(o.node_name_map + ":" + std::to_string(map.lines[guid]) + ": " + guid_str(guid) + " (" +
                          name + ") is not in the fabric");
    if (!unknown.empty() && !o.allow_unknown_guids) {
      std::string msg;
      for (size_t i = 0; i < unknown.size() && i < 10; i++) msg += "\n  " + unknown[i];
      if (unknown.size() > 10) msg += "\n  ... and " + std::to_string(unknown.size() - 10) + " more";
      throw Failure("the node-name map names " + std::to_string(unknown.size()) +
                    " GUID(s) that the fabric does not have:" + msg +
                    "\n(a wrong map, or nodes that are down: --allow-unknown-guids accepts it)");
    }
    copts.node_names = map.names;
  }
  if (!o.nodes.empty() && o.nodes_from_slurm) throw Failure("give --nodes or --nodes-from-slurm, not both", kExitUsage);
  if (!o.nodes.empty()) {
    try {
      copts.compute_nodes = hostlist_expand(o.nodes);
    } catch (const std::invalid_argument &e) {
      throw Failure(std::string("--nodes: ") + e.what(), kExitUsage);
    }
  } else if (o.nodes_from_slurm) {
    copts.compute_nodes = nodes_from_slurm();
  }
  return copts;
}

// Parts of the walk that could not be read (`what` says which): listed (the first 50) on stderr.
// false: nothing may be written (no --allow-partial); else the topology says so in an anomaly.
bool accept_incomplete(const std::vector<std::string> &problems, const char *what, const char *why_not,
                       const char *kind, const std::string &anomaly, bool allow_partial, Topology &topo) {
  if (problems.empty()) return true;
  std::fprintf(stderr, "topoaware: the %s incomplete: %zu problem(s):\n", what, problems.size());
  for (size_t i = 0; i < problems.size() && i < 50; i++) std::fprintf(stderr, "  %s\n", problems[i].c_str());
  if (problems.size() > 50) std::fprintf(stderr, "  ... and %zu more\n", problems.size() - 50);
  if (!allow_partial) {
    std::fprintf(stderr, "topoaware: nothing written (%s); --allow-partial writes it anyway\n", why_not);
    return false;
  }
  topo.anomalies.push_back({kind, "fabric", anomaly});
  return true;
}

// --compare: writes the outputs only if the fabric changed since the file (kExitChanged), saying
// what changed; 0 with nothing written when it did not.
int compare_and_emit(Topology &topo, const DiscoverOptions &o) {
  Topology before;
  std::string why;
  try {
    before = read_topology_or_dump(o.compare, "");
  } catch (const std::exception &e) {
    why = e.what();
  }
  if (why.empty()) {
    to_json(topo);  // its hash, for the comparison
    const TopologyDiff d = diff_topologies(before, topo);
    if (d.same()) {
      std::fprintf(stderr, "topoaware: the fabric is unchanged since %s (%s): nothing written\n", o.compare.c_str(),
                   before.hash.c_str());
      return 0;
    }
    std::fprintf(stderr, "topoaware: the fabric changed since %s:\n%s", o.compare.c_str(),
                 diff_to_text(d, before, topo, o.compare, "the fabric now").c_str());
  } else {
    std::fprintf(stderr, "topoaware: --compare: cannot read %s (%s): writing the outputs\n", o.compare.c_str(),
                 why.c_str());
  }
  emit(topo, o.out);
  return kExitChanged;
}

int discover(const DiscoverOptions &o) {
  Fabric fabric = read_fabric(o);
  size_t nswitches = 0;
  for (const auto &n : fabric.nodes) nswitches += n.type != NodeType::Ca;
  std::string from = fabric.sources.empty() ? "the fabric" : fabric.sources.front();
  if (fabric.nodes.empty()) throw Failure(from + ": no nodes found");
  if (nswitches == 0) throw Failure(from + ": the fabric has no switches; nothing to place jobs on");

  Topology topo = classify(fabric, classify_options(o, fabric));
  if (topo.hosts.empty())
    throw Failure(from + ": no compute hosts found (" + std::to_string(topo.ignored.size()) +
                  " CAs ignored; see --nodes, --node-name-map, --keep-unnamed)");
  if (!o.nvlink_domains.empty()) add_nvlink_domains(topo, o.nvlink_domains);

  std::vector<std::string> walk;
  for (const auto &p : fabric.problems) walk.push_back(p.what);
  if (!accept_incomplete(walk, "walk was", "a partial topology would misplace jobs", "partial-walk",
                         std::to_string(walk.size()) + " part(s) of the fabric could not be walked", o.allow_partial,
                         topo) ||
      !accept_incomplete(fabric.route_problems, "routes are", "flows through the missing tables could not be followed",
                         "partial-routes",
                         std::to_string(fabric.route_problems.size()) +
                             " forwarding table(s) or LID(s) could not be read",
                         o.allow_partial, topo))
    return kExitPartial;
  if (o.counters) {
    const CounterReport report = counter_report(topo, fabric);
    add_counter_anomalies(topo, report);
    std::fprintf(stderr, "%s", counter_report_text(report).c_str());
  }
  if (!o.compare.empty()) return compare_and_emit(topo, o);
  emit(topo, o.out);
  return 0;
}

int convert(const std::string &path, const std::string &nvlink_domains, const OutputOptions &out) {
  Topology topo = load_topology_file(path);
  if (!nvlink_domains.empty()) add_nvlink_domains(topo, nvlink_domains);
  emit(topo, out);
  return 0;
}

struct GenerateOptions {
  std::string kind;
  FatTreeSpec fat;
  RailSpec rail;
  DragonflySpec dfly;
  std::string net, dump, json;
  bool print_ibsim_args = false;
  int nvlink_domain_size = 0;       // --nvlink-domain-size: hosts per NVLink domain, 0 = none
  int nvlink_gpus = 4;              // --nvlink-gpus-per-node
  std::string nvlink_lines;         // --nvlink-lines: the domains as pdsh-prefixed node --nvlink lines
  // Options shared by every kind, copied into its spec by run_generate.
  std::string speed = "HDR", prefix = "n";
  int width = 4, radix = 0;
  uint64_t cabling_seed = 0;
};

int generate(const GenerateOptions &g) {
  Fabric fabric;
  if (g.kind == "fat-tree") fabric = generate_fat_tree(g.fat);
  else if (g.kind == "rail") fabric = generate_rail(g.rail);
  else fabric = generate_dragonfly(g.dfly);
  fabric.finish();
  std::vector<std::pair<std::string, std::string>> files;
  if (!g.net.empty()) files.emplace_back(g.net, to_ibsim_net(fabric));
  if (!g.dump.empty()) files.emplace_back(g.dump, to_ibnetdiscover_text(fabric));
  if (g.nvlink_domain_size == 0 && !g.nvlink_lines.empty())
    throw Failure("--nvlink-lines needs --nvlink-domain-size", kExitUsage);
  if (!g.json.empty() || !g.nvlink_lines.empty()) {
    Topology topo = classify(fabric, {});
    if (g.nvlink_domain_size > 0) {
      const std::vector<NodeNvlink> nodes = synthetic_nvlink_domains(topo, g.nvlink_domain_size, g.nvlink_gpus);
      apply_nvlink_domains(topo, nodes, nullptr, nullptr);
      if (!g.nvlink_lines.empty()) {
        std::string lines;
        for (const auto &n : nodes) lines += n.host + ": " + format_node_nvlink(n) + "\n";
        files.emplace_back(g.nvlink_lines, lines);
      }
    }
    if (!g.json.empty()) files.emplace_back(g.json, to_json(topo));
  }
  for (const auto &[p, text] : files) check_replaceable(p);
  for (const auto &[p, text] : files) write_file_safely(p, text);
  if (g.print_ibsim_args) std::cout << ibsim_args(fabric) << "\n";
  if (files.empty() && !g.print_ibsim_args) std::cout << to_ibsim_net(fabric);
  return 0;
}

// The discover subcommand and its options (they fill d).
CLI::App *add_discover_command(CLI::App &app, DiscoverOptions &d) {
  auto *disc = app.add_subcommand("discover",
                                  "Walk the fabric (libibnetdisc) or read saved dumps, classify it and write it out");
  disc->add_option("--ibnetdiscover", d.dumps,
                   "Read saved ibnetdiscover output instead of walking (repeat for one subnet per rail)")
      ->check(CLI::ExistingFile);
  disc->add_option("--dump-format", d.dump_format,
                   "Format of --ibnetdiscover files: auto, default, ports (ibnetdiscover -p)")
      ->check(CLI::IsMember({"auto", "default", "ports"}));
  disc->add_option("--cache", d.cache_load,
                   "Load libibnetdisc's cache file (ibnetdiscover --cache) instead of walking");
  disc->add_option("--save-cache", d.cache_save,
                   "Save libibnetdisc's cache of the walk to FILE (FILE.N for several --ca)");
  disc->add_option("--ca", d.cas,
                   "Local CA to walk from, as NAME or NAME:PORT; repeat for fabrics built as one subnet per rail");
  disc->add_option("--port", d.port, "Local port for --ca without :PORT (default: first active)")
      ->check(CLI::Range(1, 255));
  disc->add_option("--node-name-map", d.node_name_map, "ibnetdiscover node-name-map: GUID to host name")
      ->check(CLI::ExistingFile);
  disc->add_option("--nodes", d.nodes, "Slurm host list of the compute nodes (e.g. n[001-512]); other CAs are ignored");
  disc->add_flag("--nodes-from-slurm", d.nodes_from_slurm, "Take the compute nodes from Slurm (sinfo)");
  disc->add_flag("--keep-unnamed", d.keep_unnamed, "Keep HCAs without a host name as hosts named by their GUID");
  disc->add_flag("--allow-partial", d.allow_partial, "Write outputs even if parts of the fabric could not be walked");
  disc->add_flag("--allow-unknown-guids", d.allow_unknown_guids,
                 "Accept a node-name map that names GUIDs not in the fabric");
  disc->add_option("--retries", d.retries, "Extra walks of what failed (live walks)")->check(CLI::Range(0, 10));
  disc->add_option("--timeout", d.timeout_ms, "MAD timeout in milliseconds (live walks; 0 = libibmad's default)")
      ->check(CLI::Range(0, 60000));
  disc->add_flag("-q,--quiet", d.quiet, "No progress on stderr");
  disc->add_flag("--counters", d.counters,
                 "Also read every connected port's error counters (PMA PortCounters; needs LIDs from a subnet "
                 "manager): a per-cable report on stderr, cables above the thresholds as port-errors anomalies");
  disc->add_flag("--routes", d.routes,
                 "Also read every switch's unicast forwarding table and every port's LID (live walks; needs a "
                 "subnet manager to have run)");
  disc->add_option("--lfts", d.lfts,
                   "Read saved forwarding tables (dump_fts or ibroute output) from FILE, one per subnet")
      ->check(CLI::ExistingFile);
  disc->add_option("--compare", d.compare,
                   "Write the outputs only if the fabric differs from FILE (a topology.json), and say what changed "
                   "(exit status 6 when it did)");
  disc->add_option("--nvlink-domains", d.nvlink_domains,
                   "Per-node NVLink domain lines (FILE): topoaware node --nvlink or nvidia-smi "
                   "--query-gpu=fabric.clusterUuid,fabric.cliqueId --format=csv,noheader, collected with pdsh")
      ->check(CLI::ExistingFile);
  add_output_options(disc, d.out);

  return disc;
}

// The convert subcommand: the topology.json read, NVLink lines, the outputs.
struct ConvertOptions {
  std::string in, nvlink;
  OutputOptions out;
};

CLI::App *add_convert_command(CLI::App &app, ConvertOptions &c) {
  auto *conv = app.add_subcommand("convert", "Read a topology.json and write it in other formats");
  conv->add_option("topology", c.in, "topology.json to read")->required()->check(CLI::ExistingFile);
  conv->add_option("--nvlink-domains", c.nvlink,
                   "Per-node NVLink domain lines (FILE) to record in place of the file's, as discover --nvlink-domains")
      ->check(CLI::ExistingFile);
  add_output_options(conv, c.out);

  return conv;
}

// The generate subcommand and its options (they fill g).
CLI::App *add_generate_command(CLI::App &app, GenerateOptions &g) {
  auto *gen = app.add_subcommand(
      "generate", "Write a synthetic fabric (ibsim net file, ibnetdiscover dump, expected topology.json)");
  gen->add_option("kind", g.kind, "fat-tree, rail or dragonfly")
      ->required()
      ->check(CLI::IsMember({"fat-tree", "rail", "dragonfly"}));
  gen->add_option("--net", g.net, "Write an ibsim net file to FILE");
  gen->add_option("--ibnetdiscover", g.dump, "Write ibnetdiscover text output to FILE");
  gen->add_option("--json", g.json, "Write the expected topology.json to FILE");
  gen->add_flag("--ibsim-args", g.print_ibsim_args, "Print the ibsim options (-N/-S/-P) this fabric needs");
  gen->add_option("--nvlink-domain-size", g.nvlink_domain_size,
                  "Hosts per multi-node NVLink domain (18 for NVL72 racks), in host name order; 0 = none")
      ->check(CLI::Range(0, 1024));
  gen->add_option("--nvlink-gpus-per-node", g.nvlink_gpus, "GPUs of each host in an NVLink domain (default 4)")
      ->check(CLI::Range(1, 1024));
  gen->add_option("--nvlink-lines", g.nvlink_lines,
                  "Write the domains as pdsh-prefixed topoaware node --nvlink lines to FILE");
  gen->add_option("--levels", g.fat.levels, "fat-tree: 2 or 3 levels")->check(CLI::Range(2, 3));
  gen->add_option("--leaves", g.fat.leaves, "fat-tree: number of leaves");
  gen->add_option("--hosts-per-leaf", g.fat.hosts_per_leaf, "fat-tree: hosts on each leaf");
  gen->add_option("--uplinks", g.fat.uplinks_per_leaf,
                  "fat-tree, rail: uplink cables per leaf (hosts/uplinks = oversubscription)");
  auto *spines = gen->add_option("--spines", g.fat.spines,
                                 "fat-tree: spines (per pod with --levels 3); rail: spines shared by all rails "
                                 "(one subnet)");
  gen->add_option("--leaves-per-pod", g.fat.leaves_per_pod, "fat-tree --levels 3: leaves in each pod");
  gen->add_option("--cores", g.fat.cores, "fat-tree --levels 3: core switches");
  gen->add_option("--core-uplinks", g.fat.core_uplinks_per_spine, "fat-tree --levels 3: uplinks of each spine");
  gen->add_option("--rails", g.rail.rails, "rail: HCAs per host, one leaf per rail in each unit");
  gen->add_option("--units", g.rail.units, "rail: scalable units");
  gen->add_option("--hosts-per-unit", g.rail.hosts_per_unit, "rail: hosts in each unit");
  gen->add_option("--spines-per-rail", g.rail.spines_per_rail, "rail: spines of each rail (a subnet per rail)")
      ->excludes(spines);
  gen->add_option("--groups", g.dfly.groups, "dragonfly: groups");
  gen->add_option("--routers-per-group", g.dfly.routers_per_group, "dragonfly: routers in each group");
  gen->add_option("--hosts-per-router", g.dfly.hosts_per_router, "dragonfly: hosts on each router");
  gen->add_option("--global-links", g.dfly.global_links_per_router, "dragonfly: global links of each router");
  gen->add_option("--width", g.width, "Link width in lanes: 1, 2, 4, 8 or 12")->check(CLI::IsMember({1, 2, 4, 8, 12}));
  gen->add_option("--radix", g.radix, "fat-tree: switch port count (0 = the smallest usual radix that fits)");
  gen->add_option("--hcas-per-host", g.fat.hcas_per_host, "fat-tree: HCAs of each host, all on the host's leaf");
  gen->add_option("--speed", g.speed, "Link speed: SDR DDR QDR FDR10 FDR EDR HDR NDR XDR");
  gen->add_option("--host-prefix", g.prefix, "Host name prefix");
  gen->add_option("--shuffle-cabling", g.cabling_seed,
                  "fat-tree, rail: plug each leaf's hosts into its down ports in an order drawn from SEED (host "
                  "names unchanged), so port, LID and name order disagree")
      ->type_name("SEED")
      ->check(CLI::Range(uint64_t(1), std::numeric_limits<uint64_t>::max()));

  return gen;
}

// What generate's shared options (--speed, --host-prefix, ...) mean for every kind of fabric.
int run_generate(GenerateOptions &g, const CLI::App &gen) {
  if (speed_from_name(g.speed) == LinkSpeed::Unknown) throw Failure("--speed " + g.speed + ": unknown speed", kExitUsage);
  g.fat.speed = g.rail.speed = g.dfly.speed = g.speed;
  g.fat.host_prefix = g.rail.host_prefix = g.dfly.host_prefix = g.prefix;
  g.fat.width = g.rail.width = g.dfly.width = g.width;
  g.fat.radix = g.radix;
  g.fat.cabling_seed = g.rail.cabling_seed = g.cabling_seed;
  if (gen.count("--uplinks")) g.rail.uplinks_per_leaf = g.fat.uplinks_per_leaf;
  if (gen.count("--spines")) {
    // 0 would mean "a subnet per rail" in RailSpec: ask for a real count instead.
    if (g.kind == "rail" && g.fat.spines <= 0) throw Failure("--spines must be a positive number", kExitUsage);
    g.rail.shared_spines = g.fat.spines;
  }
  return generate(g);
}

}  // namespace
}  // namespace topoaware

int main(int argc, char **argv) {
  using namespace topoaware;
  CLI::App app{"topoaware: topology-aware placement of GPU training jobs on InfiniBand fabrics.\n"
               "Discovers the fabric, classifies it (leaf/spine/core, rails, pods, dragonfly groups) and writes\n"
               "topology.json, Slurm topology.conf (tree and block), DOT/SVG and a summary. See topoaware(1)."};
  app.set_version_flag("--version", std::string("topoaware ") + PACKAGE_VERSION);
  app.require_subcommand(1);

  DiscoverOptions d;
  CLI::App *disc = add_discover_command(app, d);
  ConvertOptions c;
  CLI::App *conv = add_convert_command(app, c);
  GenerateOptions g;
  CLI::App *gen = add_generate_command(app, g);

  PlanOptions plan_opts;
  add_plan_command(app, plan_opts);
  ShowOptions show_opts;
  add_show_command(app, show_opts);
  DiffOptions diff_opts;
  add_diff_command(app, diff_opts);
  RouteOptions route_opts;
  add_route_command(app, route_opts);
  MetricsOptions metrics_opts;
  add_metrics_command(app, metrics_opts);
  NodeOptions node_opts;
  add_node_command(app, node_opts);
  DefragOptions defrag_opts;
  add_defrag_command(app, defrag_opts);
  MonitorOptions monitor_opts;
  add_monitor_command(app, monitor_opts);

  // Show FILE rather than CLI11's TEXT for options that take a path.
  for (auto *sub : app.get_subcommands({}))
    for (auto *opt : sub->get_options())
      if (opt->get_type_name() == "TEXT" && opt->get_description().find("FILE") != std::string::npos)
        opt->type_name("FILE");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    // diff follows diff(1): 1 means "changed", so its usage errors are trouble (2).
    if (rc != 0 && argc > 1 && std::string(argv[1]) == "diff") return kDiffExitTrouble;
    return rc == 0 ? 0 : kExitUsage;
  }
  try {
    if (*disc) return discover(d);
    if (*conv) return convert(c.in, c.nvlink, c.out);
    if (*gen) return run_generate(g, *gen);
    if (plan_opts.command && *plan_opts.command) return run_plan(plan_opts);
    if (route_opts.command && *route_opts.command) return run_route(route_opts);
    if (show_opts.command && *show_opts.command) return run_show(show_opts);
    if (metrics_opts.command && *metrics_opts.command) return run_metrics(metrics_opts);
    if (node_opts.command && *node_opts.command) return run_node(node_opts);
    if (defrag_opts.command && *defrag_opts.command) return run_defrag(defrag_opts);
    if (monitor_opts.command && *monitor_opts.command) return run_monitor(monitor_opts);
    if (diff_opts.command && *diff_opts.command) {
      try {
        return run_diff(diff_opts);
      } catch (const std::exception &e) {
        std::fprintf(stderr, "topoaware: %s\n", e.what());
        return kDiffExitTrouble;
      }
    }
  } catch (const LayoutError &e) {
    std::fprintf(stderr, "topoaware: %s\n", e.what());
    return kExitUsage;
  } catch (const Failure &e) {
    std::fprintf(stderr, "topoaware: %s\n", e.what());
    return e.code;
  } catch (const std::invalid_argument &e) {
    std::fprintf(stderr, "topoaware: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "topoaware: %s\n", e.what());
    return kExitFailure;
  }
  return 0;
}
