// SPDX-License-Identifier: GPL-2.0-or-later
// See metrics.hpp. Every metric is documented in topoaware(1), METRICS.
#include "metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "hostlist.hpp"

namespace topoaware {
namespace {

// Label values: backslash, double quote and newline escaped (the exposition format's rule); other
// control bytes, which no label of ours should hold, become '?'.
std::string label(const std::string &v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else if ((unsigned char)c < 0x20 || c == 0x7f)
      out += '?';
    else
      out += c;
  }
  return out;
}

class Writer {
 public:
  void family(const char *name, const char *type, const char *help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(const std::string &name, const std::string &labels, double v) {
    out_ += name;
    if (!labels.empty()) out_ += "{" + labels + "}";
    out_ += " " + value(v) + "\n";
  }
  std::string take() { return std::move(out_); }

 private:
  static std::string value(double v) {
    if (v == double(int64_t(v)) && v < 9.007199254740992e15 && v > -9.007199254740992e15)
      return std::to_string(int64_t(v));
    return fmt::format("{:.9g}", v);
  }
  std::string out_;
};

}  // namespace

ShowInput metrics_input(const Status *status) {
  ShowInput in;
  in.status = status;
  if (!status) return in;
  for (const StatusJob &s : status->jobs) {
    SlurmJob j;
    j.job_id = s.job_id;
    if (s.phase == JobPhase::Placed) {
      j.state = "RUNNING";
      j.nodes = s.nodes;
      try {
        j.node_count = uint32_t(hostlist_expand(s.nodes, 1u << 20).size());
      } catch (const std::exception &) {
        j.node_count = 0;  // build_show notes the list it cannot read
      }
    } else {
      j.state = "PENDING";
    }
    in.jobs.push_back(std::move(j));
  }
  return in;
}

namespace {

// The status file and the topology file: read or not, how old, which topology, and what it holds.
void topology_metrics(Writer &w, const ShowModel &m, const Status *st, int64_t now) {
  w.family("topoaware_status_up", "gauge", "1 if the select plugin's status file was read, else 0.");
  w.sample("topoaware_status_up", "", st ? 1 : 0);
  if (st) {
    w.family("topoaware_status_age_seconds", "gauge", "Seconds since slurmctld last wrote the status file.");
    w.sample("topoaware_status_age_seconds", "", double(std::max<int64_t>(0, now - st->written_at)));
  }

  w.family("topoaware_topology_info", "gauge",
           "The topology the select plugin loaded (labels file and hash; hash \"\" if none), always 1.");
  w.sample(
      "topoaware_topology_info",
      fmt::format("file=\"{}\",hash=\"{}\"", label(st ? st->topology_file : ""), label(st ? st->topology_hash : "")),
      1);
  w.family("topoaware_topology_load_error", "gauge",
           "1 if the select plugin's last topology load failed (it keeps the previous one), else 0.");
  w.sample("topoaware_topology_load_error", "", st && !st->topology_error.empty() ? 1 : 0);
  w.family("topoaware_topology_mismatch", "gauge",
           "1 if the topology file read here is not the one the select plugin placed jobs with, else 0.");
  w.sample("topoaware_topology_mismatch", "", m.hash_mismatch ? 1 : 0);
  const Topology &t = *m.topo;
  w.family("topoaware_topology_hosts", "gauge", "Compute hosts in the topology file.");
  w.sample("topoaware_topology_hosts", "", double(t.hosts.size()));
  w.family("topoaware_topology_switches", "gauge", "Switches in the topology file.");
  w.sample("topoaware_topology_switches", "", double(t.switches.size()));
  std::map<std::string, int> anomalies;
  for (const Anomaly &a : t.anomalies) anomalies[a.kind]++;
  w.family("topoaware_topology_anomalies", "gauge",
           "Anomalies of the topology file by kind (missing-uplink, slow-link, partial-walk, ...).");
  if (anomalies.empty()) w.sample("topoaware_topology_anomalies", "kind=\"none\"", 0);
  for (const auto &[kind, n] : anomalies) w.sample("topoaware_topology_anomalies", "kind=\"" + label(kind) + "\"", n);
}

// Placed layout jobs by placement, with their nodes; and their cost against the ideal
// (hop-bytes / ideal hop-bytes, cost.hpp), as a histogram over jobs.
void running_metrics(Writer &w, const ShowModel &m) {
  static const char *const kPlacements[] = {"ideal", "fallback", "cons_tres", "unknown"};
  std::map<std::string, std::pair<int, double>> placed;  // placement -> (jobs, nodes)
  for (const char *p : kPlacements) placed[p] = {0, 0};
  std::vector<double> ratios;
  for (const ShowJob &j : m.jobs) {
    if (!j.status) continue;
    auto &e = placed[j.status->placement.empty() ? "unknown" : j.status->placement];
    e.first++;
    e.second += double(j.slurm.node_count);
    if (j.has_cost) ratios.push_back(j.cost.ratio);
  }
  w.family("topoaware_layout_jobs_running", "gauge",
           "Running layout jobs by placement: ideal, fallback (best available), cons_tres (plain select/cons_tres), "
           "unknown.");
  for (const auto &[p, e] : placed)
    w.sample("topoaware_layout_jobs_running", "placement=\"" + label(p) + "\"", e.first);
  w.family("topoaware_layout_nodes_running", "gauge", "Nodes held by running layout jobs, by placement.");
  for (const auto &[p, e] : placed)
    w.sample("topoaware_layout_nodes_running", "placement=\"" + label(p) + "\"", e.second);

  static const double kBuckets[] = {1.0, 1.05, 1.1, 1.25, 1.5, 2, 3, 5};
  w.family("topoaware_layout_cost_ratio", "histogram",
           "Running layout jobs by communication cost against their ideal placement (hop-bytes / ideal hop-bytes; "
           "1 = ideal), over the rank order their tasks use.");
  double sum = 0;
  for (double r : ratios) sum += r;
  for (double b : kBuckets)
    w.sample("topoaware_layout_cost_ratio_bucket", fmt::format("le=\"{}\"", b),
             double(std::count_if(ratios.begin(), ratios.end(), [&](double r) { return r <= b + 1e-9; })));
  w.sample("topoaware_layout_cost_ratio_bucket", "le=\"+Inf\"", double(ratios.size()));
  w.sample("topoaware_layout_cost_ratio_sum", "", sum);
  w.sample("topoaware_layout_cost_ratio_count", "", double(ratios.size()));
}

// Waiting layout jobs, by mode: how many, and how long.
void waiting_metrics(Writer &w, const ShowModel &m, int64_t now) {
  std::map<std::string, std::pair<int, double>> waiting = {{"strict", {0, 0}}, {"prefer", {0, 0}}};
  for (const ShowJob &j : m.waiting) {
    if (!j.status || j.status->phase != JobPhase::Waiting) continue;
    auto &e = waiting[j.status->mode.empty() ? "prefer" : j.status->mode];
    e.first++;
    e.second = std::max(e.second, double(std::max<int64_t>(0, now - j.status->since)));
  }
  w.family("topoaware_layout_jobs_waiting", "gauge",
           "Layout jobs the select plugin holds back, by mode (strict: waits for an ideal block; prefer: waits "
           "for nodes).");
  for (const auto &[mode, e] : waiting)
    w.sample("topoaware_layout_jobs_waiting", "mode=\"" + label(mode) + "\"", e.first);
  w.family("topoaware_layout_wait_max_seconds", "gauge",
           "The longest a layout job has been waiting now, by mode (0 if none waits).");
  for (const auto &[mode, e] : waiting)
    w.sample("topoaware_layout_wait_max_seconds", "mode=\"" + label(mode) + "\"", e.second);
}

// select_p_job_test, by the plugin's own clock: calls, time, its histogram and the longest call.
void job_test_metrics(Writer &w, const CallCounters &c) {
  w.family("topoaware_job_test_calls_total", "counter",
           "select_p_job_test calls since slurmctld started (jobs=\"all\"; jobs=\"layout\": layout jobs only).");
  w.sample("topoaware_job_test_calls_total", "jobs=\"all\"", double(c.calls));
  w.sample("topoaware_job_test_calls_total", "jobs=\"layout\"", double(c.layout_calls));
  w.family("topoaware_job_test_seconds_total", "counter", "Time spent in select_p_job_test since slurmctld started.");
  w.sample("topoaware_job_test_seconds_total", "jobs=\"all\"", double(c.total_us) / 1e6);
  w.sample("topoaware_job_test_seconds_total", "jobs=\"layout\"", double(c.layout_total_us) / 1e6);
  if (c.buckets) {
    w.family("topoaware_job_test_duration_seconds", "histogram",
             "select_p_job_test call times since slurmctld started (jobs=\"all\"; jobs=\"layout\").");
    for (const char *jobs : {"all", "layout"}) {
      const bool all = jobs[0] == 'a';
      uint64_t cum = 0;
      for (uint32_t i = 0; i < c.buckets; ++i) {
        cum += all ? c.counts[i] : c.layout_counts[i];
        w.sample("topoaware_job_test_duration_seconds_bucket",
                 fmt::format("jobs=\"{}\",le=\"{}\"", jobs, double(c.le_us[i]) / 1e6), double(cum));
      }
      cum += all ? c.counts[c.buckets] : c.layout_counts[c.buckets];
      w.sample("topoaware_job_test_duration_seconds_bucket", fmt::format("jobs=\"{}\",le=\"+Inf\"", jobs),
               double(cum));
      w.sample("topoaware_job_test_duration_seconds_sum", fmt::format("jobs=\"{}\"", jobs),
               double(all ? c.total_us : c.layout_total_us) / 1e6);
      w.sample("topoaware_job_test_duration_seconds_count", fmt::format("jobs=\"{}\"", jobs), double(cum));
    }
  }
  w.family("topoaware_job_test_max_seconds", "gauge", "The longest select_p_job_test call since slurmctld started.");
  w.sample("topoaware_job_test_max_seconds", "jobs=\"all\"", double(c.max_us) / 1e6);
  w.sample("topoaware_job_test_max_seconds", "jobs=\"layout\"", double(c.layout_max_us) / 1e6);
}

}  // namespace

std::string metrics_text(const ShowModel &m, int64_t now) {
  Writer w;
  const Status *st = m.status ? &*m.status : nullptr;
  topology_metrics(w, m, st, now);
  running_metrics(w, m);
  waiting_metrics(w, m, now);
  if (st) job_test_metrics(w, st->counters);
  return w.take();
}

}  // namespace topoaware
