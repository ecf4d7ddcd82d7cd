#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The network judge over the trace simulator (docs/design.md, "How placement is judged"):
# placement_sim replays the same traces under every policy and writes schedule snapshots; bench/netsim_report.py
# runs bench/netsim/netsim on each and prints ratios against slurm-tree per fabric family.
#   bench/netsim_report.sh [--quick|--target] [--seeds N] [--first-seed N] [--jobs N] [--snapshot-count K]
#                          [--config FAMILY:NODES[:LOAD][@TOPOLOGY.json]]... [--policies P,Q] [--fairness flow|pair]
#                          [--parallel N] [--out DIR] [--workload generated|replay] [--jitter SEC[:SEED]]
#                          [--baseline POLICY]... [--no-ring-book]
# --quick (default): ft2-2to1-512, ft3-7to1-512, rail8-256, dfly-512, 2 seeds x 400 jobs, 4 snapshots.
# --target: every family at 2,048 nodes (rail8 1,024: its radix), 90% load, 5 seeds x 1,500 jobs.
# --workload replay: the traces of the replays through real slurmctld (placement_sim's
# --workload; seeds 1..N are bench/slurm_replay.sh's seeds), e.g. --config ft2-2to1-8:64:1.0.
# --jitter: each policy's runtimes moved by its own draw in [-SEC, SEC] (placement_sim's --jitter).
# --first-seed: seeds N .. N+seeds-1 (report on seeds never used while tuning, e.g. 101).
# --no-ring-book: topoaware runs each job in its rank order alone, not in the order the select
# plugin's ring book gives (placement_sim's --no-ring-book).
# --baseline: the policy the per-class report pairs each job with (repeatable; default slurm-tree).
# --nvl72: the NVL72 family (bench/RESULTS.md): nvl72:1152 and nvl72-2to1:1152 (64 racks), topoaware
# against slurm-block (blocks = NVLink domains) and topoaware-nodomain, seeds 101-110 x 1,500 jobs,
# 4 snapshots, flow pairing per job as the published tables.
# @TOPOLOGY.json: the cluster read from a topology.json with routes (bench/netsim/routes.sh), so that
# the rank order and the judge's as-routed mode follow the same forwarding tables.
# top_builddir (default: the current folder) holds bench/placement_sim and bench/netsim/netsim.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${top_builddir:-$PWD}
out=${OUT:-$build/bench/netsim-results}
seeds=2 first_seed=1 jobs=400 count=4 fairness=pair parallel=1 workload=generated jitter=0 policies=slurm-tree,slurm-block,firstfit,topoaware
configs=()
baselines=()
ring_book=()
quick=(ft2-2to1:512 ft3-7to1:512 rail8:256 dfly:512)
target=(ft2-2to1:2048 ft2-1to1:2048 ft3-7to1:2048 rail8:1024 dfly:2048)
preset=quick
while [ $# -gt 0 ]; do
  case $1 in
    --quick) preset=quick ;;
    --target) preset=target; seeds=5 jobs=1500 count=8 ;;
    --seeds) seeds=$2; shift ;;
    --first-seed) first_seed=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --snapshot-count) count=$2; shift ;;
    --config) configs+=("$2"); shift ;;
    --policies) policies=$2; shift ;;
    --fairness) fairness=$2; shift ;;
    --parallel) parallel=$2; shift ;;
    --out) out=$2; shift ;;
    --workload) workload=$2; shift ;;
    --jitter) jitter=$2; shift ;;
    --baseline) baselines+=(--baseline "$2"); shift ;;
    --no-ring-book) ring_book=(--no-ring-book) ;;
    --nvl72) preset=nvl72; seeds=10 first_seed=101 jobs=1500 count=4
             policies=slurm-block,topoaware,topoaware-nodomain
             baselines=(--baseline slurm-block --baseline topoaware-nodomain) ;;
    *) echo "netsim_report.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ ${#configs[@]} -eq 0 ]; then
  case $preset in
    target) configs=("${target[@]}") ;;
    nvl72) configs=(nvl72:1152 nvl72-2to1:1152) ;;
    *) configs=("${quick[@]}") ;;
  esac
fi
for p in "$build/bench/placement_sim" "$build/bench/netsim/netsim"; do
  [ -x "$p" ] || { echo "netsim_report.sh: $p not built (netsim needs SimGrid >= 3.32)" >&2; exit 1; }
done
mkdir -p "$out"
echo "*" > "$out/.gitignore"  # results stay out of git when built in the source tree
args=()
for c in "${configs[@]}"; do args+=(--config "$c"); done
rm -rf "$out/snapshots"
echo "# placement_sim: ${configs[*]}; $seeds seeds x $jobs jobs ($workload workload); $count snapshots per run; policies $policies"
t0=$(date +%s)
"$build/bench/placement_sim" "${args[@]}" "${ring_book[@]}" --seeds "$seeds" --first-seed "$first_seed" --jobs "$jobs" --policies "$policies" \
  --out "$out" --snapshots "$out/snapshots" --snapshot-count "$count" --workload "$workload" --jitter "$jitter" \
  > "$out/placement_sim.txt"
echo "# placement_sim: $(( $(date +%s) - t0 )) s"
python3 "$here/netsim_report.py" --snapshots "$out/snapshots" --netsim "$build/bench/netsim/netsim" \
  --runs "$out/runs.csv" --out "$out" --fairness "$fairness" --parallel "$parallel" ${baselines[@]+"${baselines[@]}"} | tee "$out/report.txt"
