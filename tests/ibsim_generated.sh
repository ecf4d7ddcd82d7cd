#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live check of the generators: each generated fabric is written as an ibsim net file, simulated by
# ibsim, walked by the real ibnetdiscover (libibumad/libibmad/libibnetdisc under libumad2sim), and
# the walk, parsed by our parser, must equal the generator's Fabric: same GUIDs, descriptions,
# port numbers, widths and speeds. Fabrics built as one subnet per rail are walked once per subnet
# (SIM_HOST picks the CA the local port attaches to) and merged by GUID.
# Needs root and ibsim-utils, libumad2sim0, infiniband-diags; exits 77 (skipped) without them.
set -u

skip() { echo "SKIP: $*"; exit 77; }
. "$top_srcdir/tests/lib/common.sh"
ta_require_daemon_tests  # root, not inside make distcheck
command -v ibsim >/dev/null || skip "ibsim not installed (apt-get install ibsim-utils)"
command -v ibnetdiscover >/dev/null || skip "ibnetdiscover not installed (apt-get install infiniband-diags)"
UMAD2SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
[ -f "$UMAD2SIM" ] || skip "$UMAD2SIM missing (apt-get install libumad2sim0)"
GEN=./tests/gen_fabric
[ -x "$GEN" ] || { echo "FAIL: $GEN not built (run from the build directory via make check)"; exit 1; }

work=$(mktemp -d /tmp/topoaware-ibsim.XXXXXX)
sim_pid=""
stop_sim() {
  if [ -n "$sim_pid" ]; then
    kill "$sim_pid" 2>/dev/null
    wait "$sim_pid" 2>/dev/null
    sim_pid=""
  fi
  if [ -n "${ctl_fd:-}" ]; then exec {ctl_fd}>&-; ctl_fd=""; fi
}
cleanup() { stop_sim; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# ibsim reads console commands from stdin and exits at EOF, so it gets a FIFO that this shell
# holds open for writing. A private socket name (IBSIM_SOCKNAME, read by ibsim and umad2sim)
# keeps this simulator apart from any other one running on the machine.
start_sim() {  # net-file extra-args...
  local net=$1; shift
  export IBSIM_SOCKNAME="tagen$$"
  rm -f "$work/ctl"; mkfifo "$work/ctl"
  exec {ctl_fd}<>"$work/ctl"
  ibsim "$@" -s "$net" <&"$ctl_fd" >"$work/ibsim.log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 1200); do  # a 10,000-host fabric takes ibsim several seconds to link
    grep -q 'Network simulator ready' "$work/ibsim.log" && return 0
    kill -0 "$sim_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL: ibsim did not start on $net:"; cat "$work/ibsim.log"
  return 1
}

failed=0
check() {  # spec
  local spec=$1 dir="$work/$1" args ap i=0 dumps=()
  mkdir -p "$dir"
  "$GEN" "$spec" net "$dir/net" || { echo "FAIL $spec: cannot write the net file"; failed=1; return; }
  args=$("$GEN" "$spec" ibsim-args)
  # shellcheck disable=SC2086  # args are separate options
  start_sim "$dir/net" $args || { failed=1; stop_sim; return; }
  local t0=$SECONDS
  for ap in $("$GEN" "$spec" attach); do
    if ! SIM_HOST="$ap" LD_PRELOAD="$UMAD2SIM" timeout 120 ibnetdiscover >"$dir/dump.$i" 2>"$dir/err.$i"; then
      echo "FAIL $spec: ibnetdiscover from $ap failed:"; cat "$dir/err.$i"; failed=1; stop_sim; return
    fi
    # ibnetdiscover names its starting node; a wrong attach point would walk the wrong subnet.
    if ! grep -q "^# Initiated from node ${ap#H-} " "$dir/dump.$i"; then
      echo "FAIL $spec: walk did not start at $ap:"; head -5 "$dir/dump.$i"; cat "$dir/err.$i"
      failed=1; stop_sim; return
    fi
    dumps+=("$dir/dump.$i"); i=$((i + 1))
  done
  # The comparison must be able to fail: take one leaf-spine cable down (port 9 of leaf001 is its
  # first uplink in ft2) and the next walk must differ exactly there.
  if [ "$spec" = ft2 ]; then
    echo 'Unlink "S-0002c90301000001"[9]' >&"$ctl_fd"
    sleep 0.5
    SIM_HOST="$ap" LD_PRELOAD="$UMAD2SIM" timeout 120 ibnetdiscover >"$dir/unlinked" 2>/dev/null
    if "$GEN" "$spec" compare "$dir/unlinked" >"$dir/unlinked.diff" ||
       ! grep -q 'leaf001) port 9: not connected' "$dir/unlinked.diff"; then
      echo "FAIL $spec: a walk after Unlink was not reported as different:"; cat "$dir/unlinked.diff"; failed=1
    fi
  fi
  stop_sim
  if out=$("$GEN" "$spec" compare "${dumps[@]}"); then
    echo "ok   $spec: $out; $i walk(s) in $((SECONDS - t0)) s"
  else
    echo "FAIL $spec: the live walk differs from the generated fabric:"; echo "$out"; failed=1
  fi
}

specs="ft2 ft2-2to1 ft3 ft3-1to7 rail2 dfly ft2-16x32 rail8"
# 10,240 hosts + 672 switches (ibsim -N/-S/-P raised): about a minute on 2 cores, so on request.
[ "${TOPOAWARE_LARGE:-0}" = 1 ] && specs="$specs ft3-10k"
for spec in $specs; do
  check "$spec"
done
exit $failed
