#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# How long `topoaware monitor` takes to read the counters of every switch port of a large fabric,
# and what the window of queries in flight buys, on a simulated fabric (ibsim + umad2sim).
#
#   bench/monitor_speed.sh [--runs N] [--windows "1 16 64 256"] [--keep DIR] [-- <generate fat-tree options>]
#
# Default fabric: the one of bench/discovery_speed.sh (3-level fat tree, 10,000 hosts, 700
# switches). OpenSM programs it once (opensm -o), `topoaware discover --routes` records the switch
# LIDs, then `monitor --once` reads every cabled switch port (two PMA queries each) N times per
# window size; the median time per reading is reported, with the ratio against window 1 (one query
# at a time, as ibqueryerrors and perfquery ask). Under ibsim one simulator thread answers every
# query, so the absolute rate says little about a real fabric, where each switch's management
# processor answers its own queries in parallel; the ratio shows what keeping queries in flight buys
# when the answers' latency, not their processing, is the limit.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$PWD}
runs=3
windows="1 16 64 256"
keep=
gen_args=(--levels 3 --leaves 400 --hosts-per-leaf 25 --uplinks 20 --spines 10 --leaves-per-pod 20
          --cores 100 --core-uplinks 20)
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --windows) windows=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --) shift; gen_args=("$@"); break ;;
    *) echo "usage: $0 [--runs N] [--windows \"1 64\"] [--keep DIR] [-- generate options]" >&2; exit 2 ;;
  esac
done

die() { echo "monitor_speed: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (ibsim/umad2sim)"
command -v ibsim >/dev/null || die "ibsim not installed (apt-get install ibsim-utils)"
command -v opensm >/dev/null || die "opensm not installed (apt-get install opensm)"
TOPOAWARE=$top_builddir/topoaware
[ -x "$TOPOAWARE" ] || die "$TOPOAWARE not built"

work=${keep:-$(mktemp -d /tmp/monitor_speed.XXXXXX)}
mkdir -p "$work" && cd "$work" || die "cannot use $work"
. "$top_srcdir/tools/lib/ibsim.sh"
cleanup() {
  ibsim_stop
  [ -z "$keep" ] && { cd /; rm -rf "$work"; }
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$TOPOAWARE" generate fat-tree "${gen_args[@]}" --net fabric.net || die "generate failed"
read -r -a sim_args <<<"$("$TOPOAWARE" generate fat-tree "${gen_args[@]}" --ibsim-args)"
echo "fabric: $(grep -c '^Switch' fabric.net) switches, $(grep -c '^Ca' fabric.net) CAs" \
  "(topoaware generate fat-tree ${gen_args[*]})"
IBSIM_START_TIMEOUT=600 ibsim_start fabric.net "$work/sim" "${sim_args[@]}" || die "ibsim did not start"
SECONDS=0
ibsim_run timeout 1800 opensm -o -f opensm.log >opensm.out 2>&1 || die "opensm -o failed: $(tail -3 opensm.out)"
echo "opensm -o (LIDs and routes): ${SECONDS} s"
SECONDS=0
ibsim_run "$TOPOAWARE" discover --quiet --routes --json topology.json 2>discover.err || die "discover --routes failed: $(tail -3 discover.err)"
echo "discover --routes: ${SECONDS} s"
echo '{"schema": "topoaware-status/1", "plugin": "select/cons_tres_topoaware", "written_at": 0, "topology": {"file": "", "hash": "", "error": ""}, "job_test": {"calls": 0, "total_us": 0, "max_us": 0, "layout_calls": 0, "layout_total_us": 0, "layout_max_us": 0}, "jobs": []}' >status.json

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A med
for w in $windows; do
  : >"t_$w"
  for i in $(seq "$runs"); do
    rm -f state.json
    # The first --once run of a series only reads and saves: its time is one full reading.
    ibsim_run "$TOPOAWARE" monitor --once --no-slurm --window "$w" -t topology.json --status status.json \
      --state state.json >/dev/null 2>run.err || die "monitor (window $w) failed: $(tail -3 run.err)"
    line=$(grep -m1 '^topoaware: read ' run.err) || die "no timing line: $(tail -3 run.err)"
    ports=$(sed -n 's/^topoaware: read \([0-9]*\) switch ports.*/\1/p' <<<"$line")
    secs=$(sed -n 's/.* ports in \([0-9.]*\) s.*/\1/p' <<<"$line")
    grep -q 'not read' run.err && die "window $w: ports not read: $(grep -m3 'not read' run.err)"
    echo "$secs" >>"t_$w"
  done
  med[$w]=$(median <"t_$w")
done
first=${windows%% *}
printf '%-8s %-10s %-12s %-14s %s\n' window ports "median s" "queries/s" "time / window $first"
for w in $windows; do
  printf '%-8s %-10s %-12s %-14.0f %.3f\n' "$w" "$ports" "${med[$w]}" \
    "$(awk -v p="$ports" -v s="${med[$w]}" 'BEGIN { print 2 * p / s }')" \
    "$(awk -v a="${med[$w]}" -v b="${med[$first]}" 'BEGIN { print a / b }')"
done
