#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# How much spank_topoaware adds to a step's launch: the same `srun -N8 --ntasks-per-node=8
# --gpus-per-node=8 true` step on a localhost cluster of 8 slurmd (each pretending to be the
# synthetic 8-GPU/8-NIC HGX node through HWLOC_XMLFILE, 8 GPUs as character devices), launched
#   plain     without a layout (the plugin is loaded but does nothing),
#   off       with --tp=8 --dp=8 --nccl-hints=off (options checked, no task environment),
#   hints     with --tp=8 --dp=8 (every task gets its rank, GPU and NCCL hints),
#   baseline  with --tp=8 --dp=8 and another build of spank_topoaware.so (--baseline-spank SO, e.g.
#             one built from an earlier commit), plugstack.conf switched for that launch only,
# interleaved, RUNS times each. Prints the median and the spread (min-max) of each, and the ratios
# hints/plain and off/plain of the medians: the target is hints/plain <= 1.1. The machine is
# shared and noisy: read the ratios, not the seconds. Needs root and the build tree's
# spank_topoaware.so. Not a test: `make bench-step-launch` (BENCH_STEP_ARGS="--runs N
# --baseline-spank SO").
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/_build}
. "$top_srcdir/tests/lib/slurm_cluster.sh"

runs=15 baseline=""
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    --baseline-spank) baseline=$2; shift ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

[ "$(id -u)" -eq 0 ] || { echo "bench/step_launch.sh needs root (it starts slurmctld and slurmd)" >&2; exit 2; }
b=$(cd "$top_builddir" && pwd)
spank=$b/plugins/spank/.libs/spank_topoaware.so
[ -f "$spank" ] || { echo "$spank not built" >&2; exit 2; }
xml=$top_srcdir/tests/fixtures/hwloc/synthetic-hgx-8gpu-8nic.xml

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-steplaunch.XXXXXX")
ta_on_exit "rm -rf '$work'"
chmod 755 "$work"
"$b/topoaware" generate fat-tree --leaves 2 --hosts-per-leaf 4 --json "$work/topology.json" >/dev/null
echo "required $spank topology=$work/topology.json state_dir=$work/state" >"$work/plugstack.conf"
echo "# starting 8 slurmd (8 GPUs each, HWLOC_XMLFILE=$(basename "$xml"))"
cluster_start --nodes 8 --width 4 --gpus 8 --cpus 8 --plugstack "$work/plugstack.conf" --hwloc-xml "$xml" >/dev/null
plugstack=$CLUSTER_DIR/plugstack.conf
[ -z "$baseline" ] || [ -f "$baseline" ] || { echo "--baseline-spank $baseline: no such file" >&2; exit 2; }

# One launch, in milliseconds; the step must succeed (and, with hints, every task must have them).
launch() {
  local t0 t1
  t0=$(date +%s%N)
  cluster_run srun -N8 --ntasks-per-node=8 --gpus-per-node=8 "$@" \
    bash -c '[ -z "${TOPOAWARE_EXPECT:-}" ] || [ -n "${TOPOAWARE_RANK:-}" ]' >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; echo "srun $* failed" >&2; exit 1; }
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}

declare -A times=()
launch >/dev/null  # warm-up: first step of each node loads the plugins' libraries
for ((i = 0; i < runs; i++)); do
  times[plain]+="$(launch) "
  times[off]+="$(launch --tp=8 --dp=8 --nccl-hints=off) "
  times[hints]+="$(TOPOAWARE_EXPECT=1 launch --tp=8 --dp=8) "
  if [ -n "$baseline" ]; then
    sed "s|$spank|$baseline|" "$work/plugstack.conf" >"$plugstack"
    times[baseline]+="$(TOPOAWARE_EXPECT=1 launch --tp=8 --dp=8) "
    cp "$work/plugstack.conf" "$plugstack"
  fi
done

median() {
  tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'
}
spread() { tr ' ' '\n' | grep . | sort -n | awk 'NR==1 {lo=$1} {hi=$1} END {print lo "-" hi}'; }
echo "step of 64 tasks on 8 nodes, $runs launches each (ms: median, min-max):"
kinds="plain off hints${baseline:+ baseline}"
for k in $kinds; do
  printf '  %-6s %7s  %s\n' "$k" "$(median <<<"${times[$k]}")" "$(spread <<<"${times[$k]}")"
done
mp=$(median <<<"${times[plain]}")
awk -v h="$(median <<<"${times[hints]}")" -v o="$(median <<<"${times[off]}")" -v p="$mp" \
  'BEGIN { printf "ratios of medians: hints/plain %.2f (target <= 1.10), off/plain %.2f\n", h / p, o / p }'
[ -z "$baseline" ] || awk -v x="$(median <<<"${times[baseline]}")" -v p="$mp" \
  'BEGIN { printf "baseline/plain %.2f (the other spank_topoaware.so)\n", x / p }'
