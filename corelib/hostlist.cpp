// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm host lists, with the semantics of Slurm's src/common/hostlist.c (22.05, one-dimensional
// clusters), checked against `scontrol show hostnames` / `scontrol show hostlist`:
//
//  * Only the LAST run of digits of a name is a number ("a1b2" has prefix "a1b", number 2).
//  * The width of a number is its digit count; zero padding is kept ("n[001-032]"). Numbers of
//    different widths join when re-formatting one with the other's width changes neither's zero
//    padding (Slurm's _width_equiv): n9,n10 -> "n[9-10]", n09,n10 -> "n[09-10]", n08,n9 -> "n[08,9]".
//  * In a range "lo-hi" the width is the length of "lo": "n[01-3]" is n01 n02 n03, "n[9-10]" n9 n10.
//  * Several bracket groups in one name expand as a product, leftmost slowest:
//    "rack[1-2]n[1-2]" is rack1n1 rack1n2 rack2n1 rack2n2. Nothing may follow the last "]"
//    (Slurm 22.05 rejects "n[1-2]x").
//  * Top-level separators are commas, spaces and tabs.
//
// Where Slurm silently guesses, this code refuses (a topology.conf or a --nodes list with such
// text is a mistake worth reporting): an unbalanced "[" or "]" (Slurm reads "n[1-3" as "n]"),
// and an empty name between two commas or at either end (Slurm skips it).
#include "hostlist.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string_view>

namespace topoaware {

namespace {

// 18 digits always fit in uint64_t; longer runs are not treated as numbers (Slurm's strtoul would
// saturate and corrupt them).
constexpr size_t kMaxDigits = 18;

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// The list as quoted in a message: its start only when it is long (a client's list may be MBs).
std::string quoted_list(const std::string &list) {
  constexpr size_t kShown = 200;
  return list.size() <= kShown ? quoted(list) : quoted(std::string_view(list).substr(0, kShown)) + "...";
}

[[noreturn]] void fail(const std::string &list, const std::string &what) {
  throw std::invalid_argument("host list " + quoted_list(list) + ": " + what);
}

// The running total of the names' bytes; fails past the bound.
struct ByteBudget {
  size_t used = 0, max = 0;
  void take(const std::string &list, uint64_t bytes) {
    if (bytes > max - used)
      fail(list, "the names take more than " + std::to_string(max) + " bytes (" + std::to_string(used) + " so far, " +
                     std::to_string(bytes) + " more)");
    used += size_t(bytes);
  }
};

// The fewest bytes `count` names of the literals take (every number has at least one digit), or
// UINT64_MAX when that does not fit in 64 bits.
uint64_t least_bytes(const std::vector<std::string_view> &literals, size_t groups, uint64_t count) {
  uint64_t each = groups;
  for (std::string_view l : literals) each += l.size();
  return each != 0 && count > UINT64_MAX / each ? UINT64_MAX : count * each;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_sep(char c) { return c == ',' || c == ' ' || c == '\t'; }

// Zeros "num" gets when printed with at least "width" digits (Slurm's _zero_padded).
int zero_padding(uint64_t num, int width) {
  int n = 1;
  while (num /= 10) ++n;
  return width > n ? width - n : 0;
}

// Slurm's _width_equiv: may numbers n (width *wn) and m (width *wm) share one width? If so, the
// width that needs adjusting is adjusted.
bool width_equiv(uint64_t n, int *wn, uint64_t m, int *wm) {
  if (*wn == *wm) return true;
  int npad = zero_padding(n, *wn), nmpad = zero_padding(n, *wm);
  int mpad = zero_padding(m, *wm), mnpad = zero_padding(m, *wn);
  if (npad != nmpad && mpad != mnpad) return false;
  if (npad != nmpad)
    *wm = *wn;
  else
    *wn = *wm;
  return true;
}

// Appends v with at least `width` digits (zero padded) to *out, with no string of its own: the
// expansion of a 131,072-name list makes one per name.
void append_num(std::string *out, uint64_t v, int width) {
  char digits[20];
  size_t n = 0;
  do {
    digits[sizeof(digits) - 1 - n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  if (static_cast<size_t>(width) > n) out->append(static_cast<size_t>(width) - n, '0');
  out->append(digits + sizeof(digits) - n, n);
}

std::string format_num(uint64_t v, int width) {
  std::string s;
  append_num(&s, v, width);
  return s;
}

struct Range {
  uint64_t lo = 0, hi = 0;
  int width = 0;
  uint64_t count() const { return hi - lo + 1; }
};

uint64_t parse_number(const std::string &list, std::string_view digits, std::string_view item) {
  if (digits.size() > kMaxDigits) fail(list, "number " + quoted(digits) + " in " + quoted(item) + " is too large");
  uint64_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

// The inside of one bracket pair: "1-4,7,09-12".
std::vector<Range> parse_ranges(const std::string &list, std::string_view inside, size_t max_hosts) {
  std::vector<Range> out;
  if (inside.empty()) fail(list, "empty brackets \"[]\"");
  size_t pos = 0;
  uint64_t total = 0;
  while (true) {
    size_t comma = inside.find(',', pos);
    std::string_view item = inside.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (item.empty()) fail(list, "empty range in " + quoted("[" + std::string(inside) + "]"));
    size_t dash = item.find('-');
    std::string_view lo_s = item.substr(0, dash);
    std::string_view hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
    auto all_digits = [](std::string_view s) { return std::all_of(s.begin(), s.end(), is_digit); };
    if (lo_s.empty() || !all_digits(lo_s) || !all_digits(hi_s))
      fail(list, "invalid range " + quoted(item) + " (expected N or N-M with decimal digits)");
    Range r;
    r.width = static_cast<int>(lo_s.size());
    r.lo = parse_number(list, lo_s, item);
    // "5-" means 5, as in Slurm.
    r.hi = hi_s.empty() ? r.lo : parse_number(list, hi_s, item);
    if (r.lo > r.hi)
      fail(list, "reversed range " + quoted(item) + " (" + std::to_string(r.lo) + " > " + std::to_string(r.hi) + ")");
    total += r.count();
    if (r.count() > max_hosts || total > max_hosts)
      fail(list, "too many hosts: " + quoted("[" + std::string(inside) + "]") + " names more than " +
                     std::to_string(max_hosts));
    out.push_back(r);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

// One top-level item: "n[1-4]", "rack[1-2]n[01-16]", "login1".
void expand_item(const std::string &list, std::string_view item, size_t max_hosts, ByteBudget *budget,
                 std::vector<std::string> *out) {
  // Split into literal parts and bracket groups: lit0 [g0] lit1 [g1] ... litN
  std::vector<std::string_view> literals;
  std::vector<std::vector<Range>> groups;
  size_t pos = 0;
  while (true) {
    size_t open = item.find('[', pos);
    size_t close = item.find(']', pos);
    if (close < open) fail(list, "unbalanced \"]\" in " + quoted(item));
    if (open == std::string_view::npos) {
      literals.push_back(item.substr(pos));
      break;
    }
    if (close == std::string_view::npos) fail(list, "unbalanced \"[\" in " + quoted(item));
    std::string_view inside = item.substr(open + 1, close - open - 1);
    if (inside.find('[') != std::string_view::npos) fail(list, "nested \"[\" in " + quoted(item));
    literals.push_back(item.substr(pos, open - pos));
    groups.push_back(parse_ranges(list, inside, max_hosts));
    pos = close + 1;
  }
  if (!groups.empty() && !literals.back().empty())
    fail(list, "text " + quoted(literals.back()) + " after \"]\" in " + quoted(item) +
                   " (Slurm allows nothing after the last bracket)");
  if (groups.empty()) {
    if (out->size() + 1 > max_hosts) fail(list, "too many hosts (more than " + std::to_string(max_hosts) + ")");
    budget->take(list, item.size());
    out->emplace_back(item);
    return;
  }
  // Count before generating, so "a[0-999999]b[0-999999]" fails at once instead of exhausting memory.
  uint64_t count = 1;
  for (const auto &g : groups) {
    uint64_t n = 0;
    for (const auto &r : g) n += r.count();
    if (n > max_hosts || count * n > max_hosts || out->size() + count * n > max_hosts)
      fail(list, "too many hosts: " + quoted(item) + " names more than " + std::to_string(max_hosts));
    count *= n;
  }
  // A lower bound first, so that a long name repeated many times fails before any is made; the
  // exact size of each name below.
  const uint64_t least = least_bytes(literals, groups.size(), count);
  if (least > budget->max - budget->used)
    fail(list, "the names of " + quoted(item.substr(0, 64)) + (item.size() > 64 ? "..." : "") + " take more than " +
                   std::to_string(budget->max) + " bytes");
  // Odometer over the groups, leftmost slowest (Slurm expands prefix ranges in the outer loop).
  std::vector<size_t> range_idx(groups.size(), 0);
  std::vector<uint64_t> value(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) value[g] = groups[g][0].lo;
  // Room for the names at once (count <= max_hosts: checked above), growing geometrically so that
  // many small items do not reallocate for each.
  if (out->capacity() < out->size() + count)
    out->reserve(std::max<size_t>(out->size() + size_t(count), 2 * out->capacity()));
  while (true) {
    std::string name;
    for (size_t g = 0; g < groups.size(); ++g) {
      name += literals[g];
      append_num(&name, value[g], groups[g][range_idx[g]].width);
    }
    budget->take(list, name.size());
    out->push_back(std::move(name));
    size_t g = groups.size();
    while (g > 0) {
      --g;
      const Range &r = groups[g][range_idx[g]];
      if (value[g] < r.hi) {
        ++value[g];
        break;
      }
      if (range_idx[g] + 1 < groups[g].size()) {
        value[g] = groups[g][++range_idx[g]].lo;
        break;
      }
      range_idx[g] = 0;
      value[g] = groups[g][0].lo;
      if (g == 0) return;
    }
  }
}

}  // namespace

std::vector<std::string> hostlist_expand(const std::string &list, size_t max_hosts, size_t max_bytes) {
  std::vector<std::string> out;
  ByteBudget budget;
  budget.max = max_bytes;
  const size_t n = list.size();
  size_t i = 0;
  while (i < n && (list[i] == ' ' || list[i] == '\t')) ++i;
  if (i == n) return out;  // empty or blank: no hosts (an empty Nodes= is legal)
  if (list[i] == ',') fail(list, "empty name before the first \",\"");
  while (i < n) {
    // An item runs to the next top-level separator; separators inside brackets belong to it.
    size_t start = i;
    int depth = 0;
    while (i < n && (depth > 0 || !is_sep(list[i]))) {
      if (list[i] == '[') ++depth;
      else if (list[i] == ']' && depth > 0) --depth;
      ++i;
    }
    expand_item(list, std::string_view(list).substr(start, i - start), max_hosts, &budget, &out);
    // A run of blanks with at most one comma is one separator ("a, b" is fine, "a,,b" is not).
    int commas = 0;
    while (i < n && is_sep(list[i])) commas += list[i++] == ',';
    if (commas > 1) fail(list, "empty name between \",\" after " + quoted(list.substr(start, i - start)));
    if (i == n && commas == 1) fail(list, "empty name after the last \",\"");
  }
  return out;
}

std::string hostlist_compress(const std::vector<std::string> &names) {
  // Groups keyed by prefix (names with a number) or by whole name (names without one), in order
  // of first appearance.
  struct Member {
    uint64_t num;
    int width;
  };
  struct Group {
    std::string prefix;
    bool numbered;
    std::vector<Member> members;
  };
  std::vector<Group> groups;
  auto find_group = [&](const std::string &prefix, bool numbered) -> Group & {
    for (auto &g : groups)
      if (g.numbered == numbered && g.prefix == prefix) return g;
    groups.push_back({prefix, numbered, {}});
    return groups.back();
  };
  for (const auto &name : names) {
    if (name.empty()) throw std::invalid_argument("host list: empty host name");
    for (char c : name)
      if (is_sep(c) || c == '[' || c == ']' || std::iscntrl(static_cast<unsigned char>(c)))
        throw std::invalid_argument("host list: host name " + quoted(name) +
                                    " contains a character a Slurm host list cannot hold");
    size_t end = name.size();
    while (end > 0 && is_digit(name[end - 1])) --end;
    size_t digits = name.size() - end;
    if (digits == 0 || digits > kMaxDigits) {
      find_group(name, false);
      continue;
    }
    uint64_t v = 0;
    for (size_t k = end; k < name.size(); ++k) v = v * 10 + static_cast<uint64_t>(name[k] - '0');
    find_group(name.substr(0, end), true).members.push_back({v, static_cast<int>(digits)});
  }

  std::string out;
  for (auto &g : groups) {
    if (!out.empty()) out += ',';
    if (!g.numbered) {
      out += g.prefix;
      continue;
    }
    auto &m = g.members;
    std::sort(m.begin(), m.end(), [](const Member &a, const Member &b) {
      return a.num != b.num ? a.num < b.num : a.width < b.width;
    });
    m.erase(std::unique(m.begin(), m.end(),
                        [](const Member &a, const Member &b) { return a.num == b.num && a.width == b.width; }),
            m.end());
    std::vector<Range> ranges;
    for (const auto &x : m) {
      if (!ranges.empty()) {
        Range &r = ranges.back();
        int w = x.width;
        // Members are sorted, so checking the range's lowest number is enough: a higher one
        // has at most as much zero padding.
        if (x.num == r.hi + 1) {
          int rw = r.width;
          if (width_equiv(r.lo, &rw, x.num, &w)) {
            r.width = rw;
            r.hi = x.num;
            continue;
          }
        }
      }
      ranges.push_back({x.num, x.num, x.width});
    }
    out += g.prefix;
    bool bracket = ranges.size() > 1 || ranges[0].lo != ranges[0].hi;
    if (bracket) out += '[';
    for (size_t k = 0; k < ranges.size(); ++k) {
      if (k) out += ',';
      out += format_num(ranges[k].lo, ranges[k].width);
      if (ranges[k].hi != ranges[k].lo) out += '-' + format_num(ranges[k].hi, ranges[k].width);
    }
    if (bracket) out += ']';
  }
  return out;
}

}  // namespace topoaware
