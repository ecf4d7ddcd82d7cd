// SPDX-License-Identifier: GPL-2.0-or-later
#include "lft_dump.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "text.hpp"

namespace topoaware {

namespace {

// Longer than any real path; a table that loops is not followed for ever.
constexpr int kMaxHops = 64;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool parse_hex(std::string_view s, uint64_t *v) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t x = 0;
  for (char c : s) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return false;
    x = x * 16 + uint64_t(d);
  }
  *v = x;
  return true;
}

// The hex digits after "0x" at `at`; npos-safe.
bool hex_after(std::string_view s, size_t at, uint64_t *v, size_t *end = nullptr) {
  if (at == std::string_view::npos || s.substr(at, 2) != "0x") return false;
  size_t e = at + 2;
  while (e < s.size() && std::isxdigit(static_cast<unsigned char>(s[e]))) ++e;
  if (end) *end = e;
  return parse_hex(s.substr(at + 2, e - at - 2), v);
}

// "(path #2 out of 4: portguid 0x...)", "(path #2 out of 4)", "(Channel Adapter portguid 0x...: 'x')".
void read_destination(std::string_view info, LidNote &note) {
  if (starts_with(info, "(")) info = info.substr(1);
  size_t pg = info.find("portguid ");
  if (pg != std::string_view::npos) hex_after(info, pg + 9, &note.port_guid);
  if (starts_with(info, "path #")) {
    size_t of = info.find(" out of ");
    if (of != std::string_view::npos) note.paths = std::atoi(std::string(info.substr(of + 8, 4)).c_str());
  } else if (pg != std::string_view::npos) {
    note.base = true;
  }
}

struct Block {
  SwitchLft sw;
  int listed = 0;
  int line = 0;
  bool top_listed = false;  // the header range's last LID has a line
};

}  // namespace

LftDump parse_lft_dump(std::istream &in, const std::string &filename) {
  LftDump dump;
  dump.source = filename;
  std::string raw;
  int lineno = 0;
  bool in_unicast = false, in_multicast = false;
  Block cur;
  auto fail = [&](const std::string &what) { throw ParseError(filename, lineno, what); };
  while (std::getline(in, raw)) {
    ++lineno;
    std::string_view line = trim(raw);
    if (line.empty() || starts_with(line, "ibwarn:")) continue;
    if (starts_with(line, "Unicast lids [")) {
      if (in_unicast) fail("a new table starts before the previous one's \"valid lids dumped\" line (truncated?)");
      // dump_fts and ibroute write the range in hex, OpenSM's own opensm-lfts.dump in decimal.
      unsigned lo = 0, hi = 0;
      const std::string l(line);
      if ((std::sscanf(l.c_str(), "Unicast lids [0x%x-0x%x] of switch", &lo, &hi) != 2 &&
           std::sscanf(l.c_str(), "Unicast lids [%u-%u] of switch", &lo, &hi) != 2) ||
          lo > hi)
        fail("\"Unicast lids [0xLO-0xHI] of switch ...\" header expected");
      if (hi > kMaxUnicastLid) fail("LID range ends above 0xbfff, the last unicast LID");
      size_t g = line.rfind(" guid 0x");
      cur = Block{};
      if (g == std::string_view::npos || !hex_after(line, g + 6, &cur.sw.guid))
        fail("no switch GUID (\"guid 0x...\") in the table's header");
      cur.sw.out.assign(size_t(hi) + 1, kNoRoute);
      cur.line = lineno;
      in_unicast = true;
      in_multicast = false;
      continue;
    }
    if (starts_with(line, "Multicast mlids [")) {
      if (in_unicast) fail("a multicast table starts inside a unicast one (truncated?)");
      in_multicast = true;
      continue;
    }
    if (in_multicast) continue;  // multicast tables are not routes of unicast traffic
    if (!in_unicast) fail("\"Unicast lids [...] of switch ...\" header expected (dump_fts or ibroute output)");
    if (starts_with(line, "Lid ") || starts_with(line, "Port ")) continue;  // column headings
    // The trailer: "12 valid lids dumped" (or "12 lids dumped" with -a).
    if (line.size() > 12 && line.substr(line.size() - 11) == "lids dumped" && std::isdigit(static_cast<unsigned char>(line[0]))) {
      int dumped = std::atoi(std::string(line).c_str());
      // OpenSM's opensm-lfts.dump counts the table's top LID rather than the lines.
      if (dumped != cur.listed && size_t(dumped) + 1 != cur.sw.out.size())
        fail("the table of " + guid_str(cur.sw.guid) + " says " + std::to_string(dumped) + " LIDs but lists " +
             std::to_string(cur.listed) + " (truncated?)");
      const size_t top = cur.sw.out.size() - 1;
      if (top > 0 && top % 64 == 0 && !cur.top_listed) dump.unlisted_top.emplace_back(cur.sw.guid, uint16_t(top));
      dump.switches.push_back(std::move(cur.sw));
      in_unicast = false;
      continue;
    }
    uint64_t lid = 0;
    size_t end = 0;
    if (!hex_after(line, 0, &lid, &end) || end >= line.size() || line[end] != ' ')
      fail("\"0xLID PORT : (destination)\" expected");
    unsigned port = 0;
    size_t p = end + 1, pe = p;
    while (pe < line.size() && std::isdigit(static_cast<unsigned char>(line[pe]))) ++pe;
    if (pe == p || pe - p > 3 || (port = unsigned(std::atoi(std::string(line.substr(p, pe - p)).c_str()))) > 255)
      fail("output port (0-255) expected after the LID");
    if (lid >= cur.sw.out.size()) fail("LID " + std::to_string(lid) + " is outside the table's range");
    cur.sw.out[lid] = uint8_t(port);
    ++cur.listed;
    if (lid + 1 == cur.sw.out.size()) cur.top_listed = true;
    std::string_view rest = trim(line.substr(pe));
    // LID 0 is reserved (no port answers to it): its entry stays in the table, but a destination
    // named on it is not a port's LID and is not kept.
    if (lid != 0 && (starts_with(rest, ":") || starts_with(rest, "#"))) {  // "#": OpenSM's own dump
      LidNote note;
      note.lid = uint16_t(lid);
      read_destination(trim(rest.substr(1)), note);
      if (note.port_guid || note.paths > 1) dump.notes.push_back(note);
    }
  }
  if (in_unicast) fail("the file ends inside the table of " + guid_str(cur.sw.guid) + " (truncated?)");
  if (dump.switches.empty()) fail("no unicast forwarding table (is this dump_fts or ibroute output?)");
  return dump;
}

LftDump parse_lft_dump_file(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw ParseError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  return parse_lft_dump(in, path);
}

void switch_lids_from_tables(std::vector<SwitchLft> &switches) {
  for (auto &s : switches) {
    if (s.lid) continue;
    for (size_t l = 1; l < s.out.size(); ++l)
      if (s.out[l] == 0) {
        s.lid = uint16_t(l);
        break;
      }
  }
}

std::vector<PortLid> lids_from_tables(const std::vector<SwitchLft> &switches, const Fabric &fabric,
                                      const std::vector<bool> &known) {
  std::unordered_map<uint64_t, const SwitchLft *> table;
  size_t top = 0;
  for (const auto &s : switches) table[s.guid] = &s, top = std::max(top, s.out.size());
  std::map<std::pair<uint64_t, int>, std::vector<uint16_t>> owned;
  for (size_t lid = 1; lid < top; ++lid) {
    if (lid < known.size() && known[lid]) continue;
    const SwitchLft *at = nullptr;
    for (const auto &s : switches)
      if (lid < s.out.size() && s.out[lid] != kNoRoute && s.out[lid] != 0) {
        at = &s;
        break;
      }
    for (int hop = 0; at && hop < kMaxHops; ++hop) {
      uint8_t port = lid < at->out.size() ? at->out[lid] : kNoRoute;
      const FabricNode *node = fabric.find(at->guid);
      if (port == kNoRoute || port == 0 || !node) break;
      auto pit = std::find_if(node->ports.begin(), node->ports.end(), [&](const Port &p) { return p.num == port; });
      if (pit == node->ports.end()) break;
      const FabricNode *peer = fabric.find(pit->remote_guid);
      if (!peer) break;
      if (peer->type != NodeType::Switch) {
        owned[{peer->guid, pit->remote_port}].push_back(uint16_t(lid));
        break;
      }
      auto next = table.find(peer->guid);
      at = next == table.end() ? nullptr : next->second;
    }
  }
  std::vector<PortLid> out;
  for (auto &[port, lids] : owned) {
    std::sort(lids.begin(), lids.end());
    PortLid pl{port.first, port.second, lids.front(), 0};
    // A port with LMC l answers to 2^l consecutive LIDs starting at a multiple of 2^l.
    size_t n = lids.size();
    bool run = lids.back() - lids.front() + 1u == n && (n & (n - 1)) == 0 && lids.front() % n == 0 && n <= 128;
    if (run)
      while ((1u << pl.lmc) < n) ++pl.lmc;
    out.push_back(pl);
  }
  return out;
}

Subnet resolve_lft_dump(const LftDump &dump, const Fabric &fabric, std::vector<std::string> &problems) {
  Subnet sn;
  for (const auto &s : dump.switches) {
    const FabricNode *n = fabric.find(s.guid);
    if (!n || n->type != NodeType::Switch) {
      problems.push_back(dump.source + ": switch " + guid_str(s.guid) + " is not in the fabric; its table is left out");
      continue;
    }
    sn.switches.push_back(s);
  }
  if (!dump.unlisted_top.empty()) {
    const auto &[guid, lid] = dump.unlisted_top.front();
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%04x", unsigned(lid));
    problems.push_back(dump.source + ": " + std::to_string(dump.unlisted_top.size()) +
                       " table(s) (the first of switch " + guid_str(guid) + ") end their range at LID " + hex +
                       " but do not list it: dump_fts (infiniband-diags 44.0) leaves out a table's last LID when "
                       "it starts a 64-LID block, so the route to it is unknown; read the tables live "
                       "(discover --routes) or dump them with ibroute");
  }
  switch_lids_from_tables(sn.switches);
  // Port GUID -> (node, port) of the CA ports (a switch's ports share the switch's port GUID).
  std::unordered_map<uint64_t, std::pair<uint64_t, int>> ca_port;
  for (const auto &n : fabric.nodes)
    if (n.type != NodeType::Switch)
      for (const auto &p : n.ports)
        if (p.port_guid) ca_port[p.port_guid] = {n.guid, p.num};
  // Each CA port's LIDs as the destination column names them. dump_fts names the base LID and marks
  // the others of an LMC range "path #k out of n"; OpenSM's dump names the port on every LID.
  std::map<uint16_t, int> paths;  // LID -> "out of n" on its line
  for (const auto &note : dump.notes)
    if (!note.base) paths[note.lid] = std::max(paths[note.lid], note.paths);
  std::map<std::pair<uint64_t, int>, std::set<uint16_t>> port_lids;
  for (const auto &note : dump.notes) {
    auto it = ca_port.find(note.port_guid);
    if (it != ca_port.end() && (note.base || note.port_guid)) port_lids[it->second].insert(note.lid);
  }
  std::map<std::pair<uint64_t, int>, PortLid> named;
  for (const auto &[port, lids] : port_lids) {
    PortLid pl{port.first, port.second, *lids.begin(), 0};
    size_t n = lids.size();
    auto pit = paths.find(uint16_t(pl.base_lid + 1));
    if (pit != paths.end()) n = std::max<size_t>(n, size_t(pit->second));
    const bool aligned = (n & (n - 1)) == 0 && pl.base_lid % n == 0 && n <= 128 &&
                         size_t(*lids.rbegin() - *lids.begin()) < n;
    if (aligned)
      while ((size_t(1) << pl.lmc) < n) ++pl.lmc;
    else
      problems.push_back(dump.source + ": " + guid_str(pl.guid) + " port " + std::to_string(pl.port) +
                         " is named by LIDs that are not one LMC range; its base LID " +
                         std::to_string(pl.base_lid) + " is kept");
    named.emplace(port, pl);
  }
  // Owners the destination column did not name (dump_fts -n, "node info not available"): from the tables.
  std::vector<bool> known(kMaxUnicastLid + 1, false);
  for (const auto &s : sn.switches)
    if (s.lid) known[s.lid] = true;
  for (const auto &[k, pl] : named)
    for (unsigned l = pl.base_lid; l < pl.base_lid + (1u << pl.lmc) && l <= kMaxUnicastLid; ++l) known[l] = true;
  for (const auto &pl : lids_from_tables(sn.switches, fabric, known)) named.emplace(std::make_pair(pl.guid, pl.port), pl);
  for (auto &[k, pl] : named) sn.ports.push_back(pl);
  return sn;
}

}  // namespace topoaware
