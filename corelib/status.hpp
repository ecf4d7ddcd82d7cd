// SPDX-License-Identifier: GPL-2.0-or-later
// The select plugin's status file (schema "topoaware-status/1"): which layout jobs it placed where,
// which it holds back and why, its call counters, and the topology it used. slurmctld writes it
// (atomically, from memory the plugin keeps); `topoaware show` reads it to draw the jobs on the
// fabric. No Slurm here: job ids, host lists and times are plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace topoaware {

struct StatusError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr const char *kStatusSchema = "topoaware-status/1";
// Bounds: the file is written under slurmctld's locks and read by a user command, so both sides
// stay bounded whatever the queue holds. Past kMaxStatusJobs the oldest waiting entries go first.
inline constexpr size_t kMaxStatusJobs = 100000;
inline constexpr size_t kMaxStatusBytes = 64u << 20;
// Changes kept for the writer between two takes (it takes every second): past this, nobody is
// taking them, and the book stops recording until the next take, which is then a full one.
inline constexpr size_t kMaxStatusChanges = 2 * kMaxStatusJobs;
// A waiting entry not refreshed for this long (the job was cancelled, changed or placed by plain
// cons_tres) is dropped: pending jobs are tested again every scheduling cycle.
inline constexpr int64_t kStatusWaitingTtl = 600;

enum class JobPhase : uint8_t { Waiting, Placed };

struct StatusJob {
  uint32_t job_id = 0;
  JobPhase phase = JobPhase::Waiting;
  std::string layout;     // canonical layout text (to_string(Layout))
  std::string mode;       // "strict" | "prefer"
  uint32_t gpus_per_node = 0;
  std::string placement;  // Placed: "ideal" | "fallback" | "cons_tres" | "unknown" (found running at
                          // slurmctld start-up, placed before it); Waiting: ""
  std::string nodes;      // Placed: Slurm host list of the job's nodes
  std::string node_order; // Placed: host names in rank order, comma-separated (the engine's order)
  std::string reason;     // Waiting: why; Placed: a note (e.g. why it is not ideal), may be empty
  int64_t since = 0;      // unix time of the first decision in this phase
  int64_t updated = 0;    // unix time of the last decision
  // The job asked to be moved by `topoaware defrag --apply` (--topo-migrate) and how it checkpoints:
  // its --signal (number, seconds before the end, B: the batch shell gets it) and whether Slurm may
  // requeue it. In the file as an optional "migrate" object, present only when migrate is true.
  bool migrate = false;
  uint32_t signal = 0, signal_time = 0;
  bool signal_batch = false, requeue = false;
  // In memory only (not in the file): a Waiting reason from backfill's will-run test (a hint)
  // does not replace a run-now reason younger than kStatusWaitingTtl; reason_at is when the
  // reason was last given by run-now.
  bool hint = false;
  int64_t reason_at = 0;
};

// Time spent in select_p_job_test, by the plugin's own clock (both the placing build and the
// pass-through baseline count the same way).
inline constexpr uint32_t kMaxCallBuckets = 32;
struct CallCounters {
  uint64_t calls = 0, total_us = 0, max_us = 0;
  uint64_t layout_calls = 0, layout_total_us = 0, layout_max_us = 0;  // calls for layout jobs
  // A histogram of call times, bounds given by the counting side (0 buckets: none): counts[i] calls
  // took at most le_us[i] and more than le_us[i - 1]; counts[buckets] took longer than all bounds.
  uint32_t buckets = 0;
  uint64_t le_us[kMaxCallBuckets] = {};
  uint64_t counts[kMaxCallBuckets + 1] = {}, layout_counts[kMaxCallBuckets + 1] = {};
  void add(uint64_t us, bool layout_job);
};

struct Status {
  std::string plugin;         // "select/cons_tres_topoaware"
  std::string topology_file;  // empty: none loaded (plain cons_tres)
  std::string topology_hash;
  std::string topology_error; // why the last load failed ("" if it did not)
  int64_t written_at = 0;
  CallCounters counters;
  std::vector<StatusJob> jobs;  // by job id
};

// Canonical JSON text (jobs sorted by id).
std::string status_to_json(const Status &status);
// Parses and validates; throws StatusError naming `source` and what is wrong.
Status status_from_json(std::string_view text, std::string_view source);
Status load_status_file(const std::string &path);  // throws StatusError
// Replaces `path` atomically with `text`: a temporary file in the same folder (created with mode
// 0644 less the process umask, never through a symbolic link), then rename(2). Throws StatusError
// naming the path and the system's reason.
void write_status_file(const std::string &path, const std::string &text);
// Copies the regular file `source` to `path` the way write_status_file writes (same folder checks,
// a temporary file renamed over it), 1 MiB at a time, and keeps the copy only if the bytes copied
// have the SHA-256 `sha256` (64 lower-case hex digits): a source changed since it was read is never
// kept as its copy. Memory stays at the piece size whatever the file's. Throws StatusError naming
// the paths and what failed; `path` is then unchanged.
void copy_status_file(const std::string &source, const std::string &path, const std::string &sha256);

// What changed in a StatusBook since the last StatusBook::take: per job id, its entry as it is now,
// or none (the entry went). `full`: `jobs` holds every entry and the receiving copy starts again from
// it. The header (plugin, topology, counters) is always whole: it is small.
struct StatusChanges {
  Status header;  // jobs empty
  std::unordered_map<uint32_t, std::optional<StatusJob>> jobs;
  bool full = false;
};

// What the plugin keeps in memory between writes. The plugin's lock guards it, and job_test waits
// on that lock, so nothing here costs time in proportion to the book except render (for a copy
// rendered with no lock held) and a take with `full`: a change costs O(log n), an expired entry is
// found through an index by last update, and the file writer gets what changed since its last
// take (StatusChanges, handed over in O(1)), which it applies to a copy of its own outside the lock.
class StatusBook {
 public:
  void set_plugin(std::string name) { status_.plugin = std::move(name); dirty_ = true; }
  void set_topology(std::string file, std::string hash, std::string error);
  // A decision for a layout job. Waiting keeps `since` while the job keeps waiting.
  void waiting(const StatusJob &job, int64_t now);
  // The same from backfill's will-run test: it refreshes the entry, but its reason replaces only
  // a hint or a run-now reason older than kStatusWaitingTtl.
  void waiting_hint(const StatusJob &job, int64_t now);
  void placed(const StatusJob &job, int64_t now);
  void finished(uint32_t job_id);  // job ended (or was requeued): forget it
  // Forgets the waiting entries for which gone(job_id) is true (a pending job that was cancelled:
  // Slurm tells a select plugin nothing about it), looking at no more than `max_visits` entries
  // from job id `next` on, so that the caller can release its locks between two pieces. Sets
  // `next` to the job id to start the next piece from, 0 once the book was walked to its end.
  // Returns how many went.
  template <class Gone>
  size_t forget_waiting_if(Gone gone, uint32_t &next, size_t max_visits) {
    size_t n = 0, seen = 0;
    auto it = jobs_.lower_bound(next);
    for (; it != jobs_.end() && seen < max_visits; ++seen) {
      if (it->second.phase == JobPhase::Waiting && gone(it->first)) {
        it = erase_entry(it);
        ++n;
      } else {
        ++it;
      }
    }
    next = it == jobs_.end() ? 0 : it->first;
    return n;
  }
  void count_call(uint64_t us, bool layout_job) { status_.counters.add(us, layout_job); }
  void set_counters(const CallCounters &c) { status_.counters = c; }  // the caller's own counters
  const CallCounters &counters() const { return status_.counters; }
  const std::map<uint32_t, StatusJob> &jobs() const { return jobs_; }
  // Drops stale waiting entries, then the JSON text with written_at = now. O(n): for a copy.
  std::string render(int64_t now);
  void written(int64_t now);  // the last render reached the file (or is on its way: see write_failed)
  // Drops stale waiting entries and hands over what changed since the last take: O(1) beside the
  // entries that expired. `full` (the receiving copy is new, or fell out of step) hands over every
  // entry instead, which costs O(n) unless nothing was taken yet (the changes since the book was
  // made are then every entry). Throws std::bad_alloc before it changes anything but the pruning.
  StatusChanges take(int64_t now, bool full);
  // Applies changes taken from another book, so that this copy renders what that book holds.
  // On an exception the copy is out of step with its book: start a new one with a full take.
  void apply(StatusChanges &&changes);
  // Nobody takes the changes (no status file, or the writer's copy was lost): drop those kept and
  // keep none until the next take, which is then a full one.
  void stop_changes() noexcept;
  void write_failed() { dirty_ = true; }  // it did not: the next due write retries
  // True if something changed since the last render and at least `min_interval` seconds passed
  // (or `force`). Counters alone do not make the book dirty.
  bool should_write(int64_t now, int64_t min_interval, bool force) const;

 private:
  using Entries = std::map<uint32_t, StatusJob>;
  void prune(int64_t now);
  void record_waiting(const StatusJob &job, int64_t now, bool hint);
  bool make_room(int64_t now);  // room for one more entry; false if every entry is a placed job
  void put(StatusJob entry);    // sets the entry of entry.job_id: index and changes kept
  Entries::iterator erase_entry(Entries::iterator it);
  void put_entry(StatusJob entry);
  // Keeps a change for the next take; out of memory or past kMaxStatusChanges it stops keeping
  // them (stop_changes), so it never throws.
  void record(uint32_t id, std::optional<StatusJob> change) noexcept;
  Status status_;
  Entries jobs_;
  // The waiting entries by (updated, job id): the stale ones and make_room's victim are its first.
  std::set<std::pair<int64_t, uint32_t>> waiting_by_update_;
  // Whether changes_ holds what changed since the book was made (so, every entry), since the last
  // take, or nothing (a copy, or a book nobody took from: past kMaxStatusChanges it stops).
  enum class Tracking : uint8_t { SinceCreation, SinceTake, Off } tracking_ = Tracking::SinceCreation;
  std::unordered_map<uint32_t, std::optional<StatusJob>> changes_;
  bool dirty_ = true;
  int64_t last_render_ = 0;
};

}  // namespace topoaware
