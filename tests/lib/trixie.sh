# SPDX-License-Identifier: GPL-2.0-or-later
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
    # ccache: builds in the root reuse their objects across source changes (trixie_topoaware_build);
    # python3: the cluster tests run inside the root (tools/trixie-tests.sh) read JSON with it.
    echo ccache python3 | tr ' ' '\n'
  } | grep -v '^$' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# Whether every package of the list WANT is among those the root's marker records (the marker keeps
# the union of all lists installed, so checkouts that want fewer packages do not install again).
_trixie_build_has() {
  local have p
  have=" $(cat "$TRIXIE_ROOT/$TRIXIE_BUILD_MARK" 2>/dev/null) "
  for p in $1; do [[ $have == *" $p "* ]] || return 1; done
}

trixie_build_prepare() {
  local srcdir=$1 want rc=0
  trixie_root_prepare || return $?
  [ -r "$srcdir/debian/control" ] || { TRIXIE_WHY="no $srcdir/debian/control"; return 1; }
  want=$(trixie_build_packages "$srcdir/debian/control")
  ! _trixie_build_has "$want" || return 0
  exec 8>"$TRIXIE_ROOT.lock"
  flock 8
  if ! _trixie_build_has "$want"; then
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
  echo "$(cat "$TRIXIE_ROOT/$TRIXIE_BUILD_MARK" 2>/dev/null) $want" | tr ' ' '\n' | grep -v '^$' | sort -u |
    tr '\n' ' ' | sed 's/ $//' >"$TRIXIE_ROOT/$TRIXIE_BUILD_MARK.tmp"
  mv "$TRIXIE_ROOT/$TRIXIE_BUILD_MARK.tmp" "$TRIXIE_ROOT/$TRIXIE_BUILD_MARK"
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

# ---------------------------------------------------------------- commands in a private view of the root
# trixie_ns_run [--bind SRC[=DST]]... [--overlay SRC[=DST]]... -- CMD...: run CMD inside the root, in a
# mount namespace of its own: a writable overlay of $TRIXIE_ROOT whose upper layer is in memory (the
# shared root is never written), /proc, and this machine's /tmp at /tmp (test clusters reserve their
# ports under /tmp/topoaware-ports as on the host, and temp folders have the same path inside and out).
# Each --bind SRC appears at DST (default: the same path), read-write; each --overlay SRC too, but its
# writes stay in memory (a cached build tree that tests run in is left as it was). Every mount belongs to
# the namespace, and the kernel drops them with its last process, however the caller ends: nothing to
# unmount, nothing left behind, and concurrent runs do not see each other's mounts. CMD's status.
_TRIXIE_NS_SCRIPT='
set -eu
root=$1 scratch=$2; shift 2
binds=() overlays=()
while [ "$1" != -- ]; do
  case $1 in --bind) binds+=("$2") ;; --overlay) overlays+=("$2") ;; esac
  shift 2
done
shift
mount -t tmpfs -o mode=0755 topoaware-ns "$scratch"
mkdir "$scratch/upper" "$scratch/work" "$scratch/root"
r=$scratch/root
mount -t overlay overlay -o "lowerdir=$root,upperdir=$scratch/upper,workdir=$scratch/work" "$r"
mount --bind /proc "$r/proc"
mount --bind /tmp "$r/tmp"
for spec in ${binds[@]+"${binds[@]}"}; do
  src=${spec%%=*} dst=${spec#*=}
  mkdir -p "$r$dst"
  mount --bind "$src" "$r$dst"
done
i=0
for spec in ${overlays[@]+"${overlays[@]}"}; do
  src=${spec%%=*} dst=${spec#*=} i=$((i + 1))
  mkdir -p "$scratch/o$i/upper" "$scratch/o$i/work" "$r$dst"
  mount -t overlay overlay -o "lowerdir=$src,upperdir=$scratch/o$i/upper,workdir=$scratch/o$i/work" "$r$dst"
done
chroot "$r" "$@"
'
trixie_ns_run() {
  local args=() scratch rc=0
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
      --bind|--overlay)
        [[ $2 == *=* ]] && args+=("$1" "$2") || args+=("$1" "$2=$2")
        shift 2 ;;
      *) echo "trixie_ns_run: unknown option '$1'" >&2; return 2 ;;
    esac
  done
  [ "${1:-}" = -- ] || { echo "trixie_ns_run: no -- before the command" >&2; return 2; }
  shift
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/ta-trixie-ns.XXXXXX")
  unshare --mount --propagation private bash -c "$_TRIXIE_NS_SCRIPT" trixie-ns "$TRIXIE_ROOT" "$scratch" \
    ${args[@]+"${args[@]}"} -- "$@" || rc=$?
  # Its mounts were in the namespace only: here it is an empty folder (a process CMD left running
  # keeps them there; the folder goes from this side all the same).
  rmdir "$scratch" 2>/dev/null || true
  return "$rc"
}

# ---------------------------------------------------------------- one build of topoaware in the root
# trixie_topoaware_build SRCDIR BUILDDIR: this checkout's Debian packages and their build tree for the
# root's Slurm, built once per source hash and shared by every test that needs them (tests/deb_trixie.sh
# installs the packages; tools/trixie-tests.sh runs the cluster tests in the build tree). The sources
# are `make distdir` of the configured BUILDDIR (as a release tarball holds them); their hash, with the
# root's and the Slurm tree's markers, names the cache folder $TOPOAWARE_CACHE/trixie-builds/HASH,
# seen as /build inside the root (trixie_ns_run --bind "$TRIXIE_TA_BUILD=/build"): the packages in
# /build, the sources in /build/topoaware, dpkg-buildpackage's automake build tree in
# /build/topoaware/debian/build (configured with the plugins for the root's Slurm). Compiled through
# ccache ($TOPOAWARE_CACHE/ccache-trixie), so that a changed source rebuilds only what changed. The
# newest 3 builds are kept. Calls trixie_build_prepare and trixie_slurm_source_prepare first; returns
# as they do (2 = skip, TRIXIE_WHY). Sets TRIXIE_TA_BUILD, TRIXIE_TA_HASH, TRIXIE_TA_SECONDS (0 when cached).
TRIXIE_TA_BUILD="" TRIXIE_TA_HASH="" TRIXIE_TA_SECONDS=0
trixie_topoaware_build() {
  local srcdir=$1 builddir=$2 base tmp dir rc=0 t0=$SECONDS
  TRIXIE_TA_SECONDS=0
  trixie_build_prepare "$srcdir" || return $?
  trixie_slurm_source_prepare "$srcdir" || return $?
  base=$TOPOAWARE_CACHE/trixie-builds
  mkdir -p "$base" "$TOPOAWARE_CACHE/ccache-trixie"
  tmp=$(mktemp -d "$base/tmp.XXXXXX")
  if ! make -C "$builddir" --no-print-directory distdir distdir="$tmp/topoaware" >"$tmp/distdir.log" 2>&1; then
    tail -n 20 "$tmp/distdir.log" >&2
    rm -rf "$tmp"
    TRIXIE_WHY="make distdir in $builddir failed"
    return 1
  fi
  TRIXIE_TA_HASH=$({ (cd "$tmp/topoaware" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
                     cat "$TRIXIE_ROOT/.topoaware-ready" "$TRIXIE_ROOT$TRIXIE_SLURM_SRC/.topoaware-configured"
                   } | sha256sum | cut -c1-16)
  dir=$base/$TRIXIE_TA_HASH
  TRIXIE_TA_BUILD=$dir
  exec 7>"$dir.lock"
  flock 7
  if [ ! -f "$dir/.topoaware-built" ]; then
    _trixie_topoaware_build_in "$tmp/topoaware" "$dir" || rc=$?
    [ "$rc" -ne 0 ] || TRIXIE_TA_SECONDS=$((SECONDS - t0))
  fi
  [ "$rc" -ne 0 ] || touch "$dir/.topoaware-built"
  flock -u 7
  exec 7>&-
  rm -rf "$tmp"
  [ "$rc" -eq 0 ] || return "$rc"
  _trixie_topoaware_prune "$base"
}

# Called under the hash's lock.
_trixie_topoaware_build_in() {
  local src=$1 dir=$2 log=$2.log ccache=$TOPOAWARE_CACHE/ccache-trixie
  echo "# building topoaware in the $TRIXIE_SUITE root for Slurm $(trixie_slurm_version) (dpkg-buildpackage," \
    "once per source; log $log)"
  rm -rf "$dir"
  mkdir -p "$dir"
  mv "$src" "$dir/topoaware"
  # /usr/lib/ccache first in PATH: configure finds ccache's gcc and g++ there (Debian's way). The
  # build is always at /build/topoaware, so objects of one source tree serve the next.
  if ! trixie_ns_run --bind "$dir=/build" --bind "$ccache" -- \
       /usr/bin/env -i PATH=/usr/lib/ccache:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
       CCACHE_DIR="$ccache" CCACHE_MAXSIZE=2G TOPOAWARE_SLURM_SOURCE="$TRIXIE_SLURM_SRC" \
       DEB_BUILD_OPTIONS="nocheck parallel=${TOPOAWARE_JOBS:-2}" \
       sh -c 'cd /build/topoaware && dpkg-buildpackage -b -us -uc && ccache -s' >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    TRIXIE_WHY="dpkg-buildpackage inside the $TRIXIE_SUITE root failed (log $log)"
    rm -rf "$dir"
    return 1
  fi
}

# Keep the newest 3 builds (by last use); a build another run holds is left alone.
_trixie_topoaware_prune() {
  local base=$1 d
  for d in $(ls -dt "$base"/*/.topoaware-built 2>/dev/null | tail -n +4); do
    d=$(dirname "$d")
    exec 7>"$d.lock"
    if flock -n 7; then rm -rf "$d" "$d.log"; rm -f "$d.lock"; fi
    exec 7>&-
  done
}
