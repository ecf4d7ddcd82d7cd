// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm host lists: "n[001-004,007],gpu1" <-> {"n001","n002","n003","n004","n007","gpu1"}.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace topoaware {

// Compresses names into Slurm's bracket form, keeping zero padding; order of first appearance of
// each prefix is kept, numbers are sorted within a prefix.
std::string hostlist_compress(const std::vector<std::string> &names);
// The bytes the expanded names of a list may take together, unless the caller says otherwise: far
// more than 1,048,576 real host names need, far less than a long prefix repeated that often.
inline constexpr size_t kHostlistMaxBytes = size_t(64) << 20;

// Expands a Slurm host list; throws std::invalid_argument naming the bad part. At most max_hosts
// names (a guard against "n[0-999999999]") taking at most max_bytes bytes together (a guard against
// "<a 1 MB name>[1-131072]"); both are checked before the names are made where the brackets tell.
std::vector<std::string> hostlist_expand(const std::string &list, size_t max_hosts = 1u << 20,
                                         size_t max_bytes = kHostlistMaxBytes);

}  // namespace topoaware
