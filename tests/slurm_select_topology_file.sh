#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The topology file under select/cons_tres_topoaware in a real slurmctld (16 nodes, 4 leaves x 4):
# - no file at start: the log says which file is missing and that layout jobs go to plain
#   cons_tres; layout jobs and others still run;
# - then another cluster's topology (hosts other0001.., none of slurmctld's nodes) and scontrol
#   reconfigure: refused as a broken file would be (the error names the file, 0 of 16 nodes and names
#   of both sides; not kept as the last good copy); a layout job runs on plain cons_tres instead of
#   waiting for nodes the topology does not have;
# - still without a topology, 300 pending layout jobs tested at every pass: their "no topology
#   loaded" lines stay within the plugin's log rate limit, and a line says how many it held back;
# - a good file, then scontrol reconfigure (which rebuilds Slurm's node table and calls
#   select_p_node_init): it is loaded and used (a layout job lands 2 + 2 on a 3, 3, 2 free set);
# - a corrupted file, an empty one, then the other cluster's one, each followed by scontrol
#   reconfigure: the log says why it was refused, slurmctld keeps running and keeps placing with the
#   last good topology, mapped onto the rebuilt node table (from memory on 22.05; from 23.11, where
#   reconfigure starts a new slurmctld, from the copy of the last good topology kept in
#   StateSaveLocation, which none of them replaced);
# - slurmctld restarted on the other cluster's file: it places with that copy.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
sel_setup
ta_require_cmd python3 python3

log() { cat "$CLUSTER_LOGDIR/slurmctld.log"; }
layout=(--exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2 -o /dev/null)
per_leaf() {
  local n; for n in $(sel_job_nodes "$1"); do sel_leaf "$n"; done |
    sort | uniq -c | awk '{print $1}' | sort -rn | tr '\n' ' ' | sed 's/ $//'
}
reconfigure() {
  local before; before=$(log | wc -l)
  cluster_run scontrol reconfigure
  # select_p_node_init logs one topology line per reconfigure.
  ta_wait_for 30 sh -c \
    "tail -n +$((before + 1)) '$CLUSTER_LOGDIR/slurmctld.log' | grep -q 'select/cons_tres_topoaware: .*topology'" ||
    ta_fail "no topology message after scontrol reconfigure"
  tail -n +$((before + 1)) "$CLUSTER_LOGDIR/slurmctld.log" | grep 'select/cons_tres_topoaware: ' | sed 's/^/# log: /'
  NEWLOG=$(tail -n +$((before + 1)) "$CLUSTER_LOGDIR/slurmctld.log")
}

SEL_NO_TOPO=1 sel_start select/cons_tres_topoaware
log |
  grep -q "select/cons_tres_topoaware: no topology: $CLUSTER_DIR/topology.json: .*placed by plain select/cons_tres" ||
  ta_fail "missing topology.json: the log does not say so"
j=$(cluster_run sbatch --parsable "${layout[@]}" --wrap 'true')
[ "$(cluster_wait_job "$j" 60)" = COMPLETED ] || ta_fail "layout job without a topology did not complete"
grep -q "select/cons_tres_topoaware: JobId=$j.*no topology loaded; placed by plain select/cons_tres" <(log) ||
  ta_fail "the log does not say why layout job $j was placed by plain cons_tres"
k=$(cluster_run sbatch --parsable -N2 -o /dev/null --wrap 'true')
[ "$(cluster_wait_job "$k" 60)" = COMPLETED ] || ta_fail "plain job without a topology did not complete"
ta_pass "no topology file: clear error in the log, layout and plain jobs run"

foreign=$SEL_WORK/other-cluster.json
"${top_builddir:-.}/topoaware" generate fat-tree --leaves 4 --hosts-per-leaf 4 --host-prefix other --json "$foreign" \
  >/dev/null || ta_fail "topoaware generate (hosts other0001..) failed"
cp "$foreign" "$CLUSTER_DIR/topology.json"
reconfigure
j=$(cluster_run sbatch --parsable "${layout[@]}" --wrap 'true')
[ "$(cluster_wait_job "$j" 60)" = COMPLETED ] ||
  ta_fail "layout job $j did not complete with a topology that has none of slurmctld's nodes"
grep -qF "no topology: $CLUSTER_DIR/topology.json: it holds 0 of slurmctld's 16 nodes (slurmctld's nodes: n0001, \
n0002, n0003, ...; its 16 hosts: other0001, other0002, other0003, ...)" <<<"$NEWLOG" ||
  ta_fail "a topology without slurmctld's nodes: the log does not say so: $NEWLOG"
[ ! -e "$CLUSTER_DIR/state/topoaware-last-good-topology.json" ] ||
  ta_fail "a topology without slurmctld's nodes was kept as the last good copy"
# The status file books no topology, with the reason.
booked() {
  python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["topology"]; print(t["file"] + "|" + t["error"])' \
    "$CLUSTER_DIR/state/topoaware-status.json" 2>/dev/null
}
booked_none() { [[ $(booked) == "|it holds 0 of slurmctld's 16 nodes "* ]]; }
ta_wait_for 20 booked_none || ta_fail "the status file does not book the refused topology as none: '$(booked)'"
grep -q "select/cons_tres_topoaware: JobId=$j.*no topology loaded; placed by plain select/cons_tres" <(log) ||
  ta_fail "the log does not say that layout job $j was placed by plain cons_tres"
ta_pass "another cluster's topology (0 of 16 nodes): refused with names of both sides, layout job on plain cons_tres"

# Layout jobs pending while no topology is loaded are tested at every scheduling and backfill pass
# (bf_interval=5 s), and each test may log why it goes to plain cons_tres: the plugin's rate limit
# (plugins/common/ta_log_gate.h: per kind of line 10 at once, then one more every 30 s, what it holds
# back counted into the next line) keeps that bounded however many jobs wait. 300 jobs: more than
# the 256 slots of the per-job memory, with which a per-job rule alone logged every job at the first
# pass and those sharing a slot at every pass.
njobs=300
before=$(log | wc -l) start_s=$SECONDS
hold=$(cluster_run sbatch --parsable -N16 --exclusive -o /dev/null --wrap 'sleep 600')
cluster_wait_job "$hold" 60 RUNNING >/dev/null
# Eight sbatch at a time (each waits for its RPC); `wait` with their pids only: the daemons are this
# shell's children too.
submitting=()
for k in $(seq 1 $njobs); do
  cluster_run sbatch --parsable -J ta-pending "${layout[@]}" --wrap 'true' >/dev/null &
  submitting+=($!)
  [ "${#submitting[@]}" -lt 8 ] && [ "$k" -lt "$njobs" ] && continue
  wait "${submitting[@]}" || ta_fail "sbatch of a pending layout job failed"
  submitting=()
done
queued=$(cluster_run squeue -h -n ta-pending -t PENDING | wc -l)
[ "$queued" = "$njobs" ] || ta_fail "$queued of $njobs layout jobs pending"
held_line() { tail -n +$((before + 1)) "$CLUSTER_LOGDIR/slurmctld.log" | grep -q "no topology loaded; placed by plain \
select/cons_tres; [0-9]* more lines of this kind not logged in the last [0-9]* s"; }
ta_wait_for 60 held_line || true
lines=$(tail -n +$((before + 1)) "$CLUSTER_LOGDIR/slurmctld.log" | grep -c "no topology loaded; placed by plain" || true)
ta_note "$lines lines 'no topology loaded' for $njobs pending layout jobs in $((SECONDS - start_s)) s"
[ "$lines" -le 14 ] ||
  ta_fail "$lines lines 'no topology loaded' for $njobs pending layout jobs (the limit allows 10, then one per 30 s)"
held_line || ta_fail "no line says how many lines the rate limit held back"
cluster_run scancel "$hold"
cluster_run scancel -n ta-pending
none_left() { [ -z "$(cluster_run squeue -h -n ta-pending)" ]; }
ta_wait_for 60 none_left || ta_fail "the pending layout jobs did not end when cancelled"
cluster_wait_job "$hold" 60 >/dev/null
ta_pass "$njobs pending layout jobs without a topology: $lines log lines, the ones held back counted"

cp "$SEL_TOPO" "$CLUSTER_DIR/topology.json"
reconfigure
grep -q "topology $CLUSTER_DIR/topology.json loaded (16 hosts, sha256:" <<<"$NEWLOG" ||
  ta_fail "good file not loaded after reconfigure"
sel_busy n0001 n0005 n0009 n0010 n0013 n0014 n0015 n0016
b=$(cluster_run sbatch --parsable "${layout[@]}" --wrap 'sleep 600')
cluster_wait_job "$b" 60 RUNNING >/dev/null
[ "$(per_leaf "$b")" = "2 2" ] || ta_fail "after loading the topology, layout job got $(echo $(sel_job_nodes "$b"))"
cluster_run scancel "$b"; cluster_wait_job "$b" 60 >/dev/null
# (the copy is the canonical topology.json, as topoaware writes it: the same bytes here)
cmp -s "$CLUSTER_DIR/state/topoaware-last-good-topology.json" "$SEL_TOPO" ||
  ta_fail "no copy of the loaded topology in the state folder"
ta_pass "a topology file added later is loaded by scontrol reconfigure and used (2 + 2); a copy is kept in" \
  "StateSaveLocation"

for broken in corrupted empty other-cluster; do
  case $broken in
    corrupted) head -c 300 "$SEL_TOPO" >"$CLUSTER_DIR/topology.json" ;;
    empty) : >"$CLUSTER_DIR/topology.json" ;;
    other-cluster) cp "$foreign" "$CLUSTER_DIR/topology.json" ;;
  esac
  reconfigure
  # 22.05 keeps the topology in memory across scontrol reconfigure; from 23.11 reconfigure starts a
  # new slurmctld, which falls back to the copy of the last topology that loaded.
  grep -qE "cannot load topology $CLUSTER_DIR/topology.json: .*(keeping the previous topology|using the last \
topology that loaded, kept as $CLUSTER_DIR/state/topoaware-last-good-topology.json)" <<<"$NEWLOG" ||
    ta_fail "$broken topology: the log does not say it was refused and the last good one kept: $NEWLOG"
  kill -0 "$CLUSTER_CTLD_PID" || ta_fail "slurmctld died on a $broken topology file"
  b=$(cluster_run sbatch --parsable "${layout[@]}" --wrap 'sleep 600')
  cluster_wait_job "$b" 60 RUNNING >/dev/null
  [ "$(per_leaf "$b")" = "2 2" ] ||
    ta_fail "$broken topology: layout job got $(echo $(sel_job_nodes "$b")), expected the old topology's 2 + 2"
  cluster_run scancel "$b"; cluster_wait_job "$b" 60 >/dev/null
  cmp -s "$CLUSTER_DIR/state/topoaware-last-good-topology.json" "$SEL_TOPO" ||
    ta_fail "$broken topology: the last good copy in the state folder was replaced"
  ta_pass "$broken topology file + reconfigure: refused with a reason, the previous topology still places (2 + 2)"
done

# A slurmctld that starts on the other cluster's file (a restart here; from 23.11 every reconfigure
# above was one) places with the last good copy kept in StateSaveLocation.
before=$(log | wc -l)
cluster_restart_ctld
ta_wait_for 30 sh -c \
  "tail -n +$((before + 1)) '$CLUSTER_LOGDIR/slurmctld.log' | grep -q 'select/cons_tres_topoaware: .*topology'" ||
  ta_fail "no topology message after a restart of slurmctld"
NEWLOG=$(tail -n +$((before + 1)) "$CLUSTER_LOGDIR/slurmctld.log")
grep -q "cannot load topology $CLUSTER_DIR/topology.json: it holds 0 of slurmctld's 16 nodes .*; using the last \
topology that loaded, kept as $CLUSTER_DIR/state/topoaware-last-good-topology.json" <<<"$NEWLOG" ||
  ta_fail "restart on another cluster's topology: the log does not say the last good copy serves: $NEWLOG"
b=$(cluster_run sbatch --parsable "${layout[@]}" --wrap 'sleep 600')
cluster_wait_job "$b" 60 RUNNING >/dev/null
[ "$(per_leaf "$b")" = "2 2" ] ||
  ta_fail "restart on another cluster's topology: layout job got $(echo $(sel_job_nodes "$b")), expected 2 + 2"
cluster_run scancel "$b"; cluster_wait_job "$b" 60 >/dev/null
ta_pass "restart on another cluster's topology: the last good copy places (2 + 2)"
