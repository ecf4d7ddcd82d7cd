# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for tools/*.sh: progress lines, quiet steps that show their log only on failure.
# Sourced, not run. Callers use `set -euo pipefail`.

# Where logs of quiet steps go; setup.sh points it into the cache folder.
: "${TOPOAWARE_LOGDIR:=${TMPDIR:-/tmp}/topoaware-logs}"

ta_say() { printf '==> %s\n' "$*"; }
ta_warn() { printf 'warning: %s\n' "$*" >&2; }
ta_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# ta_step NAME DESCRIPTION CMD...: run CMD with its output in $TOPOAWARE_LOGDIR/NAME.log. Silent on
# success (admins want to see progress, not 10,000 lines of apt and make); on failure prints the log's
# tail and its path, then fails with CMD's status so `set -e` stops the caller.
ta_step() {
  local name=$1 desc=$2; shift 2
  mkdir -p "$TOPOAWARE_LOGDIR"
  local log="$TOPOAWARE_LOGDIR/$name.log" rc=0
  ta_say "$desc"
  "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf 'error: %s failed (exit %d). Last lines of %s:\n' "$desc" "$rc" "$log" >&2
    tail -n 40 "$log" | sed 's/^/    /' >&2
    return "$rc"
  fi
}

# ta_jobs: parallel make jobs. The machines this project targets are small and shared: 2 by default.
ta_jobs() { printf '%s' "${TOPOAWARE_JOBS:-2}"; }
