// SPDX-License-Identifier: GPL-2.0-or-later
// See devices_cache.hpp; the C API topoaware_node_devices_load is declared in capi/task_c.h.
#include "devices_cache.hpp"

#include "c_api_util.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <hwloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.h"
#include "job_dir_c.h"
#include "task_c.h"

namespace topoaware {

namespace {

using nlohmann::json;

constexpr const char *kFormat = "topoaware-devices 1";

std::string first_line(const char *path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

// The entries of a folder, sorted ("" if it cannot be read).
std::string folder_entries(const char *path) {
  std::unique_ptr<DIR, int (*)(DIR *)> d(opendir(path), closedir);
  if (!d) return "-";
  std::vector<std::string> names;
  while (const dirent *e = readdir(d.get())) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  std::sort(names.begin(), names.end());
  std::string s;
  for (const auto &n : names) s += n + ",";
  return s;
}

std::string env_item(const char *name) {
  const char *v = std::getenv(name);
  return v ? std::string("=") + v : std::string("-");
}

// A file's identity, so that a recording replaced at the same path is probed again.
std::string file_identity(const char *path) {
  struct stat st {};
  if (!path || stat(path, &st) != 0) return "-";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

std::string joined_names(const std::vector<std::string> &names) {
  std::string s;
  for (const auto &n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

json devices_json(const NodeDevices &d) {
  json gpus = json::array(), nics = json::array();
  for (const HwlocGpu &g : d.gpus)
    gpus.push_back({{"busid", g.busid},
                    {"vendor", g.vendor},
                    {"device", g.device},
                    {"class", g.pci_class},
                    {"cuda", g.cuda},
                    {"nvml", g.nvml},
                    {"numa", g.numa},
                    {"nic", g.nic},
                    {"locality", static_cast<int>(g.locality)}});
  for (const HwlocNic &n : d.nics)
    nics.push_back({{"name", n.name}, {"busid", n.busid}, {"port", n.port}, {"numa", n.numa}});
  return {{"gpus", gpus}, {"nics", nics}, {"excluded", d.excluded}, {"pci_devices", d.pci_devices}};
}

NodeDevices devices_from_json(const json &j) {
  NodeDevices d;
  for (const json &n : j.at("nics")) {
    HwlocNic nic;
    nic.name = n.at("name").get<std::string>();
    nic.busid = n.at("busid").get<std::string>();
    nic.port = n.at("port").get<unsigned>();
    nic.numa = n.at("numa").get<int>();
    d.nics.push_back(std::move(nic));
  }
  for (const json &g : j.at("gpus")) {
    HwlocGpu gpu;
    gpu.busid = g.at("busid").get<std::string>();
    gpu.vendor = g.at("vendor").get<uint16_t>();
    gpu.device = g.at("device").get<uint16_t>();
    gpu.pci_class = g.at("class").get<uint16_t>();
    gpu.cuda = g.at("cuda").get<std::string>();
    gpu.nvml = g.at("nvml").get<std::string>();
    gpu.numa = g.at("numa").get<int>();
    gpu.nic = g.at("nic").get<int>();
    const int loc = g.at("locality").get<int>();
    // The task plan indexes nics with it: an index out of range is a broken file, not a NIC.
    if (gpu.nic < -1 || gpu.nic >= static_cast<int>(d.nics.size()) || loc < 0 ||
        loc > static_cast<int>(Locality::Switch))
      throw std::runtime_error("a GPU's NIC or locality is out of range");
    gpu.locality = static_cast<Locality>(loc);
    d.gpus.push_back(std::move(gpu));
  }
  d.excluded = j.at("excluded").get<std::vector<std::string>>();
  d.pci_devices = j.at("pci_devices").get<unsigned>();
  return d;
}

// The process's devices (topoaware_node_devices_load), and the options they were probed with.
struct Kept {
  ProbeOptions opts;
  NodeDevices devices;
};
std::unique_ptr<Kept> g_kept;

bool same_options(const ProbeOptions &a, const ProbeOptions &b) {
  return a.xml == b.xml && a.exclude_nics == b.exclude_nics;
}

// The devices file's text, or "" when there is none to trust: it must be a regular file of this
// process's user (root in slurmstepd), not writable by group or others, at most kMaxDevicesFile.
std::string read_devices_file(int state_fd, const std::string &name) {
  const int fd = openat(state_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st {};
  std::string text;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022) && st.st_size > 0 &&
      static_cast<size_t>(st.st_size) <= kMaxDevicesFile) {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = read(fd, &text[got], text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
  }
  close(fd);
  return text;
}

}  // namespace

std::string devices_file_name(const std::string &node) {
  if (node.empty() || node.size() > 128 || node[0] == '.') return "";
  for (const char c : node)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      return "";
  return "node." + node + ".devices";
}

std::string devices_cache_key(const std::string &node, const ProbeOptions &opts) {
  const std::string boot = first_line("/proc/sys/kernel/random/boot_id");
  if (boot.empty()) return "";
  const char *xmlfile = std::getenv("HWLOC_XMLFILE");
  std::string k = std::string(kFormat) + "\nbuild " + PACKAGE_VERSION + "\nboot " + boot + "\nnode " + node +
                  "\nexclude " + joined_names(opts.exclude_nics) + "\nxml " + opts.xml + " " +
                  file_identity(opts.xml.empty() ? nullptr : opts.xml.c_str()) + "\nhwloc " +
                  std::to_string(hwloc_get_api_version()) + "\nHWLOC_XMLFILE" + env_item("HWLOC_XMLFILE") + " " +
                  file_identity(xmlfile) + "\nHWLOC_FSROOT" + env_item("HWLOC_FSROOT") + "\nHWLOC_COMPONENTS" +
                  env_item("HWLOC_COMPONENTS") + "\ninfiniband " + folder_entries("/sys/class/infiniband") + "\n";
  return k;
}

std::string devices_to_text(const std::string &key, const NodeDevices &d) {
  return json{{"key", key}, {"devices", devices_json(d)}}.dump(1) + "\n";
}

bool devices_from_text(const std::string &text, const std::string &key, NodeDevices *out) {
  try {
    const json j = json::parse(text);
    if (j.at("key").get<std::string>() != key) return false;
    *out = devices_from_json(j.at("devices"));
    return true;
  } catch (const json::exception &e) {
    throw std::runtime_error(std::string("not a devices file: ") + e.what());
  }
}

const NodeDevices *kept_node_devices(const ProbeOptions &opts) {
  return g_kept && same_options(g_kept->opts, opts) ? &g_kept->devices : nullptr;
}

}  // namespace topoaware

extern "C" int topoaware_node_devices_load(int state_fd, const char *self, const char *exclude_nics, char *err,
                                           size_t errlen) {
  using namespace topoaware;
  return c_boundary(err, errlen, -1, [&]() -> int {
    g_kept.reset();  // a probe that fails below keeps nothing
    ProbeOptions po;
    if (exclude_nics) po.exclude_nics = split_names(exclude_nics);
    const std::string name = devices_file_name(self ? self : "");
    const std::string key = name.empty() || state_fd < 0 ? "" : devices_cache_key(self, po);
    auto kept = std::make_unique<Kept>();
    kept->opts = po;
    if (!key.empty()) {
      const std::string text = read_devices_file(state_fd, name);
      try {
        if (!text.empty() && devices_from_text(text, key, &kept->devices)) {
          g_kept = std::move(kept);
          return 0;
        }
      } catch (const std::runtime_error &) {
        // A broken file (a crash mid-write cannot leave one: it is renamed in place) is probed again.
      }
    }
    kept->devices = probe_node_devices(po);
    g_kept = std::move(kept);
    if (name.empty())
      throw std::runtime_error(std::string("node name '") + (self ? self : "") +
                               "' is not a plain file name: the devices are not kept in a file");
    if (state_fd < 0) throw std::runtime_error("no state folder is open: the devices are not kept in a file");
    if (key.empty())
      throw std::runtime_error("the kernel's boot id cannot be read: the devices are not kept in a file");
    const std::string text = devices_to_text(key, g_kept->devices);
    char werr[TOPOAWARE_ERR_LEN];
    if (topoaware_file_write_at(state_fd, name.c_str(), text.data(), text.size(), werr, sizeof werr) != 0)
      throw std::runtime_error(werr);
    return 1;
  });
}
