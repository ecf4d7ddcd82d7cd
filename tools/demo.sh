# SPDX-License-Identifier: GPL-2.0-or-later
# The demo ("the main job") that tools/setup.sh runs last: generate a fat-tree fabric, run it under
# ibsim, discover it live through libibnetdisc with the topoaware command, print the summary and the
# Slurm topology.conf; then (tools/demo_cluster.sh) start a localhost Slurm cluster on that fabric,
# submit the same sbatch --tp/--pp/--dp jobs onto a fragmented cluster under stock cons_tres +
# topology/tree and under select/cons_tres_topoaware, and draw both with `topoaware show`.
# Sourced by setup.sh; also runnable alone:
#
#   bash tools/demo.sh [BUILD_DIR]
#
# Outputs stay in $TOPOAWARE_DEMO_DIR (default $TOPOAWARE_CACHE/demo): fabric.net, topology.json,
# topology.conf (tree), topology-block.conf, fabric.dot (and fabric.svg with Graphviz), and the
# cluster part's show.{stock,topo}.{txt,svg} and jobs.{stock,topo}.
# The fabric's shape comes from TOPOAWARE_DEMO_GENERATE (options of `topoaware generate fat-tree`).

# shellcheck source=tools/lib/ibsim.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/ibsim.sh"
# shellcheck source=tools/demo_cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/demo_cluster.sh"

run_demo() {
  local build=${1:?usage: run_demo BUILD_DIR}
  local bin="$build/topoaware"
  local dir=${TOPOAWARE_DEMO_DIR:-${TOPOAWARE_CACHE:-/var/cache/topoaware}/demo}
  # 8 leaves x 4 hosts, 2 spines, 2:1 oversubscribed (4 hosts over 2 uplinks), HDR: levels and
  # oversubscription to see, and few enough hosts to run one slurmd per host on a small machine.
  local gen=${TOPOAWARE_DEMO_GENERATE:---levels 2 --leaves 8 --hosts-per-leaf 4 --spines 2 --uplinks 2 --speed HDR}
  [ -x "$bin" ] || { echo "run_demo: $bin not built" >&2; return 1; }
  mkdir -p "$dir"
  echo "==> demo: generate fat-tree $gen"
  # shellcheck disable=SC2086
  "$bin" generate fat-tree $gen --net "$dir/fabric.net" --json "$dir/expected.json" || return 1
  local simargs
  # shellcheck disable=SC2086
  simargs=$("$bin" generate fat-tree $gen --ibsim-args) || return 1
  echo "==> demo: ibsim $simargs fabric.net"
  # shellcheck disable=SC2086
  ibsim_start "$dir/fabric.net" "$dir/ibsim" $simargs || return 1
  local rc=0
  echo "==> demo: topoaware discover (live, through libibnetdisc and umad2sim)"
  ibsim_run "$bin" discover --quiet --format summary \
    --json "$dir/topology.json" --tree "$dir/topology.conf" --block "$dir/topology-block.conf" \
    --dot "$dir/fabric.dot" || rc=$?
  ibsim_stop
  [ "$rc" -eq 0 ] || { echo "run_demo: topoaware discover failed (exit $rc)" >&2; return "$rc"; }
  if command -v dot >/dev/null; then dot -Tsvg "$dir/fabric.dot" -o "$dir/fabric.svg" || true; fi
  echo
  echo "==> demo: Slurm topology.conf (topology/tree), $dir/topology.conf:"
  cat "$dir/topology.conf"
  echo
  # The walk must find exactly what was generated: same fabric hash in both JSON files.
  if command -v cmp >/dev/null && cmp -s <(grep -o '"hash": *"[^"]*"' "$dir/expected.json") \
                                         <(grep -o '"hash": *"[^"]*"' "$dir/topology.json"); then
    echo "==> demo: the live walk found exactly the generated fabric (same content hash)"
  else
    echo "==> demo: warning: the live walk differs from the generated fabric" \
      "(compare $dir/expected.json and $dir/topology.json)" >&2
  fi
  echo "==> demo: outputs in $dir (topology.json, topology.conf, topology-block.conf, fabric.dot${DOT:+, fabric.svg})"
  # The cluster part's busy pattern is made for the default fabric (8 leaves x 4 hosts).
  if [ -n "${TOPOAWARE_DEMO_GENERATE:-}" ]; then
    echo "==> demo: TOPOAWARE_DEMO_GENERATE is set: the cluster part (made for the default fabric) is skipped"
  elif [ "${TOPOAWARE_DEMO_CLUSTER:-yes}" != no ]; then
    run_demo_cluster "$build" "$dir" || return 1
  fi
}

# Run alone: bash tools/demo.sh [BUILD_DIR]
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  trap ibsim_stop EXIT
  run_demo "${1:-$(cd "$(dirname "$0")/.." && pwd)/_build}"
fi
