#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A deep queue through real slurmctld: --jobs jobs (default 10000) queued at once on a localhost
# cluster of 64 slurmd (8 leaves x 8, 8 GPUs each; topology.json generated, topology/tree), as job
# arrays: 40% layout jobs (--tp=8 with --dp 1, 2 or 4, exclusive), 60% plain one-GPU jobs, each
# running `sleep 1`. All are submitted held, released together, and must all complete. Per run:
# time until the queue is empty, and sdiag's main scheduler and backfill cycle times (mean and max,
# microseconds) over the run. Builds, alternating, --runs times each on fresh clusters:
#   topoaware    select/cons_tres_topoaware + spank_topoaware
#   passthrough  select/cons_tres_passthrough + spank_topoaware (the same work minus placement)
# Prints medians and spreads and the ratios topoaware/passthrough. Needs root. Not a test:
# `make bench-queue-load BENCH_QUEUE_ARGS="--jobs N --runs R"`.
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/_build}
. "$top_srcdir/tests/lib/slurm_cluster.sh"

jobs=10000 runs=1 array=100
while [ $# -gt 0 ]; do
  case $1 in
    --jobs) jobs=$2; shift ;;
    --runs) runs=$2; shift ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "bench/queue_load.sh needs root (it starts slurmctld and slurmd)" >&2; exit 2; }
b=$(cd "$top_builddir" && pwd)
sel=$b/plugins/select/.libs
spank=$b/plugins/spank/.libs/spank_topoaware.so
for f in "$sel/select_cons_tres_topoaware.so" "$sel/select_cons_tres_passthrough.so" "$spank"; do
  [ -f "$f" ] || { echo "$f not built" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-queue.XXXXXX")
ta_on_exit "rm -rf '$work'"
chmod 755 "$work"
mkdir -m 0755 "$work/state"
echo "required $spank state_dir=$work/state" >"$work/plugstack.conf"
"$b/topoaware" generate fat-tree --leaves 8 --hosts-per-leaf 8 --json "$work/topology.json" >/dev/null
"$b/topoaware" convert "$work/topology.json" -f tree -o "$work/topology.conf"

narrays=$(( (jobs + array - 1) / array ))
declare -A MAKESPAN MAIN_MEAN MAIN_MAX BF_MEAN BF_MAX
# sdiag_field LABEL SECTION: a number from sdiag's output (SECTION: main | backfill).
sdiag_field() {
  cluster_run sdiag | awk -v label="$1" -v sec="$2" '
    /^Main schedule statistics/ {s = "main"} /^Backfilling stats/ {s = "backfill"}
    s == sec && index($0, label ":") { sub(/.*: */, ""); print $1 + 0; exit }'
}
measure() { # measure NAME SELECTTYPE
  local name=$1 seltype=$2 k t0 left
  cluster_start --nodes 64 --width 4 --gpus 8 --plugin-dir "$sel" --plugstack "$work/plugstack.conf" \
    --topology "$work/topology.conf" --conf "SelectType=$seltype" --conf MaxJobCount=50000 \
    --conf MaxArraySize=10001 --conf MinJobAge=30 --file "topology.json=$work/topology.json" >/dev/null
  for ((k = 0; k < narrays; k++)); do
    local n=$array
    [ $(( (k + 1) * array )) -le "$jobs" ] || n=$(( jobs - k * array ))
    local common=(sbatch --hold --parsable "--array=1-$n" -t 5 -o /dev/null --wrap 'sleep 1')
    local layout=(--exclusive --gpus-per-node=8 --ntasks-per-node=8 --tp=8)
    case $((k % 10)) in
      0|1) cluster_run "${common[@]}" "${layout[@]}" -N1 --dp=1 ;;
      2) cluster_run "${common[@]}" "${layout[@]}" -N2 --dp=2 ;;
      3) cluster_run "${common[@]}" "${layout[@]}" -N4 --dp=4 ;;
      *) cluster_run "${common[@]}" -n1 --gpus=1 ;;
    esac
  done >/dev/null
  cluster_run sdiag -r >/dev/null
  t0=$SECONDS
  cluster_run scontrol release "$(cluster_run squeue -h -o %F | sort -u | paste -sd,)" >/dev/null
  while :; do
    left=$(cluster_run squeue -h -o %i -r | wc -l)
    [ "$left" -gt 0 ] || break
    [ $((SECONDS - t0)) -lt 7200 ] || { echo "# $name: $left jobs left after 2 h" >&2; break; }
    sleep 5
  done
  MAKESPAN[$name]+="$((SECONDS - t0)) "
  MAIN_MEAN[$name]+="$(sdiag_field 'Mean cycle' main) "
  MAIN_MAX[$name]+="$(sdiag_field 'Max cycle' main) "
  BF_MEAN[$name]+="$(sdiag_field 'Mean cycle' backfill) "
  BF_MAX[$name]+="$(sdiag_field 'Max cycle' backfill) "
  echo "# $name: $jobs jobs done in $((SECONDS - t0)) s;" \
    "main cycle mean/max $(sdiag_field 'Mean cycle' main)/$(sdiag_field 'Max cycle' main) us;" \
    "backfill mean/max $(sdiag_field 'Mean cycle' backfill)/$(sdiag_field 'Max cycle' backfill) us"
  grep -c 'select/cons_tres_topoaware: JobId=.*placed by plain' "$CLUSTER_LOGDIR/slurmctld.log" 2>/dev/null |
    sed 's/^/# plain-fallback log lines: /' || true
  cluster_stop
}
for ((r = 1; r <= runs; r++)); do
  measure passthrough select/cons_tres_passthrough
  measure topoaware select/cons_tres_topoaware
done

stats() {
  tr ' ' '\n' <<<"$1" | grep . | sort -n |
    awk '{v[NR]=$1} END {printf "%d (%d-%d)", v[int((NR+1)/2)], v[1], v[NR]}'
}
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo
echo "$jobs jobs (arrays of $array; 40% layout), $runs run(s) per build; median (min-max)"
printf '%-12s %-18s %-20s %-20s %-20s %-20s\n' build "queue empty, s" "main mean, us" "main max, us" \
  "backfill mean, us" "backfill max, us"
for n in topoaware passthrough; do
  printf '%-12s %-18s %-20s %-20s %-20s %-20s\n' "$n" "$(stats "${MAKESPAN[$n]}")" "$(stats "${MAIN_MEAN[$n]}")" \
    "$(stats "${MAIN_MAX[$n]}")" "$(stats "${BF_MEAN[$n]}")" "$(stats "${BF_MAX[$n]}")"
done
for f in MAKESPAN MAIN_MEAN BF_MEAN; do
  declare -n arr=$f
  awk -v a="$(median "${arr[topoaware]}")" -v b="$(median "${arr[passthrough]}")" -v f="$f" \
    'BEGIN {printf "topoaware/passthrough %s: %.2f\n", f, (b ? a / b : 0)}'
done
