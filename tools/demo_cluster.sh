# SPDX-License-Identifier: GPL-2.0-or-later
# The second half of the demo (tools/demo.sh): the fabric that was just discovered becomes a real
# Slurm cluster on localhost (one slurmctld, one slurmd per host of the fabric, 8 GPUs each), made
# busy in a fragmented pattern, and the same tp/pp/dp jobs are submitted twice: once under stock
# select/cons_tres + topology/tree (with the topology.conf topoaware wrote) and once under
# select/cons_tres_topoaware. `topoaware show` draws each result on the fabric, and
# `topoaware plan` scores every job's nodes with the same cost model and rank order.
# Needs root (slurmd makes device files) and Debian's slurmctld/slurmd. Sourced by demo.sh.

# shellcheck source=tests/lib/slurm_cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/slurm_cluster.sh"

# The jobs, in submission order: "NAME|sbatch options". Every layout job says its node count and
# GPUs so that stock Slurm (no job_submit plugin here) gets the very same request. C is strict:
# under topoaware it waits for a block that keeps its DP ring on one leaf (none is left free);
# stock Slurm ignores the mode and runs it across two leaves.
DEMO_JOBS=(
  "A|--tp=8 --pp=2 --dp=2 -N4"
  "B|--tp=8 --dp=2 -N2"
  "C|--tp=8 --dp=2 -N2 --topo-mode=strict"
)

# Busy nodes: every leaf of 4 hosts is full except the free counts below (leaf 1 first). With
# 3, 3 and 2 free, no leaf holds job A's 4 nodes: A must span leaves, and stock best fit takes
# 3 + 1 (splitting a DP ring) where 2 + 2 keeps each ring on one leaf.
DEMO_FREE_PER_LEAF=(3 3 2 0 0 0 0 0)

# _demo_busy_list HOSTS_PER_LEAF: the host names to keep busy.
_demo_busy_list() {
  local per=$1 leaf=0 free k
  for free in "${DEMO_FREE_PER_LEAF[@]}"; do
    for ((k = free; k < per; k++)); do printf 'n%04d\n' $((leaf * per + k + 1)); done
    leaf=$((leaf + 1))
  done
}

# _demo_scenario TAG SELECTTYPE BUILD DIR: one cluster, the busy job, the demo jobs, show, stop.
_demo_scenario() {
  local tag=$1 sel=$2 build=$3 dir=$4 nhosts per busy spec name opts id n nodes
  nhosts=$(grep -c '"name": "n[0-9]*"' "$dir/topology.json" || true)
  per=4
  echo "==> demo: $sel: starting slurmctld and $nhosts slurmd on localhost"
  mkdir -p -m 0755 "$dir/state"
  echo "required $(cd "$build/plugins/spank/.libs" && pwd)/spank_topoaware.so state_dir=$dir/state" \
    >"$dir/plugstack.conf"
  cluster_start --nodes "$nhosts" --width 4 --gpus 8 --plugin-dir "$(cd "$build/plugins/select/.libs" && pwd)" \
    --plugstack "$dir/plugstack.conf" --topology "$dir/topology.conf" --conf "SelectType=$sel" \
    --file "topology.json=$dir/topology.json" --file "topoaware.conf=$dir/topoaware.conf" || return 1
  busy=$(_demo_busy_list "$per" | paste -sd, -)
  n=$(_demo_busy_list "$per" | wc -l)
  id=$(cluster_run sbatch --parsable --exclusive -J busy -N"$n" -w "$busy" -o /dev/null --wrap 'sleep 3600') || return 1
  cluster_wait_job "$id" 60 RUNNING >/dev/null || return 1
  echo "==> demo: $sel: $n hosts busy; free per leaf: ${DEMO_FREE_PER_LEAF[*]}"
  : >"$dir/jobs.$tag"
  for spec in "${DEMO_JOBS[@]}"; do
    name=${spec%%|*} opts=${spec#*|}
    # shellcheck disable=SC2086
    id=$(cluster_run sbatch --parsable --exclusive -J "$name" --gpus-per-node=8 --ntasks-per-node=8 $opts \
      -o /dev/null --wrap 'sleep 3600') || return 1
    case $opts in
      *--topo-mode=strict*) sleep 8 ;;  # a main and a backfill cycle: running or held back by then
      *) cluster_wait_job "$id" 60 RUNNING >/dev/null || return 1 ;;
    esac
    nodes=$(cluster_run scontrol -o show job "$id" | sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p')
    [ "$(cluster_job_state "$id")" = RUNNING ] || nodes="(pending)"
    echo "$name $id $nodes $opts" >>"$dir/jobs.$tag"
  done
  # No --topology/--status: show finds both as an admin's shell would (topoaware.conf beside
  # SLURM_CONF, the status file in StateSaveLocation).
  cluster_run "$build/topoaware" show --format text >"$dir/show.$tag.txt" 2>&1 ||
    echo "(topoaware show failed, see $dir/show.$tag.txt)" >&2
  cluster_run "$build/topoaware" show --format svg --output "$dir/show.$tag.svg" >/dev/null 2>&1 || true
  cluster_stop
}

# _demo_score BIN TOPOLOGY HOSTLIST OPTS: the cost of a job on exactly these nodes ("DP rings at
# ideal 8/16, hop-bytes 1.06x"), from `topoaware plan` given those nodes as the only free ones.
_demo_score() {
  local bin=$1 topo=$2 nodes=$3 opts=$4 layout=() o
  [ "$nodes" != "(pending)" ] || { echo "waits for a block that keeps its DP ring on one leaf"; return 0; }
  for o in $opts; do case $o in --tp=*|--pp=*|--dp=*|--cp=*|--ep=*) layout+=("${o%%=*}" "${o#*=}") ;; esac; done
  "$bin" plan --topology "$topo" "${layout[@]}" --gpus-per-node 8 --free "$nodes" --format text 2>/dev/null |
    sed -n 's/^ *topoaware: *\(DP rings at ideal [0-9/]*\).*\(hop-bytes [0-9.]*x\).*/\1, \2/p'
}

run_demo_cluster() {
  local build=${1:?usage: run_demo_cluster BUILD_DIR DEMO_DIR} dir=${2:?}
  if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null; then
    echo "==> demo: the cluster part needs root and Debian's slurmctld/slurmd: skipped"
    return 0
  fi
  [ -f "$build/plugins/select/.libs/select_cons_tres_topoaware.so" ] || {
    echo "==> demo: select plugin not built (configure --with-slurm-source): cluster part skipped"; return 0; }
  printf '%s\n' "${DEMO_TOPOAWARE_CONF:-StatusInterval=0}" >"$dir/topoaware.conf"
  ( trap cluster_stop EXIT; _demo_scenario stock select/cons_tres "$build" "$dir" ) ||
    { echo "run_demo: stock cluster failed" >&2; return 1; }
  ( trap cluster_stop EXIT; _demo_scenario topo select/cons_tres_topoaware "$build" "$dir" ) ||
    { echo "run_demo: topoaware cluster failed" >&2; return 1; }
  echo
  echo "==> demo: the same jobs on the same fragmented cluster (free per leaf: ${DEMO_FREE_PER_LEAF[*]})"
  local name id nodes opts sid snodes
  while read -r name id nodes opts; do
    read -r _ sid snodes _ < <(grep "^$name " "$dir/jobs.stock")
    echo "  job $name ($opts)"
    printf '    %-22s %-22s %s\n' "stock cons_tres + tree" "$snodes" \
      "$(_demo_score "$build/topoaware" "$dir/topology.json" "$snodes" "$opts")"
    printf '    %-22s %-22s %s\n' "cons_tres_topoaware" "$nodes" \
      "$(_demo_score "$build/topoaware" "$dir/topology.json" "$nodes" "$opts")"
  done <"$dir/jobs.topo"
  echo
  echo "==> demo: topoaware show (select/cons_tres_topoaware), $dir/show.topo.txt:"
  cat "$dir/show.topo.txt"
  echo "==> demo: pictures: $dir/show.topo.svg (topoaware) and $dir/show.stock.svg (stock)"
}
