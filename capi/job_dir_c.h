/* SPDX-License-Identifier: GPL-2.0-or-later */
/* C API of spank_topoaware's folders on a compute node (spank_topoaware(8), FILES): the state
 * folder (root's, e.g. /run/topoaware) and in it one private folder per job, job.<JOBID>, that the
 * job prolog (root) creates for the job's user and the job epilog (root) removes; in between the
 * batch step (as the job's user) writes the hostfile and the rank map into it.
 *
 * Safety: every call works on folder descriptors (openat/mkdirat/unlinkat/renameat), never on a
 * path below the state folder; nothing follows a symbolic link (O_NOFOLLOW, unlinkat); root only
 * creates an empty folder, hands it over with fchown/fchmod on its descriptor, and removes it; no
 * content a user wrote is ever read by root. No Slurm, no C++ exception leaves these functions;
 * errors are -1 with a message in err (errlen bytes, NUL-terminated). Built into
 * node/libtopoaware_node.la. */
#ifndef TOPOAWARE_JOB_DIR_C_H
#define TOPOAWARE_JOB_DIR_C_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The deepest folder nesting topoaware_job_dir_remove descends into. */
#define TOPOAWARE_JOB_DIR_MAX_DEPTH 32
/* The most entries (files, links, folders) and the longest time, in milliseconds, it spends on one
 * job folder: what a job's user put there must not hold the epilog without end. */
#define TOPOAWARE_JOB_DIR_MAX_ENTRIES 100000u
#define TOPOAWARE_JOB_DIR_MAX_MS 10000u
/* The longest a job epilog spends on the leftovers of earlier job folders (topoaware_state_sweep). */
#define TOPOAWARE_SWEEP_MAX_MS 5000u
/* What a removal could not finish, moved aside in the state folder: ".left.<JOBID>.<time>". */
#define TOPOAWARE_LEFTOVER_PREFIX ".left."

/* Opens the state folder `path` (absolute) as a descriptor: with `create`, makes it first (mode
 * 0755) if it is missing. It must be a real folder (not a symbolic link), owned by root and not
 * writable by group or others: only then can no user swap the names in it. Returns the fd, or -1
 * with err (errno ENOENT kept when it is merely missing and create is 0). */
int topoaware_state_dir_open(const char *path, int create, char *err, size_t errlen);

/* "job.<JOBID>" into buf. Returns 0, or -1 if buf is too small. */
int topoaware_job_dir_name(uint32_t job_id, char *buf, size_t len);

/* Root, in the job prolog: makes job.<JOBID> in the state folder open as state_fd, owned by
 * uid:gid, mode 0700 (made 0700 by root first, handed over through its descriptor). A folder of
 * that name already owned by uid (the prolog of another slurmd on the same host, or a second run)
 * is kept and closed again (uid:gid, 0700); anything else of that name (left on a crashed node by
 * an earlier job with the same id) is removed first (topoaware_job_dir_remove; moved aside if it is
 * too big to remove now). Returns 0 or -1. */
int topoaware_job_dir_create(int state_fd, uint32_t job_id, uid_t uid, gid_t gid, char *err, size_t errlen);

/* Root, in the job epilog: removes job.<JOBID> and everything the job's user put in it. Each
 * folder of the tree is first taken back (owner root, mode 0700, through its descriptor) so that
 * the user can no longer add to it; entries are removed with unlinkat as readdir returns them (no
 * folder's list of names is held), folders entered with openat(O_NOFOLLOW | O_DIRECTORY), never
 * across a file system boundary, at most TOPOAWARE_JOB_DIR_MAX_DEPTH deep, and the walk stops
 * after TOPOAWARE_JOB_DIR_MAX_ENTRIES entries or TOPOAWARE_JOB_DIR_MAX_MS. A folder nested deeper,
 * and what is left of job.<JOBID> when a bound stops the walk, is moved aside in the state folder
 * (TOPOAWARE_LEFTOVER_PREFIX: same file system, root's only) for the epilogs that follow
 * (topoaware_state_sweep), so the name is free for the next job and nothing stays for good.
 * Returns 0 (removed, or there was none, or only deeper folders moved aside) or -1 (err names the
 * first thing left, how many more, and where the rest went). */
int topoaware_job_dir_remove(int state_fd, uint32_t job_id, char *err, size_t errlen);
/* The same with other bounds (max_ms: milliseconds). */
int topoaware_job_dir_remove_bounded(int state_fd, uint32_t job_id, uint64_t max_entries, uint32_t max_ms, char *err,
                                     size_t errlen);

/* Root, in the job epilog after its own folder: removes the leftovers of earlier job folders
 * (TOPOAWARE_LEFTOVER_PREFIX in the state folder) the same way, at most
 * TOPOAWARE_JOB_DIR_MAX_ENTRIES entries and TOPOAWARE_SWEEP_MAX_MS in all. Returns 0 (none left),
 * 1 (some left for the next epilog, err says how much), -1 (the state folder cannot be read). */
int topoaware_state_sweep(int state_fd, char *err, size_t errlen);
/* The same with other bounds. */
int topoaware_state_sweep_bounded(int state_fd, uint64_t max_entries, uint32_t max_ms, char *err, size_t errlen);

/* The job's user, in task_init: opens job.<JOBID> and checks that it is a real folder owned by
 * the caller's effective uid with no access for group or others. Returns the fd, or -1 with err
 * (errno ENOENT kept when it does not exist). */
int topoaware_job_dir_open(int state_fd, uint32_t job_id, char *err, size_t errlen);

/* Writes len bytes of data as `name` in the folder dir_fd, atomically: a new file
 * ".<name>.<pid>" created with O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600, written in full, then
 * renamed onto `name` (renameat replaces a symbolic link of that name, never follows it). `name`
 * is a plain file name (no '/', not "." or ".."). Returns 0 or -1. */
int topoaware_file_write_at(int dir_fd, const char *name, const char *data, size_t len, char *err, size_t errlen);

/* The topology hash of a job, <state_dir>/job.<JOBID>.hash: the select plugin gives it to the job
 * prolog (SPANK_TOPOAWARE_TOPO_HASH), but Slurm 22.05 does not pass it on to the tasks; so the
 * prolog (root) writes it there, task_init (the job's user) reads it back and the epilog removes
 * it (spank_topoaware(8), FILES). */

/* 1 if hash is "sha256:" and 64 lower-case hex digits, else 0. */
int topoaware_topo_hash_valid(const char *hash);

/* Root, in the job prolog: writes hash and a newline as job.<JOBID>.hash in the state folder open as
 * state_fd, followed by how slurmctld placed the job when it said so (layout and order non-NULL:
 * the layout string it placed with, the job's nodes in rank order as "a,b,c", and whether the
 * fabric is rail-optimized; corelib/spank_settings.hpp). Root's, mode 0600 (other users do not
 * learn the job's order; slurmstepd reads it as root), written whole under a temporary name and
 * renamed over the file: readers see the old or the new file, a link at the name is replaced,
 * never followed. Returns 0, or -1 with err ("job.<JOBID>.hash: <why>"; an invalid hash writes
 * nothing). */
int topoaware_job_hash_write(int state_fd, uint32_t job_id, const char *hash, const char *layout, const char *order,
                             int rail_optimized, char *err, size_t errlen);

/* Root, in slurmstepd: the hash the job prolog recorded (the file's first line) into buf. Returns
 * 1, or 0 if there is none: no file, not a valid hash, or buf too small. */
int topoaware_job_hash_read(int state_fd, uint32_t job_id, char *buf, size_t len);

/* Root, in slurmstepd: how slurmctld placed the job, as the job prolog recorded it. Returns 1 with *layout and
 * *order malloc'd (free them) and *rail_optimized set, or 0 if the file has no placement (or none
 * that this version reads). */
int topoaware_job_placement_read(int state_fd, uint32_t job_id, char **layout, char **order, int *rail_optimized);

/* Root, in the job epilog: removes job.<JOBID>.hash. Returns 0 (removed, or there was none) or -1
 * with err ("job.<JOBID>.hash: <why>"). */
int topoaware_job_hash_remove(int state_fd, uint32_t job_id, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
