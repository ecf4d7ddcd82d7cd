#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/netsim/routes.sh: a topology.json with routes (forwarding tables and LIDs) for a generated
# fabric, so that netsim's as-routed mode has tables a subnet manager really programmed:
#   1. topoaware generate ... --net (with --shuffle-cabling SEED: hosts cabled out of name order);
#   2. ibsim on that net file, OpenSM once (opensm -o -R ENGINE) to assign LIDs and program the LFTs;
#   3. the tables and LIDs read from the simulator: `topoaware discover --routes` (default, --read
#      live), or dump_fts and ibnetdiscover's text read back with `topoaware discover --ibnetdiscover
#      DUMP --lfts FTS` (--read dumps; kept with --keep). dump_fts (infiniband-diags 44.0) leaves out
#      the entries a switch sends out of port 128 (seen on 128-port spines: the hosts of the leaf on
#      that port had no route), so dumps are only complete below 128 ports;
#   4. a check that every switch routes every host port's LID.
# Each step's wall time is printed (bench/netsim/README.md, "Routed topologies").
#
#   bench/netsim/routes.sh [--engine ftree|minhop|updn|dfsssp|...] [--seed N|--seed 0] [--keep DIR] [--read live|dumps]
#                          OUT.json -- fat-tree --leaves 16 --hosts-per-leaf 32 --uplinks 16 --spines 8
#
# --seed: the --shuffle-cabling seed (default 1; 0 = hosts in name order). --keep DIR: keep the net
# file, dumps and OpenSM's log there. Needs ibsim-utils, libumad2sim0, opensm, infiniband-diags, python3;
# finds topoaware in $TOPOAWARE, else $top_builddir, else ./_build of the source tree.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
bin=${TOPOAWARE:-${top_builddir:-$top_srcdir/_build}/topoaware}
. "$top_srcdir/tools/lib/ibsim.sh"

engine=ftree seed=1 keep="" read=live sm_timeout=${ROUTES_SM_TIMEOUT:-3600}
usage() { sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --engine) engine=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --read) read=$2; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) echo "routes.sh: unknown option $1" >&2; usage ;;
    *) out=$1; shift ;;
  esac
done
[ -n "${out:-}" ] && [ $# -gt 0 ] || usage
case $read in live|dumps) ;; *) echo "routes.sh: --read live or --read dumps" >&2; usage ;; esac
[ -x "$bin" ] || { echo "routes.sh: $bin not built (set TOPOAWARE or top_builddir)" >&2; exit 2; }
for c in ibsim opensm dump_fts ibnetdiscover; do
  command -v "$c" >/dev/null || { echo "routes.sh: $c not installed" >&2; exit 2; }
done

if [ -n "$keep" ]; then work=$keep; mkdir -p "$work"; else work=$(mktemp -d "${TMPDIR:-/tmp}/ta-routes.XXXXXX"); fi
cleanup() { ibsim_stop; [ -n "$keep" ] || rm -rf "$work"; }
trap cleanup EXIT
now() { date +%s.%N; }
step() { printf '%-40s %8.1f s\n' "$1" "$(echo "$(now) - $2" | bc)" >&2; }

shuffle=()
[ "$seed" = 0 ] || shuffle=(--shuffle-cabling "$seed")
t=$(now)
"$bin" generate "$@" "${shuffle[@]}" --net "$work/fabric.net" >/dev/null
read -r -a sim_args <<<"$("$bin" generate "$@" "${shuffle[@]}" --ibsim-args)"
step "generate net file" "$t"

# -o: sweep once, program LIDs and tables, exit; the switches keep the tables (ibsim holds them).
# Under load, a sweep of a large simulated fabric now and then finds cables whose far end "does not
# point back" (OpenSM's ERR 7518; seen at 4,096 and 8,192 hosts, not reproducible on the next try)
# and leaves the LIDs behind them out of the tables. OpenSM logs what it could not set up as ERR:
# then the simulator and OpenSM start again, up to 3 times.
routed=0
for attempt in 1 2 3; do
  t=$(now)
  ibsim_start "$work/fabric.net" "$work/sim.$attempt" "${sim_args[@]}"
  step "ibsim start (${sim_args[*]:-default limits})" "$t"
  t=$(now)
  rm -f "$work/opensm.log"
  if ! timeout "$sm_timeout" env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" \
      opensm -o -R "$engine" -f "$work/opensm.log" >"$work/opensm.out" 2>&1; then
    echo "routes.sh: opensm -R $engine failed or timed out (${sm_timeout} s); its log: $work/opensm.log" >&2
    tail -5 "$work/opensm.out" >&2
    exit 1
  fi
  # OpenSM says "<engine> tables configured on all switches"; an engine that fails falls back to
  # minhop, whose tables must not pass for the engine's.
  if ! grep -q "osm_ucast_mgr_process: $engine tables configured" "$work/opensm.log"; then
    echo "routes.sh: OpenSM did not route with $engine:" >&2
    grep -i "fail\|error\|tables configured" "$work/opensm.log" | head -5 >&2
    exit 1
  fi
  if ! grep -q ' ERR [0-9A-F]*:' "$work/opensm.log"; then
    step "opensm -o -R $engine" "$t"
    routed=1
    break
  fi
  echo "routes.sh: attempt $attempt: OpenSM reported $(grep -c ' ERR [0-9A-F]*:' "$work/opensm.log") errors, e.g." \
    "$(grep -m1 -o 'ERR [0-9A-F]*:.*' "$work/opensm.log"); starting again" >&2
  ibsim_stop
done
[ "$routed" = 1 ] || { echo "routes.sh: OpenSM reported errors 3 times; its log: $work/opensm.log" >&2; exit 1; }

if [ "$read" = live ]; then
  t=$(now)
  timeout "$sm_timeout" env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" \
    "$bin" discover --quiet --routes --json "$out" 2>"$work/discover.err" ||
    { echo "routes.sh: discover --routes failed:" >&2; grep -v ibwarn "$work/discover.err" | head -5 >&2; exit 1; }
  step "topoaware discover --routes" "$t"
else
  t=$(now)
  ibsim_run dump_fts >"$work/fts.txt" 2>"$work/dump_fts.err"
  step "dump_fts ($(grep -c '^Unicast lids' "$work/fts.txt") switches)" "$t"
  t=$(now)
  ibsim_run ibnetdiscover >"$work/dump.txt" 2>"$work/ibnetdiscover.err"
  step "ibnetdiscover" "$t"
  t=$(now)
  "$bin" discover --quiet --ibnetdiscover "$work/dump.txt" --lfts "$work/fts.txt" --json "$out"
  step "topoaware discover --lfts" "$t"
fi

# Every switch must route every host port's LID: a hole would make netsim's as-routed mode fail
# on the first flow that needs it, far from here.
python3 - "$out" <<'EOF' || exit 1
import base64, json, sys
t = json.load(open(sys.argv[1]))
holes = 0
for sn in t["routes"]["subnets"]:
    lids = [p[2] for p in sn["ports"]]
    for s in sn["switches"]:
        lft = base64.b64decode(s["lft"])
        holes += sum(1 for l in lids if l >= len(lft) or lft[l] == 255)
if holes:
    sys.exit("routes.sh: %d (switch, host LID) entries have no route in %s" % (holes, sys.argv[1]))
EOF
