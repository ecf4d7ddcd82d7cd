// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware metrics: the select plugin's status file as Prometheus text (report/metrics.hpp), for
// node_exporter's textfile collector: run it from cron or a timer with -o into the collector's
// folder (written atomically, so the collector never reads half a file).
#include <time.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli_commands.hpp"
#include "metrics.hpp"
#include "topology_json.hpp"

namespace topoaware {

void add_metrics_command(CLI::App &app, MetricsOptions &o) {
  auto *metrics = app.add_subcommand(
      "metrics", "Write the select plugin's status as Prometheus metrics (node_exporter's textfile collector)");
  o.command = metrics;
  metrics->add_option("--topology", o.topology,
                      "topology.json (FILE; default: TopologyFile= of topoaware.conf, else topology.json beside it)");
  metrics->add_option("--status", o.status,
                      "The select plugin's status file (FILE; default: StatusFile= of topoaware.conf, else "
                      "topoaware-status.json in Slurm's StateSaveLocation)");
  metrics->add_option("-o,--output", o.output,
                      "Write to FILE (e.g. /var/lib/prometheus/node-exporter/topoaware.prom) instead of stdout, "
                      "atomically");
  metrics->add_option("--timeout", o.timeout, "Seconds scontrol may take when the paths must be asked (default 60)")
      ->check(CLI::Range(1, 3600))
      ->type_name("S");
}

int run_metrics(const MetricsOptions &o) {
  ShowSources src;
  gather_show_sources(o.topology, o.status, o.timeout, false, src);
  for (const std::string &w : src.warnings) std::fprintf(stderr, "topoaware: warning: %s\n", w.c_str());
  ShowInput in = metrics_input(src.status ? &*src.status : nullptr);
  in.topology_file = src.topology_file;
  in.status_file = src.in.status_file;
  in.status_problem = src.in.status_problem;
  in.now = int64_t(time(nullptr));
  const ShowModel m = build_show(src.topology, in);
  const std::string text = metrics_text(m, in.now);
  write_output(o.output, text);
  return 0;
}

}  // namespace topoaware
