#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/netsim/routes.sh: a topology.json with routes (forwarding tables and LIDs) for a generated
# fabric, so that netsim's as-routed mode has tables a subnet manager really programmed:
#   1. topoaware generate ... --net (with --shuffle-cabling SEED: hosts cabled out of name order);
#   2. ibsim on that net file, OpenSM once (opensm -o -R ENGINE) to assign LIDs and program the LFTs;
#   3. the tables and LIDs read from the simulator: `topoaware discover --routes` (default, --read
#      live), or dump_fts and ibnetdiscover's text read back with `topoaware discover --ibnetdiscover
#      DUMP --lfts FTS` (--read dumps; kept with --keep), or ibnetdiscover's text with OpenSM's own
#      record of what it programmed, opensm-lfts.dump (--read opensm). dump_fts (infiniband-diags
#      44.0) leaves out the entries a switch sends out of port 128 (seen on 128-port spines: the
#      hosts of the leaf on that port had no route), so dumps are only complete below 128 ports; it
#      also leaves out a table's top LID when that LID starts a block of 64 (it reads the blocks
#      below ALIGN(top, 64) / 64), which topoaware reports as partial routes: --read opensm then;
#   4. a check that every switch routes every host port's LID.
# A fabric of several planes (`generate rail --spines-per-rail`: each rail its own leaves and spines,
# so a host's NICs sit in separate subnets) gets one OpenSM per plane, attached through the first
# host's NIC on it (ibsim's SIM_HOST), and is read back from one walk and one dump_fts per plane
# (--read dumps, or --read opensm for OpenSM's record of each plane). The planes are found in the
# generated cabling, not in the options: rails that meet at shared spines (`generate rail
# --spines`) are one plane, routed and read as one subnet.
# Each step's wall time is printed (bench/netsim/README.md, "Routed topologies").
#
#   bench/netsim/routes.sh [--engine ftree|minhop|updn|dfsssp|...] [--seed N|--seed 0] [--keep DIR]
#                          [--read live|dumps|opensm]
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
# ibsim reads a 16,384-CA net file (2,048 hosts of 8 NICs) in 8-15 s on a loaded 2-core machine,
# beyond ibsim_start's 10 s default.
export IBSIM_START_TIMEOUT=${IBSIM_START_TIMEOUT:-120}

engine=ftree seed=1 keep="" read=live sm_timeout=${ROUTES_SM_TIMEOUT:-3600}
usage() { awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
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
case $read in live|dumps|opensm) ;; *) echo "routes.sh: --read live, dumps or opensm" >&2; usage ;; esac
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
"$bin" generate "$@" "${shuffle[@]}" --net "$work/fabric.net" --json "$work/expected.json" >/dev/null
read -r -a sim_args <<<"$("$bin" generate "$@" "${shuffle[@]}" --ibsim-args)"
step "generate net file" "$t"

# The planes: the first host's NICs grouped by connected part of the cabling. One attach point (the
# ibsim node id of that NIC) per plane, and the most ports any switch has.
read -r -a planes <<<"$(python3 - "$work/expected.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
up = {}
def find(x):
    while up.setdefault(x, x) != x:
        up[x] = up[up[x]]
        x = up[x]
    return x
for l in t["links"]:
    up[find(l["a"])] = find(l["b"])
seen, ids = set(), []
for p in t["hosts"][0]["ports"]:
    root = find(p["ca_guid"])
    if root not in seen:
        seen.add(root)
        ids.append("H-" + p["ca_guid"][2:])
print(max(s["ports"] for s in t["switches"]), *ids)
EOF
)"
max_ports=${planes[0]}
planes=("${planes[@]:1}")
if [ ${#planes[@]} -gt 1 ]; then
  # discover --routes walks from one port; several planes are read from a walk and a dump per plane.
  [ "$read" = opensm ] || read=dumps
  [ "$read" = opensm ] || [ "$max_ports" -lt 128 ] || {
    echo "routes.sh: ${#planes[@]} planes with $max_ports-port switches: dump_fts leaves out port 128's entries;" \
      "use switches of fewer than 128 ports or --read opensm" >&2
    exit 2
  }
  echo "routes.sh: ${#planes[@]} planes, one OpenSM each" >&2
fi
sm_on() {  # PLANE CMD...: run CMD attached to the first host's NIC on PLANE (0-based)
  local ap=${planes[$1]}
  shift
  if [ ${#planes[@]} -gt 1 ]; then SIM_HOST=$ap ibsim_run "$@"; else ibsim_run "$@"; fi
}

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
  errors=0
  for ((p = 0; p < ${#planes[@]}; p++)); do
    log=$work/opensm.$p.log
    rm -f "$log"
    # --read opensm: log level 0x43 (routing) makes OpenSM write what it programmed to
    # opensm-lfts.dump in its dump folder.
    record=()
    [ "$read" != opensm ] || { rm -rf "$work/osm.$p"; mkdir -p "$work/osm.$p"; record=(-D 0x43 --dump_files_dir "$work/osm.$p"); }
    if ! sm_on "$p" timeout "$sm_timeout" opensm -o -R "$engine" "${record[@]}" -f "$log" >"$work/opensm.$p.out" 2>&1; then
      echo "routes.sh: opensm -R $engine failed or timed out (${sm_timeout} s); its log: $log" >&2
      tail -5 "$work/opensm.$p.out" >&2
      exit 1
    fi
    # OpenSM says "<engine> tables configured on all switches"; an engine that fails falls back to
    # minhop, whose tables must not pass for the engine's.
    if ! grep -q "osm_ucast_mgr_process: $engine tables configured" "$log"; then
      echo "routes.sh: OpenSM did not route with $engine:" >&2
      grep -i "fail\|error\|tables configured" "$log" | head -5 >&2
      exit 1
    fi
    errors=$((errors + $(grep -c ' ERR [0-9A-F]*:' "$log" || true)))
  done
  if [ "$errors" = 0 ]; then
    step "opensm -o -R $engine (${#planes[@]} plane(s))" "$t"
    routed=1
    break
  fi
  echo "routes.sh: attempt $attempt: OpenSM reported $errors errors, e.g." \
    "$(cat "$work"/opensm.*.log | grep -m1 -o 'ERR [0-9A-F]*:.*'); starting again" >&2
  ibsim_stop
done
[ "$routed" = 1 ] || { echo "routes.sh: OpenSM reported errors 3 times; its logs: $work/opensm.*.log" >&2; exit 1; }

if [ "$read" = live ]; then
  t=$(now)
  timeout "$sm_timeout" env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" \
    "$bin" discover --quiet --routes --json "$out" 2>"$work/discover.err" ||
    { echo "routes.sh: discover --routes failed:" >&2; grep -v ibwarn "$work/discover.err" | head -5 >&2; exit 1; }
  step "topoaware discover --routes" "$t"
else
  dumps=()
  for ((p = 0; p < ${#planes[@]}; p++)); do
    t=$(now)
    if [ "$read" = opensm ]; then
      cp "$work/osm.$p/opensm-lfts.dump" "$work/fts.$p.txt" ||
        { echo "routes.sh: OpenSM wrote no opensm-lfts.dump for plane $p" >&2; exit 1; }
    else
      sm_on "$p" dump_fts >"$work/fts.$p.txt" 2>"$work/dump_fts.$p.err"
    fi
    step "$([ "$read" = opensm ] && echo opensm-lfts.dump || echo dump_fts) ($(grep -c '^Unicast lids' "$work/fts.$p.txt") switches)" "$t"
    t=$(now)
    sm_on "$p" ibnetdiscover >"$work/dump.$p.txt" 2>"$work/ibnetdiscover.$p.err"
    step "ibnetdiscover" "$t"
    dumps+=(--ibnetdiscover "$work/dump.$p.txt" --lfts "$work/fts.$p.txt")
  done
  t=$(now)
  "$bin" discover --quiet "${dumps[@]}" --json "$out"
  step "topoaware discover --lfts" "$t"
fi

# Every host port must have a LID and every switch must route it: a hole would make netsim's
# as-routed mode fail on the first flow that needs it, far from here. (A plane's read once came
# back with one NIC of 16,384 missing: dump_fts left out the top LID of its tables, that NIC's.)
python3 - "$out" <<'EOF' || exit 1
import base64, json, sys
t = json.load(open(sys.argv[1]))
have = {(p[0], p[1]) for sn in t["routes"]["subnets"] for p in sn["ports"]}
missing = ["%s %s" % (h["name"], p.get("device", p["port"])) for h in t["hosts"] for p in h["ports"]
           if (p["ca_guid"], p["port"]) not in have]
if missing:
    sys.exit("routes.sh: %d host ports have no LID in %s, e.g. %s" % (len(missing), sys.argv[1], missing[0]))
holes = 0
for sn in t["routes"]["subnets"]:
    lids = [p[2] for p in sn["ports"]]
    for s in sn["switches"]:
        lft = base64.b64decode(s["lft"])
        holes += sum(1 for l in lids if l >= len(lft) or lft[l] == 255)
if holes:
    sys.exit("routes.sh: %d (switch, host LID) entries have no route in %s" % (holes, sys.argv[1]))
EOF
