// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: a task's inputs in slurmstepd, as spank_topoaware (plugins/spank/spank_task.c)
// reads them from the step's environment (what srun or sbatch sent) and hands them to the task
// plan (capi/task_c.h, node/task_c.cpp): SLURM_STEP_NODELIST, SLURMD_NODENAME,
// CUDA_VISIBLE_DEVICES, SPANK_TOPOAWARE_TOPO_HASH and the job's placement (layout and node order).
//
// The input is lines: 1 the node list, 2 this node's name, 3 CUDA_VISIBLE_DEVICES (absent: unset),
// 4 the expected hash ("=" for the topology's own), 5 the placed node order (absent: none), and
// the first byte of line 1 picks, by its value, tp (1, 2, 4, 8), pp (1, 2, 4), the rank order, GPU
// hints and the local task id; 0xfe pads CUDA_VISIBLE_DEVICES to its byte cap - 1, the cap or the
// cap + 1 (TOPOAWARE_CVD_MAX_LEN), 0xff the node list to one byte past its cap
// (TOPOAWARE_NODELIST_MAX_LEN): libFuzzer's -max_len keeps inputs far below them. A node list just
// within its 4 MB cap costs 2-4 s here under ASan (the names expanded up to their 131,072 cap, as
// slurmstepd would): with it the target ran at 3 exec/s, so the expansion at the production caps is
// the hostlist target's, and this one checks the refusal. The topology is a
// generated 4 x 4 fat tree (hosts n01..n16 style names, written once to a file and parsed once:
// see KeptTopology below); hwloc reads
// tests/fixtures/hwloc/synthetic-hgx-8gpu-8nic.xml (8 GPUs, 8 NICs), loaded once as slurmstepd
// does (topoaware_node_devices_load).
//
// Invariants: a plan or NULL with a non-empty printable message, never both, no exception; a plan
// only for a node list within its caps, a node that is in it and a layout that splits evenly; its
// ranks within the world size, its local rank within the node's tasks, its variables unique,
// named and of a known kind, its map line naming this node; the CUDA_VISIBLE_DEVICES it sets is
// the sorted, unique set of the indices Slurm gave, each below the node's GPU count; the note is
// printable; the same inputs give the same plan again (the cached step and a fresh one agree).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "generator.hpp"
#include "job_dir_c.h"
#include "task_c.h"
#include "topoaware_c.h"
#include "topology.hpp"
#include "topology_json.hpp"

#ifndef FUZZ_TOP_SRCDIR
#error "FUZZ_TOP_SRCDIR must name the source folder (tests/fuzz/local.mk sets it)"
#endif

namespace {

struct Setup {
  std::string dir, topo_path, hash;
  std::vector<std::string> hosts;
  size_t gpus = 0;
};

// The generated topology, parsed once. task_c.cpp reads the topology file for every step whose
// inputs differ from the last one (a new slurmstepd does, once per step), which here is nearly
// every input: parsing and hashing the same 13 KB file under ASan took two thirds of the target's
// time, and it depends on no input. The fuzz binary is linked with
// -Wl,--wrap=topoaware_topo_load,--wrap=topoaware_topo_free (tests/fuzz/local.mk): the first load
// of the file is the real one; while the file (path, device, inode, size, modification time) is
// unchanged, later loads return that same handle, and freeing it is a no-op. Any other path, or
// a changed file, goes to the real C API.
struct KeptTopology {
  topoaware_topo_t *topo = nullptr;
  std::string key;
};

KeptTopology &kept_topology() {
  static KeptTopology k;
  return k;
}

std::string file_key(const char *path) {
  struct stat st {};
  if (!path || stat(path, &st) != 0) return "";
  return std::string(path) + '\0' + std::to_string(st.st_dev) + ',' + std::to_string(st.st_ino) + ',' +
         std::to_string(st.st_size) + ',' + std::to_string(st.st_mtim.tv_sec) + ',' +
         std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

extern "C" {
topoaware_topo_t *__real_topoaware_topo_load(const char *path, char *err, size_t errlen);
void __real_topoaware_topo_free(topoaware_topo_t *topo);

topoaware_topo_t *__wrap_topoaware_topo_load(const char *path, char *err, size_t errlen) {
  KeptTopology &k = kept_topology();
  const std::string key = file_key(path);
  if (!key.empty() && k.topo && key == k.key) return k.topo;
  topoaware_topo_t *t = __real_topoaware_topo_load(path, err, errlen);
  if (t && !key.empty() && !k.topo) {
    k.topo = t;
    k.key = key;
  }
  return t;
}

void __wrap_topoaware_topo_free(topoaware_topo_t *topo) {
  if (topo && topo == kept_topology().topo) return;
  __real_topoaware_topo_free(topo);
}
}  // extern "C"

namespace {

void remove_folder(const std::string &dir) {
  if (DIR *d = opendir(dir.c_str())) {
    while (const dirent *e = readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
  }
  rmdir(dir.c_str());
}

const Setup &setup() {
  static const Setup s = [] {
    Setup r;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    r.dir = std::string(base) + "/fuzz_task.XXXXXX";
    FUZZ_CHECK(mkdtemp(&r.dir[0]) != nullptr);
    topoaware::FatTreeSpec spec;
    spec.leaves = 4;
    spec.hosts_per_leaf = 4;
    spec.spines = 2;
    spec.uplinks_per_leaf = 2;
    topoaware::Fabric f = topoaware::generate_fat_tree(spec);
    f.finish();
    topoaware::Topology t = topoaware::classify(f, {});
    for (const auto &h : t.hosts) r.hosts.push_back(h.name);
    const std::string json = topoaware::to_json(t);
    r.hash = topoaware::topology_from_json(json).hash;
    r.topo_path = r.dir + "/topology.json";
    const int fd = open(r.topo_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_CHECK(fd >= 0 && write(fd, json.data(), json.size()) == ssize_t(json.size()));
    close(fd);
    // The node's GPUs and NICs, once, as slurmstepd's root side keeps them for its tasks.
    setenv("HWLOC_XMLFILE", FUZZ_TOP_SRCDIR "/tests/fixtures/hwloc/synthetic-hgx-8gpu-8nic.xml", 1);
    setenv("HWLOC_THISSYSTEM", "1", 1);
    const int sfd = open(r.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char err[TOPOAWARE_ERR_LEN];
    FUZZ_CHECK(topoaware_node_devices_load(sfd, r.hosts[0].c_str(), nullptr, err, sizeof(err)) >= 0);
    close(sfd);
    r.gpus = 8;
    // The folder (topology.json, the node's devices file) goes at exit; a crash leaves it to see.
    static const std::string dir = r.dir;
    std::atexit([] { remove_folder(dir); });
    return r;
  }();
  return s;
}

std::vector<std::string> lines(const uint8_t *data, size_t size) {
  std::vector<std::string> v(1);
  for (size_t i = 0; i < size && v.size() <= 5; ++i) {
    if (data[i] == '\n') v.emplace_back();
    else if (data[i] == '\0') v.back() += '?';  // the environment holds C strings
    else v.back() += static_cast<char>(data[i]);
  }
  return v;
}

// `unit` repeated to cap - 1, cap or cap + 1 bytes (which % 3), into *s: by doubling (a few
// memcpy), not by appending the unit up to 2 million times through instrumented code.
void stretch(const std::string &unit, size_t cap, unsigned which, std::string *s) {
  const std::string u = unit.empty() ? std::string("0,") : unit;
  s->assign(u);
  while (s->size() < cap + 1) s->append(*s, 0, std::min(s->size(), cap + 1 - s->size()));
  s->resize(cap - 1 + which % 3);
}

// A stretched line in a buffer kept across inputs (a fresh 4 MB allocation is a thousand page
// faults under ASan): swapped into the input's line, and back out when the input is done.
class Stretched {
 public:
  Stretched(std::string *line, size_t cap, unsigned which) : line_(line) {
    stretch(*line, cap, which, &buffer());
    line_->swap(buffer());
  }
  ~Stretched() { line_->swap(buffer()); }
  Stretched(const Stretched &) = delete;
  Stretched &operator=(const Stretched &) = delete;

 private:
  static std::string &buffer() {
    static std::string b;
    return b;
  }
  std::string *line_;
};

// 1 + the commas of s, at most `most`: memchr, not a loop over 4 MB of instrumented code.
uint32_t count_nodes(const std::string &s, uint32_t most) {
  uint32_t n = 1;
  const char *at = s.data(), *const end = s.data() + s.size();
  while (n < most && (at = static_cast<const char *>(std::memchr(at, ',', size_t(end - at)))) != nullptr) {
    ++n;
    ++at;
  }
  return n;
}

struct Plan {
  bool ok = false;
  std::string err, note, map, hash;
  std::vector<std::pair<std::string, std::string>> vars;
  std::vector<int> kinds;
};

Plan run(const topoaware_task_in_t &in) {
  Plan r;
  char err[TOPOAWARE_ERR_LEN];
  std::memset(err, 0x55, sizeof(err));
  topoaware_task_plan_t *p = topoaware_task_plan(&in, err, sizeof(err));
  if (!p) {
    FUZZ_CHECK(fuzz::good_c_message(err, sizeof(err)));
    r.err = err;
    return r;
  }
  r.ok = true;
  for (uint32_t i = 0; i < topoaware_task_plan_vars(p); ++i) {
    r.vars.emplace_back(topoaware_task_plan_name(p, i), topoaware_task_plan_value(p, i));
    r.kinds.push_back(topoaware_task_plan_kind(p, i));
  }
  r.note = topoaware_task_plan_note(p);
  r.map = topoaware_task_plan_map_line(p);
  r.hash = topoaware_task_plan_hash(p);
  topoaware_task_plan_free(p);
  return r;
}

const std::string *var(const Plan &p, const char *name) {
  for (const auto &v : p.vars)
    if (v.first == name) return &v.second;
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Setup &s = setup();
  if (size == 0) return 0;
  const uint8_t k = data[0];
  std::vector<std::string> l = lines(data + 1, size - 1);
  l.resize(std::max<size_t>(l.size(), 3));
  // The caps themselves: CUDA_VISIBLE_DEVICES at cap - 1, cap, cap + 1 (by the input's size), the
  // node list at cap + 1.
  std::optional<Stretched> big;
  if (k == 0xfe) big.emplace(&l[2], TOPOAWARE_CVD_MAX_LEN, static_cast<unsigned>(size));
  if (k == 0xff) big.emplace(&l[0], TOPOAWARE_NODELIST_MAX_LEN, 2);
  topoaware_layout_t layout{};
  layout.tp = 1u << (k & 3);
  layout.cp = layout.ep = 1;
  layout.pp = 1u << ((k >> 2) % 3);
  layout.dp = 1;
  layout.order = (k & 0x10) ? TOPOAWARE_ORDER_TP_PP_DP : TOPOAWARE_ORDER_TP_CP_EP_DP_PP;
  // dp from the node list's host count: the layout's world must match the step's tasks.
  const uint32_t per_node = layout.tp * layout.pp <= 8 ? layout.tp * layout.pp : 8;
  const uint32_t nodes = count_nodes(l[0], 64);
  layout.dp = std::max<uint32_t>(1, nodes * per_node / (layout.tp * layout.pp));
  char lay[256];
  FUZZ_CHECK(topoaware_layout_string(&layout, lay, sizeof(lay)) == 0);

  const std::string hash = l.size() > 3 ? (l[3] == "=" ? s.hash : l[3]) : std::string();
  topoaware_task_in_t in{};
  in.topology_path = s.topo_path.c_str();
  in.expected_hash = l.size() > 3 ? hash.c_str() : nullptr;
  in.nodelist = l[0].c_str();
  in.self = l[1].c_str();
  in.total_tasks = layout.tp * layout.cp * layout.dp * layout.pp;
  in.local_tasks = std::max<uint32_t>(1, in.total_tasks / nodes);
  in.local_id = (k >> 5) % in.local_tasks;
  in.job_id = 1000 + k;
  in.layout = &layout;
  in.cuda_visible_devices = l[2].empty() ? nullptr : l[2].c_str();
  in.gpu_hints = (k & 0x20) ? 1 : 0;
  in.placed_layout = l.size() > 4 ? lay : nullptr;
  in.placed_order = l.size() > 4 ? l[4].c_str() : nullptr;
  in.placed_rail_optimized = k & 1;

  char err[TOPOAWARE_ERR_LEN];
  (void)topoaware_task_prepare(&in, err, sizeof(err));  // user_init's step preparation
  const Plan p = run(in);
  if (k == 0xff) FUZZ_CHECK(!p.ok && p.err.find("longer than") != std::string::npos);
  if (!p.ok) return 0;

  // A plan only within the caps.
  FUZZ_CHECK(l[0].size() <= TOPOAWARE_NODELIST_MAX_LEN && l[1].size() <= TOPOAWARE_NODENAME_MAX_LEN);
  FUZZ_CHECK(hash.size() <= TOPOAWARE_SHORT_VAR_MAX_LEN);
  FUZZ_CHECK(fuzz::printable(p.note));
  std::set<std::string> seen;
  for (size_t i = 0; i < p.vars.size(); ++i) {
    FUZZ_CHECK(!p.vars[i].first.empty() && seen.insert(p.vars[i].first).second);
    FUZZ_CHECK(p.kinds[i] == TOPOAWARE_VAR_OURS || p.kinds[i] == TOPOAWARE_VAR_DEFAULT ||
               p.kinds[i] == TOPOAWARE_VAR_SLURM);
    FUZZ_CHECK((p.kinds[i] == TOPOAWARE_VAR_DEFAULT) == (topoaware_task_is_default_var(p.vars[i].first.c_str()) == 1));
  }
  const std::string *rank = var(p, "TOPOAWARE_RANK"), *world = var(p, "TOPOAWARE_WORLD_SIZE"),
                    *local = var(p, "TOPOAWARE_LOCAL_RANK");
  FUZZ_CHECK(rank && world && local);
  FUZZ_CHECK(std::stoull(*world) == in.total_tasks && std::stoull(*rank) < in.total_tasks);
  FUZZ_CHECK(std::stoull(*local) < in.local_tasks);
  FUZZ_CHECK(p.map.find(std::string(" host=") + in.self + " ") != std::string::npos);
  if (in.expected_hash && *in.expected_hash) FUZZ_CHECK(p.hash == in.expected_hash);
  else FUZZ_CHECK(p.hash == s.hash);
  if (const std::string *cvd = var(p, "CUDA_VISIBLE_DEVICES")) {
    FUZZ_CHECK(in.gpu_hints && in.cuda_visible_devices && l[2].size() <= TOPOAWARE_CVD_MAX_LEN);
    std::set<unsigned long> given, out;
    size_t at = 0;
    while (at <= l[2].size()) {
      size_t e = l[2].find(',', at);
      if (e == std::string::npos) e = l[2].size();
      // A plan with it: every entry was a number, blanks around it and empty entries aside (the
      // plan reads the list as split_names does: "0,1," is 0 and 1).
      const std::string entry = l[2].substr(at, e - at);
      if (entry.find_first_not_of(" \t") != std::string::npos) given.insert(std::stoul(entry));
      at = e + 1;
    }
    std::string back;
    for (unsigned long g : given) {
      FUZZ_CHECK(g < s.gpus);
      back += (back.empty() ? "" : ",") + std::to_string(g);
    }
    FUZZ_CHECK(*cvd == back);
  }
  // The same inputs again, from the kept step: the same plan.
  const Plan again = run(in);
  FUZZ_CHECK(again.ok && again.vars == p.vars && again.note == p.note && again.map == p.map);
  return 0;
}
