#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The cluster tests on Slurm 24.11.5: Debian trixie's own Slurm binaries in the debootstrap root of
# tests/lib/trixie.sh, our plugins built inside that root against slurm-24.11.5.
#   1. the root, its build dependencies and the configured slurm-24.11.5 tree (cached, once per machine);
#   2. topoaware built there with dpkg-buildpackage once per source hash (trixie_topoaware_build,
#      cached in $TOPOAWARE_CACHE/trixie-builds and shared with tests/deb_trixie.sh, which installs
#      that build's packages);
#   3. `make check TESTS=...` in that build tree, run inside the root (trixie_ns_run: a private overlay
#      of the root, the build tree as an overlay too, the machine's /tmp): the generic test scripts,
#      unchanged, see a Debian trixie machine whose Slurm is 24.11.5, so every cluster they start runs
#      24.11's slurmctld, slurmd and commands with the plugins built for it. Default list: symbols and
#      dlopen into 24.11.5's own libslurmfull, the wrapper and its plugin ids, placement (prefer, strict,
#      will-run) against stock cons_tres + topology/tree, SelectType switched both ways with jobs running
#      and queued, topology reload and faults, the SPANK options and job_submit's completions and
#      refusals. (Packages, the task environment and topology/block run on 24.11.5 in
#      tests/deb_trixie.sh and tests/slurm_block_trixie.sh.)
#
#   bash tools/trixie-tests.sh [--build-dir DIR] [--tests 'tests/a.sh tests/b.sh']
#
# DIR: a configured build of this checkout (default <source>/_build), for `make distdir`. The tests'
# logs are copied to DIR/slurm-24.11/ (tests/*.log, *.trs, test-suite.log).
# Exit status: 0 all passed; 77 the root cannot be built here (no mirror, no slurm-24.11.5 tarball,
# not root: "SKIP: reason"); 1 otherwise. Under CI=true a test that skips inside the root fails the
# run: the list is chosen to run there in full, as it does on the host.
set -euo pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/lib/common.sh
. "$TOPDIR/tools/lib/common.sh"
# shellcheck source=tests/lib/trixie.sh
. "$TOPDIR/tests/lib/trixie.sh"

TESTS_DEFAULT="tests/test_plugin_symbols.sh tests/slurm_select_symbols.sh tests/slurm_select_wrapper.sh
  tests/slurm_select_place.sh tests/slurm_select_switch.sh tests/slurm_select_topology_file.sh
  tests/slurm_select_faults.sh tests/slurm_options.sh"
build=$TOPDIR/_build tests=""
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$2; shift ;;
    --tests) tests=$2; shift ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ta_die "unknown argument '$1' (try --help)" ;;
  esac
  shift
done
tests=${tests:-$TESTS_DEFAULT}
# shellcheck disable=SC2086,SC2116
tests=$(echo $tests)
[ -f "$build/Makefile" ] || ta_die "$build is not a configured build of topoaware (--build-dir)"
build=$(cd "$build" && pwd)

rc=0 t0=$SECONDS
trixie_topoaware_build "$TOPDIR" "$build" || rc=$?
case $rc in
  0) ;;
  2) echo "SKIP: Slurm 24.11 (trixie root) cannot run here: $TRIXIE_WHY"; exit 77 ;;
  *) ta_die "Slurm 24.11 (trixie root): $TRIXIE_WHY" ;;
esac
version=$(trixie_slurm_version)
if [ "$TRIXIE_TA_SECONDS" -gt 0 ]; then
  ta_say "topoaware built in the root for Slurm $version in $TRIXIE_TA_SECONDS s ($TRIXIE_TA_BUILD)"
else
  ta_say "topoaware for Slurm $version: cached build $TRIXIE_TA_BUILD ($((SECONDS - t0)) s to check)"
fi

out=$build/slurm-24.11
rm -rf "$out"
mkdir -p "$out"
ta_say "cluster tests on Slurm $version inside the $TRIXIE_SUITE root: $tests"
# Only the programs these tests need (the unit tests ran in the host's build), and no benchmarks
# (dpkg-buildpackage built without them). The logs leave the overlay through $out.
rc=0
# shellcheck disable=SC2016
trixie_ns_run --overlay "$TRIXIE_TA_BUILD=/build" --bind "$out" -- \
  /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 TMPDIR=/tmp CI="${CI:-}" \
  TOPOAWARE_KEEP_CLUSTER="${TOPOAWARE_KEEP_CLUSTER:-0}" TESTS="$tests" OUT="$out" JOBS="$(ta_jobs)" \
  bash -c 'cd /build/topoaware/debian/build || exit 1
    rc=0
    make -j"$JOBS" check TESTS="$TESTS" VERBOSE=1 TOPOAWARE_DAEMON_TESTS=yes noinst_PROGRAMS= \
      check_PROGRAMS="tests/dlopen_plugin tests/libslurm_client" || rc=$?
    mkdir -p "$OUT/tests"
    cp tests/*.log tests/*.trs "$OUT/tests/" 2>/dev/null || true
    cp test-suite.log "$OUT/" 2>/dev/null || true
    exit "$rc"' || rc=$?

skipped=$(grep -l '^:test-result: SKIP' "$out"/tests/*.trs 2>/dev/null || true)
for trs in $skipped; do
  echo "SKIP on Slurm $version: tests/$(basename "${trs%.trs}"): $(grep -m1 '^SKIP:' "${trs%.trs}.log" | sed 's/^SKIP: //')"
done
if [ "$rc" -eq 0 ] && [ -n "$skipped" ] && [ "${CI:-}" = true ]; then
  echo "FAIL: under CI=true every test of the list must run on Slurm $version (skipped above)" >&2
  rc=1
fi
[ "$rc" -eq 0 ] || ta_die "cluster tests on Slurm $version failed (logs in $out)"
ta_say "cluster tests on Slurm $version passed ($((SECONDS - t0)) s; logs in $out)"
