#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every long option that `topoaware <command> --help` lists is documented in topoaware(1), and
# every option the man page's own section of a command (PLAN, SHOW) documents exists in its --help.
set -u
bin="$top_builddir/topoaware"
man="$top_srcdir/man/topoaware.1"
rc=0
# Roff escapes "\-" for "-": undo them to compare.
doc=$(sed 's/\\-/-/g' "$man")
for cmd in discover convert generate plan show diff route metrics monitor node defrag; do
  help=$("$bin" "$cmd" --help 2>&1) || { echo "FAIL: topoaware $cmd --help failed"; rc=1; continue; }
  for opt in $(printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
    [ "$opt" = --help ] && continue
    if ! grep -qE -- "(^|[^a-z-])$opt([^a-z-]|$)" <<<"$doc"; then
      echo "FAIL: topoaware $cmd $opt is not in man/topoaware.1"
      rc=1
    fi
  done
done
# The options a command's section lists (the line after each .TP), in the other direction.
for cmd in plan show diff route metrics monitor node defrag; do
  section=$(awk -v s=".SH ${cmd^^}" '$0 == s {on = 1; next} /^\.SH / {on = 0} on' <<<"$doc")
  help=$("$bin" "$cmd" --help 2>&1)
  for opt in $(awk 'prev == ".TP" {print} {prev = $0}' <<<"$section" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
    if ! grep -qE -- "(^|[^a-z-])$opt([^a-z-]|$)" <<<"$help"; then
      echo "FAIL: man/topoaware.1 section ${cmd^^} documents $opt, which topoaware $cmd --help does not list"
      rc=1
    fi
  done
done
[ $rc -eq 0 ] && echo "every option of topoaware's --help is in topoaware(1), and the reverse for plan, show, diff, route, metrics, monitor, node and defrag"
exit $rc
