# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by tests/slurm_select_fabric64.sh: an 8 leaves x 8 hosts fat tree (hosts n0001..n0064, the
# harness's names with cluster_start --nodes 64 --width 4), generated with `topoaware generate`, run
# under ibsim and discovered live with `topoaware discover` (umad2sim); its topology.json for
# select/cons_tres_topoaware and the topology.conf topoaware writes for stock topology/tree; and
# helpers to put jobs on a 64-node cluster and to score allocations with `topoaware plan`.
# Sourced after slurm_cluster.sh and tools/lib/ibsim.sh.
#
# Sets (f64_setup): F64_WORK (temp folder), F64_BIN (topoaware), F64_PLUGDIR, F64_PLUGSTACK,
# F64_TOPO (live topology.json), F64_TOPOCONF (live topology.conf for topology/tree).

F64_LEAVES=8 F64_HOSTS=8

f64_setup() {
  local b=${top_builddir:-.} rc
  ta_require_daemon_tests
  ta_require_cmd slurmctld slurmctld
  ta_require_cmd slurmd slurmd
  ta_require_cmd ibsim ibsim-utils
  ta_require_cmd python3 python3
  [ -r "$UMAD2SIM_LIB" ] || ta_skip "$UMAD2SIM_LIB missing (package libumad2sim0)"
  [ -f "$b/plugins/select/.libs/select_cons_tres_topoaware.so" ] ||
    ta_skip "select plugins not built (configure --with-slurm-source)"
  [ -f "$b/plugins/spank/.libs/spank_topoaware.so" ] || ta_skip "spank_topoaware.so not built"
  [ -x "$b/topoaware" ] || ta_fail "topoaware (the command) not built"
  F64_BIN=$(cd "$b" && pwd)/topoaware
  F64_WORK=$(mktemp -d "${TMPDIR:-/tmp}/ta-fab64.XXXXXX")
  ta_on_exit "rm -rf '$F64_WORK'"
  F64_PLUGDIR="$(cd "$b/plugins/select/.libs" && pwd)"
  F64_PLUGSTACK=$F64_WORK/plugstack.conf
  # A private state_dir: concurrent test clusters all number jobs from 1 (spank_topoaware(8)).
  mkdir -m 0755 "$F64_WORK/state"
  echo "required $(cd "$b/plugins/spank/.libs" && pwd)/spank_topoaware.so state_dir=$F64_WORK/state" >"$F64_PLUGSTACK"

  # The fabric: generated (net file + the JSON the generator expects), then walked live.
  "$F64_BIN" generate fat-tree --leaves $F64_LEAVES --hosts-per-leaf $F64_HOSTS \
    --net "$F64_WORK/fabric.net" --json "$F64_WORK/expected.json" >/dev/null ||
    ta_fail "topoaware generate fat-tree failed"
  ibsim_start "$F64_WORK/fabric.net" "$F64_WORK/ibsim" || ta_fail "ibsim did not start on the generated fabric"
  ta_on_exit ibsim_stop
  F64_TOPO=$F64_WORK/topology.json F64_TOPOCONF=$F64_WORK/topology.conf
  # IBSIM_SOCKNAME is private to this simulator (set by ibsim_start); a hung walk must not hang make check.
  timeout --kill-after=5 60 env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" \
    "$F64_BIN" discover --quiet --json "$F64_TOPO" --tree "$F64_TOPOCONF" -f summary \
    >"$F64_WORK/discover.summary" 2>"$F64_WORK/discover.err"
  rc=$?
  ibsim_stop
  [ $rc -eq 0 ] || { cat "$F64_WORK/discover.err" >&2; ta_fail "live topoaware discover failed (exit $rc)"; }
}

# The leaf (1..8) of node nNNNN.
f64_leaf() { local n=$((10#${1#n})); echo $(( (n - 1) / F64_HOSTS + 1 )); }

# f64_leaf_counts FILE: node names (one a line) -> nodes per leaf, descending ("5 3").
f64_leaf_counts() {
  local n
  while read -r n; do [ -z "$n" ] || f64_leaf "$n"; done <"$1" | sort | uniq -c | awk '{print $1}' | sort -rn |
    tr '\n' ' ' | sed 's/ $//'
}

# f64_leaves FILE: the leaves the nodes are on ("1 2").
f64_leaves() {
  local n
  while read -r n; do [ -z "$n" ] || f64_leaf "$n"; done <"$1" | sort -n | uniq | tr '\n' ' ' | sed 's/ $//'
}

# f64_hostlist FILE: node names (one a line) -> "n0001,n0002,..." (a list plan and -w accept).
f64_hostlist() { grep -v '^$' "$1" | sort | paste -sd, -; }

# f64_range A B: node names nA..nB, one a line.
f64_range() { local i; for ((i = $1; i <= $2; i++)); do printf 'n%04d\n' "$i"; done; }

# The nodes of a job, one name per line, sorted.
f64_job_nodes() {
  local list
  list=$(cluster_run scontrol -o show job "$1" | sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p')
  ta_hostnames "$list" | sort
}

# f64_busy FILE [sbatch options]: one exclusive sleeping job on exactly the nodes in FILE; waits
# until it runs; sets F64_BUSY_ID.
f64_busy() {
  local f=$1 n; shift
  n=$(grep -c . "$f")
  F64_BUSY_ID=$(cluster_run sbatch --parsable --exclusive -N "$n" -w "$(f64_hostlist "$f")" -J busy -o /dev/null "$@" \
    --wrap 'sleep 600') || ta_fail "could not submit the busy job"
  cluster_wait_job "$F64_BUSY_ID" 90 RUNNING >/dev/null || ta_fail "busy job $F64_BUSY_ID did not start"
}

# f64_layout_job TP PP DP [sbatch options]: an exclusive layout job of PP*DP nodes x 8 GPUs that
# sleeps; prints its id.
f64_layout_job() {
  local tp=$1 pp=$2 dp=$3; shift 3
  cluster_run sbatch --parsable --exclusive -N $((pp * dp)) --gpus-per-node=8 --ntasks-per-node=8 \
    --tp="$tp" --pp="$pp" --dp="$dp" -o /dev/null "$@" --wrap 'sleep 600'
}

# f64_wait_nodes OUTFILE JOBID [TIMEOUT]: wait until the job runs, write its nodes to OUTFILE.
f64_wait_nodes() {
  local out=$1 id=$2 timeout=${3:-90}
  cluster_wait_job "$id" "$timeout" RUNNING >/dev/null || return 1
  f64_job_nodes "$id" >"$out"
}

# f64_clear: cancel every job and wait until all nodes are idle again.
f64_clear() {
  cluster_run scancel --quiet --user=root >/dev/null 2>&1 || true
  local deadline=$((SECONDS + 90)) busy
  while :; do
    busy=$(cluster_run squeue -h -t all -o '%i %T' 2>/dev/null |
      grep -vcE ' (COMPLETED|CANCELLED|FAILED|PREEMPTED|TIMEOUT|NODE_FAIL)$' || true)
    if [ "${busy:-0}" -eq 0 ] && [ "$(_cluster_idle_count)" -ge "${#CLUSTER_NODES[@]}" ]; then return 0; fi
    [ "$SECONDS" -lt "$deadline" ] ||
      { cluster_run sinfo -N -o '%N %T' | grep -v idle | head >&2; ta_fail "nodes not idle 90 s after scancel"; }
    sleep 0.5
  done
}

# f64_score FILE TP PP DP: `topoaware plan` on exactly the nodes in FILE (free set = job size, so plan
# evaluates that set in the rank order spank_topoaware computes). Prints
#   "<status> <dp rings at ideal> <dp rings> <ratio to ideal hop-bytes> <hop-bytes> <leaf groups>"
f64_score() {
  local f=$1 tp=$2 pp=$3 dp=$4
  "$F64_BIN" plan --topology "$F64_TOPO" --tp "$tp" --pp "$pp" --dp "$dp" --gpus-per-node 8 \
    --free "$(f64_hostlist "$f")" --format json |
    python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d["cost"]
n = len(d["rank_order"])
if n != int(sys.argv[1]):
    sys.exit("plan placed %d nodes, not the %s given" % (n, sys.argv[1]))
print(d["status"], c["dp"]["at_ideal"], c["dp"]["groups"], "%.4f" % c["ratio_to_ideal"], "%.0f" % c["hop_bytes"],
      len({r["leaf_group"] for r in d["rank_order"]}))' "$(grep -c . "$f")"
}

# f64_fewest_leaves FREEFILE N: the fewest leaves whose free nodes (FREEFILE) hold N nodes.
f64_fewest_leaves() {
  local need=$2 k=0 c
  for c in $(f64_leaf_counts "$1"); do
    [ "$need" -gt 0 ] || break
    need=$((need - c)); k=$((k + 1))
  done
  [ "$need" -le 0 ] && echo "$k" || echo 0
}
