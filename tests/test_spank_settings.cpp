// SPDX-License-Identifier: GPL-2.0-or-later
// spank_topoaware's plugstack.conf arguments and the job's hash file: the core's parsers
// (corelib/spank_settings.hpp) and their C API (capi/task_c.h, capi/job_dir_c.h) as the plugin
// calls it. Every bad argument must be ignored with a printable message, and leave the others.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "job_dir_c.h"
#include "spank_settings.hpp"
#include "task_c.h"
#include "text.hpp"
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

const std::string kHash = "sha256:" + std::string(64, 'a');

SpankSettings parse(std::vector<const char *> args, std::vector<std::string> *warnings) {
  warnings->clear();
  return parse_spank_args(args, warnings);
}

bool contains(const std::string &hay, const std::string &needle) { return hay.find(needle) != std::string::npos; }

// One argument that must be ignored with one message containing `part`, and change nothing.
void ignored(const std::string &arg, const std::string &part) {
  std::vector<std::string> w;
  const SpankSettings before = parse({"topology=/etc/t.json", "state_dir=/run/x", "default_mode=strict"}, &w);
  assert_int_equal(w.size(), 0);
  const SpankSettings s = parse({"topology=/etc/t.json", "state_dir=/run/x", "default_mode=strict", arg.c_str()}, &w);
  if (w.size() != 1) fail_msg("%s: %zu messages", printable_text(arg).c_str(), w.size());
  assert_contains(w[0], part);
  assert_contains(w[0], "plugstack.conf argument");
  assert_true(printable_text(w[0]) == w[0]);
  assert_string_equal(s.topology.c_str(), before.topology.c_str());
  assert_string_equal(s.state_dir.c_str(), before.state_dir.c_str());
  assert_string_equal(s.exclude_nics.c_str(), before.exclude_nics.c_str());
  assert_int_equal(s.override_env, before.override_env);
  assert_true(s.default_mode == before.default_mode);
  assert_false(s.default_order.has_value());
  assert_false(s.default_max_wait.has_value());
}

void test_empty(void **) {
  std::vector<std::string> w;
  SpankSettings s = parse({}, &w);
  assert_int_equal(w.size(), 0);
  assert_true(s.topology.empty() && s.state_dir.empty() && s.exclude_nics.empty());
  assert_int_equal(s.override_env, 0);
  assert_false(s.default_order || s.default_mode || s.default_max_wait);
  s = parse({nullptr, nullptr}, &w);  // Slurm's av may hold NULLs: skipped
  assert_int_equal(w.size(), 0);
  s = parse({"exclude_nics=", "override_env=", "override_env=none"}, &w);  // empty lists: nothing, no message
  assert_int_equal(w.size(), 0);
  assert_int_equal(s.override_env, 0);
  assert_true(s.exclude_nics.empty());
}

void test_every_argument(void **) {
  std::vector<std::string> w;
  const SpankSettings s =
      parse({"topology=/etc/slurm/topology.json", "exclude_nics=mlx5_8,mlx5_9", "state_dir=/run/ta",
             "override_env=RANK,NCCL_IB_HCA", "default_order=tp-pp-dp", "default_mode=strict", "default_max_wait=2h"},
            &w);
  assert_int_equal(w.size(), 0);
  assert_string_equal(s.topology.c_str(), "/etc/slurm/topology.json");
  assert_string_equal(s.exclude_nics.c_str(), "mlx5_8,mlx5_9");
  assert_string_equal(s.state_dir.c_str(), "/run/ta");
  assert_true(s.overrides("RANK"));
  assert_true(s.overrides("NCCL_IB_HCA"));
  assert_false(s.overrides("LOCAL_RANK"));
  assert_false(s.overrides("BOGUS"));
  assert_false(s.overrides(""));
  assert_true(s.default_order == RankOrder::TpPpDp);
  assert_true(s.default_mode == TopoMode::Strict);
  assert_int_equal(*s.default_max_wait, 7200);
  // The default max wait has no unit: minutes, as --topo-max-wait.
  assert_int_equal(*parse({"default_max_wait=90"}, &w).default_max_wait, 5400);
  assert_int_equal(*parse({"default_max_wait=0"}, &w).default_max_wait, 0);
}

// A later good argument replaces an earlier one; a later bad one does not.
void test_last_good_wins(void **) {
  std::vector<std::string> w;
  SpankSettings s =
      parse({"topology=/a.json", "topology=/b.json", "default_order=tp-pp-dp", "default_order=tp-cp-ep-dp-pp"}, &w);
  assert_int_equal(w.size(), 0);
  assert_string_equal(s.topology.c_str(), "/b.json");
  assert_true(s.default_order == RankOrder::TpCpEpDpPp);
  s = parse({"topology=/a.json", "topology=relative.json", "default_mode=strict", "default_mode=never"}, &w);
  assert_int_equal(w.size(), 2);
  assert_string_equal(s.topology.c_str(), "/a.json");
  assert_true(s.default_mode == TopoMode::Strict);
}

void test_bad_values(void **) {
  ignored("topology=topology.json", "the topology file must be an absolute path");
  ignored("topology=", "the topology file must be an absolute path");
  ignored("state_dir=run/x", "state_dir must be an absolute path");
  ignored("state_dir=", "state_dir must be an absolute path");
  ignored("exclude_nics=mlx5_8;rm", "expected device names separated by commas");
  ignored("exclude_nics=mlx5 8", "expected device names separated by commas");
  ignored("default_order=x", "plugstack.conf argument 'default_order=x': unknown rank order");
  ignored("default_order=", "argument ignored");
  ignored("default_mode=sometimes", "argument ignored");
  ignored("default_max_wait=31d", "argument ignored");
  ignored("default_max_wait=-1", "argument ignored");
  ignored("default_max_wait=1x", "argument ignored");
  ignored("bogus=1", "unknown plugstack.conf argument 'bogus=1' ignored; the arguments are topology=PATH");
  ignored("topology", "unknown plugstack.conf argument 'topology' ignored");
  ignored("Topology=/a.json", "unknown plugstack.conf argument");
  ignored("", "unknown plugstack.conf argument '' ignored");
}

void test_too_long(void **) {
  ignored("topology=/" + std::string(kMaxTopologyArg, 'a'), "absolute path");
  ignored("state_dir=/" + std::string(kMaxStateDirArg, 'a'), "absolute path");
  ignored("exclude_nics=" + std::string(kMaxExcludeNicsArg + 1, 'a'), "device names");
  ignored("override_env=" + std::string(kMaxOverrideArg + 1, 'A'), "...' is too long; argument ignored");
  ignored("default_order=" + std::string(kMaxOptionValue + 1, 't'), "rank-order: value longer than 255 bytes");
  // The longest accepted values.
  std::vector<std::string> w;
  const std::string topo = "topology=/" + std::string(kMaxTopologyArg - 1, 'a');
  assert_int_equal(parse({topo.c_str()}, &w).topology.size(), kMaxTopologyArg);
  assert_int_equal(w.size(), 0);
  // A message quotes at most 128 bytes of the argument.
  const std::string arg = "bogus=" + std::string(300, 'x');
  parse({arg.c_str()}, &w);
  assert_int_equal(w.size(), 1);
  assert_contains(w[0], "'" + arg.substr(0, 128) + "' ignored");
  assert_false(contains(w[0], arg.substr(0, 129)));
}

void test_non_printable(void **) {
  std::vector<std::string> w;
  parse({"bogus=\x1b[31mred\x07\n\xff"}, &w);
  assert_int_equal(w.size(), 1);
  assert_true(printable_text(w[0]) == w[0]);
  assert_contains(w[0], "'bogus=?[31mred? ?'");
  // Paths are printed as they are later: control bytes and invalid UTF-8 are refused.
  ignored("topology=/etc/a\x01.json", "control characters");
  ignored("state_dir=/run/\xff", "control characters");
  ignored("state_dir=/run/a\tb", "control characters");
  // A valid UTF-8 path is fine.
  assert_string_equal(parse({"state_dir=/run/caf\xc3\xa9"}, &w).state_dir.c_str(), "/run/caf\xc3\xa9");
  assert_int_equal(w.size(), 0);
  // The quote is cut before 128 bytes without splitting a character.
  const std::string arg = "bogus=" + std::string(121, 'x') + "\xe2\x82\xac";  // the euro sign at bytes 127..129
  parse({arg.c_str()}, &w);
  assert_int_equal(w.size(), 1);
  assert_true(printable_text(w[0]) == w[0]);
  assert_contains(w[0], std::string(121, 'x') + "' ignored");
}

void test_override_env(void **) {
  std::vector<std::string> w;
  SpankSettings s = parse({"override_env=all"}, &w);
  assert_int_equal(w.size(), 0);
  assert_int_equal(s.override_env, (1u << kTaskDefaultVarCount) - 1);
  for (const char *n : kTaskDefaultVars) assert_true(s.overrides(n));
  // The lists of several arguments add up; empty entries are skipped.
  s = parse({"override_env=,,RANK,", "override_env=MASTER_PORT"}, &w);
  assert_int_equal(w.size(), 0);
  assert_true(s.overrides("RANK") && s.overrides("MASTER_PORT"));
  assert_false(s.overrides("MASTER_ADDR"));
  // An unknown name is reported and skipped; the others still apply.
  s = parse({"override_env=RANK,BOGUS,rank,CUDA_DEVICE_ORDER"}, &w);
  assert_int_equal(w.size(), 2);
  assert_contains(w[0], "'BOGUS' is not a variable topoaware sets only when unset (those are RANK,LOCAL_RANK,");
  assert_contains(w[0], "NCCL_CROSS_NIC,NCCL_MNNVL_ENABLE,NCCL_CUMEM_ENABLE, or all); name ignored");
  assert_contains(w[1], "'rank' is not a variable");  // names are case-sensitive, as the environment
  assert_true(s.overrides("RANK") && s.overrides("CUDA_DEVICE_ORDER"));
  assert_int_equal(__builtin_popcount(s.override_env), 2);
  // "all" and "none" are whole values, not list entries.
  s = parse({"override_env=RANK,all"}, &w);
  assert_int_equal(w.size(), 1);
  assert_int_equal(s.override_env, 1u);
  s = parse({"override_env=RANK", "override_env=none"}, &w);
  assert_int_equal(s.override_env, 1u);
  // A name with control bytes is quoted printably.
  parse({"override_env=RA\x1bNK"}, &w);
  assert_int_equal(w.size(), 1);
  assert_contains(w[0], "'RA?NK' is not a variable");
  assert_string_equal(task_default_var_list().c_str(),
                      "RANK,LOCAL_RANK,WORLD_SIZE,LOCAL_WORLD_SIZE,MASTER_ADDR,MASTER_PORT,CUDA_DEVICE_ORDER,"
                      "NCCL_IB_HCA,NCCL_CROSS_NIC,NCCL_MNNVL_ENABLE,NCCL_CUMEM_ENABLE");
  assert_int_equal(task_default_var_index("NCCL_CUMEM_ENABLE"), int(kTaskDefaultVarCount) - 1);
  assert_int_equal(task_default_var_index("PATH"), -1);
}

void test_hash(void **) {
  assert_true(valid_topology_hash(kHash));
  assert_true(valid_topology_hash("sha256:0123456789abcdef" + std::string(48, '0')));
  assert_false(valid_topology_hash(""));
  assert_false(valid_topology_hash("sha256:"));
  assert_false(valid_topology_hash("sha256:" + std::string(63, 'a')));
  assert_false(valid_topology_hash("sha256:" + std::string(65, 'a')));
  assert_false(valid_topology_hash("sha256:" + std::string(64, 'A')));  // lower case only
  assert_false(valid_topology_hash("sha256:" + std::string(63, 'a') + "g"));
  assert_false(valid_topology_hash("sha512:" + std::string(64, 'a')));
  assert_false(valid_topology_hash(" " + kHash));
  // The file: its first line, if that is a hash.
  assert_string_equal(job_hash_file_name(42).c_str(), "job.42.hash");
  assert_string_equal(job_hash_file_text(kHash).c_str(), (kHash + "\n").c_str());
  assert_string_equal(job_hash_from_text(kHash + "\n").c_str(), kHash.c_str());
  assert_string_equal(job_hash_from_text(kHash).c_str(), kHash.c_str());
  assert_string_equal(job_hash_from_text(kHash + "\nmore lines\n").c_str(), kHash.c_str());
  assert_string_equal(job_hash_from_text(kHash + std::string("\0junk", 5)).c_str(), kHash.c_str());
  assert_string_equal(job_hash_from_text(kHash + std::string(200, 'b')).c_str(), "");  // one long line
  assert_string_equal(job_hash_from_text(kHash + " \n").c_str(), "");
  assert_string_equal(job_hash_from_text("\n" + kHash).c_str(), "");
  assert_string_equal(job_hash_from_text("").c_str(), "");
  assert_string_equal(job_hash_from_text("\xff\xfe\x01").c_str(), "");
  bool threw = false;
  try {
    job_hash_file_text("sha256:\n" + std::string(64, 'a'));
  } catch (const ConfigError &e) {
    threw = true;
    assert_true(printable_text(e.what()) == e.what());
  }
  assert_true(threw);
}

// How slurmctld placed the job, after the hash: both layout and order or neither; never a line
// that could be read as something else.
void test_placement(void **) {
  const std::string lay = "tp=8,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp";
  JobPlacement p;
  p.hash = kHash;
  p.layout = lay;
  p.order = "n0005,n0006,n0001,n0002";
  p.rail_optimized = true;
  const std::string text = job_placement_file_text(p);
  assert_string_equal(text.c_str(),
                      (kHash + "\nlayout " + lay + "\nrail_optimized 1\norder n0005,n0006,n0001,n0002\n").c_str());
  JobPlacement q = job_placement_from_text(text);
  assert_string_equal(q.hash.c_str(), kHash.c_str());
  assert_string_equal(q.layout.c_str(), lay.c_str());
  assert_string_equal(q.order.c_str(), p.order.c_str());
  assert_true(q.rail_optimized && q.has_order());
  assert_string_equal(job_hash_from_text(text).c_str(), kHash.c_str());  // older readers: the hash
  // Only the hash: no order.
  q = job_placement_from_text(kHash + "\n");
  assert_false(q.has_order());
  assert_string_equal(q.hash.c_str(), kHash.c_str());
  // A layout or order with a character that may not be there: neither is written.
  for (const char *bad : {"n1 n2", "n1\nlayout x", "", "n1;rm"}) {
    JobPlacement b = p;
    b.order = bad;
    assert_string_equal(job_placement_file_text(b).c_str(), (kHash + "\n").c_str());
    b = p;
    b.layout = bad;
    assert_string_equal(job_placement_file_text(b).c_str(), (kHash + "\n").c_str());
  }
  JobPlacement big = p;
  big.order = std::string(kMaxJobOrder + 1, 'n');
  assert_string_equal(job_placement_file_text(big).c_str(), (kHash + "\n").c_str());
  // Damaged or foreign text: the hash if its line is good, never a half placement.
  for (const std::string &t :
       {text.substr(0, text.size() - 1), kHash + "\nlayout " + lay + "\norder n1\n",
        kHash + "\nlayout " + lay + "\nrail_optimized 2\norder n1\n", kHash + "\nlayout " + lay + "\nfoo 1\norder n1\n",
        kHash + "\nlayout " + lay + "\nrail_optimized 1\norder n1 n2\n"}) {
    q = job_placement_from_text(t);
    assert_false(q.has_order());
    assert_string_equal(q.hash.c_str(), kHash.c_str());
  }
  assert_false(job_placement_from_text("x\nlayout " + lay + "\nrail_optimized 1\norder n1\n").has_order());
}

// The C API: messages through the callback, the values in the C structure.
void collect(void *ctx, const char *msg) { static_cast<std::vector<std::string> *>(ctx)->push_back(msg); }

void test_c_args(void **) {
  topoaware_spank_args_t a;
  char err[TOPOAWARE_ERR_LEN];
  std::vector<std::string> w;
  const char *av[] = {"topology=/etc/t.json",
                      "bogus",
                      nullptr,
                      "override_env=NCCL_IB_HCA,X",
                      "default_order=tp-pp-dp",
                      "default_mode=strict",
                      "default_max_wait=90s",
                      "exclude_nics=mlx5_1"};
  assert_int_equal(topoaware_spank_args_parse(&a, 8, const_cast<char *const *>(av), collect, &w, err, sizeof err), 0);
  assert_int_equal(w.size(), 2);
  assert_contains(w[0], "unknown plugstack.conf argument 'bogus'");
  assert_contains(w[1], "'X' is not a variable");
  assert_string_equal(a.topology, "/etc/t.json");
  assert_string_equal(a.exclude_nics, "mlx5_1");
  assert_string_equal(a.state_dir, "");
  assert_string_equal(topoaware_spank_state_dir(&a), "/run/topoaware");
  assert_int_equal(topoaware_spank_args_overrides(&a, "NCCL_IB_HCA"), 1);
  assert_int_equal(topoaware_spank_args_overrides(&a, "RANK"), 0);
  assert_int_equal(topoaware_spank_args_overrides(&a, nullptr), 0);
  assert_int_equal(topoaware_spank_args_overrides(nullptr, "RANK"), 0);
  assert_true(a.has_default_order && a.default_order == TOPOAWARE_ORDER_TP_PP_DP);
  assert_true(a.has_default_mode && a.default_mode == TOPOAWARE_MODE_STRICT);
  assert_true(a.has_default_max_wait && a.default_max_wait == 90);
  // No callback: still parsed; nothing given: all clear.
  const char *av2[] = {"state_dir=/run/x", "default_mode=prefer", "nonsense"};
  assert_int_equal(topoaware_spank_args_parse(&a, 3, const_cast<char *const *>(av2), nullptr, nullptr, err, sizeof err),
                   0);
  assert_string_equal(topoaware_spank_state_dir(&a), "/run/x");
  assert_string_equal(a.topology, "");
  assert_true(!a.has_default_order && a.has_default_mode && a.default_mode == TOPOAWARE_MODE_PREFER);
  assert_int_equal(topoaware_spank_args_parse(&a, 0, nullptr, nullptr, nullptr, err, sizeof err), 0);
  assert_int_equal(a.override_env, 0);
  assert_int_equal(topoaware_spank_args_parse(nullptr, 0, nullptr, nullptr, nullptr, err, sizeof err), -1);
  // The C names of the default variables are the core's.
  for (uint32_t i = 0; i < kTaskDefaultVarCount; i++)
    assert_string_equal(topoaware_task_default_var(i), kTaskDefaultVars[i]);
  assert_null(topoaware_task_default_var(uint32_t(kTaskDefaultVarCount)));
}

void test_c_hash_file(void **) {
  char dir[] = "/tmp/ta-hash-XXXXXX", buf[128], err[TOPOAWARE_ERR_LEN];
  assert_non_null(mkdtemp(dir));
  const int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  assert_true(dfd >= 0);
  assert_int_equal(topoaware_topo_hash_valid(kHash.c_str()), 1);
  assert_int_equal(topoaware_topo_hash_valid("sha256:x"), 0);
  assert_int_equal(topoaware_topo_hash_valid(nullptr), 0);
  // None yet.
  assert_int_equal(topoaware_job_hash_read(dfd, 7, buf, sizeof buf), 0);
  assert_string_equal(buf, "");
  assert_int_equal(topoaware_job_hash_remove(dfd, 7, err, sizeof err), 0);
  // Written, read back, removed.
  assert_int_equal(topoaware_job_hash_write(dfd, 7, kHash.c_str(), nullptr, nullptr, 0, err, sizeof err), 0);
  const std::string path = std::string(dir) + "/job.7.hash";
  struct stat st;
  assert_int_equal(stat(path.c_str(), &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);  // root's alone: slurmstepd reads it as root
  assert_int_equal(st.st_uid, geteuid());
  assert_int_equal(st.st_size, 72);
  assert_int_equal(topoaware_job_hash_read(dfd, 7, buf, sizeof buf), 1);
  assert_string_equal(buf, kHash.c_str());
  assert_int_equal(topoaware_job_hash_read(dfd, 7, buf, 71), 0);  // does not fit: none
  assert_int_equal(topoaware_job_hash_read(dfd, 7, buf, 72), 1);
  char *lay = nullptr, *order = nullptr;
  int rail = -1;
  assert_int_equal(topoaware_job_placement_read(dfd, 7, &lay, &order, &rail), 0);  // only a hash
  assert_null(lay);
  assert_int_equal(topoaware_job_hash_remove(dfd, 7, err, sizeof err), 0);
  assert_int_equal(access(path.c_str(), F_OK), -1);
  // With the placement: read back by both readers.
  assert_int_equal(topoaware_job_hash_write(dfd, 7, kHash.c_str(), "tp=2,cp=1,ep=1,dp=1,pp=1,rank-order=tp-pp-dp",
                                            "b,a", 1, err, sizeof err),
                   0);
  assert_int_equal(topoaware_job_hash_read(dfd, 7, buf, sizeof buf), 1);
  assert_string_equal(buf, kHash.c_str());
  assert_int_equal(topoaware_job_placement_read(dfd, 7, &lay, &order, &rail), 1);
  assert_string_equal(lay, "tp=2,cp=1,ep=1,dp=1,pp=1,rank-order=tp-pp-dp");
  assert_string_equal(order, "b,a");
  assert_int_equal(rail, 1);
  std::free(lay);
  std::free(order);
  assert_int_equal(topoaware_job_hash_remove(dfd, 7, err, sizeof err), 0);
  // An invalid hash is not written.
  assert_int_equal(topoaware_job_hash_write(dfd, 8, "sha256:\x01", nullptr, nullptr, 0, err, sizeof err), -1);
  assert_contains(err, "is not a topology hash");
  assert_true(printable_text(err) == err);
  assert_int_equal(access((std::string(dir) + "/job.8.hash").c_str(), F_OK), -1);
  // A damaged file reads as none.
  FILE *f = std::fopen((std::string(dir) + "/job.9.hash").c_str(), "w");
  assert_non_null(f);
  std::fputs("not a hash\n", f);
  std::fclose(f);
  assert_int_equal(topoaware_job_hash_read(dfd, 9, buf, sizeof buf), 0);
  // A symbolic link is never followed, neither written through nor read.
  const std::string target = std::string(dir) + "/target";
  f = std::fopen(target.c_str(), "w");
  assert_non_null(f);
  std::fputs("the target's own bytes\n", f);
  std::fclose(f);
  assert_int_equal(symlink(target.c_str(), (std::string(dir) + "/job.10.hash").c_str()), 0);
  assert_int_equal(topoaware_job_hash_read(dfd, 10, buf, sizeof buf), 0);
  // Written as a new file in its place: the link goes, its target keeps its bytes and its mode.
  struct stat before;
  assert_int_equal(stat(target.c_str(), &before), 0);
  assert_int_equal(topoaware_job_hash_write(dfd, 10, kHash.c_str(), nullptr, nullptr, 0, err, sizeof err), 0);
  struct stat at_name;
  assert_int_equal(lstat((std::string(dir) + "/job.10.hash").c_str(), &at_name), 0);
  assert_true(S_ISREG(at_name.st_mode));
  assert_int_equal(topoaware_job_hash_read(dfd, 10, buf, sizeof buf), 1);
  struct stat target_now;
  assert_int_equal(stat(target.c_str(), &target_now), 0);
  assert_int_equal(target_now.st_mode, before.st_mode);
  std::ifstream kept(target);
  std::string line;
  std::getline(kept, line);
  assert_string_equal(line.c_str(), "the target's own bytes");
  assert_int_equal(topoaware_job_hash_remove(dfd, 10, err, sizeof err), 0);
  assert_int_equal(access(target.c_str(), F_OK), 0);
  // A folder where the file goes: refused, left alone, no temporary file left beside it.
  assert_int_equal(mkdirat(dfd, "job.12.hash", 0700), 0);
  assert_int_equal(topoaware_job_hash_write(dfd, 12, kHash.c_str(), nullptr, nullptr, 0, err, sizeof err), -1);
  assert_contains(err, "job.12.hash: ");
  assert_int_equal(unlinkat(dfd, "job.12.hash", AT_REMOVEDIR), 0);
  DIR *d = opendir(dir);
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d));)
    if (std::strncmp(e->d_name, "job.12.hash", 11) == 0) fail_msg("left behind: %s", e->d_name);
  closedir(d);
  // A bad folder descriptor.
  assert_int_equal(topoaware_job_hash_write(-1, 11, kHash.c_str(), nullptr, nullptr, 0, err, sizeof err), -1);
  assert_int_equal(topoaware_job_hash_read(-1, 11, buf, sizeof buf), 0);
  unlink(target.c_str());
  unlink((std::string(dir) + "/job.9.hash").c_str());
  close(dfd);
  rmdir(dir);
}

}  // namespace

int main() {
  const CMUnitTest tests[] = {
      cmocka_unit_test(test_empty),        cmocka_unit_test(test_every_argument), cmocka_unit_test(test_last_good_wins),
      cmocka_unit_test(test_bad_values),   cmocka_unit_test(test_too_long),       cmocka_unit_test(test_non_printable),
      cmocka_unit_test(test_override_env), cmocka_unit_test(test_hash),           cmocka_unit_test(test_placement),
      cmocka_unit_test(test_c_args),       cmocka_unit_test(test_c_hash_file),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
