#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fresh-machine check: set up, build and test topoaware inside a new debootstrap Debian 12 root
# that has nothing but what tools/setup.sh installs, so that a package missing from setup.sh's list
# fails here even when this machine has it installed by hand.
#
#   bash tools/fresh-root.sh [--keep]
#
# Steps: a bare `debootstrap --variant=minbase bookworm` root (cached as a tarball of the bare root
# only, never with packages installed: $TOPOAWARE_CACHE/roots/bookworm-minbase.tar); a fresh copy of
# it; apt sources copied from this machine's Debian entry; the working tree copied in; inside it
# `bash tools/setup.sh --no-demo` (packages, Slurm source, build) and `make check` without the
# tests that start daemons (TOPOAWARE_DAEMON_TESTS=no: those run on this machine). The root is
# removed afterwards (--keep leaves it for a look, and says where). Needs root and Debian's mirror.
#
# Environment: TOPOAWARE_CACHE (default /var/cache/topoaware), TOPOAWARE_LOGDIR (logs of each step),
# TOPOAWARE_JOBS (parallel make jobs in the root, default 2).
set -euo pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${TOPOAWARE_CACHE:=/var/cache/topoaware}"
: "${TOPOAWARE_LOGDIR:=${TOPOAWARE_BUILD:-$TOPDIR/_build}/logs}"
export TOPOAWARE_LOGDIR
# shellcheck source=tools/lib/common.sh
. "$TOPDIR/tools/lib/common.sh"
# shellcheck source=tools/lib/debian.sh
. "$TOPDIR/tools/lib/debian.sh"

keep=no
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=yes ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ta_die "unknown argument '$1' (try --help)" ;;
  esac
  shift
done

[ "$(id -u)" -eq 0 ] || ta_die "the fresh-root check needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || ta_die "debootstrap is not installed (tools/setup.sh installs it)"

SUITE=bookworm
BARE="$TOPOAWARE_CACHE/roots/$SUITE-minbase.tar"

# The bare root, made once under a lock (concurrent checks share it) and kept as a tarball.
bare_root() {
  mkdir -p "$(dirname "$BARE")"
  exec 9>"$BARE.lock"
  flock 9
  if [ ! -s "$BARE" ]; then
    local tmp mirror
    tmp=$(mktemp -d "$TOPOAWARE_CACHE/roots/bare.XXXXXX")
    mirror=$(ta_debian_mirror)
    ta_step fresh-root-debootstrap "fresh root: debootstrap --variant=minbase $SUITE from $mirror (once, cached)" \
      debootstrap --variant=minbase "$SUITE" "$tmp" "$mirror"
    tar -C "$tmp" -cf "$BARE.tmp" . && mv "$BARE.tmp" "$BARE"
    rm -rf "$tmp"
  fi
  flock -u 9
  exec 9>&-
}

ROOT=""
cleanup() {
  [ -n "$ROOT" ] || return 0
  if mountpoint -q "$ROOT/proc" 2>/dev/null; then umount "$ROOT/proc" || umount -l "$ROOT/proc"; fi
  if [ "$keep" = yes ]; then
    ta_say "fresh root kept in $ROOT (remove it with: rm -rf $ROOT)"
  else
    rm -rf "$ROOT"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rm -f "$TOPOAWARE_LOGDIR/fresh-root-skips.txt"
bare_root
ROOT=$(mktemp -d "$TOPOAWARE_CACHE/roots/fresh.XXXXXX")
ta_say "fresh root: $ROOT (from $BARE)"
tar -C "$ROOT" -xf "$BARE"
# mktemp made the folder 0700 (and the tarball keeps that mode for "."): a root whose / other users
# cannot enter breaks every package script that runs as a service user (munge's postinst).
chmod 755 "$ROOT"

# Apt sources as on this machine (a fresh Debian 12 install has the same Debian entries); other
# vendors' entries are not copied: the project must need none of them.
rm -f "$ROOT/etc/apt/sources.list"
if [ -r /etc/apt/sources.list.d/debian.sources ]; then
  cp /etc/apt/sources.list.d/debian.sources "$ROOT/etc/apt/sources.list.d/debian.sources"
else
  grep -E '^[[:space:]]*deb[[:space:]].*debian' /etc/apt/sources.list >"$ROOT/etc/apt/sources.list" ||
    echo "deb $(ta_debian_mirror) $SUITE main" >"$ROOT/etc/apt/sources.list"
fi
cp /etc/hosts "$ROOT/etc/hosts"
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
# Packages must not start their services (slurmctld, slurmd) in the root, nor on this machine.
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod +x "$ROOT/usr/sbin/policy-rc.d"
mount --bind /proc "$ROOT/proc"

# The working tree as it is (tracked and new files, not ignored ones such as _build).
mkdir -p "$ROOT/src/topoaware"
if git -C "$TOPDIR" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$TOPDIR" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
     tar --null -T - -cf -) | tar -C "$ROOT/src/topoaware" -xf -
else
  tar -C "$TOPDIR" --exclude=./_build -cf - . | tar -C "$ROOT/src/topoaware" -xf -
fi

in_root() {
  chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive TOPOAWARE_JOBS="$(ta_jobs)" CI="${CI:-}" "$@"
}

# setup.sh prints its own progress; its logs stay inside the root (shown on failure by setup.sh).
ta_say "fresh root: bash tools/setup.sh --no-demo (only the packages it names)"
in_root bash /src/topoaware/tools/setup.sh --no-demo 2>&1 | sed 's/^/    /'
ta_step fresh-root-check \
  "fresh root: make check (TOPOAWARE_DAEMON_TESTS=no; log $TOPOAWARE_LOGDIR/fresh-root-check.log)" \
  in_root make -C /src/topoaware/_build -j"$(ta_jobs)" check TOPOAWARE_DAEMON_TESTS=no VERBOSE=1
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$TOPOAWARE_LOGDIR/fresh-root-check.log" |
  sed 's/^/    fresh root: /'
# Each skipped test with its reason (the daemon tests skip here by design: they run on the host),
# also kept for tools/run-tests.sh's summary.
skips="$TOPOAWARE_LOGDIR/fresh-root-skips.txt"
: >"$skips"
for log in "$ROOT"/src/topoaware/_build/tests/*.log; do
  [ -f "${log%.log}.trs" ] && grep -q '^:test-result: SKIP' "${log%.log}.trs" || continue
  printf 'tests/%s: %s\n' "$(basename "${log%.log}")" "$(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: //')" >>"$skips"
done
sed 's/^/    fresh root: skipped /' "$skips"
ta_say "fresh root: passed"
