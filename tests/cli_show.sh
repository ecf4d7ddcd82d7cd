#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware show against stand-in squeue, sinfo and scontrol (first in PATH; no cluster, no root):
# how their output is read (job names holding the separator, a node listed once per partition,
# a pending job's "(null)" node list, lines that do not parse), where the topology and the status
# file are found by default (TOPOAWARE_CONF, TopologyFile=, StatusFile=, StatusFile=none,
# StateSaveLocation from scontrol), what a missing or broken status file and a missing topology
# say, a Slurm command that fails or hangs, and --output.
set -u
bin="$top_builddir/topoaware"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }
"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --json "$tmp/topology.json" >/dev/null || exit 99
hash=$(sed -n 's/^ *"hash": "\(sha256:[0-9a-f]*\)".*/\1/p' "$tmp/topology.json" | head -n 1)
[ -n "$hash" ] || exit 99
mkdir -p "$tmp/bin" "$tmp/state" "$tmp/etc"
now=$(date +%s)

# squeue: a name with the separator, a bad line, a pending job with "(null)" nodes, a job listed
# twice (two partitions), a name with control bytes.
cat >"$tmp/squeue.out" <<'EOF'
12|RUNNING|alice|gpu|4|None|n[0002-0003,0006-0007]|train|x
11|RUNNING|bob|gpu|1|None|n0001|busy
this line is not squeue's
13|PENDING|carol|gpu|2|Resources|(null)|wait
13|PENDING|carol|gpu2|2|Resources|(null)|wait
EOF
# A user's job name with a terminal escape and a byte that is not UTF-8; a user name in UTF-8.
printf '14|PENDING|d\303\251ve|gpu|1|Priority|(null)|evil\033[31mname\377\n' >>"$tmp/squeue.out"
cat >"$tmp/bin/squeue" <<EOF
#!/bin/sh
[ -n "\${FAKE_SQUEUE_FAIL:-}" ] &&
  { echo "squeue: error: Unable to contact slurm controller (connect failure)" >&2; exit 1; }
[ -n "\${FAKE_SQUEUE_HANG:-}" ] && exec sleep 30
echo "\$*" >"$tmp/squeue.args"
cat "$tmp/squeue.out"
EOF
cat >"$tmp/bin/sinfo" <<EOF
#!/bin/sh
echo "\$*" >"$tmp/sinfo.args"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
  n=\$(printf n%04d \$i)
  case \$i in 1|2|3|6|7) s=allocated; r=none ;; 16) s='drained'; r='bad GPU|fan' ;; *) s=idle; r=none ;; esac
  echo "\$n|\$s|\$r"
done
echo "n0001|allocated|none"
echo "gpu99|idle|none"
EOF
cat >"$tmp/bin/scontrol" <<EOF
#!/bin/sh
[ "\$*" = "show config" ] || exit 1
echo "Configuration data as of 2026-12-02T10:00:00"
echo "SelectType              = \${FAKE_SELECT:-select/cons_tres_topoaware}"
echo "SLURM_CONF              = $tmp/etc/slurm.conf"
echo "StateSaveLocation       = $tmp/state/"
EOF
chmod +x "$tmp/bin/"*
status() { # FILE HASH
  cat >"$1" <<EOF
{"schema": "topoaware-status/1", "plugin": "select/cons_tres_topoaware", "written_at": $now,
 "topology": {"file": "$tmp/etc/topology.json", "hash": "$2", "error": ""},
 "job_test": {"calls": 4, "total_us": 400, "max_us": 200, "layout_calls": 2, "layout_total_us": 300, "layout_max_us": 200},
 "jobs": [
  {"job_id": 12, "phase": "placed", "layout": "tp=8,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp", "mode": "prefer",
   "gpus_per_node": 8, "placement": "ideal", "nodes": "n[0002-0003,0006-0007]", "node_order": "n0002,n0003,n0006,n0007",
   "reason": "", "since": $((now - 70)), "updated": $now},
  {"job_id": 13, "phase": "waiting", "layout": "tp=8,cp=1,ep=1,dp=2,pp=1,rank-order=tp-cp-ep-dp-pp", "mode": "strict",
   "gpus_per_node": 8, "placement": "", "nodes": "", "node_order": "", "reason": "no ideal block now", "since": $((now - 30)), "updated": $now}]}
EOF
}
status "$tmp/state/topoaware-status.json" "$hash"
cp "$tmp/topology.json" "$tmp/etc/topology.json"
: >"$tmp/etc/topoaware.conf"
export PATH="$tmp/bin:$PATH"
unset SLURM_CONF TOPOAWARE_CONF

# 1. Defaults found as the plugins find them: topoaware.conf beside the slurm.conf scontrol
# reports, topology.json beside it, the status file in StateSaveLocation.
out=$("$bin" show 2>"$tmp/err"); rc=$?
[ $rc = 0 ] && grep -q "^Fabric: 16 nodes, 4 leaf groups, 1 pod; topology $tmp/etc/topology.json" <<<"$out" &&
  grep -q "^Status: $tmp/state/topoaware-status.json (select/cons_tres_topoaware" <<<"$out" &&
  ok "defaults: topology and status file found from scontrol show config" ||
    bad "defaults (rc $rc): $out $(cat "$tmp/err")"
grep -qE '^  12 +RUNNING +alice +train\|x +4 +0:2,1:2 +tp=8,pp=2,dp=2 +prefer +ideal +ideal ' <<<"$out" &&
  ok "a job name holding the separator" || bad "job 12 line: $out"
# Waiting since now-30 s: 30 s, or a few more when the clock ticked between writing the status
# file and the command's run (a loaded machine, make distcheck).
[ "$(grep -cE '^  13 ' <<<"$out")" = 1 ] &&
  grep -qE '^  13 +PENDING +carol +wait +2 +tp=8,dp=2 +strict +3[0-5]s +Resources +no ideal block now$' <<<"$out" &&
  ok "a pending job listed twice shows once, with both reasons" || bad "job 13: $out"
pat="^topoaware: warning: 1 line(s) of squeue's output were not understood"
pat+=" (first: \"this line is not squeue's\")"
grep -q "$pat" "$tmp/err" &&
  ok "a line squeue did not write is reported, not fatal" || bad "bad squeue line: $(cat "$tmp/err")"
grep -q "^Nodes: 10 free, 0 mixed, 5 allocated, 1 unavailable; largest free block 4 nodes (leaf group 2)" <<<"$out" &&
  ok "node counts (a node listed twice by sinfo counts once)" || bad "node counts: $out"
grep -qE '^  n0016 +drained +- \(bad GPU\|fan\)$' <<<"$out" && ok "a drained node with its reason" ||
  bad "drained node: $out"
grep -qE '^  14 +PENDING +d[^ ]+ve +evil\?\[31mname' <<<"$out" && ! grep -q $'\033' <<<"$out" &&
  ok "control bytes of a job name are not printed" ||
  bad "job 14: $out"
grep -q "1 Slurm node(s) are not in the topology file (layout jobs never get them): gpu99" <<<"$out" &&
  ok "a Slurm node outside the topology is a note" || bad "gpu99: $out"
grep -q -- "-h -a -t PENDING,RUNNING,SUSPENDED,COMPLETING" "$tmp/squeue.args" &&
  grep -q -- "-o %A|%T|%u|%P|%D|%r|%N|%j" "$tmp/squeue.args" &&
  grep -q -- "-h -N -a -o %N|%T|%E" "$tmp/sinfo.args" && ok "squeue and sinfo run with fixed arguments, no shell" ||
  bad "arguments: $(cat "$tmp/squeue.args" "$tmp/sinfo.args")"

# 2. TOPOAWARE_CONF with TopologyFile= and StatusFile=.
cp "$tmp/topology.json" "$tmp/other-topology.json"
status "$tmp/other-status.json" "$hash"
printf 'TopologyFile=%s\nStatusFile=%s\n' "$tmp/other-topology.json" "$tmp/other-status.json" >"$tmp/ta.conf"
out=$(TOPOAWARE_CONF=$tmp/ta.conf "$bin" show 2>&1)
grep -q "topology $tmp/other-topology.json" <<<"$out" && grep -q "^Status: $tmp/other-status.json " <<<"$out" &&
  ok "TOPOAWARE_CONF: TopologyFile= and StatusFile=" || bad "TOPOAWARE_CONF: $out"
printf 'StatusFile=none\n' >"$tmp/ta.conf"
out=$(TOPOAWARE_CONF=$tmp/ta.conf "$bin" show --topology "$tmp/topology.json" 2>&1)
grep -q "^Status: not available: StatusFile=none in $tmp/ta.conf" <<<"$out" &&
  grep -qE '^  12 +RUNNING +alice' <<<"$out" &&
  ok "StatusFile=none: said, jobs still shown" || bad "StatusFile=none: $out"

# 3. The status file missing (under another SelectType, and under the plugin), broken, foreign.
mv "$tmp/state/topoaware-status.json" "$tmp/saved.json"
out=$(FAKE_SELECT=select/cons_tres "$bin" show 2>"$tmp/err"); rc=$?
pat="does not exist: slurmctld runs SelectType=select/cons_tres, not select/cons_tres_topoaware"
[ $rc = 0 ] && grep -q "$pat" <<<"$out" &&
  grep -qE '^  12 +RUNNING +alice +train\|x +4 +0:2,1:2 +\? +\? +\? ' <<<"$out" &&
  grep -q "warning: layouts unknown" "$tmp/err" && ok "no status file (cons_tres): jobs shown, layouts unknown, why" ||
  bad "no status file (rc $rc): $out $(cat "$tmp/err")"
out=$("$bin" show 2>&1)
grep -q "does not exist: select/cons_tres_topoaware writes it (StatusFile= in topoaware.conf(5))" <<<"$out" &&
  ok "no status file yet: where it comes from" || bad "no status file yet: $out"
echo '{"schema": "topoaware-status/1", "plugin": ' >"$tmp/broken.json"
out=$("$bin" show --status "$tmp/broken.json" 2>&1)
grep -q "^Status: not available: $tmp/broken.json: not valid JSON" <<<"$out" &&
  ok "a broken status file is named, jobs shown" ||
  bad "broken status: $out"
status "$tmp/foreign.json" "sha256:0123"
out=$("$bin" show --status "$tmp/foreign.json" 2>&1)
grep -q "WARNING: the select plugin placed jobs with topology sha256:0123" <<<"$out" &&
  ok "a status file of another topology is called out" ||
  bad "foreign status: $out"
rc=0; "$bin" show --status "$tmp/foreign.json" --job 12 >/dev/null 2>&1 || rc=$?
[ $rc = 5 ] && ok "show --job on a status file of another topology: exit 5" || bad "foreign --job: exit $rc"
mv "$tmp/saved.json" "$tmp/state/topoaware-status.json"

# 4. --job, --format, --output.
out=$("$bin" show --job 12 2>&1); rc=$?
[ $rc = 0 ] && grep -qE '^  2 +16-23 +n0006 +' <<<"$out" && ok "show --job: rank map" || bad "--job (rc $rc): $out"
"$bin" show --format json --output "$tmp/show.json" && python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "topoaware-show/1"
assert [x["job_id"] for x in j["jobs"]] == [11, 12] and [x["job_id"] for x in j["waiting"]] == [13, 14]
assert j["jobs"][1]["name"] == "train|x"
assert j["waiting"][1]["name"] == "evil?[31mname?", j["waiting"][1]["name"]
' "$tmp/show.json" && ok "--format json --output FILE" || bad "json output"
if command -v dot >/dev/null; then
  "$bin" show --format svg -o "$tmp/show.svg" && grep -q "<svg" "$tmp/show.svg" && ok "--format svg" || bad "svg"
fi

# 5. Failures: exit 2 with a message saying what to check.
out=$(FAKE_SQUEUE_FAIL=1 "$bin" show 2>&1); rc=$?
[ $rc = 2 ] && grep -q "squeue -h -a -t .* failed: squeue: error: Unable to contact slurm controller" <<<"$out" &&
  grep -q "scontrol ping" <<<"$out" && ok "squeue failing: exit 2, its error and what to check" ||
    bad "squeue fails (rc $rc): $out"
SECONDS=0
out=$(FAKE_SQUEUE_HANG=1 "$bin" show --timeout 1 2>&1); rc=$?
[ $rc = 2 ] && [ $SECONDS -lt 10 ] && grep -q "did not finish in 1 s" <<<"$out" &&
  ok "a hanging squeue is killed after --timeout" ||
  bad "hanging squeue (rc $rc, ${SECONDS}s): $out"
out=$("$bin" show --topology "$tmp/none.json" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "none.json" <<<"$out" && ok "a missing --topology: exit 2, named" ||
  bad "missing topology (rc $rc): $out"
mv "$tmp/etc/topology.json" "$tmp/etc/topology.json.away"
out=$("$bin" show --status "$tmp/foreign.json" 2>&1); rc=$?
pat="give --topology FILE: the topology.json the plugins read, TopologyFile= in $tmp/etc/topoaware.conf"
[ $rc = 2 ] && grep -q "$pat" <<<"$out" &&
  ok "no default topology: exit 2, what to give" || bad "no default topology (rc $rc): $out"
mv "$tmp/etc/topology.json.away" "$tmp/etc/topology.json"
out=$("$bin" show --job 77 2>&1); rc=$?
[ $rc = 2 ] && grep -q "job 77 is not running or pending" <<<"$out" && ok "an unknown job: exit 2" ||
  bad "unknown job (rc $rc): $out"
rc=0; "$bin" show --format png >/dev/null 2>&1 || rc=$?
[ $rc = 1 ] && ok "a bad --format: exit 1" || bad "bad format: exit $rc"

[ $fails -eq 0 ] || exit 1
