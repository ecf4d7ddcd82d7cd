#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The cluster tests on a Slurm release other than the host's, on that release's real daemons:
#   1. Slurm RELEASE built from its upstream tarball into $TOPOAWARE_CACHE/slurm-RELEASE
#      (tools/build-slurm.sh; once per machine);
#   2. topoaware configured against that release's source tree (--with-slurm-source) and public
#      headers and library (--with-slurm) and built in BUILD (default: <source>/_build-RELEASE);
#   3. the cluster tests that matter there, with TOPOAWARE_SLURM_PREFIX so that every test cluster
#      runs that release's slurmctld, slurmd and commands: symbols and dlopen, the wrapper and its
#      plugin id, placement (prefer, strict, will-run) against stock cons_tres + topology/tree,
#      SelectType switched both ways with jobs running and queued, the SPANK options and job_submit's
#      checks and refusals, the task environment, topology reload and faults; and an upgrade from Slurm
#      24.11.5 (the trixie root of tools/trixie-tests.sh) to RELEASE under running and queued layout jobs
#      (tests/slurm_upgrade_trixie.sh).
#
#   bash tools/release-tests.sh [--build-dir DIR] [--tests 'tests/a.sh tests/b.sh'] RELEASE
#
# Exit status: 0 all passed, 77 the release cannot be built here (no tarball; the reason is printed),
# 1 otherwise. Environment: as tools/setup.sh (TOPOAWARE_CACHE, TOPOAWARE_JOBS).
set -euo pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/lib/common.sh
. "$TOPDIR/tools/lib/common.sh"
# shellcheck source=tools/lib/slurm_build.sh
. "$TOPDIR/tools/lib/slurm_build.sh"
: "${TOPOAWARE_CACHE:=/var/cache/topoaware}"
export TOPOAWARE_CACHE

TESTS_DEFAULT="tests/test_plugin_symbols.sh tests/slurm_select_symbols.sh tests/slurm_select_wrapper.sh
  tests/slurm_select_place.sh tests/slurm_select_switch.sh tests/slurm_options.sh tests/slurm_task_env.sh
  tests/slurm_select_topology_file.sh tests/slurm_select_faults.sh tests/slurm_upgrade_trixie.sh
  tests/slurm_2605_part_topology.sh"
build="" tests="" release=""
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$2; shift ;;
    --tests) tests=$2; shift ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) ta_die "unknown option '$1' (try --help)" ;;
    *) release=$1 ;;
  esac
  shift
done
[ -n "$release" ] || ta_die "which release? (e.g. bash tools/release-tests.sh 26.05.3)"
[ -n "$build" ] || build=$TOPDIR/_build-$release
tests=${tests:-$TESTS_DEFAULT}
# shellcheck disable=SC2086
tests=$(echo $tests)

rc=0
if ! slurm_build_ready "$release"; then
  ta_say "Slurm $release: building it once from its tarball (minutes; log in $TOPOAWARE_CACHE)"
  slurm_build_prepare "$release" || rc=$?
fi
case $rc in
  0) ;;
  2) echo "SKIP: Slurm $release cannot be built here: $SLURM_BUILD_WHY"; exit 77 ;;
  *) ta_die "Slurm $release could not be built: $SLURM_BUILD_WHY" ;;
esac
prefix=$SLURM_BUILD_PREFIX tree=$SLURM_BUILD_TREE
[ -x "$prefix/sbin/slurmctld" ] && [ -r "$tree/config.h" ] || ta_die "Slurm $release: no $prefix or $tree/config.h"

mkdir -p "$build"
want="--with-slurm=$prefix --with-slurm-source=$tree"
if ! { [ -x "$build/config.status" ] && "$build/config.status" --config | grep -qF -- "$want"; }; then
  [ -x "$TOPDIR/configure" ] || (cd "$TOPDIR" && autoreconf -fi)
  ta_say "configure topoaware against Slurm $release in $build"
  # shellcheck disable=SC2086
  (cd "$build" && "$TOPDIR/configure" $want >"$build/configure.log" 2>&1) ||
    { tail -n 30 "$build/configure.log" >&2; ta_die "configure against Slurm $release failed"; }
fi
ta_say "build in $build (make -j$(ta_jobs))"
make -C "$build" -j"$(ta_jobs)" >"$build/build.log" 2>&1 ||
  { tail -n 40 "$build/build.log" >&2; ta_die "build failed"; }
ta_say "cluster tests on Slurm $release: $tests"
# Only the programs these tests need (the unit tests ran in the host's build).
TOPOAWARE_SLURM_PREFIX="$prefix" make -C "$build" -j"$(ta_jobs)" check TESTS="$tests" VERBOSE=1 \
  check_PROGRAMS="tests/dlopen_plugin tests/libslurm_client"
