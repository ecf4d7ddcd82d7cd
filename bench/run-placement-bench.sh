#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The placement benchmark in one command (docs/design.md, "How placement is judged"): builds the
# simulator out of tree if needed, runs it, prints the tables and writes CSV + an SVG plot.
#   bench/run-placement-bench.sh [--quick|--full] [--seeds N] [--jobs N]
# Environment: OUT (output folder, default bench/results in the source tree; it is kept out of
# git by a .gitignore written into it), BUILD (build folder, default /tmp/build-placement-bench),
# MAKEFLAGS_JOBS (default 2).
# Modes: --quick ~1 minute smoke run (256-512 nodes); default ~10 minutes (the target
# configuration, 2,048 nodes 2:1 fat tree 90% load, plus one or two seeds of the other topologies and loads);
# --full the whole matrix (all families, 256..16,384 nodes, loads 0.7/0.9/1.0; hours).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-/tmp/build-placement-bench}
out=${OUT:-$src/bench/results}
jobs=${MAKEFLAGS_JOBS:-2}
for a in "$@"; do
  case $a in
    --quick|--full|--seeds|--jobs|[0-9]*) ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0"; exit 0 ;;
    *) echo "unknown option $a (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$build"
if [ ! -f "$build/Makefile" ]; then
  [ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)
  (cd "$build" && "$src/configure" -q)
fi
make -C "$build" -j"$jobs" bench/placement_sim >"$build/bench-make.log" 2>&1 || {
  tail -30 "$build/bench-make.log" >&2; exit 1; }
mkdir -p "$out"
[ -f "$out/.gitignore" ] || printf '*\n' >"$out/.gitignore"
{
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname) ($(nproc) cores, $(uname -m));" \
    "git $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "# bench/run-placement-bench.sh $*"
  "$build/bench/placement_sim" --out "$out" "$@"
} | tee "$out/report.txt"
