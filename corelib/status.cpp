// SPDX-License-Identifier: GPL-2.0-or-later
// The select plugin's status file (status.hpp).
#include "status.hpp"

#include "file_read.hpp"
#include "safe_folder.hpp"

#include "text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>

#include <memory>
#include <vector>

namespace topoaware {

using nlohmann::json;

void CallCounters::add(uint64_t us, bool layout_job) {
  ++calls;
  total_us += us;
  max_us = std::max(max_us, us);
  if (layout_job) {
    ++layout_calls;
    layout_total_us += us;
    layout_max_us = std::max(layout_max_us, us);
  }
}

namespace {

const char *phase_name(JobPhase p) { return p == JobPhase::Placed ? "placed" : "waiting"; }

json job_to_json(const StatusJob &j) {
  json o = json::object();
  o["job_id"] = j.job_id;
  o["phase"] = phase_name(j.phase);
  // Every string as printable text: reasons quote input, and the file must stay writable and readable.
  o["layout"] = printable_text(j.layout);
  o["mode"] = printable_text(j.mode);
  o["gpus_per_node"] = j.gpus_per_node;
  o["placement"] = printable_text(j.placement);
  o["nodes"] = printable_text(j.nodes);
  o["node_order"] = printable_text(j.node_order);
  o["reason"] = printable_text(j.reason);
  o["since"] = j.since;
  o["updated"] = j.updated;
  if (j.migrate) {
    json m = json::object();
    m["signal"] = j.signal;
    m["signal_time"] = j.signal_time;
    m["batch"] = j.signal_batch;
    m["requeue"] = j.requeue;
    o["migrate"] = m;
  }
  return o;
}

[[noreturn]] void bad(std::string_view source, const std::string &what) {
  throw StatusError(std::string(source) + ": " + what);
}

// Strict field access: the file is written by the plugin, but a user command must not trust it.
const json &field(const json &o, const char *key, json::value_t type, std::string_view source,
                  const std::string &where) {
  auto it = o.find(key);
  if (it == o.end()) bad(source, where + ": missing \"" + key + "\"");
  bool ok = it->type() == type ||
            (type == json::value_t::number_integer && it->type() == json::value_t::number_unsigned);
  if (!ok) bad(source, where + ": \"" + key + "\" has the wrong type");
  return *it;
}

std::string str(const json &o, const char *key, std::string_view source, const std::string &where) {
  return field(o, key, json::value_t::string, source, where).get<std::string>();
}

uint64_t u64(const json &o, const char *key, std::string_view source, const std::string &where) {
  const json &v = field(o, key, json::value_t::number_integer, source, where);
  if (v.is_number_integer() && v.get<int64_t>() < 0) bad(source, where + ": \"" + key + "\" is negative");
  return v.get<uint64_t>();
}

}  // namespace

std::string status_to_json(const Status &s) {
  json o = json::object();
  o["schema"] = kStatusSchema;
  o["plugin"] = s.plugin;
  o["written_at"] = s.written_at;
  o["topology"] = {{"file", printable_text(s.topology_file)},
                   {"hash", printable_text(s.topology_hash)},
                   {"error", printable_text(s.topology_error)}};
  const CallCounters &c = s.counters;
  o["job_test"] = {{"calls", c.calls},
                   {"total_us", c.total_us},
                   {"max_us", c.max_us},
                   {"layout_calls", c.layout_calls},
                   {"layout_total_us", c.layout_total_us},
                   {"layout_max_us", c.layout_max_us}};
  if (c.buckets) {  // written only when the plugin counts them (older plugins: no histogram)
    json le = json::array(), counts = json::array(), layout = json::array();
    for (uint32_t i = 0; i < c.buckets; ++i) le.push_back(c.le_us[i]);
    for (uint32_t i = 0; i <= c.buckets; ++i) counts.push_back(c.counts[i]), layout.push_back(c.layout_counts[i]);
    o["job_test"]["le_us"] = le;
    o["job_test"]["counts"] = counts;
    o["job_test"]["layout_counts"] = layout;
  }
  std::vector<const StatusJob *> jobs;
  jobs.reserve(s.jobs.size());
  for (const StatusJob &j : s.jobs) jobs.push_back(&j);
  std::sort(jobs.begin(), jobs.end(), [](const StatusJob *a, const StatusJob *b) { return a->job_id < b->job_id; });
  json arr = json::array();
  for (const StatusJob *j : jobs) arr.push_back(job_to_json(*j));
  o["jobs"] = std::move(arr);
  // Replace, never throw: a message quoting a binary file must not stop every later write.
  return o.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

Status status_from_json(std::string_view text, std::string_view source) {
  if (text.size() > kMaxStatusBytes) bad(source, "larger than " + std::to_string(kMaxStatusBytes) + " bytes");
  json o = json::parse(text.begin(), text.end(), nullptr, false);
  if (o.is_discarded()) bad(source, "not valid JSON (a file being written? try again)");
  if (!o.is_object()) bad(source, "not a JSON object");
  const std::string top = "top level";
  std::string schema = str(o, "schema", source, top);
  if (schema != kStatusSchema) bad(source, "schema \"" + schema + "\", expected \"" + kStatusSchema + "\"");
  Status s;
  s.plugin = str(o, "plugin", source, top);
  s.written_at = static_cast<int64_t>(u64(o, "written_at", source, top));
  const json &t = field(o, "topology", json::value_t::object, source, top);
  s.topology_file = str(t, "file", source, "topology");
  s.topology_hash = str(t, "hash", source, "topology");
  s.topology_error = str(t, "error", source, "topology");
  const json &c = field(o, "job_test", json::value_t::object, source, top);
  s.counters.calls = u64(c, "calls", source, "job_test");
  s.counters.total_us = u64(c, "total_us", source, "job_test");
  s.counters.max_us = u64(c, "max_us", source, "job_test");
  s.counters.layout_calls = u64(c, "layout_calls", source, "job_test");
  s.counters.layout_total_us = u64(c, "layout_total_us", source, "job_test");
  s.counters.layout_max_us = u64(c, "layout_max_us", source, "job_test");
  if (c.contains("le_us")) {  // the histogram: optional, but whole and consistent when there
    const json &le = field(c, "le_us", json::value_t::array, source, "job_test");
    const json &counts = field(c, "counts", json::value_t::array, source, "job_test");
    const json &layout = field(c, "layout_counts", json::value_t::array, source, "job_test");
    if (le.empty() || le.size() > kMaxCallBuckets || counts.size() != le.size() + 1 || layout.size() != counts.size())
      bad(source, "job_test: le_us, counts and layout_counts do not fit together");
    s.counters.buckets = uint32_t(le.size());
    for (size_t i = 0; i < le.size(); ++i) {
      if (!le[i].is_number_unsigned()) bad(source, "job_test: le_us holds something else than a count");
      s.counters.le_us[i] = le[i].get<uint64_t>();
      if (i && s.counters.le_us[i] <= s.counters.le_us[i - 1]) bad(source, "job_test: le_us is not increasing");
    }
    for (size_t i = 0; i < counts.size(); ++i) {
      if (!counts[i].is_number_unsigned() || !layout[i].is_number_unsigned())
        bad(source, "job_test: counts hold something else than counts");
      s.counters.counts[i] = counts[i].get<uint64_t>();
      s.counters.layout_counts[i] = layout[i].get<uint64_t>();
    }
  }
  const json &arr = field(o, "jobs", json::value_t::array, source, top);
  if (arr.size() > kMaxStatusJobs) bad(source, "more than " + std::to_string(kMaxStatusJobs) + " jobs");
  for (size_t i = 0; i < arr.size(); ++i) {
    const json &e = arr[i];
    std::string where = "jobs[" + std::to_string(i) + "]";
    if (!e.is_object()) bad(source, where + ": not an object");
    StatusJob j;
    uint64_t id = u64(e, "job_id", source, where);
    if (id == 0 || id > UINT32_MAX) bad(source, where + ": job_id out of range");
    j.job_id = static_cast<uint32_t>(id);
    std::string phase = str(e, "phase", source, where);
    if (phase == "placed")
      j.phase = JobPhase::Placed;
    else if (phase == "waiting")
      j.phase = JobPhase::Waiting;
    else
      bad(source, where + ": phase \"" + phase + "\", expected placed or waiting");
    j.layout = str(e, "layout", source, where);
    j.mode = str(e, "mode", source, where);
    uint64_t g = u64(e, "gpus_per_node", source, where);
    if (g > UINT32_MAX) bad(source, where + ": gpus_per_node out of range");
    j.gpus_per_node = static_cast<uint32_t>(g);
    j.placement = str(e, "placement", source, where);
    j.nodes = str(e, "nodes", source, where);
    j.node_order = str(e, "node_order", source, where);
    j.reason = str(e, "reason", source, where);
    j.since = static_cast<int64_t>(u64(e, "since", source, where));
    j.updated = static_cast<int64_t>(u64(e, "updated", source, where));
    if (e.contains("migrate")) {  // optional: only jobs that opted in to defrag --apply
      const json &m = field(e, "migrate", json::value_t::object, source, where);
      const std::string mw = where + ".migrate";
      const uint64_t sig = u64(m, "signal", source, mw), t = u64(m, "signal_time", source, mw);
      if (sig > 64 || t > UINT32_MAX) bad(source, mw + ": signal or signal_time out of range");
      const json &b = field(m, "batch", json::value_t::boolean, source, mw);
      const json &r = field(m, "requeue", json::value_t::boolean, source, mw);
      j.migrate = true;
      j.signal = uint32_t(sig), j.signal_time = uint32_t(t);
      j.signal_batch = b.get<bool>(), j.requeue = r.get<bool>();
    }
    s.jobs.push_back(std::move(j));
  }
  return s;
}

Status load_status_file(const std::string &path) {
  std::string text;
  try {
    text = read_regular_file(path, kMaxStatusBytes, std::to_string(kMaxStatusBytes) + " bytes");
  } catch (const FileReadError &e) {
    throw StatusError(path + ": " + e.what());
  }
  return status_from_json(text, path);
}

void write_status_file(const std::string &path, const std::string &text) {
  if (path.empty() || path[0] != '/') throw StatusError("status file '" + path + "': not an absolute path");
  const size_t slash = path.rfind('/');
  const std::string folder = slash == 0 ? "/" : path.substr(0, slash), name = path.substr(slash + 1);
  if (name.empty()) throw StatusError("status file '" + path + "': names a folder, not a file");
  // The folder as the writer's own or root's, reached without a link or a folder another user may
  // change: else a user could make slurmctld replace a file of their choosing. The new file has a
  // random name opened with O_EXCL|O_NOFOLLOW|O_NONBLOCK: a FIFO, device or link planted there
  // would otherwise block the writer thread (and slurmctld's shutdown with it) or redirect it.
  std::string why;
  FolderTrust trust;
  trust.also_owner = ::geteuid();
  trust.what = "the status file's folder";
  const int dir_fd = open_folder_safely(folder, trust, false, &why);
  if (dir_fd < 0) throw StatusError("status file " + path + ": " + why);
  try {
    replace_file_at(dir_fd, name, text, 0644);
  } catch (const std::runtime_error &e) {
    ::close(dir_fd);
    throw StatusError("status file " + path + ": " + e.what());
  }
  ::close(dir_fd);
}

void copy_status_file(const std::string &source, const std::string &path, const std::string &sha256) {
  if (path.empty() || path[0] != '/') throw StatusError("copy '" + path + "': not an absolute path");
  const size_t slash = path.rfind('/');
  const std::string folder = slash == 0 ? "/" : path.substr(0, slash), name = path.substr(slash + 1);
  if (name.empty()) throw StatusError("copy '" + path + "': names a folder, not a file");
  const int src = ::open(source.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (src < 0) throw StatusError("cannot copy " + source + ": cannot open it: " + std::strerror(errno));
  struct stat st;
  if (fstat(src, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(src);
    throw StatusError("cannot copy " + source + ": not a regular file");
  }
  std::string why;
  FolderTrust trust;
  trust.also_owner = ::geteuid();
  trust.what = "the copy's folder";
  const int dir_fd = open_folder_safely(folder, trust, false, &why);
  if (dir_fd < 0) {
    ::close(src);
    throw StatusError("copy " + path + ": " + why);
  }
  try {
    replace_file_at(dir_fd, name, 0644, [&](int fd) {
      std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX *)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
      if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("SHA-256 failed (OpenSSL)");
      std::vector<char> buf(size_t(1) << 20);
      for (;;) {
        const ssize_t n = ::read(src, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::runtime_error("cannot read " + source + ": " + std::strerror(errno));
        if (n == 0) break;
        if (EVP_DigestUpdate(ctx.get(), buf.data(), size_t(n)) != 1) throw std::runtime_error("SHA-256 failed (OpenSSL)");
        for (ssize_t done = 0; done < n;) {
          const ssize_t w = ::write(fd, buf.data() + done, size_t(n - done));
          if (w < 0 && errno == EINTR) continue;
          if (w < 0) return errno;
          done += w;
        }
      }
      unsigned char md[EVP_MAX_MD_SIZE];
      unsigned len = 0;
      if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) throw std::runtime_error("SHA-256 failed (OpenSSL)");
      static const char kHex[] = "0123456789abcdef";
      std::string hex;
      for (unsigned i = 0; i < len; ++i) hex += {kHex[md[i] >> 4], kHex[md[i] & 15]};
      if (hex != sha256)
        throw std::runtime_error(source + " changed since it was read (its bytes are no longer the ones loaded)");
      return 0;
    });
  } catch (const std::runtime_error &e) {
    ::close(dir_fd);
    ::close(src);
    throw StatusError("copy " + path + ": " + e.what());
  }
  ::close(dir_fd);
  ::close(src);
}

void StatusBook::set_topology(std::string file, std::string hash, std::string error) {
  status_.topology_file = std::move(file);
  status_.topology_hash = std::move(hash);
  status_.topology_error = std::move(error);
  dirty_ = true;
}

void StatusBook::waiting(const StatusJob &job, int64_t now) { record_waiting(job, now, false); }

void StatusBook::waiting_hint(const StatusJob &job, int64_t now) { record_waiting(job, now, true); }

void StatusBook::record_waiting(const StatusJob &job, int64_t now, bool hint) {
  auto it = jobs_.find(job.job_id);
  int64_t since = now, reason_at = hint ? 0 : now;
  std::string reason = job.reason;
  bool is_hint = hint;
  if (it != jobs_.end() && it->second.phase == JobPhase::Waiting) {
    const StatusJob &old = it->second;
    since = old.since;
    if (hint && !old.hint && now - old.reason_at <= kStatusWaitingTtl) {
      // A fresh run-now reason says more than backfill's plan: keep it, refresh the entry.
      reason = old.reason;
      reason_at = old.reason_at;
      is_hint = false;
    }
    // An unchanged verdict only refreshes the entry: no rewrite every scheduling cycle.
    if (old.reason != reason || old.mode != job.mode || old.layout != job.layout) dirty_ = true;
  } else {
    dirty_ = true;
  }
  if (it == jobs_.end() && !make_room(now)) return;
  StatusJob e = job;
  e.phase = JobPhase::Waiting;
  e.reason = std::move(reason);
  e.since = since;
  e.updated = now;
  e.hint = is_hint;
  e.reason_at = reason_at;
  put(std::move(e));
}

void StatusBook::placed(const StatusJob &job, int64_t now) {
  auto it = jobs_.find(job.job_id);
  if (it == jobs_.end() && !make_room(now)) return;
  StatusJob e = job;
  e.phase = JobPhase::Placed;
  e.since = now;
  e.updated = now;
  put(std::move(e));
  dirty_ = true;
}

// Out of memory leaves the entry and the index as they were, and the changes either whole or
// dropped (stop_changes: the next take is a full one), never telling of an entry the book lacks.
void StatusBook::put(StatusJob entry) {
  const uint32_t id = entry.job_id;
  if (tracking_ != Tracking::Off) record(id, entry);
  try {
    put_entry(std::move(entry));
  } catch (...) {
    stop_changes();  // the change recorded above was not made: the next take is a full one
    throw;
  }
}

void StatusBook::put_entry(StatusJob entry) {
  const uint32_t id = entry.job_id;
  auto [it, fresh] = jobs_.try_emplace(id);
  const bool was_waiting = !fresh && it->second.phase == JobPhase::Waiting;
  const std::pair<int64_t, uint32_t> old_key{it->second.updated, id}, new_key{entry.updated, id};
  const bool keep_key = was_waiting && entry.phase == JobPhase::Waiting && old_key == new_key;
  if (entry.phase == JobPhase::Waiting && !keep_key) {
    try {
      waiting_by_update_.insert(new_key);
    } catch (...) {
      if (fresh) jobs_.erase(it);
      throw;
    }
  }
  if (was_waiting && !keep_key) waiting_by_update_.erase(old_key);
  it->second = std::move(entry);
}

StatusBook::Entries::iterator StatusBook::erase_entry(Entries::iterator it) {
  if (tracking_ != Tracking::Off) record(it->first, std::nullopt);  // never throws
  if (it->second.phase == JobPhase::Waiting) waiting_by_update_.erase({it->second.updated, it->first});
  dirty_ = true;
  return jobs_.erase(it);
}

bool StatusBook::make_room(int64_t now) {
  if (jobs_.size() < kMaxStatusJobs) return true;
  prune(now);
  if (jobs_.size() < kMaxStatusJobs) return true;
  // Still full: drop the longest-unrefreshed waiting entry (placed jobs hold real nodes).
  if (waiting_by_update_.empty()) return false;  // all placed: keep them, lose this verdict
  erase_entry(jobs_.find(waiting_by_update_.begin()->second));
  return true;
}

void StatusBook::finished(uint32_t job_id) {
  auto it = jobs_.find(job_id);
  if (it != jobs_.end()) erase_entry(it);
}

void StatusBook::prune(int64_t now) {
  while (!waiting_by_update_.empty() && now - waiting_by_update_.begin()->first > kStatusWaitingTtl)
    erase_entry(jobs_.find(waiting_by_update_.begin()->second));
}

void StatusBook::written(int64_t now) {
  dirty_ = false;
  last_render_ = now;
}

StatusChanges StatusBook::take(int64_t now, bool full) {
  prune(now);
  StatusChanges out;
  out.header.plugin = status_.plugin;
  out.header.topology_file = status_.topology_file;
  out.header.topology_hash = status_.topology_hash;
  out.header.topology_error = status_.topology_error;
  out.header.counters = status_.counters;
  if (tracking_ == Tracking::Off || (full && tracking_ == Tracking::SinceTake)) {
    out.jobs.reserve(jobs_.size());
    for (const auto &kv : jobs_) out.jobs.emplace(kv.first, kv.second);
    changes_.clear();
    out.full = true;
  } else {
    // Changes since the book was made are every entry it holds: a full take costs no more.
    out.full = full || tracking_ == Tracking::SinceCreation;
    out.jobs.swap(changes_);
  }
  tracking_ = Tracking::SinceTake;
  return out;
}

void StatusBook::record(uint32_t id, std::optional<StatusJob> change) noexcept {
  if (tracking_ == Tracking::Off) return;
  if (changes_.size() >= kMaxStatusChanges && !changes_.count(id)) {
    stop_changes();  // nobody takes them (no writer)
    return;
  }
  try {
    changes_[id] = std::move(change);
  } catch (...) {  // out of memory: this change cannot be kept, so none are
    stop_changes();
  }
}

void StatusBook::stop_changes() noexcept {
  changes_.clear();
  tracking_ = Tracking::Off;
}

void StatusBook::apply(StatusChanges &&changes) {
  tracking_ = Tracking::Off;  // a copy hands nothing on
  changes_.clear();
  status_.plugin = std::move(changes.header.plugin);
  status_.topology_file = std::move(changes.header.topology_file);
  status_.topology_hash = std::move(changes.header.topology_hash);
  status_.topology_error = std::move(changes.header.topology_error);
  status_.counters = changes.header.counters;
  if (changes.full) {
    jobs_.clear();
    waiting_by_update_.clear();
  }
  for (auto &kv : changes.jobs) {
    if (kv.second) {
      put(std::move(*kv.second));
    } else {
      auto it = jobs_.find(kv.first);
      if (it != jobs_.end()) erase_entry(it);
    }
  }
  dirty_ = true;
}

bool StatusBook::should_write(int64_t now, int64_t min_interval, bool force) const {
  if (force) return true;
  if (!dirty_) return false;
  return last_render_ == 0 || now - last_render_ >= min_interval;
}

std::string StatusBook::render(int64_t now) {
  prune(now);
  status_.written_at = now;
  status_.jobs.clear();
  status_.jobs.reserve(jobs_.size());
  for (const auto &kv : jobs_) status_.jobs.push_back(kv.second);
  std::string text = status_to_json(status_);
  status_.jobs.clear();
  return text;
}

}  // namespace topoaware
