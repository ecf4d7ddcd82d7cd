// SPDX-License-Identifier: GPL-2.0-or-later
// This node's NVLink domain through NVML, loaded at run time: the command must run (and say why
// there is no domain) on nodes without NVIDIA's driver, and must not link against it.
// The few NVML declarations used are repeated here (from NVIDIA's nvml.h, R535 and later:
// nvmlDeviceGetGpuFabricInfo and nvmlGpuFabricInfo_t), so that building needs no CUDA headers.
#include <dlfcn.h>

#include <cstdio>
#include <string>

#include "cli_commands.hpp"
#include "nvlink.hpp"

namespace topoaware {

namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void *;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned char kFabricStateCompleted = 3;  // NVML_GPU_FABRIC_STATE_COMPLETED
struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[16];  // NVML_GPU_FABRIC_UUID_LEN
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;  // nvmlGpuFabricState_t
};

struct Nvml {
  void *lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned int *) = nullptr;
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *) = nullptr;
  nvmlReturn_t (*fabric)(nvmlDevice_t, nvmlGpuFabricInfo_t *) = nullptr;
  const char *(*error)(nvmlReturn_t) = nullptr;
  ~Nvml() {
    if (lib) dlclose(lib);
  }
  std::string why(nvmlReturn_t r) const {
    const char *s = error ? error(r) : nullptr;
    return s ? std::string(s) : "NVML error " + std::to_string(r);
  }
};

template <typename F>
bool sym(void *lib, const char *name, F *out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

std::string uuid_text(const unsigned char u[16]) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

}  // namespace

NodeNvlink probe_nvlink_domain(const std::string &library) {
  NodeNvlink n;
  Nvml nv;
  nv.lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!nv.lib) {
    const char *e = dlerror();
    n.reason = "cannot load " + library + ": " + (e ? e : "unknown error") + " (no NVIDIA driver on this node)";
    return n;
  }
  sym(nv.lib, "nvmlErrorString", &nv.error);
  if (!sym(nv.lib, "nvmlInit_v2", &nv.init) || !sym(nv.lib, "nvmlShutdown", &nv.shutdown) ||
      !sym(nv.lib, "nvmlDeviceGetCount_v2", &nv.count) || !sym(nv.lib, "nvmlDeviceGetHandleByIndex_v2", &nv.handle)) {
    n.reason = library + " lacks the NVML entry points needed (too old a driver?)";
    return n;
  }
  if (!sym(nv.lib, "nvmlDeviceGetGpuFabricInfo", &nv.fabric)) {
    n.reason = "this driver's NVML has no GPU fabric information (nvmlDeviceGetGpuFabricInfo: driver R535 or later)";
    return n;
  }
  nvmlReturn_t r = nv.init();
  if (r != kNvmlSuccess) {
    n.reason = "nvmlInit failed: " + nv.why(r);
    return n;
  }
  unsigned int count = 0;
  r = nv.count(&count);
  if (r != kNvmlSuccess || count == 0) {
    n.reason = r != kNvmlSuccess ? "nvmlDeviceGetCount failed: " + nv.why(r) : "no GPU on this node";
    nv.shutdown();
    return n;
  }
  for (unsigned int i = 0; i < count; i++) {
    nvmlDevice_t dev = nullptr;
    nvmlGpuFabricInfo_t info{};
    r = nv.handle(i, &dev);
    if (r == kNvmlSuccess) r = nv.fabric(dev, &info);
    std::string why;
    if (r != kNvmlSuccess) why = "GPU " + std::to_string(i) + ": " + nv.why(r);
    else if (info.state != kFabricStateCompleted) why = "GPU " + std::to_string(i) + ": fabric registration not completed (state " + std::to_string(info.state) + ")";
    else if (info.status != kNvmlSuccess) why = "GPU " + std::to_string(i) + ": fabric status: " + nv.why(info.status);
    std::string uuid;
    if (why.empty() && !normalize_cluster_uuid(uuid_text(info.clusterUuid), &uuid))
      why = "GPU " + std::to_string(i) + " is in no NVLink fabric (cluster UUID is zero)";
    if (why.empty() && n.in_domain && (uuid != n.cluster_uuid || info.cliqueId != n.clique_id))
      why = "GPUs of this node report different NVLink domains (GPU " + std::to_string(i) + ")";
    if (!why.empty()) {
      n = NodeNvlink();
      n.reason = why;
      nv.shutdown();
      return n;
    }
    n.in_domain = true;
    n.cluster_uuid = uuid;
    n.clique_id = info.cliqueId;
    n.gpus = static_cast<int>(i + 1);
  }
  nv.shutdown();
  return n;
}

}  // namespace topoaware
