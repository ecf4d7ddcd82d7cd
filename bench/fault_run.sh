#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Reliability under faults, measured (bench/README.md "Faults"; results in bench/RESULTS.md). The whole
# install (select/cons_tres_topoaware with topology.json, spank_topoaware in plugstack.conf,
# JobSubmitPlugins=topoaware; as bench/slurm_replay.sh's `whole` run) on a localhost cluster of 64 slurmd
# (8 leaves x 8, 8 GPUs each), then four faults, one after another:
#   a  slurmctld killed -9 in the middle of a burst of layout job submissions (select_p_job_test calls
#      in flight), restarted on its state while the submitters go on;
#   b  a slurmd killed -9 under a running 16-node layout job (not its batch host), started again once
#      slurmctld has marked the node down;
#   c  topology.json replaced by a truncated file, then by another valid topology (a different fabric
#      of the same hosts), `scontrol reconfigure` after each, with 1,000 layout jobs pending behind a
#      job that holds every node; then the holder ends and the 1,000 jobs run;
#   d  `topoaware discover --json` walked again and again over an ibsim fabric (the same 8 x 8 tree)
#      while leaf-spine cables are unlinked and relinked through ibsim's console.
# Jobs are accounted without slurmdbd: every id that sbatch returned (with the job's unique name) must
# be found again in slurmctld's records (MinJobAge keeps finished jobs there for an hour; they are
# saved in StateSaveLocation and survive the restart) and end COMPLETED. The topology in use is read
# from the plugin's status file (topology.hash) and its log lines. Prints one table row per fault and
# exits 1 if an invariant fails:
#   a        no job acknowledged after the restarted slurmctld started lost (id and name found
#            again) or left unfinished, and no lost job older than one found again: a slurmctld
#            killed -9 forgets the jobs it acknowledged since its last state save, its newest
#            (Slurm's own recovery, stock Slurm's too; the table counts them);
#   b, c     no job lost, every job COMPLETED;
#   a, b, c  slurmctld never died on its own, the topology in use the expected one after the fault
#            (a: the same; c: the previous one kept after the truncated file, the new one after the
#            valid one);
#   d        every file discover left parses with all 64 hosts; a walk that failed left the previous
#            file byte for byte; once the cables are back, a walk gives the first walk's hash again.
# Times: a, slurmctld answering after its restart and the topology in place; b, the node marked down,
# back idle after its slurmd returns, the job running again; c, each reconfigure RPC and the queue
# drained; d, walks, their durations and the first clean walk after the last relink.
#
# usage: bench/fault_run.sh [--only a,b,c,d] [--burst N] [--pending N] [--flaps N] [--out DIR]
#   --burst N    layout jobs submitted in fault a (default 200; slurmctld is killed after about a third)
#   --pending N  layout jobs pending in fault c (default 1000)
#   --flaps N    cable flaps in fault d (default 40)
#   --out DIR    logs, the table (default $top_builddir/bench/fault-results)
# Root; Debian's slurmctld/slurmd, the plugins (configure --with-slurm-source), ibsim-utils and
# libumad2sim0 (fault d). Not a test: `make bench-fault` (BENCH_FAULT_ARGS="...").
set -euo pipefail
trap 'echo "fault_run.sh: line $LINENO: exit status $?" >&2' ERR
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir/_build}"
# shellcheck source=tests/lib/slurm_cluster.sh
. "$top_srcdir/tests/lib/slurm_cluster.sh"
# shellcheck source=tools/lib/ibsim.sh
. "$top_srcdir/tools/lib/ibsim.sh"

ONLY=a,b,c,d BURST=200 PENDING=1000 FLAPS=40 OUT=""
while [ $# -gt 0 ]; do
  case $1 in
    --only) ONLY=$2; shift ;;
    --burst) BURST=$2; shift ;;
    --pending) PENDING=$2; shift ;;
    --flaps) FLAPS=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fault_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "fault_run.sh: needs root (slurmctld, slurmd, device files)" >&2; exit 2; }
B=$(cd "$top_builddir" && pwd)
BIN=$B/topoaware SELDIR=$B/plugins/select/.libs
SPANK=$B/plugins/spank/.libs/spank_topoaware.so JOBSUB=$B/plugins/job_submit/.libs/job_submit_topoaware.so
for f in "$BIN" "$SELDIR/select_cons_tres_topoaware.so" "$SPANK" "$JOBSUB"; do
  [ -e "$f" ] || { echo "fault_run.sh: $f not built (configure --with-slurm-source)" >&2; exit 2; }
done
OUT=${OUT:-$B/bench/fault-results}
rm -rf "$OUT"
mkdir -p "$OUT"
echo '*' >"$OUT/.gitignore"
OUT=$(cd "$OUT" && pwd)
chmod 755 "$OUT"
log() { echo "[$(date +%H:%M:%S)] $*"; }
ms() { date +%s%3N; }
want() { [[ ",$ONLY," == *",$1,"* ]]; }

ROWS=() FAILED=()
# row FAULT WHAT RESULT: one line of the table
row() { ROWS+=("$(printf '%-2s %-70s %s' "$1" "$2" "$3")"); echo "${ROWS[-1]}"; }
bad() { FAILED+=("$1: $2"); echo "INVARIANT FAILED: $1: $2" >&2; }

# ---- the fabric, its second valid version, the whole install's files ---------------------------
"$BIN" generate fat-tree --leaves 8 --hosts-per-leaf 8 --uplinks 4 --spines 4 --json "$OUT/topology.json" \
  --net "$OUT/fabric.net" >/dev/null
"$BIN" generate fat-tree --leaves 8 --hosts-per-leaf 8 --uplinks 4 --spines 2 --json "$OUT/topology-b.json" >/dev/null
"$BIN" convert "$OUT/topology.json" -f tree -o "$OUT/topology.conf"
hash_of() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hash"])' "$1" 2>/dev/null || echo "?"; }
HASH_A=$(hash_of "$OUT/topology.json") HASH_B=$(hash_of "$OUT/topology-b.json")
[ "$HASH_A" != "$HASH_B" ] || { echo "fault_run.sh: the two topologies have one hash" >&2; exit 1; }
mkdir -p "$OUT/spank-state" "$OUT/plugins"
chmod 0755 "$OUT/spank-state"
echo "required $SPANK state_dir=$OUT/spank-state" >"$OUT/plugstack.conf"
ln -sf "$SELDIR/select_cons_tres_topoaware.so" "$JOBSUB" "$OUT/plugins/"
echo "StatusInterval=1" >"$OUT/topoaware.conf"

# ---- the cluster --------------------------------------------------------------------------------
ctld_log() { cat "$CLUSTER_LOGDIR/slurmctld.log"; }
status_hash() {
  python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["topology"]; print(t["hash"], t.get("error", "") != "")' \
    "$CLUSTER_DIR/state/topoaware-status.json" 2>/dev/null || echo "? ?"
}
# All job records: "id name state" per line.
records() {
  cluster_run scontrol -o show job 2>/dev/null |
    sed -n 's/^JobId=\([0-9]*\) JobName=\([^ ]*\) .* JobState=\([A-Z_]*\) .*/\1 \2 \3/p'
}
# account FILE: FILE has "id name" per submitted job; prints "lost completed other" and the other
# jobs' lines to FILE.other
account() {
  records >"$1.records"
  : >"$1.other"
  awk -v other_file="$1.other" 'NR == FNR { st[$1 " " $2] = $3; next }
       { s = st[$1 " " $2]; if (s == "") { lost++; print $1, $2, "LOST" >other_file }
         else if (s == "COMPLETED") done++; else { other++; print $1, $2, s >other_file } }
       END { print lost + 0, done + 0, other + 0 }' "$1.records" "$1"
}
# unclaimed FILE TAG: jobs named TAG.* in slurmctld's records that FILE does not list (an sbatch that
# gave up waiting for slurmctld after the job was made)
unclaimed() {
  awk -v tag="$2." 'NR == FNR { have[$1 " " $2] = 1; next } index($2, tag) == 1 && !have[$1 " " $2]' \
    "$1" "$1.records" | wc -l
}
# wait_final FILE TIMEOUT: until no job of FILE is pending, running or completing
wait_final() {
  local deadline=$((SECONDS + $2)) active out
  while :; do
    # (held jobs never end by themselves: they are accounted as not completed)
    if ! out=$(cluster_run squeue -h -o '%i %r' 2>/dev/null | awk '!/held/ { print $1 }'); then
      sleep 2; continue
    fi
    active=$(awk 'NR == FNR { want[$1] = 1; next } ($1 in want)' "$1" - <<<"$out" | wc -l)
    [ "$active" -gt 0 ] || return 0
    [ "$SECONDS" -lt "$deadline" ] || { echo "fault_run.sh: $active jobs still active after $2 s" >&2; return 1; }
    sleep 2
  done
}
ctld_fatal() {
  grep -iE 'fatal|segfault|assertion' "$CLUSTER_LOGDIR/slurmctld.out" "$CLUSTER_LOGDIR/slurmctld.log" 2>/dev/null | head -3 || true
}
LAYOUT=yes
layout_opts() { # K: a 1-, 2- or 4-node layout job, by K (without --tp/--pp/--dp when LAYOUT=no)
  local o
  case $(($1 % 3)) in
    0) o="-N1 --tp=8 --pp=1 --dp=1" ;;
    1) o="-N2 --tp=8 --pp=2 --dp=1" ;;
    *) o="-N4 --tp=8 --pp=2 --dp=2" ;;
  esac
  [ "$LAYOUT" = yes ] || o=${o%% *}
  echo "$o"
}
# submit TAG FROM TO WORK [KILL_AT]: sbatch layout jobs TAG.FROM..TO, "id name ms" lines (ms: when sbatch
# returned) to $OUT/TAG.sub.K,
# refusals (slurmctld away) to $OUT/TAG.refused.K; after the KILL_AT-th acknowledged job, slurmctld
# is killed -9 (the time into $OUT/TAG.killed)
submit() {
  local tag=$1 from=$2 to=$3 work=$4 kill_at=${5:-0} k id
  for ((k = from; k <= to; k++)); do
    # shellcheck disable=SC2046
    if id=$(CLUSTER_CMD_TIMEOUT=120 cluster_run sbatch --parsable --exclusive --gpus-per-node=8 --ntasks-per-node=8 \
        $(layout_opts "$k") -J "$tag.$k" -o /dev/null --wrap "$work" 2>>"$OUT/$tag.sbatch.err"); then
      echo "${id%%;*} $tag.$k $(ms)" >>"$OUT/$tag.sub.$from"
      if [ $((k - from + 1)) = "$kill_at" ]; then
        # The fault itself, from the submitter: polling from elsewhere lagged seconds on a busy machine.
        kill -9 "$(cat "$CLUSTER_DIR/run/slurmctld.pid")"
        ms >"$OUT/$tag.killed"
      fi
    else
      echo "$tag.$k" >>"$OUT/$tag.refused.$from"
    fi
  done
}

start_whole() {
  log "starting slurmctld + 64 slurmd with the whole install (folder $OUT/cluster)"
  cluster_start --nodes 64 --width 4 --gpus 8 --dir "$OUT/cluster" --plugin-dir "$OUT/plugins" \
    --plugstack "$OUT/plugstack.conf" --topology "$OUT/topology.conf" --conf SelectType=select/cons_tres_topoaware \
    --conf JobSubmitPlugins=topoaware --file "topology.json=$OUT/topology.json" \
    --file "topoaware.conf=$OUT/topoaware.conf" --conf MinJobAge=3600 --conf SlurmdTimeout=10 --timeout 300
  ta_wait_for 60 sh -c "grep -q 'topology .* loaded (64 hosts' '$CLUSTER_LOGDIR/slurmctld.log'" ||
    { echo "fault_run.sh: the topology did not load at start" >&2; exit 1; }
  log "cluster up; topology $HASH_A"
}

# ---- a: slurmctld killed -9 during a burst of layout submissions -----------------------------------
# fault_a KIND (bare: stock Slurm, the same jobs without --tp/--pp/--dp, the baseline; whole)
fault_a() {
  local kind=$1 tag=a-$1 half before_kill t_kill t_start t_ping t_topo t_done nlog refused total
  local s1 s2 lost ndone other extra pre_lost post_lost holes window h f topo_text reused="" pre_other post_other

  log "$tag: $BURST layout jobs from 2 submitters; slurmctld killed -9 after $((BURST / 3))"
  rm -f "$OUT/$tag".sub.* "$OUT/$tag".refused.* "$OUT/$tag.killed"
  half=$((BURST / 2))
  submit "$tag" 1 "$half" "sleep 2" $((BURST / 6)) &
  s1=$!
  submit "$tag" $((half + 1)) "$BURST" "sleep 2" &
  s2=$!
  until [ -s "$OUT/$tag.killed" ]; do sleep 0.1; done
  t_kill=$(cat "$OUT/$tag.killed")
  before_kill=$(cat "$OUT/$tag".sub.* | awk -v tk="$t_kill" '$3 < tk' | wc -l)
  wait "$CLUSTER_CTLD_PID" 2>/dev/null || true
  log "$tag: slurmctld killed with $before_kill jobs submitted; restarting it on its state"
  sleep 1
  nlog=$(ctld_log | wc -l)
  t_start=$(ms)
  _cluster_start_ctld
  ta_wait_for 120 cluster_run scontrol ping >/dev/null
  t_ping=$(ms)
  topo_text=""
  if [ "$kind" = whole ]; then
    ta_wait_for 120 sh -c "tail -n +$((nlog + 1)) '$CLUSTER_LOGDIR/slurmctld.log' | grep -q 'topology .* loaded (64 hosts'" ||
      bad "$tag" "no topology loaded after the restart"
    t_topo=$(ms)
    topo_text=", topology in place $((t_topo - t_start)) ms"
  fi
  wait "$s1" "$s2" || true
  cat "$OUT/$tag".sub.* >"$OUT/$tag.submitted"
  refused=$(cat "$OUT/$tag".refused.* 2>/dev/null | wc -l || true)
  # The jobs acknowledged after the restart must all end; of those acknowledged before the kill, a
  # slurmctld killed -9 may have lost the end of some (its saved state still has them running, or
  # holds them: Slurm's own recovery, shown by the stock baseline too), so they get a bounded wait.
  # "After the restart" is after the new slurmctld started, not after the kill: the other submitter
  # stamps a job when its sbatch returns, so a job the old slurmctld acknowledged just before it was
  # killed can carry a stamp a few ms after the kill (and is then lost with its unsaved tail).
  awk -v ts="$t_start" '$3 >= ts' "$OUT/$tag.submitted" >"$OUT/$tag.post"
  wait_final "$OUT/$tag.post" 600 || bad "$tag" "jobs acknowledged after the restart still active after 600 s"
  t_done=$(ms)
  wait_final "$OUT/$tag.submitted" 60 || true
  read -r lost ndone other < <(account "$OUT/$tag.submitted")
  total=$(wc -l <"$OUT/$tag.submitted")
  extra=$(unclaimed "$OUT/$tag.submitted" "$tag")
  # Which were lost: acknowledged before the kill (pre) or after the restart (post); a lost pre-kill
  # job older than one found again is a hole (slurmctld saves its state as a whole, so its own loss is
  # the newest jobs: those acknowledged after its last save).
  read -r pre_lost post_lost holes window pre_other post_other < <(awk -v tk="$t_kill" -v ts="$t_start" '
    NR == FNR { st[$1 " " $2] = $3; if ($3 == "LOST") lostid[$1] = 1; next }
    { s = st[$1 " " $2]; l = (s == "LOST")
      if ($3 < ts) { if (l) { pre++; lt[$1] = $3 } else if (s != "") preo++
                     else if ($1 > maxfound) { maxfound = $1; tf = $3 } }
      else if (l) post++; else if (s != "" && !($1 in lostid)) posto++ }
    END { h = 0; for (i in lt) if (i + 0 < maxfound + 0) h++
          print pre + 0, post + 0, h, (tf ? tk - tf : "all"), preo + 0, posto + 0 }' "$OUT/$tag.submitted.other" "$OUT/$tag.submitted")
  # A job whose id the restarted slurmctld gave again (its state lost the first job of that id) can
  # meet the first one still on its nodes: slurmd refuses the launch and Slurm holds the job
  # ("launch failed requeued held"). That is Slurm's doing: such jobs are counted apart and do not
  # fail the invariant on the jobs acknowledged after the restart.
  reused=$(awk 'NR == FNR { if ($3 != "LOST") held[$1] = 1; else lostid[$1] = 1; next }
                END { for (i in held) if (i in lostid) n++; print n + 0 }' "$OUT/$tag.submitted.other" /dev/null)
  f=$(ctld_fatal); [ -z "$f" ] || bad "$tag" "slurmctld logged: $f"
  if [ "$kind" = whole ]; then
    [ "$post_lost" = 0 ] || bad "$tag" "$post_lost jobs acknowledged after the restart lost"
    [ "$holes" = 0 ] || bad "$tag" "$holes lost jobs are older than a job found again (not slurmctld's unsaved tail)"
    [ "$post_other" = 0 ] || bad "$tag" "$post_other jobs acknowledged after the restart did not complete"
    read -r h _ < <(status_hash)
    [ "$h" = "$HASH_A" ] || bad "$tag" "status file books topology $h, not $HASH_A"
  fi
  row a "$kind: slurmctld -9 at $before_kill/$BURST acknowledged, restarted" \
    "acknowledged $total, refused while down $refused (made anyway $extra), completed $ndone"
  row a "  $kind: not completed, not lost" \
    "$pre_other acknowledged before the kill (running or held after the restart), $post_other after; $reused held on a reused id"
  [ "$window" = all ] || window="the last $window ms"
  row a "  $kind: lost (acknowledged in $window before the kill)" \
    "$pre_lost before the kill, $post_lost after the restart, $holes older than a job found"
  row a "  $kind: recovery after start (killed $((t_start - t_kill)) ms before)" \
    "answers $((t_ping - t_start)) ms$topo_text, queue drained $(((t_done - t_start) / 1000)) s"
  # What Slurm's recovery left (jobs still running after their end was lost, held jobs) is cancelled,
  # so that the next fault starts on an empty cluster.
  cluster_run scancel --user=root --quiet >/dev/null 2>&1 || true
  ta_wait_for 120 sh -c "[ -z \"\$(${CLUSTER_PREFIX[*]} squeue -h -o %i)\" ]" || echo "fault_run.sh: jobs left after $tag" >&2
  # A node where slurmd refused a reused id is drained by Slurm ("Duplicate jobid"): back into use.
  drained=$(cluster_run sinfo -h -t drain -o %N 2>/dev/null || true)
  if [ -n "$drained" ]; then
    row a "  $kind: drained by Slurm after the restart" "$drained ($(cluster_run sinfo -h -R -o %E | sort -u | tr '\n' ' '))"
    cluster_run scontrol update NodeName="$drained" State=RESUME || true
  fi
  log "$tag: done"
}

if want a; then
  # The baseline: stock Slurm (cons_tres + topology/tree, no topoaware plugin), the same jobs without
  # a layout, the same fault.
  : >"$OUT/plugstack.empty"
  log "a-bare: starting slurmctld + 64 slurmd, stock Slurm (folder $OUT/bare-cluster)"
  cluster_start --nodes 64 --width 4 --gpus 8 --dir "$OUT/bare-cluster" --plugstack "$OUT/plugstack.empty" \
    --topology "$OUT/topology.conf" --conf SelectType=select/cons_tres --conf MinJobAge=3600 --timeout 300
  LAYOUT=no fault_a bare
  cluster_stop
fi
start_whole
want a && fault_a whole

# ---- b: a slurmd killed -9 under a running 16-node layout job ---------------------------------------
if want b; then
  log "b: a 16-node layout job; one of its slurmd killed -9"
  id=$(cluster_run sbatch --parsable --exclusive -N16 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=8 \
    -J b.1 -o /dev/null --wrap 'if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then sleep 5; else sleep 300; fi')
  echo "$id b.1" >"$OUT/b.submitted"
  cluster_wait_job "$id" 120 RUNNING >/dev/null
  nodes=$(cluster_run scontrol -o show job "$id" | sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p')
  batch=$(cluster_run scontrol -o show job "$id" | sed -n 's/.* BatchHost=\([^ ]*\).*/\1/p')
  victim=""
  for n in $(ta_hostnames "$nodes"); do [ "$n" = "$batch" ] || { victim=$n; break; }; done
  k=""
  for i in "${!CLUSTER_NODES[@]}"; do [ "${CLUSTER_NODES[$i]}" = "$victim" ] && k=$i; done
  sleep 3
  t_kill=$(ms)
  kill -9 "${CLUSTER_SLURMD_PIDS[$k]}"
  wait "${CLUSTER_SLURMD_PIDS[$k]}" 2>/dev/null || true
  node_down() { cluster_run sinfo -h -n "$victim" -o %t 2>/dev/null | grep -q '^down'; }
  ta_wait_for 120 node_down || bad b "node $victim not marked down"
  t_down=$(ms)
  st_after=$(cluster_job_state "$id")
  # The slurmd again, as the harness started it.
  mkdir -p "$CLUSTER_DIR/spool/$victim"
  "${CLUSTER_PREFIX[@]}" slurmd -D -N "$victim" >>"$CLUSTER_LOGDIR/slurmd.$victim.out" 2>&1 &
  CLUSTER_SLURMD_PIDS[$k]=$!
  t_restart=$(ms)
  node_idle() { cluster_run sinfo -h -n "$victim" -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; }
  ta_wait_for 120 node_idle || bad b "node $victim not back after its slurmd restarted"
  t_back=$(ms)
  t_rerun=""
  deadline=$((SECONDS + 300))
  while [ "$SECONDS" -lt "$deadline" ]; do
    st=$(cluster_job_state "$id")
    if [ "$st" = RUNNING ] && [ -z "$t_rerun" ]; then t_rerun=$(ms); fi
    case $st in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|BOOT_FAIL|OUT_OF_MEMORY|DEADLINE) break ;; esac
    sleep 1
  done
  read -r lost ndone other < <(account "$OUT/b.submitted")
  restarts=$(cluster_run scontrol -o show job "$id" | sed -n 's/.* Restarts=\([0-9]*\).*/\1/p')
  [ "$lost" = 0 ] || bad b "job $id lost"
  [ "$ndone" = 1 ] || bad b "job $id ended $(cluster_job_state "$id")"
  read -r h _ < <(status_hash)
  [ "$h" = "$HASH_A" ] || bad b "status file books topology $h, not $HASH_A"
  f=$(ctld_fatal); [ -z "$f" ] || bad b "slurmctld logged: $f"
  row b "slurmd of $victim -9 under 16-node job $id" \
    "job $st_after when the node went down, requeued $restarts x, lost $lost, completed $ndone"
  rerun_text=never
  [ -z "$t_rerun" ] || rerun_text="$((t_rerun - t_restart)) ms after it"
  row b "  recovery" "node down $((t_down - t_kill)) ms after the kill; idle $((t_back - t_restart)) ms after slurmd restart; job running again $rerun_text"
  log "b: done"
fi

# ---- c: a truncated topology, then another valid one, with 1,000 layout jobs pending ---------------
if want c; then
  log "c: a job on all 64 nodes, then $PENDING layout jobs pending behind it"
  holder=$(cluster_run sbatch --parsable --exclusive -N64 -J c.holder -o /dev/null --wrap 'sleep 36000')
  cluster_wait_job "$holder" 300 RUNNING >/dev/null
  rm -f "$OUT"/c.sub.* "$OUT"/c.refused.*
  half=$((PENDING / 2))
  t0=$(ms)
  submit c 1 "$half" true &
  s1=$!
  submit c $((half + 1)) "$PENDING" true &
  s2=$!
  wait "$s1" "$s2" || true
  cat "$OUT"/c.sub.* >"$OUT/c.submitted"
  total=$(wc -l <"$OUT/c.submitted")
  log "c: $total submitted in $((($(ms) - t0) / 1000)) s"
  pending() { cluster_run squeue -h -t PD -o %i 2>/dev/null | wc -l; }
  p0=$(pending)
  reconf() { # FILE WHAT: install FILE as topology.json (renamed in place), reconfigure; sets R_MS, NEWLOG
    local before t
    cp "$1" "$CLUSTER_DIR/topology.json.new"
    mv "$CLUSTER_DIR/topology.json.new" "$CLUSTER_DIR/topology.json"
    before=$(ctld_log | wc -l)
    t=$(ms)
    cluster_run scontrol reconfigure || bad c "scontrol reconfigure failed ($2)"
    R_MS=$(( $(ms) - t ))
    ta_wait_for 60 sh -c "tail -n +$((before + 1)) '$CLUSTER_LOGDIR/slurmctld.log' | grep -q 'topology .* loaded\|cannot load topology'" ||
      bad c "no topology line after reconfigure ($2)"
    R_IN=$(( $(ms) - t ))
    NEWLOG=$(tail -n +$((before + 1)) "$CLUSTER_LOGDIR/slurmctld.log" | grep 'select/cons_tres_topoaware: .*topology' || true)
  }
  head -c $(( $(stat -c %s "$OUT/topology.json") / 2 )) "$OUT/topology.json" >"$OUT/topology-truncated.json"
  reconf "$OUT/topology-truncated.json" truncated
  r1=$R_MS i1=$R_IN
  grep -q 'cannot load topology .*keeping the previous topology' <<<"$NEWLOG" ||
    bad c "truncated file: the log does not say the previous topology is kept: $NEWLOG"
  sleep 2
  read -r h1 e1 < <(status_hash)
  [ "$h1" = "$HASH_A" ] && [ "$e1" = True ] || bad c "after the truncated file the status file books $h1 (error: $e1)"
  p1=$(pending)
  reconf "$OUT/topology-b.json" valid
  r2=$R_MS i2=$R_IN
  grep -q "topology .* loaded (64 hosts, $HASH_B)" <<<"$NEWLOG" || bad c "the valid file was not loaded: $NEWLOG"
  sleep 2
  read -r h2 e2 < <(status_hash)
  [ "$h2" = "$HASH_B" ] && [ "$e2" = False ] || bad c "after the valid file the status file books $h2 (error: $e2)"
  p2=$(pending)
  [ "$p0" -ge "$total" ] && [ "$p1" -ge "$total" ] && [ "$p2" -ge "$total" ] ||
    bad c "pending jobs: $p0 before, $p1 after the truncated file, $p2 after the valid one ($total submitted)"
  t0=$(ms)
  cluster_run scancel "$holder"
  wait_final "$OUT/c.submitted" 1800 || bad c "jobs still active after 1800 s"
  t_done=$(ms)
  read -r lost ndone other < <(account "$OUT/c.submitted")
  [ "$lost" = 0 ] || bad c "$lost of $total jobs lost: $(head -3 "$OUT/c.submitted.other" | tr '\n' ' ')"
  [ "$other" = 0 ] || bad c "$other jobs did not complete: $(head -3 "$OUT/c.submitted.other" | tr '\n' ' ')"
  f=$(ctld_fatal); [ -z "$f" ] || bad c "slurmctld logged: $f"
  row c "truncated topology.json + reconfigure, $p1 pending" \
    "RPC $r1 ms, refusal logged after $i1 ms; previous topology kept ($([ "$h1" = "$HASH_A" ] && echo yes || echo NO))"
  row c "valid new topology.json + reconfigure, $p2 pending" \
    "RPC $r2 ms, loaded after $i2 ms; new topology in use ($([ "$h2" = "$HASH_B" ] && echo yes || echo NO))"
  row c "  the $total jobs after the holder ended" "lost $lost, completed $ndone, other $other; drained in $(((t_done - t0) / 1000)) s"
  log "c: done"
fi
cluster_stop

# ---- d: live discovery while cables flap ---------------------------------------------------------
if want d; then
  if ! command -v ibsim >/dev/null || [ ! -r "$UMAD2SIM_LIB" ]; then
    bad d "ibsim or $UMAD2SIM_LIB missing (ibsim-utils, libumad2sim0)"
  else
    log "d: ibsim on the same 8 x 8 fabric; discover walks while $FLAPS leaf-spine cables flap"
    ibsim_start "$OUT/fabric.net" "$OUT/sim"
    ta_on_exit ibsim_stop
    walk() { timeout 120 env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" "$BIN" discover --quiet "$@"; }
    hosts_of() { python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["hosts"]))' "$1" 2>/dev/null || echo 0; }
    walk --json "$OUT/d.base.json" 2>"$OUT/d.base.err" || bad d "the first walk failed: $(tail -2 "$OUT/d.base.err")"
    H0=$(hash_of "$OUT/d.base.json")
    [ "$(hosts_of "$OUT/d.base.json")" = 64 ] || bad d "the first walk found $(hosts_of "$OUT/d.base.json") hosts"
    # Every leaf's uplink ports ("leafNNN"'s ports cabled to a spine in the net file).
    mapfile -t uplinks < <(awk '/^Switch/ { leaf = ($0 ~ /# "leaf/); match($0, /"S-[0-9a-f]+"/); sw = substr($0, RSTART, RLENGTH); next }
      leaf && /^\[/ && /spine/ { p = $1; gsub(/[\[\]]/, "", p); print sw "[" p "]" }' "$OUT/fabric.net")
    [ "${#uplinks[@]}" -gt 0 ] || bad d "no leaf uplinks found in the net file"
    ( for ((i = 0; i < FLAPS; i++)); do
        u=${uplinks[RANDOM % ${#uplinks[@]}]}
        ibsim_console "Unlink $u"
        sleep "0.$((RANDOM % 5 + 1))"
        ibsim_console "ReLink $u"
        sleep "0.$((RANDOM % 3))"
      done
      ms >"$OUT/d.flaps.done" ) &
    flapper=$!
    cp "$OUT/d.base.json" "$OUT/d.cur.json"
    walks=0 ok=0 refused=0 changed=0 broken=0 kept_bad=0 maxw=0
    while [ ! -s "$OUT/d.flaps.done" ]; do
      prev=$(sha256sum <"$OUT/d.cur.json")
      t=$(ms)
      rc=0
      walk --json "$OUT/d.cur.json" 2>"$OUT/d.walk.err" || rc=$?
      w=$(( $(ms) - t )); [ "$w" -le "$maxw" ] || maxw=$w
      walks=$((walks + 1))
      if [ "$rc" = 0 ]; then
        ok=$((ok + 1))
        [ "$(hash_of "$OUT/d.cur.json")" = "$H0" ] || changed=$((changed + 1))
      else
        refused=$((refused + 1))
        [ "$(sha256sum <"$OUT/d.cur.json")" = "$prev" ] || kept_bad=$((kept_bad + 1))
        sed "s/^/walk $walks rc $rc: /" "$OUT/d.walk.err" | tail -2 >>"$OUT/d.refusals.txt"
      fi
      [ "$(hosts_of "$OUT/d.cur.json")" = 64 ] || broken=$((broken + 1))
    done
    wait "$flapper" || true
    t_relinked=$(cat "$OUT/d.flaps.done")
    t_clean="" tries=0
    while [ "$tries" -lt 10 ]; do
      tries=$((tries + 1))
      if walk --json "$OUT/d.cur.json" 2>>"$OUT/d.walk.err" && [ "$(hash_of "$OUT/d.cur.json")" = "$H0" ]; then
        t_clean=$(ms); break
      fi
    done
    ibsim_stop
    [ "$broken" = 0 ] || bad d "$broken walks left a file that does not parse with 64 hosts"
    [ "$kept_bad" = 0 ] || bad d "$kept_bad failed walks changed the previous file"
    [ -n "$t_clean" ] || bad d "no walk gave the first walk's hash again after the cables were back"
    row d "discover --json x $walks while $FLAPS uplinks flapped" \
      "written $ok ($changed with a cable missing), refused $refused (file kept: $((refused - kept_bad))), unreadable $broken"
    clean_text=never
    [ -z "$t_clean" ] || clean_text="$((t_clean - t_relinked)) ms after the last relink"
    row d "  recovery" "slowest walk $maxw ms; the first walk's hash again $clean_text ($tries walks)"
    log "d: done"
  fi
fi

echo
printf '%-2s %-70s %s\n' "" "fault" "result"
printf '%s\n' "${ROWS[@]}" | tee "$OUT/table.txt"
if [ ${#FAILED[@]} -gt 0 ]; then
  echo
  printf 'FAILED: %s\n' "${FAILED[@]}" | tee -a "$OUT/table.txt"
  exit 1
fi
echo "every invariant held" | tee -a "$OUT/table.txt"
