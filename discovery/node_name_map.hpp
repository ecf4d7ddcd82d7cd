// SPDX-License-Identifier: GPL-2.0-or-later
// ibnetdiscover's node-name-map: lines "<guid> <name>" (name may be quoted), '#' comments.
// GUIDs may be written 0x-hex, plain hex or as ibnetdiscover node ids ("H-0002c9...").
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ibnetdiscover_parser.hpp"  // ParseError

namespace topoaware {

struct NodeNameMap {
  std::map<uint64_t, std::string> names;
  std::map<uint64_t, int> lines;  // where each GUID was named, for messages
};

NodeNameMap read_node_name_map(const std::string &path);  // throws ParseError
}  // namespace topoaware
