#!/bin/bash
# bench/netsim/routes.sh: a topology.json with routes (forwarding tables and LIDs) for a generated
# fabric, so that netsim's as-routed mode has tables a subnet manager really programmed:
#   1. topoaware generate ... --net (with --shuffle-cabling SEED: hosts cabled out of name order);
#   2. ibsim on that net file, OpenSM once (opensm -o -R ENGINE) to assign LIDs and program the LFTs;
#   3. dump_fts and ibnetdiscover against the simulator;
#   4. topoaware discover --ibnetdiscover DUMP --lfts FTS --json OUT.
# Each step's wall time is printed (bench/netsim/README.md, "Routed topologies").
#
#   bench/netsim/routes.sh [--engine ftree|minhop|updn|dfsssp|...] [--seed N|--seed 0] [--keep DIR]
#                          OUT.json -- fat-tree --leaves 16 --hosts-per-leaf 32 --uplinks 16 --spines 8
#
# --seed: the --shuffle-cabling seed (default 1; 0 = hosts in name order). --keep DIR: keep the net
# file, dumps and OpenSM's log there. Needs ibsim-utils, libumad2sim0, opensm and infiniband-diags;
# finds topoaware in $TOPOAWARE, else $top_builddir, else ./_build of the source tree.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
bin=${TOPOAWARE:-${top_builddir:-$top_srcdir/_build}/topoaware}
. "$top_srcdir/tools/lib/ibsim.sh"

engine=ftree seed=1 keep="" sm_timeout=${ROUTES_SM_TIMEOUT:-3600}
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --engine) engine=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) echo "routes.sh: unknown option $1" >&2; usage ;;
    *) out=$1; shift ;;
  esac
done
[ -n "${out:-}" ] && [ $# -gt 0 ] || usage
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

t=$(now)
ibsim_start "$work/fabric.net" "$work/sim" "${sim_args[@]}"
step "ibsim start (${sim_args[*]:-default limits})" "$t"

# -o: sweep once, program LIDs and tables, exit; the switches keep the tables (ibsim holds them).
t=$(now)
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
step "opensm -o -R $engine" "$t"

t=$(now)
ibsim_run dump_fts >"$work/fts.txt" 2>"$work/dump_fts.err"
step "dump_fts ($(grep -c '^Unicast lids' "$work/fts.txt") switches)" "$t"
t=$(now)
ibsim_run ibnetdiscover >"$work/dump.txt" 2>"$work/ibnetdiscover.err"
step "ibnetdiscover" "$t"

t=$(now)
"$bin" discover --quiet --ibnetdiscover "$work/dump.txt" --lfts "$work/fts.txt" --json "$out"
step "topoaware discover --lfts" "$t"
