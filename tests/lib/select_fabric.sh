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
