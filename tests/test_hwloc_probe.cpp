// SPDX-License-Identifier: GPL-2.0-or-later
// node/hwloc_probe over the recorded GPU nodes in tests/fixtures/hwloc (PROVENANCE.md) and the
// synthetic HGX-style node, with the expected GPUs, NICs and pairs written by reading the
// recordings (lstopo-no-graphics --of console -i FILE); the task plan and the job map of
// capi/task_c.h; the node's devices kept for the boot (node/devices_cache.hpp); the per-job
// folders of capi/job_dir_c.h (as root: owners, symbolic links, removal).
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "devices_cache.hpp"
#include "engine_topologies.hpp"
#include "hwloc_probe.hpp"
#include "job_dir_c.h"
#include "nvlink.hpp"
#include "task_c.h"
#include "topoaware_c.h"
#include "topology_json.hpp"
#include "cmocka_cxx.hpp"

namespace {

std::string fixture(const char *name) { return std::string(TEST_FIXTURES) + "/hwloc/" + name; }

topoaware::NodeDevices probe(const char *name, std::vector<std::string> exclude = {}) {
  topoaware::ProbeOptions o;
  o.xml = fixture(name);
  o.exclude_nics = exclude;
  return topoaware::probe_node_devices(o);
}

struct Expect {
  const char *busid, *cuda, *nic;  // nic "" = none
  topoaware::Locality loc;
};

void check(const topoaware::NodeDevices &d, const std::vector<Expect> &want, const std::vector<const char *> &nics) {
  assert_int_equal(d.gpus.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) {
    const auto &g = d.gpus[i];
    assert_string_equal(g.busid.c_str(), want[i].busid);
    assert_string_equal(g.cuda.c_str(), want[i].cuda);
    if (*want[i].nic) {
      assert_true(g.nic >= 0);
      assert_string_equal(d.nics[size_t(g.nic)].name.c_str(), want[i].nic);
    } else {
      assert_int_equal(g.nic, -1);
    }
    assert_int_equal(int(g.locality), int(want[i].loc));
  }
  assert_int_equal(d.nics.size(), nics.size());
  for (size_t j = 0; j < nics.size(); j++) assert_string_equal(d.nics[j].name.c_str(), nics[j]);
}

using L = topoaware::Locality;

// JURECA-DC: GPUs as PCI devices only; each GPU shares a PCIe switch with one mlx5. hwloc's own
// order is by package/NUMA node (44:00 comes before 03:00): ours is by bus id. The ASPEED VGA at
// 62:00.0 is not a GPU.
void test_jrc(void **) {
  auto d = probe("jrc0323-4gpu-4mlx5.xml");
  check(d,
        {{"0000:03:00.0", "", "mlx5_0", L::Switch},
         {"0000:44:00.0", "", "mlx5_1", L::Switch},
         {"0000:84:00.0", "", "mlx5_2", L::Switch},
         {"0000:c4:00.0", "", "mlx5_3", L::Switch}},
        {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"});
  assert_string_equal(topoaware::nccl_ib_hca(d).c_str(), "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
}

// Lassen: 4 V100 with cuda/nvml OS devices, two dual-port ConnectX-5 functions per socket on
// their own host bridges: the pairing is at package level, one NIC per GPU (balanced).
void test_lassen(void **) {
  auto d = probe("lassen-power9-4xv100-4mlx5.xml");
  check(d,
        {{"0004:04:00.0", "cuda0", "mlx5_0", L::NonIo},
         {"0004:05:00.0", "cuda1", "mlx5_1", L::NonIo},
         {"0035:03:00.0", "cuda2", "mlx5_2", L::NonIo},
         {"0035:04:00.0", "cuda3", "mlx5_3", L::NonIo}},
        {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"});
  assert_string_equal(topoaware::nccl_ib_hca(d).c_str(), "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
  assert_string_equal(d.gpus[0].nvml.c_str(), "nvml0");
}

// hwloc's test machine: three NVIDIA 3D devices (03:00 in package 0, 83:00 and 84:00 in package
// 1), only 84:00 with cuda0; Matrox VGA 05:03 and AMD VGA 84:00.1 (with an OpenCL device) are not
// GPUs. mlx5_0 (edited in at bus 04:00.0) sits under the same bridge as 84:00, so 84:00 pairs
// with it at switch level and 83:00 at host-bridge level; package 0's GPU has no NIC near it.
void test_hwloc_test_file(void **) {
  auto d = probe("hwloc-32em64t-3gpu-1mlx5.xml");
  check(d,
        {{"0000:03:00.0", "", "", L::None},
         {"0000:83:00.0", "", "mlx5_0", L::HostBridge},
         {"0000:84:00.0", "cuda0", "mlx5_0", L::Switch}},
        {"mlx5_0"});
  assert_string_equal(topoaware::nccl_ib_hca(d).c_str(), "=mlx5_0:1");
}

// Synthetic HGX: GPU i and mlx5_i share a leaf PCIe switch; two leaf switches under each upper
// switch (the deeper common bridge wins over the upper one); storage NIC mlx5_8 on its own host
// bridge in package 1.
void test_synthetic_hgx(void **) {
  auto d = probe("synthetic-hgx-8gpu-8nic.xml");
  check(d,
        {{"0000:1c:00.0", "cuda0", "mlx5_0", L::Switch},
         {"0000:20:00.0", "cuda1", "mlx5_1", L::Switch},
         {"0000:2c:00.0", "cuda2", "mlx5_2", L::Switch},
         {"0000:30:00.0", "cuda3", "mlx5_3", L::Switch},
         {"0000:9c:00.0", "", "mlx5_4", L::Switch},
         {"0000:a0:00.0", "", "mlx5_5", L::Switch},
         {"0000:ac:00.0", "", "mlx5_6", L::Switch},
         {"0000:b0:00.0", "", "mlx5_7", L::Switch}},
        {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8"});
  // Not excluded, the storage NIC is still a compute NIC: listed last (no GPU is near it).
  assert_string_equal(topoaware::nccl_ib_hca(d).c_str(),
                      "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1");
  auto e = probe("synthetic-hgx-8gpu-8nic.xml", {"mlx5_8"});
  assert_int_equal(e.nics.size(), 8);
  assert_int_equal(e.excluded.size(), 1);
  assert_string_equal(e.excluded[0].c_str(), "mlx5_8");
  assert_string_equal(topoaware::nccl_ib_hca(e).c_str(),
                      "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1");
  // Excluding a paired NIC: its GPU falls back to the other NIC of the same upper switch.
  auto f = probe("synthetic-hgx-8gpu-8nic.xml", {"mlx5_8", "mlx5_0"});
  assert_string_equal(f.nics[size_t(f.gpus[0].nic)].name.c_str(), "mlx5_1");
  assert_int_equal(int(f.gpus[0].locality), int(L::Switch));
}

// Through HWLOC_XMLFILE, as slurmstepd sees it (slurmd started with it).
void test_env_xmlfile(void **) {
  const std::string f = fixture("lassen-power9-4xv100-4mlx5.xml");
  setenv("HWLOC_XMLFILE", f.c_str(), 1);
  setenv("HWLOC_THISSYSTEM", "1", 1);
  auto d = topoaware::probe_node_devices({});
  unsetenv("HWLOC_XMLFILE");
  assert_int_equal(d.gpus.size(), 4);
  assert_string_equal(d.gpus[3].cuda.c_str(), "cuda3");
}

std::string read_text(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// What a probe gives, in the order and with the pairs that matter to the task plan.
std::string devices_summary(const topoaware::NodeDevices &d) {
  std::string s;
  for (const auto &g : d.gpus) s += g.busid + "/" + std::to_string(g.nic) + "/" + std::to_string(int(g.locality)) + " ";
  for (const auto &n : d.nics) s += n.name + ":" + std::to_string(n.port) + " ";
  for (const auto &x : d.excluded) s += "-" + x + " ";
  return s + std::to_string(d.pci_devices);
}

// The node's devices kept for the boot (topoaware_node_devices_load): probed and written once, then
// read back while the inputs are the same; probed again when they change or the file is broken;
// never through a symbolic link.
void test_devices_cache(void **) {
  char err[1024] = "";
  if (access("/proc/sys/kernel/random/boot_id", R_OK) != 0) skip();  // no boot id: nothing is kept
  char tmpl[] = "/tmp/ta-devices-XXXXXX";
  assert_non_null(mkdtemp(tmpl));
  const std::string d = tmpl, xml = d + "/node.xml", file = d + "/node.n0001.devices";
  std::filesystem::copy_file(fixture("synthetic-hgx-8gpu-8nic.xml"), xml);
  setenv("HWLOC_XMLFILE", xml.c_str(), 1);
  setenv("HWLOC_THISSYSTEM", "1", 1);
  const int fd = open(d.c_str(), O_RDONLY | O_DIRECTORY);
  assert_true(fd >= 0);
  const std::string want = devices_summary(topoaware::probe_node_devices({}));

  assert_int_equal(topoaware_node_devices_load(fd, "n0001", nullptr, err, sizeof err), 1);  // probed, written
  assert_non_null(topoaware::kept_node_devices({}));
  assert_string_equal(devices_summary(*topoaware::kept_node_devices({})).c_str(), want.c_str());
  struct stat st {};
  assert_int_equal(lstat(file.c_str(), &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(topoaware_node_devices_load(fd, "n0001", nullptr, err, sizeof err), 0);  // read back
  assert_string_equal(devices_summary(*topoaware::kept_node_devices({})).c_str(), want.c_str());

  // What is read back is the file's content, not a new probe: one NIC fewer in the file shows.
  const std::string text = read_text(file);
  const size_t mlx0 = text.find("\"mlx5_0\"");
  assert_true(mlx0 != std::string::npos);
  write_text(file, std::string(text).replace(mlx0, 8, "\"mlx5_X\""));
  assert_int_equal(topoaware_node_devices_load(fd, "n0001", nullptr, err, sizeof err), 0);
  assert_true(devices_summary(*topoaware::kept_node_devices({})).find("mlx5_X:1") != std::string::npos);

  // Broken files are probed again and rewritten: not JSON, a NIC index out of range, empty.
  for (const std::string &bad : {std::string("{not json"),
                                 std::string(text).replace(text.find("\"nic\": 0"), 8, "\"nic\": 99"), std::string()}) {
    write_text(file, bad);
    assert_int_equal(topoaware_node_devices_load(fd, "n0001", nullptr, err, sizeof err), 1);
    assert_string_equal(devices_summary(*topoaware::kept_node_devices({})).c_str(), want.c_str());
  }
  assert_int_equal(topoaware_node_devices_load(fd, "n0001", nullptr, err, sizeof err), 0);

  // Other inputs, another probe: the exclude list; the recording replaced at the same path.
  assert_int_equal(topoaware_node_devices_load(fd, "n0001", "mlx5_0", err, sizeof err), 1);
  assert_null(topoaware::kept_node_devices({}));
  topoaware::ProbeOptions ex;
  ex.exclude_nics = {"mlx5_0"};
  assert_non_null(topoaware::kept_node_devices(ex));
  assert_int_equal(topoaware::kept_node_devices(ex)->excluded.size(), 1);
  assert_int_equal(topoaware_node_devices_load(fd, "n0001", "mlx5_0", err, sizeof err), 0);
  std::filesystem::copy_file(fixture("jrc0323-4gpu-4mlx5.xml"), xml, std::filesystem::copy_options::overwrite_existing);
  assert_int_equal(topoaware_node_devices_load(fd, "n0001", "mlx5_0", err, sizeof err), 1);
  assert_int_equal(topoaware::kept_node_devices(ex)->gpus.size(), 4);
  assert_int_equal(topoaware_node_devices_load(fd, "n0001", "mlx5_0", err, sizeof err), 0);
  // A file of the wrong owner is not trusted (as root: another user's file).
  if (geteuid() == 0) {
    assert_int_equal(chown(file.c_str(), 65534, 65534), 0);
    assert_int_equal(topoaware_node_devices_load(fd, "n0001", "mlx5_0", err, sizeof err), 1);
    assert_int_equal(lstat(file.c_str(), &st), 0);
    assert_int_equal(st.st_uid, 0);
  }

  // A symbolic link at the file's name is replaced, never followed.
  const std::string victim = d + "/victim", link = d + "/node.n0002.devices";
  write_text(victim, "keep");
  assert_int_equal(symlink(victim.c_str(), link.c_str()), 0);
  assert_int_equal(topoaware_node_devices_load(fd, "n0002", nullptr, err, sizeof err), 1);
  assert_string_equal(read_text(victim).c_str(), "keep");
  assert_int_equal(lstat(link.c_str(), &st), 0);
  assert_true(S_ISREG(st.st_mode));

  // A node name that is not a plain file name: no file, an error, the probe kept all the same.
  assert_int_equal(topoaware_node_devices_load(fd, "../n0003", nullptr, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "not a plain file name"));
  assert_non_null(topoaware::kept_node_devices({}));
  assert_false(std::filesystem::exists(d + "/../n0003"));
  // No state folder open: the probe kept, an error that says so.
  assert_int_equal(topoaware_node_devices_load(-1, "n0003", nullptr, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "no state folder is open"));
  assert_non_null(topoaware::kept_node_devices({}));

  unsetenv("HWLOC_XMLFILE");
  close(fd);
  std::filesystem::remove_all(d);
}

void test_missing_xml(void **) {
  topoaware::ProbeOptions o;
  o.xml = "/nonexistent/topo.xml";
  bool thrown = false;
  try {
    topoaware::probe_node_devices(o);
  } catch (const std::exception &) {
    thrown = true;
  }
  assert_true(thrown);
}

void test_split_names(void **) {
  auto v = topoaware::split_names(" mlx5_8, ,mlx5_9 ");
  assert_int_equal(v.size(), 2);
  assert_string_equal(v[1].c_str(), "mlx5_9");
}

// --- task plan ---
std::string write_topology(int nvlink_domain_size = 0) {
  // 1 pod-less fabric, 4 leaf groups x 2 hosts n0001..n0008 (NVLink domains of
  // nvlink_domain_size hosts in name order, as topoaware generate --nvlink-domain-size gives).
  topoaware::Topology t = enginetest::make_topology(0, 4, 2);
  if (nvlink_domain_size > 0)
    topoaware::apply_nvlink_domains(t, topoaware::synthetic_nvlink_domains(t, nvlink_domain_size, 4), nullptr, nullptr);
  const std::string json = topoaware::to_json(t);
  char path[] = "/tmp/ta-test-topo-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  std::ofstream(path) << json;
  return path;
}

const char *var(const topoaware_task_plan_t *p, const char *name) {
  for (uint32_t i = 0; i < topoaware_task_plan_vars(p); i++)
    if (!std::strcmp(topoaware_task_plan_name(p, i), name)) return topoaware_task_plan_value(p, i);
  return nullptr;
}

// A task of an 8-rank step on n0001-n0002 (4 tasks a node, the recorded 4-GPU node's hwloc XML),
// GPU hints on. topo, xml and l must outlive the returned input.
topoaware_task_in_t two_node_task(const std::string &topo, const std::string &xml, const topoaware_layout_t *l,
                                  const char *self, uint32_t local_id, uint32_t job_id, const char *cuda_visible) {
  topoaware_task_in_t in = {};
  in.topology_path = topo.c_str();
  in.nodelist = "n[0001-0002]";
  in.self = self;
  in.local_id = local_id;
  in.local_tasks = 4;
  in.total_tasks = 8;
  in.job_id = job_id;
  in.layout = l;
  in.cuda_visible_devices = cuda_visible;
  in.hwloc_xml = xml.c_str();
  in.gpu_hints = 1;
  return in;
}

void test_task_plan(void **) {
  const std::string topo = write_topology();
  const std::string xml = fixture("jrc0323-4gpu-4mlx5.xml");
  topoaware_layout_t l = {2, 1, 1, 2, 2, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
  topoaware_task_in_t in = two_node_task(topo, xml, &l, "n0002", 1, 12345, "3,2,1,0");
  char err[1024] = "";
  topoaware_task_plan_t *p = topoaware_task_plan(&in, err, sizeof err);
  if (!p) std::fprintf(stderr, "%s\n", err);
  assert_non_null(p);
  // n0001 and n0002 are in the same leaf group: node order n0001, n0002; local rank 1 on node 1 is
  // rank 5: tp=1, dp=0 (ranks 4..7 are pp=1: tp + 2*dp).
  assert_string_equal(var(p, "TOPOAWARE_NODE_RANK"), "1");
  assert_string_equal(var(p, "RANK"), "5");
  assert_string_equal(var(p, "TOPOAWARE_TP_RANK"), "1");
  assert_string_equal(var(p, "TOPOAWARE_DP_RANK"), "0");
  assert_string_equal(var(p, "TOPOAWARE_PP_RANK"), "1");
  assert_string_equal(var(p, "WORLD_SIZE"), "8");
  assert_string_equal(var(p, "LOCAL_RANK"), "1");
  assert_string_equal(var(p, "MASTER_ADDR"), "n0001");
  assert_string_equal(var(p, "MASTER_PORT"), "20345");
  assert_string_equal(var(p, "CUDA_VISIBLE_DEVICES"), "0,1,2,3");
  assert_string_equal(var(p, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  assert_string_equal(var(p, "TOPOAWARE_GPU"), "0000:44:00.0");
  assert_string_equal(var(p, "TOPOAWARE_NIC"), "mlx5_1");
  assert_string_equal(var(p, "NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
  assert_int_equal(topoaware_task_plan_kind(p, 0), TOPOAWARE_VAR_OURS);
  topoaware_task_plan_free(p);

  // A stale copy (hash differs): no plan at all.
  in.expected_hash = "sha256:0000";
  assert_null(topoaware_task_plan(&in, err, sizeof err));
  assert_non_null(std::strstr(err, "stale"));
  in.expected_hash = nullptr;
  // UUIDs: CUDA_VISIBLE_DEVICES left alone, a note, the rest still set.
  in.cuda_visible_devices = "GPU-1234";
  p = topoaware_task_plan(&in, err, sizeof err);
  assert_non_null(p);
  assert_null(var(p, "CUDA_VISIBLE_DEVICES"));
  assert_true(*topoaware_task_plan_note(p));
  topoaware_task_plan_free(p);
  // Wrong task count, unknown node, missing file: errors.
  in.cuda_visible_devices = "0,1,2,3";
  in.total_tasks = 4;
  assert_null(topoaware_task_plan(&in, err, sizeof err));
  in.total_tasks = 8;
  in.self = "n0009";
  assert_null(topoaware_task_plan(&in, err, sizeof err));
  in.self = "n0002";
  // What a client may send in the step's environment is bounded in bytes, not only in names (task_c.h):
  // a long prefix over a wide range, a list longer than the plugin reads, a huge CUDA_VISIBLE_DEVICES.
  const std::string wide = std::string(256, 'y') + "[1-131072]", huge = std::string(1u << 20, 'y') + "[1-131072]";
  for (const std::string *list : {&wide, &huge}) {
    in.nodelist = list->c_str();
    assert_null(topoaware_task_plan(&in, err, sizeof err));
    assert_non_null(std::strstr(err, "take more than 16777216 bytes"));
    topoaware_job_in_t job = {};
    job.topology_path = topo.c_str();
    job.nodelist = list->c_str();
    job.layout = &l;
    assert_null(topoaware_job_map(&job, err, sizeof err));
    assert_non_null(std::strstr(err, "take more than 16777216 bytes"));
  }
  const std::string too_long(TOPOAWARE_NODELIST_MAX_LEN + 1, 'n');
  in.nodelist = too_long.c_str();
  assert_null(topoaware_task_plan(&in, err, sizeof err));
  assert_non_null(std::strstr(err, "the node list is longer than 4194304 bytes"));
  in.nodelist = "n[0001-0002]";
  std::string cvd = "0";
  while (cvd.size() <= TOPOAWARE_CVD_MAX_LEN) cvd += ",0";
  in.cuda_visible_devices = cvd.c_str();
  p = topoaware_task_plan(&in, err, sizeof err);
  assert_non_null(p);
  assert_null(var(p, "CUDA_VISIBLE_DEVICES"));
  assert_non_null(std::strstr(topoaware_task_plan_note(p), "CUDA_VISIBLE_DEVICES is longer than 65536 bytes"));
  topoaware_task_plan_free(p);
  in.cuda_visible_devices = "0,1,2,3";
  in.topology_path = "/nonexistent/topology.json";
  assert_null(topoaware_task_plan(&in, err, sizeof err));
  unlink(topo.c_str());
}

// The list behind override_env=: exactly the variables a plan gives kind DEFAULT.
void test_default_vars(void **) {
  std::set<std::string> list;
  uint32_t i = 0;
  for (; topoaware_task_default_var(i); i++) list.insert(topoaware_task_default_var(i));
  assert_int_equal(list.size(), i);  // no duplicates
  assert_null(topoaware_task_default_var(i));
  assert_null(topoaware_task_default_var(1000));
  for (const char *n : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                        "CUDA_DEVICE_ORDER", "NCCL_IB_HCA", "NCCL_CROSS_NIC", "NCCL_MNNVL_ENABLE", "NCCL_CUMEM_ENABLE"})
    assert_true(topoaware_task_is_default_var(n));
  assert_int_equal(list.size(), 11);
  for (const char *n : {"TOPOAWARE_RANK", "CUDA_VISIBLE_DEVICES", "rank", "", "RANK ", "SLURM_PROCID"})
    assert_false(topoaware_task_is_default_var(n));
  assert_false(topoaware_task_is_default_var(nullptr));

  // Every DEFAULT variable of a real plan is on the list, and nothing else is.
  const std::string topo = write_topology();
  const std::string xml = fixture("jrc0323-4gpu-4mlx5.xml");
  topoaware_layout_t l = {2, 1, 1, 2, 2, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
  topoaware_task_in_t in = two_node_task(topo, xml, &l, "n0001", 0, 7, "0,1,2,3");
  char err[1024] = "";
  topoaware_task_plan_t *p = topoaware_task_plan(&in, err, sizeof err);
  assert_non_null(p);
  uint32_t defaults = 0;
  for (uint32_t k = 0; k < topoaware_task_plan_vars(p); k++) {
    const bool dflt = topoaware_task_plan_kind(p, k) == TOPOAWARE_VAR_DEFAULT;
    assert_int_equal(dflt, topoaware_task_is_default_var(topoaware_task_plan_name(p, k)));
    defaults += dflt;
  }
  assert_int_equal(defaults, 8);  // all but NCCL_CROSS_NIC (this fabric is not rail-optimized) and MNNVL's
  topoaware_task_plan_free(p);
  unlink(topo.c_str());
}

// slurmctld's node order for the job's own step (its nodes, its layout) sets the ranks without the
// topology; an order that is not the step's nodes (a step on part of the job) leaves the ranks to
// the topology file, on the step's node list expanded once for both.
void test_task_plan_placed_order(void **) {
  const std::string topo = write_topology();
  const std::string xml = fixture("jrc0323-4gpu-4mlx5.xml");
  topoaware_layout_t l = {2, 1, 1, 2, 2, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
  char lay[256], err[1024] = "";
  assert_int_equal(topoaware_layout_string(&l, lay, sizeof lay), 0);
  topoaware_topo_t *t = topoaware_topo_load(topo.c_str(), err, sizeof err);
  assert_non_null(t);
  const std::string hash = topoaware_topo_hash(t);
  topoaware_topo_free(t);
  topoaware_task_in_t in = two_node_task(topo, xml, &l, "n0002", 1, 12345, "3,2,1,0");
  in.expected_hash = hash.c_str();
  in.placed_layout = lay;
  in.placed_order = "n0002,n0001";  // the job's own nodes, n0002 first
  topoaware_task_plan_t *p = topoaware_task_plan(&in, err, sizeof err);
  if (!p) std::fprintf(stderr, "%s\n", err);
  assert_non_null(p);
  assert_string_equal(var(p, "TOPOAWARE_NODE_RANK"), "0");
  assert_string_equal(var(p, "RANK"), "1");
  assert_string_equal(var(p, "MASTER_ADDR"), "n0002");
  assert_string_equal(var(p, "TOPOAWARE_TOPO_HASH"), hash.c_str());
  topoaware_task_plan_free(p);
  // Not the step's nodes: the topology's order (n0001, n0002), as without a placed order.
  for (const char *other : {"n0002,n0003", "n0002", "n0002,n0001,n0003", "n0002,n0002"}) {
    in.placed_order = other;
    p = topoaware_task_plan(&in, err, sizeof err);
    if (!p) std::fprintf(stderr, "%s: %s\n", other, err);
    assert_non_null(p);
    assert_string_equal(var(p, "TOPOAWARE_NODE_RANK"), "1");
    assert_string_equal(var(p, "RANK"), "5");
    assert_string_equal(var(p, "MASTER_ADDR"), "n0001");
    topoaware_task_plan_free(p);
  }
  // A step node list that does not read fails the same with or without a placed order.
  in.nodelist = "n[0001-0002";
  assert_null(topoaware_task_plan(&in, err, sizeof err));
  assert_non_null(std::strstr(err, "host list"));
  in.placed_order = nullptr;
  assert_null(topoaware_task_plan(&in, err, sizeof err));
  assert_non_null(std::strstr(err, "host list"));
  unlink(topo.c_str());
}

// Without a placed order the task computes the job's node order from the topology once: every
// node's ranks are those the C API's topoaware_node_ranks gives, also when the step lists its
// nodes out of that order (n0005 before n0001 here: the order is n0001, n0003, n0005).
void test_task_plan_topology_order(void **) {
  const std::string topo = write_topology();
  const std::string xml = fixture("jrc0323-4gpu-4mlx5.xml");
  topoaware_layout_t l = {2, 1, 1, 3, 2, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};  // 12 ranks, 4 a node
  const char *names[] = {"n0005", "n0001", "n0003"};
  char err[1024] = "";
  topoaware_topo_t *t = topoaware_topo_load(topo.c_str(), err, sizeof err);
  assert_non_null(t);
  for (const char *self : names) {
    topoaware_rank_t want[4];
    uint32_t count = 0;
    assert_int_equal(topoaware_node_ranks(t, names, 3, &l, self, want, 4, &count, err, sizeof err), 0);
    assert_int_equal(count, 4);
    for (uint32_t local = 0; local < 4; ++local) {
      topoaware_task_in_t in = two_node_task(topo, xml, &l, self, local, 77, "0,1,2,3");
      in.nodelist = "n0005,n0001,n0003";
      in.total_tasks = 12;
      topoaware_task_plan_t *p = topoaware_task_plan(&in, err, sizeof err);
      if (!p) std::fprintf(stderr, "%s: %s\n", self, err);
      assert_non_null(p);
      assert_string_equal(var(p, "RANK"), std::to_string(want[local].rank).c_str());
      assert_string_equal(var(p, "TOPOAWARE_NODE_RANK"), std::to_string(want[local].node_rank).c_str());
      assert_string_equal(var(p, "TOPOAWARE_DP_RANK"), std::to_string(want[local].dp).c_str());
      assert_string_equal(var(p, "TOPOAWARE_PP_RANK"), std::to_string(want[local].pp).c_str());
      assert_string_equal(var(p, "MASTER_ADDR"), "n0001");
      topoaware_task_plan_free(p);
    }
  }
  topoaware_topo_free(t);
  unlink(topo.c_str());
}

// Multi-node NVLink domains (n0001-n0004 and n0005-n0008): a rank whose node shares its domain with
// other nodes of the step gets NCCL's MNNVL hints, required when the TP groups span nodes.
void test_task_plan_mnnvl(void **) {
  const std::string topo = write_topology(4);
  const std::string xml = fixture("jrc0323-4gpu-4mlx5.xml");
  topoaware_layout_t l = {8, 1, 1, 1, 1, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};  // tp=8 on 2 nodes of 4 GPUs
  topoaware_task_in_t in = two_node_task(topo, xml, &l, "n0002", 0, 9, "0,1,2,3");
  char err[1024] = "";
  topoaware_task_plan_t *p = topoaware_task_plan(&in, err, sizeof err);
  if (!p) std::fprintf(stderr, "%s\n", err);
  assert_non_null(p);
  assert_string_equal(var(p, "NCCL_MNNVL_ENABLE"), "1");
  assert_string_equal(var(p, "NCCL_CUMEM_ENABLE"), "1");
  assert_string_equal(var(p, "TOPOAWARE_NVLINK_DOMAIN"), "00000000-0000-4000-8000-000000000001:1");
  assert_string_equal(var(p, "TOPOAWARE_TP_RANK"), "4");
  topoaware_task_plan_free(p);
  // TP inside the node, two nodes of one domain: MNNVL left to NCCL's detection (2)
  topoaware_layout_t l2 = {4, 1, 1, 2, 1, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
  in.layout = &l2;
  p = topoaware_task_plan(&in, err, sizeof err);
  assert_non_null(p);
  assert_string_equal(var(p, "NCCL_MNNVL_ENABLE"), "2");
  topoaware_task_plan_free(p);
  // The step's two nodes in different domains: no MNNVL hint
  in.nodelist = "n[0004-0005]";
  in.self = "n0004";
  p = topoaware_task_plan(&in, err, sizeof err);
  assert_non_null(p);
  assert_null(var(p, "NCCL_MNNVL_ENABLE"));
  assert_null(var(p, "NCCL_CUMEM_ENABLE"));
  assert_null(var(p, "TOPOAWARE_NVLINK_DOMAIN"));
  topoaware_task_plan_free(p);
  // No GPU hints asked: none of them either
  in.nodelist = "n[0001-0002]";
  in.self = "n0001";
  in.gpu_hints = 0;
  p = topoaware_task_plan(&in, err, sizeof err);
  assert_non_null(p);
  assert_null(var(p, "NCCL_MNNVL_ENABLE"));
  topoaware_task_plan_free(p);
  unlink(topo.c_str());
}

std::vector<std::string> lines(const char *text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

// The job map: hostfile line r = the node of rank r, in the same order as every task's
// TOPOAWARE_NODE_RANK; the rank map's coordinates, leaf and pod.
void test_job_map(void **) {
  const std::string topo = write_topology();  // leaf groups {n0001,n0002} {n0003,n0004} {n0005,n0006} ...
  // tp=2 dp=2 pp=2 on 4 nodes of 2 GPUs: a DP ring (4 ranks) is a segment of 2 nodes. n0003+n0004
  // make a whole segment on one leaf group; n0001 and n0005 are the remainders, combined after it.
  topoaware_layout_t l = {2, 1, 1, 2, 2, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
  topoaware_job_in_t in = {};
  in.topology_path = topo.c_str();
  in.nodelist = "n[0001,0003-0005]";
  in.layout = &l;
  char err[1024] = "";
  topoaware_job_map_t *m = topoaware_job_map(&in, err, sizeof err);
  if (!m) std::fprintf(stderr, "%s\n", err);
  assert_non_null(m);
  assert_int_equal(topoaware_job_map_ranks(m), 8);
  assert_int_equal(topoaware_job_map_nodes(m), 4);
  assert_string_equal(topoaware_job_map_hostfile(m), "n0003\nn0003\nn0004\nn0004\nn0001\nn0001\nn0005\nn0005\n");
  const std::vector<std::string> hf = lines(topoaware_job_map_hostfile(m));
  // The same order as the task plan's TOPOAWARE_NODE_RANK on each node (what RANK follows).
  for (const char *self : {"n0001", "n0003", "n0004", "n0005"}) {
    topoaware_task_in_t t = {};
    t.topology_path = topo.c_str();
    t.nodelist = in.nodelist;
    t.self = self;
    t.local_tasks = 2;
    t.total_tasks = 8;
    t.job_id = 1;
    t.layout = &l;
    for (uint32_t local = 0; local < 2; local++) {
      t.local_id = local;
      topoaware_task_plan_t *p = topoaware_task_plan(&t, err, sizeof err);
      assert_non_null(p);
      const int rank = std::atoi(var(p, "RANK"));
      assert_string_equal(hf[size_t(rank)].c_str(), self);
      topoaware_task_plan_free(p);
    }
  }
  const std::vector<std::string> rm = lines(topoaware_job_map_rankmap(m));
  assert_int_equal(rm.size(), 9);
  assert_true(
      rm[0].rfind("# topoaware rank map: tp=2,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp, 4 nodes, topology sha256:",
                  0) == 0);
  assert_string_equal(
      rm[1].c_str(), "rank=0 node=0 host=n0003 local=0 tp=0 cp=0 ep=0 dp=0 pp=0 edp=0 leaf=leaf1r0 leaf_group=1 pod=-");
  assert_string_equal(
      rm[6].c_str(), "rank=5 node=2 host=n0001 local=1 tp=1 cp=0 ep=0 dp=0 pp=1 edp=0 leaf=leaf0r0 leaf_group=0 pod=-");
  assert_string_equal(
      rm[8].c_str(), "rank=7 node=3 host=n0005 local=1 tp=1 cp=0 ep=0 dp=1 pp=1 edp=1 leaf=leaf2r0 leaf_group=2 pod=-");
  assert_string_equal(topoaware_job_map_hash(m), rm[0].substr(rm[0].find("sha256:")).c_str());
  // The expected hash matches: the same map.
  const std::string h = topoaware_job_map_hash(m);
  in.expected_hash = h.c_str();
  topoaware_job_map_t *m2 = topoaware_job_map(&in, err, sizeof err);
  assert_non_null(m2);
  assert_string_equal(topoaware_job_map_hostfile(m2), topoaware_job_map_hostfile(m));
  topoaware_job_map_free(m2);
  topoaware_job_map_free(m);

  // No map rather than a wrong one.
  in.expected_hash = "sha256:0000";
  assert_null(topoaware_job_map(&in, err, sizeof err));
  assert_non_null(std::strstr(err, "stale"));
  in.expected_hash = nullptr;
  in.nodelist = "n[0001-0003]";  // 8 ranks on 3 nodes
  assert_null(topoaware_job_map(&in, err, sizeof err));
  assert_non_null(std::strstr(err, "do not split evenly"));
  in.nodelist = "n[0001,0099]";
  assert_null(topoaware_job_map(&in, err, sizeof err));
  assert_non_null(std::strstr(err, "n0099"));
  in.nodelist = "n[0001,0001]";
  assert_null(topoaware_job_map(&in, err, sizeof err));
  topoaware_layout_t big = {1024, 1, 1, 1024, 2, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};  // 2M ranks on one node
  in.nodelist = "n0001";
  in.layout = &big;
  assert_null(topoaware_job_map(&in, err, sizeof err));
  assert_non_null(std::strstr(err, "more than the"));
  in.layout = &l;
  in.topology_path = "/nonexistent/topology.json";
  assert_null(topoaware_job_map(&in, err, sizeof err));
  assert_null(topoaware_job_map(nullptr, err, sizeof err));
  assert_string_equal(topoaware_job_map_hostfile(nullptr), "");
  topoaware_job_map_free(nullptr);
  unlink(topo.c_str());
}

// --- per-job folders (capi/job_dir_c.h) ---
constexpr uid_t kUser = 65534;  // nobody
constexpr gid_t kGroup = 65534;

std::string make_state_dir() {
  char tmpl[] = "/tmp/ta-test-state-XXXXXX";
  assert_non_null(mkdtemp(tmpl));
  assert_int_equal(chmod(tmpl, 0755), 0);
  return tmpl;
}

std::string slurp(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Runs f in a child process as kUser:kGroup; returns its exit status (0 = all checks passed).
template <class F>
int as_user(F f) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setresgid(kGroup, kGroup, kGroup) != 0 || setresuid(kUser, kUser, kUser) != 0)
      _exit(99);
    _exit(f());
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 98;
}

void test_state_dir(void **) {
  char err[1024] = "";
  if (geteuid() != 0) skip();  // owners are root's to give
  const std::string d = make_state_dir();
  int fd = topoaware_state_dir_open(d.c_str(), 0, err, sizeof err);
  assert_true(fd >= 0);
  close(fd);
  // Writable by others, a symbolic link, a relative path, someone else's: refused.
  assert_int_equal(chmod(d.c_str(), 0775), 0);
  assert_int_equal(topoaware_state_dir_open(d.c_str(), 0, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "owned by root and writable only by root"));
  assert_int_equal(chmod(d.c_str(), 0755), 0);
  const std::string link = d + ".link";
  assert_int_equal(symlink(d.c_str(), link.c_str()), 0);
  assert_int_equal(topoaware_state_dir_open(link.c_str(), 0, err, sizeof err), -1);
  assert_int_equal(topoaware_state_dir_open(link.c_str(), 1, err, sizeof err), -1);
  unlink(link.c_str());
  assert_int_equal(topoaware_state_dir_open("tmp/state", 1, err, sizeof err), -1);
  assert_int_equal(chown(d.c_str(), kUser, kGroup), 0);
  assert_int_equal(topoaware_state_dir_open(d.c_str(), 0, err, sizeof err), -1);
  assert_int_equal(chown(d.c_str(), 0, 0), 0);
  // Missing: ENOENT without create; made 0755 with it.
  const std::string sub = d + "/state";
  assert_int_equal(topoaware_state_dir_open(sub.c_str(), 0, err, sizeof err), -1);
  assert_int_equal(errno, ENOENT);
  fd = topoaware_state_dir_open(sub.c_str(), 1, err, sizeof err);
  assert_true(fd >= 0);
  struct stat st;
  assert_int_equal(fstat(fd, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0755);
  close(fd);
  // Every folder on the way is checked (a link on the way must never redirect root): state_dir=<d>/pub/ta/state with pub
  // writable by all. A user's link at pub/ta would make root's prolog write where it points.
  const std::string pub = d + "/pub", ta = pub + "/ta", deep = ta + "/state";
  const std::string elsewhere = d + "/elsewhere";
  assert_int_equal(mkdir(pub.c_str(), 0755), 0);
  assert_int_equal(mkdir(elsewhere.c_str(), 0755), 0);
  assert_int_equal(chmod(pub.c_str(), 01777), 0);
  assert_int_equal(symlink(elsewhere.c_str(), ta.c_str()), 0);
  assert_int_equal(lchown(ta.c_str(), kUser, kGroup), 0);
  assert_int_equal(topoaware_state_dir_open(deep.c_str(), 1, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "symbolic link"));
  assert_false(std::filesystem::exists(elsewhere + "/state"));  // nothing made through the link
  unlink(ta.c_str());
  // A root-owned folder in a sticky folder writable by all (as /tmp): no user may swap it. Safe.
  assert_int_equal(mkdir(ta.c_str(), 0755), 0);
  fd = topoaware_state_dir_open(deep.c_str(), 1, err, sizeof err);
  assert_true(fd >= 0);
  close(fd);
  // The same folder writable by all but not sticky: a user could rename ta away. Refused.
  assert_int_equal(chmod(pub.c_str(), 0777), 0);
  assert_int_equal(topoaware_state_dir_open(deep.c_str(), 0, err, sizeof err), -1);
  assert_non_null(std::strstr(err, (pub + " must be a folder owned by root").c_str()));
  assert_int_equal(chmod(pub.c_str(), 0755), 0);
  // A user's folder on the way: refused; a state folder itself may never be sticky and writable.
  assert_int_equal(chown(ta.c_str(), kUser, kGroup), 0);
  assert_int_equal(topoaware_state_dir_open(deep.c_str(), 0, err, sizeof err), -1);
  assert_non_null(std::strstr(err, (ta + " must be a folder owned by root").c_str()));
  assert_int_equal(chown(ta.c_str(), 0, 0), 0);
  assert_int_equal(chmod(deep.c_str(), 01777), 0);
  assert_int_equal(topoaware_state_dir_open(deep.c_str(), 0, err, sizeof err), -1);
  assert_int_equal(topoaware_state_dir_open((d + "/pub/../pub/ta/state").c_str(), 0, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "must not contain . or .."));
  std::filesystem::remove_all(d);
}

// The job folder's whole life: root makes it for the user, the user writes into it (a planted
// symbolic link is replaced, never followed), root removes everything without following links.
void test_job_dir(void **) {
  char err[1024] = "", name[32];
  if (geteuid() != 0) skip();
  assert_int_equal(topoaware_job_dir_name(4242, name, sizeof name), 0);
  assert_string_equal(name, "job.4242");
  assert_int_equal(topoaware_job_dir_name(4242, name, 5), -1);
  const std::string d = make_state_dir();
  const int sfd = topoaware_state_dir_open(d.c_str(), 0, err, sizeof err);
  assert_true(sfd >= 0);
  // Outside the state folder: what a hostile user would like root to touch.
  const std::string victim_dir = d + ".victim";
  assert_int_equal(mkdir(victim_dir.c_str(), 0755), 0);
  const std::string victim = victim_dir + "/precious";
  std::ofstream(victim) << "keep me\n";

  assert_int_equal(topoaware_job_dir_create(sfd, 4242, kUser, kGroup, err, sizeof err), 0);
  const std::string jd = d + "/job.4242";
  struct stat st;
  assert_int_equal(lstat(jd.c_str(), &st), 0);
  assert_true(S_ISDIR(st.st_mode));
  assert_int_equal(st.st_uid, kUser);
  assert_int_equal(st.st_gid, kGroup);
  assert_int_equal(st.st_mode & 07777, 0700);
  // Root may not use it as the user's folder (not its owner).
  assert_int_equal(topoaware_job_dir_open(sfd, 4242, err, sizeof err), -1);
  assert_int_equal(topoaware_job_dir_open(sfd, 4243, err, sizeof err), -1);
  assert_int_equal(errno, ENOENT);

  // As the user: open, plant links and junk, write the two files.
  const int rc = as_user([&] {
    char e[1024];
    const int jfd = topoaware_job_dir_open(sfd, 4242, e, sizeof e);
    if (jfd < 0) return 1;
    if (symlinkat(victim.c_str(), jfd, "rankmap") != 0) return 2;          // a file name pointing outside
    if (symlinkat(victim_dir.c_str(), jfd, "outside") != 0) return 3;      // a folder name pointing outside
    if (mkdirat(jfd, "a", 0700) != 0 || mkdirat(jfd, "a/b", 0555) != 0) return 4;  // nested, read-only
    if (symlinkat(victim_dir.c_str(), jfd, "a/b/up") != 0 && errno != EACCES) return 5;
    if (mkfifoat(jfd, "fifo", 0600) != 0) return 6;
    const char text[] = "n0001\nn0002\n";
    if (topoaware_file_write_at(jfd, "hostfile", text, sizeof text - 1, e, sizeof e) != 0) return 7;
    if (topoaware_file_write_at(jfd, "rankmap", "x\n", 2, e, sizeof e) != 0) return 8;
    if (topoaware_file_write_at(jfd, "../escape", "x", 1, e, sizeof e) != -1) return 9;
    if (topoaware_file_write_at(jfd, "..", "x", 1, e, sizeof e) != -1) return 10;
    if (topoaware_file_write_at(jfd, "", "x", 1, e, sizeof e) != -1) return 11;
    close(jfd);
    return 0;
  });
  assert_int_equal(rc, 0);
  assert_string_equal(slurp(victim).c_str(), "keep me\n");  // the planted link was replaced, not followed
  assert_int_equal(lstat((jd + "/rankmap").c_str(), &st), 0);
  assert_true(S_ISREG(st.st_mode));
  assert_int_equal(st.st_uid, kUser);
  assert_int_equal(st.st_mode & 07777, 0600);
  assert_int_equal(lstat((jd + "/hostfile").c_str(), &st), 0);
  assert_int_equal(st.st_uid, kUser);
  assert_string_equal(slurp(jd + "/hostfile").c_str(), "n0001\nn0002\n");
  assert_int_equal(access((jd + "/.hostfile." + std::to_string(getpid())).c_str(), F_OK), -1);  // no temp left

  // The prolog again for the same user (another slurmd of this host): kept, closed again.
  assert_int_equal(chmod(jd.c_str(), 0755), 0);
  assert_int_equal(topoaware_job_dir_create(sfd, 4242, kUser, kGroup, err, sizeof err), 0);
  assert_int_equal(access((jd + "/hostfile").c_str(), F_OK), 0);
  assert_int_equal(lstat(jd.c_str(), &st), 0);
  assert_int_equal(st.st_mode & 07777, 0700);
  // A job of another user with the same id (a node that crashed): a fresh, empty folder for it.
  assert_int_equal(topoaware_job_dir_create(sfd, 4242, kUser - 1, kGroup - 1, err, sizeof err), 0);
  assert_int_equal(access((jd + "/hostfile").c_str(), F_OK), -1);
  assert_int_equal(lstat(jd.c_str(), &st), 0);
  assert_int_equal(st.st_uid, kUser - 1);
  assert_int_equal(st.st_mode & 07777, 0700);
  assert_int_equal(topoaware_job_dir_create(sfd, 4242, kUser, kGroup, err, sizeof err), 0);
  assert_int_equal(lstat(jd.c_str(), &st), 0);
  assert_int_equal(st.st_uid, kUser);
  const int rc2 = as_user([&] {
    char e[1024];
    const int jfd = topoaware_job_dir_open(sfd, 4242, e, sizeof e);
    if (jfd < 0) return 1;
    if (symlinkat(victim_dir.c_str(), jfd, "outside") != 0 || mkdirat(jfd, "a", 0700) != 0 ||
        mkdirat(jfd, "a/b", 0700) != 0 || symlinkat(victim.c_str(), jfd, "a/b/link") != 0 ||
        topoaware_file_write_at(jfd, "hostfile", "n\n", 2, e, sizeof e) != 0 || fchmod(jfd, 0500) != 0)
      return 2;  // the user even makes its folder read-only
    close(jfd);
    return 0;
  });
  assert_int_equal(rc2, 0);
  // The epilog: everything goes, nothing outside is touched.
  assert_int_equal(topoaware_job_dir_remove(sfd, 4242, err, sizeof err), 0);
  assert_int_equal(lstat(jd.c_str(), &st), -1);
  assert_string_equal(slurp(victim).c_str(), "keep me\n");
  assert_int_equal(access(victim.c_str(), F_OK), 0);
  // Gone already: fine.
  assert_int_equal(topoaware_job_dir_remove(sfd, 4242, err, sizeof err), 0);
  // A non-folder of that name (whatever put it there) is removed as a name.
  assert_int_equal(symlinkat(victim_dir.c_str(), sfd, "job.77"), 0);
  assert_int_equal(topoaware_job_dir_remove(sfd, 77, err, sizeof err), 0);
  assert_int_equal(access(victim.c_str(), F_OK), 0);
  assert_int_equal(topoaware_job_dir_create(sfd, 77, kUser, kGroup, err, sizeof err), 0);
  assert_int_equal(lstat((d + "/job.77").c_str(), &st), 0);
  assert_true(S_ISDIR(st.st_mode));
  assert_int_equal(topoaware_job_dir_remove(sfd, 77, err, sizeof err), 0);

  // Deeper than TOPOAWARE_JOB_DIR_MAX_DEPTH: the job folder goes, the part below that depth is
  // taken back from the user and moved aside in the state folder, and the sweeps of the epilogs
  // that follow remove it, TOPOAWARE_JOB_DIR_MAX_DEPTH levels at a time (100 levels: 3 sweeps).
  const auto leftovers = [&] {
    std::vector<std::string> out;
    for (const auto &e : std::filesystem::directory_iterator(d))
      if (e.path().filename().string().rfind(TOPOAWARE_LEFTOVER_PREFIX, 0) == 0) out.push_back(e.path().string());
    return out;
  };
  assert_int_equal(topoaware_job_dir_create(sfd, 9, kUser, kGroup, err, sizeof err), 0);
  std::string deep = d + "/job.9";
  for (int i = 0; i < 100; i++) {
    deep += "/d";
    assert_int_equal(mkdir(deep.c_str(), 0700), 0);
  }
  assert_int_equal(chown(deep.c_str(), kUser, kGroup), 0);
  assert_int_equal(topoaware_job_dir_remove(sfd, 9, err, sizeof err), 0);
  assert_int_equal(lstat((d + "/job.9").c_str(), &st), -1);
  assert_int_equal(leftovers().size(), 1);
  assert_int_equal(lstat(leftovers()[0].c_str(), &st), 0);
  assert_int_equal(st.st_uid, 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  assert_non_null(std::strstr(leftovers()[0].c_str(), "/.left.9."));
  int sweeps = 0;
  while (topoaware_state_sweep(sfd, err, sizeof err) == 1 && sweeps < 10) {
    assert_non_null(std::strstr(err, "moved aside again"));
    sweeps++;
  }
  assert_int_equal(sweeps, 2);  // the third found nothing more below the bound
  assert_int_equal(leftovers().size(), 0);
  assert_int_equal(topoaware_state_sweep(sfd, err, sizeof err), 0);  // none: nothing to do
  assert_int_equal(topoaware_job_dir_remove(sfd, 0, err, sizeof err), -1);

  // A wide and deep tree with links out of it: the epilog's walk is bounded in entries and in time,
  // says what it left, never follows a link, and a later run removes the rest.
  assert_int_equal(topoaware_job_dir_create(sfd, 11, kUser, kGroup, err, sizeof err), 0);
  const std::string wide = d + "/job.11";
  std::string level = wide;
  for (int depth = 0; depth < 20; depth++) {
    for (int i = 0; i < 150; i++) std::ofstream(level + "/f" + std::to_string(i)) << i;
    assert_int_equal(symlink(victim_dir.c_str(), (level + "/outside").c_str()), 0);
    assert_int_equal(symlink(victim.c_str(), (level + "/victim").c_str()), 0);
    level += "/sub";
    assert_int_equal(mkdir(level.c_str(), 0700), 0);
  }
  assert_int_equal(topoaware_job_dir_remove_bounded(sfd, 11, 1000, 60000, err, sizeof err), -1);
  assert_non_null(std::strstr(err, "stopped: more than 1000 entries"));
  assert_non_null(std::strstr(err, "(1001 entries looked at)"));
  assert_non_null(std::strstr(err, "; the rest is now .left.11."));
  assert_int_equal(lstat(wide.c_str(), &st), -1);  // the name is free: the next job 11 gets its folder
  assert_int_equal(leftovers().size(), 1);
  assert_int_equal(lstat(leftovers()[0].c_str(), &st), 0);
  assert_int_equal(st.st_uid, 0);  // taken back, left for the sweeps
  assert_int_equal(topoaware_job_dir_create(sfd, 11, kUser, kGroup, err, sizeof err), 0);
  assert_int_equal(topoaware_state_sweep_bounded(sfd, 1000000, 0, err, sizeof err), 1);
  assert_non_null(std::strstr(err, "took longer than 0 ms"));
  assert_non_null(std::strstr(err, "0 of 1 removed"));
  assert_int_equal(topoaware_state_sweep(sfd, err, sizeof err), 0);
  assert_int_equal(leftovers().size(), 0);
  assert_int_equal(lstat(wide.c_str(), &st), 0);  // the new job's folder is not a leftover
  assert_int_equal(topoaware_job_dir_remove(sfd, 11, err, sizeof err), 0);
  assert_int_equal(lstat(wide.c_str(), &st), -1);
  assert_string_equal(slurp(victim).c_str(), "keep me\n");
  assert_int_equal(std::distance(std::filesystem::directory_iterator(victim_dir), {}), 1);

  close(sfd);
  std::filesystem::remove_all(d);
  std::filesystem::remove_all(victim_dir);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jrc),           cmocka_unit_test(test_lassen),     cmocka_unit_test(test_hwloc_test_file),
      cmocka_unit_test(test_synthetic_hgx), cmocka_unit_test(test_env_xmlfile), cmocka_unit_test(test_missing_xml),
      cmocka_unit_test(test_split_names),   cmocka_unit_test(test_task_plan),   cmocka_unit_test(test_default_vars),
      cmocka_unit_test(test_task_plan_mnnvl), cmocka_unit_test(test_task_plan_placed_order),
      cmocka_unit_test(test_task_plan_topology_order),
      cmocka_unit_test(test_job_map),       cmocka_unit_test(test_state_dir),   cmocka_unit_test(test_job_dir),
      cmocka_unit_test(test_devices_cache),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
