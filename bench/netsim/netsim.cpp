// SPDX-License-Identifier: GPL-2.0-or-later
// bench/netsim/netsim: the network judge (docs/design.md, "How placement is judged").
// Every job of a snapshot runs one training step's communication on a SimGrid flow-level model of
// the fabric of topology.json, first alone, then all jobs at once, under up to three routing models
// (adaptive, a synthetic D-mod-K, and as-routed through the forwarding tables recorded in
// topology.json); the output is each job's step communication time alone and shared. See
// bench/netsim/README.md.
//
// SimGrid 3.32 settings, and why (measured on the hand case of tests/test_netsim.sh):
//  - network/model:CM02: plain max-min fair sharing, no bandwidth or latency factors (the default
//    LV08 scales bandwidth by 0.97 and weighs flows by RTT: ~8% off the hand computation);
//  - network/crosstraffic:0: otherwise every flow also loads the reverse direction with ACKs;
//  - zero link latency: CM02 caps a flow at TCP-gamma / (2 * latency), which would dominate at
//    400 Gb/s; TCP-gamma is raised as well so that a latency added later does not bring the cap back;
//  - no parallel-task (ptask_L07) host model: its default solver overfills links.
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <set>
#include <tuple>
#include <unordered_map>

#include "model.hpp"
#include "topology_json.hpp"

namespace sg4 = simgrid::s4u;
using namespace topoaware;
using namespace topoaware::netsim;

namespace {

struct Transfer {
  sg4::Host *from, *to;
  uint64_t bytes;
};
// One job's step for one routing: transfers per phase, and the DP rings (indices into the DP
// phase's transfers, -1 inside a node) for the lock-step ring.
struct JobPlan {
  std::vector<std::vector<Transfer>> phases;
  std::vector<std::vector<int>> rings;
  // DP flow i of the model is transfers [first, first + count) of the DP phase (count > 1: the
  // flow is sprayed over several paths). Not kept when flows are merged per NIC pair.
  std::vector<std::pair<size_t, size_t>> dp_parts;
  uint32_t steps = 0;
};
using Plan = std::vector<JobPlan>;

struct Times {
  double alone = 0, shared = 0;
};

// Flows of one phase between the same two endpoints become one flow carrying their bytes.
void merge_same_pair(std::vector<Transfer> &phase) {
  std::map<std::pair<sg4::Host *, sg4::Host *>, size_t> at;
  std::vector<Transfer> out;
  for (const Transfer &t : phase) {
    auto [it, fresh] = at.insert({{t.from, t.to}, out.size()});
    if (fresh)
      out.push_back(t);
    else
      out[it->second].bytes += t.bytes;
  }
  phase.swap(out);
}

// A netzone that holds only the routes it is given, in a hash map: SimGrid's full zone keeps a
// table of (endpoints)^2 entries, which is too much beyond a few thousand endpoints. Subclasses
// SimGrid's kernel NetZoneImpl (installed header, SimGrid 3.32).
class MapZone : public simgrid::kernel::routing::NetZoneImpl {
 public:
  explicit MapZone(const std::string &name) : NetZoneImpl(name) {}
  void add_route(simgrid::kernel::routing::NetPoint *src, simgrid::kernel::routing::NetPoint *dst,
                 simgrid::kernel::routing::NetPoint *, simgrid::kernel::routing::NetPoint *,
                 const std::vector<sg4::LinkInRoute> &links, bool symmetrical) override {
    if (symmetrical) throw std::logic_error("netsim: MapZone routes are one-way");
    routes_[key(src, dst)] = get_link_list_impl(links, false);
  }
  void get_local_route(const simgrid::kernel::routing::NetPoint *src, const simgrid::kernel::routing::NetPoint *dst,
                       simgrid::kernel::routing::Route *into, double *latency) override {
    auto it = routes_.find(key(src, dst));
    if (it == routes_.end()) throw std::logic_error("netsim: no route " + src->get_name() + " -> " + dst->get_name());
    // Every link has zero latency (set in Platform), so *latency stays as it is.
    into->link_list_.insert(into->link_list_.end(), it->second.begin(), it->second.end());
  }

 private:
  static uint64_t key(const simgrid::kernel::routing::NetPoint *a, const simgrid::kernel::routing::NetPoint *b) {
    return uint64_t(a->id()) << 32 | uint64_t(b->id());
  }
  std::unordered_map<uint64_t, std::vector<simgrid::kernel::resource::StandardLinkImpl *>> routes_;
};

// Builds the chosen routings' links and endpoints in one root zone (a MapZone). An endpoint is one
// SimGrid host per (routing, host, NIC port): the routings share nothing. Routes are added only for
// the endpoint pairs that talk.
class Platform {
 public:
  // merge: flows of one job and phase between the same two NIC ports become one flow (max-min
  // fairness per NIC pair instead of per flow; with tp ranks per NIC that is tp times fewer flows).
  // Also the bytes every link carries per direction in one step of all jobs ([routing][link]: up,
  // down), for --link-loads.
  Platform(const Topology &topo, const Snapshot &snap, const std::vector<Routing> &routings, bool merge)
      : zone_((new MapZone("netsim"))->get_iface()) {
    for (size_t ri = 0; ri < routings.size(); ++ri) {
      const int r = int(routings[ri]);
      FabricModel model(topo, Routing(r));
      link_names_.emplace_back();
      loads_.emplace_back(model.links().size());
      for (const NetLink &l : model.links()) link_names_.back().push_back(l.name);
      std::vector<sg4::Link *> links;
      for (const NetLink &l : model.links())
        links.push_back(zone_->create_split_duplex_link(l.name, l.bytes_per_s)->set_latency(0)->seal());
      Plan plan(snap.jobs.size());
      std::vector<std::vector<Hop>> paths;
      for (size_t jb = 0; jb < snap.jobs.size(); ++jb) {
        const JobTraffic t = job_traffic(topo, snap.jobs[jb]);
        plan[jb].phases.resize(kPhases);
        plan[jb].rings = t.rings;
        plan[jb].steps = t.ring_steps;
        for (int ph = 0; ph < kPhases; ++ph)
          for (const Flow &f : t.phase[ph]) {
            // The paths of a NIC pair are always the same: part p of every flow between them runs
            // between their p-th endpoints, so one route per endpoint pair holds.
            try {
              model.route(f, paths);
            } catch (const std::exception &e) {
              throw std::runtime_error(std::string(e.what()) + " (job '" + snap.jobs[jb].name + "', " +
                                       phase_name(Phase(ph)) + " phase, " + routing_name(Routing(r)) + ")");
            }
            std::vector<Transfer> &out = plan[jb].phases[size_t(ph)];
            if (ph == int(Phase::DP)) plan[jb].dp_parts.push_back({out.size(), paths.size()});
            for (size_t p = 0; p < paths.size(); ++p) {
              sg4::Host *a = endpoint(topo, r, f.src_host, f.src_port, int(p));
              sg4::Host *b = endpoint(topo, r, f.dst_host, f.dst_port, int(p));
              if (routes_.insert({a, b}).second) {
                std::vector<sg4::LinkInRoute> lr;
                for (const Hop &h : paths[p])
                  lr.emplace_back(links[size_t(h.link)],
                                  h.up ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
                zone_->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, lr, false);
              }
              out.push_back({a, b, uint64_t(std::llround(f.bytes / double(paths.size())))});
              for (const Hop &h : paths[p]) loads_[ri][size_t(h.link)][h.up ? 0 : 1] += f.bytes / double(paths.size());
            }
          }
        if (merge) {
          for (auto &phase : plan[jb].phases) merge_same_pair(phase);
          plan[jb].dp_parts.clear();
        }
      }
      plans_.push_back(std::move(plan));
    }
    driver_ = zone_->create_host("driver", 1e9)->seal();
    zone_->seal();
  }
  sg4::Host *driver() const { return driver_; }
  // Indexed like the routings given to the constructor.
  const Plan &plan(size_t ri) const { return plans_[ri]; }
  const std::vector<std::string> &link_names(size_t ri) const { return link_names_[ri]; }
  const std::vector<std::array<double, 2>> &loads(size_t ri) const { return loads_[ri]; }
  size_t endpoints() const { return endpoints_.size(); }
  size_t routes() const { return routes_.size(); }

 private:
  sg4::Host *endpoint(const Topology &topo, int r, int host, int port, int part) {
    auto key = std::make_tuple(r, host, port, part);
    auto it = endpoints_.find(key);
    if (it != endpoints_.end()) return it->second;
    static const char *const prefix[kRoutings] = {"a:", "d:", "r:"};
    std::string name = prefix[r] + topo.hosts[size_t(host)].name + ":" + std::to_string(port);
    if (part) name += "/" + std::to_string(part);
    sg4::Host *h = zone_->create_host(name, 1e9)->seal();
    endpoints_[key] = h;
    return h;
  }
  sg4::NetZone *zone_;
  sg4::Host *driver_ = nullptr;
  std::map<std::tuple<int, int, int, int>, sg4::Host *> endpoints_;
  std::set<std::pair<sg4::Host *, sg4::Host *>> routes_;
  std::vector<Plan> plans_;
  std::vector<std::vector<std::string>> link_names_;
  std::vector<std::vector<std::array<double, 2>>> loads_;
};

// Lock-step ring all-reduce: 2(d-1) steps; in step k every member sends one chunk (S/d) to its
// successor and starts step k+1 once its own send is done and its predecessor's chunk k arrived.
// Inside a node (NVLink) a chunk arrives at once.
void run_rings(const JobPlan &jp, const sg4::Host *where) {
  std::vector<sg4::ActorPtr> members;
  const std::vector<Transfer> &dp = jp.phases[size_t(Phase::DP)];
  for (const std::vector<int> &ring : jp.rings) {
    auto got = std::make_shared<std::vector<sg4::SemaphorePtr>>();
    for (size_t i = 0; i < ring.size(); ++i) got->push_back(sg4::Semaphore::create(0));
    for (size_t i = 0; i < ring.size(); ++i)
      members.push_back(sg4::Actor::create("m", const_cast<sg4::Host *>(where), [&dp, &ring, &jp, got, i]() {
        const int e = ring[i];
        const size_t next = (i + 1) % ring.size();
        for (uint32_t k = 0; k < jp.steps; ++k) {
          if (e >= 0) {
            const auto [first, count] = jp.dp_parts[size_t(e)];
            std::vector<sg4::CommPtr> parts;
            for (size_t p = first; p < first + count; ++p)
              parts.push_back(sg4::Comm::sendto_async(dp[p].from, dp[p].to, dp[p].bytes / jp.steps));
            sg4::Comm::wait_all(parts);
          }
          (*got)[next]->release();
          (*got)[i]->acquire();
        }
      }));
  }
  for (auto &m : members) m->join();
}

// One job's step: its phases one after the other, the flows of a phase all at once (or the DP
// phase as lock-step rings).
void run_step(const JobPlan &jp, bool lockstep, const sg4::Host *where) {
  for (int ph = 0; ph < kPhases; ++ph) {
    if (lockstep && ph == int(Phase::DP) && jp.steps > 0) {
      run_rings(jp, where);
      continue;
    }
    std::vector<sg4::CommPtr> comms;
    comms.reserve(jp.phases[size_t(ph)].size());
    for (const Transfer &t : jp.phases[size_t(ph)])
      if (t.bytes > 0) comms.push_back(sg4::Comm::sendto_async(t.from, t.to, t.bytes));
    sg4::Comm::wait_all(comms);
  }
}

// Alone: every job by itself, one after the other (the fabric is idle in between, links have no
// latency, so each measurement is independent). Shared, legacy traffic (phase empty): all jobs
// started together. Shared, today's traffic: a job's step lasts T = alone / comm_fraction; it
// starts its communication at phase * T, computes for T - alone, and communicates again: its
// shared time is the mean of its two communication windows (the second sees the neighbours that
// wrapped around, as in a steady state of repeating steps).
void drive(const Platform &pf, size_t routings, size_t jobs, bool lockstep, const std::vector<double> &phase,
           double comm_fraction, std::vector<std::vector<Times>> &out) {
  for (size_t r = 0; r < routings; ++r) {
    const Plan &plan = pf.plan(r);
    for (size_t j = 0; j < jobs; ++j) {
      const double t0 = sg4::Engine::get_clock();
      run_step(plan[j], lockstep, pf.driver());
      out[size_t(r)][j].alone = sg4::Engine::get_clock() - t0;
    }
    const double t0 = sg4::Engine::get_clock();
    std::vector<sg4::ActorPtr> actors;
    for (size_t j = 0; j < jobs; ++j)
      actors.push_back(sg4::Actor::create(
          "job" + std::to_string(j), pf.driver(), [&plan, &out, &pf, &phase, comm_fraction, lockstep, r, j, t0]() {
            if (phase.empty()) {
              run_step(plan[j], lockstep, pf.driver());
              out[size_t(r)][j].shared = sg4::Engine::get_clock() - t0;
              return;
            }
            const double alone = out[size_t(r)][j].alone;
            const double step = alone / comm_fraction;
            sg4::this_actor::sleep_for(phase[j] * step);
            double t = sg4::Engine::get_clock();
            run_step(plan[j], lockstep, pf.driver());
            const double first = sg4::Engine::get_clock() - t;
            sg4::this_actor::sleep_for(std::max(0.0, step - alone));
            t = sg4::Engine::get_clock();
            run_step(plan[j], lockstep, pf.driver());
            out[size_t(r)][j].shared = (first + sg4::Engine::get_clock() - t) / 2;
          }));
    for (auto &a : actors) a->join();
  }
}

std::string read_text(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The command line.
struct NetsimArgs {
  std::string topo_path, snap_path, format = "text";
  std::vector<std::string> routing_names;
  bool link_loads = false;
  std::string fairness = "flow", ring = "flows", traffic = "today";
  int64_t seed = -1;
};

void add_options(CLI::App &app, NetsimArgs &a) {
  app.add_option("--topology", a.topo_path, "topology.json")->required()->check(CLI::ExistingFile);
  app.add_option("--snapshot", a.snap_path, "snapshot JSON (bench/netsim/README.md)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--format", a.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  app.add_option("--routing", a.routing_names,
                 "routings to run, comma-separated: adaptive, dmodk, as-routed (default: every one the topology "
                 "supports; as-routed when topology.json has routes)")
      ->delimiter(',')
      ->check(CLI::IsMember({"adaptive", "dmodk", "as-routed"}));
  app.add_flag("--link-loads", a.link_loads,
               "json: also the bytes each link carries per direction in one step of all jobs, per routing");
  app.add_option("--fairness", a.fairness,
                 "flow: max-min share per flow (default); pair: flows of a job between the same two NIC ports "
                 "merged (share per NIC pair; much faster with tp ranks per NIC)")
      ->check(CLI::IsMember({"flow", "pair"}));
  app.add_option("--ring", a.ring,
                 "flows: a DP ring is one flow of 2(d-1)/d S per edge, all at once (default); steps: 2(d-1) "
                 "lock-step chunks of S/d (slower to simulate; a ring's fast edges wait for its slowest)")
      ->check(CLI::IsMember({"flows", "steps"}));
  app.add_option("--traffic", a.traffic,
                 "today: model sizes that fit the GPUs, a MoE share with expert all-to-all, each job's "
                 "communication at a random phase of its step (default); legacy: the snapshot's bytes, all jobs "
                 "in phase")
      ->check(CLI::IsMember({"today", "legacy"}));
  app.add_option("--seed", a.seed,
                 "today's traffic: the seed of its draws (default: the snapshot's \"seed\" field, else 1)");
}

// Options that parse alone but cannot run together; false after the message (the command exits 2).
bool options_fit(const NetsimArgs &a) {
  if (a.ring == "steps" && a.fairness == "pair") {
    std::fprintf(stderr, "netsim: --ring steps keeps every ring's flows apart: use it with --fairness flow\n");
    return false;
  }
  if (a.link_loads && a.format != "json") {
    std::fprintf(stderr, "netsim: --link-loads is part of the JSON output: use it with --format json\n");
    return false;
  }
  return true;
}

// The routings to run, each once in the order named; by default every one the topology supports
// (as-routed only with recorded forwarding tables). Throws when as-routed is named without them.
std::vector<Routing> chosen_routings(const NetsimArgs &a, const Topology &topo) {
  std::vector<Routing> routings;
  if (a.routing_names.empty()) {
    routings = {Routing::Adaptive, Routing::DModK};
    if (!topo.routes.empty()) routings.push_back(Routing::AsRouted);
    return routings;
  }
  for (const std::string &n : a.routing_names) {
    const Routing r = routing_from_name(n);
    if (std::find(routings.begin(), routings.end(), r) == routings.end()) routings.push_back(r);
  }
  if (std::find(routings.begin(), routings.end(), Routing::AsRouted) != routings.end() && topo.routes.empty())
    throw std::runtime_error(a.topo_path +
                             " has no routes: as-routed needs the forwarding tables (topoaware discover "
                             "--routes, or --ibnetdiscover with --lfts)");
  return routings;
}

double slowdown(double alone, double shared) { return alone > 0 ? shared / alone : 1.0; }

// The simulated times ([routing][job]) as the outputs print them, with the node-weighted totals
// (sum over jobs of nodes * time: a large job's slowdown weighs more).
struct Report {
  const NetsimArgs &args;
  const Topology &topo;
  const Snapshot &snap;
  const std::vector<TodayJob> &today;
  const std::vector<Routing> &routings;
  const Platform &pf;
  const std::vector<std::vector<Times>> &times;
  double wall;
  std::vector<std::array<double, 2>> wsum;  // [routing]: alone, shared
  size_t nodes = 0;

  Report(const NetsimArgs &a, const Topology &t, const Snapshot &s, const std::vector<TodayJob> &td,
         const std::vector<Routing> &rs, const Platform &p, const std::vector<std::vector<Times>> &tm, double w)
      : args(a), topo(t), snap(s), today(td), routings(rs), pf(p), times(tm), wall(w), wsum(rs.size(), {0, 0}) {
    for (size_t j = 0; j < snap.jobs.size(); ++j) {
      nodes += snap.jobs[j].nodes.size();
      for (size_t r = 0; r < routings.size(); ++r) {
        wsum[r][0] += double(snap.jobs[j].nodes.size()) * times[r][j].alone;
        wsum[r][1] += double(snap.jobs[j].nodes.size()) * times[r][j].shared;
      }
    }
  }

  void print_json() const {
    const size_t R = routings.size();
    nlohmann::ordered_json out;
    out["schema"] = "topoaware-netsim-result/1";
    out["topology"] = topo.hash;
    if (!topo.routes.empty()) out["routes"] = topo.routes.hash;
    for (size_t r = 0; r < R; ++r) out["routings"].push_back(routing_name(routings[r]));
    for (size_t j = 0; j < snap.jobs.size(); ++j) out["jobs"].push_back(job_json(j));
    for (size_t r = 0; r < R; ++r)
      out["total"][routing_name(routings[r])] = {{"node_s_alone", wsum[r][0]},
                                                 {"node_s_shared", wsum[r][1]},
                                                 {"slowdown", slowdown(wsum[r][0], wsum[r][1])}};
    out["total"]["nodes"] = nodes;
    if (args.link_loads)
      for (size_t r = 0; r < R; ++r) {
        nlohmann::ordered_json &lj = out["link_loads"][routing_name(routings[r])];
        lj = nlohmann::ordered_json::array();
        for (size_t l = 0; l < pf.loads(r).size(); ++l)
          if (pf.loads(r)[l][0] > 0 || pf.loads(r)[l][1] > 0)
            lj.push_back(
                {{"link", pf.link_names(r)[l]}, {"up_bytes", pf.loads(r)[l][0]}, {"down_bytes", pf.loads(r)[l][1]}});
      }
    out["sim"] = {{"endpoints", pf.endpoints()}, {"routes", pf.routes()}, {"fairness", args.fairness},
                  {"ring", args.ring},           {"traffic", args.traffic}, {"wall_s", wall}};
    std::cout << out.dump(2) << "\n";
  }

  // Job j in the JSON output: its size, today's draws when the traffic is today's, its times per routing.
  nlohmann::ordered_json job_json(size_t j) const {
    nlohmann::ordered_json jj;
    jj["name"] = snap.jobs[j].name;
    jj["nodes"] = snap.jobs[j].nodes.size();
    if (!today.empty()) {
      jj["model"] = today[j].model ? today[j].model->name : "snapshot";
      jj["moe"] = today[j].moe;
      jj["ep"] = snap.jobs[j].layout.ep;
      jj["phase"] = today[j].phase;
    }
    for (size_t r = 0; r < routings.size(); ++r) {
      const Times &t = times[r][j];
      jj[routing_name(routings[r])] = {
          {"alone_s", t.alone}, {"shared_s", t.shared}, {"slowdown", slowdown(t.alone, t.shared)}};
    }
    return jj;
  }

  // One group of columns (alone, shared, slowdown) per routing, under the routing's label.
  void print_text() const {
    const size_t R = routings.size();
    std::printf("%-16s %6s", "", "");
    for (size_t r = 0; r < R; ++r) std::printf("  %-34s", routing_label(routings[r]));
    std::printf("\n%-16s %6s", "job", "nodes");
    for (size_t r = 0; r < R; ++r) std::printf("  %12s %12s %8s", "alone", "shared", "slow");
    std::printf("\n");
    for (size_t j = 0; j < snap.jobs.size(); ++j) {
      std::printf("%-16s %6zu", snap.jobs[j].name.c_str(), snap.jobs[j].nodes.size());
      for (size_t r = 0; r < R; ++r) {
        const Times &t = times[r][j];
        std::printf("  %10.3fms %10.3fms %8.3f", t.alone * 1e3, t.shared * 1e3, slowdown(t.alone, t.shared));
      }
      std::printf("\n");
    }
    std::printf("%-16s %6zu", "total", nodes);
    for (size_t r = 0; r < R; ++r)
      std::printf("  %10.3f   %10.3f   %8.3f", wsum[r][0], wsum[r][1], slowdown(wsum[r][0], wsum[r][1]));
    std::printf("   (node-seconds)\n");
    std::printf("# %zu endpoints, %zu routes, %.2f s wall\n", pf.endpoints(), pf.routes(), wall);
  }
};

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{
      "netsim: each job's step communication time, alone and with its neighbours, on a SimGrid "
      "flow-level model of the fabric (adaptive routing, a synthetic static D-mod-K, and as-routed: through "
      "the forwarding tables recorded in topology.json)"};
  NetsimArgs args;
  add_options(app, args);
  CLI11_PARSE(app, argc, argv);
  if (!options_fit(args)) return 2;
  const auto wall0 = std::chrono::steady_clock::now();
  try {
    Topology topo = load_topology_file(args.topo_path);
    TopoIndex index(topo);
    Snapshot snap = snapshot_from_json(read_text(args.snap_path), index);
    std::vector<double> phase;
    std::vector<TodayJob> today;
    const TodayParams today_params;
    if (args.traffic == "today") {
      const uint64_t s = uint64_t(args.seed >= 0 ? args.seed : snap.seed >= 0 ? snap.seed : 1);
      for (SnapshotJob &j : snap.jobs) {
        today.push_back(apply_today(j, s, today_params));
        phase.push_back(today.back().phase);
      }
    }
    const std::vector<Routing> routings = chosen_routings(args, topo);
    const size_t R = routings.size();

    int sg_argc = 1;
    char name[] = "netsim";
    char *sg_argv[] = {name, nullptr};
    xbt_log_control_set("root.thresh:warning");
    sg4::Engine engine(&sg_argc, sg_argv);
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
    sg4::Engine::set_config("network/TCP-gamma:1e15");
    Platform pf(topo, snap, routings, args.fairness == "pair");
    std::vector<std::vector<Times>> times(R, std::vector<Times>(snap.jobs.size()));
    sg4::Actor::create("driver", pf.driver(), [&]() { drive(pf, R, snap.jobs.size(), args.ring == "steps", phase, today_params.comm_fraction, times); });
    engine.run();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const Report report(args, topo, snap, today, routings, pf, times, wall);
    if (args.format == "json")
      report.print_json();
    else
      report.print_text();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "netsim: %s\n", e.what());
    return 1;
  }
  return 0;
}
