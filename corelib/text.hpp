// Text that quotes input (file contents, user options, job names) on its way to a log, a terminal
// or a JSON file: printable, valid UTF-8, whatever the input held.
#pragma once

#include <string>
#include <string_view>

namespace topoaware {

// s with every byte that is not part of printable text replaced by '?': control bytes (tab and
// newline become a space), DEL, and bytes that do not form valid UTF-8 (overlong, surrogates,
// above U+10FFFF, truncated). Valid multi-byte characters are kept.
std::string printable_text(std::string_view s);

// The length of the longest prefix of s[0..n) that does not end inside a UTF-8 character (for
// cutting a printable text to fit a buffer).
size_t utf8_prefix(const char *s, size_t n);

}  // namespace topoaware
