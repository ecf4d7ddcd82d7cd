// SPDX-License-Identifier: GPL-2.0-or-later
// topoaware defrag: the moves that would put layout jobs back on ideal blocks (report/defrag.hpp),
// and with --apply the moves themselves for jobs that opted in (--topo-migrate): the job's
// checkpoint signal (scancel), the checkpoint window, scontrol requeue, then the select plugin
// places it again. A command run by an admin (or cron) beside Slurm, never inside slurmctld: it
// reads what `topoaware show` reads (gather_show_sources) and squeue's times, and acts only through
// Slurm's own commands. Every step is logged on stderr (and to --log FILE).
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/format.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli_commands.hpp"
#include "defrag.hpp"
#include "defrag_parse.hpp"
#include "hostlist.hpp"
#include "job_report.hpp"
#include "safe_folder.hpp"
#include "show.hpp"
#include "topology_json.hpp"
#include "congestion_out.hpp"
#include "file_read.hpp"

namespace topoaware {

void add_defrag_command(CLI::App &app, DefragOptions &o) {
  auto *d = app.add_subcommand("defrag",
                               "List the moves that would put layout jobs on their ideal blocks; --apply moves the "
                               "jobs that opted in (--topo-migrate)");
  o.command = d;
  d->add_option("--topology", o.topology,
                "topology.json (FILE; default: TopologyFile= of topoaware.conf, else topology.json beside it)");
  d->add_option("--status", o.status,
                "The select plugin's status file (FILE; default: StatusFile= of topoaware.conf, else "
                "topoaware-status.json in Slurm's StateSaveLocation)");
  d->add_option("--format", o.format, "text (default) or json")->check(CLI::IsMember({"text", "json"}));
  d->add_flag("--json", o.json, "The same as --format json");
  d->add_option("--comm-fraction", o.comm_fraction,
                "Share of step time that is communication (for the slowdown and gain; default 0.3)")
      ->check(CLI::Range(0.0, 1.0));
  d->add_option("--timeout", o.timeout, "Seconds each Slurm command may take (default 60)")
      ->check(CLI::Range(1, 3600))
      ->type_name("S");
  d->add_flag("--apply", o.apply,
              "Perform the moves, one at a time, for jobs that opted in: checkpoint signal, wait, scontrol requeue");
  d->add_option("--max-moves", o.max_moves, "--apply: at most N moves (default 1)")
      ->check(CLI::Range(1, 1000))
      ->type_name("N");
  d->add_option("--checkpoint-wait", o.checkpoint_wait,
                "--apply: seconds between the signal and the requeue (default: the job's --signal time)")
      ->check(CLI::Range(0, 86400))
      ->type_name("S");
  d->add_option("--restart-wait", o.restart_wait,
                "--apply: seconds to wait for a requeued job to run again (default 300; Slurm holds a requeued "
                "job for AuthInfo cred_expire, 120 s by default)")
      ->check(CLI::Range(0, 86400))
      ->type_name("S");
  d->add_option("--log", o.log, "--apply: also append every step to FILE");
  d->add_option("--congestion", o.congestion,
                "Move running jobs only where a report of topoaware monitor --format json measured their traffic "
                "congested (FILE)");
  d->add_option("--min-congested-share", o.min_congested_share,
                "--congestion: a job is congested when at least this share of its cross-leaf bytes takes a "
                "congested cable (default 0.2)")
      ->check(CLI::Range(0.0, 1.0));
}

namespace {

// Every step on stderr and, with --log, appended to the log, opened once before the first step
// (open_log_safely: never through a link, never blocking on a FIFO).
class Logger {
 public:
  explicit Logger(const std::string &path) : fd_(path.empty() ? -1 : open_log_safely(path)), path_(path) {}
  Logger(const Logger &) = delete;
  Logger &operator=(const Logger &) = delete;
  ~Logger() {
    if (fd_ >= 0) close(fd_);
  }
  void operator()(const std::string &msg) const {
    char ts[32];
    const time_t now = time(nullptr);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const std::string line = std::string(ts) + " topoaware defrag: " + msg + "\n";
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    if (fd_ >= 0 && write(fd_, line.data(), line.size()) != ssize_t(line.size()))
      std::fprintf(stderr, "topoaware: warning: %s: cannot append to the log: %s\n", path_.c_str(),
                   std::strerror(errno));
  }

 private:
  int fd_;
  std::string path_;
};

struct Snapshot {
  ShowSources src;
  ShowModel model;
  std::map<uint32_t, DefragJobTimes> times;
  DefragPlan plan;
  std::map<uint32_t, JobCongestion> measured;  // --congestion: by job id
};

// --congestion: keep the relocations of the jobs the monitor measured congested (the engine already
// predicts each kept move to help), and say which were left out and why.
void keep_congested(const DefragOptions &o, Snapshot &s) {
  std::vector<JobCongestion> jobs;
  try {
    jobs = job_congestion_from_json(read_regular_file(o.congestion, 256u << 20, "256 MiB"));
  } catch (const std::exception &e) {
    throw Failure(o.congestion + ": " + e.what());
  }
  for (const JobCongestion &j : jobs) s.measured[j.job_id] = j;
  const std::vector<uint32_t> hot = congested_jobs(jobs, o.min_congested_share);
  std::vector<DefragRelocation> kept;
  for (DefragRelocation &r : s.plan.relocations) {
    const auto m = s.measured.find(r.job_id);
    const std::string id = "job " + std::to_string(r.job_id);
    if (std::find(hot.begin(), hot.end(), r.job_id) != hot.end()) {
      s.plan.notes.push_back(fmt::format("{}: measured {:.0f}% of its cross-leaf bytes on congested cables ({}); "
                                         "proposed",
                                         id, 100 * m->second.share(), o.congestion));
      kept.push_back(std::move(r));
    } else if (m == s.measured.end()) {
      s.plan.notes.push_back(id + ": not in " + o.congestion + " (not running when it was measured): not proposed");
    } else if (!m->second.known) {
      s.plan.notes.push_back(id + ": its traffic was unknown when measured (" + m->second.note + "): not proposed");
    } else {
      s.plan.notes.push_back(fmt::format("{}: measured {:.0f}% of its cross-leaf bytes on congested cables, below "
                                         "{:.0f}%: not proposed",
                                         id, 100 * m->second.share(), 100 * o.min_congested_share));
    }
  }
  s.plan.relocations = std::move(kept);
}

void take_snapshot(const DefragOptions &o, Snapshot &s, bool warn) {
  gather_show_sources(o.topology, o.status, o.timeout, true, s.src);
  s.src.in.cost.comm_fraction = o.comm_fraction;
  s.model = build_show(s.src.topology, s.src.in);
  size_t bad = 0;
  s.times = parse_defrag_times(
      slurm_output({"squeue", "-h", "-a", "-t", "RUNNING", "-O", kDefragTimesFormat}, o.timeout), &bad);
  if (warn) {
    for (const std::string &w : s.src.warnings) std::fprintf(stderr, "topoaware: warning: %s\n", w.c_str());
    if (bad) std::fprintf(stderr, "topoaware: warning: %zu line(s) of squeue's times were not understood\n", bad);
  }
  DefragParams p;
  p.comm_fraction = o.comm_fraction;
  s.plan = plan_defrag(s.model, s.times, p);
  if (!o.congestion.empty()) keep_congested(o, s);
}

bool job_state(uint32_t id, int timeout, DefragJobState &st) {
  const CommandResult r = run_command({"squeue", "-h", "-j", std::to_string(id), "-o", kDefragJobFormat}, timeout);
  return r.started && !r.timed_out && r.status == 0 && parse_defrag_job_state(r.out, id, st);
}

std::string names(const Topology &t, const std::vector<int> &hosts) { return host_names(t, hosts); }

std::vector<std::string> sorted_hosts(const std::string &list) {
  std::vector<std::string> v;
  try {
    v = hostlist_expand(list);
  } catch (const std::exception &) {
    v = {list};
  }
  std::sort(v.begin(), v.end());
  return v;
}

std::string first_line_of(const std::string &s) {
  std::string l = s.substr(0, s.find('\n'));
  while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
  return l;
}

// One move, logged step by step. Returns 0, kDefragExitMoveFailed (the job was not requeued: it
// keeps running) or kDefragExitNotRestarted (requeued, not running again within --restart-wait).
int apply_move(const DefragOptions &o, const Snapshot &s, const DefragMove &mv, const Logger &log) {
  const Topology &t = *s.model.topo;
  const std::string id = std::to_string(mv.job_id);
  if (auto m = s.measured.find(mv.job_id); m != s.measured.end() && m->second.known)
    log(fmt::format("job {}: measured {:.0f}% of its cross-leaf bytes on congested cables ({})", id,
                    100 * m->second.share(), o.congestion));
  log("job " + id + ": move from " + names(t, mv.from) + " to " + names(t, mv.to) + " (predicted " +
      place_status_name(mv.predicted) + "; est. slowdown " + std::to_string(mv.slowdown_now).substr(0, 4) + " -> " +
      std::to_string(mv.slowdown_after).substr(0, 4) + ")");
  if (!mv.migratable) {  // defrag_next_move never gives one; kept as the last guard
    log("job " + id + ": not moved: " + mv.refusal);
    return kDefragExitMoveFailed;
  }
  DefragJobState st;
  if (!job_state(mv.job_id, o.timeout, st) || st.state != "RUNNING") {
    log("job " + id + ": not moved: it is no longer running (" + (st.state.empty() ? "gone" : st.state) + ")");
    return kDefragExitMoveFailed;
  }
  std::vector<std::string> from_names;
  for (int h : mv.from) from_names.push_back(t.hosts[size_t(h)].name);
  std::sort(from_names.begin(), from_names.end());
  if (sorted_hosts(st.nodes) != from_names) {
    log("job " + id + ": not moved: it now runs on " + st.nodes + ", not on the nodes planned from");
    return kDefragExitMoveFailed;
  }
  // The checkpoint signal, as the job's --signal says: B: to the batch shell only, else to its steps.
  std::vector<std::string> sig = {"scancel", "--signal=" + std::to_string(mv.signal)};
  if (mv.signal_batch) sig.push_back("--batch");
  sig.push_back(id);
  log("job " + id + ": " +
      (mv.signal_batch ? "scancel --signal=" + std::to_string(mv.signal) + " --batch "
                       : "scancel --signal=" + std::to_string(mv.signal) + " ") +
      id);
  CommandResult r = run_command(sig, o.timeout);
  if (!r.started || r.timed_out || r.status != 0) {
    log("job " + id + ": signal failed (" + (r.started ? first_line_of(r.err) : r.start_error) +
        "); not requeued, it keeps running");
    return kDefragExitMoveFailed;
  }
  const int window = o.checkpoint_wait >= 0 ? o.checkpoint_wait : int(mv.signal_time);
  log("job " + id + ": waiting " + std::to_string(window) + " s for its checkpoint");
  for (int waited = 0; waited < window; waited += 1) {
    sleep(1);
    if (waited % 5 == 4 && (!job_state(mv.job_id, o.timeout, st) || st.state != "RUNNING")) break;
  }
  if (!job_state(mv.job_id, o.timeout, st) || st.state != "RUNNING") {
    log("job " + id + ": it left RUNNING during the checkpoint window (" + (st.state.empty() ? "gone" : st.state) +
        "); not requeued");
    return kDefragExitMoveFailed;
  }
  log("job " + id + ": scontrol requeue " + id);
  r = run_command({"scontrol", "requeue", id}, o.timeout);
  if (!r.started || r.timed_out || r.status != 0) {
    log("job " + id + ": requeue failed (" + (r.started ? first_line_of(r.err) : r.start_error) +
        "); the job keeps running where it was");
    return kDefragExitMoveFailed;
  }
  log("job " + id + ": requeued; waiting up to " + std::to_string(o.restart_wait) + " s for it to run again");
  std::vector<std::string> to_names;
  for (int h : mv.to) to_names.push_back(t.hosts[size_t(h)].name);
  std::sort(to_names.begin(), to_names.end());
  const time_t end = time(nullptr) + o.restart_wait;
  std::string last;
  // The job first leaves RUNNING (completing, then pending), then runs again; a poll may miss the
  // pending part, so running on other nodes counts as a restart too.
  bool left = false;
  do {
    if (job_state(mv.job_id, o.timeout, st)) {
      last = st.state;
      if (st.state != "RUNNING") left = true;
      if (st.state == "RUNNING" && !st.nodes.empty() && (left || sorted_hosts(st.nodes) != from_names)) {
        const bool planned = sorted_hosts(st.nodes) == to_names;
        log("job " + id + ": running again on " + st.nodes +
            (planned ? " (the planned block)" : " (not the planned block " + names(t, mv.to) + ")"));
        return 0;
      }
    }
    sleep(2);
  } while (time(nullptr) < end);
  log("job " + id + ": requeued but not running again after " + std::to_string(o.restart_wait) + " s (state " +
      (last.empty() ? "unknown" : last) + "); it is in the queue, not lost");
  return kDefragExitNotRestarted;
}

}  // namespace

int run_defrag(const DefragOptions &o) {
  const bool json = o.json || o.format == "json";
  // The log first: a path that cannot be appended to stops the command before any Slurm command.
  const Logger log(o.apply ? o.log : std::string());
  Snapshot first;
  take_snapshot(o, first, true);
  if (!o.apply) {
    const std::string out =
        json ? defrag_json(first.model, first.plan).dump(2) + "\n" : defrag_text(first.model, first.plan);
    std::cout << out;
    std::cout.flush();
    return 0;
  }
  if (!first.model.status)
    throw Failure("--apply needs the select plugin's status file (which jobs opted in): " + first.model.status_problem);
  int rc = 0, done = 0;
  nlohmann::ordered_json moves = nlohmann::ordered_json::array();
  Snapshot *s = &first;
  std::unique_ptr<Snapshot> next;
  for (;;) {
    const DefragMove *mv = defrag_next_move(s->plan);
    if (!mv) {
      log(done ? "no further move for jobs that opted in" : "nothing to move: no job that opted in has a move");
      break;
    }
    if (done >= o.max_moves) {
      log("stopping after " + std::to_string(done) + " move(s) (--max-moves)");
      break;
    }
    nlohmann::ordered_json entry = defrag_move_json(s->model, *mv);
    const int r = apply_move(o, *s, *mv, log);
    entry["result"] = r == 0 ? "moved" : r == kDefragExitNotRestarted ? "requeued-not-restarted" : "failed";
    moves.push_back(entry);
    ++done;
    if (r != 0) {
      rc = r;
      break;
    }
    if (done >= o.max_moves) break;
    next = std::make_unique<Snapshot>();
    take_snapshot(o, *next, false);
    s = next.get();
  }
  if (json) {
    nlohmann::ordered_json out;
    out["schema"] = "topoaware-defrag-apply/1";
    out["moves"] = moves;
    out["exit_status"] = rc;
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << done << " move(s) tried, exit status " << rc << "\n";
  }
  return rc;
}

}  // namespace topoaware
