// SPDX-License-Identifier: GPL-2.0-or-later
// C API over the status book (status_c.h).
#include "status_c.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>

#include "c_api_util.hpp"
#include "status.hpp"

using namespace topoaware;

struct topoaware_status {
  StatusBook book;
};

struct topoaware_status_changes {
  StatusChanges changes;
};

namespace {

std::string s(const char *p) { return p ? std::string(p) : std::string(); }

StatusJob job_from_c(const topoaware_status_job_t &c) {
  StatusJob j;
  j.job_id = c.job_id;
  j.layout = s(c.layout);
  j.mode = s(c.mode);
  j.gpus_per_node = c.gpus_per_node;
  j.placement = s(c.placement);
  j.nodes = s(c.nodes);
  j.node_order = s(c.node_order);
  j.reason = s(c.reason);
  j.migrate = c.migrate != 0;
  if (j.migrate) {
    j.signal = c.signal, j.signal_time = c.signal_time;
    j.signal_batch = c.signal_batch != 0, j.requeue = c.requeue != 0;
  }
  return j;
}

}  // namespace

extern "C" {

topoaware_status_t *topoaware_status_create(const char *plugin) {
  return c_boundary(nullptr, 0, static_cast<topoaware_status_t *>(nullptr), [&] {
    auto *st = new topoaware_status;
    st->book.set_plugin(s(plugin));
    return st;
  });
}

void topoaware_status_free(topoaware_status_t *st) { delete st; }

int topoaware_status_set_topology(topoaware_status_t *st, const char *file, const char *hash, const char *error) {
  if (!st) return -1;
  return c_boundary(nullptr, 0, -1, [&] {
    st->book.set_topology(s(file), s(hash), s(error));
    return 0;
  });
}

int topoaware_status_waiting(topoaware_status_t *st, const topoaware_status_job_t *job, int64_t now) {
  if (!st || !job) return -1;
  return c_boundary(nullptr, 0, -1, [&] {
    st->book.waiting(job_from_c(*job), now);
    return 0;
  });
}

int topoaware_status_placed(topoaware_status_t *st, const topoaware_status_job_t *job, int64_t now) {
  if (!st || !job) return -1;
  return c_boundary(nullptr, 0, -1, [&] {
    st->book.placed(job_from_c(*job), now);
    return 0;
  });
}

int topoaware_status_waiting_hint(topoaware_status_t *st, const topoaware_status_job_t *job, int64_t now) {
  if (!st || !job) return -1;
  return c_boundary(nullptr, 0, -1, [&] {
    st->book.waiting_hint(job_from_c(*job), now);
    return 0;
  });
}

void topoaware_status_set_counters(topoaware_status_t *st, const topoaware_call_counters_t *c) {
  if (!st || !c) return;
  CallCounters k;
  k.calls = c->calls;
  k.total_us = c->total_us;
  k.max_us = c->max_us;
  k.layout_calls = c->layout_calls;
  k.layout_total_us = c->layout_total_us;
  k.layout_max_us = c->layout_max_us;
  if (c->buckets && c->buckets <= kMaxCallBuckets && c->le_us && c->counts && c->layout_counts) {
    k.buckets = c->buckets;
    for (uint32_t i = 0; i < c->buckets; ++i) k.le_us[i] = c->le_us[i];
    for (uint32_t i = 0; i <= c->buckets; ++i) k.counts[i] = c->counts[i], k.layout_counts[i] = c->layout_counts[i];
  }
  st->book.set_counters(k);  // plain copies: does not throw
}

void topoaware_status_finished(topoaware_status_t *st, uint32_t job_id) {
  if (st) st->book.finished(job_id);  // an erase; its change is kept or the changes stopped: no throw
}

size_t topoaware_status_forget_waiting(topoaware_status_t *st, int (*gone)(uint32_t job_id, void *arg), void *arg,
                                       uint32_t *next, size_t max_visits) {
  if (!st || !gone || !next) return 0;
  // Erases, as above: no throw.
  return st->book.forget_waiting_if([&](uint32_t id) { return gone(id, arg) != 0; }, *next,
                                    max_visits ? max_visits : 1);
}

void topoaware_status_stop_changes(topoaware_status_t *st) {
  if (st) st->book.stop_changes();
}

int topoaware_status_job_phase(const topoaware_status_t *st, uint32_t job_id) {
  if (!st) return -1;
  auto it = st->book.jobs().find(job_id);  // map lookup: does not throw
  if (it == st->book.jobs().end()) return -1;
  return it->second.phase == JobPhase::Placed ? 1 : 0;
}

int topoaware_status_render(topoaware_status_t *st, int64_t now, int64_t min_interval, int force, char **text,
                            size_t *len, char *err, size_t errlen) {
  copy_c_error("", err, errlen);
  if (text) *text = nullptr;
  if (len) *len = 0;
  if (!st || !text || !len) {
    copy_c_error("no status book or no place for the text", err, errlen);
    return -1;
  }
  return c_boundary(err, errlen, -1, [&] {
    if (!st->book.should_write(now, min_interval, force != 0)) return 0;
    std::string t = st->book.render(now);
    char *out = static_cast<char *>(std::malloc(t.size() + 1));
    if (!out) throw std::bad_alloc();
    std::memcpy(out, t.data(), t.size());
    out[t.size()] = '\0';
    st->book.written(now);
    *text = out;
    *len = t.size();
    return 1;
  });
}

void topoaware_status_text_free(char *text) { std::free(text); }

int topoaware_status_take(topoaware_status_t *st, int64_t now, int write, int64_t min_interval, int force, int full,
                          topoaware_status_changes_t **changes, char *err, size_t errlen) {
  copy_c_error("", err, errlen);
  if (changes) *changes = nullptr;
  if (!st || !changes) {
    copy_c_error("no status book or no place for the changes", err, errlen);
    return -1;
  }
  return c_boundary(err, errlen, -1, [&] {
    auto holder = std::make_unique<topoaware_status_changes>();
    holder->changes = st->book.take(now, full != 0);
    const bool due = write && st->book.should_write(now, min_interval, force != 0);
    if (due) st->book.written(now);
    *changes = holder.release();
    return due ? 1 : 0;
  });
}

int topoaware_status_apply(topoaware_status_t *copy, topoaware_status_changes_t *changes, char *err, size_t errlen) {
  copy_c_error("", err, errlen);
  std::unique_ptr<topoaware_status_changes> owned(changes);
  if (!copy || !changes) {
    copy_c_error("no status copy or no changes", err, errlen);
    return -1;
  }
  return c_boundary(err, errlen, -1, [&] {
    copy->book.apply(std::move(owned->changes));
    return 0;
  });
}

void topoaware_status_changes_free(topoaware_status_changes_t *changes) { delete changes; }

int topoaware_status_write_text(const char *path, const char *text, size_t len, char *err, size_t errlen) {
  copy_c_error("", err, errlen);
  if (!path || !*path || !text) {
    copy_c_error("no status file path or no text", err, errlen);
    return -1;
  }
  return c_boundary(err, errlen, -1, [&] {
    write_status_file(path, std::string(text, len));
    return 0;
  });
}

void topoaware_status_write_failed(topoaware_status_t *st) {
  if (st) st->book.write_failed();
}

}  // extern "C"
