#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fabric changes under a running cluster, end to end with real parts: an ibsim fabric (4 leaves x
# 4 hosts, 2 spines, 2 uplinks per leaf) walked by `topoaware discover` through the real
# libibumad/libibmad/libibnetdisc stack (umad2sim), loaded by select/cons_tres_topoaware in a real
# slurmctld with 16 slurmd, the SPANK plugin reading the same file on the nodes (PrologFlags=Alloc).
# 1. Healthy fabric: slurmctld loads the walk's topology.json; the status file names its hash.
# 2. A leaf-spine cable taken down, the fabric walked again, scontrol reconfigure: the new file (one
#    cable fewer) is loaded, the status file names the new hash, the job placed before keeps running;
#    a new step of that job with the job's own layout gets the ranks slurmctld placed it with (from
#    the node order the job prolog kept, with the old hash: no topology file is read), and a step
#    with another layout, which needs the file, gets no hints (the file on the nodes is no longer
#    the one the job was placed with: never hints from the wrong topology) and a warning; a new
#    layout job gets hints from the new file.
# 3. A whole leaf switch taken down: its hosts vanish from the walk; after reconfigure slurmctld
#    logs them as not in the topology, and a layout job that would need them waits (MissingNodes=avoid).
# 4. The switch and the cable back: the walk gives the first file again, byte for byte, slurmctld
#    loads it (the first hash, no missing nodes) and the waiting job starts, on that leaf too.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tools/lib/ibsim.sh"
sel_setup
ta_require_cmd ibsim ibsim-utils
ta_require_cmd python3 python3
[ -r "$UMAD2SIM_LIB" ] || ta_skip "$UMAD2SIM_LIB missing (package libumad2sim0)"
bin=${top_builddir:-.}/topoaware
work=$SEL_WORK

"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 2 --net "$work/ft.net" \
  --json "$work/expected.json" >/dev/null || ta_fail "topoaware generate failed"
ibsim_start "$work/ft.net" "$work/sim" || ta_fail "ibsim did not start on $work/ft.net"
ta_on_exit ibsim_stop
# discover FILE: walk the simulated fabric into FILE (atomically replaced); its summary on stdout.
discover() {
  timeout 120 env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" \
    "$bin" discover --quiet --json "$1" -f summary
}
discover "$work/walk0.json" >"$work/walk0.summary" || ta_fail "the first walk failed"
cmp -s "$work/walk0.json" "$work/expected.json" || ta_fail "the first walk differs from the generated fabric"
# ibsim names switches by node id ("S-..."); the net file's comment gives each one's name.
switch_id() { sed -n "s/^Switch.*\"\(S-[0-9a-f]*\)\".*# \"$1\".*/\1/p" "$work/ft.net"; }
leaf1=$(switch_id leaf001) leaf4=$(switch_id leaf004)
uplink=$(awk '/^Switch.*# "leaf001"/{f=1; next} f && /^\[/ && /spine/ {print $1; exit}' "$work/ft.net" | tr -d '[]')
[ -n "$leaf1" ] && [ -n "$leaf4" ] && [ -n "$uplink" ] || ta_fail "cannot find leaf001/leaf004 in $work/ft.net"

printf '%s\n' "StatusInterval=1" >"$work/ta.conf"
cluster_start --nodes 16 --width 4 --gpus 8 --plugin-dir "$SEL_PLUGDIR" --plugstack "$SEL_PLUGSTACK" \
  --topology "$SEL_TOPOCONF" --conf SelectType=select/cons_tres_topoaware --conf PrologFlags=Alloc \
  --file "topology.json=$work/walk0.json" --file "topoaware.conf=$work/ta.conf"
TOPO=$CLUSTER_DIR/topology.json STATUS=$CLUSTER_DIR/state/topoaware-status.json

log_since=0
# loaded_hash: the hash of the last topology slurmctld loaded (from its log).
loaded_hash() {
  sed -n 's/.*topology .*topology.json loaded ([0-9]* hosts, \(sha256:[0-9a-f]*\)).*/\1/p' \
    "$CLUSTER_LOGDIR/slurmctld.log" | tail -1
}
status_hash() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["topology"]["hash"])' "$STATUS" 2>/dev/null || true
}
reconfigure() {
  log_since=$(wc -l <"$CLUSTER_LOGDIR/slurmctld.log")
  cluster_run scontrol reconfigure
  ta_wait_for 30 sh -c "tail -n +$((log_since + 1)) '$CLUSTER_LOGDIR/slurmctld.log' |
    grep -q 'select/cons_tres_topoaware: .*topology'" || ta_fail "no topology message after scontrol reconfigure"
}
new_log() { tail -n +$((log_since + 1)) "$CLUSTER_LOGDIR/slurmctld.log"; }
layout=(--exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2)
# What a task prints: the hash it was given and the layout hints (or '-').
show='echo "${TOPOAWARE_TOPO_HASH--} RANK=${RANK--} TP_RANK=${TOPOAWARE_TP_RANK--}"'

h0=$(loaded_hash)
[ -n "$h0" ] || ta_fail "slurmctld did not log the topology it loaded"
ta_wait_for 20 sh -c "[ \"\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"topology\"][\"hash\"])' \
  '$STATUS' 2>/dev/null)\" = '$h0' ]" || ta_fail "status file hash '$(status_hash)', slurmctld loaded $h0"
# Job A: placed on the healthy fabric; its batch script runs one step now and one on request.
a=$(cluster_run sbatch --parsable "${layout[@]}" -o "$work/a.out" -e "$work/a.err" --wrap "
  srun bash -c '$show' >'$work/a.step1'
  while [ ! -e '$work/go' ]; do sleep 0.2; done
  srun bash -c '$show' >'$work/a.step2'
  srun --tp=4 --dp=4 bash -c '$show' >'$work/a.step3'
  touch '$work/a.done'; sleep 600")
cluster_wait_job "$a" 60 RUNNING >/dev/null
ta_wait_for 60 test -s "$work/a.step1" || ta_fail "job A's first step printed nothing: $(cat "$work/a.err")"
[ "$(sort -u "$work/a.step1" | awk '{print $1}' | sort -u)" = "$h0" ] ||
  ta_fail "job A's tasks were not given the loaded topology $h0: $(sort -u "$work/a.step1" | head -3)"
grep -q ' RANK=- ' "$work/a.step1" && ta_fail "job A's first step got no hints: $(cat "$work/a.err")"
ta_pass "healthy fabric walked through libibnetdisc: slurmctld and the status file use $h0, tasks get hints"

# 2. One leaf-spine cable down.
ibsim_console "Unlink \"$leaf1\"[$uplink]"
discover "$TOPO" >"$work/walk1.summary" || ta_fail "the walk after a cable went down failed"
grep -q 'missing-uplink\] leaf001' "$work/walk1.summary" ||
  ta_fail "the walk does not report leaf001's missing uplink: $(cat "$work/walk1.summary")"
reconfigure
h1=$(loaded_hash)
[ -n "$h1" ] && [ "$h1" != "$h0" ] || ta_fail "after the cable went down slurmctld loaded '$h1' (before: $h0)"
ta_wait_for 20 sh -c "[ \"\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"topology\"][\"hash\"])' \
  '$STATUS' 2>/dev/null)\" = '$h1' ]" || ta_fail "status file hash '$(status_hash)' after reconfigure, wanted $h1"
[ "$(cluster_job_state "$a")" = RUNNING ] || ta_fail "job A is $(cluster_job_state "$a") after the reconfigure"
touch "$work/go"
ta_wait_for 60 test -e "$work/a.done" || ta_fail "job A's second step did not end: $(cat "$work/a.err")"
sort "$work/a.step1" | diff - <(sort "$work/a.step2") >/dev/null ||
  ta_fail "a new step of job A with its own layout did not get the ranks A was placed with:" \
    "$(sort "$work/a.step2" | head -3)"
grep -v ' RANK=- TP_RANK=-$' "$work/a.step3" &&
  ta_fail "a step of job A with another layout got hints although the topology changed after A was placed"
grep -q 'no topoaware hints.*stale' "$work/a.err" ||
  ta_fail "no warning for the changed topology in job A's step with another layout: $(cat "$work/a.err")"
b=$(cluster_run sbatch --parsable "${layout[@]}" -o "$work/b.out" -e "$work/b.err" --wrap "srun bash -c '$show'")
[ "$(cluster_wait_job "$b" 90)" = COMPLETED ] || ta_fail "layout job B on the changed fabric did not complete"
[ "$(awk '{print $1}' "$work/b.out" | sort -u)" = "$h1" ] && ! grep -q ' RANK=- ' "$work/b.out" ||
  ta_fail "job B's tasks were not given hints from $h1: $(sort -u "$work/b.out" | head -3) $(head -3 "$work/b.err")"
ta_pass "cable down, walked again, reconfigured: $h1 loaded and in the status file; A's new step gets A's ranks" \
  "($h0); a step with another layout gets no hints and a warning; new job B gets hints from $h1"

# 3. A whole leaf switch down: n0013-n0016 vanish from the walk.
ibsim_console "Unlink \"$leaf4\""
discover "$TOPO" >"$work/walk2.summary" || ta_fail "the walk after leaf004 went down failed"
python3 - "$TOPO" <<'PY' || ta_fail "the walk with leaf004 down still has its hosts"
import json, sys
hosts = {h["name"] for h in json.load(open(sys.argv[1]))["hosts"]}
gone = {"n%04d" % i for i in range(13, 17)}
sys.exit(0 if len(hosts) == 12 and not hosts & gone else 1)
PY
reconfigure
missing_line="4 of 16 Slurm nodes are not in topology $TOPO: n\[0013-0016\]; MissingNodes=avoid"
ta_wait_for 10 sh -c "tail -n +$((log_since + 1)) '$CLUSTER_LOGDIR/slurmctld.log' | grep -q '$missing_line'" ||
  ta_fail "slurmctld does not name the 4 nodes that left the topology: $(new_log | grep topoaware | head -5)"
cluster_run scancel "$a"
cluster_wait_job "$a" 60 >/dev/null
# Busy: all of leaf001, one node of leaf002 and of leaf003. The topology's free nodes (3 + 3) cannot
# hold an 8-node job; with leaf004's 4 nodes they could, but those are not in the topology now.
sel_busy n0001 n0002 n0003 n0004 n0005 n0009
c=$(cluster_run sbatch --parsable "${layout[@]}" -N8 --dp=4 -o /dev/null --wrap 'sleep 600')
sleep 8
[ "$(cluster_job_state "$c")" = PENDING ] ||
  ta_fail "layout job C is $(cluster_job_state "$c") on $(sel_job_nodes "$c" | tr '\n' ' ')with leaf004 down"
ta_pass "leaf004 down: slurmctld names n[0013-0016] as not in the topology; layout job C (8 nodes) waits" \
  "rather than take them (6 free nodes in the topology)"

# 4. Everything back.
ibsim_console "ReLink \"$leaf4\""
ibsim_console "ReLink \"$leaf1\"[$uplink]"
discover "$TOPO" >/dev/null || ta_fail "the walk after the repair failed"
cmp -s "$TOPO" "$work/walk0.json" || ta_fail "the repaired fabric walks differently from the first walk"
reconfigure
[ "$(loaded_hash)" = "$h0" ] || ta_fail "after the repair slurmctld loaded $(loaded_hash), the first walk was $h0"
grep -q 'not in topology' <(new_log) && ta_fail "nodes still missing after the repair: $(new_log | grep 'not in')"
cluster_wait_job "$c" 60 RUNNING >/dev/null || ta_fail "layout job C did not start once leaf004 was back"
cnodes=$(sel_job_nodes "$c" | tr '\n' ' ')
grep -qE 'n001[3-6]' <<<"$cnodes" || ta_fail "layout job C started without leaf004's nodes: $cnodes"
ta_pass "switch and cable back: the walk equals the first, slurmctld loads $h0 again with every node;" \
  "C starts, on leaf004 too ($cnodes)"
