// SPDX-License-Identifier: GPL-2.0-or-later
// Parsers of what topoaware defrag reads from squeue (defrag_parse.hpp).
#include "defrag_parse.hpp"

#include <sstream>

#include "text.hpp"

namespace topoaware {

namespace {

bool parse_u64(const std::string &s, uint64_t max, uint64_t &v) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    x = x * 10 + uint64_t(c - '0');
  }
  if (x > max) return false;
  v = x;
  return true;
}

}  // namespace

int64_t parse_slurm_duration(const std::string &raw) {
  // squeue's forms: "D-HH:MM:SS", "H:MM:SS", "M:SS" (and plain seconds); the leading field has
  // no upper bound of its own, the ones after it are 0..59 (hours after a day count 0..23).
  std::string t(trim(raw));
  uint64_t days = 0;
  const size_t dash = t.find('-');
  if (dash != std::string::npos) {
    if (!parse_u64(t.substr(0, dash), 100000, days)) return -1;
    t = t.substr(dash + 1);
  }
  const std::vector<std::string> parts = split(t, ':');
  if (parts.empty() || parts.size() > 3 || (dash != std::string::npos && parts.size() != 3)) return -1;
  uint64_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const uint64_t max = i == 0 ? (dash != std::string::npos ? 23 : (1ull << 31)) : 59;
    uint64_t v = 0;
    if (!parse_u64(parts[i], max, v)) return -1;
    total = total * (i == 0 ? 1 : 60) + v;
  }
  return int64_t(days * 86400 + total);
}

std::map<uint32_t, DefragJobTimes> parse_defrag_times(const std::string &text, size_t *bad) {
  std::map<uint32_t, DefragJobTimes> out;
  size_t nbad = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> f;
    std::string tok;
    while (ls >> tok) f.push_back(tok);
    if (f.empty()) continue;
    uint64_t id = 0, batch = 0, requeue = 0, restarts = 0;
    if (f.size() != 6 || !parse_u64(f[0], UINT32_MAX, id) || id == 0 || !parse_u64(f[1], 1, batch) ||
        !parse_u64(f[2], 1, requeue) || !parse_u64(f[3], UINT32_MAX, restarts)) {
      ++nbad;
      continue;
    }
    DefragJobTimes t;
    t.batch = batch == 1;
    t.requeue = int(requeue);
    t.restarts = uint32_t(restarts);
    t.time_left = parse_slurm_duration(f[4]);
    t.run_time = parse_slurm_duration(f[5]);
    out[uint32_t(id)] = t;
  }
  if (bad) *bad = nbad;
  return out;
}

bool parse_defrag_job_state(const std::string &text, uint32_t job_id, DefragJobState &out) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> f = split(line, '|', 3);
    uint64_t id = 0;
    if (f.size() != 3 || !parse_u64(std::string(trim(f[0])), UINT32_MAX, id) || id != job_id) continue;
    out.job_id = job_id;
    out.state = trim(f[1]);
    out.nodes = trim(f[2]);
    if (out.nodes == "(null)" || out.nodes == "None assigned") out.nodes.clear();
    return true;
  }
  return false;
}

}  // namespace topoaware
