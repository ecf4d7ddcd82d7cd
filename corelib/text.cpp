// SPDX-License-Identifier: GPL-2.0-or-later
// See text.hpp.
#include "text.hpp"

namespace topoaware {

namespace {

// Length of the valid UTF-8 character at s[i] (2-4), or 0 if there is none.
size_t utf8_char(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n;
  unsigned lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
  else
    return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xbf) return 0;
  return n;
}

}  // namespace

std::string printable_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
      ++i;
    } else if (c == '\t' || c == '\n' || c == '\r') {
      out += ' ';
      ++i;
    } else if (size_t n = c >= 0x80 ? utf8_char(s, i) : 0) {
      // C1 controls (U+0080..U+009F) are valid UTF-8 but not text.
      const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
      if (c1)
        out += '?';
      else
        out.append(s.substr(i, n));
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

size_t utf8_prefix(const char *s, size_t n) {
  size_t k = n;
  // Back over continuation bytes to the start of the last character; keep it if it is whole.
  while (k > 0 && (static_cast<unsigned char>(s[k - 1]) & 0xc0) == 0x80) --k;
  if (k == 0) return n;  // no lead byte: nothing to cut at
  const unsigned char lead = static_cast<unsigned char>(s[k - 1]);
  const size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return n - (k - 1) >= need ? n : k - 1;
}

std::string_view trim(std::string_view s, std::string_view blanks) {
  const size_t b = s.find_first_not_of(blanks);
  if (b == std::string_view::npos) return s.substr(0, 0);
  return s.substr(b, s.find_last_not_of(blanks) - b + 1);
}

std::vector<std::string> split(std::string_view s, char sep, size_t max_fields) {
  std::vector<std::string> out;
  size_t b = 0;
  while (max_fields == 0 || out.size() + 1 < max_fields) {
    const size_t e = s.find(sep, b);
    if (e == std::string_view::npos) break;
    out.emplace_back(s.substr(b, e - b));
    b = e + 1;
  }
  out.emplace_back(s.substr(b));
  return out;
}

std::vector<std::string> split_list(std::string_view s, char sep, std::string_view blanks) {
  std::vector<std::string> out;
  for (const std::string &f : split(s, sep)) {
    const std::string_view t = trim(f, blanks);
    if (!t.empty()) out.emplace_back(t);
  }
  return out;
}

std::string dot_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t b = 0;
  for (;;) {
    const size_t e = s.find('\n', b);
    for (char c : printable_text(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b))) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    if (e == std::string_view::npos) break;
    out += "\\n";
    b = e + 1;
  }
  return out;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : printable_text(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace topoaware
