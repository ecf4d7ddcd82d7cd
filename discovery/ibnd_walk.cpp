// SPDX-License-Identifier: GPL-2.0-or-later
// Live discovery through libibnetdisc (ibnd_discover_fabric: the same SMP queries as
// ibnetdiscover), and libibnetdisc's own cache file (ibnd_cache_fabric / ibnd_load_fabric).
//
// What libibnetdisc does and does not tell us (rdma-core 44, checked against its source and
// under ibsim):
// - ibnd_discover_fabric walks by directed route from the local port: NodeInfo of each node
//   found, then NodeDescription, and for a switch SwitchInfo and PortInfo of port 0 and of every
//   physical port; it follows every switch port whose physical state is LinkUp. A CA's other
//   ports are not walked (directed routes cannot pass through a CA).
// - A MAD that fails (timeout, bad status) is printed on stderr and otherwise dropped: there is
//   no error return, no callback, and the walk goes on. The fabric that comes back simply lacks
//   what the lost answer would have added. Section "Faults" below reconstructs what is missing
//   from the traces that the walk does leave.
// - There is no progress callback either: the walk runs to its end inside one call.
#include "ibnd_walk.hpp"

#include "file_read.hpp"
#include "safe_folder.hpp"

#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// rdma-core 50+ exports this helper, which folds PortInfo LinkSpeedExtActive2 (XDR) into the
// extended speed (XDR = 32). Older libraries (Debian 12 ships 44) have no XDR field at all. A weak
// reference lets one binary use it where the running library has it.
extern "C" int ibnd_get_agg_linkspeedext(void *cap_info, void *info) __attribute__((weak));

namespace topoaware {

namespace {

// PortInfo:CapabilityMask bit 14, IsExtendedSpeedsSupported (IBTA vol. 1, 14.2.5.6). Only when it
// is set does LinkSpeedExtActive mean anything; ibnetdiscover tests the same bit
// (IB_PORT_CAP_HAS_EXT_SPEEDS in rdma-core's iba_types.h, not an installed header).
constexpr uint32_t kCapHasExtSpeeds = 1u << 14;
// Mellanox ExtendedPortInfo (attribute 0xff90) LinkSpeedActive bit 0: FDR10. libibnetdisc only
// asks for it with IBND_CONFIG_MLX_EPI, on Mellanox device ids, for ports running at QDR.
constexpr uint32_t kMlnxSpeedFdr10 = 1u;
// PortInfo:PortPhysicalState 5 = LinkUp (IB_PORT_PHYS_STATE_LINKUP in iba_types.h). It is the
// state libibnetdisc follows; the logical state (Init/Armed/Active) depends on whether a subnet
// manager has run, which does not change the cabling, so it is not used here.
constexpr int kPhysLinkUp = 5;
constexpr auto kProgressPeriod = std::chrono::milliseconds(200);
// Pause before a retry walk: losses on real fabrics come in bursts (an SM sweep, a switch
// rebooting its management agent), so walking again at once tends to lose the same answers.
constexpr auto kRetryPause = std::chrono::milliseconds(250);

#define TA_SIM_HINT                                                                                  \
  "under ibsim: run with LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so while ibsim is " \
  "running (same IBSIM_SOCKNAME)"
const char *kSimHint = TA_SIM_HINT;
const char *kUmadHint =
    "is the ib_umad kernel module loaded (modprobe ib_umad) and /dev/infiniband/umad* accessible "
    "(usually root)? " TA_SIM_HINT;

struct FabricDeleter {
  void operator()(ibnd_fabric_t *f) const { ibnd_destroy_fabric(f); }
};
using FabricPtr = std::unique_ptr<ibnd_fabric_t, FabricDeleter>;

std::string target_name(const WalkTarget &t) {
  return (t.ca.empty() ? std::string("<first CA>") : t.ca) + ":" +
         (t.port > 0 ? std::to_string(t.port) : std::string("<first active port>"));
}

// The node description as ibnetdiscover prints it (clean_nodedesc: at most 63 characters,
// unprintable bytes become spaces), without the padding that fills the 64-byte attribute.
std::string clean_desc(const char *raw) {
  std::string d;
  for (int i = 0; i < 63 && raw[i]; ++i) {
    unsigned char c = static_cast<unsigned char>(raw[i]);
    d.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : ' ');
  }
  while (!d.empty() && (d.back() == ' ' || d.back() == '\t')) d.pop_back();
  return d;
}

int width_lanes(uint32_t active) {
  switch (active) {  // PortInfo:LinkWidthActive is one bit per width
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
  }
  return 0;
}

// A PortInfo that was never received is all zeros; every real answer has a physical state
// (1 = Sleep ... 7 = PhyTest), so a zero state is how a failed PortInfo query shows.
bool has_port_info(const ibnd_port_t *p) {
  return mad_get_field(const_cast<uint8_t *>(p->info), 0, IB_PORT_PHYS_STATE_F) != 0;
}

// Mirrors ibnetdiscover's out_switch_port/out_ca_port: a switch's extended-speed capability is
// announced in the PortInfo of its port 0, a CA's in the port's own PortInfo.
LinkSpeed port_speed(const ibnd_node_t *node, const ibnd_port_t *port) {
  uint8_t *info = const_cast<uint8_t *>(port->info);
  uint8_t *cap_info = nullptr;
  if (node->type == IB_NODE_SWITCH) {
    if (!node->ports[0]) return LinkSpeed::Unknown;  // no port 0: ibnetdiscover prints "???" too
    cap_info = node->ports[0]->info;
  } else {
    cap_info = info;
  }
  uint32_t ispeed = mad_get_field(info, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
  uint32_t espeed = 0;
  if (ibnd_get_agg_linkspeedext) {
    espeed = static_cast<uint32_t>(ibnd_get_agg_linkspeedext(cap_info, info));
  } else if (mad_get_field(cap_info, 0, IB_PORT_CAPMASK_F) & kCapHasExtSpeeds) {
    espeed = mad_get_field(info, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
  }
  switch (espeed) {  // LinkSpeedExtActive (and ...Active2 << 5 as folded by rdma-core)
    case 0: break;
    case 1: return LinkSpeed::FDR;
    case 2: return LinkSpeed::EDR;
    case 4: return LinkSpeed::HDR;
    case 8: return LinkSpeed::NDR;
    case 32: return LinkSpeed::XDR;
    default: return LinkSpeed::Unknown;
  }
  // FDR10 runs at the QDR signalling of LinkSpeedActive; only the Mellanox extended port info
  // tells them apart (ext_info stays zero unless IBND_CONFIG_MLX_EPI queried it).
  if (ispeed == 4 && (mad_get_field(const_cast<uint8_t *>(port->ext_info), 0,
                                    IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) & kMlnxSpeedFdr10))
    return LinkSpeed::FDR10;
  switch (ispeed) {
    case 1: return LinkSpeed::SDR;
    case 2: return LinkSpeed::DDR;
    case 4: return LinkSpeed::QDR;
  }
  return LinkSpeed::Unknown;
}

NodeType node_type(int t) {
  switch (t) {
    case IB_NODE_SWITCH: return NodeType::Switch;
    case IB_NODE_ROUTER: return NodeType::Router;
    default: return NodeType::Ca;
  }
}

// ---------------------------------------------------------------------------------------------
// Faults.
//
// What one walk leaves behind when answers are lost, per port of each node found:
//   Linked       remoteport set and our PortInfo known: a complete link.
//   LinkedNoInfo remoteport set (the peer's NodeInfo came back through it) but our PortInfo
//                query failed: the link is real, its width and speed are not known.
//   Down         PortInfo known, physical state not LinkUp: nothing to find there.
//   Unreached    PortInfo says LinkUp, but no node was linked behind it: the NodeInfo through
//                this port (or something on its way) was lost. Whatever hangs below is missing.
//   NoInfo       switch port whose PortInfo never came back: connected or not is unknown.
// and per node: a switch whose port-0 PortInfo was lost was never asked about its other ports
// (libibnetdisc only queries them when port 0 answers), and an empty NodeDescription means the
// description query was lost (real nodes always carry one; firmware fills in a default).
//
// Retry: libibnetdisc cannot re-ask a single node, so a retry is a whole new walk. The results of
// all walks of one target are merged: for every (node, port) the most informative state over all
// walks wins (Linked > LinkedNoInfo > Down > Unreached > NoInfo), which fills the holes of one walk
// with the answers of another; since losses are random, a few walks normally cover everything.
// What is still missing after opts.retries extra walks is reported in Fabric::problems.
// ---------------------------------------------------------------------------------------------

enum class PortState : int { NoInfo = 0, Unreached = 1, Down = 2, LinkedNoInfo = 3, Linked = 4 };

struct NodeView {
  FabricNode node;                     // ports: linked ports only (Linked / LinkedNoInfo)
  std::map<int, PortState> states;     // every physical port seen, switches: 1..numports
  bool switch_port0 = false;           // switch: PortInfo of port 0 came back
};

struct WalkView {
  std::map<uint64_t, NodeView> nodes;  // by GUID, so merging and output are deterministic
  int switches = 0, cas = 0;
};

WalkView view_of(ibnd_fabric_t *f) {
  WalkView v;
  for (ibnd_node_t *n = f->nodes; n; n = n->next) {
    NodeView nv;
    nv.node.type = node_type(n->type);
    nv.node.guid = n->guid;
    nv.node.desc = clean_desc(n->nodedesc);
    nv.node.nports = n->numports;
    bool sw = n->type == IB_NODE_SWITCH;
    nv.switch_port0 = sw && n->ports && n->ports[0];
    (sw ? v.switches : v.cas)++;
    for (int p = 1; n->ports && p <= n->numports; ++p) {
      ibnd_port_t *port = n->ports[p];
      if (!port) {
        if (sw) nv.states[p] = PortState::NoInfo;
        continue;
      }
      bool info = has_port_info(port);
      if (port->remoteport && port->remoteport->node) {
        Port out;
        out.num = p;
        out.port_guid = port->guid;
        out.remote_guid = port->remoteport->node->guid;
        out.remote_port = port->remoteport->portnum;
        if (info) {
          out.width = width_lanes(mad_get_field(port->info, 0, IB_PORT_LINK_WIDTH_ACTIVE_F));
          out.speed = port_speed(n, port);
        }
        nv.node.ports.push_back(out);
        nv.states[p] = info ? PortState::Linked : PortState::LinkedNoInfo;
      } else if (!info) {
        if (sw) nv.states[p] = PortState::NoInfo;
      } else if (static_cast<int>(mad_get_field(port->info, 0, IB_PORT_PHYS_STATE_F)) == kPhysLinkUp && sw) {
        // A CA's LinkUp port without a peer is a port the walk did not enter (another subnet),
        // not a loss; only switch ports are followed by the walk.
        nv.states[p] = PortState::Unreached;
      } else {
        nv.states[p] = PortState::Down;
      }
    }
    v.nodes.emplace(nv.node.guid, std::move(nv));
  }
  return v;
}

void merge_view(WalkView &into, const WalkView &from) {
  for (const auto &kv : from.nodes) {
    auto it = into.nodes.find(kv.first);
    if (it == into.nodes.end()) {
      into.nodes.emplace(kv.first, kv.second);
      continue;
    }
    NodeView &have = it->second;
    const NodeView &add = kv.second;
    if (have.node.desc.empty()) have.node.desc = add.node.desc;
    have.switch_port0 = have.switch_port0 || add.switch_port0;
    have.node.nports = std::max(have.node.nports, add.node.nports);
    for (const auto &st : add.states) {
      auto cur = have.states.find(st.first);
      if (cur != have.states.end() && static_cast<int>(cur->second) >= static_cast<int>(st.second)) continue;
      have.states[st.first] = st.second;
      auto &ports = have.node.ports;
      ports.erase(std::remove_if(ports.begin(), ports.end(), [&](const Port &q) { return q.num == st.first; }),
                  ports.end());
      if (st.second == PortState::Linked || st.second == PortState::LinkedNoInfo)
        for (const auto &q : add.node.ports)
          if (q.num == st.first) ports.push_back(q);
    }
  }
  into.switches = into.cas = 0;
  for (const auto &kv : into.nodes) (kv.second.node.type == NodeType::Switch ? into.switches : into.cas)++;
}

std::string node_label(const NodeView &nv) {
  return guid_str(nv.node.guid) + (nv.node.desc.empty() ? std::string() : " (\"" + nv.node.desc + "\")");
}

std::vector<WalkProblem> problems_of(const WalkView &v, int max_hops) {
  std::vector<WalkProblem> out;
  std::string hop_note =
      max_hops > 0 ? " (the walk was limited to " + std::to_string(max_hops) + " hops)" : std::string();
  for (const auto &kv : v.nodes) {
    const NodeView &nv = kv.second;
    if (nv.node.desc.empty())
      out.push_back({nv.node.guid, 0, "node " + guid_str(nv.node.guid) + ": NodeDescription query failed"});
    if (nv.node.type == NodeType::Switch && !nv.switch_port0) {
      out.push_back({nv.node.guid, 0,
                     "switch " + node_label(nv) +
                         ": PortInfo of port 0 could not be read, so its ports were not queried; links "
                         "beyond it may be missing"});
      continue;  // its per-port states all follow from this one loss
    }
    for (const auto &st : nv.states) {
      std::string where = node_label(nv) + " port " + std::to_string(st.first);
      switch (st.second) {
        case PortState::Unreached:
          out.push_back({nv.node.guid, st.first,
                         where + " is up (LinkUp) but the node behind it did not answer" + hop_note});
          break;
        case PortState::LinkedNoInfo:
          out.push_back({nv.node.guid, st.first, where + ": PortInfo query failed; link width and speed unknown"});
          break;
        case PortState::NoInfo:
          out.push_back(
              {nv.node.guid, st.first, where + ": PortInfo query failed; whether it is connected is unknown"});
          break;
        default:
          break;
      }
    }
  }
  return out;
}

Fabric fabric_of(const WalkView &v, int max_hops, const std::string &source) {
  Fabric f;
  for (const auto &kv : v.nodes) {
    FabricNode n = kv.second.node;
    std::sort(n.ports.begin(), n.ports.end(), [](const Port &a, const Port &b) { return a.num < b.num; });
    f.add_node(std::move(n));
  }
  f.problems = problems_of(v, max_hops);
  f.sources.push_back(source);
  return f;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Calls opts.progress about every 200 ms from its own thread while a walk runs. Counts are not
// known before ibnd_discover_fabric returns, so the running calls pass -1.
class ProgressTicker {
 public:
  ProgressTicker(const WalkOptions &opts, std::chrono::steady_clock::time_point start)
      : opts_(opts), start_(start) {
    if (opts_.progress) thread_ = std::thread([this] { run(); });
  }
  ~ProgressTicker() { stop(); }
  void stop() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lk(mu_);
    while (!cv_.wait_for(lk, kProgressPeriod, [this] { return stop_; })) {
      lk.unlock();
      try {
        opts_.progress(seconds_since(start_), -1, -1, false);
      } catch (...) {
        // A failing display must not end the walk (an exception here would terminate).
      }
      lk.lock();
    }
  }
  const WalkOptions &opts_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Why a walk could not start, in words an admin can act on. libibnetdisc only says "can't open
// MAD port" on stderr, so ask libibumad directly what is there.
std::string why_no_walk(const WalkTarget &t) {
  std::string who = "cannot walk the fabric from " + target_name(t) + ": ";
  if (umad_init() < 0) return who + "libibumad cannot be initialised; " + kUmadHint;
  // ib_umad publishes its ABI version here; umad2sim answers for it under ibsim (it intercepts
  // the file accesses of libibumad, including this one).
  if (::access("/sys/class/infiniband_mad/abi_version", R_OK) != 0 && !std::getenv("LD_PRELOAD"))
    return who + "the ib_umad kernel module is not loaded (no /sys/class/infiniband_mad/abi_version): " +
           "modprobe ib_umad; " + kSimHint;
  char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
  int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
  if (n <= 0) return who + "no InfiniBand CA found; " + kUmadHint;
  std::string ca = t.ca;
  if (!ca.empty()) {
    bool found = false;
    std::string list;
    for (int i = 0; i < n; ++i) {
      found = found || ca == names[i];
      list += (i ? ", " : "") + std::string(names[i]);
    }
    if (!found) return who + "no CA named " + ca + " (found: " + list + ")";
  } else {
    ca = names[0];
  }
  umad_port_t port;
  std::memset(&port, 0, sizeof port);
  if (umad_get_port(ca.c_str(), t.port, &port) < 0)
    return who + "CA " + ca + " has no port " + (t.port > 0 ? std::to_string(t.port) : "that is active") +
           "; " + kUmadHint;
  std::string state = port.phys_state == static_cast<unsigned>(kPhysLinkUp)
                          ? std::string()
                          : "; port " + std::to_string(port.portnum) + " of " + ca +
                                " is not physically up (phys state " + std::to_string(port.phys_state) + ")";
  umad_release_port(&port);
  return who + "libibnetdisc could not open or use the MAD port (see its messages above)" + state + "; " + kUmadHint;
}

bool file_exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The largest cache read back to be written out (a fabric of 100,000 nodes is far smaller).
constexpr size_t kMaxCacheBytes = size_t(1) << 30;

// Writes the cache through write_file_safely (a temporary file of a random name, renamed over the
// target; a link, FIFO or folder at the target refused): libibnetdisc writes it by name into a
// folder of our own first, where no other user can plant anything, so a failed write never
// destroys the previous cache. A partial walk never replaces an existing cache (a good cache is
// worth more than a newer hole-ridden one): it goes to "<file>.partial" instead, or to <file> if
// there is none yet. Returns the name written.
std::string save_cache(ibnd_fabric_t *f, const std::string &file, bool partial) {
  std::string dest = partial && file_exists(file) ? file + ".partial" : file;
  check_replaceable(dest);  // before the walk's cache is made: the message names dest
  const std::string failed = "cannot write libibnetdisc cache " + dest + ": ";
  std::string text;
  {
    PrivateFolder folder;
    const std::string tmp = folder.file("fabric.cache");
    errno = 0;
    if (ibnd_cache_fabric(f, tmp.c_str(), IBND_CACHE_FABRIC_FLAG_DEFAULT) != 0) {
      const int err = errno;
      throw std::runtime_error(failed + "ibnd_cache_fabric failed" +
                               (err ? std::string(" (") + std::strerror(err) + ")" : std::string()));
    }
    try {
      text = read_regular_file(tmp, kMaxCacheBytes, "1 GiB");
    } catch (const FileReadError &e) {
      throw std::runtime_error(failed + "reading back libibnetdisc's file: " + e.what());
    }
  }
  write_file_safely(dest, text);
  return dest;
}

std::string numbered(const std::string &file, size_t i) { return file + "." + std::to_string(i); }

Fabric load_cache(const std::string &file, const WalkOptions &opts) {
  if (!file_exists(file)) throw std::runtime_error("cannot read libibnetdisc cache " + file + ": no such file");
  FabricPtr f(ibnd_load_fabric(file.c_str(), 0));
  if (!f)
    throw std::runtime_error("cannot read libibnetdisc cache " + file +
                             ": not a cache written by ibnd_cache_fabric (or ibnetdiscover --cache), or damaged");
  WalkView v = view_of(f.get());
  if (opts.progress) opts.progress(0.0, v.switches, v.cas, true);
  // A cache keeps the raw PortInfo, so a cache saved from a partial walk is recognised as such.
  return fabric_of(v, opts.max_hops, "libibnetdisc cache " + file);
}

// PMA PortCounters (GSI, class 0x04) of one port, by LID: counters in kPortCounterNames' order.
bool read_port_counters(ibmad_port *src, uint16_t lid, int port, unsigned timeout, PortCounters &out,
                        std::string &why) {
  static const int kFields[12] = {IB_PC_ERR_SYM_F,        IB_PC_LINK_RECOVERS_F,  IB_PC_LINK_DOWNED_F,
                                  IB_PC_ERR_RCV_F,        IB_PC_ERR_PHYSRCV_F,    IB_PC_ERR_SWITCH_REL_F,
                                  IB_PC_XMT_DISCARDS_F,   IB_PC_ERR_XMTCONSTR_F,  IB_PC_ERR_RCVCONSTR_F,
                                  IB_PC_ERR_LOCALINTEG_F, IB_PC_ERR_EXCESS_OVR_F, IB_PC_VL15_DROPPED_F};
  if (lid == 0) {
    why = "no LID (has a subnet manager run?)";
    return false;
  }
  ib_portid_t portid;
  std::memset(&portid, 0, sizeof portid);
  ib_portid_set(&portid, lid, 0, 0);
  uint8_t buf[1024];
  std::memset(buf, 0, sizeof buf);
  if (!pma_query_via(buf, &portid, port, timeout, IB_GSI_PORT_COUNTERS, src)) {
    why = "no answer to the PortCounters query (LID " + std::to_string(lid) +
          "; is a subnet manager running, and the port up?)";
    return false;
  }
  for (int i = 0; i < 12; ++i) {
    uint32_t v = 0;
    mad_decode_field(buf, static_cast<enum MAD_FIELDS>(kFields[i]), &v);
    out.values[i] = v;
  }
  return true;
}

// The counters of every connected port of a walked fabric: switch ports through the switch's LID
// (port 0), CA ports through their own.
void read_counters(ibnd_fabric_t *f, const WalkTarget &t, const WalkOptions &opts, Fabric &out) {
  std::vector<char> ca(t.ca.begin(), t.ca.end());
  ca.push_back('\0');
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS, IB_PERFORMANCE_CLASS};
  ibmad_port *src = mad_rpc_open_port(t.ca.empty() ? nullptr : ca.data(), t.port, classes, 4);
  if (!src) {
    out.counter_problems.push_back("cannot open " + target_name(t) + " for PortCounters queries");
    return;
  }
  const unsigned timeout = opts.timeout_ms > 0 ? unsigned(opts.timeout_ms) : 0;
  for (ibnd_node_t *n = f->nodes; n; n = n->next) {
    if (!n->ports) continue;
    const bool sw = n->type == IB_NODE_SWITCH;
    for (int p = 1; p <= n->numports; ++p) {
      ibnd_port_t *port = n->ports[p];
      if (!port || !port->remoteport) continue;
      PortCounters pc;
      pc.guid = n->guid;
      pc.port = p;
      std::string why;
      if (read_port_counters(src, sw ? n->smalid : port->base_lid, p, timeout, pc, why))
        out.counters.push_back(pc);
      else
        out.counter_problems.push_back(guid_str(n->guid) + " (" + clean_desc(n->nodedesc) + ") port " +
                                       std::to_string(p) + ": " + why);
    }
  }
  mad_rpc_close_port(src);
}

// One block of a switch's linear forwarding table: the egress ports of 64 consecutive LIDs.
bool read_lft_block(ibmad_port *src, ib_portid_t *path, int block, unsigned timeout, int attempts, uint8_t *out) {
  for (int a = 0; a < attempts; ++a)
    if (smp_query_via(out, path, IB_ATTR_LINEARFORWTBL, unsigned(block), timeout, src)) return true;
  return false;
}

// The routes of the walked subnet: each switch's LFT read through its directed route (as dump_fts
// does: it works whatever the LIDs), its own LID, and the LIDs of every CA port.
void read_routes(ibnd_fabric_t *f, const WalkTarget &t, const WalkOptions &opts, Fabric &out) {
  std::vector<char> ca(t.ca.begin(), t.ca.end());
  ca.push_back('\0');
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
  ibmad_port *src = mad_rpc_open_port(t.ca.empty() ? nullptr : ca.data(), t.port, classes, 2);
  if (!src) {
    out.route_problems.push_back("cannot open " + target_name(t) + " for forwarding table queries");
    return;
  }
  const unsigned timeout = opts.timeout_ms > 0 ? unsigned(opts.timeout_ms) : 0;
  const int attempts = 1 + std::max(0, opts.retries);
  Subnet sn;
  size_t unprogrammed = 0;
  for (ibnd_node_t *n = f->nodes; n; n = n->next) {
    if (n->type != IB_NODE_SWITCH) {
      for (int p = 1; n->ports && p <= n->numports; ++p) {
        const ibnd_port_t *port = n->ports[p];
        if (port && port->base_lid) sn.ports.push_back({n->guid, p, uint16_t(port->base_lid), int(port->lmc)});
      }
      continue;
    }
    unsigned top = mad_get_field(n->switchinfo, 0, IB_SW_LINEAR_FDB_TOP_F);
    const std::string who = "switch " + guid_str(n->guid) + " (" + clean_desc(n->nodedesc) + ")";
    if (top > kMaxUnicastLid) {
      out.route_problems.push_back(who + ": LinearFDBTop " + std::to_string(top) + " is beyond the last unicast LID");
      top = kMaxUnicastLid;
    }
    SwitchLft s;
    s.guid = n->guid;
    s.lid = uint16_t(n->smalid);
    if (top == 0 || s.lid == 0) ++unprogrammed;
    s.out.assign(size_t(top) + 1, kNoRoute);
    for (unsigned block = 0; top > 0 && block <= top / IB_SMP_DATA_SIZE; ++block) {
      uint8_t buf[IB_SMP_DATA_SIZE];
      std::memset(buf, 0, sizeof buf);
      if (!read_lft_block(src, &n->path_portid, int(block), timeout, attempts, buf)) {
        out.route_problems.push_back(who + ": LinearForwardingTable block " + std::to_string(block) +
                                     " (LIDs " + std::to_string(block * IB_SMP_DATA_SIZE) + "-" +
                                     std::to_string(block * IB_SMP_DATA_SIZE + IB_SMP_DATA_SIZE - 1) +
                                     ") could not be read");
        continue;
      }
      size_t first = size_t(block) * IB_SMP_DATA_SIZE;
      size_t count = std::min<size_t>(IB_SMP_DATA_SIZE, s.out.size() - first);
      std::memcpy(&s.out[first], buf, count);
    }
    sn.switches.push_back(std::move(s));
  }
  mad_rpc_close_port(src);
  if (unprogrammed)
    out.route_problems.push_back(std::to_string(unprogrammed) + " switch(es) of the subnet walked from " +
                                 target_name(t) +
                                 " have no LID or no forwarding table: has a subnet manager programmed it?");
  out.routes.subnets.push_back(std::move(sn));
  out.routes.sources.push_back("forwarding tables read from " + target_name(t));
}

struct TargetResult {
  bool started = false;
  Fabric fabric;
  std::string error;  // when !started
};

TargetResult walk_target(const WalkTarget &t, size_t index, size_t ntargets, const WalkOptions &opts,
                         std::chrono::steady_clock::time_point start) {
  TargetResult res;
  ibnd_config_t config;
  std::memset(&config, 0, sizeof config);
  config.flags = IBND_CONFIG_MLX_EPI;  // FDR10 is only visible in the Mellanox extended port info
  config.timeout_ms = opts.timeout_ms > 0 ? static_cast<unsigned>(opts.timeout_ms) : 0;  // 0: library default
  config.max_hops = opts.max_hops > 0 ? static_cast<unsigned>(opts.max_hops) : 0;
  // config.retries stays 0 = libibnetdisc's per-MAD default; our retries are whole walks.

  WalkView merged;
  FabricPtr best;  // the single walk with the fewest problems: what the cache can hold
  size_t best_problems = 0;
  int walks = 0;
  std::string ca_used;
  const int attempts = 1 + std::max(0, opts.retries);
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(kRetryPause);
    FabricPtr f;
    {
      ProgressTicker ticker(opts, start);
      std::vector<char> ca(t.ca.begin(), t.ca.end());
      ca.push_back('\0');
      f.reset(ibnd_discover_fabric(t.ca.empty() ? nullptr : ca.data(), t.port, nullptr, &config));
    }
    if (!f) {
      // The walk failed as a whole. On the first attempt that means it cannot start (no CA, no
      // umad, port down): more attempts would only repeat libibnetdisc's messages. Later, it is
      // a receive failure in the middle of a walk, and the walks already done still count.
      if (attempt == 0) break;
      continue;
    }
    ++walks;
    WalkView v = view_of(f.get());
    size_t own = problems_of(v, opts.max_hops).size();
    merge_view(merged, v);
    if (!best || own < best_problems) {
      best = std::move(f);
      best_problems = own;
    }
    if (problems_of(merged, opts.max_hops).empty()) break;
  }
  if (!walks) {
    res.error = why_no_walk(t);
    return res;
  }
  res.started = true;
  std::string source = "libibnetdisc walk from " + target_name(t);
  if (best->from_node) source += " (local node " + guid_str(best->from_node->guid) + ")";
  if (walks > 1) source += ", " + std::to_string(walks) + " walks merged";
  res.fabric = fabric_of(merged, opts.max_hops, source);
  if (opts.counters) read_counters(best.get(), t, opts, res.fabric);
  if (opts.routes) read_routes(best.get(), t, opts, res.fabric);
  if (opts.progress) opts.progress(seconds_since(start), merged.switches, merged.cas, true);
  if (!opts.cache_save.empty()) {
    std::string file = ntargets > 1 ? numbered(opts.cache_save, index) : opts.cache_save;
    save_cache(best.get(), file, best_problems > 0);
  }
  return res;
}

}  // namespace

Fabric walk_fabric(const WalkOptions &opts) {
  std::vector<WalkTarget> targets = opts.targets;
  if (targets.empty()) targets.push_back(WalkTarget{});
  Fabric all;

  if (!opts.cache_load.empty()) {
    // One cache per target, as cache_save writes them: "<file>" for one walk, "<file>.<n>" for
    // several. With no targets given, a single file is read if it exists, else the numbered set.
    std::vector<std::string> files;
    if (opts.targets.size() > 1) {
      for (size_t i = 0; i < opts.targets.size(); ++i) files.push_back(numbered(opts.cache_load, i));
    } else if (file_exists(opts.cache_load) || !file_exists(numbered(opts.cache_load, 0))) {
      files.push_back(opts.cache_load);
    } else {
      for (size_t i = 0; file_exists(numbered(opts.cache_load, i)); ++i) files.push_back(numbered(opts.cache_load, i));
    }
    for (const auto &file : files) all.merge(load_cache(file, opts));
    all.finish();
    return all;
  }

  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> failed;
  size_t started = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    TargetResult r = walk_target(targets[i], i, targets.size(), opts, start);
    if (!r.started) {
      failed.push_back(r.error);
      continue;
    }
    ++started;
    all.merge(r.fabric);
  }
  if (!started) {
    std::string msg = failed.front();
    for (size_t i = 1; i < failed.size(); ++i) msg += "\n" + failed[i];
    throw std::runtime_error(msg);
  }
  // A rail that could not be walked at all is a hole in the fabric like any other.
  for (const auto &e : failed) all.problems.push_back({0, 0, e});
  all.finish();
  return all;
}

}  // namespace topoaware
