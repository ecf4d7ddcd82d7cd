# SPDX-License-Identifier: GPL-2.0-or-later
# Start and stop a simulated InfiniBand fabric (ibsim) for the demo and the tests. Sourced, not run.
#
#   ibsim_start NETFILE [WORKDIR] [ibsim options...]   start ibsim on NETFILE; waits until it listens
#   ibsim_run CMD...                                   run CMD against it (umad2sim preloaded)
#   ibsim_console 'Unlink "leaf00"[33]'                send a console command (changes the fabric)
#   ibsim_stop                                         stop it (safe to call twice, or from a trap)
#
# Each simulator gets its own socket name (IBSIM_SOCKNAME, read by both ibsim and umad2sim), so several
# tests and engineers can run fabrics on one machine at once without talking to each other's ibsim.
# ibsim reads its console from standard input: that is a FIFO here, held open by a sleeper process, so
# ibsim never sees end-of-file and tests can write commands to it while it runs.
#
# After ibsim_start: IBSIM_PID, IBSIM_DIR (FIFO, log), IBSIM_LOG, IBSIM_SOCKNAME (exported).
# IBSIM_START_TIMEOUT: seconds ibsim_start waits for the simulator to listen (default 10; a fabric
# of thousands of nodes needs more).

: "${UMAD2SIM_LIB:=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}"
IBSIM_PID="" IBSIM_SLEEPER_PID="" IBSIM_DIR="" IBSIM_LOG="" IBSIM_OWN_DIR=""

ibsim_start() {
  local net=${1:?usage: ibsim_start NETFILE [WORKDIR] [ibsim options]}
  local dir=${2:-}
  [ $# -ge 2 ] && shift 2 || shift 1
  [ -r "$net" ] || { echo "ibsim_start: cannot read net file $net" >&2; return 1; }
  command -v ibsim >/dev/null || { echo "ibsim_start: ibsim not installed (package ibsim-utils)" >&2; return 1; }
  [ -r "$UMAD2SIM_LIB" ] || { echo "ibsim_start: $UMAD2SIM_LIB missing (package libumad2sim0)" >&2; return 1; }
  if [ -n "$IBSIM_PID" ]; then echo "ibsim_start: an ibsim (pid $IBSIM_PID) is already running" >&2; return 1; fi
  if [ -z "$dir" ]; then dir=$(mktemp -d "${TMPDIR:-/tmp}/ibsim.XXXXXX"); IBSIM_OWN_DIR=$dir; fi
  mkdir -p "$dir"
  IBSIM_DIR=$dir IBSIM_LOG=$dir/ibsim.log
  # Unique per start; abstract unix sockets "@<name>:ctl", "@<name>:outN" live in the network namespace.
  IBSIM_SOCKNAME="ta$$-${RANDOM}"
  export IBSIM_SOCKNAME
  # OpenSM keeps the LIDs it gave each port GUID in its cache folder (guid2lid, default
  # /var/cache/opensm) and gives them again. The simulated fabrics reuse the same GUIDs at every
  # size, so a shared cache would carry one fabric's LIDs into the next (a 16-host test fabric got
  # LIDs up to 128 after a 2,048-host run) and the simulator would write to the host's cache.
  OSM_CACHE_DIR=$dir/opensm-cache
  mkdir -p "$OSM_CACHE_DIR"
  export OSM_CACHE_DIR
  rm -f "$dir/console"
  mkfifo "$dir/console"
  # The sleeper holds the FIFO's write end open for ibsim's lifetime (opening a FIFO blocks until both
  # ends are open, so start the sleeper first, in the background).
  sleep 2147483647 >"$dir/console" &
  IBSIM_SLEEPER_PID=$!
  ibsim -s "$@" "$net" <"$dir/console" >"$IBSIM_LOG" 2>&1 &
  IBSIM_PID=$!
  # ibsim prints its console prompt "sim> " once its sockets are bound and it enters its main loop.
  # (Its abstract sockets "@<name>:ctl" are not always visible in /proc/net/unix inside containers.)
  local i limit=${IBSIM_START_TIMEOUT:-10}
  for i in $(seq 1 $((limit * 10))); do
    if grep -q '^sim> ' "$IBSIM_LOG" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$IBSIM_PID" 2>/dev/null; then
      echo "ibsim_start: ibsim exited while starting on $net; its log ($IBSIM_LOG):" >&2
      tail -n 20 "$IBSIM_LOG" >&2
      ibsim_stop
      return 1
    fi
    sleep 0.1
  done
  echo "ibsim_start: ibsim did not listen within $limit s on $net; its log ($IBSIM_LOG):" >&2
  tail -n 20 "$IBSIM_LOG" >&2
  ibsim_stop
  return 1
}

# Run a command (ibnetdiscover, topoaware discover, ...) against the running simulator.
ibsim_run() {
  [ -n "$IBSIM_PID" ] || { echo "ibsim_run: no ibsim running (call ibsim_start)" >&2; return 1; }
  LD_PRELOAD="$UMAD2SIM_LIB${LD_PRELOAD:+:$LD_PRELOAD}" IBSIM_SOCKNAME="$IBSIM_SOCKNAME" "$@"
}

# Send one console command; the effect is immediate for the next MADs.
ibsim_console() {
  [ -n "$IBSIM_PID" ] || { echo "ibsim_console: no ibsim running" >&2; return 1; }
  printf '%s\n' "$*" >"$IBSIM_DIR/console"
  # ibsim handles console lines between MADs; give it a moment so the caller's next walk sees it.
  sleep 0.2
}

ibsim_stop() {
  local p
  for p in $IBSIM_PID $IBSIM_SLEEPER_PID; do
    kill "$p" 2>/dev/null || true
  done
  for p in $IBSIM_PID $IBSIM_SLEEPER_PID; do
    wait "$p" 2>/dev/null || true
  done
  IBSIM_PID="" IBSIM_SLEEPER_PID=""
  if [ -n "$IBSIM_OWN_DIR" ]; then rm -rf "$IBSIM_OWN_DIR"; IBSIM_OWN_DIR=""; fi
  return 0
}
