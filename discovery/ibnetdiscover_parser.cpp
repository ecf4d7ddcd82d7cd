// SPDX-License-Identifier: GPL-2.0-or-later
// Parser for saved ibnetdiscover output. The grammar follows what infiniband-diags'
// ibnetdiscover.c prints (rdma-core, and the older OFED management tree for the 2007 variants):
//
// Default format (dump_topology), one block per node:
//   vendid=0x2c9 / devid=0xc738 / sysimgguid=0x...[  # Chassis N ...]   identification lines
//   switchguid=0x<node guid>(<port 0 guid>)[  # chassis type and slot]  or caguid=0x... / rtguid=0x...
//   Switch  36 "S-<guid>"  # "<desc>" enhanced|base port 0 lid L lmc M
//   [p][ext N]  "H-<guid>"[rp][ext N](<remote port guid>)  # "<remote desc>" lid L 4xQDR
//   Ca  2 "H-<guid>"  # "<desc>"[ (scp)]        (Rt for routers)
//   [p](<port guid>)  "S-<guid>"[rp][ext N][ (<remote port guid>)]  # lid L lmc M "<remote desc>" lid L 4xQDR
// plus '#' comments, "Non-Chassis Nodes", "Chassis N (guid 0x...)" and "Hostname: ..." from -g.
// After the width/speed token ibnetdiscover may add " s=N w=N v=N" (-f), " slot N" or " (scp)"
// (Xsigo).
//
// Ports format (ibnetdiscover -p, dump_ports_report), one line per port:
//   CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0 ( 'o0001 HCA-1' - 'ib-i1l1s01' )
//   SW  2052 37 0x506b4b03005c2740 4x ???                                    'ib-i4l1s01'
// The columns are: node type, LID, port number, *port* GUID (port->guid in dump_ports_report,
// not node->guid), width, speed, then the peer's type, LID, port number and port GUID, then both
// node descriptions. So the ports format never shows a CA's node GUID: a CA or router is keyed
// here by the port GUID of the port on the line (a dual-port HCA with both ports cabled becomes
// two nodes), and its Port::port_guid is that same GUID. A switch's ports all carry the switch's
// port-0 GUID, which is what libibnetdisc reports as the switch's port GUID and, on every switch
// in our fixtures (switchguid=X(X) lines), equal to its node GUID; switches are keyed by it.
// Descriptions come from the quoted strings at the end of the line.
//
// Diagnostics that ibnetdiscover's libraries print on stderr (a dump taken with 2>&1, e.g.
// "src/query_smp.c:195; umad (...) bad status 110; Connection timed out" or "ibwarn: [..] ...")
// are not syntax errors: they mean the walk lost packets, so they are kept as Fabric::problems
// and the fabric is treated as partial. Links whose two ends disagree are kept as problems too.
#include "ibnetdiscover_parser.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text.hpp"

namespace topoaware {

ParseError::ParseError(const std::string &file_, int line_, const std::string &msg)
    // The message quotes the dump (node descriptions, excerpts): printable text whatever it holds.
    : std::runtime_error(file_ + ":" + std::to_string(line_) + ": " + printable_text(msg)), file(file_), line(line_) {}

namespace {

// Real lines are short (node descriptions are at most 64 bytes, node-name-map names at most
// 255), so anything near this limit is not an ibnetdiscover dump.
constexpr size_t kMaxLineLength = 4096;
// Port numbers are 8-bit in every MAD that carries them.
constexpr unsigned kMaxPortNumber = 255;
// Far above any fabric built (the largest are tens of thousands of nodes); it stops a garbage or
// hostile file from eating memory.
constexpr size_t kMaxNodes = 1000000;
constexpr unsigned kMaxLid = 0xffff;

// ---------------------------------------------------------------- reading lines

// Reads one line without its terminator (LF; a CR before it is dropped, for dumps copied from
// Windows). Returns false at the end of input. A line longer than the limit is cut and flagged.
bool read_line(std::streambuf *buf, std::string *out, bool *too_long) {
  out->clear();
  *too_long = false;
  int c = buf->sbumpc();
  if (c == std::char_traits<char>::eof()) return false;
  while (c != std::char_traits<char>::eof() && c != '\n') {
    if (out->size() < kMaxLineLength + 1) out->push_back(static_cast<char>(c));
    else *too_long = true;
    c = buf->sbumpc();
  }
  if (out->size() > kMaxLineLength) *too_long = true;
  if (!out->empty() && out->back() == '\r') out->pop_back();
  return true;
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// What is trimmed off a line or a description: blanks and a CR left by a DOS line end (not VT or
// FF: a description keeps them, as ibnetdiscover printed it).
constexpr std::string_view kLineBlanks = " \t\r";

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// A short, printable excerpt of what was found, for messages.
std::string excerpt(std::string_view s) {
  if (s.empty()) return "the end of the line";
  // At most 40 bytes, cut between UTF-8 characters; ParseError makes the rest printable.
  const size_t n = s.size() > 40 ? utf8_prefix(s.data(), 40) : s.size();
  return "'" + std::string(s.substr(0, n)) + (n < s.size() ? "..." : "") + "'";
}

// Lines the IB libraries print on stderr while walking (kept as problems, see the top comment):
// libibnetdisc's IBND_ERROR "<file>.c:<line>; ...", libibmad's "ibwarn: ..."/"ibpanic: ...",
// infiniband-diags' "ibnetdiscover: iberror: ...".
bool is_diagnostic(std::string_view s) {
  if (starts_with(s, "ibwarn:") || starts_with(s, "ibpanic:") || starts_with(s, "ibdebug:") ||
      starts_with(s, "ibnetdiscover: iberror"))
    return true;
  size_t i = 0;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '/' ||
                          s[i] == '.' || s[i] == '-'))
    ++i;
  if (i < 3 || s.substr(i - 2, 2) != ".c" || i >= s.size() || s[i] != ':') return false;
  size_t j = i + 1;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  return j > i + 1 && j < s.size() && s[j] == ';';
}

// ---------------------------------------------------------------- a cursor over one line

struct Cursor {
  std::string_view s;
  size_t pos = 0;

  bool at_end() const { return pos >= s.size(); }
  char peek() const { return at_end() ? '\0' : s[pos]; }
  std::string_view rest() const { return s.substr(std::min(pos, s.size())); }
  void skip_ws() {
    while (!at_end() && is_blank(s[pos])) ++pos;
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos;
    return true;
  }
  bool eat(std::string_view word) {
    if (!starts_with(rest(), word)) return false;
    pos += word.size();
    return true;
  }
  // A decimal number no larger than max; false (cursor unmoved) if there is none or it is larger.
  bool number(unsigned max, unsigned *out) {
    size_t p = pos;
    unsigned long v = 0;
    while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p]))) {
      v = v * 10 + static_cast<unsigned>(s[p] - '0');
      if (v > max) return false;
      ++p;
    }
    if (p == pos) return false;
    pos = p;
    *out = static_cast<unsigned>(v);
    return true;
  }
  // 1 to 16 hex digits, without prefix.
  bool hex(uint64_t *out) {
    size_t p = pos;
    uint64_t v = 0;
    while (p < s.size() && std::isxdigit(static_cast<unsigned char>(s[p]))) {
      if (p - pos == 16) return false;
      char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[p])));
      v = v * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
      ++p;
    }
    if (p == pos) return false;
    pos = p;
    *out = v;
    return true;
  }
  // A whitespace-delimited word.
  std::string_view word() {
    size_t p = pos;
    while (p < s.size() && !is_blank(s[p])) ++p;
    std::string_view w = s.substr(pos, p - pos);
    pos = p;
    return w;
  }
};

// ---------------------------------------------------------------- width and speed

// ibnetdiscover prints widths 1x 2x 4x 8x 12x, or "??" when PortInfo holds no known value.
bool parse_width(std::string_view w, int *lanes) {
  if (w == "??") {
    *lanes = 0;
    return true;
  }
  static const std::pair<std::string_view, int> kWidths[] = {{"1x", 1}, {"2x", 2}, {"4x", 4}, {"8x", 8}, {"12x", 12}};
  for (const auto &k : kWidths)
    if (w == k.first) {
      *lanes = k.second;
      return true;
    }
  return false;
}

// Speed names as ibnetdiscover prints them ("???" when unknown; XDR for newer releases).
bool parse_speed(std::string_view s, LinkSpeed *speed) {
  if (s == "???") {
    *speed = LinkSpeed::Unknown;
    return true;
  }
  LinkSpeed v = speed_from_name(std::string(s));
  if (v == LinkSpeed::Unknown) return false;
  *speed = v;
  return true;
}

const char *const kWidthSpeedExpected =
    "a link width and speed such as 4xQDR (width 1x, 2x, 4x, 8x, 12x or ??; speed SDR, DDR, QDR, FDR10, "
    "FDR, EDR, HDR, NDR, XDR or ?\?\?)";

// "4xQDR", "12xEDR", "?????" (unknown width and speed), "4x???".
bool parse_width_speed(std::string_view tok, int *lanes, LinkSpeed *speed) {
  size_t split;
  if (starts_with(tok, "??")) {
    split = 2;
  } else {
    split = tok.find('x');
    if (split == std::string_view::npos) return false;
    ++split;
  }
  return parse_width(tok.substr(0, split), lanes) && parse_speed(tok.substr(split), speed);
}

// ---------------------------------------------------------------- the parser

struct PortRec {
  Port port;
  int line = 0;                       // where the port was listed (0: filled in from its peer)
  NodeType remote_type = NodeType::Ca;
  uint64_t remote_port_guid = 0;      // the peer's port GUID when the line shows it
};

struct NodeRec {
  FabricNode node;
  int line = 0;
  std::vector<PortRec> ports;
  uint64_t port0_guid = 0;            // switches: from switchguid=G(P)
  int max_port_seen = 0;              // includes unconnected ports of the ports format
};

const char *type_word(NodeType t) {
  switch (t) {
    case NodeType::Switch: return "switch";
    case NodeType::Ca: return "CA";
    case NodeType::Router: return "router";
  }
  return "node";
}

char type_letter(NodeType t) {
  switch (t) {
    case NodeType::Switch: return 'S';
    case NodeType::Ca: return 'H';
    case NodeType::Router: return 'R';
  }
  return '?';
}

std::string node_id(NodeType t, uint64_t guid) {
  std::string g = guid_str(guid).substr(2);
  return std::string(1, type_letter(t)) + "-" + g;
}

class Parser {
 public:
  Parser(std::istream &in, const std::string &file, DumpFormat format) : in_(in), file_(file), format_(format) {}

  Fabric run() {
    std::streambuf *buf = in_.rdbuf();
    if (!buf) fail(0, "no input stream; expected an ibnetdiscover dump");
    std::string raw;
    bool too_long = false;
    while (read_line(buf, &raw, &too_long)) {
      ++line_;
      if (too_long)
        fail("line is longer than " + std::to_string(kMaxLineLength) +
             " characters; expected an ibnetdiscover dump line");
      for (size_t i = 0; i < raw.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(raw[i]);
        if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
          char hexbyte[8];
          std::snprintf(hexbyte, sizeof hexbyte, "0x%02x", c);
          fail(std::string("control character ") + hexbyte + " at column " + std::to_string(i + 1) +
               "; expected printable text (is this a binary file, e.g. a libibnetdisc cache?)");
        }
      }
      std::string_view s = trim(raw, kLineBlanks);
      if (s.empty() || s[0] == '#') continue;
      if (is_diagnostic(s)) {
        diagnostics_.push_back({0, 0, file_ + ":" + std::to_string(line_) +
                                          ": ibnetdiscover's libraries reported during the walk: " +
                                          std::string(s)});
        continue;
      }
      if (format_ == DumpFormat::Auto) format_ = detect(s);
      if (format_ == DumpFormat::Ports) ports_line(s);
      else default_line(s);
    }
    if (format_ == DumpFormat::Default && pending_ids_line_ && !have_current_)
      fail(pending_ids_line_, std::string("the last node's identification lines are not followed by its "
                                          "'Switch', 'Ca' or 'Rt' line; expected a complete dump (truncated file?)"));
    if (nodes_.empty()) {
      std::string msg = "no nodes found";
      if (!diagnostics_.empty()) msg += " (" + diagnostics_.front().what + ")";
      fail(std::max(line_, 1),
           msg + "; expected an ibnetdiscover dump with 'Switch', 'Ca' or 'Rt' blocks, or 'ibnetdiscover -p' "
                 "port lines");
    }
    return build();
  }

 private:
  [[noreturn]] void fail(int line, const std::string &msg) const { throw ParseError(file_, line, msg); }
  [[noreturn]] void fail(const std::string &msg) const { fail(line_, msg); }
  [[noreturn]] void fail_at(const Cursor &c, const std::string &what_was_expected) const {
    // Running out of line where more is required is what a cut file looks like.
    fail("found " + excerpt(c.rest()) + " at column " + std::to_string(c.pos + 1) +
         (c.at_end() ? " (truncated line?)" : "") + "; expected " + what_was_expected);
  }

  DumpFormat detect(std::string_view s) {
    static const std::string_view kDefaultStarts[] = {"vendid=",  "devid=",  "sysimgguid=", "switchguid=",
                                                      "caguid=",  "rtguid=", "Switch",      "Ca",
                                                      "Rt",       "Non-Chassis Nodes",      "Chassis "};
    for (auto k : kDefaultStarts)
      if (starts_with(s, k)) return DumpFormat::Default;
    if (s[0] == '[') return DumpFormat::Default;  // a port line: reported as outside any node
    Cursor c{s};
    if (c.eat("CA") || c.eat("SW") || c.eat("RT") || c.eat("??")) {
      unsigned lid;
      if (is_blank(c.peek())) {
        c.skip_ws();
        if (c.number(kMaxLid, &lid)) return DumpFormat::Ports;
      }
    }
    fail("unrecognised line " + excerpt(s) +
         "; expected an ibnetdiscover dump: the default format ('vendid=', 'Switch', 'Ca' lines) or the ports "
         "format of 'ibnetdiscover -p' ('CA <lid> <port> 0x<guid> 4x EDR - SW ...')");
  }

  NodeRec &new_node(NodeType type, uint64_t guid, int nports, std::string desc) {
    auto it = by_guid_.find(guid);
    if (it != by_guid_.end())
      fail(node_id(type, guid) + " is defined a second time (first at line " +
           std::to_string(nodes_[it->second].line) + "); expected each node once");
    if (nodes_.size() >= kMaxNodes)
      fail("more than " + std::to_string(kMaxNodes) + " nodes; expected a fabric of at most that size");
    NodeRec rec;
    rec.node.type = type;
    rec.node.guid = guid;
    rec.node.nports = nports;
    rec.node.desc = std::move(desc);
    rec.line = line_;
    by_guid_.emplace(guid, nodes_.size());
    nodes_.push_back(std::move(rec));
    return nodes_.back();
  }

  // ------------------------------------------------------------ default format

  void default_line(std::string_view s) {
    if (s[0] == '[') return port_line(s);
    if (s == "Non-Chassis Nodes" || starts_with(s, "Hostname:")) return;  // -g section headers
    if (starts_with(s, "Chassis ")) return chassis_line(s);
    static const std::string_view kIds[] = {"vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid=", "rtguid="};
    for (auto k : kIds)
      if (starts_with(s, k)) return ids_line(s, k);
    if (starts_with(s, "Switch") || starts_with(s, "Ca") || starts_with(s, "Rt")) return node_line(s);
    fail("unrecognised line " + excerpt(s) +
         "; expected a node block line (vendid=, devid=, sysimgguid=, switchguid=, caguid=, rtguid=, Switch, "
         "Ca, Rt), a port line '[<port>] ...', or a '#' comment");
  }

  void chassis_line(std::string_view s) {
    Cursor c{s};
    c.eat("Chassis ");
    unsigned num;
    if (!c.number(255, &num)) fail_at(c, "a chassis number after 'Chassis'");
    c.skip_ws();
    if (c.at_end()) return;
    uint64_t g;
    if (!c.eat("(guid 0x") || !c.hex(&g) || !c.eat(')')) fail_at(c, "'(guid 0x<hex>)' or the end of the line");
    c.skip_ws();
    if (!c.at_end()) fail_at(c, "the end of the line after the chassis GUID");
  }

  // The identification lines before a node's own line: they start a new block.
  void ids_line(std::string_view s, std::string_view key) {
    have_current_ = false;
    if (!pending_ids_line_) pending_ids_line_ = line_;
    Cursor c{s};
    c.eat(key);
    uint64_t v = 0;
    if (!c.eat("0x") || !c.hex(&v)) fail_at(c, "a hexadecimal value '0x...' after '" + std::string(key) + "'");
    if (key == "switchguid=") {
      pending_guid_ = v;
      pending_type_ = NodeType::Switch;
      uint64_t port0 = 0;
      if (c.eat('(')) {
        if (!c.hex(&port0) || !c.eat(')')) fail_at(c, "the switch's port GUID as '(<hex>)'");
      }
      pending_port0_ = port0;
    } else if (key == "caguid=" || key == "rtguid=") {
      pending_guid_ = v;
      pending_type_ = key == "caguid=" ? NodeType::Ca : NodeType::Router;
    }
    c.skip_ws();
    // -g appends chassis information as a comment; nothing else may follow.
    if (!c.at_end() && c.peek() != '#') fail_at(c, "the end of the line or a '#' comment");
  }

  // Reads '"X-<guid>"' and returns the type and GUID.
  void node_ref(Cursor &c, NodeType *type, uint64_t *guid, const char *what) {
    if (!c.eat('"')) fail_at(c, std::string("\"<S|H|R>-<guid>\" (") + what + ")");
    char t = c.peek();
    if (t == 'S') *type = NodeType::Switch;
    else if (t == 'H') *type = NodeType::Ca;
    else if (t == 'R') *type = NodeType::Router;
    else fail_at(c, std::string("S-, H- or R- and a GUID (") + what + ")");
    ++c.pos;
    if (!c.eat('-') || !c.hex(guid)) fail_at(c, std::string("'-' and up to 16 hex digits of a GUID (") + what + ")");
    if (!c.eat('"')) fail_at(c, std::string("the closing quote of the node id (") + what + ")");
  }

  // Reads '"<description>"' where the description runs to the last quote of the line: node
  // descriptions may themselves contain '#' and '"', and nothing after them is quoted.
  std::string quoted_to_last(Cursor &c, const char *what) {
    if (!c.eat('"')) fail_at(c, std::string("a quoted ") + what);
    size_t close = c.s.rfind('"');
    if (close == std::string_view::npos || close < c.pos)
      fail("the " + std::string(what) + " starting at column " + std::to_string(c.pos) +
           " has no closing quote; expected \"<" + what + ">\" (truncated line?)");
    std::string d(c.s.substr(c.pos, close - c.pos));
    c.pos = close + 1;
    return d;
  }

  void node_line(std::string_view s) {
    Cursor c{s};
    NodeType type;
    const char *word;
    if (c.eat("Switch")) type = NodeType::Switch, word = "Switch";
    else if (c.eat("Ca")) type = NodeType::Ca, word = "Ca";
    else if (c.eat("Rt")) type = NodeType::Router, word = "Rt";
    else fail_at(c, "Switch, Ca or Rt");
    if (!is_blank(c.peek())) {
      // "Cable", "Route" ...: not a node line.
      fail("unrecognised line " + excerpt(s) + "; expected '" + word + " <ports> \"" + type_letter(type) +
           "-<guid>\" # \"<description>\" ...'");
    }
    c.skip_ws();
    unsigned nports;
    if (!c.number(kMaxPortNumber, &nports) || nports == 0)
      fail_at(c, std::string("the number of ports (1 to ") + std::to_string(kMaxPortNumber) + ") after '" + word + "'");
    c.skip_ws();
    NodeType idtype;
    uint64_t guid;
    node_ref(c, &idtype, &guid, "this node");
    if (idtype != type)
      fail(std::string("a ") + word + " line names " + node_id(idtype, guid) + "; expected the id to start with " +
           type_letter(type) + "-");
    if (pending_guid_ && pending_type_ != type)
      fail(std::string("a ") + word + " line follows a " +
           (pending_type_ == NodeType::Switch ? "switchguid" : pending_type_ == NodeType::Ca ? "caguid" : "rtguid") +
           "= line (line " + std::to_string(pending_ids_line_) + "); expected the node type that line announces");
    if (pending_guid_ && pending_guid_ != guid)
      fail(std::string(type == NodeType::Switch ? "switchguid" : type == NodeType::Ca ? "caguid" : "rtguid") +
           "=" + guid_str(pending_guid_) + " (line " + std::to_string(pending_ids_line_) + ") differs from " +
           node_id(type, guid) + "; expected the same GUID");
    c.skip_ws();
    if (!c.eat('#')) fail_at(c, "'# \"<description>\"'");
    c.skip_ws();
    std::string desc = quoted_to_last(c, "node description");
    c.skip_ws();
    if (type == NodeType::Switch) {
      // enhanced|base port 0 lid L lmc M
      if (!c.eat("enhanced") && !c.eat("base"))
        fail_at(c, "'enhanced port 0 lid <lid> lmc <lmc>' or 'base port 0 ...'");
      unsigned v;
      c.skip_ws();
      if (!c.eat("port")) fail_at(c, "'port 0'");
      c.skip_ws();
      if (!c.number(0, &v)) fail_at(c, "'0' (switch port 0)");
      c.skip_ws();
      if (!c.eat("lid")) fail_at(c, "'lid <lid>'");
      c.skip_ws();
      if (!c.number(kMaxLid, &v)) fail_at(c, "a LID (0 to 65535)");
      c.skip_ws();
      if (!c.eat("lmc")) fail_at(c, "'lmc <lmc>'");
      c.skip_ws();
      if (!c.number(7, &v)) fail_at(c, "an LMC (0 to 7)");
    } else {
      c.eat("(scp)");  // Xsigo HCA marker under -g
    }
    c.skip_ws();
    if (!c.at_end()) fail_at(c, "the end of the node line");
    NodeRec &rec = new_node(type, guid, static_cast<int>(nports), std::move(desc));
    if (type == NodeType::Switch && pending_type_ == NodeType::Switch && pending_guid_ == guid)
      rec.port0_guid = pending_port0_;
    (void)rec;
    have_current_ = true;
    current_index_ = nodes_.size() - 1;
    pending_guid_ = 0;
    pending_port0_ = 0;
    pending_ids_line_ = 0;
  }

  // "[ext N]" after a port number, from -g.
  void ext_port(Cursor &c) {
    if (!c.eat("[ext ")) return;
    unsigned v;
    if (!c.number(kMaxPortNumber, &v) || !c.eat(']')) fail_at(c, "'[ext <number>]'");
  }

  void port_line(std::string_view s) {
    if (!have_current_) {
      fail(std::string(pending_ids_line_ ? "port line between a node's identification lines and its 'Switch', "
                                           "'Ca' or 'Rt' line"
                                         : "port line outside any node") +
           "; expected it after a 'Switch', 'Ca' or 'Rt' line");
    }
    NodeRec &node = nodes_[current_index_];
    Cursor c{s};
    c.eat('[');
    unsigned p;
    if (!c.number(kMaxPortNumber, &p) || p == 0 || !c.eat(']'))
      fail_at(c, "a port number from 1 to " + std::to_string(kMaxPortNumber) + " and ']'");
    if (static_cast<int>(p) > node.node.nports)
      fail("port " + std::to_string(p) + " of " + node_id(node.node.type, node.node.guid) + ", which has " +
           std::to_string(node.node.nports) + " ports (line " + std::to_string(node.line) +
           "); expected a port number from 1 to " + std::to_string(node.node.nports));
    for (const auto &q : node.ports)
      if (q.port.num == static_cast<int>(p))
        fail("port " + std::to_string(p) + " of " + node_id(node.node.type, node.node.guid) +
             " is listed a second time (first at line " + std::to_string(q.line) + "); expected each port once");
    PortRec pr;
    pr.line = line_;
    pr.port.num = static_cast<int>(p);
    ext_port(c);
    if (c.eat('(')) {
      if (!c.hex(&pr.port.port_guid) || !c.eat(')')) fail_at(c, "this port's GUID as '(<hex>)'");
    }
    c.skip_ws();
    node_ref(c, &pr.remote_type, &pr.port.remote_guid, "the remote node");
    unsigned rp;
    if (!c.eat('[') || !c.number(kMaxPortNumber, &rp) || rp == 0 || !c.eat(']'))
      fail_at(c, "the remote port as '[<1 to " + std::to_string(kMaxPortNumber) + ">]'");
    pr.port.remote_port = static_cast<int>(rp);
    ext_port(c);
    c.skip_ws();
    if (c.eat('(')) {
      if (!c.hex(&pr.remote_port_guid) || !c.eat(')')) fail_at(c, "the remote port's GUID as '(<hex>)'");
      c.skip_ws();
    }
    if (!c.eat('#'))
      fail_at(c, "'# ... \"<remote description>\" lid <lid> <width><speed>' (truncated line?)");
    c.skip_ws();
    unsigned v;
    if (c.eat("lid")) {  // CA and router ports show their own LID and LMC first
      c.skip_ws();
      if (!c.number(kMaxLid, &v)) fail_at(c, "this port's LID (0 to 65535)");
      c.skip_ws();
      if (!c.eat("lmc")) fail_at(c, "'lmc <lmc>'");
      c.skip_ws();
      if (!c.number(7, &v)) fail_at(c, "an LMC (0 to 7)");
      c.skip_ws();
    }
    quoted_to_last(c, "remote node description");
    c.skip_ws();
    if (!c.eat("lid")) fail_at(c, "'lid <remote lid> <width><speed>' after the remote description");
    c.skip_ws();
    if (!c.number(kMaxLid, &v)) fail_at(c, "the remote LID (0 to 65535)");
    c.skip_ws();
    std::string_view ws = c.word();
    if (ws.empty()) fail_at(c, std::string(kWidthSpeedExpected) + " (truncated line?)");
    if (!parse_width_speed(ws, &pr.port.width, &pr.port.speed)) {
      c.pos -= ws.size();
      fail_at(c, kWidthSpeedExpected);
    }
    trailer(c);
    node.max_port_seen = std::max(node.max_port_seen, pr.port.num);
    node.ports.push_back(pr);
  }

  // What ibnetdiscover may print after the width and speed: " s=N w=N v=N" (-f), " slot N" or
  // " (scp)" (Xsigo).
  void trailer(Cursor &c) {
    c.skip_ws();
    unsigned v;
    if (c.eat("s=")) {
      if (!c.number(255, &v)) fail_at(c, "a number after 's='");
      c.skip_ws();
      if (!c.eat("w=") || !c.number(255, &v)) fail_at(c, "'w=<number>'");
      c.skip_ws();
      if (!c.eat("v=") || !c.number(255, &v)) fail_at(c, "'v=<number>'");
      c.skip_ws();
    }
    if (c.eat("slot")) {
      c.skip_ws();
      if (!c.number(kMaxPortNumber, &v)) fail_at(c, "a slot number");
      c.skip_ws();
    } else if (c.eat("(scp)")) {
      c.skip_ws();
    }
    if (!c.at_end()) fail_at(c, "the end of the port line after the link width and speed");
  }

  // ------------------------------------------------------------ ports format

  struct PortsEnd {
    NodeType type = NodeType::Ca;
    unsigned port = 0;
    uint64_t guid = 0;
  };

  void ports_end(Cursor &c, PortsEnd *e, const char *which) {
    if (c.eat("CA")) e->type = NodeType::Ca;
    else if (c.eat("SW")) e->type = NodeType::Switch;
    else if (c.eat("RT")) e->type = NodeType::Router;
    else if (c.eat("??")) fail("node of unknown type (?\?) in the " + std::string(which) +
                               " columns; expected CA, SW or RT");
    else fail_at(c, std::string("the ") + which + " node type CA, SW or RT");
    unsigned v;
    c.skip_ws();
    if (!c.number(kMaxLid, &v)) fail_at(c, std::string("the ") + which + " LID (0 to 65535)");
    c.skip_ws();
    if (!c.number(kMaxPortNumber, &e->port) || e->port == 0)
      fail_at(c, std::string("the ") + which + " port number (1 to " + std::to_string(kMaxPortNumber) + ")");
    c.skip_ws();
    if (!c.eat("0x") || !c.hex(&e->guid)) fail_at(c, std::string("the ") + which + " port GUID as 0x<hex>");
  }

  NodeRec &ports_node(const PortsEnd &e, const std::string &desc) {
    auto it = by_guid_.find(e.guid);
    if (it == by_guid_.end()) return new_node(e.type, e.guid, 0, desc);
    NodeRec &rec = nodes_[it->second];
    if (rec.node.type != e.type)
      fail(guid_str(e.guid) + " is a " + type_word(e.type) + " here but a " + type_word(rec.node.type) +
           " at line " + std::to_string(rec.line) + "; expected one type per GUID");
    if (rec.node.desc != desc)
      problems_.push_back({e.guid, static_cast<int>(e.port),
                           file_ + ":" + std::to_string(line_) + ": " + guid_str(e.guid) + " is described as '" + desc +
                               "' but as '" + rec.node.desc + "' at line " + std::to_string(rec.line)});
    return rec;
  }

  void ports_line(std::string_view s) {
    Cursor c{s};
    PortsEnd local;
    ports_end(c, &local, "local");
    c.skip_ws();
    std::string_view w = c.word();
    PortRec pr;
    if (!parse_width(w, &pr.port.width)) {
      c.pos -= w.size();
      fail_at(c, "the link width (1x, 2x, 4x, 8x, 12x or ?\?)");
    }
    c.skip_ws();
    std::string_view sp = c.word();
    if (!parse_speed(sp, &pr.port.speed)) {
      c.pos -= sp.size();
      fail_at(c, "the link speed (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR or ?\?\?)");
    }
    c.skip_ws();
    std::string local_desc, remote_desc;
    PortsEnd remote;
    bool connected = false;
    if (c.eat('-')) {
      connected = true;
      c.skip_ws();
      ports_end(c, &remote, "remote");
      c.skip_ws();
      // ( '<local desc>' - '<remote desc>' ): split at the first "' - '" (a description containing
      // that exact sequence cannot be told apart, ibnetdiscover does not escape it).
      if (!c.eat('(')) fail_at(c, "\"( '<description>' - '<remote description>' )\"");
      std::string_view inner = trim(c.rest(), kLineBlanks);
      if (inner.size() < 2 || inner.back() != ')') fail_at(c, "the descriptions closed by ')' (truncated line?)");
      inner = trim(inner.substr(0, inner.size() - 1), kLineBlanks);
      size_t mid = inner.find("' - '");
      if (inner.size() < 6 || inner.front() != '\'' || inner.back() != '\'' || mid == std::string_view::npos ||
          mid == 0 || mid + 6 > inner.size())
        fail_at(c, "\"( '<description>' - '<remote description>' )\"");
      local_desc = std::string(inner.substr(1, mid - 1));
      remote_desc = std::string(inner.substr(mid + 5, inner.size() - mid - 6));
    } else {
      // An unconnected port: only the node's own description, normally quoted.
      std::string_view d = trim(c.rest(), kLineBlanks);
      if (d.empty()) fail_at(c, "' - <remote end>' or the node description (truncated line?)");
      if (d.front() == '\'') {
        if (d.size() < 2 || d.back() != '\'') fail_at(c, "the description closed by a quote (truncated line?)");
        d = d.substr(1, d.size() - 2);
      }
      local_desc = std::string(d);
    }
    NodeRec &node = ports_node(local, local_desc);
    size_t local_index = static_cast<size_t>(&node - nodes_.data());
    for (const auto &q : node.ports)
      if (q.port.num == static_cast<int>(local.port))
        fail("port " + std::to_string(local.port) + " of " + guid_str(local.guid) +
             " is listed a second time (first at line " + std::to_string(q.line) + "); expected each port once");
    nodes_[local_index].max_port_seen = std::max(nodes_[local_index].max_port_seen, static_cast<int>(local.port));
    if (!connected) {
      if (unconnected_.emplace(std::make_pair(local.guid, local.port), line_).second == false)
        fail("port " + std::to_string(local.port) + " of " + guid_str(local.guid) +
             " is listed a second time; expected each port once");
      return;
    }
    if (unconnected_.count({local.guid, local.port}))
      fail("port " + std::to_string(local.port) + " of " + guid_str(local.guid) +
           " was listed as unconnected earlier; expected each port once");
    NodeRec &peer = ports_node(remote, remote_desc);
    size_t peer_index = static_cast<size_t>(&peer - nodes_.data());
    nodes_[peer_index].max_port_seen = std::max(nodes_[peer_index].max_port_seen, static_cast<int>(remote.port));
    pr.line = line_;
    pr.port.num = static_cast<int>(local.port);
    pr.port.port_guid = local.guid;
    pr.port.remote_guid = remote.guid;
    pr.port.remote_port = static_cast<int>(remote.port);
    pr.remote_type = remote.type;
    pr.remote_port_guid = remote.guid;
    nodes_[local_index].ports.push_back(pr);
  }

  // Port a of node `an` says it leads to port b of node `bn`, but b says it leads elsewhere.
  void conflict(const NodeRec &an, const PortRec &a, const NodeRec &bn, const PortRec &b) {
    problems_.push_back({an.node.guid, a.port.num,
                         file_ + ":" + std::to_string(a.line) + ": port " + std::to_string(a.port.num) + " of " +
                             guid_str(an.node.guid) + " leads to port " + std::to_string(b.port.num) + " of " +
                             guid_str(bn.node.guid) + ", but line " + std::to_string(b.line) +
                             " connects that port to port " + std::to_string(b.port.remote_port) + " of " +
                             guid_str(b.port.remote_guid) + "; the two ends of the link disagree"});
  }

  // ------------------------------------------------------------ assembling the fabric

  Fabric build() {
    const bool dump = format_ == DumpFormat::Default;
    // Every link of a default-format dump is printed from both of its ends, from one in-memory
    // fabric: a peer without a block, or a peer's block without the matching port, means the file
    // was cut or edited.
    for (size_t i = 0; i < nodes_.size(); ++i) {
      for (size_t k = 0; k < nodes_[i].ports.size(); ++k) {
        const PortRec pr = nodes_[i].ports[k];
        auto it = by_guid_.find(pr.port.remote_guid);
        const NodeRec &self = nodes_[i];
        if (it == by_guid_.end()) {
          // Only the default format can get here (the ports format creates both ends).
          fail(pr.line, "port " + std::to_string(pr.port.num) + " of " + node_id(self.node.type, self.node.guid) +
                            " leads to " + node_id(pr.remote_type, pr.port.remote_guid) +
                            ", which has no block in the file; expected a complete dump (truncated file?)");
        }
        NodeRec &peer = nodes_[it->second];
        if (peer.node.type != pr.remote_type)
          fail(pr.line, "port " + std::to_string(pr.port.num) + " names " +
                            node_id(pr.remote_type, pr.port.remote_guid) + " but that GUID is a " +
                            type_word(peer.node.type) + " (line " + std::to_string(peer.line) + "); expected " +
                            node_id(peer.node.type, peer.node.guid));
        if (peer.node.nports && pr.port.remote_port > peer.node.nports)
          fail(pr.line, "port " + std::to_string(pr.port.num) + " leads to port " +
                            std::to_string(pr.port.remote_port) + " of " + node_id(peer.node.type, peer.node.guid) +
                            ", which has " + std::to_string(peer.node.nports) + " ports (line " +
                            std::to_string(peer.line) + "); expected a port from 1 to " +
                            std::to_string(peer.node.nports));
        PortRec *back = nullptr;
        for (auto &q : peer.ports)
          if (q.port.num == pr.port.remote_port) back = &q;
        if (!back) {
          if (dump)
            fail(pr.line, "port " + std::to_string(pr.port.num) + " of " + node_id(self.node.type, self.node.guid) +
                              " leads to port " + std::to_string(pr.port.remote_port) + " of " +
                              node_id(peer.node.type, peer.node.guid) + ", but that node's block (line " +
                              std::to_string(peer.line) +
                              ") does not list the port; expected both ends of every link (truncated file?)");
          // Ports format: the peer's own line is missing (a report cut short or filtered, e.g.
          // with grep); take the link from this end, unless the peer said that port is unconnected.
          auto unc = unconnected_.find({peer.node.guid, static_cast<unsigned>(pr.port.remote_port)});
          if (unc != unconnected_.end()) {
            problems_.push_back({self.node.guid, pr.port.num,
                                 file_ + ":" + std::to_string(pr.line) + ": port " + std::to_string(pr.port.num) +
                                     " of " + guid_str(self.node.guid) + " leads to port " +
                                     std::to_string(pr.port.remote_port) + " of " + guid_str(peer.node.guid) +
                                     ", but line " + std::to_string(unc->second) +
                                     " lists that port as unconnected; the two ends of the link disagree"});
            continue;
          }
          PortRec r;
          r.line = pr.line;  // the line that implies this end, for messages
          r.port.num = pr.port.remote_port;
          r.port.port_guid = pr.remote_port_guid;
          r.port.remote_guid = self.node.guid;
          r.port.remote_port = pr.port.num;
          r.port.width = pr.port.width;
          r.port.speed = pr.port.speed;
          r.remote_type = self.node.type;
          peer.ports.push_back(r);
          continue;
        }
        if (back->port.remote_guid != self.node.guid || back->port.remote_port != pr.port.num) {
          conflict(self, pr, peer, *back);
          continue;
        }
        if (pr.remote_port_guid) {
          if (!back->port.port_guid) back->port.port_guid = pr.remote_port_guid;
          else if (back->port.port_guid != pr.remote_port_guid)
            problems_.push_back({peer.node.guid, back->port.num,
                                 file_ + ":" + std::to_string(pr.line) + ": port " + std::to_string(back->port.num) +
                                     " of " + guid_str(peer.node.guid) + " has port GUID " +
                                     guid_str(back->port.port_guid) + " (line " + std::to_string(back->line) +
                                     ") but " + guid_str(pr.remote_port_guid) + " here"});
        }
      }
    }
    Fabric fabric;
    fabric.sources.push_back(file_);
    for (auto &rec : nodes_) {
      FabricNode n = std::move(rec.node);
      n.nports = std::max(n.nports, rec.max_port_seen);
      for (auto &pr : rec.ports) {
        if (n.type == NodeType::Switch && !pr.port.port_guid) pr.port.port_guid = rec.port0_guid;
        n.ports.push_back(pr.port);
      }
      fabric.add_node(std::move(n));
    }
    fabric.problems = std::move(diagnostics_);
    fabric.problems.insert(fabric.problems.end(), problems_.begin(), problems_.end());
    fabric.finish();
    return fabric;
  }

  std::istream &in_;
  std::string file_;
  DumpFormat format_;
  int line_ = 0;
  std::vector<NodeRec> nodes_;
  std::unordered_map<uint64_t, size_t> by_guid_;
  bool have_current_ = false;   // port lines may follow (default format): they belong to
  size_t current_index_ = 0;    // this node
  int pending_ids_line_ = 0;    // first identification line of the block being read
  uint64_t pending_guid_ = 0;
  uint64_t pending_port0_ = 0;
  NodeType pending_type_ = NodeType::Ca;
  struct PairHash {
    size_t operator()(const std::pair<uint64_t, unsigned> &p) const {
      return std::hash<uint64_t>()(p.first * 257 + p.second);
    }
  };
  std::unordered_map<std::pair<uint64_t, unsigned>, int, PairHash> unconnected_;  // ports format
  std::vector<WalkProblem> diagnostics_;
  std::vector<WalkProblem> problems_;
};

}  // namespace

Fabric parse_ibnetdiscover(std::istream &in, const std::string &filename, DumpFormat format) {
  return Parser(in, filename, format).run();
}

Fabric parse_ibnetdiscover_file(const std::string &path, DumpFormat format) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw ParseError(path, 0,
                     std::string("cannot open: ") + std::strerror(errno) + "; expected a readable ibnetdiscover dump");
  if (S_ISDIR(st.st_mode)) throw ParseError(path, 0, "is a directory; expected an ibnetdiscover dump file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ParseError(path, 0,
                     std::string("cannot open: ") + std::strerror(errno) + "; expected a readable ibnetdiscover dump");
  return parse_ibnetdiscover(in, path, format);
}

}  // namespace topoaware
