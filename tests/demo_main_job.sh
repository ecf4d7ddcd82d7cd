#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's first command ends with the demo (tools/demo.sh): this runs it as setup.sh does and
# checks what it claims: the live ibsim walk finds the generated fabric, the two localhost clusters
# come up, stock cons_tres + topology/tree splits job A's DP rings (3 + 1) where
# select/cons_tres_topoaware keeps each on one leaf (2 + 2), the strict job C waits under
# topoaware and `topoaware show` reports it with its reason, and both pictures are written.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/common.sh"
ta_require_daemon_tests
ta_require_cmd slurmctld slurmctld
ta_require_cmd ibsim ibsim-utils
b=${top_builddir:-.}
[ -f "$b/plugins/select/.libs/select_cons_tres_topoaware.so" ] ||
  ta_skip "select plugins not built (configure --with-slurm-source)"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-demo.XXXXXX")
ta_on_exit "rm -rf '$work'"
log=$work/demo.log
if ! TOPOAWARE_DEMO_DIR=$work timeout 900 \
    bash "${top_srcdir:-.}/tools/demo.sh" "$(cd "$b" && pwd)" >"$log" 2>&1; then
  tail -40 "$log"; ta_fail "tools/demo.sh failed"
fi
grep -q 'the live walk found exactly the generated fabric' "$log" ||
  { cat "$log"; ta_fail "live walk differs from the generated fabric"; }
ta_pass "demo: live ibsim walk = generated fabric"

leaves() { # hostlist -> "3 1" (hosts per leaf of 4, descending)
  local h; for h in $(ta_hostnames "$1"); do echo $(( (10#${h#n} - 1) / 4 )); done |
    sort | uniq -c | awk '{print $1}' | sort -rn | paste -sd' ' -
}
job() { awk -v n="$1" '$1 == n {print $3}' "$work/jobs.$2"; }
[ "$(leaves "$(job A stock)")" = "3 1" ] || ta_fail "premise: stock gave job A $(job A stock), expected 3 + 1"
[ "$(leaves "$(job A topo)")" = "2 2" ] || ta_fail "topoaware gave job A $(job A topo), expected 2 + 2"
ta_pass "demo: job A stock $(job A stock) (3 + 1), topoaware $(job A topo) (2 + 2)"
[ "$(job C topo)" = "(pending)" ] || ta_fail "strict job C was not held back under topoaware: $(job C topo)"
[ "$(job C stock)" != "(pending)" ] || ta_fail "job C did not run under stock Slurm"
grep -q '^Waiting jobs:' "$work/show.topo.txt" &&
  grep -A3 '^Waiting jobs:' "$work/show.topo.txt" | grep -q ' C .*strict.*no block' ||
  { cat "$work/show.topo.txt"; ta_fail "topoaware show does not list job C waiting with its reason"; }
ta_pass "demo: strict job C waits under topoaware, and topoaware show says why"
grep -q 'tp=8,pp=2,dp=2 .*ideal' "$work/show.topo.txt" ||
  { cat "$work/show.topo.txt"; ta_fail "show does not list job A as ideal"; }
for f in show.topo.svg show.stock.svg; do
  grep -q '<svg' "$work/$f" || ta_fail "demo: $f is not an SVG"
done
ta_pass "demo: topoaware show text and both SVG pictures written"
