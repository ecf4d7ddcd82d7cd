#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware defrag --apply on a real cluster: 16 nodes as 4 leaves x 4 (tests/lib/select_fabric.sh)
# under select/cons_tres_topoaware with job_submit/topoaware; requeued jobs wait out
# AuthInfo=cred_expire=5 (Slurm holds a requeued job that long; its default is 120 s).
#   1. --topo-migrate is refused at submit without --requeue (--no-requeue) and without --signal.
#   2. One-node jobs fill leaves 1 and 2 but two nodes each, and leaves 3 and 4: M (--tp=8 --dp=4,
#      one DP ring of 4 nodes, --topo-migrate --requeue --signal=B:USR1@10) must run 2 + 2 across
#      leaves 1 and 2; then the fillers of leaves 1 and 2 go and N (the same layout, no
#      --topo-migrate) runs 2 + 2 on the rest of them. Then leaf 3 is freed: an ideal block for one.
#   3. `topoaware defrag --json` lists both M and N as movable now onto leaf 3, only M applicable.
#   4. `topoaware defrag --apply` signals M's batch shell (its trap writes a checkpoint marker),
#      waits the checkpoint window, requeues it; M restarts on leaf 3 and its output shows both
#      starts (old nodes, checkpoint, new nodes). N stays where it was; every job still exists.
#   5. A second run finds nothing M may do (N did not opt in: exit 0, nothing moved).
#   6. A failed requeue: M2 (--topo-migrate) runs 2 + 2 where N was, then leaf 1 is freed; an
#      scontrol that refuses requeue (first in PATH) makes --apply exit 7 and say so, and M2 keeps
#      running on its nodes.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
sel_setup
ta_require_cmd python3 python3
b=$(cd "${top_builddir:-.}" && pwd)
jobsub=$b/plugins/job_submit/.libs/job_submit_topoaware.so
ta_require_built "$jobsub" "the --topo-migrate submit checks"
# One plugin folder with the select and job_submit plugins of this build.
mkdir "$SEL_WORK/plugins"
ln -s "$SEL_PLUGDIR/select_cons_tres_topoaware.so" "$SEL_WORK/plugins/"
ln -s "$jobsub" "$SEL_WORK/plugins/"
SEL_PLUGDIR=$SEL_WORK/plugins
defrag() { cluster_run "$b/topoaware" defrag "$@"; }
idle_is() { [ "$(cluster_run sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -eq "$1" ]; }

printf '%s\n' "StatusInterval=0" >"$SEL_WORK/topoaware.conf"
sel_start select/cons_tres_topoaware --file "topoaware.conf=$SEL_WORK/topoaware.conf" \
  --conf JobSubmitPlugins=topoaware --conf AuthInfo=cred_expire=5
STATUS=$CLUSTER_DIR/state/topoaware-status.json
layout=(--exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --dp=4 -t 30)

# 1. Submit-time checks.
if out=$(cluster_run sbatch --parsable "${layout[@]}" --topo-migrate --no-requeue --signal=B:USR1@10 \
  -o /dev/null --wrap 'sleep 60' 2>&1); then
  ta_fail "--topo-migrate --no-requeue was accepted (job $out)"
fi
grep -q 'topo-migrate.*cannot be requeued.*--requeue' <<<"$out" || ta_fail "no clear message without requeue: $out"
if out=$(cluster_run sbatch --parsable "${layout[@]}" --topo-migrate --requeue -o /dev/null \
  --wrap 'sleep 60' 2>&1); then
  ta_fail "--topo-migrate without --signal was accepted (job $out)"
fi
grep -q 'topo-migrate.*has no --signal' <<<"$out" || ta_fail "no clear message without --signal: $out"
ta_pass "--topo-migrate refused at submit without --requeue and without --signal, saying what to add"

# 2. M across leaves 1 and 2, N likewise, then leaf 3 free.
sel_busy n0003 n0004 n0007 n0008
fill12=("${SEL_BUSY_IDS[@]}")
sel_busy n0009 n0010 n0011 n0012 n0013 n0014 n0015 n0016
fill34=("${SEL_BUSY_IDS[@]}")
cat >"$SEL_WORK/m.sh" <<EOF
#!/bin/bash
# Restarts print where they run; USR1 (topoaware defrag's checkpoint signal) writes a marker.
echo "start \${SLURM_RESTART_COUNT:-0} \$SLURM_JOB_NODELIST"
trap 'echo "checkpoint \${SLURM_RESTART_COUNT:-0}"; touch "$SEL_WORK/M.ckpt.\${SLURM_RESTART_COUNT:-0}"' USR1
while :; do sleep 1; done
EOF
m=$(cluster_run sbatch --parsable "${layout[@]}" -J M --topo-migrate --requeue --signal=B:USR1@10 \
  --open-mode=append -o "$SEL_WORK/M.out" "$SEL_WORK/m.sh")
cluster_wait_job "$m" 60 RUNNING >/dev/null
[ "$(sel_job_nodes "$m" | tr '\n' ' ')" = "n0001 n0002 n0005 n0006 " ] ||
  ta_fail "premise: M runs on $(echo $(sel_job_nodes "$m")), expected n0001 n0002 n0005 n0006"
cluster_run scancel "${fill12[@]}"
for id in "${fill12[@]}"; do cluster_wait_job "$id" 60 >/dev/null; done
ta_wait_for 60 idle_is 4 || ta_fail "the nodes of leaves 1 and 2 did not become idle"
n=$(cluster_run sbatch --parsable "${layout[@]}" -J N -o /dev/null --wrap 'sleep 900')
cluster_wait_job "$n" 60 RUNNING >/dev/null
n_nodes=$(sel_job_nodes "$n" | tr '\n' ' ')
[ "$n_nodes" = "n0003 n0004 n0007 n0008 " ] || ta_fail "premise: N runs on $n_nodes, expected n0003 n0004 n0007 n0008"
cluster_run scancel "${fill34[@]:0:4}"
for id in "${fill34[@]:0:4}"; do cluster_wait_job "$id" 60 >/dev/null; done
ta_wait_for 60 idle_is 4 ||
  ta_fail "leaf 3 did not become idle"
ta_wait_for 30 python3 -c "
import json,sys
st={j['job_id']:j for j in json.load(open('$STATUS'))['jobs']}
sys.exit(0 if st.get($m,{}).get('migrate') and $n in st else 1)" ||
  ta_fail "the status file does not list M with its migrate entry and N: $(cat "$STATUS")"
ta_pass "M ($m, --topo-migrate) and N ($n) both run 2 + 2 across leaves 1 and 2; leaf 3 is free"

# 3. The plan.
defrag --json >"$SEL_WORK/plan.json" 2>"$SEL_WORK/plan.err" ||
  ta_fail "defrag --json failed: $(cat "$SEL_WORK/plan.err")"
python3 - "$SEL_WORK/plan.json" "$m" "$n" <<'EOF' || ta_fail "plan: $(cat "$SEL_WORK/plan.json")"
import json, sys
p = json.load(open(sys.argv[1])); m, n = int(sys.argv[2]), int(sys.argv[3])
rel = {r["job_id"]: r for r in p["relocations"]}
assert p["above_ideal"] == 2 and set(rel) == {m, n}, rel.keys()
for j in (m, n):
    assert rel[j]["when"] == "now" and len(rel[j]["steps"]) == 1, rel[j]
    s = rel[j]["steps"][0]
    assert s["to"] == "n[0009-0012]" and s["predicted"] == "ideal", s
    assert s["cost_after"]["ratio_to_ideal"] < s["cost_now"]["ratio_to_ideal"], s
assert rel[m]["applicable"] and rel[m]["steps"][0]["signal"] == 10 and rel[m]["steps"][0]["signal_batch"], rel[m]
assert rel[m]["steps"][0]["time_left_s"] > 0, rel[m]
assert not rel[n]["applicable"] and rel[n]["steps"][0]["refusal"] == "not opted in (--topo-migrate)", rel[n]
EOF
defrag >"$SEL_WORK/plan.txt" 2>&1 || ta_fail "defrag (text) failed: $(cat "$SEL_WORK/plan.txt")"
grep -q "move job $m: n\[0001-0002,0005-0006\] -> n\[0009-0012\]" "$SEL_WORK/plan.txt" ||
  ta_fail "text plan: $(cat "$SEL_WORK/plan.txt")"
ta_pass "defrag lists M and N for leaf 3 (ideal, lower hop-bytes), only M applicable"

# 3b. Measured congestion as the trigger: a report of topoaware monitor (written here: this cluster
# has no fabric to measure) finds M's traffic congested and N's not: only M is proposed, and the
# notes say why N is not. A file that is not such a report is refused.
cat >"$SEL_WORK/congestion.json" <<JSON
{"interval_s": 10, "ports_sampled": 48, "ports_measured": 48, "directions": [],
 "jobs": [{"job": $m, "known": true, "cross_leaf_bytes": 4e9, "congested_bytes": 2e9, "congested_share": 0.5,
           "hot_directions": ["leaf001 p5 -> spine01 p1"]},
          {"job": $n, "known": true, "cross_leaf_bytes": 4e9, "congested_bytes": 2e8, "congested_share": 0.05,
           "hot_directions": []}],
 "problems": []}
JSON
defrag --json --congestion "$SEL_WORK/congestion.json" >"$SEL_WORK/plan-c.json" 2>"$SEL_WORK/plan-c.err" ||
  ta_fail "defrag --congestion failed: $(cat "$SEL_WORK/plan-c.err")"
python3 - "$SEL_WORK/plan-c.json" "$m" "$n" <<'EOF' || ta_fail "plan with --congestion: $(cat "$SEL_WORK/plan-c.json")"
import json, sys
p = json.load(open(sys.argv[1])); m, n = int(sys.argv[2]), int(sys.argv[3])
assert [r["job_id"] for r in p["relocations"]] == [m], p["relocations"]
notes = " | ".join(p["notes"])
assert f"job {m}: measured 50% of its cross-leaf bytes on congested cables" in notes, notes
assert f"job {n}: measured 5% of its cross-leaf bytes on congested cables, below 20%: not proposed" in notes, notes
EOF
defrag --json --congestion "$SEL_WORK/congestion.json" --min-congested-share 0.01 >"$SEL_WORK/plan-c2.json" 2>&1 &&
  python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))["relocations"]) == 2' "$SEL_WORK/plan-c2.json" ||
  ta_fail "defrag --min-congested-share 0.01 does not propose both: $(cat "$SEL_WORK/plan-c2.json")"
rc=0
defrag --congestion "$STATUS" >/dev/null 2>"$SEL_WORK/plan-c3.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q 'not a report of topoaware monitor' "$SEL_WORK/plan-c3.err" ||
  ta_fail "defrag --congestion with the status file: rc $rc, $(cat "$SEL_WORK/plan-c3.err")"
ta_pass "defrag --congestion proposes only the job measured congested (M: 50%; N: 5% < 20%), says why"

# 4. --apply.
t0=$SECONDS
set +e
defrag --apply --checkpoint-wait 3 --restart-wait 150 --log "$SEL_WORK/apply.log" >"$SEL_WORK/apply.out" \
  2>"$SEL_WORK/apply.err"
rc=$?
set -e
took=$((SECONDS - t0))
[ "$rc" -eq 0 ] || ta_fail "defrag --apply exited $rc: $(cat "$SEL_WORK/apply.err")"
for step in "job $m: move from n\[0001-0002,0005-0006\] to n\[0009-0012\]" "job $m: scancel --signal=10 --batch $m" \
  "job $m: waiting 3 s for its checkpoint" "job $m: scontrol requeue $m" \
  "job $m: running again on n\[0009-0012\] (the planned block)"; do
  grep -q "$step" "$SEL_WORK/apply.log" || ta_fail "apply log lacks '$step': $(cat "$SEL_WORK/apply.log")"
done
! grep -q "job $n:" "$SEL_WORK/apply.log" || ta_fail "apply touched N: $(cat "$SEL_WORK/apply.log")"
[ -e "$SEL_WORK/M.ckpt.0" ] || ta_fail "M's trap wrote no checkpoint marker: $(cat "$SEL_WORK/M.out")"
[ "$(sel_job_nodes "$m" | tr '\n' ' ')" = "n0009 n0010 n0011 n0012 " ] ||
  ta_fail "M runs on $(echo $(sel_job_nodes "$m"))"
ta_wait_for 30 grep -q '^start 1 ' "$SEL_WORK/M.out" || ta_fail "M's output shows no restart: $(cat "$SEL_WORK/M.out")"
python3 - "$SEL_WORK/M.out" <<'EOF' || ta_fail "M's output: $(cat "$SEL_WORK/M.out")"
import sys
lines = [l.split() for l in open(sys.argv[1]) if l.strip()]
assert lines[0] == ["start", "0", "n[0001-0002,0005-0006]"], lines
assert ["checkpoint", "0"] in lines and lines.index(["checkpoint", "0"]) > 0, lines
assert lines[-1] == ["start", "1", "n[0009-0012]"], lines
EOF
[ "$(cluster_job_state "$n")" = RUNNING ] && [ "$(sel_job_nodes "$n" | tr '\n' ' ')" = "$n_nodes" ] ||
  ta_fail "N moved or stopped: $(cluster_job_state "$n") on $(echo $(sel_job_nodes "$n"))"
for id in "$m" "$n" "${fill34[@]:4}"; do
  [ "$(cluster_job_state "$id")" = RUNNING ] || ta_fail "job $id is $(cluster_job_state "$id"), not RUNNING"
done
ta_pass "defrag --apply: M signalled (checkpoint written), requeued and restarted on leaf 3 in ${took} s;" \
  "its output shows both starts; N untouched; all $((2 + ${#fill34[@]} - 4)) running jobs still run"
ta_note "apply log:"; sed 's/^/#   /' "$SEL_WORK/apply.log"

# 5. Nothing left for jobs that opted in.
defrag --apply --checkpoint-wait 1 --restart-wait 10 >"$SEL_WORK/apply2.out" 2>"$SEL_WORK/apply2.err" ||
  ta_fail "second defrag --apply exited $?: $(cat "$SEL_WORK/apply2.err")"
grep -q "nothing to move" "$SEL_WORK/apply2.err" || ta_fail "second apply: $(cat "$SEL_WORK/apply2.err")"
[ "$(sel_job_nodes "$n" | tr '\n' ' ')" = "$n_nodes" ] || ta_fail "N moved on the second run"
ta_pass "a second --apply moves nothing: N (no --topo-migrate) stays on $n_nodes"

# 6. A requeue that fails leaves the job running and is reported.
sel_busy n0001 n0002 n0005 n0006
fill_b=("${SEL_BUSY_IDS[@]}")
cluster_run scancel "$n"
cluster_wait_job "$n" 60 >/dev/null
ta_wait_for 60 idle_is 4 || ta_fail "N's nodes did not become idle"
m2=$(cluster_run sbatch --parsable "${layout[@]}" -J M2 --topo-migrate --requeue --signal=B:USR1@5 \
  --open-mode=append -o "$SEL_WORK/M2.out" "$SEL_WORK/m.sh")
cluster_wait_job "$m2" 60 RUNNING >/dev/null
m2_nodes=$(sel_job_nodes "$m2" | tr '\n' ' ')
[ "$m2_nodes" = "n0003 n0004 n0007 n0008 " ] || ta_fail "premise: M2 runs on $m2_nodes"
cluster_run scancel "${fill_b[0]}" "${fill_b[1]}"
for id in "${fill_b[0]}" "${fill_b[1]}"; do cluster_wait_job "$id" 60 >/dev/null; done
ta_wait_for 60 idle_is 2 || ta_fail "n0001 and n0002 did not become idle"
ta_wait_for 30 python3 -c "
import json,sys
st={j['job_id']:j for j in json.load(open('$STATUS'))['jobs']}
sys.exit(0 if st.get($m2,{}).get('migrate') else 1)" || ta_fail "the status file lacks M2's migrate entry"
real=$(cluster_run bash -c 'command -v scontrol')
mkdir "$SEL_WORK/fakebin"
{
  echo '#!/bin/bash'
  echo '# scontrol that refuses requeue (as slurmctld does for a job it cannot requeue), otherwise the real one.'
  echo 'if [ "$1" = requeue ]; then echo "scontrol: error: Requeue of JobId=$2 refused (test)" >&2; exit 1; fi'
  echo "exec '$real' \"\$@\""
} >"$SEL_WORK/fakebin/scontrol"
chmod +x "$SEL_WORK/fakebin/scontrol"
set +e
cluster_run env PATH="$SEL_WORK/fakebin:$PATH" "$b/topoaware" defrag --apply --checkpoint-wait 1 --restart-wait 30 \
  >"$SEL_WORK/apply3.out" 2>"$SEL_WORK/apply3.err"
rc=$?
set -e
[ "$rc" -eq 7 ] || ta_fail "defrag --apply with a failing requeue exited $rc, not 7: $(cat "$SEL_WORK/apply3.err")"
grep -q "job $m2: move from n\[0003-0004,0007-0008\] to n\[0001-0004\]" "$SEL_WORK/apply3.err" ||
  ta_fail "apply did not plan M2 onto leaf 1: $(cat "$SEL_WORK/apply3.err")"
grep -qF "job $m2: requeue failed (scontrol: error: Requeue of JobId=$m2 refused (test)); the job keeps running" \
  "$SEL_WORK/apply3.err" || ta_fail "apply did not report the failed requeue: $(cat "$SEL_WORK/apply3.err")"
sleep 3
[ "$(cluster_job_state "$m2")" = RUNNING ] && [ "$(sel_job_nodes "$m2" | tr '\n' ' ')" = "$m2_nodes" ] ||
  ta_fail "M2 is $(cluster_job_state "$m2") on $(echo $(sel_job_nodes "$m2")) after the failed requeue"
[ "$(grep -c '^start' "$SEL_WORK/M2.out")" -eq 1 ] || ta_fail "M2 restarted: $(cat "$SEL_WORK/M2.out")"
ta_pass "a failed requeue: exit 7, reported, M2 keeps running on $m2_nodes"
