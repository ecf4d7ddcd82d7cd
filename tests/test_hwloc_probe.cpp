// topology/hwloc_probe over the recorded GPU nodes in tests/fixtures/hwloc (PROVENANCE.md) and the
// synthetic HGX-style node, with the expected GPUs, NICs and pairs written by reading the
// recordings (lstopo-no-graphics --of console -i FILE); and the task plan of src/task_c.h.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "engine_topologies.hpp"
#include "hwloc_probe.hpp"
#include "task_c.h"
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
std::string write_topology() {
  // 1 pod-less fabric, 4 leaf groups x 2 hosts n0001..n0008.
  topoaware::Topology t = enginetest::make_topology(0, 4, 2);
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

void test_task_plan(void **) {
  const std::string topo = write_topology();
  const std::string xml = fixture("jrc0323-4gpu-4mlx5.xml");
  topoaware_layout_t l = {2, 1, 1, 2, 2, TOPOAWARE_ORDER_TP_CP_EP_DP_PP};
  topoaware_task_in_t in = {};
  in.topology_path = topo.c_str();
  in.nodelist = "n[0001-0002]";
  in.self = "n0002";
  in.local_id = 1;
  in.local_tasks = 4;
  in.total_tasks = 8;
  in.job_id = 12345;
  in.layout = &l;
  in.cuda_visible_devices = "3,2,1,0";
  in.hwloc_xml = xml.c_str();
  in.gpu_hints = 1;
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
  in.topology_path = "/nonexistent/topology.json";
  assert_null(topoaware_task_plan(&in, err, sizeof err));
  unlink(topo.c_str());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jrc),           cmocka_unit_test(test_lassen),     cmocka_unit_test(test_hwloc_test_file),
      cmocka_unit_test(test_synthetic_hgx), cmocka_unit_test(test_env_xmlfile), cmocka_unit_test(test_missing_xml),
      cmocka_unit_test(test_split_names),   cmocka_unit_test(test_task_plan),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
