#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run every test of topoaware:
#   1. tools/setup.sh --no-demo  (packages, Slurm source tree, out-of-tree build; idempotent)
#   2. make check                (CMocka units and integration tests; as root these start their own
#                                 ibsim, slurmctld and slurmd, and a Slurm 24.11 root for topology/block)
#   2b. make check-deb          (the Debian packages for Slurm 24.11.5, built, installed and run on
#                                 24.11 clusters inside the trixie root: tests/deb_trixie.sh; the host's
#                                 own package test, tests/deb_package.sh, by `make check-deb`)
#   3. fuzz smoke                (tests/fuzz/run-fuzz.sh --smoke 30: every libFuzzer target built with
#                                 clang and run 30 s from its stored corpus; fails on any crash, broken
#                                 invariant or coverage below the stored corpus's)
#   4. make distcheck            (the release tarball builds and its tests pass; tests that need root
#                                 or daemons skip there)
#   5. Slurm releases            (make check-releases: the plugins built and symbol-checked against
#                                 every release of tools/slurm-releases.txt, 22.05.8 .. 26.05.3; then
#                                 tools/trixie-tests.sh: the cluster tests on Slurm 24.11.5, Debian
#                                 trixie's daemons, run inside the trixie root in the build made there
#                                 for 2b (one build per source, cached); then tools/release-tests.sh
#                                 26.05.3: the cluster tests on Slurm 26.05.3's own daemons, built once
#                                 from its tarball)
#   6. tools/fresh-root.sh       (the fresh-machine check: setup, build and make check inside a new
#                                 debootstrap Debian 12 root with only the packages setup.sh names;
#                                 as root only, else reported as skipped)
# then prints a summary (every skipped test with its reason) and exits non-zero if any step failed.
#
#   bash tools/run-tests.sh [--no-distcheck] [--no-fresh-root] [--no-fuzz] [--no-deb] [--no-releases]
#                        [--build-dir DIR]
#
# Environment: as tools/setup.sh (TOPOAWARE_CACHE, TOPOAWARE_BUILD, TOPOAWARE_JOBS);
# TOPOAWARE_FUZZ_SECONDS (seconds per fuzz target, default 60); TESTS='a b' or
# other make variables can be passed through MAKE_CHECK_ARGS (e.g. MAKE_CHECK_ARGS='TESTS=tests/x.sh').
set -uo pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/lib/common.sh
. "$TOPDIR/tools/lib/common.sh"
: "${TOPOAWARE_CACHE:=/var/cache/topoaware}"
: "${TOPOAWARE_BUILD:=$TOPDIR/_build}"
# Logs go with the build folder: several checkouts may set up at once and must not mix their logs.
TOPOAWARE_LOGDIR="$TOPOAWARE_BUILD/logs"
export TOPOAWARE_CACHE TOPOAWARE_BUILD TOPOAWARE_LOGDIR

# A compiler cache for the builds on this machine (the build folder, make distcheck's, the 26.05 build):
# a later run compiles only what changed. Debian's ccache package (tools/setup.sh installs it) puts gcc
# and g++ wrappers in /usr/lib/ccache, looked up in PATH at each call. Paths below the checkout are
# hashed relative to it, so another clone hits the same entries. (tools/fresh-root.sh runs its root with
# a clean environment: the fresh-machine check never sees this cache.)
if mkdir -p "$TOPOAWARE_CACHE/ccache-host" 2>/dev/null && [ -w "$TOPOAWARE_CACHE/ccache-host" ]; then
  export PATH="/usr/lib/ccache:$PATH" CCACHE_DIR="$TOPOAWARE_CACHE/ccache-host" CCACHE_BASEDIR="$TOPDIR" \
    CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=2G
fi

distcheck=yes fresh_root=yes fuzz=yes releases=yes deb=yes
while [ $# -gt 0 ]; do
  case $1 in
    --no-distcheck) distcheck=no ;;
    --no-fresh-root) fresh_root=no ;;
    --no-fuzz) fuzz=no ;;
    --no-releases) releases=no ;;
    --no-deb) deb=no ;;
    --build-dir) TOPOAWARE_BUILD=$2; shift ;;
    --build-dir=*) TOPOAWARE_BUILD=${1#*=} ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ta_die "unknown argument '$1' (try --help)" ;;
  esac
  shift
done

declare -a RESULTS=()
failed=0
record() { # record NAME STATUS SECONDS
  RESULTS+=("$(printf '%-12s %-8s %5ss' "$1" "$2" "$3")")
  [ "$2" = ok ] || failed=1
}

# release_step NAME RELEASE WHAT COMMAND...: the cluster tests on one more Slurm release, logged to
# slurm-RELEASE.log; its test lines are echoed with the release in front; 77 is a skip with its reason.
release_step() {
  local name=$1 release=$2 what=$3 log="$TOPOAWARE_LOGDIR/slurm-$2.log" t0=$SECONDS rc=0
  shift 3
  ta_say "Slurm $release: $what (log $log)"
  "$@" >"$log" 2>&1 || rc=$?
  grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL)[: ]' "$log" | sed "s/^/slurm $release: /" || true
  if [ $rc -eq 0 ]; then
    record "$name" ok $((SECONDS - t0))
  elif [ $rc -eq 77 ]; then
    RESULTS+=("$(printf '%-12s %-8s %5ss' "$name" SKIPPED $((SECONDS - t0))) ($(grep -m1 '^SKIP' "$log"))")
  else
    record "$name" FAILED $((SECONDS - t0))
    tail -n 60 "$log" | sed 's/^/    /' >&2
  fi
}

summary() {
  echo
  echo "================================ topoaware test summary"
  local r
  for r in "${RESULTS[@]}"; do echo "  $r"; done
  # Skipped tests and why: a skip is not a pass, so say it where an admin will read it.
  local trs name reason any=no
  for trs in $(find "$TOPOAWARE_BUILD" -path "$TOPOAWARE_BUILD/topoaware-*" -prune -o -name '*.trs' -print 2>/dev/null |
                 sort); do
    grep -q '^:test-result: SKIP' "$trs" || continue
    [ "$any" = yes ] || { echo "  skipped in make check:"; any=yes; }
    name=${trs#"$TOPOAWARE_BUILD"/}; name=${name%.trs}
    reason=$(grep -m1 -E '^SKIP:' "${trs%.trs}.log" 2>/dev/null | sed 's/^SKIP: //')
    echo "    $name: ${reason:-no reason given}"
  done
  if [ "$fresh_root" = yes ] && [ -s "$TOPOAWARE_LOGDIR/fresh-root-skips.txt" ]; then
    echo "  skipped in the fresh root (tests that start daemons run on this machine instead):"
    sed 's/^/    /' "$TOPOAWARE_LOGDIR/fresh-root-skips.txt"
  fi
  if [ "$failed" -eq 0 ]; then
    echo "  RESULT: all steps passed"
  else
    echo "  RESULT: FAILED (logs: $TOPOAWARE_LOGDIR/, $TOPOAWARE_BUILD/test-suite.log)"
  fi
  echo "================================"
}

# 1. set-up and build
t0=$SECONDS
if bash "$TOPDIR/tools/setup.sh" --no-demo --build-dir "$TOPOAWARE_BUILD"; then
  record setup ok $((SECONDS - t0))
else
  record setup FAILED $((SECONDS - t0))
  summary
  exit 1
fi

# 2. make check, with its own output (PASS/FAIL per test and automake's "# PASS: N" summary);
# VERBOSE=1 prints the log of every failing test.
t0=$SECONDS
ta_say "make check in $TOPOAWARE_BUILD"
# shellcheck disable=SC2086
if make -C "$TOPOAWARE_BUILD" -j"$(ta_jobs)" check VERBOSE=1 ${MAKE_CHECK_ARGS:-}; then
  record "make check" ok $((SECONDS - t0))
else
  record "make check" FAILED $((SECONDS - t0))
fi

# 2b. the Debian packages (each test builds the whole project once more inside dpkg-buildpackage).
if [ "$deb" = yes ]; then
  t0=$SECONDS
  ta_say "make check-deb (Slurm 24.11.5 in the trixie root) in $TOPOAWARE_BUILD"
  # Each package test builds the whole project once more: only the one no other step covers.
  if make -C "$TOPOAWARE_BUILD" check-deb VERBOSE=1 TA_DEB_TESTS=tests/deb_trixie.sh; then
    record "check-deb" ok $((SECONDS - t0))
  else
    record "check-deb" FAILED $((SECONDS - t0))
  fi
fi

# 3. the fuzz smoke run: every target for a bounded time (one line each; logs in the build folder).
# Exit 77 means clang is missing (reported, not a pass); under CI=true the script fails instead.
if [ "$fuzz" = yes ]; then
  t0=$SECONDS
  ta_say "fuzz smoke: tests/fuzz/run-fuzz.sh --smoke ${TOPOAWARE_FUZZ_SECONDS:-30}"
  bash "$TOPDIR/tests/fuzz/run-fuzz.sh" --build-dir "$TOPOAWARE_BUILD" --smoke "${TOPOAWARE_FUZZ_SECONDS:-30}"
  rc=$?
  if [ $rc -eq 0 ]; then
    record "fuzz smoke" ok $((SECONDS - t0))
  elif [ $rc -eq 77 ]; then
    RESULTS+=("$(printf '%-12s %-8s %5ss' "fuzz smoke" SKIPPED $((SECONDS - t0))) (no clang with libFuzzer)")
  else
    record "fuzz smoke" FAILED $((SECONDS - t0))
  fi
fi

# 4. make distcheck: long output goes to a log; its own test summary is shown. The configured Slurm
# source is passed on so the tarball's plugins are built too; daemon tests are told to skip.
if [ "$distcheck" = yes ]; then
  t0=$SECONDS
  slurm_src=$(sed -n 's/^SLURM_SRC = //p' "$TOPOAWARE_BUILD/Makefile")
  werror=""
  [ "${CI:-}" != true ] || werror=--enable-werror
  ta_say "make distcheck in $TOPOAWARE_BUILD (log $TOPOAWARE_LOGDIR/distcheck.log)"
  mkdir -p "$TOPOAWARE_LOGDIR"
  if make -C "$TOPOAWARE_BUILD" -j"$(ta_jobs)" distcheck TOPOAWARE_DAEMON_TESTS=no \
       DISTCHECK_CONFIGURE_FLAGS="${slurm_src:+--with-slurm-source=$slurm_src}${werror:+ $werror}" \
       >"$TOPOAWARE_LOGDIR/distcheck.log" 2>&1; then
    record "distcheck" ok $((SECONDS - t0))
  else
    record "distcheck" FAILED $((SECONDS - t0))
    echo "error: make distcheck failed; last lines of $TOPOAWARE_LOGDIR/distcheck.log:" >&2
    tail -n 60 "$TOPOAWARE_LOGDIR/distcheck.log" | sed 's/^/    /' >&2
  fi
  # The tarball's test-suite summary (automake prints it between '=====' rules).
  grep -E '^(# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):|Testsuite summary|.*archives ready for distribution)' \
    "$TOPOAWARE_LOGDIR/distcheck.log" | sed 's/^/distcheck: /' || true
fi

# 5. other Slurm releases: the compile matrix, then the cluster tests on 26.05.3's daemons.
if [ "$releases" = yes ]; then
  t0=$SECONDS
  ta_say "Slurm releases: make check-releases (log $TOPOAWARE_LOGDIR/check-releases.log)"
  mkdir -p "$TOPOAWARE_LOGDIR"
  if make -C "$TOPOAWARE_BUILD" check-releases >"$TOPOAWARE_LOGDIR/check-releases.log" 2>&1; then
    record "releases" ok $((SECONDS - t0))
  else
    record "releases" FAILED $((SECONDS - t0))
    tail -n 40 "$TOPOAWARE_LOGDIR/check-releases.log" | sed 's/^/    /' >&2
  fi
  grep -E '^(PASS|FAIL|SKIP)' "$TOPOAWARE_LOGDIR/check-releases.log" | sed 's/^/releases: /' || true
  release_step "slurm 24.11" 24.11.5 tools/trixie-tests.sh bash "$TOPDIR/tools/trixie-tests.sh" \
    --build-dir "$TOPOAWARE_BUILD"
  release_step "slurm 26.05" 26.05.3 "tools/release-tests.sh 26.05.3" bash "$TOPDIR/tools/release-tests.sh" \
    --build-dir "$TOPOAWARE_BUILD-26.05.3" 26.05.3
fi

# 6. the fresh-machine check (tools/fresh-root.sh prints its own progress and summary).
if [ "$fresh_root" = yes ]; then
  if [ "$(id -u)" -ne 0 ]; then
    RESULTS+=("$(printf '%-12s %-8s %5ss' "fresh root" SKIPPED 0) (needs root: debootstrap and chroot)")
  else
    t0=$SECONDS
    if bash "$TOPDIR/tools/fresh-root.sh"; then
      record "fresh root" ok $((SECONDS - t0))
    else
      record "fresh root" FAILED $((SECONDS - t0))
    fi
  fi
fi

summary
exit "$failed"
