#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live discovery through libibnetdisc against a simulated fabric (ibsim + umad2sim):
#  1. walk_fabric() gives exactly what the text parser reads from real ibnetdiscover output of
#     the same fabric (GUIDs, descriptions, ports, width, speed incl. FDR10/2x/8x/12x);
#  2. lost MADs (ibsim "Error") are reported as problems, precisely where they happen, and the
#     walk exits non-zero; a link taken down (ibsim "Unlink") is simply absent, no problem;
#  3. the libibnetdisc cache: saved, then loaded with ibsim stopped, gives the same fabric; a
#     partial walk never replaces a good cache;
#  4. progress reports and the error for a walk that cannot start.
# Needs root and ibsim-utils, libumad2sim0, infiniband-diags; exits 77 (skipped) otherwise.
set -u

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok - $*"; }

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
UMAD2SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
NET=$top_srcdir/tests/fixtures/ibsim/walk-2leaf.net
WALK=$top_builddir/tests/walk_dump

# Starts ibsim: a daemon test (root, not inside make distcheck, not with TOPOAWARE_DAEMON_TESTS=no).
. "$top_srcdir/tests/lib/common.sh"
ta_require_daemon_tests
[ "$(id -u)" = 0 ] || skip "needs root (ibsim and umad2sim simulate /dev/infiniband/umad*)"
command -v ibsim >/dev/null || skip "ibsim not installed (apt-get install ibsim-utils)"
[ -r "$UMAD2SIM" ] || skip "$UMAD2SIM missing (apt-get install libumad2sim0)"
command -v ibnetdiscover >/dev/null || skip "ibnetdiscover not installed (apt-get install infiniband-diags)"
[ -x "$WALK" ] || fail "$WALK not built (make check builds it)"
[ -r "$NET" ] || fail "$NET missing"

work=$(mktemp -d /tmp/test_walk_live.XXXXXX) || fail "mktemp"
cd "$work" || fail "cd $work"
# A socket name of our own: other tests (or people) may run their own ibsim at the same time, and
# umad2sim would otherwise talk to whichever ibsim owns the default name.
export IBSIM_SOCKNAME=tawalk$$
SIM_PID=
stop_sim() {
  exec 3>&- 2>/dev/null
  if [ -n "$SIM_PID" ]; then
    kill "$SIM_PID" 2>/dev/null
    wait "$SIM_PID" 2>/dev/null
  fi
  SIM_PID=
}
cleanup() { stop_sim; cd /; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

start_sim() {
  rm -f ctl sim.log
  mkfifo ctl || fail "mkfifo"
  # The console reads the FIFO; fd 3 keeps it open for writing for the life of the test (opening
  # it blocks until ibsim opens the other end, so ibsim is started first).
  ibsim -s "$NET" <ctl >sim.log 2>&1 &
  SIM_PID=$!
  exec 3>ctl
  for _ in $(seq 100); do
    grep -q "Network simulator ready" sim.log 2>/dev/null && return 0
    kill -0 "$SIM_PID" 2>/dev/null || break
    sleep 0.1
  done
  cat sim.log
  fail "ibsim did not start"
}
# ibsim handles console commands between MADs; give it a moment before the next walk.
sim_cmd() { echo "$*" >&3; sleep 0.5; }
# umad2sim blocks forever when no ibsim answers: bound every walk.
live() { timeout 120 env LD_PRELOAD="$UMAD2SIM" "$@"; }

start_sim

# ---------------------------------------------------------------- 1. walk == ibnetdiscover
live "$WALK" >base.txt 2>base.err
rc=$?
[ $rc = 0 ] || { cat base.err base.txt; fail "clean walk exited $rc"; }
[ "$(grep -c '^node .* Switch ' base.txt)" = 4 ] || fail "expected 4 switches: $(cat base.txt)"
[ "$(grep -c '^node .* Ca ' base.txt)" = 8 ] || fail "expected 8 CAs: $(cat base.txt)"
! grep -q '^problem' base.txt || fail "problems in a clean walk"
grep -q '^node 0x[0-9a-f]* Ca 1 "n01 mlx5_0"$' base.txt || fail "host description not kept"
guid_of() { awk -v d="\"$1\"" '$1 == "node" && $5 " " $6 == d || $1 == "node" && $5 == d { print $2 }' base.txt; }
LEAF01=$(guid_of leaf01); LEAF02=$(guid_of leaf02); SPINE01=$(guid_of spine01); SPINE02=$(guid_of spine02)
N02=$(guid_of "n02 mlx5_0")
[ -n "$LEAF01" ] && [ -n "$LEAF02" ] && [ -n "$SPINE02" ] && [ -n "$N02" ] || fail "node GUIDs not found"
# Speeds and widths as set in the net file (both ends of each link).
grep -q "^port $LEAF01 2 - $N02 1 4x FDR10$" base.txt || fail "FDR10 not seen (IBND_CONFIG_MLX_EPI)"
grep -q "^port $N02 1 0x[0-9a-f]* $LEAF01 2 4x FDR10$" base.txt || fail "FDR10 not seen from the CA side"
for ws in "2x EDR" "1x QDR" "4x FDR" "8x HDR" "12x EDR" "4x HDR"; do
  grep -q " $ws\$" base.txt || fail "link $ws missing"
done
[ "$(grep -c "^port $LEAF01 3[34] - $SPINE01 " base.txt)" = 2 ] || fail "parallel cables leaf01-spine01"
ok "clean walk: 4 switches, 8 CAs, widths and speeds"

live ibnetdiscover >ibnetdiscover.txt 2>ibnetdiscover.err || fail "ibnetdiscover failed: $(cat ibnetdiscover.err)"
"$WALK" --parse ibnetdiscover.txt >parsed.txt 2>parse.err || fail "parsing ibnetdiscover output: $(cat parse.err)"
diff -u parsed.txt base.txt || fail "live walk differs from parse_ibnetdiscover(ibnetdiscover output)"
# Independent of our parser: the same GUIDs as ibnetdiscover prints.
sed -n 's/^\(Switch\|Ca\)\t[0-9]* "[HS]-\([0-9a-f]*\)".*/0x\2/p' ibnetdiscover.txt | sort >ibnd.guids
awk '$1 == "node" { print $2 }' base.txt | sort >walk.guids
diff ibnd.guids walk.guids || fail "GUIDs differ from ibnetdiscover's"
ok "live walk equals parsed ibnetdiscover output"

# ---------------------------------------------------------------- 4a. progress
live "$WALK" --progress >/dev/null 2>progress.err
grep -q '^progress: done [0-9.]* s, 4 switches, 8 CAs$' progress.err || fail "no final progress: $(cat progress.err)"
ok "progress reports the counts at the end"

# ---------------------------------------------------------------- 2. faults
# Every PortInfo of leaf02 lost: exactly one problem, port 0 of leaf02 (its other ports were never
# asked), and its hosts are missing.
sim_cmd 'Error "leaf02" 100 21'
live "$WALK" --retries 1 >pi.txt 2>pi.err
rc=$?
[ $rc = 1 ] || fail "lost PortInfo: exit $rc, expected 1"
[ "$(grep -c '^problem' pi.txt)" = 1 ] || fail "lost PortInfo: expected one problem: $(grep problem pi.txt)"
grep -q "^problem $LEAF02 0 .*PortInfo of port 0" pi.txt ||
  fail "lost PortInfo not reported on leaf02 port 0: $(grep problem pi.txt)"
sim_cmd 'Error "leaf02" 0'
ok "lost PortInfo of a switch: reported on that switch"

# NodeInfo of one host lost: the leaf port it hangs on is up but unanswered.
N05=$(guid_of "n05 mlx5_0")
sim_cmd 'Error "n05 mlx5_0" 100 17'
live "$WALK" --retries 1 >ni.txt 2>ni.err
rc=$?
[ $rc = 1 ] || fail "lost NodeInfo: exit $rc, expected 1"
[ "$(grep -c '^problem' ni.txt)" = 1 ] || fail "lost NodeInfo: expected one problem: $(grep problem ni.txt)"
grep -q "^problem $LEAF02 1 .*LinkUp.*did not answer" ni.txt ||
  fail "lost NodeInfo not reported on leaf02 port 1: $(grep problem ni.txt)"
! grep -q "^node $N05 " ni.txt || fail "n05 should be missing"
sim_cmd 'Error "n05 mlx5_0" 0'
ok "lost NodeInfo of a host: reported on the leaf port"

# Half of leaf02's MADs lost (a flaky fabric): partial, non-zero, problems listed; retries are
# bounded (the walk returns).
sim_cmd 'Error "leaf02" 50'
SECONDS=0
live "$WALK" --retries 2 >err50.txt 2>err50.err
rc=$?
[ $rc = 1 ] || fail "Error 50: exit $rc, expected 1 (partial walk)"
grep -q '^problem' err50.txt || fail "Error 50: no problems listed"
[ "$(grep -c '^node .* Ca ' err50.txt)" -lt 8 ] || fail "Error 50: all CAs found despite losses?"
[ $SECONDS -lt 60 ] || fail "Error 50: walk with retries took ${SECONDS}s"
live ibnetdiscover >err50.ibnd 2>/dev/null
echo "  (ibnetdiscover under the same losses found $(grep -c '^Ca' err50.ibnd) of 8 CAs;" \
  "walk_dump $(grep -c '^node .* Ca ' err50.txt))"
ok "Error 50: partial walk reported ($(grep -c '^problem' err50.txt) problems)"

# The cache of a partial walk never replaces a good one.
sim_cmd 'Error "leaf02" 0'
live "$WALK" --cache-save c.ibnd >/dev/null 2>&1 || fail "clean walk with --cache-save failed"
[ -s c.ibnd ] || fail "cache not written"
cp c.ibnd c.good
sim_cmd 'Error "leaf02" 50'
live "$WALK" --retries 0 --cache-save c.ibnd >/dev/null 2>&1
[ $? = 1 ] || fail "partial walk with --cache-save should exit 1"
cmp -s c.ibnd c.good || fail "partial walk replaced the good cache"
[ -s c.ibnd.partial ] || fail "partial walk's cache not kept as c.ibnd.partial"
"$WALK" --cache-load c.ibnd.partial >partial-cache.txt 2>&1
[ $? = 1 ] && grep -q '^problem' partial-cache.txt || fail "a partial cache must load as partial"
ls c.ibnd*.tmp.* >/dev/null 2>&1 && fail "temporary cache files left behind"
sim_cmd 'Error "leaf02" 0'
ok "partial walk keeps the good cache (writes c.ibnd.partial)"

# A link taken down is absent, and no problem is reported for it.
sim_cmd 'Unlink "leaf01"[35]'
live "$WALK" >unlink.txt 2>unlink.err
rc=$?
[ $rc = 0 ] || fail "Unlink: exit $rc, expected 0: $(grep problem unlink.txt)"
grep -v -e "^port $LEAF01 35 " -e "^port $SPINE02 1 " base.txt >expect-unlink.txt
diff -u expect-unlink.txt unlink.txt || fail "Unlink: the fabric should be the same minus leaf01[35]-spine02[1]"
sim_cmd 'ReLink "leaf01"[35]'
live "$WALK" >relink.txt 2>/dev/null || fail "ReLink walk failed"
diff -q base.txt relink.txt >/dev/null || fail "ReLink: fabric not restored"
ok "Unlink: link absent, no problem; ReLink restores it"

# ---------------------------------------------------------------- 3. cache with ibsim stopped
stop_sim
"$WALK" --cache-load c.ibnd >cached.txt 2>cached.err || fail "loading the cache: $(cat cached.err)"
# libibnetdisc's cache format (rdma-core 44) does not keep the Mellanox extended port info, so an
# FDR10 link reads back as QDR; everything else must be identical.
sed 's/ FDR10$/ QDR/' base.txt >expect-cached.txt
diff -u expect-cached.txt cached.txt || fail "cache differs from the live walk"
cp c.ibnd cn.0 && cp c.ibnd cn.1
"$WALK" --cache-load cn >cachedn.txt 2>&1 || fail "loading numbered caches cn.0, cn.1: $(cat cachedn.txt)"
diff -q expect-cached.txt cachedn.txt >/dev/null || fail "merging numbered caches of one subnet changed it"
"$WALK" --cache-load nosuch >/dev/null 2>nosuch.err
[ $? = 2 ] && grep -q 'nosuch' nosuch.err || fail "missing cache: message should name the file"
ok "cache saved live, loaded with ibsim stopped: same fabric"

# ---------------------------------------------------------------- 4b. no walk possible
"$WALK" --ca nosuchca0 --port 1 >/dev/null 2>noca.err
rc=$?
[ $rc = 2 ] && grep -q 'nosuchca0' noca.err || fail "walk from a missing CA: exit $rc, message: $(cat noca.err)"
ok "a walk that cannot start names the CA: $(tail -1 noca.err | cut -c1-120)..."
exit 0
