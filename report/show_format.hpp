// SPDX-License-Identifier: GPL-2.0-or-later
// Formatting shared by the model (show_model.cpp) and the renderers (show_text.cpp, show_json.cpp,
// show_dot.cpp) of `topoaware show`: not part of its public entry (show.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layout.hpp"
#include "show_model.hpp"

namespace topoaware::show_fmt {

// A duration in seconds as "42s", "3m07s", "2h05m", "1d03h" (negative: 0s).
std::string age(int64_t s);
// "tp=8,pp=2,dp=2": the axes that are not 1 (tp always), the rank order if not Megatron's.
std::string layout_short(const Layout &l);
// Sorted distinct values as ranges: "0-7", "1", "0,2,4-5".
std::string ranges(std::vector<uint64_t> v);
// A topology hash cut to "sha256:" and its first 12 hex digits.
std::string short_hash(const std::string &h);

using Rows = std::vector<std::vector<std::string>>;
// Columns of text: UTF-8 continuation bytes take no column.
size_t columns(const std::string &s);
// Widens w to the widest cell of each column of rows.
void widen(std::vector<size_t> &w, const Rows &rows);
// Aligned columns (widths at least `w`); the last column is not padded. Rows of unequal length
// are fine.
std::string table(const Rows &rows, const std::string &indent, std::vector<size_t> w = {});

// Node rank of every host in the layout job that holds it (-1: none; a node shared by two layout
// jobs gets the last one's, and is only looked up for single-job nodes).
std::vector<int> node_ranks(const ShowModel &m);
// The job of that id; throws std::out_of_range if the model has no such job.
const ShowJob &job_or_throw(const ShowModel &m, uint32_t id);
// Name of the leaf switch of host h, "-" if none.
std::string leaf_name(const ShowModel &m, int h);

}  // namespace topoaware::show_fmt
