// SPDX-License-Identifier: GPL-2.0-or-later
// See spank_settings.hpp.
#include "spank_settings.hpp"

#include <cstring>

#include "text.hpp"

namespace topoaware {

namespace {

// At most n bytes of s (never cut inside a UTF-8 character), as printable text: what a message
// may quote of an admin's argument.
std::string quote(std::string_view s, size_t n) {
  if (s.size() > n) s = s.substr(0, utf8_prefix(s.data(), n));
  return printable_text(s);
}

bool absolute_path(std::string_view p, size_t max) { return !p.empty() && p[0] == '/' && p.size() <= max; }

// The paths are printed in logs as they are: control bytes or bytes that are not UTF-8 are refused.
void printable_path(std::string_view option, std::string_view p) {
  if (printable_text(p) != p || p.find('\t') != std::string_view::npos)
    throw ConfigError(std::string(option) + " holds control characters or bytes that are not UTF-8");
}

bool nic_names(std::string_view p) {
  for (const char c : p)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == '-' || c == ','))
      return false;
  return true;
}

// The value of a default_*= argument, bounded as the options' values are (the same messages).
std::string_view option_value(std::string_view option, std::string_view v) {
  if (v.size() > kMaxOptionValue)
    throw ConfigError(std::string(option) + ": value longer than " + std::to_string(kMaxOptionValue) + " bytes");
  return v;
}

// override_env=NAME,NAME,...|all|none into s->override_env; unknown names are reported and skipped.
void parse_override(std::string_view arg, std::string_view list, SpankSettings *s, std::vector<std::string> *warn) {
  if (list == "all") {
    for (size_t i = 0; i < kTaskDefaultVarCount; i++) s->override_env |= 1u << i;
    return;
  }
  if (list == "none") return;
  if (list.size() > kMaxOverrideArg) {
    warn->push_back("plugstack.conf argument '" + quote(arg, 128) + "...' is too long; argument ignored");
    return;
  }
  for (const std::string &field : split(list, ',')) {
    const std::string_view tok = field;
    if (tok.empty()) continue;
    const int i = task_default_var_index(tok);
    if (i >= 0) {
      s->override_env |= 1u << i;
      continue;
    }
    warn->push_back("plugstack.conf argument '" + quote(arg, 128) + "': '" + quote(tok, 64) +
                    "' is not a variable topoaware sets only when unset (those are " + task_default_var_list() +
                    ", or all); name ignored");
  }
}

// One argument into *s; throws ConfigError or LayoutError with what is wrong (the caller adds
// which argument), or returns false for an unknown key.
bool parse_one(std::string_view a, SpankSettings *s, std::vector<std::string> *warn) {
  const auto key = [&](std::string_view k) { return a.substr(0, k.size()) == k; };
  if (key("topology=")) {
    const std::string_view p = a.substr(9);
    if (!absolute_path(p, kMaxTopologyArg))
      throw ConfigError("the topology file must be an absolute path (e.g. topology=/etc/slurm/topology.json)");
    printable_path("the topology file's path", p);
    s->topology = std::string(p);
  } else if (key("state_dir=")) {
    const std::string_view p = a.substr(10);
    if (!absolute_path(p, kMaxStateDirArg)) throw ConfigError("state_dir must be an absolute path");
    printable_path("state_dir", p);
    s->state_dir = std::string(p);
  } else if (key("exclude_nics=")) {
    const std::string_view p = a.substr(13);
    if (p.size() > kMaxExcludeNicsArg || !nic_names(p))
      throw ConfigError("expected device names separated by commas (e.g. exclude_nics=mlx5_8,mlx5_9)");
    s->exclude_nics = std::string(p);
  } else if (key("override_env=")) {
    parse_override(a, a.substr(13), s, warn);
  } else if (key("default_order=")) {
    s->default_order = parse_rank_order(option_value("rank-order", a.substr(14)));
  } else if (key("default_mode=")) {
    s->default_mode = parse_topo_mode(option_value("topo-mode", a.substr(13)));
  } else if (key("default_max_wait=")) {
    s->default_max_wait = parse_wait("topo-max-wait", option_value("topo-max-wait", a.substr(17)));
  } else {
    return false;
  }
  return true;
}

}  // namespace

int task_default_var_index(std::string_view name) {
  for (size_t i = 0; i < kTaskDefaultVarCount; i++)
    if (name == kTaskDefaultVars[i]) return int(i);
  return -1;
}

std::string task_default_var_list() {
  std::string out;
  for (const char *n : kTaskDefaultVars) out += (out.empty() ? "" : ",") + std::string(n);
  return out;
}

bool SpankSettings::overrides(std::string_view name) const {
  const int i = task_default_var_index(name);
  return i >= 0 && ((override_env >> i) & 1u);
}

SpankSettings parse_spank_args(const std::vector<const char *> &args, std::vector<std::string> *warnings) {
  SpankSettings s;
  std::vector<std::string> ignored;
  std::vector<std::string> &warn = warnings ? *warnings : ignored;
  for (const char *arg : args) {
    if (!arg) continue;
    const std::string_view a(arg);
    SpankSettings next = s;  // a bad argument changes nothing
    try {
      if (!parse_one(a, &next, &warn)) {
        warn.push_back("unknown plugstack.conf argument '" + quote(a, 128) +
                       "' ignored; the arguments are topology=PATH, exclude_nics=NAMES, state_dir=PATH, "
                       "override_env=NAMES|all, default_order=tp-cp-ep-dp-pp|tp-pp-dp, default_mode=strict|prefer "
                       "and default_max_wait=TIME");
        continue;
      }
    } catch (const std::runtime_error &e) {  // ConfigError, LayoutError: the argument's own fault
      warn.push_back("plugstack.conf argument '" + quote(a, 128) + "': " + printable_text(e.what()) +
                     "; argument ignored");
      continue;
    }
    s = std::move(next);
  }
  return s;
}

bool valid_topology_hash(std::string_view h) {
  if (h.size() != 7 + 64 || h.substr(0, 7) != "sha256:") return false;
  for (const char c : h.substr(7))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string job_hash_file_name(uint32_t job_id) { return "job." + std::to_string(job_id) + ".hash"; }

std::string job_hash_file_text(std::string_view hash) {
  if (!valid_topology_hash(hash))
    throw ConfigError("'" + quote(hash, 80) + "' is not a topology hash (sha256: and 64 hex digits)");
  return std::string(hash) + "\n";
}

std::string job_hash_from_text(std::string_view text) {
  if (text.size() > kMaxJobHashFile) text = text.substr(0, kMaxJobHashFile);
  const size_t end = text.find_first_of(std::string_view("\n\0", 2));  // the first line, as a C string
  const std::string_view line = end == std::string_view::npos ? text : text.substr(0, end);
  return valid_topology_hash(line) ? std::string(line) : std::string();
}

namespace {

// A layout string ("tp=8,cp=1,ep=1,dp=2,pp=2,order=tp-cp-ep-dp-pp") or a node list: the characters
// Slurm node names and layout strings are made of, nothing that could end a line or a field.
bool placement_field_ok(std::string_view v, size_t max) {
  if (v.empty() || v.size() > max) return false;
  for (const char c : v)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '=' || c == ',' ||
          c == '-' || c == '_' || c == '.'))
      return false;
  return true;
}

}  // namespace

std::string job_placement_file_text(const JobPlacement &p) {
  std::string text = job_hash_file_text(p.hash);
  if (placement_field_ok(p.layout, 1024) && placement_field_ok(p.order, kMaxJobOrder))
    text += "layout " + p.layout + "\nrail_optimized " + (p.rail_optimized ? "1" : "0") + "\norder " + p.order + "\n";
  return text;
}

JobPlacement job_placement_from_text(std::string_view text) {
  JobPlacement p;
  p.hash = job_hash_from_text(text);
  if (p.hash.empty()) return p;
  if (text.size() > kMaxJobPlacementFile) return p;
  std::string layout, order;
  int rail = -1;
  size_t at = text.find('\n');
  while (at != std::string_view::npos && at + 1 < text.size()) {
    const size_t end = text.find('\n', at + 1);
    if (end == std::string_view::npos) return p;  // a last line without its newline: cut short
    const std::string_view line = text.substr(at + 1, end - at - 1);
    const size_t sp = line.find(' ');
    const std::string_view key = line.substr(0, sp), value = sp == std::string_view::npos ? "" : line.substr(sp + 1);
    if (key == "layout" && placement_field_ok(value, 1024)) layout = std::string(value);
    else if (key == "order" && placement_field_ok(value, kMaxJobOrder)) order = std::string(value);
    else if (key == "rail_optimized" && (value == "0" || value == "1")) rail = value == "1";
    else return p;  // anything else: not a file this version wrote
    at = end;
  }
  if (layout.empty() || order.empty() || rail < 0) return p;
  p.layout = std::move(layout);
  p.order = std::move(order);
  p.rail_optimized = rail == 1;
  return p;
}

}  // namespace topoaware
