# SPDX-License-Identifier: GPL-2.0-or-later
# Build an upstream Slurm release from its source tarball into a cached prefix, once per machine, for
# localhost test clusters of releases that no reachable Debian archive carries with its source.
# Sourced, not run (tools/build-slurm.sh runs it; tests/lib/slurm_release.sh uses it).
#
#   . tools/lib/slurm_build.sh
#   slurm_build_prepare 26.05.3 || echo "$SLURM_BUILD_WHY"   # 0 ready, 2 cannot here (skip), 1 failed
#   "$SLURM_BUILD_PREFIX/sbin/slurmctld" ...                   # /var/cache/topoaware/slurm-26.05.3
#   ../configure --with-slurm-source="$SLURM_BUILD_TREE"       # .../slurm-src/26.05.3/slurm-26.05.3
#
# The tarball slurm-<version>.tar.xz is looked for in $TOPOAWARE_SLURM_TARBALLS (folders, colon-separated),
# then /work/shared/slurm-src, then ../shared/slurm-src beside the checkout; its sha256 must be the one
# tools/slurm-releases.txt records. The source tree is configured and built in place and kept: the
# topoaware plugins are compiled against it, so it must carry the very options the binaries were built
# with. Only what a localhost cluster runs is built (see _slurm_build_dirs): about a third of Slurm.
# The tree is the one tools/slurm-matrix.sh uses (same folder, same lock, same .topoaware-unpacked and
# .topoaware-configured markers): whichever comes first, the matrix reuses a tree built here, and a tree
# the matrix configured with default options is unpacked and configured again here.
# Concurrent callers build once (flock on $TOPOAWARE_CACHE/slurm-src/<version>/.lock); a prefix counts
# as ready only once its .topoaware-ready marker names the current build signature (options and parts),
# so changing them here rebuilds. Log: $TOPOAWARE_CACHE/slurm-<version>.build.log.

: "${TOPOAWARE_CACHE:=/var/cache/topoaware}"
SLURM_BUILD_WHY="" SLURM_BUILD_PREFIX="" SLURM_BUILD_TREE="" SLURM_BUILD_TARBALL="" SLURM_BUILD_SECONDS=""
_SLURM_BUILD_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# configure options. --enable-multiple-slurmd: many slurmd on one host (slurmd -N). -O0: a third of
# the compile time of Slurm's default -O1 -ggdb3 (measured on read_config.c), and test clusters do not
# need speed; -g keeps backtraces readable. Everything a localhost cluster does not load is left out,
# so that no optional library present on one machine and absent on another changes the tree.
_slurm_build_options() {
  local prefix=$1
  printf '%s\n' --prefix="$prefix" --sysconfdir="$prefix/etc" --enable-multiple-slurmd \
    --disable-debug --disable-static --disable-dependency-tracking --disable-slurmrestd --disable-sview \
    --disable-x11 --disable-pam --without-hdf5 --without-pmix --without-ucx --without-nvml --without-rsmi \
    --without-oneapi --without-freeipmi --without-rdkafka --without-s2n --without-bpf \
    --without-hpe-slingshot --without-jwt --without-lua --with-yaml --with-json \
    --without-libcurl --without-libhttp-parser --without-llhttp-parser 'CFLAGS=-O0 -g'
}

# The parts of src/ built and installed, in build order: the libraries, the daemons, the commands the
# tests use, and the plugins a localhost cluster loads (auth/cred none, cons_tres, backfill, the
# topology plugins, proctrack/pgid, gres/gpu with gpu/generic, the default hash, tls, prep and priority
# plugins; mpi/pmi2 because 26.05's daemons load every MPI plugin and stop when none loads, even with
# MpiDefault=none; url_parser, which they load at start; certgen/script, without which every command
# of 26.05 stops with "failed to initialize certgen plugin", even with tls/none; compress/none, without
# which slurmd stops: "Unable to locate valid compression plugin"). Folders a release does not have are skipped.
# serializer/yaml, serializer/json and data_parser/v0.0.45 (the one 26.05 parses its own files with):
# from 25.05 slurmctld reads topology.yaml through them, and loading any data_parser stops the daemon
# without serializer/json ("serializer_required: could not find plugin for application/json"); so
# --with-yaml and --with-json (tools/setup.sh installs libyaml-dev and libjson-c-dev).
# Not built: slurmdbd, slurmrestd, sacct and the accounting tools, cgroup and task plugins, the older
# data_parser plugins, and http_parser on purpose: with it, 26.05's slurmctld opens
# an HTTP listener that needs serializer/json (json-c) and stops without it ("serializer_required:
# could not find plugin for application/json"); without it every daemon logs one harmless
# "cannot create http_parser context" error (tests that grep logs for errors must allow it).
_slurm_build_dirs() {
  local p=src/plugins
  printf '%s\n' src/common src/interfaces src/conmgr src/api src/stepmgr src/slurmctld src/slurmd \
    src/srun src/sbatch src/salloc src/squeue src/scontrol src/sinfo src/scancel \
    $p/auth/common $p/auth/none $p/cred/common $p/cred/none $p/hash/common_xkcp $p/hash/k12 $p/tls/none \
    $p/select/cons_tres $p/sched/backfill $p/sched/builtin $p/priority/basic $p/priority/multifactor \
    $p/topology $p/proctrack/pgid $p/gres/common $p/gres/gpu $p/gpu/common $p/gpu/generic \
    $p/prep/script $p/mpi/pmi2 $p/url_parser $p/certgen $p/certmgr $p/compress \
    $p/serializer/yaml $p/serializer/json $p/data_parser/v0.0.45
}

# Folders to look for tarballs in, one a line.
_slurm_build_tarball_dirs() {
  local d
  if [ -n "${TOPOAWARE_SLURM_TARBALLS:-}" ]; then
    local IFS=:
    for d in $TOPOAWARE_SLURM_TARBALLS; do echo "$d"; done
  fi
  echo /work/shared/slurm-src
  echo "$_SLURM_BUILD_TOP/../shared/slurm-src"
}

# The sha256 tools/slurm-releases.txt records for slurm-VERSION.tar.xz, empty if none.
slurm_build_recorded_sha256() {
  awk -v v="$1" '$1 == v && length($3) == 64 { print $3 }' "$_SLURM_BUILD_TOP/tools/slurm-releases.txt"
}

# slurm_build_paths VERSION: sets SLURM_BUILD_PREFIX and SLURM_BUILD_TREE.
slurm_build_paths() {
  SLURM_BUILD_PREFIX=$TOPOAWARE_CACHE/slurm-$1
  SLURM_BUILD_TREE=$TOPOAWARE_CACHE/slurm-src/$1/slurm-$1
}

# What the ready marker must name: the tarball's sum, the options and the parts.
_slurm_build_signature() {
  local v=$1
  { slurm_build_recorded_sha256 "$v"; _slurm_build_options "$TOPOAWARE_CACHE/slurm-$v"; _slurm_build_dirs; } |
    sha256sum | cut -c1-16
}

slurm_build_ready() {
  local v=$1
  slurm_build_paths "$v"
  [ -f "$SLURM_BUILD_PREFIX/.topoaware-ready" ] && [ -x "$SLURM_BUILD_PREFIX/sbin/slurmctld" ] &&
    [ -x "$SLURM_BUILD_PREFIX/sbin/slurmd" ] && [ -x "$SLURM_BUILD_PREFIX/sbin/slurmstepd" ] &&
    [ -x "$SLURM_BUILD_PREFIX/bin/srun" ] && [ -f "$SLURM_BUILD_TREE/.topoaware-configured" ] &&
    grep -qx "signature=$(_slurm_build_signature "$v")" "$SLURM_BUILD_PREFIX/.topoaware-ready" &&
    cmp -s "$SLURM_BUILD_PREFIX/.topoaware-ready" "$SLURM_BUILD_TREE/.topoaware-built"
}

# slurm_build_find_tarball VERSION: sets SLURM_BUILD_TARBALL (0), or SLURM_BUILD_WHY (1).
slurm_build_find_tarball() {
  local v=$1 d
  SLURM_BUILD_TARBALL=""
  while read -r d; do
    if [ -r "$d/slurm-$v.tar.xz" ]; then
      SLURM_BUILD_TARBALL=$(cd "$d" && pwd)/slurm-$v.tar.xz
      return 0
    fi
  done < <(_slurm_build_tarball_dirs)
  SLURM_BUILD_WHY="no slurm-$v.tar.xz in \$TOPOAWARE_SLURM_TARBALLS, /work/shared/slurm-src or ../shared/slurm-src"
  return 1
}

# slurm_build_prepare VERSION: make the prefix ready (build it once). Returns 0 when ready; 2 when it
# cannot be built on this machine (no tarball, no write access to the cache, missing libmunge-dev):
# SLURM_BUILD_WHY says why and tests skip; 1 on a real failure (bad checksum, build error).
slurm_build_prepare() {
  local v=$1 rc=0
  SLURM_BUILD_WHY=""
  slurm_build_ready "$v" && return 0
  if ! mkdir -p "$TOPOAWARE_CACHE" 2>/dev/null || [ ! -w "$TOPOAWARE_CACHE" ]; then
    SLURM_BUILD_WHY="cannot write $TOPOAWARE_CACHE to build Slurm $v (run as root or set TOPOAWARE_CACHE)"
    return 2
  fi
  slurm_build_find_tarball "$v" || return 2
  # configure stops without munge's header even though the clusters run with auth/none.
  if [ ! -r /usr/include/munge.h ]; then
    SLURM_BUILD_WHY="building Slurm $v needs libmunge-dev (tools/setup.sh installs it)"
    return 2
  fi
  local t
  for t in gcc make xz; do
    command -v "$t" >/dev/null || { SLURM_BUILD_WHY="building Slurm $v needs $t"; return 2; }
  done
  mkdir -p "$(dirname "$SLURM_BUILD_TREE")"
  exec 9>"$(dirname "$SLURM_BUILD_TREE")/.lock"
  flock 9
  # Another process may have built it while this one waited for the lock.
  if ! slurm_build_ready "$v"; then _slurm_build "$v" || rc=$?; fi
  flock -u 9
  exec 9>&-
  return "$rc"
}

_slurm_build() {
  local v=$1 want have log start d opts=() t0
  log=$TOPOAWARE_CACHE/slurm-$v.build.log
  slurm_build_paths "$v"
  want=$(slurm_build_recorded_sha256 "$v")
  if [ -z "$want" ]; then
    SLURM_BUILD_WHY="no sha256 recorded for slurm-$v.tar.xz in tools/slurm-releases.txt"
    return 1
  fi
  have=$(sha256sum "$SLURM_BUILD_TARBALL" | cut -d' ' -f1)
  if [ "$have" != "$want" ]; then
    SLURM_BUILD_WHY="$SLURM_BUILD_TARBALL: sha256 $have, tools/slurm-releases.txt records $want"
    return 1
  fi
  echo "# building Slurm $v into $SLURM_BUILD_PREFIX (once per machine, a few minutes; log $log)"
  start=$SECONDS
  : >"$log"
  _slurm_build_log() { echo "### $(date -u +%FT%TZ) +$((SECONDS - start))s $*" >>"$log"; }
  # Both are rebuilt from scratch: a half-built tree or prefix (a killed build) must not survive. The
  # tree's folder stays: it holds the lock.
  rm -rf "$SLURM_BUILD_PREFIX" "$SLURM_BUILD_TREE"
  _slurm_build_log "tar xf $SLURM_BUILD_TARBALL"
  if ! tar -C "$(dirname "$SLURM_BUILD_TREE")" -xf "$SLURM_BUILD_TARBALL" >>"$log" 2>&1 ||
     [ ! -x "$SLURM_BUILD_TREE/configure" ]; then
    SLURM_BUILD_WHY="unpacking $SLURM_BUILD_TARBALL gave no $SLURM_BUILD_TREE/configure (see $log)"
    return 1
  fi
  mapfile -t opts < <(_slurm_build_options "$SLURM_BUILD_PREFIX")
  _slurm_build_log "configure ${opts[*]}"
  if ! (cd "$SLURM_BUILD_TREE" && ./configure "${opts[@]}") >>"$log" 2>&1; then
    SLURM_BUILD_WHY="configure of Slurm $v failed (see $log)"
    tail -n 20 "$log" >&2
    return 1
  fi
  # The markers tools/slurm-matrix.sh looks for (tools/setup.sh writes the second for Debian's tree).
  echo "$want" >"$SLURM_BUILD_TREE/.topoaware-unpacked"
  echo "$v" >"$SLURM_BUILD_TREE/.topoaware-configured"
  local jobs=${TOPOAWARE_JOBS:-2}
  while read -r d; do
    [ -f "$SLURM_BUILD_TREE/$d/Makefile" ] || { _slurm_build_log "skip $d (not in this release)"; continue; }
    t0=$SECONDS
    _slurm_build_log "make -j$jobs -C $d"
    if ! make -j"$jobs" -C "$SLURM_BUILD_TREE/$d" >>"$log" 2>&1 ||
       ! make -C "$SLURM_BUILD_TREE/$d" install >>"$log" 2>&1; then
      SLURM_BUILD_WHY="building $d of Slurm $v failed (see $log)"
      tail -n 20 "$log" >&2
      return 1
    fi
    _slurm_build_log "done $d in $((SECONDS - t0))s"
  done < <(_slurm_build_dirs)
  SLURM_BUILD_SECONDS=$((SECONDS - start))
  {
    echo "version=$v"
    echo "signature=$(_slurm_build_signature "$v")"
    echo "tarball=$SLURM_BUILD_TARBALL"
    echo "sha256=$want"
    echo "built=$(date -u +%FT%TZ)"
    echo "seconds=$SLURM_BUILD_SECONDS"
  } >"$SLURM_BUILD_PREFIX/.topoaware-ready"
  # The same marker in the tree: a tree unpacked or configured again since (tools/slurm-matrix.sh with
  # its default options) no longer matches the binaries, and the next prepare builds both again.
  cp "$SLURM_BUILD_PREFIX/.topoaware-ready" "$SLURM_BUILD_TREE/.topoaware-built"
  _slurm_build_log "ready in ${SLURM_BUILD_SECONDS}s"
  echo "# Slurm $v ready in $SLURM_BUILD_PREFIX (${SLURM_BUILD_SECONDS} s)"
}
