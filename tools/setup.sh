#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Set up a Debian 12 machine for topoaware and build it: packages, the Slurm source tree of exactly the
# installed Slurm (needed by the select and job_submit plugins), an out-of-tree build, then the demo.
#
#   bash tools/setup.sh [--no-demo] [--no-build] [--build-dir DIR]
#
# Run as root on a fresh machine. Idempotent: a second run checks and does almost nothing. Quiet: one
# progress line per step; a failing step prints the tail of its log.
#
# Environment:
#   TOPOAWARE_CACHE  cache folder (default /var/cache/topoaware): Slurm source, trixie root, demo
#   (logs of each step go to <build folder>/logs)
#   TOPOAWARE_BUILD  build folder (default <source>/_build)
#   TOPOAWARE_JOBS   parallel make jobs (default 2)
set -euo pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=tools/lib/common.sh
. "$TOPDIR/tools/lib/common.sh"

: "${TOPOAWARE_CACHE:=/var/cache/topoaware}"
: "${TOPOAWARE_BUILD:=$TOPDIR/_build}"
# Logs go with the build folder: several checkouts may set up at once and must not mix their logs.
TOPOAWARE_LOGDIR="$TOPOAWARE_BUILD/logs"
export TOPOAWARE_CACHE TOPOAWARE_BUILD TOPOAWARE_LOGDIR

demo=yes build=yes
while [ $# -gt 0 ]; do
  case $1 in
    --no-demo) demo=no ;;
    --no-build) build=no; demo=no ;;
    --build-dir) TOPOAWARE_BUILD=$2; shift ;;
    --build-dir=*) TOPOAWARE_BUILD=${1#*=} ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ta_die "unknown argument '$1' (try --help)" ;;
  esac
  shift
done

# Every Debian package the project needs, by purpose. Keep in step with docs/admin-guide.md.
PKGS_BUILD="autoconf automake libtool pkg-config g++ make"
# libhwloc-plugins: hwloc's PCI backend (hwloc_pci.so); without it hwloc sees no GPU or NIC on a
# real node (libhwloc15 only recommends it). Compute nodes need it too: spank_topoaware(8).
PKGS_LIBS="libhwloc-dev hwloc libhwloc-plugins libibnetdisc-dev libibmad-dev libibumad-dev libibverbs-dev libcmocka-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libssl-dev libsimgrid-dev"
PKGS_TOOLS="graphviz ibsim-utils libumad2sim0 infiniband-diags opensm time python3 python3-yaml"
PKGS_SLURM="slurmctld slurmd slurm-client libslurm-dev"
# dpkg-dev: apt-get source; clang + libclang-rt-14-dev: the fuzz targets (libFuzzer, ASan and UBSan
# runtimes); llvm-14: llvm-symbolizer, so sanitizer reports name functions and lines (clang-14 only
# recommends it, and setup installs without recommends); debootstrap: the Slurm 24.11 test;
# ca-certificates and xz-utils: fetching and unpacking sources on minimal images; time: bench/.
# python3: a few integration tests read JSON with it; bench/netsim_report.py (standard library only).
# python3-yaml: tests/cli_topology_yaml.sh reads the written topology.yaml back with it.
# opensm: run once (opensm -o) against ibsim, it assigns the LIDs and routes that PMA counter queries
# need (tests/ibsim_counters.sh); never as a service.
# libmunge-dev: ./configure of the upstream Slurm trees stops without it (tools/slurm-matrix.sh,
# tools/build-slurm.sh), even though test clusters use auth/none; ccache: the release matrix compiles
# the core once for all releases. libyaml-dev: Slurm releases built by tools/build-slurm.sh get
# serializer/yaml only with it, and without that plugin slurmctld (25.05+) stops at start when a
# topology.yaml exists (tests/slurm_2605_topology_yaml.sh); libjson-c-dev: serializer/json, which
# the data_parser that reads topology.yaml needs.
# lintian: the package tests check the packages with it (tests/lib/deb_checks.sh).
# debhelper, build-essential: `make deb` (dpkg-buildpackage with dh, which brings dh-autoreconf;
# dpkg-buildpackage refuses to start without build-essential; no fakeroot: debian/control says
# Rules-Requires-Root: no).
PKGS_EXTRA="dpkg-dev clang libclang-rt-14-dev llvm-14 debootstrap ca-certificates xz-utils libmunge-dev libyaml-dev libjson-c-dev ccache
  debhelper build-essential lintian"
# shellcheck disable=SC2086
PKGS=$(echo $PKGS_BUILD $PKGS_LIBS $PKGS_TOOLS $PKGS_SLURM $PKGS_EXTRA)

missing_packages() {
  local p
  for p in $PKGS; do
    dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || printf '%s ' "$p"
  done
}

apt_noninteractive() {
  DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dpkg::Options::=--force-confdef \
    -o Dpkg::Options::=--force-confold "$@"
}

install_packages() {
  local missing
  missing=$(missing_packages)
  if [ -z "$missing" ]; then
    ta_say "packages: all $(echo "$PKGS" | wc -w) installed"
    return 0
  fi
  [ "$(id -u)" -eq 0 ] || ta_die "missing packages ($missing); run this as root to install them"
  ta_step apt-update "packages: apt-get update" apt-get -q update
  # shellcheck disable=SC2086
  ta_step apt-install "packages: installing $missing" apt_noninteractive install --no-install-recommends $missing
  missing=$(missing_packages)
  [ -z "$missing" ] || ta_die "packages still missing after apt-get install: $missing"
}

# ---------------------------------------------------------------- Slurm source of the installed version

# Debian version of the installed Slurm (source package slurm-wlm), e.g. 22.05.8-4+deb12u3.
slurm_deb_version() { dpkg-query -W -f='${source:Version}' slurmctld; }
# Version the installed public headers carry, as "22.05.8". slurm_version.h has only
# SLURM_VERSION_NUMBER (0x160508), no string, so decode the number.
slurm_header_version() {
  local n
  n=$(sed -n 's/^#define SLURM_VERSION_NUMBER \(0x[0-9a-fA-F]*\).*/\1/p' /usr/include/slurm/slurm_version.h 2>/dev/null)
  [ -n "$n" ] || return 0
  printf '%d.%02d.%d\n' $(( (n >> 16) & 0xff )) $(( (n >> 8) & 0xff )) $(( n & 0xff ))
}

SRC_LIST_DEB822=/etc/apt/sources.list.d/topoaware-deb-src.sources
SRC_LIST_ONELINE=/etc/apt/sources.list.d/topoaware-deb-src.list

have_deb_src() {
  grep -rqsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/
}

# Derive deb-src entries from the machine's own deb entries (same mirrors, suites, components and
# keys), so the source matches the binaries without guessing a mirror.
add_deb_src() {
  local f tmp
  tmp=$(mktemp)
  if [ -r /etc/apt/sources.list.d/debian.sources ]; then
    f=/etc/apt/sources.list.d/debian.sources
    # deb822: copy each stanza whose Types has "deb", with Types replaced by deb-src.
    awk 'BEGIN { RS = ""; ORS = "\n\n" }
         { keep = 0; out = ""
           n = split($0, lines, "\n")
           for (i = 1; i <= n; i++) {
             if (lines[i] ~ /^Types:/) {
               if (lines[i] ~ /[[:space:]]deb([[:space:]]|$)/) keep = 1; lines[i] = "Types: deb-src"
             }
             if (lines[i] ~ /^#/) continue
             out = out lines[i] "\n"
           }
           if (keep) printf "%s\n", out }' "$f" >"$tmp"
    [ -s "$tmp" ] || { rm -f "$tmp"; ta_die "no 'Types: deb' entry in $f to derive a deb-src entry from"; }
    { echo "# Added by topoaware tools/setup.sh: source packages from the same mirrors as $f"; cat "$tmp"; } \
      >"$SRC_LIST_DEB822"
  elif [ -r /etc/apt/sources.list ] && grep -qE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list; then
    f=/etc/apt/sources.list
    sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >"$tmp"
    { echo "# Added by topoaware tools/setup.sh: source packages from the same mirrors as $f"; cat "$tmp"; } \
      >"$SRC_LIST_ONELINE"
  else
    rm -f "$tmp"
    msg="found no Debian apt entry (/etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list)"
    msg+=" to derive deb-src from"
    ta_die "$msg"
  fi
  rm -f "$tmp"
}

# Sets SLURM_SRC_TREE to the configured source tree.
prepare_slurm_source() {
  local debver hdrver dir tree
  debver=$(slurm_deb_version)
  hdrver=$(slurm_header_version)
  [ -n "$debver" ] && [ -n "$hdrver" ] || ta_die "cannot tell the installed Slurm version (is libslurm-dev installed?)"
  # One folder per Debian version: an upgrade fetches the new source beside the old one.
  dir="$TOPOAWARE_CACHE/slurm-src/$debver"
  tree=$(find "$dir" -mindepth 1 -maxdepth 1 -type d -name 'slurm*' 2>/dev/null | head -n1 || true)
  if [ -n "$tree" ] && [ -f "$tree/.topoaware-configured" ] && [ -r "$tree/config.h" ] &&
     grep -qF "#define SLURM_VERSION_STRING \"$hdrver\"" "$tree/config.h"; then
    ta_say "Slurm source: $tree (configured, $hdrver)"
    SLURM_SRC_TREE=$tree
    return 0
  fi
  if [ -z "$tree" ]; then
    if ! have_deb_src; then
      [ "$(id -u)" -eq 0 ] || ta_die "no deb-src entry in apt's sources; run as root to add one"
      add_deb_src
      ta_say "Slurm source: added deb-src entries ($(ls $SRC_LIST_DEB822 $SRC_LIST_ONELINE 2>/dev/null))"
      ta_step apt-update-src "Slurm source: apt-get update (source indexes)" apt-get -q update
    fi
    mkdir -p "$dir"
    # apt-get source as root warns that it cannot drop to _apt; harmless, it only concerns the log.
    ta_step apt-source "Slurm source: apt-get source slurm-wlm=$debver" \
      sh -c 'cd "$1" && apt-get -q source "slurm-wlm=$2"' sh "$dir" "$debver"
    tree=$(find "$dir" -mindepth 1 -maxdepth 1 -type d -name 'slurm*' | head -n1)
    [ -n "$tree" ] || ta_die "apt-get source slurm-wlm=$debver left no source folder in $dir"
  fi
  # Only config.h is needed (no Slurm build): configure takes ~20 s on these machines.
  ta_step slurm-configure "Slurm source: ./configure in $tree" sh -c 'cd "$1" && ./configure' sh "$tree"
  grep -qF "#define SLURM_VERSION_STRING \"$hdrver\"" "$tree/config.h" ||
    ta_die "$tree/config.h is not Slurm $hdrver (the installed headers' version)"
  echo "$debver" >"$tree/.topoaware-configured"
  SLURM_SRC_TREE=$tree
}

# ---------------------------------------------------------------- build

build_project() {
  local slurm_src=$1 want have
  if [ ! -x "$TOPDIR/configure" ]; then
    ta_step autoreconf "build: autoreconf -fi" sh -c 'cd "$1" && autoreconf -fi' sh "$TOPDIR"
  fi
  mkdir -p "$TOPOAWARE_BUILD"
  want="--with-slurm-source=$slurm_src"
  # CI builds treat warnings as errors; an admin's build never does (a newer compiler's warning
  # must not stop it).
  [ "${CI:-}" != true ] || want="$want --enable-werror"
  have=""
  if [ -x "$TOPOAWARE_BUILD/config.status" ]; then
    have=$("$TOPOAWARE_BUILD/config.status" --config 2>/dev/null || true)
  fi
  # Reconfigure only when never configured, or configured with other arguments (another Slurm
  # tree after a Slurm upgrade, CI's -Werror). Changes to configure.ac or *.mk are picked up by
  # make's own rebuild rules. config.status --config prints each argument in single quotes.
  # shellcheck disable=SC2086
  if [ "$have" = "$(printf "'%s' " $want | sed 's/ $//')" ]; then
    ta_say "build: $TOPOAWARE_BUILD already configured"
  else
    # shellcheck disable=SC2086
    ta_step configure "build: configure in $TOPOAWARE_BUILD ($want)" \
      sh -c 'cd "$1" && shift 2 && "$0/configure" "$@"' "$TOPDIR" "$TOPOAWARE_BUILD" x $want
  fi
  ta_step make "build: make -j$(ta_jobs)" make -C "$TOPOAWARE_BUILD" -j"$(ta_jobs)"
}

main() {
  mkdir -p "$TOPOAWARE_CACHE" "$TOPOAWARE_LOGDIR"
  install_packages
  prepare_slurm_source
  if [ "$build" = yes ]; then
    build_project "$SLURM_SRC_TREE"
  fi
  if [ "$demo" = yes ]; then
    if [ -x "$TOPOAWARE_BUILD/topoaware" ]; then
      # shellcheck source=tools/demo.sh
      . "$TOPDIR/tools/demo.sh"
      run_demo "$TOPOAWARE_BUILD"
    else
      ta_warn "no $TOPOAWARE_BUILD/topoaware binary: demo skipped"
    fi
  fi
  ta_say "setup done (build folder $TOPOAWARE_BUILD, logs in $TOPOAWARE_LOGDIR)"
}

main
