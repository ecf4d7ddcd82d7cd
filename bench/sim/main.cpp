// SPDX-License-Identifier: GPL-2.0-or-later
// placement_sim: the trace-driven placement benchmark (docs/design.md, "How placement is judged").
// Usage: placement_sim [--quick|--full] [--seeds N] [--jobs N] [--out DIR]
//                      [--config FAMILY:NODES[:LOAD]]... [--policies P,Q,..] [--no-optimum]
//                      [--snapshots DIR [--snapshot-count K]] [--workload generated|replay]
//                      [--jitter SEC[:SEED]] [--no-ring-book]
// Prints the tables, writes DIR/runs.csv (one row per run and policy), DIR/summary.csv (per
// configuration and policy, over seeds), DIR/optimum.csv, DIR/latency.csv and DIR/placement.svg.
// --snapshots: K schedule states per run (instants evenly spaced in the window, the same for every
// policy) as topoaware-netsim/1 snapshots for bench/netsim (bench/netsim_report.py scores them).
// --workload replay: instead of make_trace, the traces of the replays through real slurmctld
// (bench/sim/replay_trace.hpp, as bench/slurm_replay.sh draws them: seed S is the replay's seed S,
// 240 s of arrivals at the configuration's load, jobs of up to a quarter of the cluster, the
// fragmented start, time limits in whole minutes, plain jobs without a layout), fixed runtimes (no
// stretch, as the replay's sleeps), the window the whole trace; --jobs is not used.
// --jitter SEC[:SEED]: each policy runs the trace with every job's runtime moved by a uniform draw
// in [-SEC, SEC] of its own (generator seeded by the trace seed, SEED and the policy's name), so
// the policies' schedules diverge as two runs of a real replay do (jobs end tenths of seconds
// apart, and every difference cascades); two runs with different SEEDs show the spread one
// policy has against itself.
// --no-ring-book: topoaware runs each job in its rank order alone (as the engine placed it), not in
// the order the select plugin's ring book gives at job begin (counting the rings of the jobs
// still running, in start order); for comparing the two.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabric.hpp"
#include "safe_folder.hpp"
#include "optimum.hpp"
#include "topology_json.hpp"
#include "rank_order.hpp"
#include "replay_trace.hpp"
#include "moe_draw.hpp"
#include "sim.hpp"

using namespace topoaware;
using namespace topoaware::sim;

namespace {

constexpr double kReplaySpan = 240;  // bench/slurm_replay.sh's default --span

// The trace one policy runs under --jitter (see the top of the file); runtimes stay >= 1 s.
std::vector<TraceJob> jittered(const std::vector<TraceJob> &trace, double sec, uint64_t seed, int trace_seed,
                               const std::string &policy) {
  if (sec <= 0) return trace;
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the policy name: stable across builds
  for (unsigned char ch : policy) h = (h ^ ch) * 1099511628211ull;
  std::mt19937_64 rng(h ^ (seed * 0x9e3779b97f4a7c15ull) ^ (uint64_t(trace_seed) << 32));
  std::uniform_real_distribution<double> u(-sec, sec);
  std::vector<TraceJob> t = trace;
  for (TraceJob &j : t) j.runtime = std::max(1.0, j.runtime + u(rng));
  return t;
}

struct Config {
  std::string family;
  int nodes;
  double load;
  bool stretch;
  int seeds;
  int jobs;
  bool target = false;
  std::string topology = "";  // FAMILY:NODES[:LOAD]@FILE: the cluster read from this topology.json
};

std::string cfg_name(const Config &c) {
  char b[128];
  std::snprintf(b, sizeof b, "%s-%d load=%.1f %s", c.family.c_str(), c.nodes, c.load,
                c.stretch ? "stretch" : "no-stretch");
  return b;
}

struct Agg {  // sums over seeds
  int runs = 0, multi = 0;
  double ideal_s = 0, ideal_t = 0, hop_s = 0, hop_t = 0, hop_i = 0, spine_s = 0, spine_t = 0;
  double sd_n[3] = {0, 0, 0}, sd_t[3] = {0, 0, 0};
  double util = 0, useful = 0, wait_mean = 0, wait_p95 = 0, bsld = 0, block = 0, dec_s = 0;
  long decisions = 0;
  double hop_ratio_min = 1e300, hop_ratio_max = 0;  // per seed, topo order vs slurm-tree native
};

// Optimum collector for the hook
struct OptCtx {
  const CostParams *params;
  RankOrderer *orderer;
  long decisions = 0, solved = 0, within5 = 0, better = 0;
  double sum_gap = 0, max_gap = 0;
};

void opt_hook(void *ctx, const Cluster &c, const std::vector<uint8_t> &free, const TraceJob &job,
              const std::vector<int> &chosen, bool native_topo) {
  auto *o = static_cast<OptCtx *>(ctx);
  if (job.nodes < 2) return;
  ++o->decisions;
  OptimumResult opt = exact_optimum(c, free, job.nodes, job.layout, *o->params);
  if (!opt.done) return;
  ++o->solved;
  std::vector<int> sorted = chosen, ordered;
  std::sort(sorted.begin(), sorted.end());
  if (native_topo)
    ordered = chosen;
  else
    o->orderer->order(sorted, job.layout, ordered);
  const double hop = job_cost(*c.index, ordered, job.layout, *o->params).hop_bytes;
  const double gap = opt.hop_bytes > 0 ? hop / opt.hop_bytes - 1 : (hop > 0 ? 1 : 0);
  if (gap < -1e-9) ++o->better;
  o->sum_gap += std::max(0.0, gap);
  o->max_gap = std::max(o->max_gap, gap);
  if (gap <= 0.05 + 1e-9) ++o->within5;
}

void svg_bars(const std::string &path, const std::string &title, const std::vector<std::string> &labels,
              const std::vector<std::string> &series, const std::vector<std::vector<double>> &vals) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) return;
  const int W = 900, H = 420, L = 60, B = 120, T = 40;
  double mx = 0;
  for (auto &v : vals)
    for (double x : v) mx = std::max(mx, x);
  mx = std::max(1.0, std::ceil(mx * 4) / 4);
  std::fprintf(
      f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' font-family='sans-serif' font-size='12'>\n", W,
      H);
  std::fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n<text x='%d' y='20' font-size='14'>%s</text>\n",
               L, title.c_str());
  const double ph = H - B - T, pw = W - L - 20;
  for (int k = 0; k <= 4; ++k) {
    const double y = T + ph - ph * k / 4;
    std::fprintf(f,
                 "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/><text x='%d' y='%.1f' "
                 "text-anchor='end'>%.2f</text>\n",
                 L, W - 20, y, y, L - 4, y + 4, mx * k / 4);
  }
  const double y1 = T + ph - ph * (1.0 / mx);
  std::fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='black' stroke-dasharray='4'/>\n", L, W - 20, y1,
               y1);
  const char *colors[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44"};
  const double gw = pw / double(labels.size()), bw = gw * 0.8 / double(series.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t s = 0; s < series.size(); ++s) {
      const double v = vals[s][i], h = ph * v / mx;
      std::fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>%s %s %.3f</title></rect>\n",
                   L + gw * i + gw * 0.1 + bw * s, T + ph - h, bw, h, colors[s % 4], labels[i].c_str(),
                   series[s].c_str(), v);
    }
    const double x = L + gw * i + gw / 2;
    std::fprintf(f, "<text transform='translate(%.1f,%.1f) rotate(40)'>%s</text>\n", x, T + ph + 14, labels[i].c_str());
  }
  for (size_t s = 0; s < series.size(); ++s)
    std::fprintf(f, "<rect x='%d' y='%zu' width='10' height='10' fill='%s'/><text x='%d' y='%zu'>%s</text>\n", W - 330,
                 28 + 14 * s, colors[s % 4], W - 315, 37 + 14 * s, series[s].c_str());
  std::fprintf(f, "</svg>\n");
  std::fclose(f);
}

// Bytes per node per second through the node's NIC ports (all rails).
double node_nic_bytes_per_s(const Topology &t, int h) {
  double b = 0;
  for (const HcaPort &p : t.hosts[size_t(h)].ports) b += p.width * lane_gbps(p.speed) * 1e9 / 8;
  return b;
}

// One snapshot as topoaware-netsim/1 (bench/netsim/README.md). Single-node jobs are left out (tp = 8
// on an 8-GPU node: no network traffic). Extra fields netsim ignores: the cost model's score of the
// job's order (cost), and nic_bound_s, the job's step communication time under netsim's traffic
// model on an uncontended placement (every flow limited by its NIC only): DP, 8 tp rings per node
// each sending 2(d-1)/d S, plus PP, a middle stage sending pp_bytes to both neighbours.
void write_snapshot(const std::string &path, const Cluster &c, const std::vector<TraceJob> &trace,
                    const CostParams &cost, const std::string &policy, int seed, int index, double time,
                    const std::vector<SnapshotJob> &running) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error(path + ": cannot write");
  int busy = 0;
  for (const SnapshotJob &s : running) busy += int(s.order->size());
  std::fprintf(f,
               "{\"schema\": \"topoaware-netsim/1\", \"cluster\": \"%s\", \"policy\": \"%s\", \"seed\": %d, "
               "\"index\": %d, \"time\": %.3f, \"busy_nodes\": %d,\n \"jobs\": [",
               c.name.c_str(), policy.c_str(), seed, index, time, busy);
  bool first = true;
  for (const SnapshotJob &s : running) {
    const TraceJob &j = trace[size_t(s.id)];
    if (s.order->size() < 2 || j.plain) continue;  // plain jobs: no layout, no traffic modelled
    const double dp_bytes = cost.grad_bytes_per_rank(j.layout);
    const double pp_bytes = cost.micro_batches * cost.activation_bytes(j.layout);  // per direction
    const double gpn = double(j.layout.world()) / double(s.order->size());         // ranks per node
    const double bw = node_nic_bytes_per_s(c.topo, s.order->front());
    const double d = j.layout.dp;
    double bound = 0;
    if (j.layout.pp > 1) bound += (j.layout.pp > 2 ? 2 : 1) * gpn * pp_bytes / bw;
    if (j.layout.dp > 1) bound += gpn * 2 * (d - 1) / d * dp_bytes / bw;
    std::fprintf(f, "%s\n  {\"name\": \"j%d\", \"layout\": {\"tp\": %u, \"pp\": %u, \"dp\": %u",
                 first ? "" : ",", j.id, j.layout.tp, j.layout.pp, j.layout.dp);
    if (j.layout.ep > 1) std::fprintf(f, ", \"ep\": %u", j.layout.ep);  // the user's --ep (a MoE model)
    std::fprintf(f, "}, ");
    std::fprintf(f, "\"order\": \"given\", ");
    std::fprintf(f, "\"dp_bytes\": %.6g, \"pp_bytes\": %.6g, \"nic_bound_s\": %.6g, ", dp_bytes, pp_bytes, bound);
    std::fprintf(f, "\"cost\": {\"hop_bytes\": %.6g, \"ideal_hop_bytes\": %.6g, \"ratio\": %.6g}, \"nodes\": [",
                 s.hop_bytes, s.ideal_hop_bytes, s.ratio);
    for (size_t k = 0; k < s.order->size(); ++k)
      std::fprintf(f, "%s\"%s\"", k ? ", " : "", c.topo.hosts[size_t((*s.order)[k])].name.c_str());
    std::fprintf(f, "]}");
    first = false;
  }
  std::fprintf(f, "\n]}\n");
  if (std::fclose(f) != 0) throw std::runtime_error(path + ": write failed");
}

// One replay trace (bench/slurm_replay.sh's --span 240 --frag, the cluster's leaf size) as the
// simulator's jobs: frag jobs pinned to their host at time 0, the others queued at their arrival
// with the replay's time limit as the scheduler's estimate.
std::vector<TraceJob> replay_workload(const Cluster &c, double load, int seed) {
  ReplayTraceSpec spec;
  spec.seed = uint64_t(seed);
  spec.nodes = c.nodes;
  spec.per_leaf = c.bblock_node_cnt;
  // bench/slurm_replay.sh's --max-nodes: a quarter of the cluster (16 of 64 nodes, 128 of 512).
  spec.max_nodes = std::max(1, c.nodes / 4);
  spec.span = kReplaySpan;
  spec.load = load;
  spec.frag = true;
  if (!spec.valid()) throw std::invalid_argument(c.name + ": no replay workload for this cluster");
  std::vector<TraceJob> t;
  for (const ReplayJob &r : make_replay_trace(spec)) {
    TraceJob j;
    j.id = int(t.size());
    j.arrival = r.arrival;
    j.runtime = r.runtime;
    j.nodes = r.nodes;
    j.layout.tp = uint32_t(r.tp);
    j.layout.pp = uint32_t(r.pp);
    j.layout.dp = uint32_t(r.dp);
    j.estimate = 60.0 * replay_time_limit_minutes(r.runtime);
    j.pinned = r.node;
    j.plain = r.kind == "plain";
    t.push_back(j);
  }
  return t;
}

// The command line (see the top of the file).
struct SimArgs {
  std::string mode = "default", out = "bench/results", snap_dir, policy_list;
  int seeds = 5, jobs = 0, snap_count = 8;
  // Seeds first_seed .. first_seed + seeds - 1: rules are tuned on low seeds and reported on seeds
  // never used while tuning (e.g. --first-seed 101).
  int first_seed = 1;
  bool optimum = true, replay = false, ring_book = true;
  double jitter = 0;
  uint64_t jitter_seed = 1;
  std::vector<std::string> custom;
};

// Reads the options into a; false after the message on a bad one (the command exits 2).
bool parse_args(int argc, char **argv, SimArgs &a) {
  for (int i = 1; i < argc; ++i) {
    std::string o = argv[i];
    if (o == "--quick") a.mode = "quick";
    else if (o == "--full") a.mode = "full";
    else if (o == "--seeds" && i + 1 < argc) a.seeds = std::atoi(argv[++i]);
    else if (o == "--first-seed" && i + 1 < argc) a.first_seed = std::atoi(argv[++i]);
    else if (o == "--jobs" && i + 1 < argc) a.jobs = std::atoi(argv[++i]);
    else if (o == "--out" && i + 1 < argc) a.out = argv[++i];
    else if (o == "--config" && i + 1 < argc) a.custom.push_back(argv[++i]);
    else if (o == "--policies" && i + 1 < argc) a.policy_list = argv[++i];
    else if (o == "--no-optimum") a.optimum = false;
    else if (o == "--no-ring-book") a.ring_book = false;
    else if (o == "--snapshots" && i + 1 < argc) a.snap_dir = argv[++i];
    else if (o == "--snapshot-count" && i + 1 < argc) a.snap_count = std::atoi(argv[++i]);
    else if (o == "--workload" && i + 1 < argc && (std::string(argv[i + 1]) == "generated" ||
                                                   std::string(argv[i + 1]) == "replay"))
      a.replay = std::string(argv[++i]) == "replay";
    else if (o == "--jitter" && i + 1 < argc) {
      const std::string v = argv[++i];
      char *end = nullptr;
      a.jitter = std::strtod(v.c_str(), &end);
      if (*end == ':') a.jitter_seed = std::strtoull(end + 1, &end, 10);
      if (end == v.c_str() || *end || !(a.jitter >= 0)) {
        std::fprintf(stderr, "placement_sim: --jitter SEC[:SEED] (SEC >= 0), not '%s'\n", v.c_str());
        return false;
      }
    } else {
      std::fprintf(stderr,
                   "usage: placement_sim [--quick|--full] [--seeds N] [--first-seed N] [--jobs N] [--out DIR]\n"
                   "                     [--config FAMILY:NODES[:LOAD][@TOPOLOGY.json]]... [--policies P,Q,..]\n"
                   "                     [--no-optimum]\n"
                   "                     [--snapshots DIR [--snapshot-count K]] [--workload generated|replay]\n"
                   "                     [--jitter SEC[:SEED]] [--no-ring-book]\n");
      return false;
    }
  }
  return true;
}

// The configurations of the mode, or the --config ones (which make the mode "custom"); false
// after the message on a --config without NODES (the command exits 2).
bool make_configs(SimArgs &a, std::vector<Config> &cfgs) {
  auto J = [&](int def) { return a.jobs > 0 ? a.jobs : def; };
  const int seeds = a.seeds;
  if (!a.custom.empty()) {
    a.mode = "custom";
    for (const std::string &spec : a.custom) {
      Config cf{"", 0, 0.9, true, seeds, J(600)};
      const size_t at = spec.find('@');
      if (at != std::string::npos) cf.topology = spec.substr(at + 1);
      const std::string head = spec.substr(0, at);
      const size_t p = head.find(':'), q = head.find(':', p == std::string::npos ? p : p + 1);
      if (p == std::string::npos) {
        std::fprintf(stderr, "placement_sim: --config FAMILY:NODES[:LOAD][@TOPOLOGY.json], not '%s'\n", spec.c_str());
        return false;
      }
      cf.family = head.substr(0, p);
      cf.nodes = std::atoi(head.substr(p + 1, q - p - 1).c_str());
      if (q != std::string::npos) cf.load = std::atof(head.substr(q + 1).c_str());
      cfgs.push_back(cf);
    }
  } else if (a.mode == "quick") {
    cfgs.push_back({"ft2-2to1", 256, 0.9, true, std::min(seeds, 2), J(400), true});
    cfgs.push_back({"ft3-7to1", 512, 0.9, true, 1, J(300)});
    cfgs.push_back({"rail8", 256, 0.9, true, 1, J(300)});
    cfgs.push_back({"dfly", 256, 0.9, true, 1, J(300)});
  } else if (a.mode == "default") {
    cfgs.push_back({"ft2-2to1", 2048, 0.9, true, seeds, J(1500), true});
    cfgs.push_back({"ft2-2to1", 2048, 0.9, false, seeds, J(1500)});
    cfgs.push_back({"ft2-2to1", 2048, 0.7, true, 2, J(1000)});
    cfgs.push_back({"ft2-2to1", 2048, 1.0, true, 2, J(1000)});
    cfgs.push_back({"ft2-1to1", 2048, 0.9, true, 2, J(1000)});
    cfgs.push_back({"ft3-7to1", 2048, 0.9, true, 2, J(1000)});
    cfgs.push_back({"rail8", 1024, 0.9, true, 2, J(1000)});
    cfgs.push_back({"dfly", 2048, 0.9, true, 2, J(1000)});
    cfgs.push_back({"ft2-2to1", 256, 0.9, true, 2, J(1000)});
    cfgs.push_back({"ft3-7to1", 8192, 0.9, true, 1, J(800)});
  } else {
    const char *fams[] = {"ft2-1to1", "ft2-2to1", "ft3-7to1", "rail8", "dfly"};
    for (const char *fam : fams)
      for (int n = 256; n <= 16384; n *= 2) {
        const std::string f = fam;
        if ((f.rfind("ft2", 0) == 0 || f == "rail8") && n > 4096) continue;  // switch radix <= 254
        if (f == "dfly" && n < 256) continue;
        for (double load : {0.7, 0.9, 1.0})
          cfgs.push_back(
              {f, n, load, true, seeds, J(n >= 8192 ? 1000 : 1500), f == "ft2-2to1" && n == 2048 && load == 0.9});
      }
    cfgs.push_back({"ft2-2to1", 2048, 0.9, false, seeds, J(1500)});
  }
  if (a.replay)
    for (Config &cf : cfgs) cf.stretch = false;  // the replay's jobs sleep a fixed time
  return true;
}

// The policies to run: the defaults, topoaware-nodomain only when named, then the --policies subset.
std::vector<PolicySpec> chosen_policies(const std::string &policy_list) {
  std::vector<PolicySpec> specs = default_policies();
  // Only on request: on fabrics without NVLink domains it is topoaware itself.
  if (("," + policy_list + ",").find(",topoaware-nodomain,") != std::string::npos)
    specs.push_back({"topoaware-nodomain", 0});
  if (!policy_list.empty()) {  // a subset (slurm-tree always: the ratios are against it)
    std::vector<PolicySpec> keep;
    for (const PolicySpec &ps : specs)
      if (ps.kind == "slurm-tree" || ("," + policy_list + ",").find("," + ps.kind + ",") != std::string::npos)
        keep.push_back(ps);
    specs = keep;
  }
  return specs;
}

// Adds one run of a policy to its sums; topo_native: the policy runs with topoaware's own rank
// order, so its native figures are the topo-order ones. tree_hop: slurm-tree's hop-bytes on the
// same trace, for the per-seed ratio range.
void add_run(Agg &a, const Summary &s, const SimResult &r, bool topo_native, int nodes, double tree_hop) {
  ++a.runs;
  a.multi += s.multi_node_jobs;
  a.ideal_s += (topo_native ? s.ideal_rate_topo : s.ideal_rate_slurm) * s.multi_node_jobs;
  a.ideal_t += s.ideal_rate_topo * s.multi_node_jobs;
  a.hop_s += topo_native ? s.hop_topo : s.hop_slurm;
  a.hop_t += s.hop_topo;
  a.hop_i += s.hop_ideal;
  a.spine_s += topo_native ? s.spine_topo : s.spine_slurm;
  a.spine_t += s.spine_topo;
  for (int k = 0; k < 3; ++k) a.sd_n[k] += s.slowdown_native[k], a.sd_t[k] += s.slowdown_topo[k];
  a.util += s.utilization;
  a.useful += r.useful_node_seconds / (double(nodes) * (r.window_hi - r.window_lo));
  a.wait_mean += s.wait_mean;
  a.wait_p95 += s.wait_p95;
  a.bsld += s.bsld_mean;
  a.block += s.free_block_mean;
  a.dec_s += r.decision_seconds;
  a.decisions += r.decisions;
  const double hr = s.hop_topo / std::max(1e-300, tree_hop);
  a.hop_ratio_min = std::min(a.hop_ratio_min, hr);
  a.hop_ratio_max = std::max(a.hop_ratio_max, hr);
}

using RunResults = std::map<std::string, std::pair<Summary, SimResult>>;  // policy -> its run

// One benchmark: the output files, the policies, and what the tables after the configurations
// need (decision latencies, the target configuration's sums, the optimum's collectors).
struct Bench {
  const SimArgs &args;
  std::vector<PolicySpec> specs;
  FILE *runs = nullptr, *summ = nullptr;
  SimOptions opt;
  std::map<int, std::map<std::string, std::pair<double, long>>> latency;  // nodes -> policy -> (s, n)
  std::map<std::string, Agg> target_agg;
  Config target_cfg{};
  std::map<std::string, OptCtx> opt_res;
  std::unique_ptr<Cluster> small;  // the optimum's instance; its policy names head the later tables

  explicit Bench(const SimArgs &a) : args(a) { opt.ring_book = a.ring_book; }

  // runs.csv and summary.csv with their headers; false after the message (the command exits 1).
  bool open_csvs() {
    runs = std::fopen((args.out + "/runs.csv").c_str(), "w");
    summ = std::fopen((args.out + "/summary.csv").c_str(), "w");
    if (!runs || !summ) {
      std::fprintf(stderr, "cannot write into %s\n", args.out.c_str());
      return false;
    }
    std::fprintf(
        runs,
        "family,nodes,load,stretch,seed,jobs,policy,multi_node_jobs,ideal_rate_slurm_order,ideal_rate_topo_order,"
        "hop_bytes_slurm_order,hop_bytes_topo_order,hop_bytes_ideal,spine_bytes_slurm_order,spine_bytes_topo_order,"
        "slowdown_f0.1,slowdown_f0.3,slowdown_f0.5,slowdown_topo_f0.3,utilization,wait_mean_s,wait_p95_s,"
        "bounded_slowdown,free_block_nodes,decision_us\n");
    std::fprintf(summ,
                 "family,nodes,load,stretch,seeds,policy,ideal_rate_native,ideal_rate_topo_order,hop_vs_tree_native,"
                 "hop_vs_tree_topo_order,excess_hop_vs_tree,spine_vs_tree_native,spine_vs_tree_topo_order,slowdown_f0.1,"
                 "slowdown_f0.3,"
                 "slowdown_f0.5,utilization,useful_utilization,wait_mean_s,wait_p95_s,p95_vs_tree,bounded_slowdown,free_"
                 "block_nodes,decision_us\n");
    return true;
  }

  // Every seed of one configuration and its table; false when a snapshot folder cannot be made
  // (the command exits 1). A cluster that cannot be built is skipped with a note.
  bool run_config(const Config &cf) {
    std::unique_ptr<Cluster> c;
    try {
      c = cf.topology.empty() ? make_cluster(cf.family, cf.nodes) : load_cluster(cf.family, cf.nodes, cf.topology);
      if (args.replay) replay_workload(*c, cf.load, 1);  // throws if the replay's generator cannot fill it
    } catch (const std::exception &e) {
      std::printf("# skip %s: %s\n", cfg_name(cf).c_str(), e.what());
      return true;
    }
    opt.stretch = cf.stretch;
    std::map<std::string, Agg> agg;
    const std::string cdir = args.snap_dir.empty() ? "" : args.snap_dir + "/" + c->name;
    if (!cdir.empty()) {
      if (std::system(("mkdir -p '" + cdir + "'").c_str()) != 0) return false;
      write_file_safely(cdir + "/topology.json", to_json(c->topo));
    }
    for (int seed = args.first_seed; seed < args.first_seed + cf.seeds; ++seed)
      if (!run_seed(cf, *c, cdir, seed, agg)) return false;
    print_config(cf, *c, agg);
    if (cf.target && cf.stretch) {
      target_agg = agg;
      target_cfg = cf;
    }
    return true;
  }

  // One trace through every policy, at the same snapshot instants; their rows in runs.csv and
  // their sums in agg. False when a snapshot folder cannot be made.
  bool run_seed(const Config &cf, const Cluster &c, const std::string &cdir, int seed,
                std::map<std::string, Agg> &agg) {
    const bool replay = args.replay;
    auto trace = replay ? replay_workload(c, cf.load, seed)
                  : c.topo.nvlink_domains.empty()
                        ? make_trace(c.nodes, cf.jobs, cf.load, uint64_t(seed) * 7919 + uint64_t(cf.nodes))
                        : make_trace_nvl(c.nodes, cf.jobs, cf.load, uint64_t(seed) * 7919 + uint64_t(cf.nodes));
    // The MoE jobs' expert-parallel size, as their users pass it (--ep): the engine's placement and
    // rank order see it, and the judge replays the all-to-all of the same groups. A function of the
    // seed and the job's snapshot name only, so every policy runs the same jobs as MoE.
    for (TraceJob &j : trace) j.layout.ep = netsim::workload_ep(uint64_t(seed), "j" + std::to_string(j.id), j.layout);
    RunResults res;
    opt.snapshot_times.clear();
    opt.window_lo = replay ? 0 : -1;
    opt.window_hi = replay ? kReplaySpan : -1;
    if (!cdir.empty()) {  // inside the window (arrivals of jobs 10%..90%), the same instants for every policy
      const double lo = replay ? opt.window_lo : trace[trace.size() / 10].arrival;
      const double hi = replay ? opt.window_hi : trace[trace.size() - 1 - trace.size() / 10].arrival;
      for (int k = 0; k < args.snap_count; ++k)
        opt.snapshot_times.push_back(lo + (hi - lo) * (k + 0.5) / args.snap_count);
    }
    for (const PolicySpec &ps : specs)
      if (!run_policy(c, ps, trace, cdir, seed, res)) return false;
    const Summary &tree = res.at("slurm-tree").first;
    for (auto &[name, sr] : res) {
      write_run_row(cf, seed, int(trace.size()), name, sr.first);
      add_run(agg[name], sr.first, sr.second, name.rfind("topoaware", 0) == 0, c.nodes, tree.hop_slurm);
    }
    std::fflush(runs);
    return true;
  }

  // One policy on one trace (jittered as asked, its snapshots written), into res and the latency
  // sums. False when its snapshot folder cannot be made.
  bool run_policy(const Cluster &c, const PolicySpec &ps, const std::vector<TraceJob> &trace,
                  const std::string &cdir, int seed, RunResults &res) {
    auto pol = make_policy(c, ps, uint64_t(seed));
    const std::vector<TraceJob> run_trace = jittered(trace, args.jitter, args.jitter_seed, seed, pol->name());
    opt.on_snapshot = nullptr;
    std::string pdir;
    if (!cdir.empty()) {
      pdir = cdir + "/s" + std::to_string(seed) + "/" + pol->name();
      if (std::system(("mkdir -p '" + pdir + "'").c_str()) != 0) return false;
      opt.on_snapshot = [&, seed](int k, double t, const std::vector<SnapshotJob> &running) {
        char name[32];
        std::snprintf(name, sizeof name, "/snap%03d.json", k);
        write_snapshot(pdir + name, c, run_trace, opt.cost, pol->name(), seed, k, t, running);
      };
    }
    SimResult r = simulate(c, run_trace, *pol, opt);
    Summary s = summarize(r);
    const double win = r.window_hi - r.window_lo;
    s.utilization = r.busy_node_seconds / (double(c.nodes) * win);
    s.free_block_mean = r.free_block_node_seconds / win;
    s.decision_us = r.decisions ? 1e6 * r.decision_seconds / double(r.decisions) : 0;
    auto &lat = latency[c.nodes][pol->name()];
    lat.first += r.decision_seconds;
    lat.second += r.decisions;
    res[pol->name()] = {s, std::move(r)};
    return true;
  }

  void write_run_row(const Config &cf, int seed, int jobs, const std::string &name, const Summary &s) {
    std::fprintf(runs,
                 "%s,%d,%.2f,%d,%d,%d,%s,%d,%.4f,%.4f,%.6g,%.6g,%.6g,%.6g,%.6g,%.5f,%.5f,%.5f,%.5f,%.5f,%.1f,%.1f,%"
                 ".3f,%.1f,%.2f\n",
                 cf.family.c_str(), cf.nodes, cf.load, int(cf.stretch), seed, jobs, name.c_str(), s.multi_node_jobs,
                 s.ideal_rate_slurm, s.ideal_rate_topo, s.hop_slurm, s.hop_topo, s.hop_ideal, s.spine_slurm,
                 s.spine_topo, s.slowdown_native[0], s.slowdown_native[1], s.slowdown_native[2], s.slowdown_topo[1],
                 s.utilization, s.wait_mean, s.wait_p95, s.bsld_mean, s.free_block_mean, s.decision_us);
  }

  // One configuration's table (every policy against slurm-tree) and its rows in summary.csv.
  void print_config(const Config &cf, const Cluster &c, const std::map<std::string, Agg> &agg) {
    const Agg &tr = agg.at("slurm-tree");
    if (args.replay)
      std::printf("\n## %s, %d replay traces (bench/slurm_replay.sh's, seeds 1..%d; window: the %.0f s of arrivals)\n",
                  cfg_name(cf).c_str(), cf.seeds, cf.seeds, kReplaySpan);
    else
      std::printf("\n## %s, %d seeds x %d jobs (window: arrivals of jobs 10%%..90%%)\n", cfg_name(cf).c_str(),
                  cf.seeds, cf.jobs);
    std::printf("%-20s %7s %7s %8s %8s %7s %8s %8s %7s %7s %7s %6s %6s %8s %8s %6s %6s %7s %7s\n", "policy", "ideal%",
                "ideal%t", "hop/tr", "hop/tr.t", "exc/tr", "spn/tr", "spn/tr.t", "sd.1", "sd.3", "sd.5", "util%",
                "usef%", "wait_m", "wait_p95", "p95/tr", "bsld", "blk", "dec_us");
    for (const PolicySpec &ps : specs) {
      auto pol = make_policy(c, ps, 1);
      const std::string name = pol->name();
      const Agg &a = agg.at(name);
      const double r = a.runs;
      const double p95r = tr.wait_p95 > 0 ? a.wait_p95 / tr.wait_p95 : (a.wait_p95 > 0 ? INFINITY : 1);
      std::printf(
          "%-20s %7.1f %7.1f %8.3f %8.3f %7.3f %8.3f %8.3f %7.4f %7.4f %7.4f %6.2f %6.2f %8.0f %8.0f %6.2f %6.2f %7.0f "
          "%7.1f\n",
          name.c_str(), 100 * a.ideal_s / std::max(1, a.multi), 100 * a.ideal_t / std::max(1, a.multi),
          a.hop_s / tr.hop_s, a.hop_t / tr.hop_s, (a.hop_s - a.hop_i) / std::max(1e-300, tr.hop_s - tr.hop_i),
          a.spine_s / std::max(1e-300, tr.spine_s), a.spine_t / std::max(1e-300, tr.spine_s), a.sd_n[0] / r,
          a.sd_n[1] / r, a.sd_n[2] / r, 100 * a.util / r, 100 * a.useful / r, a.wait_mean / r, a.wait_p95 / r, p95r,
          a.bsld / r, a.block / r, 1e6 * a.dec_s / std::max(1L, a.decisions));
      std::fprintf(summ,
                   "%s,%d,%.2f,%d,%d,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.5f,%.5f,%.5f,%.5f,%.5f,%.1f,%.1f,%.4f,%."
                   "3f,%.1f,%.2f\n",
                   cf.family.c_str(), cf.nodes, cf.load, int(cf.stretch), cf.seeds, name.c_str(),
                   a.ideal_s / std::max(1, a.multi), a.ideal_t / std::max(1, a.multi), a.hop_s / tr.hop_s,
                   a.hop_t / tr.hop_s, (a.hop_s - a.hop_i) / std::max(1e-300, tr.hop_s - tr.hop_i),
                   a.spine_s / std::max(1e-300, tr.spine_s), a.spine_t / std::max(1e-300, tr.spine_s), a.sd_n[0] / r,
                   a.sd_n[1] / r, a.sd_n[2] / r, a.util / r, a.useful / r, a.wait_mean / r, a.wait_p95 / r, p95r,
                   a.bsld / r, a.block / r, 1e6 * a.dec_s / std::max(1L, a.decisions));
    }
    std::printf("(hop-bytes of the ideal placement of the same jobs / slurm-tree: %.3f)\n", tr.hop_i / tr.hop_s);
    std::fflush(stdout);
    std::fflush(summ);
  }

  // Exact optimum on small instances: 64 nodes (8 leaves x 8, 2:1), jobs up to 16 nodes.
  void run_optimum() {
    std::printf("\n## exact optimum of the cost model per placement decision (multi-node jobs), small instances\n");
    FILE *optf = std::fopen((args.out + "/optimum.csv").c_str(), "w");
    std::fprintf(optf, "instance,seeds,policy,decisions,solved,within_5pct,mean_gap,max_gap,better_than_search\n");
    const int opt_seeds = args.mode == "quick" ? 1 : std::min(args.seeds, 3);
    small = make_small_cluster(8, 8);
    for (int seed = 1; seed <= opt_seeds; ++seed) {
      const auto trace = make_trace(small->nodes, args.mode == "quick" ? 150 : 400, 0.9, uint64_t(seed) * 104729);
      for (const PolicySpec &ps : specs) {
        auto pol = make_policy(*small, ps, uint64_t(seed));
        RankOrderer orderer(*small->index);
        OptCtx &o = opt_res[pol->name()];
        o.params = &opt.cost;
        o.orderer = &orderer;
        SimOptions so = opt;
        so.stretch = true;
        // Generated traces here, whatever the workload of the configurations: results over the
        // default window (a replay's 0-240 s would not fit them; only the decisions are used).
        so.window_lo = so.window_hi = -1;
        // No snapshots here: the last configuration's callback writes into that run's folder and
        // refers to its cluster, trace and policy, gone by now.
        so.snapshot_times.clear();
        so.on_snapshot = nullptr;
        simulate(*small, trace, *pol, so, opt_hook, &o);
        o.orderer = nullptr;
      }
    }
    std::printf("%-20s %9s %7s %9s %9s %9s\n", "policy", "decisions", "solved", "within5%", "mean_gap", "max_gap");
    for (const PolicySpec &ps : specs) {
      const std::string name = make_policy(*small, ps, 1)->name();
      const OptCtx &o = opt_res[name];
      std::printf("%-20s %9ld %7ld %8.1f%% %8.2f%% %8.1f%%\n", name.c_str(), o.decisions, o.solved,
                  100.0 * double(o.within5) / std::max(1L, o.solved), 100 * o.sum_gap / std::max(1L, o.solved),
                  100 * o.max_gap);
      std::fprintf(optf, "%s,%d,%s,%ld,%ld,%ld,%.5f,%.5f,%ld\n", small->name.c_str(), opt_seeds, name.c_str(),
                   o.decisions, o.solved, o.within5, o.sum_gap / std::max(1L, o.solved), o.max_gap, o.better);
    }
    std::fclose(optf);
  }

  // Decision latency against node count (after run_optimum: its instance names the policies).
  void print_latency() {
    std::printf("\n## mean decision latency (us per select() call, inside the simulation) by node count\n%-8s",
                "nodes");
    FILE *latf = std::fopen((args.out + "/latency.csv").c_str(), "w");
    std::fprintf(latf, "nodes,policy,calls,mean_us\n");
    for (const PolicySpec &ps : specs) std::printf(" %20s", make_policy(*small, ps, 1)->name().c_str());
    std::printf("\n");
    for (auto &[n, m] : latency) {
      std::printf("%-8d", n);
      for (const PolicySpec &ps : specs) {
        const std::string name = make_policy(*small, ps, 1)->name();
        const auto &v = m[name];
        std::printf(" %20.1f", v.second ? 1e6 * v.first / double(v.second) : 0.0);
        std::fprintf(latf, "%d,%s,%ld,%.3f\n", n, name.c_str(), v.second,
                     v.second ? 1e6 * v.first / double(v.second) : 0.0);
      }
      std::printf("\n");
    }
    std::fclose(latf);
  }

  // Targets on the target configuration (docs/design.md, "How placement is judged"), then its plot.
  void print_targets() {
    if (target_agg.empty()) return;
    const Agg &tr = target_agg.at("slurm-tree"), &ta = target_agg.at("topoaware");
    double best_util = 0;
    std::string best_name;
    for (auto &[name, a] : target_agg)
      if (name.rfind("topoaware", 0) != 0 && a.useful / a.runs > best_util)
        best_util = a.useful / a.runs, best_name = name;
    const double hop = ta.hop_s / tr.hop_s;
    const double ideal = ta.ideal_s / std::max(1, ta.multi);
    const double util = ta.useful / ta.runs;  // useful: a stretched job's extra node time is not work
    const double p95 = tr.wait_p95 > 0 ? ta.wait_p95 / tr.wait_p95 : 1;
    const OptCtx &o = opt_res["topoaware"];
    const double gap = o.sum_gap / std::max(1L, o.solved);
    std::printf("\n## targets: %s, %d seeds; topoaware (prefer)\n", cfg_name(target_cfg).c_str(),
                target_cfg.seeds);
    std::printf("hop-bytes vs slurm-tree        %.3f   target <= 0.50   %s (per seed %.3f..%.3f)\n", hop,
                hop <= 0.5 ? "MET" : "MISSED", ta.hop_ratio_min, ta.hop_ratio_max);
    std::printf("excess hop-bytes vs slurm-tree %.3f   (hop-bytes above each job's ideal placement)\n",
                (ta.hop_s - ta.hop_i) / std::max(1e-300, tr.hop_s - tr.hop_i));
    std::printf("ideal-span rate (multi-node)   %.1f%%  target >= 95%%    %s\n", 100 * ideal,
                ideal >= 0.95 ? "MET" : "MISSED");
    std::printf("useful utilization             %.2f%% best baseline %s %.2f%%  target within 1 point  %s\n",
                100 * util, best_name.c_str(), 100 * best_util, util >= best_util - 0.01 ? "MET" : "MISSED");
    std::printf("p95 wait vs slurm-tree         %.3f   target <= 1.10   %s\n", p95, p95 <= 1.1 ? "MET" : "MISSED");
    std::printf("mean gap to exact optimum      %.2f%%  target <= 5%%     %s (%.1f%% of decisions within 5%%)\n",
                100 * gap, gap <= 0.05 ? "MET" : "MISSED", 100.0 * double(o.within5) / std::max(1L, o.solved));
    std::printf("(hop-bytes of the ideal placement of the same jobs / slurm-tree: %.3f: the floor of that ratio)\n",
                tr.hop_i / tr.hop_s);
    plot_targets(tr);
    std::printf("\nwrote %s/{runs,summary,optimum,latency}.csv and %s/placement.svg\n", args.out.c_str(),
                args.out.c_str());
  }

  // placement.svg: every policy's ratios against slurm-tree (tr) on the target configuration.
  void plot_targets(const Agg &tr) {
    std::vector<std::string> labels, series = {"hop-bytes (native order)", "hop-bytes (topoaware order)",
                                               "spine bytes (native order)", "p95 wait"};
    std::vector<std::vector<double>> vals(4);
    for (const PolicySpec &ps : specs) {
      const std::string name = make_policy(*small, ps, 1)->name();
      const Agg &a = target_agg.at(name);
      labels.push_back(name);
      vals[0].push_back(a.hop_s / tr.hop_s);
      vals[1].push_back(a.hop_t / tr.hop_s);
      vals[2].push_back(a.spine_s / std::max(1e-300, tr.spine_s));
      vals[3].push_back(tr.wait_p95 > 0 ? a.wait_p95 / tr.wait_p95 : 1);
    }
    svg_bars(args.out + "/placement.svg", "Ratios vs Slurm tree best-fit, " + cfg_name(target_cfg) + ", " +
                                              std::to_string(target_cfg.seeds) +
                                              " seeds (Slurm replicas provisional)",
             labels, series, vals);
  }
};

}  // namespace

int main(int argc, char **argv) {
  SimArgs args;
  if (!parse_args(argc, argv, args)) return 2;
  std::vector<Config> cfgs;
  if (!make_configs(args, cfgs)) return 2;
  std::string cmd = "mkdir -p '" + args.out + "'";
  if (std::system(cmd.c_str()) != 0) return 1;
  Bench b(args);
  if (!b.open_csvs()) return 1;
  b.specs = chosen_policies(args.policy_list);
  std::printf("# topoaware placement benchmark (%s mode). slurm-tree* and slurm-block* replicate Slurm's\n"
              "# node selection; slurm-tree chose as real slurmctld 22.05 in every decision checked.\n",
              args.mode.c_str());
  std::printf("# ratios are against slurm-tree (Slurm 22.05 best fit, node-index rank order) of the same trace.\n");
  std::printf("# native = the rank order the policy runs with (Slurm policies: node-index; topoaware: its own);\n"
              "# topo = every allocation re-ordered by topoaware's RankOrderer (placement gain alone).\n");
  for (const Config &cf : cfgs)
    if (!b.run_config(cf)) return 1;
  std::fclose(b.runs);
  std::fclose(b.summ);

  if (!args.optimum || args.mode == "custom") {
    std::printf("\nwrote %s/{runs,summary}.csv\n", args.out.c_str());
    return 0;
  }
  b.run_optimum();
  b.print_latency();
  b.print_targets();
  return 0;
}
