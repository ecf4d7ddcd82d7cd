# SPDX-License-Identifier: GPL-2.0-or-later
# A real Slurm cluster on localhost for integration tests: one slurmctld and N slurmd (Debian's Slurm
# is built with --enable-multiple-slurmd), all as root, without munge, in a private temp folder, on
# free ports so that several clusters (tests, engineers) can run at once. Sourced, not run.
#
#   . "$top_srcdir/tests/lib/slurm_cluster.sh"
#   ta_require_daemon_tests
#   cluster_start --nodes 16 --gpus 8 [--conf 'Key=Value']... [--topology FILE] ...
#   cluster_run srun -N4 hostname
#   id=$(cluster_run sbatch --parsable --wrap 'sleep 1'); cluster_wait_job "$id"
#   (cluster_stop runs from the EXIT trap; calling it earlier is fine)
#
# cluster_start options:
#   --nodes N            number of nodes (default 4)
#   --gpus G             GPUs per node (gres gpu:G with character-device files, default 0)
#   --cpus C             CPUs per node (default: max(8, G))
#   --memory MB          RealMemory per node (default 16384)
#   --prefix P           node names P<number> (default n), numbers zero-padded to --width digits
#   --width W            digits in node numbers (default: 2, or more if N needs it)
#   --names "A B C"      explicit node names instead (overrides --nodes/--prefix)
#   --node-attr LIST=ATTRS   extra attributes on the NodeName lines of the nodes in host list LIST
#                        (e.g. 'n[0037-0040]=Feature=fast'; slurm.conf allows one NodeName line
#                        per node, so --conf cannot add them), repeatable
#   --conf LINE          extra slurm.conf line, repeatable. A line whose key is one the harness sets
#                        (SelectType, TaskPlugin, ...) replaces the harness's value; a PartitionName=
#                        line replaces the default partition; other lines are appended.
#   --plugin-dir DIR     put DIR before Slurm's own plugin folder in PluginDir (build-tree plugins)
#   --topology FILE      copy FILE as topology.conf (TopologyPlugin defaults to topology/tree then)
#   --plugstack FILE     copy FILE as plugstack.conf and set PlugStackConfig
#   --file NAME=SRC      copy SRC into the cluster folder as NAME (e.g. topoaware.conf), repeatable
#   --hwloc-xml FILE     every slurmd runs with HWLOC_XMLFILE=FILE (pretend to be that machine)
#   --hwloc-xml-node NODE=FILE   the same for one node, repeatable
#   --dir DIR            cluster folder (default: a new temp folder, removed on stop unless
#                        TOPOAWARE_KEEP_CLUSTER=1; a failing test prints the logs' tails first)
#   --timeout S          how long to wait for all nodes idle (default 60 + N/2)
#   --chroot ROOT        run the daemons and commands inside ROOT (see tests/lib/trixie.sh); the
#                        cluster folder is then created inside ROOT
#   --cgroup-disabled    write cgroup.conf with CgroupPlugin=disabled (Slurm >= 23.x without cgroups)
#   --slurm-prefix DIR   run the Slurm installed under DIR (DIR/sbin, DIR/bin, plugins in DIR/lib/slurm)
#                        instead of the system's, e.g. a release built by tools/build-slurm.sh (see
#                        tests/lib/slurm_release.sh); not with --chroot. Default: $TOPOAWARE_SLURM_PREFIX
#                        (so any cluster test runs on such a release: build topoaware against that
#                        release's tree and `TOPOAWARE_SLURM_PREFIX=DIR make check TESTS=...`), ignored
#                        with --chroot. A prefix without cgroup plugins gets CgroupPlugin=disabled.
#
# After cluster_start: CLUSTER_DIR (host path), CLUSTER_CONF (slurm.conf as the daemons see it),
# CLUSTER_NODES (array of names), CLUSTER_CTLD_PORT, CLUSTER_LOGDIR.
# One cluster per shell; run a second one from a subshell or another test.

# shellcheck source=tests/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CLUSTER_DIR="" CLUSTER_VDIR="" CLUSTER_CONF="" CLUSTER_ROOT="" CLUSTER_LOGDIR=""
CLUSTER_CTLD_PID="" CLUSTER_SLURMD_PIDS=() CLUSTER_NODES=() CLUSTER_CTLD_PORT="" CLUSTER_SLOTS=()
CLUSTER_OWN_DIR="" CLUSTER_STARTED="" CLUSTER_PREFIX=() CLUSTER_SLURM_PREFIX=""
declare -gA _CLUSTER_NODE_ATTR=()

# Slurm's own plugin folder (Debian: slurm-wlm-basic-plugins).
_cluster_system_plugindir() {
  local d
  if [ -n "$CLUSTER_SLURM_PREFIX" ]; then
    for d in "$CLUSTER_SLURM_PREFIX/lib/slurm" "$CLUSTER_SLURM_PREFIX/lib64/slurm"; do
      if [ -f "$d/select_cons_tres.so" ]; then echo "$d"; return 0; fi
    done
    return 1
  fi
  for d in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/slurm-wlm /usr/lib64/slurm /usr/lib/slurm; do
    if [ -f "${CLUSTER_ROOT}$d/select_cons_tres.so" ]; then echo "$d"; return 0; fi
  done
  d=$(find "${CLUSTER_ROOT}/usr/lib" -name select_cons_tres.so -print -quit 2>/dev/null)
  [ -n "$d" ] || return 1
  d=$(dirname "$d"); echo "${d#"$CLUSTER_ROOT"}"
}

# --- ports: slots of 256 consecutive ports in 10240..32767 (below Linux's ephemeral range, where
# srun's own listening ports come from). A slot is reserved with an atomic mkdir under
# /tmp/topoaware-ports, owned by our pid (stale slots of dead owners are taken over), and used only if
# nothing listens on its ports right now.
_CLUSTER_PORT_BASE=10240 _CLUSTER_PORT_SLOTS=88 _CLUSTER_LOCKROOT=/tmp/topoaware-ports

_port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

_slot_take() {
  local k=$1 d="$_CLUSTER_LOCKROOT/slot.$1" owner
  if mkdir "$d" 2>/dev/null; then echo $$ >"$d/pid"; return 0; fi
  owner=$(cat "$d/pid" 2>/dev/null || true)
  if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then
    # Stale: its owner died without cleaning up. Take it over via rename (atomic, one winner).
    if mv "$d" "$d.stale.$$" 2>/dev/null; then
      rm -rf "$d.stale.$$"
      mkdir "$d" 2>/dev/null && { echo $$ >"$d/pid"; return 0; }
    fi
  fi
  return 1
}

# _cluster_reserve_ports COUNT: sets CLUSTER_PORT0 (first of COUNT free consecutive ports).
_cluster_reserve_ports() {
  local count=$1 need k j p start tries ok
  need=$(( (count + 255) / 256 ))
  mkdir -p "$_CLUSTER_LOCKROOT"; chmod 1777 "$_CLUSTER_LOCKROOT" 2>/dev/null || true
  start=$(( RANDOM % _CLUSTER_PORT_SLOTS ))
  for ((tries = 0; tries < _CLUSTER_PORT_SLOTS; tries++)); do
    k=$(( (start + tries) % _CLUSTER_PORT_SLOTS ))
    [ $((k + need)) -le "$_CLUSTER_PORT_SLOTS" ] || continue
    CLUSTER_SLOTS=()
    ok=yes
    for ((j = k; j < k + need; j++)); do
      if _slot_take "$j"; then CLUSTER_SLOTS+=("$j"); else ok=no; break; fi
    done
    if [ "$ok" = yes ]; then
      CLUSTER_PORT0=$(( _CLUSTER_PORT_BASE + 256 * k ))
      for ((p = CLUSTER_PORT0; p < CLUSTER_PORT0 + count; p++)); do
        if _port_in_use "$p"; then ok=no; break; fi
      done
      [ "$ok" = yes ] && return 0
    fi
    _cluster_release_ports
  done
  echo "cluster_start: no $count free consecutive ports in $_CLUSTER_PORT_BASE..32767" >&2
  return 1
}

_cluster_release_ports() {
  local k
  for k in "${CLUSTER_SLOTS[@]}"; do
    [ "$(cat "$_CLUSTER_LOCKROOT/slot.$k/pid" 2>/dev/null)" = $$ ] && rm -rf "$_CLUSTER_LOCKROOT/slot.$k"
  done
  CLUSTER_SLOTS=()
}

# The command prefix that runs a program as this cluster's daemons and commands see the world: on the
# host, or inside the chroot, always with SLURM_CONF naming this cluster's slurm.conf. With
# --slurm-prefix, that Slurm's programs come first in PATH (slurmd finds slurmstepd by its built-in path;
# the programs find libslurmfull by their rpath).
_cluster_prefix() {
  CLUSTER_PREFIX=()
  [ -z "$CLUSTER_ROOT" ] || CLUSTER_PREFIX=(chroot "$CLUSTER_ROOT")
  CLUSTER_PREFIX+=(/usr/bin/env "SLURM_CONF=$CLUSTER_CONF")
  [ -z "$CLUSTER_SLURM_PREFIX" ] ||
    CLUSTER_PREFIX+=("PATH=$CLUSTER_SLURM_PREFIX/sbin:$CLUSTER_SLURM_PREFIX/bin:$PATH")
}

# cluster_run CMD...: a Slurm command against this cluster, bounded in time so that a hung srun
# fails the test instead of hanging `make check` (CLUSTER_CMD_TIMEOUT, default 300 s).
cluster_run() {
  [ -n "$CLUSTER_CONF" ] || { echo "cluster_run: no cluster started" >&2; return 1; }
  timeout --kill-after=10 "${CLUSTER_CMD_TIMEOUT:-300}" "${CLUSTER_PREFIX[@]}" "$@"
}

# The state of a job as scontrol sees it (PENDING, RUNNING, COMPLETED, ...), empty if unknown.
cluster_job_state() {
  cluster_run scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# cluster_wait_job JOBID [TIMEOUT_S] [STATE...]: wait until the job reaches one of STATEs (default:
# any final state); prints the state reached. Fails on timeout (printing the job's record).
cluster_wait_job() {
  local id=$1 timeout=${2:-120} st deadline
  shift; [ $# -gt 0 ] && shift
  local want=("$@")
  [ ${#want[@]} -gt 0 ] ||
    want=(COMPLETED FAILED CANCELLED TIMEOUT NODE_FAIL PREEMPTED OUT_OF_MEMORY BOOT_FAIL DEADLINE)
  deadline=$((SECONDS + timeout))
  while :; do
    st=$(cluster_job_state "$id")
    local w
    for w in "${want[@]}"; do
      if [ "$st" = "$w" ]; then echo "$st"; return 0; fi
    done
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "cluster_wait_job: job $id is '${st:-unknown}' after ${timeout} s, wanted ${want[*]}" >&2
      cluster_run scontrol show job "$id" >&2 || true
      return 1
    fi
    sleep 0.5
  done
}

# Print the last lines of every log: what a failing test should show.
cluster_logs_tail() {
  local n=${1:-30} f shown=0
  [ -n "$CLUSTER_LOGDIR" ] || return 0
  for f in "$CLUSTER_LOGDIR"/slurmctld.log "$CLUSTER_LOGDIR"/slurmctld.out; do
    [ -s "$f" ] && { echo "---- $f (last $n lines)"; tail -n "$n" "$f"; }
  done
  # slurmd logs: those with errors first, at most 4, so 64 nodes do not drown the report.
  for f in $(grep -l -E 'error|fatal' "$CLUSTER_LOGDIR"/slurmd.*.log "$CLUSTER_LOGDIR"/slurmd.*.out 2>/dev/null) \
           "$CLUSTER_LOGDIR"/slurmd."${CLUSTER_NODES[0]}".log; do
    [ -s "$f" ] || continue
    [ "$shown" -lt 4 ] || break
    echo "---- $f (last $n lines)"; tail -n "$n" "$f"; shown=$((shown + 1))
  done
}

_cluster_node_list() {
  local nodes=$1 prefix=$2 width=$3 names=$4 i
  CLUSTER_NODES=()
  if [ -n "$names" ]; then
    # shellcheck disable=SC2206
    CLUSTER_NODES=($names)
    return 0
  fi
  [ "$width" -gt 0 ] || { width=${#nodes}; [ "$width" -ge 2 ] || width=2; }
  for ((i = 1; i <= nodes; i++)); do CLUSTER_NODES+=("$(printf '%s%0*d' "$prefix" "$width" "$i")"); done
}

_cluster_write_conf() {
  local gpus=$1 cpus=$2 mem=$3 plugindir=$4 topology=$5 plugstack=$6 cgroup_disabled=$7
  shift 7
  local extra=("$@") d=$CLUSTER_VDIR
  local -A set
  local order=()
  _kv() { [ -n "${set[$1]+x}" ] || order+=("$1"); set[$1]=$2; }
  _kv ClusterName "ta$$"
  _kv SlurmctldHost localhost
  _kv SlurmctldPort "$CLUSTER_CTLD_PORT"
  _kv AuthType auth/none
  _kv CredType cred/none
  _kv SlurmUser root
  _kv SlurmdUser root
  _kv SlurmdParameters config_overrides
  _kv ProctrackType proctrack/pgid
  _kv TaskPlugin task/none
  _kv JobAcctGatherType jobacct_gather/none
  _kv AccountingStorageType accounting_storage/none
  _kv MpiDefault none
  _kv SelectType select/cons_tres
  _kv SelectTypeParameters CR_Core_Memory
  _kv StateSaveLocation "$d/state"
  _kv SlurmdSpoolDir "$d/spool/%n"
  _kv SlurmctldLogFile "$d/log/slurmctld.log"
  _kv SlurmdLogFile "$d/log/slurmd.%n.log"
  _kv SlurmctldPidFile "$d/run/slurmctld.pid"
  _kv SlurmdPidFile "$d/run/slurmd.%n.pid"
  _kv SlurmctldDebug info
  _kv SlurmdDebug info
  _kv PluginDir "$plugindir"
  _kv ReturnToService 2
  _kv MailProg /bin/true
  # Short timers: tests should not wait for production defaults (MinJobAge keeps finished jobs
  # visible to scontrol long enough for cluster_wait_job).
  _kv SlurmdTimeout 60
  _kv MessageTimeout 30
  _kv MinJobAge 600
  _kv SchedulerParameters bf_interval=5
  _kv KillWait 5
  [ "$gpus" -gt 0 ] && _kv GresTypes gpu
  if [ -n "$topology" ]; then _kv TopologyPlugin topology/tree; fi
  if [ -n "$plugstack" ]; then _kv PlugStackConfig "$d/plugstack.conf"; fi
  local line key appended=() partition=""
  for line in "${extra[@]}"; do
    key=${line%%=*}
    case $key in
      PartitionName) partition+="$line"$'\n' ;;
      NodeName|NodeSet|DownNodes|FrontendName|SwitchName) appended+=("$line") ;;
      *) if [[ $line == *=* && $line != *' '* ]]; then _kv "$key" "${line#*=}"; else appended+=("$line"); fi ;;
    esac
  done
  {
    echo "# Written by tests/lib/slurm_cluster.sh for a localhost test cluster."
    for key in "${order[@]}"; do echo "$key=${set[$key]}"; done
    local i=0 n gres=""
    [ "$gpus" -gt 0 ] && gres=" Gres=gpu:$gpus"
    for n in "${CLUSTER_NODES[@]}"; do
      echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((CLUSTER_CTLD_PORT + 1 + i)) CPUs=$cpus" \
        "RealMemory=$mem$gres${_CLUSTER_NODE_ATTR[$n]:-} State=UNKNOWN"
      i=$((i + 1))
    done
    for line in "${appended[@]}"; do echo "$line"; done
    if [ -n "$partition" ]; then printf '%s' "$partition"
    else echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"; fi
  } >"$CLUSTER_DIR/slurm.conf"
  if [ "$gpus" -gt 0 ]; then
    # Character devices (c 1 3, like /dev/null): slurmd accepts them as GPU files and then sets
    # CUDA_VISIBLE_DEVICES in steps; plain files are rejected as "not a valid character or block device".
    mkdir -p "$CLUSTER_DIR/dev"
    for ((i = 0; i < gpus; i++)); do
      [ -c "$CLUSTER_DIR/dev/nvidia$i" ] || mknod "$CLUSTER_DIR/dev/nvidia$i" c 1 3
    done
    echo "Name=gpu File=$d/dev/nvidia[0-$((gpus - 1))]" >"$CLUSTER_DIR/gres.conf"
  fi
  if [ "$cgroup_disabled" = yes ]; then echo "CgroupPlugin=disabled" >"$CLUSTER_DIR/cgroup.conf"; fi
  if [ -n "$topology" ]; then cp "$topology" "$CLUSTER_DIR/topology.conf"; fi
  if [ -n "$plugstack" ]; then cp "$plugstack" "$CLUSTER_DIR/plugstack.conf"; fi
  unset -f _kv
}

_cluster_idle_count() {
  cluster_run scontrol -o show node 2>/dev/null | grep -c 'State=IDLE ' || true
}

# _cluster_start_ctld [extra slurmctld args]
_cluster_start_ctld() {
  "${CLUSTER_PREFIX[@]}" slurmctld -D "$@" >>"$CLUSTER_LOGDIR/slurmctld.out" 2>&1 &
  CLUSTER_CTLD_PID=$!
}

_cluster_wait_ctld() {
  local timeout=$1
  ta_wait_for "$timeout" cluster_run scontrol ping || {
    echo "cluster_start: slurmctld does not answer on port $CLUSTER_CTLD_PORT after $timeout s" >&2
    cluster_logs_tail >&2
    return 1
  }
}

# The plugins load only into the Slurm release they were built for (configure --with-slurm-source;
# src/common/plugin.c checks major.minor.micro): a build for another release than the slurmctld
# that would run (PATH, or the --chroot root's) skips a cluster with our plugins instead of failing it
# (tools/slurm-matrix.sh builds such ones).
cluster_require_release() {
  local want=${TOPOAWARE_SLURM_RELEASE:-} have
  [ -n "$want" ] || return 0
  have=$("${CLUSTER_PREFIX[@]}" slurmctld -V 2>/dev/null | awk '{print $2}')
  [ -n "$have" ] || ta_skip "slurmctld not found: cannot start a cluster"
  [ "$have" = "$want" ] ||
    ta_skip "the plugins are built for Slurm $want, the slurmctld on PATH is $have (they would not load)"
}

cluster_start() {
  local nodes=4 gpus=0 cpus="" mem=16384 prefix=n width=0 names="" extra=() plugdir="" topology=""
  local plugstack="" files=() hwloc="" hwloc_node=() dir="" timeout="" cgroup_disabled=no node_attr=()
  local slurm_prefix=""
  CLUSTER_ROOT="" CLUSTER_SLURM_PREFIX=""
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) nodes=$2; shift ;;
      --gpus) gpus=$2; shift ;;
      --cpus) cpus=$2; shift ;;
      --memory) mem=$2; shift ;;
      --prefix) prefix=$2; shift ;;
      --width) width=$2; shift ;;
      --names) names=$2; shift ;;
      --node-attr) node_attr+=("$2"); shift ;;
      --conf) extra+=("$2"); shift ;;
      --plugin-dir) plugdir=$2; shift ;;
      --topology) topology=$2; shift ;;
      --plugstack) plugstack=$2; shift ;;
      --file) files+=("$2"); shift ;;
      --hwloc-xml) hwloc=$2; shift ;;
      --hwloc-xml-node) hwloc_node+=("$2"); shift ;;
      --dir) dir=$2; shift ;;
      --timeout) timeout=$2; shift ;;
      --chroot) CLUSTER_ROOT=$2; shift ;;
      --cgroup-disabled) cgroup_disabled=yes ;;
      --slurm-prefix) slurm_prefix=$2; shift ;;
      *) echo "cluster_start: unknown option '$1'" >&2; return 1 ;;
    esac
    shift
  done
  [ -z "$CLUSTER_STARTED" ] || { echo "cluster_start: a cluster is already running in this shell" >&2; return 1; }
  [ -z "$slurm_prefix" ] || [ -z "$CLUSTER_ROOT" ] ||
    { echo "cluster_start: --slurm-prefix and --chroot do not combine" >&2; return 1; }
  [ -n "$slurm_prefix" ] || [ -n "$CLUSTER_ROOT" ] || slurm_prefix=${TOPOAWARE_SLURM_PREFIX:-}
  CLUSTER_SLURM_PREFIX=$slurm_prefix
  if [ -n "$CLUSTER_SLURM_PREFIX" ]; then
    [ -x "$CLUSTER_SLURM_PREFIX/sbin/slurmctld" ] ||
      { echo "cluster_start: no $CLUSTER_SLURM_PREFIX/sbin/slurmctld" >&2; return 1; }
    # Built without cgroup plugins (tools/build-slurm.sh): slurmd of 23.11+ would fail to load one.
    compgen -G "$CLUSTER_SLURM_PREFIX/lib/slurm/cgroup_*.so" >/dev/null || cgroup_disabled=yes
  fi
  # No cgroup file system here (inside a root without /sys, as tools/trixie-tests.sh runs the tests):
  # slurmd of 23.11+ fails to load its cgroup plugin otherwise. (22.05 has no CgroupPlugin=disabled,
  # but every host it runs on has cgroups mounted.)
  if [ -z "$CLUSTER_ROOT" ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ] && [ ! -d /sys/fs/cgroup/memory ]; then
    cgroup_disabled=yes
  fi
  if [ -n "$plugdir" ] || [ -n "$plugstack" ]; then
    CLUSTER_PREFIX=()
    [ -z "$CLUSTER_ROOT" ] || CLUSTER_PREFIX=(chroot "$CLUSTER_ROOT")
    [ -z "$CLUSTER_SLURM_PREFIX" ] ||
      CLUSTER_PREFIX=(/usr/bin/env "PATH=$CLUSTER_SLURM_PREFIX/sbin:$CLUSTER_SLURM_PREFIX/bin:$PATH")
    cluster_require_release
  fi
  [ -z "$topology" ] || [ -r "$topology" ] ||
    { echo "cluster_start: cannot read topology file $topology" >&2; return 1; }
  [ -z "$plugstack" ] || [ -r "$plugstack" ] ||
    { echo "cluster_start: cannot read plugstack file $plugstack" >&2; return 1; }
  [ -n "$cpus" ] || { cpus=8; [ "$gpus" -le 8 ] || cpus=$gpus; }
  _cluster_node_list "$nodes" "$prefix" "$width" "$names"
  nodes=${#CLUSTER_NODES[@]}
  [ "$nodes" -ge 1 ] || { echo "cluster_start: no nodes" >&2; return 1; }
  _CLUSTER_NODE_ATTR=()
  local spec n
  for spec in "${node_attr[@]}"; do
    [[ $spec == *=* ]] || { echo "cluster_start: --node-attr wants LIST=ATTRS, got '$spec'" >&2; return 1; }
    for n in $(ta_hostnames "${spec%%=*}"); do _CLUSTER_NODE_ATTR[$n]+=" ${spec#*=}"; done
  done
  [ -n "$timeout" ] || timeout=$((60 + nodes / 2))

  if [ -n "$dir" ]; then
    mkdir -p "$dir"
  else
    # In a chroot, its own /tmp (the daemons must see the folder); else TMPDIR.
    if [ -n "$CLUSTER_ROOT" ]; then dir=$(mktemp -d "$CLUSTER_ROOT/tmp/ta-cluster.XXXXXX")
    else dir=$(mktemp -d "${TMPDIR:-/tmp}/ta-cluster.XXXXXX"); fi
    CLUSTER_OWN_DIR=$dir
  fi
  CLUSTER_DIR=$(cd "$dir" && pwd)
  CLUSTER_VDIR=${CLUSTER_DIR#"$CLUSTER_ROOT"}
  CLUSTER_CONF=$CLUSTER_VDIR/slurm.conf
  CLUSTER_LOGDIR=$CLUSTER_DIR/log
  _cluster_prefix
  mkdir -p "$CLUSTER_DIR"/{state,spool,log,run}
  CLUSTER_STARTED=yes
  ta_on_exit cluster_stop

  _cluster_reserve_ports $((nodes + 1)) || return 1
  CLUSTER_CTLD_PORT=$CLUSTER_PORT0
  local sysdir
  sysdir=$(_cluster_system_plugindir) ||
    { echo "cluster_start: Slurm's plugin folder (select_cons_tres.so) not found" >&2; return 1; }
  _cluster_write_conf "$gpus" "$cpus" "$mem" "${plugdir:+$plugdir:}$sysdir" "$topology" "$plugstack" \
    "$cgroup_disabled" "${extra[@]}"
  local f
  for f in "${files[@]}"; do cp "${f#*=}" "$CLUSTER_DIR/${f%%=*}"; done

  # -c: start from an empty state (the folder is new anyway); -i: never stop on unreadable state.
  _cluster_start_ctld -c -i
  _cluster_wait_ctld 30 || return 1

  local n xml kv
  CLUSTER_SLURMD_PIDS=()
  for n in "${CLUSTER_NODES[@]}"; do
    # slurmd checks its spool folder (where its socket goes) before it would create it: 26.05 logs an
    # error otherwise.
    mkdir -p "$CLUSTER_DIR/spool/$n"
    xml=$hwloc
    for kv in "${hwloc_node[@]}"; do [ "${kv%%=*}" = "$n" ] && xml=${kv#*=}; done
    if [ -n "$xml" ]; then
      "${CLUSTER_PREFIX[@]}" HWLOC_XMLFILE="$xml" HWLOC_THISSYSTEM=1 slurmd -D -N "$n" \
        >>"$CLUSTER_LOGDIR/slurmd.$n.out" 2>&1 &
    else
      "${CLUSTER_PREFIX[@]}" slurmd -D -N "$n" >>"$CLUSTER_LOGDIR/slurmd.$n.out" 2>&1 &
    fi
    CLUSTER_SLURMD_PIDS+=($!)
  done

  local deadline=$((SECONDS + timeout)) idle=0
  while :; do
    idle=$(_cluster_idle_count)
    [ "$idle" -lt "$nodes" ] || break
    if ! kill -0 "$CLUSTER_CTLD_PID" 2>/dev/null; then
      echo "cluster_start: slurmctld exited while nodes registered" >&2
      cluster_logs_tail >&2
      return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "cluster_start: only $idle of $nodes nodes idle after $timeout s (folder $CLUSTER_DIR). sinfo:" >&2
      cluster_run sinfo -N -o '%N %T %E' 2>&1 | head -n 20 >&2 || true
      cluster_logs_tail >&2
      return 1
    fi
    sleep 0.5
  done
  ta_note "cluster up: $nodes nodes idle (slurmctld port $CLUSTER_CTLD_PORT, folder $CLUSTER_DIR)"
}

# Pids of every process whose environment names this cluster's slurm.conf: the daemons, the
# slurmstepds they forked (which outlive a killed slurmd) and the job tasks. Nothing else matches.
#
# A slurmstepd does not show SLURM_CONF in /proc/PID/environ (Slurm's setproctitle writes the process
# title over the environment's memory), so slurmstepds are found by the socket each one listens on
# in the cluster's spool folder (/proc/net/unix: path and inode; /proc/PID/fd: socket:[inode]). One
# left running outlives its cluster: it keeps trying to report its job's end to the slurmctld port,
# and a later cluster on the released port took that for its own job of the same id (seen on 24.11:
# "_job_complete: JobId=8 WTERMSIG 15", the next test's job 8 ended).
_cluster_pids() {
  local p
  [ -n "$CLUSTER_CONF" ] || return 0
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = $$ ] && continue
    grep -qzxF "SLURM_CONF=$CLUSTER_CONF" "/proc/$p/environ" 2>/dev/null && echo "$p"
  done
  _cluster_stepd_pids
  return 0
}
_cluster_stepd_pids() {
  local p f inodes
  [ -n "${CLUSTER_VDIR:-}" ] && [ "$CLUSTER_VDIR" != / ] || return 0
  # The socket's path as slurmd bound it: inside a --chroot root, the path seen from there.
  inodes=" $(awk -v d="$CLUSTER_VDIR/spool/" 'index($8, d) == 1 { printf "%s ", $7 }' /proc/net/unix 2>/dev/null) "
  [ "$inodes" != "  " ] || return 0
  for p in $(pgrep -x slurmstepd 2>/dev/null); do
    for f in /proc/"$p"/fd/*; do
      f=$(readlink "$f" 2>/dev/null) || continue
      case $f in socket:\[*\]) f=${f#socket:[}; f=${f%]} ;; *) continue ;; esac
      case $inodes in *" $f "*) echo "$p"; break ;; esac
    done
  done
  return 0 # not the last grep's status: pids=$(_cluster_pids) must not stop a `set -e` test
}

# Restart slurmctld keeping its state (jobs must survive; used by plugin switch tests).
cluster_restart_ctld() {
  if [ -n "$CLUSTER_CTLD_PID" ]; then
    kill "$CLUSTER_CTLD_PID" 2>/dev/null || true
    local pid
    pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid" 2>/dev/null || true)
    [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
    ta_wait_for 30 sh -c "! kill -0 ${pid:-$CLUSTER_CTLD_PID} 2>/dev/null" || true
    wait "$CLUSTER_CTLD_PID" 2>/dev/null || true
  fi
  _cluster_start_ctld
  _cluster_wait_ctld 30
}

cluster_stop() {
  [ -n "$CLUSTER_STARTED" ] || return 0
  local pids p
  # Called from the EXIT handler of a failing test: show why before the folder goes.
  case ${TA_EXIT_STATUS:-0} in 0|77) ;; *) cluster_logs_tail 20 >&2 ;; esac
  # Jobs first, so slurmstepds end cleanly; then the daemons; then anything left, by force.
  if [ -n "$CLUSTER_CTLD_PID" ] && kill -0 "$CLUSTER_CTLD_PID" 2>/dev/null; then
    CLUSTER_CMD_TIMEOUT=10 cluster_run scancel --quiet --user=root >/dev/null 2>&1 || true
    # A moment for the slurmstepds to signal their tasks (ending on their own takes them ~8 s).
    local until=$((SECONDS + 2))
    while [ -n "$(_cluster_stepd_pids)" ] && [ "$SECONDS" -lt "$until" ]; do sleep 0.2; done
  fi
  # slurmstepds by force: they keep nothing a test needs, and left alive they report to a later cluster.
  pids=$(_cluster_stepd_pids)
  [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
  pids=$(_cluster_pids)
  [ -z "$pids" ] || kill $pids 2>/dev/null || true
  for p in "${CLUSTER_SLURMD_PIDS[@]}" $CLUSTER_CTLD_PID; do kill "$p" 2>/dev/null || true; done
  local deadline=$((SECONDS + 15))
  while [ -n "$(_cluster_pids)" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  pids=$(_cluster_pids)
  [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
  for p in "${CLUSTER_SLURMD_PIDS[@]}" $CLUSTER_CTLD_PID; do wait "$p" 2>/dev/null || true; done
  _cluster_release_ports
  if [ -n "$CLUSTER_OWN_DIR" ]; then
    if [ "${TOPOAWARE_KEEP_CLUSTER:-0}" = 1 ]; then
      echo "# cluster folder kept: $CLUSTER_DIR"
    else
      rm -rf "$CLUSTER_OWN_DIR"
    fi
  fi
  CLUSTER_STARTED="" CLUSTER_CTLD_PID="" CLUSTER_SLURMD_PIDS=() CLUSTER_OWN_DIR=""
  return 0
}
