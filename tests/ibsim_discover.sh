#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `topoaware discover` against real ibsim fabrics, through the real libibumad/libibmad/libibnetdisc
# stack (umad2sim): the live JSON equals the generator's expected JSON and the JSON of real
# `ibnetdiscover` output of the same fabric; a cable taken down shows as the leaf's missing uplink;
# lost management packets give exit 3 and leave a good file alone; a rail-optimized fabric built as
# one subnet per rail, walked rail by rail, merges back into the expected JSON; --save-cache writes a
# cache that --cache reads back, and refuses a symbolic link at its path.
set -u
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tools/lib/ibsim.sh"
ta_require_daemon_tests
ta_require_cmd ibsim ibsim-utils
ta_require_cmd ibnetdiscover infiniband-diags
[ -r "$UMAD2SIM_LIB" ] || ta_skip "$UMAD2SIM_LIB missing (package libumad2sim0)"
bin="$top_builddir/topoaware"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-ibdisc.XXXXXX")
ta_on_exit "ibsim_stop; rm -rf '$work'"
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }
walk() { timeout 120 env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" "$@"; }

# 1. Two-level 2:1 fat tree: 4 leaves x 8 hosts, 2 spines, 4 uplinks per leaf.
"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 8 --spines 2 --uplinks 4 --net "$work/ft.net" \
  --json "$work/expected.json" || exit 99
ibsim_start "$work/ft.net" "$work/sim" || exit 99
walk "$bin" discover --quiet --json "$work/live.json" -f summary >"$work/live.summary" 2>"$work/live.err"
rc=$?
[ $rc -eq 0 ] && cmp -s "$work/live.json" "$work/expected.json" && ok "live JSON equals the generator's JSON" ||
  {
    bad "live JSON differs from expected (rc $rc)"; cat "$work/live.err"
    diff <(head -40 "$work/expected.json") <(head -40 "$work/live.json") | head -20
  }
walk ibnetdiscover >"$work/ft.dump" 2>/dev/null
"$bin" discover --ibnetdiscover "$work/ft.dump" --json "$work/dump.json" -f summary >/dev/null
cmp -s "$work/dump.json" "$work/live.json" && ok "JSON of real ibnetdiscover output equals the live JSON" ||
  bad "ibnetdiscover dump JSON differs"
grep -q "Anomalies: none" "$work/live.summary" && ok "no anomalies on the healthy fabric" ||
  bad "anomalies on a healthy fabric: $(grep -A3 Anomalies "$work/live.summary")"

# 2. Take one leaf-spine cable down: the summary names the leaf's missing uplink.
uplink=$(awk '/^Switch.*"leaf001"/{f=1;next} f&&/^\[/&&/spine/{print $1; exit}' "$work/ft.dump" | tr -d '[]')
node=$(awk '/"leaf001"/&&/^Switch/{print $3; exit}' "$work/ft.dump")
[ -n "$uplink" ] && [ -n "$node" ] || { bad "could not find leaf001's uplink in the dump"; }
ibsim_console "Unlink $node[$uplink]"
walk "$bin" discover --quiet -f summary >"$work/cut.summary" 2>&1
grep -q "missing-uplink\] leaf001" "$work/cut.summary" && ok "cable down: leaf001's missing uplink reported" ||
  { bad "cable down not reported"; cat "$work/cut.summary"; }
ibsim_console "ReLink $node[$uplink]"

# libibnetdisc's cache in a folder any user may write to: written (and read back by --cache as the
# same fabric), never through a link planted at its path, and nothing left in $TMPDIR.
mkdir -m 1777 "$work/pub"
mkdir "$work/tmp"
TMPDIR="$work/tmp" walk "$bin" discover --quiet --save-cache "$work/pub/ft.cache" --json "$work/cache-live.json" \
  2>"$work/cache.err"
[ -z "$(ls -A "$work/tmp")" ] && ok "--save-cache leaves nothing in \$TMPDIR" || bad "left in \$TMPDIR: $(ls -A "$work/tmp")"
"$bin" discover --quiet --cache "$work/pub/ft.cache" --json "$work/cached.json" 2>>"$work/cache.err" &&
  cmp -s "$work/cached.json" "$work/cache-live.json" && ok "--save-cache: the cache reads back as the same fabric" ||
  { bad "--save-cache round trip"; cat "$work/cache.err"; }
printf 'keep me\n' >"$work/victim"
ln -s "$work/victim" "$work/pub/link.cache"
walk "$bin" discover --quiet --save-cache "$work/pub/link.cache" --json "$work/cache-live.json" 2>"$work/cache.err"
rc=$?
[ $rc -ne 0 ] && [ "$(cat "$work/victim")" = "keep me" ] && [ -L "$work/pub/link.cache" ] &&
  grep -q "link.cache: not replaced: it is a symbolic link" "$work/cache.err" &&
  ok "--save-cache refuses a symbolic link at its path" || { bad "--save-cache over a link: rc $rc"; cat "$work/cache.err"; }

# 3. Lost management packets: exit 3, what was missed is listed, the good file stays.
cp "$work/live.json" "$work/keep.json"
leaf2=$(awk '/"leaf002"/&&/^Switch/{print $3; exit}' "$work/ft.dump")
ibsim_console "Error $leaf2 50"
walk "$bin" discover --quiet --retries 1 --json "$work/keep.json" >"$work/err.out" 2>"$work/err.err"
rc=$?
[ $rc -eq 3 ] && grep -q "incomplete" "$work/err.err" && ok "lost MADs: exit 3 with the problems listed" ||
  { bad "lost MADs: rc $rc"; cat "$work/err.err"; }
cmp -s "$work/keep.json" "$work/live.json" && ok "the good topology.json was not replaced" ||
  bad "a partial walk replaced the file"
walk "$bin" discover --quiet --retries 0 --allow-partial --json "$work/partial.json" >/dev/null 2>&1
grep -q partial-walk "$work/partial.json" && ok "--allow-partial writes it, marked partial" || bad "--allow-partial"
ibsim_console "Clear"
ibsim_stop

# 4. Rail-optimized, one subnet per rail: walk each rail from its own HCA, merge the dumps.
"$bin" generate rail --rails 2 --units 2 --hosts-per-unit 4 --spines-per-rail 1 --uplinks 4 --net "$work/rail.net" \
  --json "$work/rail.json" || exit 99
ibsim_start "$work/rail.net" "$work/simrail" || exit 99
dumps=()
for r in 0 1; do
  py="import json,sys; print('H-' + json.load(open(sys.argv[1]))['hosts'][0]['ports'][int(sys.argv[2])]['ca_guid'][2:])"
  ca=$(python3 -c "$py" "$work/rail.json" $r)
  SIM_HOST=$ca walk ibnetdiscover >"$work/rail.$r" 2>/dev/null
  dumps+=(--ibnetdiscover "$work/rail.$r")
done
"$bin" discover "${dumps[@]}" --json "$work/rail-merged.json" -f summary >"$work/rail.summary"
cmp -s "$work/rail-merged.json" "$work/rail.json" && ok "rails walked one by one merge into the expected JSON" ||
  { bad "merged rails differ"; head -20 "$work/rail.summary"; }
grep -q "Rail-optimized: yes" "$work/rail.summary" && ok "merged fabric is rail-optimized" ||
  bad "rail-optimized not recognised"
echo "$fails failure(s)"
[ "$fails" -eq 0 ]
