// SPDX-License-Identifier: GPL-2.0-or-later
// Reads saved ibnetdiscover output: the default format (with or without "-g" grouping, old 2007
// variants with "Non-Chassis Nodes", "Switch 24 ..." / "Ca 2 ..." / "Rt" blocks) and the ports
// format of "ibnetdiscover -p".
#pragma once

#include <istream>
#include <stdexcept>
#include <string>

#include "fabric.hpp"

namespace topoaware {

struct ParseError : std::runtime_error {
  // "<file>:<line>: <what was found>; expected <what was expected>"
  ParseError(const std::string &file, int line, const std::string &msg);
  std::string file;
  int line;
};

enum class DumpFormat { Auto, Default, Ports };

// Throws ParseError on malformed or truncated input, or on input with no nodes at all.
Fabric parse_ibnetdiscover(std::istream &in, const std::string &filename,
                           DumpFormat format = DumpFormat::Auto);
Fabric parse_ibnetdiscover_file(const std::string &path, DumpFormat format = DumpFormat::Auto);

}  // namespace topoaware
