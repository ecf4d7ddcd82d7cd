#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the Slurm plugins against every Slurm release of tools/slurm-releases.txt (22.05.8, 23.11.11 ..
# 26.05.3) and check each build's symbols (make check-releases).
#
#   bash tools/slurm-matrix.sh [--libslurmfull] [RELEASE...]
#
# For each release: the source tree is unpacked into $TOPOAWARE_CACHE/slurm-src/<release>/ once (the
# tarball's sha256 checked against tools/slurm-releases.txt) and configured once (~20-60 s; needs
# libmunge-dev); 22.05.8 is the installed Slurm's Debian source that tools/setup.sh fetched. Then this
# checkout is configured against it in its own build folder ($TOPOAWARE_MATRIX_DIR/<release>), the
# three plugins are built (the core compiled once for all releases through ccache) and
# tests/slurm_select_symbols.sh and tests/test_plugin_symbols.sh run there: node_select_syms of that
# tree, and dlopen(RTLD_NOW) against that release's libslurmfull.so: the installed one for the
# installed release; for the others the tree's own when it was built (--libslurmfull builds it once,
# cached in the tree: 6-13 min per tree on a 2-core machine, too slow for every run), else an
# nm-level check: every undefined name of each plugin is defined by that tree (its objects, or the
# definitions in its C sources) or by a library the plugin links (tests/lib/slurm_defs.sh).
#
# Tarballs slurm-<release>.tar.xz are looked for in $TOPOAWARE_SLURM_TARBALLS, /work/shared/slurm-src,
# then ../shared/slurm-src next to this checkout; a release without one is SKIPPED with the reason.
# Exit status: 0 if every release that ran passed, 1 otherwise.
#
# Environment: TOPOAWARE_CACHE (default /var/cache/topoaware), TOPOAWARE_MATRIX_DIR (build folders;
# make check-releases gives <build>/releases, else $TOPOAWARE_CACHE/matrix), TOPOAWARE_SLURM_TARBALLS,
# TOPOAWARE_JOBS (make -j, default 2).
set -euo pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${TOPOAWARE_CACHE:=/var/cache/topoaware}"
: "${TOPOAWARE_MATRIX_DIR:=$TOPOAWARE_CACHE/matrix}"
: "${TOPOAWARE_JOBS:=2}"
LIST=$TOPDIR/tools/slurm-releases.txt

want_full=no
only=()
while [ $# -gt 0 ]; do
  case $1 in
    --libslurmfull) want_full=yes ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "slurm-matrix: unknown option '$1'" >&2; exit 2 ;;
    *) only+=("$1") ;;
  esac
  shift
done

say() { printf '%s\n' "$*"; }
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT
now() { date +%s; }
T0=$(now)

# ccache shares the core's objects between the release build folders: they differ only in the Slurm
# tree, which the core never sees. Without hashing the folder (-g puts it in the debug info), the
# same source compiled in another build folder is a hit.
CC_WRAP=()
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$TOPOAWARE_CACHE/ccache} CCACHE_NOHASHDIR=true CCACHE_BASEDIR=$TOPOAWARE_MATRIX_DIR
  mkdir -p "$CCACHE_DIR"
  CC_WRAP=(CC="ccache gcc" CXX="ccache g++")
else
  say "# ccache not found (tools/setup.sh installs it): every release compiles the core again"
fi

tarball_for() {
  local rel=$1 d
  for d in ${TOPOAWARE_SLURM_TARBALLS:-} /work/shared/slurm-src "$TOPDIR/../shared/slurm-src"; do
    [ -f "$d/slurm-$rel.tar.xz" ] && { echo "$d/slurm-$rel.tar.xz"; return 0; }
  done
  return 1
}

# The configured tree of release $1 (sha256 $2 or "debian") on stdout; a reason on stderr and status 1
# if it cannot be had, status 2 if preparing it failed.
prepare_tree() {
  local rel=$1 sum=$2 dir tree tb got t
  if [ "$sum" = debian ]; then
    for tree in "$TOPOAWARE_CACHE"/slurm-src/*/slurm*-"$rel"; do
      [ -f "$tree/config.h" ] && grep -qF "#define SLURM_VERSION_STRING \"$rel\"" "$tree/config.h" &&
        { echo "$tree"; return 0; }
    done
    echo "no configured Debian source of Slurm $rel in $TOPOAWARE_CACHE/slurm-src (run tools/setup.sh)" >&2
    return 1
  fi
  dir=$TOPOAWARE_CACHE/slurm-src/$rel tree=$TOPOAWARE_CACHE/slurm-src/$rel/slurm-$rel
  # Ready: no lock (another tool may hold it for long, e.g. while it builds the tree).
  if [ -f "$tree/.topoaware-unpacked" ] && [ -f "$tree/.topoaware-configured" ] && [ -r "$tree/config.h" ]; then
    echo "$tree"
    return 0
  fi
  mkdir -p "$dir"
  (
    flock 9 # other checkouts may prepare the same tree at the same time
    # A tree another tool unpacked there (and may be building in) is used as it is, never replaced.
    if [ ! -f "$tree/.topoaware-unpacked" ] && [ -x "$tree/configure" ]; then
      echo "adopted" >"$tree/.topoaware-unpacked"
    fi
    if [ ! -f "$tree/.topoaware-unpacked" ]; then
      tb=$(tarball_for "$rel") || { echo "no slurm-$rel.tar.xz in \$TOPOAWARE_SLURM_TARBALLS," \
        "/work/shared/slurm-src or ../shared/slurm-src" >&2; exit 1; }
      got=$(sha256sum "$tb" | awk '{print $1}')
      [ "$got" = "$sum" ] || { echo "$tb: sha256 $got, tools/slurm-releases.txt says $sum" >&2; exit 2; }
      rm -rf "$tree" "$dir/unpack.tmp" && mkdir "$dir/unpack.tmp"
      tar -C "$dir/unpack.tmp" -xJf "$tb" && mv "$dir/unpack.tmp/slurm-$rel" "$tree" && rm -rf "$dir/unpack.tmp"
      echo "$sum" >"$tree/.topoaware-unpacked"
    fi
    if [ ! -f "$tree/.topoaware-configured" ]; then
      t=$(now)
      (cd "$tree" && ./configure) >"$dir/configure.log" 2>&1 ||
        { echo "./configure of Slurm $rel failed (libmunge-dev installed?): see $dir/configure.log" >&2; exit 2; }
      echo "$rel" >"$tree/.topoaware-configured"
      echo "# Slurm $rel: ./configure of the tree took $(( $(now) - t )) s (once)" >&2
    fi
  ) 9>"$dir/.lock" || return $?
  echo "$tree"
}

# The tree's libslurmfull.so on stdout (built once, cached in the tree), or nothing.
tree_libslurmfull() {
  local rel=$1 tree=$2 t so=$2/src/api/.libs/libslurmfull.so
  if [ ! -f "$so" ] && [ "$want_full" = yes ]; then
    (
      flock 9
      [ -f "$so" ] && exit 0
      t=$(now)
      make -C "$tree/src/api" -j"$TOPOAWARE_JOBS" full_version.map libslurmfull.la \
        >"$TOPOAWARE_CACHE/slurm-src/$rel/libslurmfull.log" 2>&1 ||
        { echo "# Slurm $rel: building libslurmfull failed: see $TOPOAWARE_CACHE/slurm-src/$rel/libslurmfull.log" >&2
          exit 1; }
      echo "# Slurm $rel: libslurmfull.so built from the tree in $(( $(now) - t )) s (once)" >&2
    ) 9>"$TOPOAWARE_CACHE/slurm-src/$rel/.lock" || true
  fi
  [ -f "$so" ] && echo "$so"
  return 0
}

results=() failed=0
while read -r rel family sum; do
  case $rel in ''|'#'*) continue ;; esac
  if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qx "$rel"; then continue; fi
  t_rel=$(now)
  say "== Slurm $rel (adapter family $family)"
  rc=0; tree=$(prepare_tree "$rel" "$sum" 2>"$TMP") || rc=$?
  cat "$TMP"
  if [ $rc -eq 1 ]; then
    results+=("SKIP  $rel: $(tail -n1 "$TMP")"); continue
  elif [ $rc -ne 0 ]; then
    results+=("FAIL  $rel: $(tail -n1 "$TMP")"); failed=1; continue
  fi

  b=$TOPOAWARE_MATRIX_DIR/$rel
  mkdir -p "$b"
  # Configure once per tree and checkout (configure.ac changes are picked up by make itself). A
  # folder configured from another checkout or tree starts empty: its dependency files name that
  # checkout's sources, which may be gone (ccache keeps the rebuild cheap).
  if ! grep -qF -- "--with-slurm-source=$tree" "$b/config.status" 2>/dev/null ||
     ! grep -qF "$TOPDIR/configure" "$b/config.status" 2>/dev/null; then
    rm -rf "$b" && mkdir -p "$b"
    [ -x "$TOPDIR/configure" ] || (cd "$TOPDIR" && autoreconf -fi) >"$b/autoreconf.log" 2>&1
    t=$(now)
    if ! (cd "$b" && "$TOPDIR/configure" "${CC_WRAP[@]}" --with-slurm-source="$tree" --disable-daemon-tests \
          --with-pluginsdir="$b/plugindir") >"$b/configure.log" 2>&1; then
      results+=("FAIL  $rel: configure against $tree failed (see $b/configure.log)"); failed=1; continue
    fi
    say "# configure of topoaware: $(( $(now) - t )) s"
  fi
  grep -q "adapter family: $family" "$b/configure.log" ||
    { results+=("FAIL  $rel: configure did not choose adapter family $family ($b/configure.log)"); failed=1; continue; }

  t=$(now)
  if ! make -C "$b" -j"$TOPOAWARE_JOBS" plugins/select/select_cons_tres_topoaware.la \
       plugins/select/select_cons_tres_passthrough.la plugins/job_submit/job_submit_topoaware.la \
       plugins/spank/spank_topoaware.la tests/dlopen_plugin >"$b/build.log" 2>&1; then
    grep -E 'error|Error' "$b/build.log" | head -n 20
    results+=("FAIL  $rel: the plugins do not build (see $b/build.log)"); failed=1; continue
  fi
  t_build=$(( $(now) - t ))
  warnings=$(grep -c 'warning:' "$b/build.log" || true)

  installed=$(sed -n 's/^SLURM_INSTALLED_VERSION = //p' "$b/Makefile")
  env_full=()
  how="dlopen with the installed libslurmfull.so"
  if [ "$rel" != "$installed" ]; then
    full=$(tree_libslurmfull "$rel" "$tree")
    if [ -n "$full" ]; then
      env_full=(TOPOAWARE_SLURMFULL="$full")
      how="dlopen with libslurmfull.so built from the tree"
    else
      how="nm-level: no libslurmfull.so of $rel, undefined names looked up in the tree and linked libraries"
    fi
  fi
  t=$(now) ok=yes
  for test in slurm_select_symbols test_plugin_symbols; do
    out=$(cd "$b" && env top_srcdir="$TOPDIR" top_builddir="$b" "${env_full[@]}" \
          bash "$TOPDIR/tests/$test.sh" 2>&1) || { rc=$?; [ $rc -eq 77 ] || ok=no; }
    echo "$out" | sed "s/^/  [$test] /"
  done
  t_test=$(( $(now) - t ))
  line="$rel ($family): build ${t_build}s ($warnings warnings), symbol tests ${t_test}s, $how;"
  line+=" $(( $(now) - t_rel ))s in all"
  if [ $ok = yes ]; then results+=("PASS  $line"); else results+=("FAIL  $line"); failed=1; fi
done <"$LIST"

say ""
say "Slurm release matrix ($(( $(now) - T0 )) s):"
printf '  %s\n' "${results[@]}"
if command -v ccache >/dev/null; then ccache -s 2>/dev/null | grep -E 'Hits|Misses' | sed 's/^/  ccache: /' || true; fi
exit $failed
