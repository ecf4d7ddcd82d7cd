#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Placement on a real slurmctld: 16 nodes as 4 leaves x 4 (generated topology.json, topology/tree
# with the matching topology.conf), 8 GPUs per node, the same sequence of jobs under stock
# select/cons_tres and under select/cons_tres_topoaware:
#   busy nodes leave 3, 3, 2 and 0 free nodes on leaves 1..4;
#   A: a job without a layout (-N4 --exclusive) must get exactly the nodes cons_tres gives it;
#   B: --tp=8 --pp=2 --dp=2 -N4 (two DP rings of 2 nodes): stock tree best-fit takes 3 + 1 and
#      splits a ring (asserted, so the premise is checked); topoaware takes 2 + 2, both rings on
#      one leaf each.
# Then, under topoaware only: prefer runs at once on a fragmented free set; strict waits (reason
# Resources, the log says why) until an ideal block frees, then runs on it; strict with a short
# --topo-max-wait runs on the best available once the wait is over (backfill's will-run answer
# is honoured: it starts by itself, no other event needed).
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
sel_setup

leaf_counts() { # node names in file $1 -> "3 1" (nodes per leaf, descending)
  local n; while read -r n; do sel_leaf "$n"; done <"$1" |
    sort | uniq -c | awk '{print $1}' | sort -rn | tr '\n' ' ' | sed 's/ $//'
}

# scenario TAG SELECTTYPE [sel_start args]: the cluster stays up (the caller stops it).
scenario() {
  local tag=$1 sel=$2 a b
  shift 2
  sel_start "$sel" "$@"
  sel_busy n0001 n0005 n0009 n0010 n0013 n0014 n0015 n0016
  a=$(cluster_run sbatch --parsable --exclusive -N4 -o /dev/null --wrap 'sleep 600')
  cluster_wait_job "$a" 60 RUNNING >/dev/null
  sel_job_nodes "$a" >"$SEL_WORK/A.$tag"
  cluster_run scancel "$a"
  cluster_wait_job "$a" 60 >/dev/null
  b=$(cluster_run sbatch --parsable --exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2 \
    -o /dev/null --wrap 'sleep 600')
  cluster_wait_job "$b" 60 RUNNING >/dev/null
  sel_job_nodes "$b" >"$SEL_WORK/B.$tag"
  SEL_B=$b
  ta_note "$sel: A (no layout) got $(echo $(cat "$SEL_WORK/A.$tag"));" \
    "B (tp=8 pp=2 dp=2) got $(echo $(cat "$SEL_WORK/B.$tag"))"
}

# A subshell runs no EXIT trap of its parent: stop its cluster whichever way it ends.
( trap cluster_stop EXIT; scenario stock select/cons_tres )
[ "$(leaf_counts "$SEL_WORK/B.stock")" = "3 1" ] ||
  ta_fail "premise: stock cons_tres + topology/tree gave B $(echo $(cat "$SEL_WORK/B.stock"))" \
    "(per leaf: $(leaf_counts "$SEL_WORK/B.stock")), expected 3 + 1"
ta_pass "stock cons_tres + topology/tree: B on 3 + 1 nodes, one DP ring split (the premise holds)"

# LogLevel=debug: the decisions' debug lines (the will-run check at the end reads them).
echo "LogLevel=debug" >"$SEL_WORK/topoaware.conf"
scenario topo select/cons_tres_topoaware --file "topoaware.conf=$SEL_WORK/topoaware.conf"
grep -q 'select/cons_tres_topoaware: topology .*topology.json loaded (16 hosts' "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "slurmctld did not log the topology it loaded"
cmp -s "$SEL_WORK/A.stock" "$SEL_WORK/A.topo" ||
  ta_fail "job without a layout: cons_tres gave $(echo $(cat "$SEL_WORK/A.stock"))," \
    "topoaware $(echo $(cat "$SEL_WORK/A.topo"))"
ta_pass "a job without a layout gets the same nodes as under cons_tres: $(echo $(cat "$SEL_WORK/A.topo"))"
[ "$(leaf_counts "$SEL_WORK/B.topo")" = "2 2" ] ||
  ta_fail "topoaware gave B $(echo $(cat "$SEL_WORK/B.topo")) (per" \
    "leaf: $(leaf_counts "$SEL_WORK/B.topo")), expected 2 + 2"
ta_pass "topoaware: B on 2 + 2 nodes, each DP ring inside one leaf"

# 4 nodes are free now, on leaves holding 1 + 3 or 1 + 1 + 2 of them (B took 2 + 2 from 3, 3, 2):
# no block keeps both DP rings inside one leaf each.
layout=(--exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2 -o /dev/null)
cluster_run sinfo -h -N -t idle -o '%N' | sort -u >"$SEL_WORK/free"
[ "$(wc -l <"$SEL_WORK/free")" -eq 4 ] || ta_fail "expected 4 idle nodes, sinfo says: $(echo $(cat "$SEL_WORK/free"))"
case $(leaf_counts "$SEL_WORK/free") in
  "3 1"|"2 1 1") ;;
  *) ta_fail "free nodes $(echo $(cat "$SEL_WORK/free")): an ideal block exists, the test needs none" ;;
esac
d=$(cluster_run sbatch --parsable "${layout[@]}" --topo-mode=prefer --wrap 'sleep 600')
cluster_wait_job "$d" 30 RUNNING >/dev/null || ta_fail "prefer job did not start at once"
sel_job_nodes "$d" >"$SEL_WORK/D"
cmp -s "$SEL_WORK/D" "$SEL_WORK/free" ||
  ta_fail "prefer job got $(echo $(cat "$SEL_WORK/D")), expected the free nodes $(echo $(cat "$SEL_WORK/free"))"
ta_pass "prefer: runs at once on the best available ($(leaf_counts "$SEL_WORK/D"))"
cluster_run scancel "$d"; cluster_wait_job "$d" 60 >/dev/null

c=$(cluster_run sbatch --parsable "${layout[@]}" --topo-mode=strict --topo-max-wait=30m --wrap 'sleep 600')
sleep 15 # the main scheduler and at least two backfill cycles (bf_interval=5)
rec=$(cluster_run scontrol -o show job "$c")
grep -q 'JobState=PENDING' <<<"$rec" || ta_fail "strict job without an ideal block is not pending: $rec"
grep -q 'Reason=Resources' <<<"$rec" || ta_fail "strict job pending for another reason: $rec"
grep -q "select/cons_tres_topoaware: JobId=$c (strict, 4 nodes x 8 GPUs) waits: " "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "the log does not say why strict job $c waits"
ta_pass "strict: pending (Resources) while no ideal block is free; the log says why"
cluster_run scancel "$SEL_B"
cluster_wait_job "$c" 90 RUNNING >/dev/null || ta_fail "strict job did not start once an ideal block was free"
sel_job_nodes "$c" >"$SEL_WORK/C"
[ "$(leaf_counts "$SEL_WORK/C")" = "2 2" ] || ta_fail "strict job got $(echo $(cat "$SEL_WORK/C")), expected 2 + 2"
ta_pass "strict: runs on an ideal block (2 + 2) as soon as one frees"

# A 20 s max wait: pending at first, then best available, started by
# the scheduler on its own (backfill's will-run answer is the end of the wait).
t0=$SECONDS
e=$(cluster_run sbatch --parsable "${layout[@]}" --topo-mode=strict --topo-max-wait=20s --wrap 'sleep 600')
sleep 5
[ "$(cluster_job_state "$e")" = PENDING ] || ta_fail "strict job with max wait 20 s started before the wait was over"
cluster_wait_job "$e" 120 RUNNING >/dev/null || ta_fail "strict job did not start after its max wait"
waited=$((SECONDS - t0))
[ "$waited" -ge 18 ] || ta_fail "strict job started after $waited s, before its 20 s max wait"
sel_job_nodes "$e" >"$SEL_WORK/E"
# Whatever leaves C took, the 4 free nodes are 1 + 1 + 2 or 3 + 1: no ideal block, so E got them.
case $(leaf_counts "$SEL_WORK/E") in
  "2 1 1"|"3 1") ;;
  *) ta_fail "strict job after max wait got $(echo $(cat "$SEL_WORK/E"))" ;;
esac
ta_pass "strict --topo-max-wait=20s: waited $waited s, then ran on the best available ($(leaf_counts "$SEL_WORK/E"))"

# Backfill's will-run of a layout job that cannot start now plans it on the block that frees first,
# where cons_tres's own will-run would look, with one cons_tres will-run: every node busy, the jobs
# of leaf 4 end first (3 min), then leaf 3 (6), leaf 2 (8), leaf 1 (10). The plan is an ideal block
# on leaf 4 (the decision's debug line and SchedNodeList say so), not plain cons_tres's nodes after
# blocks tried as if every node were free (leaves 1-3 first, each later than plain's answer).
# n0001's job (3 min, like leaf 4's) starts 20 s after leaf 4's: its end is the last of the first
# batch of job ends cons_tres's will-run frees (below), ahead of leaf 3's.
ids=$(cluster_run squeue -h -o %i | tr '\n' ' ')
# shellcheck disable=SC2086
[ -z "${ids// /}" ] || cluster_run scancel $ids
for id in $ids; do cluster_wait_job "$id" 60 >/dev/null; done
busy_job() { # node limit_minutes -> job id
  cluster_run sbatch --parsable --exclusive -w "$(printf 'n%04d' "$1")" -N1 -t "$2" -J busy -o /dev/null \
    --wrap 'sleep 900'
}
busy=()
for n in $(seq 13 16) $(seq 2 12); do
  busy+=("$(busy_job "$n" $((n > 12 ? 3 : n > 8 ? 6 : n > 4 ? 8 : 10)))")
done
for id in "${busy[@]}"; do cluster_wait_job "$id" 60 RUNNING >/dev/null; done
sleep 20
n1=$(busy_job 1 3)
cluster_wait_job "$n1" 60 RUNNING >/dev/null
f=$(cluster_run sbatch --parsable --exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --dp=4 \
  --topo-mode=prefer -o /dev/null --wrap 'sleep 60')
pat="select/cons_tres_topoaware: JobId=$f: will-run prefer: 1 blocks tried, answered; start [0-9]* on an ideal block"
deadline=$((SECONDS + 40))
until grep -q "$pat" "$CLUSTER_LOGDIR/slurmctld.log"; do
  [ "$SECONDS" -lt "$deadline" ] ||
    ta_fail "no will-run answer of one ideal block for layout job $f:" \
      "$(grep "JobId=$f: will-run" "$CLUSTER_LOGDIR/slurmctld.log" | tail -4)"
  sleep 1
done
grep -q "JobId=$f: will-run future (+[0-9]* s) block: ideal" "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "the will-run block of job $f was not found at a job end: $(grep "JobId=$f: will-run" "$CLUSTER_LOGDIR/slurmctld.log" | tail -4)"
rec=$(cluster_run scontrol -o show job "$f")
sched=$(sed -n 's/.* SchedNodeList=\([^ ]*\) .*/\1/p' <<<"$rec")
[ "$sched" = "n[0013-0016]" ] ||
  ta_fail "backfill planned job $f on '$sched', expected leaf 4 (n[0013-0016]), whose jobs end first: $rec"
ta_pass "will-run: one cons_tres will-run, planned on the leaf that frees first ($sched)"

# When: the start plain cons_tres's will-run gives a job that fits once leaf 4's jobs end, so that
# backfill plans the block when stock Slurm would. 22.05 .. 24.11 free the running jobs in batches
# of ends (the first up to 30-60 s after the first end) and answer with the last end of the batch
# after which the job fits: here n0001's (tests/test_cons_start.c has the rule by hand). 25.05+
# answer with the last end of a job on the nodes chosen: leaf 4's last.
end_s() { date -d "$(cluster_run scontrol -o show job "$1" | sed -n 's/.* EndTime=\([^ ]*\) .*/\1/p')" +%s; }
leaf4_first=$(for id in "${busy[@]:0:4}"; do end_s "$id"; done | sort -n | head -1)
leaf4_last=$(for id in "${busy[@]:0:4}"; do end_s "$id"; done | sort -n | tail -1)
n1_end=$(end_s "$n1")
[ $((n1_end - leaf4_first)) -le 30 ] && [ "$n1_end" -gt "$leaf4_last" ] ||
  ta_fail "premise: n0001's job ends at $n1_end, leaf 4's at $leaf4_first .. $leaf4_last (want n0001's" \
    "after leaf 4's and within 30 s of the first)"
release=${TOPOAWARE_SLURM_RELEASE:-$(cluster_run scontrol --version | awk '{print $2}')}
if [ "$(printf '%s\n' "$release" 25.05 | sort -V | head -1)" = 25.05 ]; then
  want=$leaf4_last what="leaf 4's last job end (25.05+)"
else
  want=$n1_end what="the end of n0001's job, the last of cons_tres's first batch of ends ($release)"
fi
start=$(grep "$pat" "$CLUSTER_LOGDIR/slurmctld.log" | tail -1 | sed -n 's/.*answered; start \([0-9]*\) .*/\1/p')
[ "$start" = "$want" ] ||
  ta_fail "will-run of job $f answered start $start, expected $want: $what (leaf 4 frees at $leaf4_last)"
planned=$(date -d "$(cluster_run scontrol -o show job "$f" | sed -n 's/.* StartTime=\([^ ]*\) .*/\1/p')" +%s)
[ "$planned" = "$want" ] || ta_fail "backfill planned job $f at $planned, expected $want: $what"
ta_pass "will-run: the block is planned when cons_tres would plan the job: $what"
