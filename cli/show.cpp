// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware show: the running and waiting jobs on the fabric. Gathers Slurm's view with squeue,
// sinfo and scontrol (run without a shell, fixed argv, bounded in time), reads the select plugin's
// status file and the topology, and renders the model of report/show.hpp.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "cli_commands.hpp"
#include "safe_folder.hpp"
#include "config.hpp"
#include "show.hpp"
#include "status.hpp"
#include "congestion_out.hpp"
#include "file_read.hpp"
#include "text.hpp"
#include "topology_json.hpp"

extern char **environ;

namespace topoaware {

void add_show_command(CLI::App &app, ShowOptions &o) {
  auto *show = app.add_subcommand("show", "Show the running and waiting jobs on the fabric, or one job's rank map");
  o.command = show;
  show->add_option("--topology", o.topology,
                   "topology.json (FILE; default: TopologyFile= of topoaware.conf, else topology.json beside it)");
  show->add_option("--status", o.status,
                   "The select plugin's status file (FILE; default: StatusFile= of topoaware.conf, else "
                   "topoaware-status.json in Slurm's StateSaveLocation)");
  show->add_option("--format", o.format, "text (default), json, dot or svg")
      ->check(CLI::IsMember({"text", "json", "dot", "svg"}));
  show->add_option("--job", o.job, "Show this job (its id, as squeue %A prints it): its nodes and rank map")
      ->check(CLI::Range(1u, 4294967295u))
      ->type_name("ID");
  show->add_option("-o,--output", o.output, "Write to FILE instead of stdout, atomically");
  show->add_option("--comm-fraction", o.comm_fraction,
                   "Share of step time that is communication (for the slowdown estimate; default 0.3)")
      ->check(CLI::Range(0.0, 1.0));
  show->add_option("--congestion", o.congestion,
                   "Also show the congested cables of a report of topoaware monitor --format json (FILE)");
  show->add_option("--timeout", o.timeout, "Seconds each Slurm command may take (squeue, sinfo, scontrol; default 60)")
      ->check(CLI::Range(1, 3600))
      ->type_name("S");
}

namespace {

struct ShowFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string joined(const std::vector<std::string> &args) {
  std::string s;
  for (const std::string &a : args)
    s += (s.empty() ? "" : " ") + (a.find(' ') != std::string::npos ? "'" + a + "'" : a);
  return s;
}

std::string first_line(const std::string &s) {
  std::string l = s.substr(0, s.find('\n'));
  while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
  return l;
}

// A job name is the user's: control bytes would reach the admin's terminal, and bytes that are
// not UTF-8 would break JSON and Graphviz. Both are shown as '?'.
std::string printable(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = (unsigned char)s[i];
    const size_t len = c < 0x80                   ? 1
                       : (c >= 0xc2 && c <= 0xdf) ? 2
                       : (c >= 0xe0 && c <= 0xef) ? 3
                       : (c >= 0xf0 && c <= 0xf4) ? 4
                                                  : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
    if (ok && len == 3) {  // no overlong forms, no surrogates
      const unsigned char d = (unsigned char)s[i + 1];
      ok = !(c == 0xe0 && d < 0xa0) && !(c == 0xed && d >= 0xa0);
    }
    if (ok && len == 4) {
      const unsigned char d = (unsigned char)s[i + 1];
      ok = !(c == 0xf0 && d < 0x90) && !(c == 0xf4 && d >= 0x90);
    }
    if (!ok || (len == 1 && (c < 0x20 || c == 0x7f))) {
      out += '?';
      i += 1;
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  return out;
}

bool parse_u32(const std::string &s, uint32_t &v) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    x = x * 10 + uint64_t(c - '0');
  }
  if (x > UINT32_MAX) return false;
  v = uint32_t(x);
  return true;
}

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!trim(line).empty()) out.push_back(line);
  }
  return out;
}

// Job states that may hold nodes or wait for them (finished jobs are left out).
const char *const kJobStates =
    "PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING,RESIZING,REQUEUED,REQUEUE_HOLD,REQUEUE_FED,SIGNALING,"
    "STAGE_OUT,STOPPED,SPECIAL_EXIT";
// %A job id, %T state, %u user, %P partition, %D nodes, %r reason, %N node list, %j name (last:
// it may hold the separator).
const char *const kJobFormat = "%A|%T|%u|%P|%D|%r|%N|%j";

std::vector<SlurmJob> parse_squeue(const std::string &text, std::vector<std::string> &warnings) {
  std::vector<SlurmJob> jobs;
  size_t bad = 0;
  std::string first_bad;
  for (const std::string &line : lines_of(text)) {
    // The last field keeps the rest: job names may hold '|'.
    std::vector<std::string> f = split(line, '|', 8);
    SlurmJob j;
    if (f.size() != 8 || !parse_u32(std::string(trim(f[0])), j.job_id) || j.job_id == 0) {
      if (!bad++) first_bad = line;
      continue;
    }
    j.state = trim(f[1]);
    j.user = trim(f[2]);
    j.partition = trim(f[3]);
    // %D may be a range ("2-4") for a pending job: the first number is the minimum.
    const std::string d(trim(f[4]));
    size_t digits = 0;
    while (digits < d.size() && d[digits] >= '0' && d[digits] <= '9') ++digits;
    if (!parse_u32(d.substr(0, digits), j.node_count)) j.node_count = 0;
    j.reason = trim(f[5]);
    if (j.reason == "None" || j.reason == "(null)") j.reason = j.state == "PENDING" ? j.reason : "";
    j.nodes = trim(f[6]);
    if (j.nodes == "(null)" || j.nodes == "None assigned") j.nodes.clear();
    j.name = printable(f[7]);
    j.user = printable(j.user), j.partition = printable(j.partition), j.reason = printable(j.reason);
    jobs.push_back(std::move(j));
  }
  if (bad) warnings.push_back(std::to_string(bad) + " line(s) of squeue's output were not understood (first: \"" +
                              first_bad.substr(0, 120) + "\")");
  return jobs;
}

std::vector<SlurmNode> parse_sinfo(const std::string &text, std::vector<std::string> &warnings) {
  std::vector<SlurmNode> nodes;
  size_t bad = 0;
  std::string first_bad;
  for (const std::string &line : lines_of(text)) {
    std::vector<std::string> f = split(line, '|', 3);
    if (f.size() != 3 || trim(f[0]).empty() || trim(f[0]).find_first_of(" ,[") != std::string::npos) {
      if (!bad++) first_bad = line;
      continue;
    }
    SlurmNode n;
    n.name = trim(f[0]);
    n.state = trim(f[1]);
    n.reason = printable(std::string(trim(f[2])));
    n.state = printable(n.state);
    if (n.reason == "none" || n.reason == "(null)") n.reason.clear();
    nodes.push_back(std::move(n));
  }
  if (bad) warnings.push_back(std::to_string(bad) + " line(s) of sinfo's output were not understood (first: \"" +
                              first_bad.substr(0, 120) + "\")");
  return nodes;
}

// `scontrol show config`: "Key = Value" lines.
std::map<std::string, std::string> parse_config_dump(const std::string &text) {
  std::map<std::string, std::string> kv;
  for (const std::string &line : lines_of(text)) {
    const size_t eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    kv[std::string(trim(std::string_view(line).substr(0, eq)))] = trim(std::string_view(line).substr(eq + 3));
  }
  return kv;
}

// Slurm's configuration as slurmctld reports it, asked once and only when needed.
struct SlurmConfig {
  int timeout = 60;
  bool asked = false;
  std::map<std::string, std::string> kv;
  std::string error;
  const std::map<std::string, std::string> &get() {
    if (!asked) {
      asked = true;
      try {
        kv = parse_config_dump(slurm_output({"scontrol", "show", "config"}, timeout));
      } catch (const ShowFailure &e) {
        error = e.what();
      }
    }
    return kv;
  }
  std::string value(const std::string &key) {
    auto it = get().find(key);
    return it == kv.end() ? "" : it->second;
  }
};

}  // namespace

// Runs argv (no shell) with stdin from /dev/null, collecting stdout and stderr, at most
// `timeout` seconds (then SIGKILL). The environment is ours (SLURM_CONF passes through).
CommandResult run_command(const std::vector<std::string> &args, int timeout) {
  CommandResult r;
  int outp[2], errp[2];
  if (pipe2(outp, O_CLOEXEC) != 0) {
    r.start_error = std::strerror(errno);
    return r;
  }
  if (pipe2(errp, O_CLOEXEC) != 0) {
    r.start_error = std::strerror(errno);
    close(outp[0]), close(outp[1]);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
  posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
  std::vector<char *> argv;
  for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(outp[1]), close(errp[1]);
  if (rc != 0) {
    r.start_error = std::strerror(rc);
    close(outp[0]), close(errp[0]);
    return r;
  }
  r.started = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  struct pollfd fds[2] = {{outp[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
  std::string *sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    const int n = poll(fds, 2, int(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, size_t(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto &f : fds)
    if (f.fd >= 0) close(f.fd);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st)) r.status = WEXITSTATUS(st);
  return r;
}


// stdout of a Slurm command that must succeed; throws ShowFailure saying what to check.
std::string slurm_output(const std::vector<std::string> &args, int timeout) {
  CommandResult r = run_command(args, timeout);
  if (!r.started)
    throw ShowFailure("cannot run " + args[0] + " (" + r.start_error + "): is slurm-client installed and in PATH?");
  if (r.timed_out)
    throw ShowFailure(joined(args) + " did not finish in " + std::to_string(timeout) +
                      " s: is slurmctld reachable (SLURM_CONF, scontrol ping)? --timeout gives it longer");
  if (r.status != 0) {
    std::string why = first_line(r.err);
    throw ShowFailure(joined(args) + " failed" + (why.empty() ? "" : ": " + why) +
                      " (is slurmctld up and SLURM_CONF the cluster's slurm.conf? try scontrol ping)");
  }
  return r.out;
}


void gather_show_sources(const std::string &topology, const std::string &status_opt, int timeout, bool slurm_state,
                         ShowSources &src) {
  std::vector<std::string> &warnings = src.warnings;
  SlurmConfig slurm;
  slurm.timeout = timeout;

  // topoaware.conf, as the plugins find it: $TOPOAWARE_CONF, else beside slurm.conf ($SLURM_CONF,
  // else the slurm.conf slurmctld reports), else /etc/slurm.
  const bool need_conf = topology.empty() || status_opt.empty();
  std::string conf_path;
  Config cfg;
  bool conf_found = false, conf_ok = true;
  if (need_conf) {
    const char *env_conf = std::getenv("TOPOAWARE_CONF");
    std::string slurm_conf = std::getenv("SLURM_CONF") ? std::getenv("SLURM_CONF") : "";
    if ((!env_conf || !*env_conf) && slurm_conf.empty()) slurm_conf = slurm.value("SLURM_CONF");
    conf_path = config_path(env_conf, slurm_conf.empty() ? nullptr : slurm_conf.c_str());
    try {
      cfg = load_config(conf_path, &conf_found);
    } catch (const ConfigError &e) {
      conf_ok = false;
      warnings.push_back(std::string(e.what()) + " (the built-in defaults are used here)");
    }
  }

  // The status file.
  ShowInput &in = src.in;
  std::optional<Status> &status = src.status;
  if (!status_opt.empty()) {
    in.status_file = status_opt;
  } else if (conf_ok && cfg.status_none) {
    in.status_problem = "StatusFile=none in " + conf_path +
                        ": the select plugin writes no status file; set StatusFile= (topoaware.conf(5)) to see "
                        "layouts and waiting reasons, or give --status FILE";
  } else {
    std::string ssl;
    if (cfg.status_file.empty()) ssl = slurm.value("StateSaveLocation");
    try {
      in.status_file = status_path(cfg, ssl);
    } catch (const ConfigError &) {
      in.status_problem = "cannot tell where the status file is: " +
                          (slurm.error.empty() ? std::string("scontrol show config gives no StateSaveLocation")
                                               : slurm.error) +
                          "; give --status FILE";
    }
  }
  if (!in.status_file.empty()) {
    struct stat sb;
    if (stat(in.status_file.c_str(), &sb) != 0 && errno == ENOENT) {
      const std::string select = status_opt.empty() ? slurm.value("SelectType") : "";
      if (!select.empty() && select != "select/cons_tres_topoaware")
        in.status_problem = in.status_file + " does not exist: slurmctld runs SelectType=" + select +
                            ", not select/cons_tres_topoaware, so no layout job is placed by topology "
                            "(select_cons_tres_topoaware(8))";
      else
        in.status_problem = in.status_file +
                            " does not exist: select/cons_tres_topoaware writes it (StatusFile= in topoaware.conf(5)) "
                            "once slurmctld runs it; give --status FILE if it is elsewhere";
    } else {
      try {
        status = load_status_file(in.status_file);
        in.status = &*status;
      } catch (const StatusError &e) {
        std::string why = e.what();
        if (access(in.status_file.c_str(), R_OK) != 0 && errno == EACCES)
          why = in.status_file + ": permission denied: read it as root or SlurmUser, or set StatusFile= in "
                "topoaware.conf(5) to a folder users can read (the file holds what squeue shows anyway)";
        in.status_problem = why;
      }
    }
  }
  if (!in.status) warnings.push_back("layouts unknown: " + in.status_problem);

  // The topology.
  std::string &topo_path = src.topology_file;
  topo_path = topology;
  if (topo_path.empty()) topo_path = topology_path(cfg, conf_path);
  Topology &topo = src.topology;
  try {
    topo = load_topology_file(topo_path);
  } catch (const TopologyError &e) {
    // The file the plugin loaded, if the status file names another one that loads.
    if (topology.empty() && status && !status->topology_file.empty() && status->topology_file != topo_path) {
      try {
        topo = load_topology_file(status->topology_file);
        warnings.push_back(std::string(e.what()) + "; using the file the select plugin loaded, " +
                           status->topology_file);
        topo_path = status->topology_file;
      } catch (const TopologyError &) {
        throw ShowFailure(std::string(e.what()) + " (give --topology FILE: the topology.json the plugins read, "
                          "TopologyFile= in " + conf_path + ")");
      }
    } else {
      throw ShowFailure(std::string(e.what()) +
                        (topology.empty() ? " (give --topology FILE: the topology.json the plugins read, "
                                              "TopologyFile= in " + conf_path + ")"
                                            : ""));
    }
  }
  in.topology_file = topo_path;

  // Slurm's jobs and nodes.
  if (slurm_state) {
    in.jobs = parse_squeue(slurm_output({"squeue", "-h", "-a", "-t", kJobStates, "-o", kJobFormat}, timeout), warnings);
    in.nodes = parse_sinfo(slurm_output({"sinfo", "-h", "-N", "-a", "-o", "%N|%T|%E"}, timeout), warnings);
  }
  in.now = int64_t(time(nullptr));
}

int run_show(const ShowOptions &o) {
  ShowSources src;
  gather_show_sources(o.topology, o.status, o.timeout, true, src);
  src.in.cost.comm_fraction = o.comm_fraction;
  const Topology &topo = src.topology;
  const std::string &topo_path = src.topology_file;
  const ShowInput &in = src.in;
  const std::vector<std::string> &warnings = src.warnings;
  ShowModel m = build_show(topo, in);
  if (!o.congestion.empty()) {
    try {
      m.hot = hot_cables_from_json(read_regular_file(o.congestion, 256u << 20, "256 MiB"), topo, m.congestion_interval);
    } catch (const std::exception &e) {
      throw ShowFailure(o.congestion + ": " + e.what());
    }
    m.congestion_file = o.congestion;
  }
  for (const std::string &w : warnings) std::fprintf(stderr, "topoaware: warning: %s\n", w.c_str());
  if (m.hash_mismatch)
    std::fprintf(stderr, "topoaware: warning: the status file was written with topology %s, %s is %s\n",
                 m.status->topology_hash.c_str(), topo_path.c_str(), topo.hash.c_str());

  std::string out;
  int rc = 0;
  if (o.job) {
    if (!m.find(o.job))
      throw ShowFailure("job " + std::to_string(o.job) +
                        " is not running or pending (squeue does not list it: ended, or another cluster?)");
    if (o.format == "json") out = show_job_json(m, o.job);
    else if (o.format == "dot") out = show_job_dot(m, o.job);
    else if (o.format == "svg") out = dot_to_svg(show_job_dot(m, o.job));
    else out = show_job_text(m, o.job);
    if (job_order_disagrees(m, o.job)) {
      std::fprintf(stderr,
                   "topoaware: WARNING: job %u: the rank order in the status file does not match the rank order of "
                   "its nodes over %s (the topology file may have changed since it was placed)\n",
                   o.job, topo_path.c_str());
      rc = kShowExitOrderMismatch;
    }
  } else {
    if (o.format == "json") out = show_json(m);
    else if (o.format == "dot") out = show_dot(m);
    else if (o.format == "svg") out = dot_to_svg(show_dot(m));
    else out = show_text(m);
  }
  write_output(o.output, out);
  return rc;
}

void write_output(const std::string &path, const std::string &text) {
  if (!path.empty()) {
    write_file_safely(path, text);
  } else {
    std::cout << text;
    std::cout.flush();
  }
}

}  // namespace topoaware
