// SPDX-License-Identifier: GPL-2.0-or-later
// Pieces of the topoaware command shared by its subcommands.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ibnd_walk.hpp"
#include "show_model.hpp"
#include "status.hpp"
#include "topology.hpp"

namespace CLI {
class App;
}

namespace topoaware {

// Exit status of a failure a command reports (main prints the message): 1 usage, 2 bad input or
// failure (topoaware(1), EXIT STATUS).
inline constexpr int kExitUsage = 1;
inline constexpr int kExitFailure = 2;
struct Failure : std::runtime_error {
  int code;
  Failure(const std::string &m, int c = kExitFailure) : std::runtime_error(m), code(c) {}
};

// A command's output: to `path` through write_file_safely (atomically, never through a link), or to
// standard output when `path` is empty.
void write_output(const std::string &path, const std::string &text);

// A Slurm command run without a shell (cli/show.cpp): argv, stdin from /dev/null, stdout and stderr
// collected, at most `timeout` seconds (then SIGKILL).
struct CommandResult {
  bool started = false;
  int status = -1;  // exit status, -1 if killed or not started
  bool timed_out = false;
  std::string out, err;
  std::string start_error;
};

CommandResult run_command(const std::vector<std::string> &args, int timeout);
// stdout of a Slurm command that must succeed; throws std::runtime_error saying what to check.
std::string slurm_output(const std::vector<std::string> &args, int timeout);

// topoaware node (cli/node.cpp): axes as strings, so that the layout parser gives its own messages.
struct NodeOptions {
  CLI::App *command = nullptr;
  std::string hwloc_xml, exclude_nics;
  std::string axes[5];  // tp, cp, ep, dp, pp
  std::string order, nodes, self, topology;
  int local_rank = -1;
  std::string format = "text";
  bool nvlink = false;  // --nvlink: only this node's NVLink domain line
};
// This node's NVLink domain through NVML (dlopen of `library`); never throws: a node without NVML,
// GPU or fabric gets in_domain false and the reason.
struct NodeNvlink;
NodeNvlink probe_nvlink_domain(const std::string &library);
void add_node_command(CLI::App &app, NodeOptions &options);
int run_node(const NodeOptions &options);

// Runs Graphviz's `dot -Tsvg` on DOT text (no shell involved); throws std::runtime_error with
// dot's message, or a hint to install graphviz when dot is missing.
std::string dot_to_svg(const std::string &dot);

// topoaware plan (cli/plan.cpp). Axis values stay strings so that the layout parser gives its
// own messages ("--tp=abc": tp must be a whole number ...).
struct PlanOptions {
  CLI::App *command = nullptr;
  std::string topology;
  std::string tp = "1", pp, dp, cp, ep, order;
  int gpus_per_node = 8;
  std::string free, busy;
  std::string mode = "prefer";
  std::string policy = "slurm-tree";  // --policy: the stock Slurm placement to compare with
  double comm_fraction = 0.3;
  std::string format = "text";
  bool flows = false;  // --flows: the job's flows that leave a leaf, and the cables they take
};
void add_plan_command(CLI::App &app, PlanOptions &options);
// Exit status: 0 placed (ideal or not), 4 no nodes free for it now.
int run_plan(const PlanOptions &options);

// topoaware show (cli/show.cpp).
struct ShowOptions {
  CLI::App *command = nullptr;
  std::string topology, status;
  std::string format = "text";
  uint32_t job = 0;  // 0: the whole picture
  std::string output;
  double comm_fraction = 0.3;
  int timeout = 60;  // seconds per Slurm command
  std::string congestion;  // a `monitor --format json` report to draw
};
void add_show_command(CLI::App &app, ShowOptions &options);
// --job: the status file's node order differs from the rank order of the node set over the
// topology (or the status file was written with another topology).
inline constexpr int kShowExitOrderMismatch = 5;
// Exit status: 0, or kShowExitOrderMismatch; failures throw (main maps them to 2).
int run_show(const ShowOptions &options);

// What show and metrics read (cli/show.cpp): topoaware.conf as the plugins find it, the status
// file (src.status empty with src.in.status_problem saying why), the topology (throws if it cannot
// be read) and, with slurm_state, squeue's jobs and sinfo's nodes. Problems that still leave a
// picture go to src.warnings.
struct ShowSources {
  ShowInput in;                  // in.status points into status
  std::optional<Status> status;
  Topology topology;
  std::string topology_file;
  std::vector<std::string> warnings;
  ShowSources() = default;
  ShowSources(const ShowSources &) = delete;
  ShowSources &operator=(const ShowSources &) = delete;
};
void gather_show_sources(const std::string &topology, const std::string &status, int timeout, bool slurm_state,
                         ShowSources &src);

// topoaware monitor (cli/monitor.cpp): switch port counters into per-direction load and congestion,
// attributed to the running jobs.
struct MonitorOptions {
  CLI::App *command = nullptr;
  std::string topology, status, output, state;
  std::string format = "text";
  std::vector<std::string> cas;
  int port = 0;
  bool once = false, no_slurm = false;
  double interval = 10;
  int count = 0;  // reports before stopping; 0 = run until stopped (without --once)
  int window = 64, mad_timeout = 500, retries = 2;
  double utilization = 0.8, wait_ratio = 0.1;
  int top = 20;
  int timeout = 60;
  bool quiet = false;
};
void add_monitor_command(CLI::App &app, MonitorOptions &options);
int run_monitor(const MonitorOptions &options);
// The local ports of --ca NAME[:PORT] (cli/main.cpp); throws Failure on a bad port.
std::vector<WalkTarget> ca_targets(const std::vector<std::string> &cas, int port);

// topoaware metrics (cli/metrics.cpp): the status file as Prometheus text (node_exporter's
// textfile collector).
struct MetricsOptions {
  CLI::App *command = nullptr;
  std::string topology, status, output;
  int timeout = 60;
};
void add_metrics_command(CLI::App &app, MetricsOptions &options);
int run_metrics(const MetricsOptions &options);

// topoaware defrag (cli/defrag.cpp): the moves that would put layout jobs on ideal blocks; --apply
// performs them for jobs that opted in (--topo-migrate).
struct DefragOptions {
  CLI::App *command = nullptr;
  std::string topology, status, log;
  std::string format = "text";
  bool json = false, apply = false;
  double comm_fraction = 0.3;
  int timeout = 60;
  int max_moves = 1;
  int checkpoint_wait = -1;  // -1: the job's --signal time
  int restart_wait = 300;
  std::string congestion;    // a `monitor --format json` report: relocate only jobs it finds congested
  double min_congested_share = 0.2;
};
// --apply: a move was not done (signal or requeue failed, the job changed): the job keeps running.
inline constexpr int kDefragExitMoveFailed = 7;
// --apply: the job was requeued but is not running again within --restart-wait (it waits in the queue).
inline constexpr int kDefragExitNotRestarted = 8;
void add_defrag_command(CLI::App &app, DefragOptions &options);
int run_defrag(const DefragOptions &options);

// topoaware route (cli/route.cpp): one flow's path through the recorded forwarding tables.
struct RouteOptions {
  CLI::App *command = nullptr;
  std::string topology, source, destination;
  int rail = 0;
  int path_bits = 0;
  std::string format = "text";
};
// The tables do not lead to the destination (no route, a loop, another port): the path so far is printed.
inline constexpr int kRouteExitBroken = 3;
void add_route_command(CLI::App &app, RouteOptions &options);
int run_route(const RouteOptions &options);

// topoaware diff (cli/diff.cpp): exit status as diff(1): 0 the same, 1 changed, 2 trouble (an
// unreadable file, and usage errors too: main maps them to 2 for this command).
struct DiffOptions {
  CLI::App *command = nullptr;
  std::string before, after, node_name_map;
  std::string format = "text";
  bool quiet = false;
};
inline constexpr int kDiffExitChanged = 1;
inline constexpr int kDiffExitTrouble = 2;
void add_diff_command(CLI::App &app, DiffOptions &options);
int run_diff(const DiffOptions &options);
// A topology.json (first non-blank byte '{') or a saved ibnetdiscover dump, classified with the
// node-name map if one is given (else descriptions name the hosts). Throws on bad input.
Topology read_topology_or_dump(const std::string &path, const std::string &node_name_map);

}  // namespace topoaware
