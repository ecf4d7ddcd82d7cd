#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A large topology given to a running select/cons_tres_topoaware (select_cons_tres_topoaware(8),
# "Topology file") must not stop slurmctld's RPCs. 16 slurmd start on a 16-host topology; then a
# generated fat tree of 102,400 hosts (a 63 MB topology.json, of which only the cluster's 16 nodes are
# real Slurm nodes: the plugin maps Slurm's nodes onto the topology and does not care about hosts Slurm
# lacks) replaces it and `scontrol reconfigure` runs, while a probe times one RPC after another
# (squeue, sinfo, scontrol ping) and a layout job is submitted during the load. It fails if any RPC,
# the reconfigure or the sbatch waits longer than RPC_BOUND_MS, if the large topology is not loaded
# and booked in the status file, or if the layout job does not run on it.
#
# RPC_BOUND_MS = 1500: what slurmctld may legitimately hold its locks for here is select_p_node_init,
# which waits at most 200 ms for the loader, plus the reconfigure's own work on 16 nodes (about 60 ms:
# bench/RESULTS.md, the pass-through build) plus starting the client (tens of ms); about 0.3 s, taken 5x
# for a loaded CI machine. Measured on a shared 2-core machine (load average 6-50): the topology in
# place 10-11 s after the reconfigure, the reconfigure 374-386 ms, the slowest probe RPC 253-497 ms.
# The parse that must stay off the locks takes seconds, so a loader that parsed under the plugin's
# lock (which select_p_node_init and every select_p_job_test wait for with slurmctld's write locks
# held) shows as an RPC of that length: built so on purpose, the reconfigure took 5.5 s and a squeue
# 5.4 s, and this test failed. Where the load itself ends faster than the bound the test could not
# tell, and says so (a note, not a failure).
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
sel_setup
ta_require_cmd python3 python3
RPC_BOUND_MS=${RPC_BOUND_MS:-1500}
b=${top_builddir:-.}
# From 23.11 `scontrol reconfigure` starts a new slurmctld (docs/design.md): the probe would time that
# restart, not the loader.
release=$(${TOPOAWARE_SLURM_PREFIX:+$TOPOAWARE_SLURM_PREFIX/sbin/}slurmctld -V 2>/dev/null | awk '{print $2}')
case $release in
  2[3-9].*|[3-9][0-9].*)
    [[ $release == 23.0* ]] || ta_skip "Slurm $release: scontrol reconfigure restarts slurmctld; this test times the loader of 22.05's in-place reconfigure" ;;
esac

# Host names n000001.. in both files: the generator numbers hosts with 6 digits from 100,000 on.
small=$SEL_WORK/small.json large=$SEL_WORK/large.json
"$b/topoaware" generate fat-tree --leaves 2 --hosts-per-leaf 8 --host-prefix n00 --json "$small" >/dev/null ||
  ta_fail "topoaware generate (16 hosts) failed"
"$b/topoaware" generate fat-tree --levels 3 --leaves 1600 --hosts-per-leaf 64 --leaves-per-pod 100 \
  --uplinks 16 --spines 16 --cores 64 --json "$large" >/dev/null || ta_fail "topoaware generate (102,400 hosts) failed"
grep -q '"n000016"' "$small" && grep -q '"n102400"' "$large" || ta_fail "generated host names are not n000001.."
hash_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hash"])' "$1"; }
large_hash=$(hash_of "$large")

printf '%s\n' "StatusInterval=1" >"$SEL_WORK/ta.conf"
cluster_start --nodes 16 --width 6 --gpus 8 --plugin-dir "$SEL_PLUGDIR" --plugstack "$SEL_PLUGSTACK" \
  --conf SelectType=select/cons_tres_topoaware --file "topology.json=$small" --file "topoaware.conf=$SEL_WORK/ta.conf"
ctld_log=$CLUSTER_LOGDIR/slurmctld.log
ta_wait_for 30 grep -q 'topology .* loaded (16 hosts' "$ctld_log" || ta_fail "the 16-host topology did not load"

ms() { date +%s%3N; }
probe=$SEL_WORK/probe.txt
: >"$probe"
# One RPC after another, each timed by the client (what a user waits), until stopped. squeue and
# sinfo retry a connection slurmctld does not accept for MessageTimeout (a second apart), so a
# refused connection shows as a slow RPC; scontrol ping tries once and says DOWN. A ping that fails
# is therefore tried again at once and both are booked: the second failing too is a failure (no
# answer), one alone is noted with what the client said (-vv prints the connect or receive error).
# Seen once (exit 1 after 40 ms, on a quiet machine), not reproduced in 16 runs since: no lock wait.
( set +e
  rpc() {
    local t0 out rc
    t0=$(ms); out=$(cluster_run "$@" 2>&1); rc=$?
    [ "$rc" = 0 ] && out= || out="at $(date +%T.%3N): $(printf '%s\n' "$out" | grep -iE 'error|down|fail|refus|timed|reset' | tail -4 | tr '\n' '|')"
    echo "$(( $(ms) - t0 )) $rc $1 $out" >>"$probe"
    return $rc
  }
  while :; do
    rpc squeue -h; rpc sinfo -h
    rpc scontrol -vv ping || { sed -i '$ s/^\([0-9]* [0-9]*\) scontrol/\1 scontrol-once/' "$probe"; rpc scontrol -vv ping; }
  done ) &
probe_pid=$!
ta_on_exit "kill $probe_pid 2>/dev/null || true"
sleep 1

before=$(wc -l <"$ctld_log")
cp "$large" "$CLUSTER_DIR/topology.json.new"
mv "$CLUSTER_DIR/topology.json.new" "$CLUSTER_DIR/topology.json"
t0=$(ms)
cluster_run scontrol reconfigure || ta_fail "scontrol reconfigure failed"
reconf_ms=$(( $(ms) - t0 ))
t1=$(ms)
job=$(cluster_run sbatch --parsable --exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2 \
  -o /dev/null --wrap 'sleep 2') || ta_fail "sbatch of a layout job during the load failed"
sbatch_ms=$(( $(ms) - t1 ))
new_log() { tail -n +$((before + 1)) "$ctld_log"; }
ta_wait_for 120 sh -c "tail -n +$((before + 1)) '$ctld_log' | grep -q 'topology .* loaded (102400 hosts'" ||
  ta_fail "the 102,400-host topology was not loaded within 120 s: $(new_log | grep topoaware | tail -3)"
load_ms=$(( $(ms) - t0 ))
sleep 1
kill "$probe_pid" 2>/dev/null || true
wait "$probe_pid" 2>/dev/null || true

n=$(wc -l <"$probe")
slowest=$(sort -n "$probe" | tail -1)
failed=$(awk '$2 != 0 && $3 != "scontrol-once"' "$probe" | wc -l)
once=$(awk '$3 == "scontrol-once"' "$probe")
ta_note "reconfigure $reconf_ms ms, sbatch during the load $sbatch_ms ms, topology in place after $load_ms ms;" \
  "$n probe RPCs, slowest '$slowest' (ms rc command), $failed failed"
new_log | grep 'select/cons_tres_topoaware: .*topology' | sed 's/^/# log: /' | cut -c1-200
[ "$n" -ge 5 ] || ta_fail "only $n probe RPCs completed"
[ -z "$once" ] || ta_note "scontrol ping failed once and answered when tried again: $once"
[ "$failed" = 0 ] || ta_fail "$failed probe RPCs failed: $(awk '$2 != 0' "$probe" | head -3 | tr '\n' ';')"
for v in "reconfigure:$reconf_ms" "sbatch:$sbatch_ms" "slowest probe RPC:${slowest%% *}"; do
  [ "${v##*:}" -le "$RPC_BOUND_MS" ] ||
    ta_fail "${v%:*} took ${v##*:} ms (bound $RPC_BOUND_MS ms) while a 102,400-host topology loaded in $load_ms ms"
done
[ "$load_ms" -gt "$RPC_BOUND_MS" ] ||
  ta_note "the load took only $load_ms ms, under the bound: this machine could not show a load held under the locks"
ta_pass "102,400-host topology loaded in $load_ms ms after scontrol reconfigure; reconfigure $reconf_ms ms," \
  "sbatch $sbatch_ms ms, $n RPCs meanwhile, slowest ${slowest%% *} ms (bound $RPC_BOUND_MS ms)"

# Booked and used: the status file names the large topology's hash, the layout job runs and is
# placed by topoaware on 4 of the cluster's nodes (all under the topology's first leaf).
SEL_STATUS=$CLUSTER_DIR/state/topoaware-status.json
booked() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["topology"]["hash"])' "$SEL_STATUS" 2>/dev/null; }
ta_wait_for 20 sh -c "[ \"\$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[\"topology\"][\"hash\"])' \
  '$SEL_STATUS' 2>/dev/null)\" = '$large_hash' ]" || ta_fail "the status file books topology '$(booked)', not $large_hash"
[ "$(cluster_wait_job "$job" 60)" = COMPLETED ] || ta_fail "layout job $job did not complete"
grep -q "JobId=$job.*placed by plain select/cons_tres" "$ctld_log" && ta_fail "layout job $job went to plain cons_tres"
ta_pass "the status file books the large topology ($large_hash); layout job $job submitted during the load completed"
