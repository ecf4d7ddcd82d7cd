// SPDX-License-Identifier: GPL-2.0-or-later
// Text that quotes input (file contents, user options, job names) on its way to a log, a terminal
// or a JSON file: printable, valid UTF-8, whatever the input held. Also the one trim and split of
// the tree, and the one escaping of text into Graphviz DOT (quoted strings and HTML-like labels).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace topoaware {

// s with every byte that is not part of printable text replaced by '?': control bytes (tab and
// newline become a space), DEL, and bytes that do not form valid UTF-8 (overlong, surrogates,
// above U+10FFFF, truncated). Valid multi-byte characters are kept.
std::string printable_text(std::string_view s);

// The length of the longest prefix of s[0..n) that does not end inside a UTF-8 character (for
// cutting a printable text to fit a buffer).
size_t utf8_prefix(const char *s, size_t n);

// Blank bytes: space, tab, CR, LF, VT and FF (what isspace() takes in the C locale, whatever the
// process's locale).
inline constexpr std::string_view kBlanks = " \t\r\n\v\f";

// s without leading and trailing bytes of `blanks`. A view into s: keep s alive while it is used.
std::string_view trim(std::string_view s, std::string_view blanks = kBlanks);

// The fields of s between separators, in order, empty ones kept: "a,,b" -> {"a", "", "b"}, "" ->
// {""}. With max_fields n > 0, only the first n-1 separators split: the last field keeps the rest
// ("a|b|c" with n = 2 -> {"a", "b|c"}).
std::vector<std::string> split(std::string_view s, char sep, size_t max_fields = 0);

// A list such as "mlx5_0, mlx5_1,,": the fields between separators, trimmed, empty ones dropped.
std::vector<std::string> split_list(std::string_view s, char sep = ',', std::string_view blanks = kBlanks);

// s as the inside of a double-quoted Graphviz DOT string (a label, a title): '"' and '\\' are
// escaped, a newline becomes DOT's line break "\\n", and the rest goes through printable_text
// (other control bytes and bytes that are not UTF-8 cannot reach Graphviz). Whatever s holds,
// "\"" + dot_escape(s) + "\"" is one DOT string.
std::string dot_escape(std::string_view s);

// s as XML text (Graphviz HTML-like labels, SVG): printable_text, then '&', '<', '>' and '"' as
// entities. Whatever s holds, the result is well-formed XML character data and attribute text.
std::string xml_escape(std::string_view s);

}  // namespace topoaware
