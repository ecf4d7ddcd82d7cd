#!/bin/bash
# Every long option that `topoaware <command> --help` lists is documented in topoaware(1), and
# every option the man page documents for a command exists in its --help.
set -u
bin="$top_builddir/topoaware"
man="$top_srcdir/man/topoaware.1"
rc=0
# Roff escapes "\-" for "-": undo them to compare.
doc=$(sed 's/\\-/-/g' "$man")
for cmd in discover convert generate plan; do
  help=$("$bin" "$cmd" --help 2>&1) || { echo "FAIL: topoaware $cmd --help failed"; rc=1; continue; }
  for opt in $(printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
    [ "$opt" = --help ] && continue
    if ! grep -qE -- "(^|[^a-z-])$opt([^a-z-]|$)" <<<"$doc"; then
      echo "FAIL: topoaware $cmd $opt is not in man/topoaware.1"
      rc=1
    fi
  done
done
[ $rc -eq 0 ] && echo "every option of topoaware's --help is in topoaware(1)"
exit $rc
