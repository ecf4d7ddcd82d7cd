#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build upstream Slurm releases from their source tarballs into cached prefixes, for localhost test
# clusters (tests/lib/slurm_release.sh) and for building topoaware against them:
#
#   bash tools/build-slurm.sh [--force] [VERSION...]      (default: 26.05.3)
#
# Each release goes to $TOPOAWARE_CACHE/slurm-VERSION (binaries, plugins) and its configured and built
# source tree stays in $TOPOAWARE_CACHE/slurm-src/VERSION/slurm-VERSION (for
# `configure --with-slurm-source=`). Done once per machine: a second run only checks. --force builds
# again. See tools/lib/slurm_build.sh for where tarballs are looked for and what is built.
#
# Environment: TOPOAWARE_CACHE (default /var/cache/topoaware), TOPOAWARE_SLURM_TARBALLS (folders with
# slurm-VERSION.tar.xz, colon-separated), TOPOAWARE_JOBS (parallel make jobs, default 2).
set -euo pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/lib/common.sh
. "$TOPDIR/tools/lib/common.sh"
# shellcheck source=tools/lib/slurm_build.sh
. "$TOPDIR/tools/lib/slurm_build.sh"

force=no versions=()
while [ $# -gt 0 ]; do
  case $1 in
    --force) force=yes ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) ta_die "unknown option '$1' (try --help)" ;;
    *) versions+=("$1") ;;
  esac
  shift
done
[ ${#versions[@]} -gt 0 ] || versions=(26.05.3)

status=0
for v in "${versions[@]}"; do
  if [ "$force" = yes ]; then slurm_build_paths "$v"; rm -f "$SLURM_BUILD_PREFIX/.topoaware-ready"; fi
  if slurm_build_ready "$v"; then
    built=$(sed -n 's/^seconds=//p' "$SLURM_BUILD_PREFIX/.topoaware-ready")
    ta_say "Slurm $v: ready in $SLURM_BUILD_PREFIX (built in $built s), source tree $SLURM_BUILD_TREE"
    continue
  fi
  rc=0
  slurm_build_prepare "$v" || rc=$?
  case $rc in
    0) ta_say "Slurm $v: $SLURM_BUILD_PREFIX, source tree $SLURM_BUILD_TREE" ;;
    2) ta_warn "Slurm $v not built: $SLURM_BUILD_WHY"; status=1 ;;
    *) printf 'error: Slurm %s: %s\n' "$v" "$SLURM_BUILD_WHY" >&2; status=1 ;;
  esac
done
exit "$status"
