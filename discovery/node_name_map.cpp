// SPDX-License-Identifier: GPL-2.0-or-later
// ibnetdiscover's node-name-map (rdma-core util/node_name_map.c): one "<guid> <name>" per line,
// blank lines and '#' comments ignored, the name optionally in double quotes, a '#' comment may
// follow it. rdma-core reads the GUID with strtoull(..., 0); admins also write the node ids of
// ibnetdiscover output ("H-0002c9...") and bare hex, so every form parse_guid() knows is taken.
//
// Stricter than rdma-core on purpose: rdma-core skips a line without a name and keeps the first
// of two names for one GUID without a word; here both are errors, because a map is the source of
// Slurm node names and a silent mistake places jobs on the wrong hosts.
#include "node_name_map.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

#include "text.hpp"

namespace topoaware {

namespace {

constexpr size_t kMaxLineLength = 4096;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace

NodeNameMap read_node_name_map(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw ParseError(path, 0, std::string("cannot open node-name map: ") + std::strerror(errno) +
                                  "; expected a readable file of '<guid> <name>' lines");
  if (S_ISDIR(st.st_mode)) throw ParseError(path, 0, "is a directory; expected a node-name map file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ParseError(path, 0, std::string("cannot open node-name map: ") + std::strerror(errno) +
                                  "; expected a readable file of '<guid> <name>' lines");
  NodeNameMap map;
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    if (raw.size() > kMaxLineLength)
      throw ParseError(path, line, "line is longer than " + std::to_string(kMaxLineLength) +
                                       " characters; expected '<guid> <name>'");
    for (size_t i = 0; i < raw.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(raw[i]);
      if ((c < 0x20 && !is_blank(static_cast<char>(c))) || c == 0x7f)
        throw ParseError(path, line, "control character at column " + std::to_string(i + 1) +
                                         "; expected printable text");
    }
    std::string_view s = trim(raw);
    if (s.empty() || s[0] == '#') continue;
    size_t end = 0;
    while (end < s.size() && !is_blank(s[end]) && s[end] != '#' && s[end] != '"') ++end;
    std::string token(s.substr(0, end));
    uint64_t guid = 0;
    if (!parse_guid(token, &guid))
      throw ParseError(path, line, "'" + token +
                                       "' is not a GUID; expected 0x<hex>, <hex> or H-/S-/R-<hex> (at most 16 "
                                       "hex digits) followed by a name");
    std::string_view rest = trim(s.substr(end));
    std::string name;
    if (!rest.empty() && rest.front() == '"') {
      size_t close = rest.find('"', 1);
      if (close == std::string_view::npos)
        throw ParseError(path, line, "the name after " + token + " has no closing quote; expected \"<name>\"");
      name = std::string(trim(rest.substr(1, close - 1)));
      std::string_view after = trim(rest.substr(close + 1));
      if (!after.empty() && after.front() != '#')
        throw ParseError(path, line, "'" + std::string(after) + "' after the quoted name; expected the end of the "
                                                               "line or a '#' comment");
    } else {
      size_t stop = rest.find_first_of("#\"");
      name = std::string(trim(rest.substr(0, stop)));
    }
    if (name.empty())
      throw ParseError(path, line, "no name after " + token + "; expected '<guid> <name>'");
    auto have = map.names.find(guid);
    if (have != map.names.end()) {
      if (have->second != name)
        throw ParseError(path, line, guid_str(guid) + " is named '" + name + "' here but '" + have->second +
                                         "' at line " + std::to_string(map.lines[guid]) +
                                         "; expected one name per GUID");
      continue;  // the same entry twice is harmless; keep the first line for messages
    }
    map.names.emplace(guid, name);
    map.lines.emplace(guid, line);
  }
  if (in.bad()) throw ParseError(path, line, "read error; expected the rest of the node-name map");
  return map;
}

}  // namespace topoaware
