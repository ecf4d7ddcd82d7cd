#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What a SPANK job prolog/epilog costs each node of every job, on a localhost cluster of real
# slurmd (tests/lib/slurm_cluster.sh), for three plugstack.conf settings:
#   none       no SPANK plugin: slurmd starts no `slurmstepd spank prolog|epilog` at all
#   empty      a SPANK plugin whose job_prolog and job_epilog return 0 (built here from a few lines
#              of C): what slurmstepd itself costs any site with such a plugin
#   topoaware  spank_topoaware.so of this build, with a state folder, as the tests install it
#   baseline   another build of spank_topoaware.so (--baseline-spank SO), the same way
# Every run submits the same jobs (JOBS jobs of 1..MAXN nodes whose batch script is `true`), with
# PrologFlags=Alloc, so that each node of each job gets exactly one prolog and one epilog.
#
# CPU time: slurmd forks `slurmstepd spank prolog|epilog` and waits for it (the prep/script
# plugin), so its CPU lands in slurmd's cutime+cstime (/proc/PID/stat), read when the cluster is
# idle before the jobs and again when every node has left COMPLETING. The batch steps' slurmstepd
# are not counted there (slurmd's forked child forks them and exits at once); what that short
# child costs is in `none`, the baseline. The prologs and epilogs are counted in slurmd's log
# (SlurmdDebug=debug logs each call) and must equal the job-node count.
# Prints, per run, ms of CPU per node per job (prolog + epilog), and the differences (medians; with
# --repeat, the kinds alternate within each round, so a round's runs meet the same machine load).
#
# usage: bench/spank_prolog_cost.sh [--nodes N] [--jobs J] [--max-job-nodes K] [--repeat R]
#                                   [--runs none,empty,topoaware[,baseline]] [--baseline-spank SO] [--out DIR]
#   --nodes N          slurmd on localhost (default 16)
#   --jobs J           jobs per run (default 200)
#   --max-job-nodes K  job i asks for 1 + (i mod K) nodes (default 8)
#   --repeat R         R rounds of every run, the kinds in turn (default 1)
#   --baseline-spank SO  the `baseline` run's plugin (e.g. the build of another commit)
# Env: top_srcdir, top_builddir (the build), OUT (default $top_builddir/bench/spank-cost),
# TOPOAWARE_SLURM_PREFIX (another Slurm release, tests/lib/slurm_release.sh). Needs root.
set -euo pipefail
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$PWD}"
export top_srcdir top_builddir
# shellcheck source=tests/lib/slurm_cluster.sh
. "$top_srcdir/tests/lib/slurm_cluster.sh"

NODES=16 JOBS=200 MAXN=8 REPEAT=1 RUNS=none,empty,topoaware BASELINE=""
OUT=${OUT:-$top_builddir/bench/spank-cost}
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) NODES=$2; shift ;;
    --jobs) JOBS=$2; shift ;;
    --max-job-nodes) MAXN=$2; shift ;;
    --repeat) REPEAT=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --baseline-spank) BASELINE=$2; shift ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0"; exit 0 ;;
    *) echo "spank_prolog_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$MAXN" -le "$NODES" ] || { echo "spank_prolog_cost.sh: --max-job-nodes above --nodes" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "spank_prolog_cost.sh: needs root (slurmd)" >&2; exit 1; }
SPANK=$top_builddir/plugins/spank/.libs/spank_topoaware.so
[ -f "$SPANK" ] || { echo "spank_prolog_cost.sh: $SPANK not built (configure --with-slurm-source)" >&2; exit 1; }

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# The empty plugin, against the headers of the Slurm that runs it.
inc=/usr/include
[ -z "${TOPOAWARE_SLURM_PREFIX:-}" ] || inc=$TOPOAWARE_SLURM_PREFIX/include
cat >"$OUT/spank_empty.c" <<'EOF'
#include <slurm/spank.h>
SPANK_PLUGIN(ta_empty, 1);
int slurm_spank_job_prolog(spank_t sp, int ac, char **av) { (void)sp; (void)ac; (void)av; return 0; }
int slurm_spank_job_epilog(spank_t sp, int ac, char **av) { (void)sp; (void)ac; (void)av; return 0; }
EOF
${CC:-cc} -O2 -shared -fPIC -I"$inc" -o "$OUT/spank_empty.so" "$OUT/spank_empty.c"
: >"$OUT/plugstack.none"
echo "required $OUT/spank_empty.so" >"$OUT/plugstack.empty"
echo "required $SPANK topology=$OUT/topology.json state_dir=$OUT/state" >"$OUT/plugstack.topoaware"
if [[ ,$RUNS, == *,baseline,* ]]; then
  [ -f "$BASELINE" ] || { echo "spank_prolog_cost.sh: run baseline needs --baseline-spank SO" >&2; exit 2; }
  echo "required $(cd "$(dirname "$BASELINE")" && pwd)/$(basename "$BASELINE") topology=$OUT/topology.json" \
    "state_dir=$OUT/state" >"$OUT/plugstack.baseline"
fi

# slurmd's own CPU and that of the children it waited for, summed over every slurmd (seconds).
children_cpu() { # RUNDIR
  local f pid
  for f in "$1"/slurmd.*.pid; do
    pid=$(cat "$f")
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmd ] || continue
    sed 's/.*) //' "/proc/$pid/stat"
  done | awk -v t="$(getconf CLK_TCK)" '{ s += $12 + $13; c += $14 + $15 } END { printf "%.3f %.3f\n", s / t, c / t }'
}

quiet() { # wait until no job is queued or running and no node is completing
  local deadline=$((SECONDS + 600))
  while [ -n "$(cluster_run squeue -h -o %i)" ] || [ -n "$(cluster_run sinfo -h -N -t completing -o %N)" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "spank_prolog_cost.sh: jobs still there after 10 min" >&2; return 1; }
    sleep 1
  done
}

run() { # KIND TAG
  local kind=$1 tag=$2 dir=$OUT/$2 i before after t0 t1 nj pro epi
  rm -rf "$dir"
  mkdir -p "$dir"
  cluster_start --nodes "$NODES" --width 4 --dir "$dir/cluster" --plugstack "$OUT/plugstack.$kind" \
    --conf PrologFlags=Alloc --conf SlurmdDebug=debug --conf MinJobAge=3600 --timeout 240
  quiet
  sleep 2
  before=$(children_cpu "$dir/cluster/run")
  t0=$(date +%s.%N)
  for ((i = 0; i < JOBS; i++)); do
    cluster_run sbatch --parsable --exclusive -N"$((1 + i % MAXN))" -o /dev/null --wrap true >>"$dir/submitted.txt"
  done
  quiet
  t1=$(date +%s.%N)
  after=$(children_cpu "$dir/cluster/run")
  cluster_run scontrol -o show job >"$dir/jobs.txt"
  cluster_stop
  nj=$(grep -o 'NumNodes=[0-9]*' "$dir/jobs.txt" | awk -F= '{ s += $2 } END { print s + 0 }')
  pro=$(cat "$dir"/cluster/log/slurmd.*.log | grep -c 'calling .* spank prolog' || true)
  epi=$(cat "$dir"/cluster/log/slurmd.*.log | grep -c 'calling .* spank epilog' || true)
  echo "$kind $tag $before $after $nj $pro $epi $t0 $t1" | awk '{
    printf "%s %s node_jobs %d prologs %d epilogs %d children_cpu_s %.2f ms_per_node_job %.2f slurmd_cpu_s %.2f wall_s %.1f\n",
      $1, $2, $7, $8, $9, $6 - $4, ($7 ? ($6 - $4) * 1000 / $7 : 0), $5 - $3, $11 - $10 }' | tee -a "$OUT/results.txt"
  rm -rf "$dir/cluster/spool" "$dir/cluster/state"
}

: >"$OUT/results.txt"
IFS=, read -r -a kinds <<<"$RUNS"
for ((r = 1; r <= REPEAT; r++)); do
  for k in "${kinds[@]}"; do
    case $k in none|empty|topoaware|baseline) ;; *) echo "spank_prolog_cost.sh: unknown run $k" >&2; exit 2 ;; esac
    rm -rf "$OUT/state"
    run "$k" "$k.r$r"
  done
done
# Medians per kind, and the differences that matter: slurmstepd's own (empty - none), ours (topoaware - empty).
for k in "${kinds[@]}"; do
  awk -v k="$k" '$1 == k { print $12 }' "$OUT/results.txt" | sort -g |
    awk -v k="$k" '{ a[NR] = $1 } END { if (NR) printf "median %s %.2f ms per node per job (%d runs)\n", k,
                    (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, NR }'
done | tee "$OUT/summary.txt"
diffs=$(awk '{ m[$2] = $3 } END {
  if (("none" in m) && ("empty" in m)) printf "slurmstepd spank (empty - none) %.2f ms per node per job\n", m["empty"] - m["none"]
  if (("empty" in m) && ("topoaware" in m)) printf "spank_topoaware (topoaware - empty) %.2f ms per node per job\n", m["topoaware"] - m["empty"]
  if (("empty" in m) && ("baseline" in m)) printf "baseline spank (baseline - empty) %.2f ms per node per job\n", m["baseline"] - m["empty"]
  if (("topoaware" in m) && ("baseline" in m) && m["baseline"] > 0) printf "topoaware / baseline %.3f\n", m["topoaware"] / m["baseline"]
}' "$OUT/summary.txt")
[ -z "$diffs" ] || echo "$diffs" | tee -a "$OUT/summary.txt"
