// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware monitor's outputs: text, Prometheus and JSON of a congestion report (congestion.hpp).
#include "congestion_out.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace topoaware {

namespace {

std::vector<const LinkLoad *> hot_first(const CongestionReport &r) {
  std::vector<const LinkLoad *> v;
  for (const LinkLoad &l : r.links)
    if (l.measured) v.push_back(&l);
  std::stable_sort(v.begin(), v.end(), [](const LinkLoad *a, const LinkLoad *b) {
    if (a->congested != b->congested) return a->congested;
    return std::max(a->utilization, a->wait_ratio) > std::max(b->utilization, b->wait_ratio);
  });
  return v;
}

std::string prom_escape(const std::string &s) {
  std::string o;
  for (char c : s) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

std::string link_labels(const Topology &topo, const LinkLoad &l) {
  std::string peer = "?";
  if (l.peer.kind == RouteTracer::Peer::Switch) peer = topo.switches[size_t(l.peer.index)].name;
  if (l.peer.kind == RouteTracer::Peer::HostPort) peer = topo.hosts[size_t(l.peer.index)].name;
  return fmt::format("switch=\"{}\",port=\"{}\",peer=\"{}\"", prom_escape(topo.switches[size_t(l.sw)].name), l.port,
                     prom_escape(peer));
}

}  // namespace

std::string congestion_text(const Topology &topo, const CongestionReport &r, size_t max_links) {
  std::string out = fmt::format(
      "Ports: {} sampled, {} measured over {:.1f} s; {} congested direction(s)\n", r.ports_sampled,
      r.ports_measured, r.interval_s, r.congested());
  size_t shown = 0;
  for (const LinkLoad *l : hot_first(r)) {
    if (!l->congested && shown >= max_links) break;
    if (shown == 0) out += "Directions (congested first):\n";
    out += fmt::format("  {}  {:5.1f}% of {:.0f} Gb/s, wait ratio {:.3f}{}\n", link_name(topo, *l),
                       100 * l->utilization, l->gbps, l->wait_ratio, l->congested ? "  CONGESTED" : "");
    if (l->congested) {
      for (const auto &[id, bytes] : l->jobs) out += fmt::format("    job {}: {:.3g} bytes per step\n", id, bytes);
      if (!l->unknown_jobs.empty()) {
        out += "    without a layout (unknown traffic): job";
        for (uint32_t id : l->unknown_jobs) out += fmt::format(" {}", id);
        out += "\n";
      }
      if (l->jobs.empty() && l->unknown_jobs.empty()) out += "    no running job known to cross it\n";
    }
    ++shown;
  }
  if (r.ports_with_errors) {
    out += fmt::format("Error counters rose on {} port(s):\n", r.ports_with_errors);
    for (const LinkLoad &l : r.links)
      for (const auto &[name, n] : l.errors) out += fmt::format("  {}: {} +{}\n", link_name(topo, l), name, n);
  }
  bool header = false;
  for (const JobCongestion &j : r.jobs) {
    if (!header) out += "Jobs:\n";
    header = true;
    if (j.known)
      out += fmt::format("  job {}: {:.1f}% of its cross-leaf bytes on congested directions{}{}\n", j.job_id,
                         100 * j.share(), j.note.empty() ? "" : "; ", j.note);
    else
      out += fmt::format("  job {}: unknown traffic ({})\n", j.job_id, j.note);
  }
  if (!r.problems.empty()) {
    out += fmt::format("Problems ({}):\n", r.problems.size());
    size_t n = 0;
    for (const std::string &p : r.problems) {
      if (++n > 20) {
        out += fmt::format("  ... and {} more\n", r.problems.size() - 20);
        break;
      }
      out += "  " + p + "\n";
    }
  }
  return out;
}

// Label sets stay bounded whatever the fabric: at most this many per-direction and per-job series.
constexpr size_t kMaxDirectionSeries = 1000;
constexpr size_t kMaxJobSeries = 1000;

std::string congestion_prometheus(const Topology &topo, const CongestionReport &r, size_t top) {
  std::string out;
  out += "# HELP topoaware_fabric_ports_sampled Switch ports whose counters were read.\n"
         "# TYPE topoaware_fabric_ports_sampled gauge\n";
  out += fmt::format("topoaware_fabric_ports_sampled {}\n", r.ports_sampled);
  out += "# HELP topoaware_fabric_ports_measured Switch ports with a load over the last interval.\n"
         "# TYPE topoaware_fabric_ports_measured gauge\n";
  out += fmt::format("topoaware_fabric_ports_measured {}\n", r.ports_measured);
  out += "# HELP topoaware_fabric_congested_directions Cable directions above a congestion threshold.\n"
         "# TYPE topoaware_fabric_congested_directions gauge\n";
  out += fmt::format("topoaware_fabric_congested_directions {}\n", r.congested());
  out += "# HELP topoaware_fabric_ports_with_errors Switch ports whose error counters rose over the interval.\n"
         "# TYPE topoaware_fabric_ports_with_errors gauge\n";
  out += fmt::format("topoaware_fabric_ports_with_errors {}\n", r.ports_with_errors);
  // Every measured direction in a histogram: bounded whatever the fabric's size.
  static const double kLe[] = {0.1, 0.25, 0.5, 0.75, 0.9, 1.0};
  size_t counts[7] = {};
  double sum = 0;
  size_t n = 0;
  for (const LinkLoad &l : r.links) {
    if (!l.measured || l.gbps <= 0) continue;
    size_t b = 0;
    while (b < 6 && l.utilization > kLe[b]) ++b;
    ++counts[b];
    sum += l.utilization;
    ++n;
  }
  out += "# HELP topoaware_link_utilization_ratio Transmit rate over line rate of every measured direction.\n"
         "# TYPE topoaware_link_utilization_ratio histogram\n";
  size_t cum = 0;
  for (size_t b = 0; b < 6; ++b) {
    cum += counts[b];
    out += fmt::format("topoaware_link_utilization_ratio_bucket{{le=\"{}\"}} {}\n", kLe[b], cum);
  }
  out += fmt::format("topoaware_link_utilization_ratio_bucket{{le=\"+Inf\"}} {}\n", n);
  out += fmt::format("topoaware_link_utilization_ratio_sum {}\ntopoaware_link_utilization_ratio_count {}\n", sum, n);
  // Per direction: the congested ones and the `top` busiest.
  // The worst congested directions first, at most kMaxDirectionSeries of them, then `top` others.
  std::vector<const LinkLoad *> shown;
  size_t others = 0;
  for (const LinkLoad *l : hot_first(r)) {
    if (l->congested ? shown.size() >= kMaxDirectionSeries : others++ >= top) continue;
    shown.push_back(l);
  }
  out += "# HELP topoaware_link_direction_utilization Transmit rate over line rate (congested and busiest directions).\n"
         "# TYPE topoaware_link_direction_utilization gauge\n";
  for (const LinkLoad *l : shown)
    out += fmt::format("topoaware_link_direction_utilization{{{}}} {:.4f}\n", link_labels(topo, *l), l->utilization);
  out += "# HELP topoaware_link_direction_xmit_wait_ratio PortXmitWait ticks per word sent (congested and busiest directions).\n"
         "# TYPE topoaware_link_direction_xmit_wait_ratio gauge\n";
  for (const LinkLoad *l : shown)
    out += fmt::format("topoaware_link_direction_xmit_wait_ratio{{{}}} {:.4f}\n", link_labels(topo, *l),
                       std::min(l->wait_ratio, 1e6));
  out += "# HELP topoaware_link_direction_congested 1 for a direction above a congestion threshold.\n"
         "# TYPE topoaware_link_direction_congested gauge\n";
  for (const LinkLoad *l : shown)
    out += fmt::format("topoaware_link_direction_congested{{{}}} {}\n", link_labels(topo, *l), l->congested ? 1 : 0);
  // Per job: only jobs crossing a congested direction (a bounded set: each such job holds nodes).
  out += "# HELP topoaware_job_congested_share Share of a job's cross-leaf bytes on congested directions.\n"
         "# TYPE topoaware_job_congested_share gauge\n";
  size_t unknown = 0;
  std::vector<const JobCongestion *> paying;
  for (const JobCongestion &j : r.jobs) {
    if (!j.known)
      ++unknown;
    else if (j.congested_bytes > 0)
      paying.push_back(&j);
  }
  std::stable_sort(paying.begin(), paying.end(),
                   [](const JobCongestion *a, const JobCongestion *b) { return a->share() > b->share(); });
  if (paying.size() > kMaxJobSeries) paying.resize(kMaxJobSeries);
  std::sort(paying.begin(), paying.end(),
            [](const JobCongestion *a, const JobCongestion *b) { return a->job_id < b->job_id; });
  for (const JobCongestion *j : paying)
    out += fmt::format("topoaware_job_congested_share{{job=\"{}\"}} {:.4f}\n", j->job_id, j->share());
  out += "# HELP topoaware_jobs_unknown_traffic Running jobs whose traffic is unknown (no layout).\n"
         "# TYPE topoaware_jobs_unknown_traffic gauge\n";
  out += fmt::format("topoaware_jobs_unknown_traffic {}\n", unknown);
  return out;
}

std::string congestion_json(const Topology &topo, const CongestionReport &r) {
  nlohmann::ordered_json o;
  o["interval_s"] = r.interval_s;
  o["ports_sampled"] = r.ports_sampled;
  o["ports_measured"] = r.ports_measured;
  o["ports_with_errors"] = r.ports_with_errors;
  auto &links = o["directions"] = nlohmann::ordered_json::array();
  for (const LinkLoad &l : r.links) {
    nlohmann::ordered_json e;
    e["name"] = link_name(topo, l);
    e["switch"] = topo.switches[size_t(l.sw)].name;
    e["port"] = l.port;
    if (l.peer.kind == RouteTracer::Peer::Switch) {
      e["peer_switch"] = topo.switches[size_t(l.peer.index)].name;
      e["peer_port"] = l.peer.port;
    } else if (l.peer.kind == RouteTracer::Peer::HostPort) {
      e["peer_host"] = topo.hosts[size_t(l.peer.index)].name;
      e["peer_port"] = topo.hosts[size_t(l.peer.index)].ports[size_t(l.peer.port)].port;
    }
    e["gbps"] = l.gbps;
    e["measured"] = l.measured;
    if (l.measured) {
      e["utilization"] = l.utilization;
      e["wait_ratio"] = std::min(l.wait_ratio, 1e6);
      e["congested"] = l.congested;
    }
    if (!l.errors.empty()) {
      auto &errs = e["errors"] = nlohmann::ordered_json::object();
      for (const auto &[name, n] : l.errors) errs[name] = n;
    }
    if (!l.note.empty()) e["note"] = l.note;
    if (!l.jobs.empty()) {
      auto &js = e["jobs"] = nlohmann::ordered_json::array();
      for (const auto &[id, bytes] : l.jobs) js.push_back({{"job", id}, {"bytes_per_step", bytes}});
    }
    if (!l.unknown_jobs.empty()) e["unknown_jobs"] = l.unknown_jobs;
    links.push_back(std::move(e));
  }
  auto &jobs = o["jobs"] = nlohmann::ordered_json::array();
  for (const JobCongestion &j : r.jobs) {
    nlohmann::ordered_json e;
    e["job"] = j.job_id;
    e["known"] = j.known;
    if (j.known) {
      e["cross_leaf_bytes"] = j.cross_leaf_bytes;
      e["congested_bytes"] = j.congested_bytes;
      e["congested_share"] = j.share();
      e["hot_directions"] = j.hot_cables;
    }
    if (!j.note.empty()) e["note"] = j.note;
    jobs.push_back(std::move(e));
  }
  o["problems"] = r.problems;
  return o.dump(1) + "\n";
}

std::vector<JobCongestion> job_congestion_from_json(const std::string &text) {
  std::vector<JobCongestion> jobs;
  try {
    const nlohmann::json o = nlohmann::json::parse(text);
    for (const auto &e : o.at("jobs")) {
      JobCongestion j;
      j.job_id = e.at("job").get<uint32_t>();
      j.known = e.at("known").get<bool>();
      if (j.known) {
        j.cross_leaf_bytes = e.at("cross_leaf_bytes").get<double>();
        j.congested_bytes = e.at("congested_bytes").get<double>();
        if (j.hot_cables.empty() && e.contains("hot_directions"))
          j.hot_cables = e.at("hot_directions").get<std::vector<std::string>>();
      }
      j.note = e.value("note", "");
      jobs.push_back(std::move(j));
    }
  } catch (const nlohmann::json::exception &e) {
    throw std::runtime_error(std::string("not a report of topoaware monitor --format json: ") + e.what());
  }
  return jobs;
}

std::vector<HotCable> hot_cables_from_json(const std::string &text, const Topology &topo, double &interval) {
  std::unordered_map<std::string, int> sw, host;
  for (size_t i = 0; i < topo.switches.size(); ++i) sw[topo.switches[i].name] = int(i);
  for (size_t i = 0; i < topo.hosts.size(); ++i) host[topo.hosts[i].name] = int(i);
  auto find = [](const std::unordered_map<std::string, int> &m, const std::string &name) {
    auto it = m.find(name);
    if (it == m.end()) throw std::runtime_error("names " + name + ", which is not in the topology");
    return it->second;
  };
  std::vector<HotCable> hot;
  try {
    const nlohmann::json o = nlohmann::json::parse(text);
    interval = o.at("interval_s").get<double>();
    for (const auto &d : o.at("directions")) {
      if (!d.value("congested", false)) continue;
      HotCable h;
      h.sw = find(sw, d.at("switch").get<std::string>());
      h.port = d.at("port").get<int>();
      if (d.contains("peer_switch")) h.peer_sw = find(sw, d.at("peer_switch").get<std::string>());
      if (d.contains("peer_host")) h.peer_host = find(host, d.at("peer_host").get<std::string>());
      h.peer_port = d.value("peer_port", 0);
      h.utilization = d.value("utilization", 0.0);
      h.wait_ratio = d.value("wait_ratio", 0.0);
      if (d.contains("jobs"))
        for (const auto &j : d.at("jobs")) h.jobs.push_back(j.at("job").get<uint32_t>());
      if (d.contains("unknown_jobs")) h.unknown_jobs = d.at("unknown_jobs").get<std::vector<uint32_t>>();
      hot.push_back(std::move(h));
    }
  } catch (const nlohmann::json::exception &e) {
    throw std::runtime_error(std::string("not a report of topoaware monitor --format json: ") + e.what());
  }
  return hot;
}

}  // namespace topoaware
