// SPDX-License-Identifier: GPL-2.0-or-later
// Formatting shared by the model and the renderers of `topoaware show` (show_format.hpp).
#include "show_format.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace topoaware::show_fmt {

std::string age(int64_t s) {
  if (s < 0) s = 0;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  return fmt::format("{}d{:02}h", s / 86400, (s % 86400) / 3600);
}

// "tp=8,pp=2,dp=2": the axes that are not 1 (tp always), the rank order if not Megatron's.
std::string layout_short(const Layout &l) {
  std::string s = fmt::format("tp={}", l.tp);
  if (l.cp != 1) s += fmt::format(",cp={}", l.cp);
  if (l.ep != 1) s += fmt::format(",ep={}", l.ep);
  if (l.pp != 1) s += fmt::format(",pp={}", l.pp);
  if (l.dp != 1) s += fmt::format(",dp={}", l.dp);
  if (l.order != RankOrder::TpCpEpDpPp) s += std::string(",rank-order=") + rank_order_name(l.order);
  return s;
}

// Sorted distinct values as ranges: "0-7", "1", "0,2,4-5".
std::string ranges(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", v[i]) : fmt::format("{}-{}", v[i], v[j]);
    i = j + 1;
  }
  return out;
}

std::string short_hash(const std::string &h) { return h.size() > 19 ? h.substr(0, 19) : h; }

// Columns of text: UTF-8 continuation bytes take no column.
size_t columns(const std::string &s) {
  size_t n = 0;
  for (char c : s) n += ((unsigned char)c & 0xc0) != 0x80;
  return n;
}

void widen(std::vector<size_t> &w, const Rows &rows) {
  for (const auto &r : rows)
    for (size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], columns(r[i]));
    }
}

// Aligned columns (widths at least `w`); the last column is not padded. Rows of unequal length
// are fine.
std::string table(const Rows &rows, const std::string &indent, std::vector<size_t> w) {
  widen(w, rows);
  std::string out;
  for (const auto &r : rows) {
    std::string line = indent;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(w[i] - columns(r[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// Node rank of every host in the layout job that holds it (-1: none; a node shared by two layout
// jobs gets the last one's, and is only looked up for single-job nodes).
std::vector<int> node_ranks(const ShowModel &m) {
  std::vector<int> r(m.nodes.size(), -1);
  for (const ShowJob &j : m.jobs)
    for (size_t k = 0; k < j.order.size(); ++k) r[size_t(j.order[k])] = int(k);
  return r;
}

const ShowJob &job_or_throw(const ShowModel &m, uint32_t id) {
  const ShowJob *j = m.find(id);
  if (!j) throw std::out_of_range(fmt::format("job {} is not running or pending (squeue does not list it)", id));
  return *j;
}

std::string leaf_name(const ShowModel &m, int h) {
  const int s = m.topo->hosts[size_t(h)].leaf;
  return s >= 0 && size_t(s) < m.topo->switches.size() ? m.topo->switches[size_t(s)].name : "-";
}

}  // namespace topoaware::show_fmt
