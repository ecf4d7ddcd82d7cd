# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by tests/slurm_select_*.sh: a generated 4 leaves x 4 hosts fat tree whose host names are
# the harness's node names n0001..n0016 (cluster_start --nodes 16 --width 4), its topology.conf for
# topology/tree, and the plugin folders of the build tree. Sourced after slurm_cluster.sh.
# Sets: SEL_WORK (temp folder), SEL_PLUGDIR (select + spank plugin folders), SEL_PLUGSTACK,
# SEL_TOPO (topology.json), SEL_TOPOCONF (topology.conf).
sel_setup() {
  local b=${top_builddir:-.}
  ta_require_daemon_tests
  ta_require_cmd slurmctld slurmctld
  ta_require_cmd slurmd slurmd
  [ -f "$b/plugins/select/.libs/select_cons_tres_topoaware.so" ] ||
    ta_skip "select plugins not built (configure --with-slurm-source)"
  [ -f "$b/plugins/spank/.libs/spank_topoaware.so" ] || ta_skip "spank_topoaware.so not built"
  [ -x "$b/topoaware" ] || ta_fail "topoaware (the command) not built"
  SEL_WORK=$(mktemp -d "${TMPDIR:-/tmp}/ta-select.XXXXXX")
  ta_on_exit "rm -rf '$SEL_WORK'"
  SEL_PLUGDIR="$(cd "$b/plugins/select/.libs" && pwd)"
  SEL_PLUGSTACK=$SEL_WORK/plugstack.conf
  # A private state_dir: concurrent test clusters all number jobs from 1 (spank_topoaware(8)).
  mkdir -m 0755 "$SEL_WORK/state"
  echo "required $(cd "$b/plugins/spank/.libs" && pwd)/spank_topoaware.so state_dir=$SEL_WORK/state" >"$SEL_PLUGSTACK"
  SEL_TOPO=$SEL_WORK/topology.json
  "$b/topoaware" generate fat-tree --leaves 4 --hosts-per-leaf 4 --json "$SEL_TOPO" >/dev/null ||
    ta_fail "topoaware generate failed"
  grep -q '"n0016"' "$SEL_TOPO" || ta_fail "generated topology has no host n0016"
  SEL_TOPOCONF=$SEL_WORK/topology.conf
  {
    local k
    for k in 0 1 2 3; do printf 'SwitchName=leaf%d Nodes=n[%04d-%04d]\n' $((k + 1)) $((4 * k + 1)) $((4 * k + 4)); done
    echo "SwitchName=spine Switches=leaf[1-4]"
  } >"$SEL_TOPOCONF"
}

# sel_start SELECTTYPE [more cluster_start args]: 16 nodes x 8 GPUs, topology/tree, the plugins,
# topology.json beside slurm.conf (not with SEL_NO_TOPO=1).
sel_start() {
  local sel=$1 files=(--file "topology.json=$SEL_TOPO"); shift
  [ "${SEL_NO_TOPO:-0}" != 1 ] || files=()
  cluster_start --nodes 16 --width 4 --gpus 8 --plugin-dir "$SEL_PLUGDIR" --plugstack "$SEL_PLUGSTACK" \
    --topology "$SEL_TOPOCONF" --conf "SelectType=$sel" "${files[@]}" "$@"
}

# The nodes of a job, one name per line, sorted.
sel_job_nodes() {
  local list
  list=$(cluster_run scontrol -o show job "$1" | sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p')
  ta_hostnames "$list" | sort
}

# The leaf (1..4) of node nNNNN.
sel_leaf() { local n=$((10#${1#n})); echo $(( (n - 1) / 4 + 1 )); }

# sel_busy NODE...: one exclusive sleeping job on each node; waits until all run.
sel_busy() {
  local n id ids=()
  for n in "$@"; do
    id=$(cluster_run sbatch --parsable --exclusive -w "$n" -N1 -J busy -o /dev/null --wrap 'sleep 600')
    ids+=("$id")
  done
  for id in "${ids[@]}"; do cluster_wait_job "$id" 60 RUNNING >/dev/null; done
  SEL_BUSY_IDS=("${ids[@]}")
}

# ---- the status file and a restart of slurmctld with placed and waiting layout jobs
# (tests/slurm_select_faults.sh: restarts of one release; tests/slurm_upgrade_trixie.sh: an upgrade)
# SEL_STATUS: the status file to read (set it after sel_start; StatusFile's default is in the state folder).

# sel_entry JOBID: the job's status entry as one line "placement|nodes|node_order|gpus_per_node|reason"
# ("-" if the job has none, "?" while the file cannot be read).
sel_entry() {
  python3 - "$SEL_STATUS" "$1" <<'PY' 2>/dev/null || echo "?"
import json, sys
d = json.load(open(sys.argv[1]))
for j in d["jobs"]:
    if j["job_id"] == int(sys.argv[2]):
        print("|".join(str(j.get(k, "")) for k in ("placement", "nodes", "node_order", "gpus_per_node", "reason")))
        break
else:
    print("-")
PY
}

# sel_entry_wait SECONDS JOBID PATTERN: until the entry matches the (glob) pattern, or is the text
# after '=' for a PATTERN "=TEXT" (host lists have brackets); prints it.
sel_entry_wait() {
  local deadline=$((SECONDS + $1)) v
  while :; do
    v=$(sel_entry "$2")
    # shellcheck disable=SC2053
    case $3 in
      =*) [ "$v" = "${3#=}" ] && { echo "$v"; return 0; } ;;
      *) [[ $v == $3 ]] && { echo "$v"; return 0; } ;;
    esac
    [ "$SECONDS" -lt "$deadline" ] || { echo "status file: job $2 is '$v', wanted '$3'" >&2; return 1; }
    sleep 0.5
  done
}

# Every job with its state and nodes, one per line.
sel_jobs_now() { cluster_run squeue -h -o '%i %T %N' | sort; }

# sel_three_jobs: on the 4 x 4 fabric, 8 busy nodes leave 3, 3, 2 and 0 free per leaf; B (tp=8 pp=2
# dp=2, 4 nodes) gets an ideal 2 + 2; the 4 nodes left (3 + 1 or 2 + 1 + 1) hold no ideal block, so
# strict C (same layout, --topo-max-wait=30m) waits; prefer P asks for 8 nodes and waits too.
# Sets SEL_B SEL_C SEL_P (job ids), SEL_B0 (B's status entry), SEL_C0 (C's, with its deadline),
# SEL_JOBS0 (sel_jobs_now), SEL_BUSY_IDS.
sel_three_jobs() {
  local layout=(--exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=2 -o /dev/null)
  sel_busy n0001 n0005 n0009 n0010 n0013 n0014 n0015 n0016
  SEL_B=$(cluster_run sbatch --parsable "${layout[@]}" --wrap 'sleep 900')
  cluster_wait_job "$SEL_B" 60 RUNNING >/dev/null
  SEL_C=$(cluster_run sbatch --parsable "${layout[@]}" --topo-mode=strict --topo-max-wait=30m --wrap 'sleep 900')
  SEL_P=$(cluster_run sbatch --parsable --exclusive -N8 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 --dp=4 \
    --topo-mode=prefer -o /dev/null --wrap 'sleep 900')
  SEL_B0=$(sel_entry_wait 30 "$SEL_B" 'ideal|n*|n*|8|*') || ta_fail "placed job $SEL_B has no complete status entry"
  SEL_C0=$(sel_entry_wait 30 "$SEL_C" '|||8|*strict: waits until *') ||
    ta_fail "strict job $SEL_C has no waiting entry"
  sel_entry_wait 30 "$SEL_P" '|||8|*' >/dev/null || ta_fail "prefer job $SEL_P has no waiting entry"
  [ "$(cluster_job_state "$SEL_C")" = PENDING ] && [ "$(cluster_job_state "$SEL_P")" = PENDING ] ||
    ta_fail "premise: C and P should be pending: $(sel_jobs_now)"
  ta_note "before: B $SEL_B0"
  ta_note "before: C $SEL_C0"
  SEL_JOBS0=$(sel_jobs_now)
}

# sel_same_jobs_after WHAT: after a restart of slurmctld (WHAT says which), every job of
# sel_three_jobs is there in the same state on the same nodes; the new slurmctld's status file has B
# as it was placed (not "unknown", not without nodes), C waiting until the same deadline, P waiting;
# and in 5 more seconds (several scheduling passes) no job starts early. Sets SEL_B1.
sel_same_jobs_after() {
  local now deadline
  now=$(sel_jobs_now)
  [ "$now" = "$SEL_JOBS0" ] || ta_fail "after $1 the jobs differ:
before: $SEL_JOBS0
now:    $now"
  SEL_B1=$(sel_entry_wait 30 "$SEL_B" "=$SEL_B0") ||
    ta_fail "after $1: placed job $SEL_B's entry changed (was: $SEL_B0)"
  deadline=${SEL_C0##*strict: waits until }
  sel_entry_wait 30 "$SEL_C" "=${SEL_C0%%strict: waits until *}strict: waits until $deadline" >/dev/null ||
    ta_fail "after $1: strict job $SEL_C lost its deadline (was: $SEL_C0)"
  sel_entry_wait 30 "$SEL_P" '|||8|*' >/dev/null || ta_fail "after $1: prefer job $SEL_P has no waiting entry"
  sleep 5
  [ "$(sel_jobs_now)" = "$SEL_JOBS0" ] || ta_fail "after $1 a job changed state: $(sel_jobs_now)"
}
