# Slurm 24.11 (Debian trixie) in a debootstrap root, for what Slurm 22.05 cannot check (topology/block,
# BlockSizes, --segment). Sourced, not run. Needs root.
#
#   . "$top_srcdir/tests/lib/trixie.sh"
#   trixie_root_prepare || ta_skip "$TRIXIE_WHY"     # once per machine, cached (~30 s the first time)
#   trixie_cluster_start --nodes 8 --topology FILE --conf TopologyPlugin=topology/block ...
#   cluster_run scontrol show topology                  # runs inside the root
#   (trixie_cluster_stop runs from the EXIT trap: daemons stopped, then /proc unmounted)
#
# trixie_cluster_start takes cluster_start's options (tests/lib/slurm_cluster.sh); the cluster folder
# is inside the root, and cgroup.conf says CgroupPlugin=disabled (24.11's slurmd fails without a cgroup
# mount otherwise). The root is shared by all tests of the machine: its /proc bind mount is counted per
# user process and unmounted when the last one ends, so concurrent tests do not pull it from each other.
#
# TRIXIE_ROOT (default $TOPOAWARE_CACHE/trixie-root, TOPOAWARE_CACHE default /var/cache/topoaware).

# shellcheck source=tests/lib/slurm_cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurm_cluster.sh"
# shellcheck source=tools/lib/debian.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/lib/debian.sh"

: "${TOPOAWARE_CACHE:=/var/cache/topoaware}"
: "${TRIXIE_ROOT:=$TOPOAWARE_CACHE/trixie-root}"
TRIXIE_SUITE=trixie
TRIXIE_WHY=""
TRIXIE_PROC_HELD=""

_trixie_ready() {
  [ -f "$TRIXIE_ROOT/.topoaware-ready" ] && [ -x "$TRIXIE_ROOT/usr/sbin/slurmctld" ] &&
    [ -x "$TRIXIE_ROOT/usr/sbin/slurmd" ] && [ -x "$TRIXIE_ROOT/usr/bin/scontrol" ]
}

# The Slurm version installed in the root, e.g. 24.11.5.
trixie_slurm_version() {
  chroot "$TRIXIE_ROOT" dpkg-query -W -f='${Version}' slurmctld 2>/dev/null | sed 's/-[^-]*$//'
}

# Build the root once (debootstrap + Slurm packages), under a lock so that concurrent tests build it
# once. Returns 0 when ready; 2 (TRIXIE_WHY says why) when the mirror cannot be reached, so the test
# skips; 1 on any other failure.
trixie_root_prepare() {
  [ "$(id -u)" -eq 0 ] || { TRIXIE_WHY="building a debootstrap root needs root"; return 2; }
  _trixie_ready && return 0
  command -v debootstrap >/dev/null || { TRIXIE_WHY="debootstrap not installed (package debootstrap)"; return 2; }
  mkdir -p "$(dirname "$TRIXIE_ROOT")"
  local lock="$TRIXIE_ROOT.lock" rc=0
  exec 8>"$lock"
  flock 8
  if ! _trixie_ready; then _trixie_build || rc=$?; fi
  flock -u 8
  exec 8>&-
  return "$rc"
}

_trixie_build() {
  local tmp="$TRIXIE_ROOT.build" mirror log="$TRIXIE_ROOT.build.log"
  mirror=$(ta_debian_mirror)
  echo "# building the $TRIXIE_SUITE root $TRIXIE_ROOT from $mirror (once; log $log)"
  if mountpoint -q "$tmp/proc" 2>/dev/null; then umount "$tmp/proc"; fi
  rm -rf "$tmp"
  if ! debootstrap --variant=minbase "$TRIXIE_SUITE" "$tmp" "$mirror" >"$log" 2>&1; then
    # Tell "no network / no mirror" (skip) from a real failure (fail).
    net_re='Failed getting release file|Temporary failure resolving|Could not resolve|Connection (refused|timed out)'
    net_re+='|Network is unreachable|unable to fetch|Couldn.t download'
    if grep -qiE "$net_re" "$log"; then
      TRIXIE_WHY="debootstrap $TRIXIE_SUITE: mirror $mirror unreachable"
      TRIXIE_WHY+=" ($(grep -m1 -iE 'fail|resolv|unreach|download' "$log"))"
      rm -rf "$tmp"
      return 2
    fi
    echo "debootstrap $TRIXIE_SUITE failed; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    TRIXIE_WHY="debootstrap failed (see $log)"
    return 1
  fi
  cp /etc/hosts "$tmp/etc/hosts"           # else "localhost" does not resolve inside
  cp -L /etc/resolv.conf "$tmp/etc/resolv.conf" 2>/dev/null || true
  # Packages must not start their services in the root (nor on the host through it).
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
  chmod +x "$tmp/usr/sbin/policy-rc.d"
  mount --bind /proc "$tmp/proc"
  local ok=yes
  chroot "$tmp" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get -q update >>"$log" 2>&1 &&
    chroot "$tmp" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get -y -q install --no-install-recommends \
      slurmctld slurmd slurm-client >>"$log" 2>&1 || ok=no
  umount "$tmp/proc"
  if [ "$ok" != yes ]; then
    echo "installing Slurm in the $TRIXIE_SUITE root failed; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    TRIXIE_WHY="apt-get install slurmctld slurmd slurm-client in the root failed (see $log)"
    return 1
  fi
  chroot "$tmp" apt-get clean >/dev/null 2>&1 || true
  date -u +%FT%TZ >"$tmp/.topoaware-ready"
  rm -rf "$TRIXIE_ROOT"
  mv "$tmp" "$TRIXIE_ROOT"
  echo "# $TRIXIE_SUITE root ready: Slurm $(trixie_slurm_version)"
}

# /proc inside the root, shared: a list of user pids under the lock; mounted by the first, unmounted by
# the last (dead users are dropped, so a killed test does not pin it forever).
_trixie_proc_users() {
  local f="$TRIXIE_ROOT.proc-users" p
  [ -f "$f" ] || return 0
  while read -r p; do kill -0 "$p" 2>/dev/null && echo "$p"; done <"$f"
}

_trixie_proc_get() {
  local f="$TRIXIE_ROOT.proc-users" users
  exec 8>"$TRIXIE_ROOT.lock"; flock 8
  users=$(_trixie_proc_users)
  mountpoint -q "$TRIXIE_ROOT/proc" || mount --bind /proc "$TRIXIE_ROOT/proc"
  { [ -z "$users" ] || echo "$users"; echo $$; } >"$f"
  flock -u 8; exec 8>&-
  TRIXIE_PROC_HELD=yes
}

_trixie_proc_put() {
  [ -n "$TRIXIE_PROC_HELD" ] || return 0
  local f="$TRIXIE_ROOT.proc-users" users
  exec 8>"$TRIXIE_ROOT.lock"; flock 8
  users=$(_trixie_proc_users | grep -vx "$$" || true)
  if [ -z "$users" ]; then
    rm -f "$f"
    if mountpoint -q "$TRIXIE_ROOT/proc"; then umount "$TRIXIE_ROOT/proc" || umount -l "$TRIXIE_ROOT/proc"; fi
  else
    echo "$users" >"$f"
  fi
  flock -u 8; exec 8>&-
  TRIXIE_PROC_HELD=""
}

trixie_cluster_start() {
  _trixie_ready || { echo "trixie_cluster_start: call trixie_root_prepare first" >&2; return 1; }
  [ -n "$TRIXIE_PROC_HELD" ] || { _trixie_proc_get; ta_on_exit _trixie_proc_put; }
  # Registered after the /proc handler, so it runs before it: daemons stop, then /proc goes.
  cluster_start --chroot "$TRIXIE_ROOT" --cgroup-disabled "$@"
}

trixie_cluster_stop() {
  cluster_stop
  _trixie_proc_put
}
