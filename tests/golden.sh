#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden files: the outputs of every recorded fabric and node, byte for byte.
#
# For each InfiniBand dump tests/fixtures/ib/<dump> (*.ibnetdiscover, *.ibnetdiscover-p; a
# <base>.node-name-map beside <base>.ibnetdiscover* is passed with --node-name-map),
#   topoaware discover --ibnetdiscover <dump> --json/--tree/--block ... -f summary
# must give tests/golden/ib/<dump>.topology.json, .tree.conf, .block.conf and .summary (and
# <dump>.stderr if it printed anything on stderr); a dump the command refuses has
# tests/golden/ib/<dump>.error instead: "exit N" and what it printed on stderr.
# For each recorded node tests/fixtures/hwloc/<name>.xml, tests/golden_node_pairs must print
# tests/golden/hwloc/<name>.pairs (the GPUs, their NICs and the NICs found by node/hwloc_probe).
#
# Every output is regenerated into a temp folder and compared with `diff -u`. A fixture without
# its golden files fails, and so does a golden file without its fixture (or one the fixture no
# longer gives, e.g. an .error for a dump that now converts).
# TOPOAWARE_REGEN_GOLDEN=yes (`make regen-golden`) writes the golden files instead, removing the
# ones no fixture gives any more; review the diff (git diff tests/golden) before committing it.
set -u
. "$top_srcdir/tests/lib/common.sh"
export LC_ALL=C

bin="$top_builddir/topoaware"
pairs="$top_builddir/tests/golden_node_pairs"
fixtures="$top_srcdir/tests/fixtures"
golden="$top_srcdir/tests/golden"
regen=no
case ${TOPOAWARE_REGEN_GOLDEN:-no} in
  yes|1|true) regen=yes ;;
esac

ta_require_cmd diff diffutils
[ -x "$bin" ] || ta_fail "$bin not built (make topoaware)"
[ -x "$pairs" ] || ta_fail "$pairs not built (make tests/golden_node_pairs)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out="$tmp/golden"
mkdir -p "$out/ib" "$out/hwloc"
problems=0
problem() { echo "FAIL: $*"; problems=$((problems + 1)); }

# --- InfiniBand dumps ---
# Run from the fixture folder with relative names, so that messages and outputs name the dump
# alone, not where the source tree happens to be.
ndumps=0
for path in "$fixtures"/ib/*.ibnetdiscover "$fixtures"/ib/*.ibnetdiscover-p; do
  [ -f "$path" ] || continue
  dump=${path##*/}
  ndumps=$((ndumps + 1))
  base=${dump%.ibnetdiscover*}
  args=(discover --ibnetdiscover "$dump")
  [ -f "$fixtures/ib/$base.node-name-map" ] && args+=(--node-name-map "$base.node-name-map")
  run="$tmp/run/$dump"
  mkdir -p "$run"
  (cd "$fixtures/ib" && "$bin" "${args[@]}" --json "$run/topology.json" --tree "$run/tree.conf" \
    --block "$run/block.conf" -f summary -o "$run/summary") >"$run/stdout" 2>"$run/stderr"
  rc=$?
  if [ "$rc" -eq 0 ]; then
    for kind in topology.json summary tree.conf block.conf; do
      if [ -f "$run/$kind" ]; then
        cp "$run/$kind" "$out/ib/$dump.$kind"
      else
        problem "ib/$dump: topoaware ${args[*]} succeeded but wrote no $kind"
      fi
    done
    [ -s "$run/stdout" ] && problem "ib/$dump: topoaware printed on stdout although -o was given"
    [ -s "$run/stderr" ] && cp "$run/stderr" "$out/ib/$dump.stderr"
  else
    { echo "exit $rc"; cat "$run/stderr"; } >"$out/ib/$dump.error"
  fi
done
[ "$ndumps" -gt 0 ] || problem "no InfiniBand dumps in $fixtures/ib"

# --- hwloc nodes ---
nnodes=0
for path in "$fixtures"/hwloc/*.xml; do
  [ -f "$path" ] || continue
  name=${path##*/}
  name=${name%.xml}
  nnodes=$((nnodes + 1))
  if ! "$pairs" "$path" >"$out/hwloc/$name.pairs" 2>"$tmp/pairs.err"; then
    problem "hwloc/$name: golden_node_pairs failed: $(cat "$tmp/pairs.err")"
    rm -f "$out/hwloc/$name.pairs"
  fi
done
[ "$nnodes" -gt 0 ] || problem "no hwloc recordings in $fixtures/hwloc"

# --- compare (or write) ---
# Everything under tests/golden must be ib/<file> or hwloc/<file>.
if [ -d "$golden" ]; then
  while IFS= read -r -d '' entry; do
    rel=${entry#"$golden"/}
    case $rel in
      ib|hwloc) ;;
      ib/*/*|hwloc/*/*) problem "tests/golden/$rel: unexpected (no subfolders in ib/ and hwloc/)" ;;
      ib/*|hwloc/*) [ -f "$entry" ] || problem "tests/golden/$rel: not a regular file" ;;
      *) problem "tests/golden/$rel: unexpected (golden files go in ib/ or hwloc/)" ;;
    esac
  done < <(find "$golden" -mindepth 1 -print0 | sort -z)
fi

if [ "$regen" = yes ]; then
  [ "$problems" -eq 0 ] || ta_fail "$problems problem(s) above; golden files not written"
  mkdir -p "$golden/ib" "$golden/hwloc"
  written=0 removed=0
  for dir in ib hwloc; do
    for f in "$out/$dir"/*; do
      [ -f "$f" ] || continue
      rel="$dir/${f##*/}"
      if ! cmp -s "$f" "$golden/$rel"; then
        cp "$f" "$golden/$rel" || ta_fail "cannot write $golden/$rel"
        echo "wrote tests/golden/$rel"
        written=$((written + 1))
      fi
    done
    for f in "$golden/$dir"/*; do
      [ -f "$f" ] || continue
      rel="$dir/${f##*/}"
      if [ ! -f "$out/$rel" ]; then
        rm -f "$f" && echo "removed tests/golden/$rel (no fixture gives it)"
        removed=$((removed + 1))
      fi
    done
  done
  msg="golden files of $ndumps dump(s) and $nnodes node(s) regenerated in $golden:"
  msg+=" $written written, $removed removed (review: git diff tests/golden)"
  ta_pass "$msg"
  exit 0
fi

compared=0
for dir in ib hwloc; do
  for f in "$out/$dir"/*; do
    [ -f "$f" ] || continue
    rel="$dir/${f##*/}"
    compared=$((compared + 1))
    if [ ! -f "$golden/$rel" ]; then
      problem "tests/golden/$rel is missing (every fixture needs its golden files: make regen-golden, then review)"
    elif ! diff -u --label "tests/golden/$rel" --label "generated" "$golden/$rel" "$f" >"$tmp/diff"; then
      problem "tests/golden/$rel differs from the output:"
      cat "$tmp/diff"
    else
      echo "ok: $rel"
    fi
  done
  for f in "$golden/$dir"/*; do
    [ -f "$f" ] || continue
    rel="$dir/${f##*/}"
    [ -f "$out/$rel" ] && continue
    case $dir/${f##*/} in
      ib/*) fixture=${f##*/}; fixture=${fixture%.*}; fixture=${fixture%.topology}; fixture=${fixture%.tree}
            fixture=${fixture%.block}; fixture="ib/$fixture" ;;
      hwloc/*) fixture=${f##*/}; fixture="hwloc/${fixture%.pairs}.xml" ;;
    esac
    if [ -f "$fixtures/$fixture" ]; then
      problem "tests/golden/$rel: tests/fixtures/$fixture no longer gives this file (stale: make regen-golden)"
    else
      problem "tests/golden/$rel has no fixture (tests/fixtures/$fixture is missing)"
    fi
  done
done

[ "$problems" -eq 0 ] ||
  {
    msg="$problems golden file problem(s) over $ndumps dump(s) and $nnodes node(s)"
    msg+=" (after an intended change: make regen-golden, then review git diff tests/golden)"
    ta_fail "$msg"
  }
ta_pass "$compared golden files of $ndumps dump(s) and $nnodes node(s) match"
