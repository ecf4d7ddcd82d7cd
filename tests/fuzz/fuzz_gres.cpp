// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: GPU counts in Slurm's TRES request strings (plugins/common/ta_gres.c), read in
// slurmctld by job_submit/topoaware and the select plugin from job_desc->tres_per_node,
// tres_per_job, tres_per_task and tres_per_socket, as the client sent them.
//
// The input is up to four strings separated by NUL bytes, in that order; the job_submit plugin's
// sequence is followed: ta_tres_gpus on each (its buffer of TOPOAWARE_ERR_LEN), then, for a job
// that passed, ta_tres_gpu_type and ta_tres_without_gpu into buffers of TA_GRES_MAX_LEN + 1 and the
// rewritten tres_per_node ("gres/gpu:[TYPE:]N,REST").
//
// Invariants: an error is -1 with a non-empty printable message terminated in the buffer, and only
// for a string that is non-empty; success gives 0 GPUs for no GPU entry and 1..TA_GRES_MAX_GPUS
// otherwise; a string longer than TA_GRES_MAX_LEN bytes is refused; entry by entry, the count agrees
// with ta_gres_gpu_entry; after success the type and the rest fit the plugin's buffers, the rest
// holds no GPU entry (and reads as 0 GPUs), and the rewritten string reads back as exactly the new
// count and the same type.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "layout_c.h"

extern "C" {
#include "ta_gres.h"
}

namespace {

// Entry by entry, as the header defines it: the one GPU count, or -1 (invalid, 0, too many, twice).
long long reference_gpus(const std::string &tres) {
  long long found = -2;
  size_t at = 0;
  while (at < tres.size()) {
    size_t n = tres.find_first_of(",;", at);
    if (n == std::string::npos) n = tres.size();
    uint64_t c = 0;
    const enum ta_gres_entry r = ta_gres_gpu_entry(tres.data() + at, n - at, &c, nullptr, nullptr);
    if (r == TA_GRES_INVALID) return -1;
    if (r == TA_GRES_GPU) {
      if (c == 0 || c > TA_GRES_MAX_GPUS || found != -2) return -1;
      found = static_cast<long long>(c);
    }
    at = n + 1;
  }
  return found == -2 ? 0 : found;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string> tres;
  std::string cur;
  for (size_t i = 0; i < size && tres.size() < 4; ++i) {
    if (data[i] == '\0') {
      tres.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (tres.size() < 4) tres.push_back(cur);
  // A long string made of the first one repeated: the length check at its bound (libFuzzer's
  // -max_len keeps inputs shorter than TA_GRES_MAX_LEN).
  if (!tres[0].empty() && tres[0][0] == '@') {
    std::string big;
    while (big.size() <= TA_GRES_MAX_LEN) big += tres[0].substr(1).empty() ? std::string("x") : tres[0].substr(1);
    big.resize(TA_GRES_MAX_LEN - 1 + (tres[0].size() % 3));  // the bound -1, the bound, one past
    tres[0] = big;
  }
  static const char *const options[] = {"--gpus-per-node", "--gpus", "--gpus-per-task", "--gpus-per-socket"};
  uint32_t gpus[4] = {0, 0, 0, 0};
  bool ok = true;
  for (size_t i = 0; i < tres.size() && ok; ++i) {
    char err[TOPOAWARE_ERR_LEN];
    std::memset(err, 0x55, sizeof(err));
    const char *s = tres[i].c_str();  // a NUL inside cannot come: the input was split at them
    const int rc = ta_tres_gpus(i == 3 && tres[i].empty() ? nullptr : s, options[i], &gpus[i], err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == -1);
    const long long want = tres[i].size() > TA_GRES_MAX_LEN ? -1 : reference_gpus(tres[i]);
    if (rc != 0) {
      FUZZ_CHECK(!tres[i].empty());
      FUZZ_CHECK(fuzz::good_c_message(err, sizeof(err)));
      FUZZ_CHECK(std::strncmp(err, options[i], std::strlen(options[i])) == 0);
      FUZZ_CHECK(want == -1);
      ok = false;
    } else {
      FUZZ_CHECK(tres[i].size() <= TA_GRES_MAX_LEN);
      FUZZ_CHECK(gpus[i] <= TA_GRES_MAX_GPUS);
      FUZZ_CHECK(static_cast<long long>(gpus[i]) == want);
    }
  }
  if (!ok) return 0;

  // The job_submit plugin's rewrite of tres_per_node (to a layout's count of, say, 8 per node).
  char type[TA_GRES_MAX_LEN + 1], rest[TA_GRES_MAX_LEN + 1];
  const std::string &node = tres[0];
  FUZZ_CHECK(ta_tres_gpu_type(node.c_str(), type, sizeof(type)) == 0);
  FUZZ_CHECK(std::strlen(type) <= node.size());
  if (gpus[0] == 0) FUZZ_CHECK(type[0] == '\0');
  const int n = ta_tres_without_gpu(node.c_str(), rest, sizeof(rest));
  FUZZ_CHECK(n >= 0 && static_cast<size_t>(n) == std::strlen(rest) && static_cast<size_t>(n) <= node.size());
  uint32_t left = 1;
  char err[TOPOAWARE_ERR_LEN];
  FUZZ_CHECK(ta_tres_gpus(rest, "rest", &left, err, sizeof(err)) == 0 && left == 0);
  // A type of a single-entry string ("gpu:a100:8") holds no separator; the rewrite keeps it.
  if (std::strpbrk(type, ":=") == nullptr) {
    const uint32_t count = 1 + (gpus[0] % 8);
    const std::string rewritten =
        std::string("gres/gpu:") + type + (type[0] ? ":" : "") + std::to_string(count) + (n > 0 ? "," : "") + rest;
    uint32_t back = 0;
    char type2[TA_GRES_MAX_LEN + 1];
    if (rewritten.size() <= TA_GRES_MAX_LEN) {
      const int rc = ta_tres_gpus(rewritten.c_str(), "--gpus-per-node", &back, err, sizeof(err));
      FUZZ_CHECK(rc == 0 && back == count);
      FUZZ_CHECK(ta_tres_gpu_type(rewritten.c_str(), type2, sizeof(type2)) == 0 && std::strcmp(type, type2) == 0);
    }
  }
  return 0;
}
