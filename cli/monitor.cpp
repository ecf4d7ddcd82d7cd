// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware monitor: reads every switch port's traffic counters twice (discovery/pma_sampler),
// turns the difference into each cable direction's load (corelib/congestion), and names the
// running jobs whose flows cross the congested ones, from the select plugin's status file (layout
// and rank order of each job) and the recorded forwarding tables in topology.json.
//
// --once --state FILE is the cron form: each run compares with the counters the previous run saved
// there. Without --once it keeps sampling every --interval seconds, holding only the last
// snapshot, and rewrites -o FILE after each interval.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include <CLI/CLI.hpp>

#include "cli_commands.hpp"
#include "congestion.hpp"
#include "congestion_out.hpp"
#include "cost.hpp"
#include "file_read.hpp"
#include "metrics.hpp"
#include "pma_sampler.hpp"
#include "safe_folder.hpp"
#include "topology_json.hpp"

namespace topoaware {

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

// The running jobs as attribution sees them: a layout job with its rank order is known; anything
// else holding nodes is unknown traffic.
std::vector<RunningJob> running_jobs(const ShowModel &m) {
  std::vector<RunningJob> jobs;
  const CostParams params;
  for (const ShowJob &j : m.jobs) {
    if (!j.holds_nodes) continue;
    RunningJob r;
    r.job_id = j.slurm.job_id;
    r.hosts = j.hosts;
    if (j.has_layout && !j.order.empty() && j.outside.empty()) {
      r.known = true;
      r.step.layout = j.layout;
      r.step.nodes = j.order;
      r.step.dp_bytes = params.grad_bytes_per_rank(j.layout);
      r.step.pp_bytes = params.micro_batches * params.activation_bytes(j.layout);
      // EP: one dispatch and one combine of every micro-batch's tokens per step. A MoE model does
      // that once per MoE layer, so this weighs EP low against DP and PP in a job's share; it
      // decides which cables the EP flows take, which is what attribution needs.
      if (j.layout.ep > 1) r.step.ep_bytes = 2 * params.micro_batches * params.activation_bytes(j.layout);
    } else if (!j.layout_error.empty()) {
      r.why_unknown = "its layout cannot be used: " + j.layout_error;
    } else if (!j.outside.empty()) {
      r.why_unknown = "it holds nodes outside the topology";
    } else {
      r.why_unknown = "no layout: its traffic is unknown";
    }
    jobs.push_back(std::move(r));
  }
  return jobs;
}

std::string render(const Topology &topo, const CongestionReport &r, const MonitorOptions &o) {
  if (o.format == "json") return congestion_json(topo, r);
  if (o.format == "prometheus") return congestion_prometheus(topo, r, size_t(o.top));
  return congestion_text(topo, r, size_t(o.top));
}

}  // namespace

void add_monitor_command(CLI::App &app, MonitorOptions &o) {
  auto *cmd = app.add_subcommand(
      "monitor", "Read every switch port's traffic counters and report congested cables and the jobs crossing them");
  o.command = cmd;
  cmd->add_option("-t,--topology", o.topology,
                  "topology.json with routes (discover --routes or --lfts) (FILE; default: TopologyFile= of topoaware.conf)");
  cmd->add_option("--status", o.status,
                  "The select plugin's status file (FILE; default: StatusFile= of topoaware.conf, else "
                  "topoaware-status.json in Slurm's StateSaveLocation)");
  cmd->add_flag("--once", o.once,
                "One report and exit: compare with --state FILE's counters (then save the new ones), or sample "
                "twice --interval apart");
  cmd->add_option("--state", o.state, "With --once: the counters of the previous run, read and replaced (FILE)");
  cmd->add_option("--interval", o.interval, "Seconds between two readings (default 10)")
      ->check(CLI::Range(0.05, 86400.0));
  cmd->add_option("--count", o.count, "Without --once: stop after this many reports (default: run until stopped)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--format", o.format, "text (default), json or prometheus")
      ->check(CLI::IsMember({"text", "json", "prometheus"}));
  cmd->add_option("-o,--output", o.output, "Write each report to FILE instead of stdout, atomically");
  cmd->add_option("--ca", o.cas, "Local CA[:PORT] to query from, one per subnet (default: the first active port)");
  cmd->add_option("--port", o.port, "Local port for --ca without :PORT (default: first active)")
      ->check(CLI::Range(1, 255));
  cmd->add_option("--window", o.window, "Queries in flight at once (default 64)")->check(CLI::Range(1, 4096));
  cmd->add_option("--mad-timeout", o.mad_timeout, "Milliseconds to wait for each answer (default 500)")
      ->check(CLI::Range(1, 60000));
  cmd->add_option("--retries", o.retries, "Extra tries of an unanswered query (default 2)")->check(CLI::Range(0, 10));
  cmd->add_option("--utilization", o.utilization,
                  "A direction sending at least this share of its line rate is congested (default 0.8)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--wait-ratio", o.wait_ratio,
                  "A direction with at least this many PortXmitWait ticks per word sent is congested (default 0.1)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--top", o.top, "Busiest directions listed beside the congested ones (default 20)")
      ->check(CLI::Range(0, 100000));
  cmd->add_flag("--no-slurm", o.no_slurm, "Take the running jobs from the status file only (no squeue)");
  cmd->add_option("--timeout", o.timeout, "Seconds each Slurm command may take (default 60)")
      ->check(CLI::Range(1, 3600));
  cmd->add_flag("-q,--quiet", o.quiet, "No progress on stderr");
}

namespace {

// One monitor run: the fabric, its ports, how they are read and what counts as congested.
class Monitor {
 public:
  Monitor(const MonitorOptions &o, const ShowSources &src) : o_(o), src_(src), topo_(src.topology) {
    so_.targets = ca_targets(o.cas, o.port);
    so_.window = o.window;
    so_.timeout_ms = o.mad_timeout;
    so_.retries = o.retries;
    const bool tty = !o.quiet && isatty(STDERR_FILENO);
    if (tty)
      so_.progress = [](size_t done, size_t total) {
        std::fprintf(stderr, "\rtopoaware: %zu of %zu counter queries answered", done, total);
        if (done == total) std::fprintf(stderr, "\n");
      };
    ports_ = sampled_ports(topo_);
    th_.utilization = o.utilization;
    th_.wait_ratio = o.wait_ratio;
  }

  // One reading of every port's counters, its problems as warnings.
  CounterSnapshot sample() const {
    std::vector<std::string> problems;
    CounterSnapshot s = sample_ports(topo_, ports_, so_, problems);
    for (const std::string &p : problems) std::fprintf(stderr, "topoaware: warning: %s\n", p.c_str());
    if (!o_.quiet)
      std::fprintf(stderr, "topoaware: read %zu switch ports in %.3f s (%.0f queries/s)\n", s.ports.size(),
                   s.duration_s, s.duration_s > 0 ? 2.0 * double(s.ports.size()) / s.duration_s : 0.0);
    return s;
  }

  // The load between two readings, with the jobs whose flows cross each congested direction.
  CongestionReport report(const CounterSnapshot &prev, const CounterSnapshot &cur) const {
    // The jobs are read again at each report: they come and go between intervals.
    ShowSources now;
    gather_show_sources(src_.topology_file, o_.status, o_.timeout, !o_.no_slurm, now);
    ShowInput in = o_.no_slurm ? metrics_input(now.status ? &*now.status : nullptr) : now.in;
    in.status = now.status ? &*now.status : nullptr;
    in.now = int64_t(time(nullptr));
    const ShowModel m = build_show(topo_, in);
    CongestionReport r = link_loads(topo_, prev, cur, th_);
    attribute_jobs(topo_, running_jobs(m), r);
    write_output(o_.output, render(topo_, r, o_));
    return r;
  }

  // --once: one report over --interval, or with --state over the time since the saved reading
  // (the first run of a cron series only saves its reading).
  int once() const {
    CounterSnapshot prev;
    const bool have = saved_reading(prev);
    if (!have && !o_.state.empty()) {
      // First run of a cron series: save the counters; the next run reports.
      const CounterSnapshot cur = sample();
      write_file_safely(o_.state, snapshot_to_json(cur, topo_.hash));
      std::fprintf(stderr, "topoaware: first reading saved in %s; the next run reports the load since\n",
                   o_.state.c_str());
      return 0;
    }
    if (!have) {
      prev = sample();
      std::this_thread::sleep_for(std::chrono::duration<double>(o_.interval));
    }
    const CounterSnapshot cur = sample();
    if (!o_.state.empty()) write_file_safely(o_.state, snapshot_to_json(cur, topo_.hash));
    report(prev, cur);
    return 0;
  }

  // The long-running form: a report every --interval until a signal or --count reports.
  int loop() const {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    CounterSnapshot prev = sample();
    for (int n = 0; !g_stop && (o_.count == 0 || n < o_.count); ++n) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(o_.interval);
      while (!g_stop && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (g_stop) break;
      CounterSnapshot cur = sample();
      report(prev, cur);
      prev = std::move(cur);  // the only state kept between intervals
    }
    return 0;
  }

 private:
  // The reading saved by the previous --once --state run into prev; false (with a warning when
  // the file exists but is unusable or of another fabric) when there is none to report against.
  bool saved_reading(CounterSnapshot &prev) const {
    if (o_.state.empty()) return false;
    // This command writes the state file itself (write_file_safely: never a link), so a link there
    // was planted: it is not read either (root would read the file it names, and could quote it).
    // O_NOFOLLOW on the open that is read, then read_regular_file on that open file (its
    // /proc/self/fd name), so that a link put there after a check is never followed.
    const int fd = ::open(o_.state.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && errno == ENOENT) return false;
    bool same = false;
    std::string why = "holds another fabric's counters";
    if (fd < 0) {
      why = errno == ELOOP ? "is a symbolic link (never read, never written through)"
                           : std::string("cannot open: ") + std::strerror(errno);
    } else {
      try {
        const std::string text = read_regular_file("/proc/self/fd/" + std::to_string(fd), 256u << 20, "256 MiB");
        prev = snapshot_from_json(text, topo_.hash, same);
      } catch (const std::exception &e) {
        why = e.what();
        same = false;
      }
      ::close(fd);
    }
    if (!same) std::fprintf(stderr, "topoaware: warning: %s: %s; starting again\n", o_.state.c_str(), why.c_str());
    return same;
  }

  const MonitorOptions &o_;
  const ShowSources &src_;
  const Topology &topo_;
  SampleOptions so_;
  std::vector<std::pair<int, int>> ports_;  // (switch, port): sampled_ports()
  CongestionThresholds th_;
};

}  // namespace

int run_monitor(const MonitorOptions &o) {
  if (!o.state.empty() && !o.once) throw Failure("--state keeps the counters between --once runs: add --once", kExitUsage);
  if (o.once && o.count) throw Failure("--count is for the long-running form; --once makes one report", kExitUsage);
  ShowSources src;
  gather_show_sources(o.topology, o.status, o.timeout, !o.no_slurm, src);
  for (const std::string &w : src.warnings) std::fprintf(stderr, "topoaware: warning: %s\n", w.c_str());
  const Topology &topo = src.topology;
  if (topo.routes.empty())
    throw Failure(src.topology_file +
                  " has no forwarding tables: discover with --routes (or --lfts) so the counters can be read and the "
                  "jobs' flows traced");
  const Monitor m(o, src);
  return o.once ? m.once() : m.loop();
}

}  // namespace topoaware
