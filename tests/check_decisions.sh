#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Decision tests as data: placements and rank orders, not log wording.
#
# tests/decisions/<fabric>.requests holds requests (a layout, a busy set, a mode; the format is in
# tests/decision_run.cpp) and tests/decisions/<fabric>.expected what the select decision
# (corelib/select_policy.hpp) and the rank order answer for each: the verdict, the nodes in rank
# order, their leaf groups, the span, and whether the node set alone gives the same order.
# <fabric> is either a recorded dump of tests/fixtures/ib (<dump>.requests: the topology is what
# `topoaware discover --ibnetdiscover <dump>` makes of it, as tests/golden.sh runs it; every dump
# the command accepts must have its requests), a routed dump of tests/fixtures/routes
# (routes-<dump>.requests: discovered with its recorded forwarding tables, `--lfts <dump>.dump_fts`,
# so that the rank order picks the hosts where split rings enter their leaves by the routes) or a
# generated fabric (gen-<name>.requests whose first line is "# generate: <topoaware generate
# arguments>").
#
# Every .requests file is run with tests/decision_run and compared with its .expected by `diff -u`;
# any difference fails. `bash tests/check_decisions.sh --update` (or TOPOAWARE_UPDATE_DECISIONS=yes,
# `make regen-decisions`) writes the .expected files instead; review the diff (git diff
# tests/decisions) before committing it: a changed decision must be one you meant.
set -u
. "$top_srcdir/tests/lib/common.sh"
export LC_ALL=C

bin="$top_builddir/topoaware"
runner="$top_builddir/tests/decision_run"
fixtures="$top_srcdir/tests/fixtures/ib"
dir="$top_srcdir/tests/decisions"
update=no
case ${TOPOAWARE_UPDATE_DECISIONS:-no} in
  yes|1|true) update=yes ;;
esac
[ "${1:-}" = --update ] && update=yes

ta_require_cmd diff diffutils
[ -x "$bin" ] || ta_fail "$bin not built (make topoaware)"
[ -x "$runner" ] || ta_fail "$runner not built (make tests/decision_run)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
problems=0
problem() { echo "FAIL: $*"; problems=$((problems + 1)); }

# The topology of each fabric, into $tmp/<fabric>.json.
fabrics=()
for path in "$fixtures"/*.ibnetdiscover "$fixtures"/*.ibnetdiscover-p; do
  [ -f "$path" ] || continue
  dump=${path##*/}
  base=${dump%.ibnetdiscover*}
  args=(discover --ibnetdiscover "$dump")
  [ -f "$fixtures/$base.node-name-map" ] && args+=(--node-name-map "$base.node-name-map")
  if (cd "$fixtures" && "$bin" "${args[@]}" --json "$tmp/$dump.json") >"$tmp/discover.out" 2>&1; then
    [ -f "$dir/$dump.requests" ] || problem "tests/decisions/$dump.requests is missing (every recorded fabric needs requests)"
    fabrics+=("$dump")
  elif [ -f "$dir/$dump.requests" ]; then
    problem "tests/decisions/$dump.requests: topoaware refuses the dump: $(head -3 "$tmp/discover.out")"
  fi
done
for req in "$dir"/routes-*.requests; do
  [ -f "$req" ] || continue
  name=${req##*/}
  name=${name%.requests}
  dump=${name#routes-}
  if (cd "$top_srcdir/tests/fixtures/routes" && "$bin" discover --ibnetdiscover "$dump.ibnetdiscover" \
    --lfts "$dump.dump_fts" --json "$tmp/$name.json") >"$tmp/discover.out" 2>&1; then
    fabrics+=("$name")
  else
    problem "tests/decisions/$name.requests: topoaware discover of tests/fixtures/routes/$dump failed: $(head -3 "$tmp/discover.out")"
  fi
done
for req in "$dir"/gen-*.requests; do
  [ -f "$req" ] || continue
  name=${req##*/}
  name=${name%.requests}
  gen=$(sed -n '1s/^# generate: //p' "$req")
  if [ -z "$gen" ]; then
    problem "tests/decisions/$name.requests: the first line must be '# generate: <arguments>'"
    continue
  fi
  # shellcheck disable=SC2086 # the arguments are words
  if "$bin" generate $gen --json "$tmp/$name.json" >"$tmp/generate.out" 2>&1; then
    fabrics+=("$name")
  else
    problem "tests/decisions/$name.requests: topoaware generate $gen failed: $(head -3 "$tmp/generate.out")"
  fi
done
for req in "$dir"/*.requests; do
  [ -f "$req" ] || continue
  name=${req##*/}
  name=${name%.requests}
  [ -f "$tmp/$name.json" ] || [ -f "$fixtures/$name" ] ||
    problem "tests/decisions/$name.requests: neither a dump of tests/fixtures/ib nor routes-* nor gen-*"
done
for exp in "$dir"/*.expected; do
  [ -f "$exp" ] || continue
  name=${exp##*/}
  [ -f "$dir/${name%.expected}.requests" ] || problem "tests/decisions/$name: no .requests beside it"
done
[ "${#fabrics[@]}" -gt 0 ] || problem "no fabrics"

written=0 compared=0
for name in "${fabrics[@]}"; do
  [ -f "$dir/$name.requests" ] || continue
  out="$tmp/$name.expected"
  if ! "$runner" "$tmp/$name.json" "$dir/$name.requests" >"$out" 2>"$tmp/run.err"; then
    problem "tests/decisions/$name.requests: $(cat "$tmp/run.err")"
    continue
  fi
  if [ "$update" = yes ]; then
    if ! cmp -s "$out" "$dir/$name.expected"; then
      cp "$out" "$dir/$name.expected" || ta_fail "cannot write $dir/$name.expected"
      echo "wrote tests/decisions/$name.expected"
      written=$((written + 1))
    fi
    continue
  fi
  compared=$((compared + 1))
  if [ ! -f "$dir/$name.expected" ]; then
    problem "tests/decisions/$name.expected is missing (bash tests/check_decisions.sh --update, then review it)"
  elif ! diff -u --label "tests/decisions/$name.expected" --label "decided now" "$dir/$name.expected" "$out" \
    >"$tmp/diff"; then
    problem "tests/decisions/$name: the decisions differ from the expected ones:"
    cat "$tmp/diff"
  fi
done

[ "$problems" -eq 0 ] || ta_fail "$problems problem(s) above"
if [ "$update" = yes ]; then
  ta_pass "decisions of ${#fabrics[@]} fabric(s): $written expected file(s) written (review: git diff tests/decisions)"
else
  ta_pass "decisions of $compared fabric(s) as expected"
fi
