#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What a large topology costs slurmctld at `scontrol reconfigure`: a localhost cluster of 16 slurmd
# whose topology.json is a generated fat tree of --hosts hosts (default 200000), touched before each
# reconfigure so that it is parsed again. Per run: how long `scontrol reconfigure` takes (slurmctld
# holds its write locks for that), the slowest `squeue` answer while it runs (one every 50 ms: what
# users see), how long until the plugin logs the topology loaded, and slurmctld's resident memory:
# its peak (VmHWM: the start-up load, the reloads and the last good copy each load saves) and what
# it settles to once the load is done (VmRSS). Builds, each on its own cluster,
# RUNS times:
#   topoaware    the build tree's select_cons_tres_topoaware.so (topology loaded off the locks),
#   baseline     another build of it (--baseline-select SO, e.g. one built from an earlier commit),
#   passthrough  select_cons_tres_passthrough.so (no topology at all: the floor).
# Prints medians and spreads (min-max) and the ratios to passthrough. The machine is shared and
# noisy: read the ratios. Needs root. Not a test: `make bench-topology-reload`
# (BENCH_RELOAD_ARGS="--hosts N --runs R --baseline-select SO").
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/_build}
. "$top_srcdir/tests/lib/slurm_cluster.sh"

hosts=200000 runs=5 baseline=""
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) hosts=$2; shift ;;
    --runs) runs=$2; shift ;;
    --baseline-select) baseline=$2; shift ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "bench/topology_reload.sh needs root (it starts slurmctld and slurmd)" >&2; exit 2; }
b=$(cd "$top_builddir" && pwd)
sel=$b/plugins/select/.libs
[ -f "$sel/select_cons_tres_topoaware.so" ] || { echo "$sel/select_cons_tres_topoaware.so not built" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-reload.XXXXXX")
ta_on_exit "rm -rf '$work'"
chmod 755 "$work"
# A 3-level fat tree of 64 hosts per leaf, 100 leaves per pod (hosts rounded up to whole leaves).
leaves=$(( (hosts + 63) / 64 ))
pods=$(( (leaves + 99) / 100 ))
leaves=$(( pods * 100 ))
echo "# generating a fat tree of $((leaves * 64)) hosts ($leaves leaves, $pods pods)..."
t0=$SECONDS
"$b/topoaware" generate fat-tree --levels 3 --leaves "$leaves" --hosts-per-leaf 64 --leaves-per-pod 100 \
  --uplinks 16 --spines 16 --cores 64 --json "$work/topology.json" >/dev/null
echo "# topology.json: $(du -h "$work/topology.json" | cut -f1) in $((SECONDS - t0)) s"

ms() { date +%s%3N; }
declare -A RECONF SLOWEST LOADED PEAK SETTLED
rss_mb() { awk -v k="$1:" '$1 == k { printf "%d", $2 / 1024 }' "/proc/$CLUSTER_CTLD_PID/status" 2>/dev/null || echo 0; }
# measure NAME SELECTTYPE PLUGINDIR
measure() {
  local name=$1 seltype=$2 dir=$3 r t0 t1 probe_pid before loaded
  cluster_start --nodes 16 --width 4 --plugin-dir "$dir" --conf "SelectType=$seltype" \
    --file "topology.json=$work/topology.json" >/dev/null
  # The start-up load first (not measured).
  if [ "$name" != passthrough ]; then
    ta_wait_for 600 grep -q 'topology .* loaded' "$CLUSTER_LOGDIR/slurmctld.log" ||
      echo "# $name: no topology loaded at start" >&2
  fi
  for ((r = 1; r <= runs; r++)); do
    touch "$CLUSTER_DIR/topology.json"
    before=$(wc -l <"$CLUSTER_LOGDIR/slurmctld.log")
    : >"$work/probe"
    ( while :; do
        a=$(ms); cluster_run squeue -h >/dev/null 2>&1 || true; echo $(( $(ms) - a )) >>"$work/probe"; sleep 0.05
      done ) &
    probe_pid=$!
    sleep 0.3
    t0=$(ms)
    cluster_run scontrol reconfigure
    t1=$(ms)
    loaded=$(( t1 - t0 ))
    if [ "$name" != passthrough ]; then
      ta_wait_for 600 sh -c \
        "tail -n +$((before + 1)) '$CLUSTER_LOGDIR/slurmctld.log' | grep -q 'topology .* \\(loaded\\|unchanged\\)'" ||
        echo "# $name run $r: no load line" >&2
      loaded=$(( $(ms) - t0 ))
    fi
    sleep 0.5
    kill "$probe_pid" 2>/dev/null; wait "$probe_pid" 2>/dev/null || true
    RECONF[$name]+="$((t1 - t0)) "
    SLOWEST[$name]+="$(sort -n "$work/probe" | tail -1) "
    LOADED[$name]+="$loaded "
    PEAK[$name]+="$(rss_mb VmHWM) "
    SETTLED[$name]+="$(rss_mb VmRSS) "
    echo "# $name run $r: reconfigure $((t1 - t0)) ms, slowest squeue $(sort -n "$work/probe" | tail -1) ms," \
      "loaded after $loaded ms, slurmctld RSS peak $(rss_mb VmHWM) MB, now $(rss_mb VmRSS) MB"
  done
  cluster_stop
}

plugdir() { # plugdir NAME SO: a plugin folder with SO as select_cons_tres_topoaware.so
  mkdir -p "$work/$1"
  ln -sf "$sel/select_cons_tres_passthrough.so" "$work/$1/"
  ln -sf "$2" "$work/$1/select_cons_tres_topoaware.so"
  echo "$work/$1"
}
measure topoaware select/cons_tres_topoaware "$sel"
[ -z "$baseline" ] || measure baseline select/cons_tres_topoaware "$(plugdir base "$baseline")"
measure passthrough select/cons_tres_passthrough "$sel"

stats() {
  tr ' ' '\n' <<<"$1" | grep . | sort -n |
    awk '{v[NR]=$1} END {printf "%d (%d-%d)", v[int((NR+1)/2)], v[1], v[NR]}'
}
median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo
echo "topology of $((leaves * 64)) hosts, $runs runs each; median (min-max) in ms, slurmctld RSS in MB"
printf '%-12s %-22s %-22s %-22s %-20s %-20s\n' build "scontrol reconfigure" "slowest squeue" "topology in place" \
  "RSS peak" "RSS settled"
for n in topoaware baseline passthrough; do
  [ -n "${RECONF[$n]:-}" ] || continue
  printf '%-12s %-22s %-22s %-22s %-20s %-20s\n' "$n" "$(stats "${RECONF[$n]}")" "$(stats "${SLOWEST[$n]}")" \
    "$(stats "${LOADED[$n]}")" "$(stats "${PEAK[$n]}")" "$(stats "${SETTLED[$n]}")"
done
p=$(median "${RECONF[passthrough]}")
for n in topoaware baseline; do
  [ -n "${RECONF[$n]:-}" ] || continue
  awk -v a="$(median "${RECONF[$n]}")" -v b="$p" -v s="$(median "${SLOWEST[$n]}")" \
    -v q="$(median "${SLOWEST[passthrough]}")" -v n="$n" \
    'BEGIN {printf "%s/passthrough: reconfigure %.2fx, slowest squeue %.2fx\n", n, a / (b ? b : 1), s / (q ? q : 1)}'
done
