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

# ---------------------------------------------------------------- building topoaware inside the root
# A second stage on top of the ready root, for tests that build the Debian packages there
# (tests/deb_trixie.sh): the packages debian/control's Build-Depends name, with dpkg-dev and libmunge-dev
# (Slurm's configure stops without it), installed into the shared root under the same lock, and a
# configured Slurm source tree of the root's release. The first stage is never rebuilt for it, each part
# has its own marker, and a test builds and installs in an overlay of the root (trixie_overlay), so the
# shared root never holds a build of topoaware.
#
#   trixie_build_prepare "$top_srcdir" || ...      # 0 ready, 2 skip (TRIXIE_WHY), 1 failure
#   trixie_slurm_source_prepare "$top_srcdir" ...   # sets TRIXIE_SLURM_SRC (a path inside the root)

TRIXIE_BUILD_MARK=.topoaware-builddeps
TRIXIE_SLURM_SRC=""

# The packages to build with: Build-Depends of CONTROL by name (debhelper-compat is a virtual package
# that only debhelper provides, and apt will not install a virtual package by name).
trixie_build_packages() {
  local control=$1
  {
    sed -n '/^Build-Depends:/,/^[A-Za-z-]*:/p' "$control" | sed '1s/^Build-Depends://; /^[A-Za-z-]*:/d' |
      tr ',' '\n' | sed 's/[[:space:]]//g; s/(.*//; s/|.*//; s/^debhelper-compat$/debhelper/'
    # build-essential, dpkg-dev: dpkg-buildpackage (it checks for build-essential); libmunge-dev:
    # Slurm's configure; libhwloc-plugins: the plugins package depends on it (installed here, so
    # installing the package in an overlay needs no mirror).
    echo build-essential dpkg-dev libmunge-dev libhwloc-plugins | tr ' ' '\n'
  } | grep -v '^$' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

trixie_build_prepare() {
  local srcdir=$1 want rc=0
  trixie_root_prepare || return $?
  [ -r "$srcdir/debian/control" ] || { TRIXIE_WHY="no $srcdir/debian/control"; return 1; }
  want=$(trixie_build_packages "$srcdir/debian/control")
  [ "$(cat "$TRIXIE_ROOT/$TRIXIE_BUILD_MARK" 2>/dev/null)" != "$want" ] || return 0
  exec 8>"$TRIXIE_ROOT.lock"
  flock 8
  if [ "$(cat "$TRIXIE_ROOT/$TRIXIE_BUILD_MARK" 2>/dev/null)" != "$want" ]; then
    _trixie_build_deps_install "$want" || rc=$?
  fi
  flock -u 8
  exec 8>&-
  return "$rc"
}

# Called under the lock. Only adds packages: tests running in the root meanwhile are not disturbed.
_trixie_build_deps_install() {
  local want=$1 log="$TRIXIE_ROOT.builddeps.log" ok=yes mounted=no
  echo "# installing build dependencies into $TRIXIE_ROOT (once; log $log): $want"
  if ! mountpoint -q "$TRIXIE_ROOT/proc"; then mount --bind /proc "$TRIXIE_ROOT/proc"; mounted=yes; fi
  # shellcheck disable=SC2086
  { chroot "$TRIXIE_ROOT" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get -q update &&
    chroot "$TRIXIE_ROOT" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get -y -q install \
      --no-install-recommends $want; } >"$log" 2>&1 || ok=no
  # Unmounted only if mounted here: a cluster test holding it keeps it (_trixie_proc_get).
  if [ "$mounted" = yes ] && [ -z "$(_trixie_proc_users)" ]; then umount "$TRIXIE_ROOT/proc"; fi
  if [ "$ok" != yes ]; then
    local net_re='Temporary failure resolving|Could not resolve|Failed to fetch|Unable to fetch|unreachable'
    if grep -qiE "$net_re" "$log"; then
      TRIXIE_WHY="apt-get install in the $TRIXIE_SUITE root: mirror unreachable ($(grep -m1 -iE 'fail|resolv' "$log"))"
      return 2
    fi
    echo "installing build dependencies into the $TRIXIE_SUITE root failed; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    TRIXIE_WHY="apt-get install of the build dependencies in the root failed (see $log)"
    return 1
  fi
  chroot "$TRIXIE_ROOT" apt-get clean >/dev/null 2>&1 || true
  echo "$want" >"$TRIXIE_ROOT/$TRIXIE_BUILD_MARK"
}

# The upstream tarball of Slurm VERSION: $TOPOAWARE_SLURM_TARBALLS, then /work/shared/slurm-src, then
# ../shared/slurm-src beside the checkout SRCDIR. Prints its path; nothing if none has it.
trixie_slurm_tarball() {
  local version=$1 srcdir=$2 d
  for d in ${TOPOAWARE_SLURM_TARBALLS:-} /work/shared/slurm-src "$srcdir/../shared/slurm-src"; do
    if [ -r "$d/slurm-$version.tar.xz" ]; then echo "$d/slurm-$version.tar.xz"; return 0; fi
  done
}

# A configured Slurm source tree of the root's release, from the upstream tarball whose sha256 the
# checkout records (tools/slurm-releases.txt, as tools/slurm-matrix.sh), unpacked and configured once
# inside the root (/usr/src/topoaware/slurm-VERSION). Needs trixie_build_prepare first (libmunge-dev, a compiler).
# Sets TRIXIE_SLURM_SRC to the tree's path as seen inside the root. Returns 2 (TRIXIE_WHY) when no
# tarball of that release is to be found.
trixie_slurm_source_prepare() {
  local srcdir=$1 version tarball sum want tree rc=0
  version=$(trixie_slurm_version)
  [ -n "$version" ] || { TRIXIE_WHY="no Slurm in $TRIXIE_ROOT"; return 1; }
  tree=/usr/src/topoaware/slurm-$version
  TRIXIE_SLURM_SRC=$tree
  tarball=$(trixie_slurm_tarball "$version" "$srcdir")
  if [ -z "$tarball" ]; then
    TRIXIE_WHY="no slurm-$version.tar.xz in \$TOPOAWARE_SLURM_TARBALLS, /work/shared/slurm-src or"
    TRIXIE_WHY+=" $srcdir/../shared/slurm-src"
    return 2
  fi
  want=$(awk -v r="$version" '$1 == r { print $3 }' "$srcdir/tools/slurm-releases.txt")
  case $want in
    [0-9a-f]*) ;;
    *) TRIXIE_WHY="tools/slurm-releases.txt has no sha256 for Slurm $version"; return 1 ;;
  esac
  [ "$(cat "$TRIXIE_ROOT$tree/.topoaware-configured" 2>/dev/null)" != "$want" ] || return 0
  sum=$(sha256sum "$tarball" | cut -d' ' -f1)
  if [ "$sum" != "$want" ]; then
    TRIXIE_WHY="$tarball: sha256 $sum, recorded $want"
    return 1
  fi
  exec 8>"$TRIXIE_ROOT.lock"
  flock 8
  if [ "$(cat "$TRIXIE_ROOT$tree/.topoaware-configured" 2>/dev/null)" != "$want" ]; then
    _trixie_slurm_configure "$tarball" "$tree" "$want" || rc=$?
  fi
  flock -u 8
  exec 8>&-
  return "$rc"
}

_trixie_slurm_configure() {
  local tarball=$1 tree=$2 sum=$3 log="$TRIXIE_ROOT.slurm-configure.log"
  echo "# unpacking and configuring $(basename "$tarball") in $TRIXIE_ROOT$tree (once; log $log)"
  rm -rf "$TRIXIE_ROOT$tree.tmp" "$TRIXIE_ROOT$tree"
  mkdir -p "$TRIXIE_ROOT$tree.tmp"
  if ! tar -xJf "$tarball" -C "$TRIXIE_ROOT$tree.tmp" --strip-components=1 >"$log" 2>&1 ||
     ! chroot "$TRIXIE_ROOT" sh -c "cd '$tree.tmp' && ./configure" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    TRIXIE_WHY="unpacking or configuring $(basename "$tarball") in the root failed (see $log)"
    rm -rf "$TRIXIE_ROOT$tree.tmp"
    return 1
  fi
  # configure records its folder in the Makefiles; only config.h and the headers are used, and those
  # do not name it.
  mv "$TRIXIE_ROOT$tree.tmp" "$TRIXIE_ROOT$tree"
  echo "$sum" >"$TRIXIE_ROOT$tree/.topoaware-configured"
}

# trixie_overlay DIR: a writable overlay of the root at DIR/root (changes in DIR/upper), and
# TRIXIE_ROOT switched to it, so a test installs packages and runs its cluster there without touching
# the shared root. Unmounted at exit (after the cluster's handlers, which are registered later).
trixie_overlay() {
  local d=$1
  mkdir -p "$d/upper" "$d/work" "$d/root"
  mount -t overlay overlay -o "lowerdir=$TRIXIE_ROOT,upperdir=$d/upper,workdir=$d/work" "$d/root" ||
    { TRIXIE_WHY="cannot mount an overlay of $TRIXIE_ROOT"; return 1; }
  ta_on_exit "umount '$d/root' 2>/dev/null || umount -l '$d/root'"
  TRIXIE_ROOT=$d/root
}
