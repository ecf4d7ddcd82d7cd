// Pieces of the topoaware command shared by its subcommands.
#pragma once

#include <string>

namespace topoaware {

// Runs Graphviz's `dot -Tsvg` on DOT text (no shell involved); throws std::runtime_error with
// dot's message, or a hint to install graphviz when dot is missing.
std::string dot_to_svg(const std::string &dot);

}  // namespace topoaware
