#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The ring book on a real slurmctld: a job's rank order counts the running layout jobs' ring edges.
# Fabric: the recorded 4 leaves x 4 hosts fat tree of tests/fixtures/routes (cabling that does not
# follow host names, routed by OpenSM's ftree; 2 uplinks per leaf), read from its saved
# ibnetdiscover and dump_fts output by `topoaware discover --lfts`; 16 slurmd x 8 GPUs.
# Two jobs tp=8 dp=4, each on 2 hosts of leaf 1 and 2 hosts of leaf 2 (its DP ring enters each leaf
# once). Before any daemon starts, the test picks the node sets: of the 36 ways to share the two
# leaves, one where B's order alone (`topoaware plan`, the engine without other jobs) puts a ring
# edge on a cable that A's ring takes, both traced with `topoaware route` through the recorded
# tables. Then under select/cons_tres_topoaware (-w pins the nodes):
#  1. A runs first: its order is its order alone;
#  2. B beside it: its ring edges share fewer cables with A's than its order alone would;
#  3. slurmctld stopped (SIGTERM: it saves every job; a SIGKILL right after a job starts may lose
#     the job, tests/slurm_select_faults.sh covers that) and started again, then B cancelled and
#     submitted again on the same nodes: the same order as in 2 (the new slurmctld counted A again
#     from A's kept order at the first job begin; the log says so);
#  4. A and B cancelled, B again: its order alone (an ended job's edges are taken off);
#  5. RankOrder=alone in topoaware.conf (scontrol reconfigure): A, then B beside it, each get its
#     order alone; RankOrder=neighbours again, B submitted again beside A: the order of 2 (A, begun
#     while the book was not used, was booked all the same).
# Each job's batch step prints its hostfile ($TOPOAWARE_HOSTFILE): in the placed order every time.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
sel_setup
B=${top_builddir:-.}
FIX=${top_srcdir:-.}/tests/fixtures/routes
"$B/topoaware" discover --ibnetdiscover "$FIX/ft16-shuffled-ftree.ibnetdiscover" \
  --lfts "$FIX/ft16-shuffled-ftree.dump_fts" --json "$SEL_TOPO" >/dev/null 2>"$SEL_WORK/discover.err" ||
  ta_fail "discover of the recorded fabric failed: $(cat "$SEL_WORK/discover.err")"
"$B/topoaware" convert "$SEL_TOPO" -f tree >"$SEL_TOPOCONF"

# ring.py: the cables of a job's ring edges into the parts of its one segment (runs of one leaf
# group in the order), each traced from the part before it (the wrap-around included) with
# `topoaware route`, as (switch, output port) without the last hop down to the host.
cat >"$SEL_WORK/ring.py" <<'PY'
import itertools, json, subprocess, sys
topoaware, topo = sys.argv[1], sys.argv[2]
lg = {h["name"]: h["leaf_group"] for h in json.load(open(topo))["hosts"]}
routes = {}
def cables(src, dst):
    if (src, dst) not in routes:
        r = json.loads(subprocess.check_output([topoaware, "route", "-t", topo, src, dst, "--format", "json"]))
        if r["error"]:
            sys.exit("route %s -> %s: %s" % (src, dst, r["error"]))
        routes[src, dst] = [(h["switch"], h["out"]) for h in r["hops"][:-1]]
    return routes[src, dst]
def ring(order):
    parts = [list(g) for _, g in itertools.groupby(order, key=lambda h: lg[h])]
    out = []
    if len(parts) < 2:
        return out
    for q, part in enumerate(parts):
        pred = parts[q - 1]
        out += cables(min(pred), part[0])  # any host of the leaf: a switch forwards by destination
    return out
def alone(hosts):
    p = json.loads(subprocess.check_output([topoaware, "plan", "--topology", topo, "--tp", "8", "--dp", "4",
                                            "--gpus-per-node", "8", "--free", ",".join(hosts), "--format", "json"]))
    return [r["host"] for r in p["rank_order"]]
def shared(a, b):
    ca = set(ring(a))
    return sum(1 for c in ring(b) if c in ca)
if sys.argv[3] == "pick":
    leaf = {g: sorted(h for h in lg if lg[h] == g) for g in (0, 1)}
    for a0, a1 in itertools.product(itertools.combinations(leaf[0], 2), itertools.combinations(leaf[1], 2)):
        sa = list(a0 + a1)
        sb = [h for h in leaf[0] + leaf[1] if h not in sa]
        oa, ob = alone(sa), alone(sb)
        if shared(oa, ob) > 0:
            print(",".join(sa), ",".join(sb), ",".join(oa), ",".join(ob))
            break
    else:
        sys.exit("no split of leaves 1 and 2 where B alone shares a cable with A")
elif sys.argv[3] == "shared":  # shared ORDER_A ORDER_B
    print(shared(sys.argv[4].split(","), sys.argv[5].split(",")))
PY
ring() { python3 "$SEL_WORK/ring.py" "$B/topoaware" "$SEL_TOPO" "$@"; }
read -r SA SB OA OB_ALONE <<<"$(ring pick)" || ta_fail "picking the node sets failed"
ALONE_SHARED=$(ring shared "$OA" "$OB_ALONE")
ta_note "A on $SA (order alone $OA), B on $SB (order alone $OB_ALONE: $ALONE_SHARED of its ring's cables are A's)"

echo "LogLevel=verbose" >"$SEL_WORK/topoaware.conf"
sel_start select/cons_tres_topoaware --file "topoaware.conf=$SEL_WORK/topoaware.conf"
SEL_STATUS=$CLUSTER_DIR/state/topoaware-status.json
layout=(--exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --dp=4 -o "$SEL_WORK/%j.out")

# submit NODES: a layout job pinned to NODES, whose batch step prints its hostfile's nodes (for
# srun --distribution=arbitrary: they must be in the order its tasks get); prints its id once it runs.
submit() {
  local id
  id=$(cluster_run sbatch --parsable -w "$1" "${layout[@]}" \
    --wrap 'uniq "$TOPOAWARE_HOSTFILE" | paste -sd, -; sleep 900')
  cluster_wait_job "$id" 60 RUNNING >/dev/null || ta_fail "job $id on $1 did not start"
  echo "$id"
}
# order ID: the job's node order from the status file, once its hostfile (written by the batch
# step) says the same.
order() {
  local e o
  e=$(sel_entry_wait 30 "$1" '*|n*|n*|8|*') || ta_fail "job $1 has no placed entry"
  o=$(echo "$e" | cut -d'|' -f3)
  ta_wait_for 30 sh -c "[ -s '$SEL_WORK/$1.out' ]" || ta_fail "job $1 printed no hostfile"
  [ "$(head -1 "$SEL_WORK/$1.out")" = "$o" ] ||
    ta_fail "job $1: its hostfile's order $(cat "$SEL_WORK/$1.out") is not its placed order $o"
  echo "$o"
}

a=$(submit "$SA")
oa=$(order "$a")
[ "$oa" = "$OA" ] || ta_fail "A ran first and got order $oa, not its order alone $OA"
ta_pass "A (first job): its order alone, $oa"

b=$(submit "$SB")
ob=$(order "$b")
s=$(ring shared "$oa" "$ob")
[ "$s" -lt "$ALONE_SHARED" ] ||
  ta_fail "B beside A got order $ob, $s of its ring's cables A's (alone: $OB_ALONE, $ALONE_SHARED)"
ta_pass "B beside A: order $ob, $s of its ring's cables are A's (alone it would be $ALONE_SHARED)"

pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
kill -TERM "$pid"
ta_wait_for 30 sh -c "! kill -0 $pid 2>/dev/null" || ta_fail "slurmctld did not end on SIGTERM"
wait "$CLUSTER_CTLD_PID" 2>/dev/null || true
CLUSTER_CTLD_PID=""
rm -f "$SEL_STATUS"
cluster_restart_ctld
cluster_run scancel "$b"
cluster_wait_job "$b" 60 >/dev/null
b2=$(submit "$SB")
ob2=$(order "$b2")
[ "$ob2" = "$ob" ] ||
  ta_fail "after slurmctld's restart B got order $ob2, before it $ob (alone $OB_ALONE): A's edges not counted again"
grep -q "ring book of topology sha256:[0-9a-f]*: 1 running jobs' orders read (0 could not" "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "slurmctld did not log the ring book it built after the restart: $(grep 'ring book' "$CLUSTER_LOGDIR/slurmctld.log")"
ta_pass "after a restart of slurmctld: B again gets $ob2 (A's kept order counted: $(grep -o "ring book of .*" \
  "$CLUSTER_LOGDIR/slurmctld.log" | tail -1 | sed 's/sha256:[0-9a-f]*/.../'))"

cluster_run scancel "$a" "$b2"
cluster_wait_job "$a" 60 >/dev/null
cluster_wait_job "$b2" 60 >/dev/null
b3=$(submit "$SB")
ob3=$(order "$b3")
[ "$ob3" = "$OB_ALONE" ] || ta_fail "with A ended, B got order $ob3, not its order alone $OB_ALONE"
ta_pass "A ended: B alone again gets its order alone, $ob3"

# reconfigure LINE...: topoaware.conf, scontrol reconfigure, and the settings line that says it.
reconfigure() {
  local before mode
  before=$(wc -l <"$CLUSTER_LOGDIR/slurmctld.log")
  printf '%s\n' "$@" >"$CLUSTER_DIR/topoaware.conf"
  mode=$(printf '%s\n' "$@" | sed -n 's/.*RankOrder=\([a-z]*\).*/\1/p')
  cluster_run scontrol reconfigure
  ta_wait_for 30 sh -c "tail -n +$((before + 1)) '$CLUSTER_LOGDIR/slurmctld.log' | grep -q 'settings from .* RankOrder=${mode:-neighbours} '" ||
    ta_fail "no settings line with RankOrder=${mode:-neighbours} after scontrol reconfigure"
}
cluster_run scancel "$b3"
cluster_wait_job "$b3" 60 >/dev/null
reconfigure LogLevel=verbose RankOrder=alone
a4=$(submit "$SA")
oa4=$(order "$a4")
[ "$oa4" = "$OA" ] || ta_fail "RankOrder=alone: A got order $oa4, not its order alone $OA"
b4=$(submit "$SB")
ob4=$(order "$b4")
[ "$ob4" = "$OB_ALONE" ] || ta_fail "RankOrder=alone: B beside A got order $ob4, not its order alone $OB_ALONE"
ta_pass "RankOrder=alone: A and then B beside it get their orders alone ($oa4; $ob4)"
reconfigure LogLevel=verbose RankOrder=neighbours
cluster_run scancel "$b4"
cluster_wait_job "$b4" 60 >/dev/null
b5=$(submit "$SB")
ob5=$(order "$b5")
[ "$ob5" = "$ob" ] ||
  ta_fail "RankOrder=neighbours again: B beside A got order $ob5, not $ob as before (A's edges not in the book?)"
ta_pass "RankOrder=neighbours again: B beside A gets $ob5 again"
grep -iE 'fatal|segfault' "$CLUSTER_LOGDIR/slurmctld.log" && ta_fail "slurmctld logged a fatal error"
ta_pass "slurmctld ran through without a fatal error"
