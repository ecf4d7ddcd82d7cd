#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# spank_topoaware's task environment on a real localhost cluster: two slurmd "nodes" that pretend
# to be recorded 4-GPU machines (HWLOC_XMLFILE: n0001 = JURECA-DC, n0002 = Lassen; Gres=gpu:4 as in
# both recordings). `srun --tp=2 --pp=2 --dp=2 -N2 --ntasks-per-node=4 --gpus-per-node=4` gives each task its
# coordinates, RANK/LOCAL_RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, CUDA_VISIBLE_DEVICES in PCI bus
# order with CUDA_DEVICE_ORDER=PCI_BUS_ID, its GPU and NIC as hwloc pairs them, and NCCL_IB_HCA;
# a user's own NCCL_IB_HCA and RANK are kept; a user's CUDA_DEVICE_ORDER other than PCI_BUS_ID, or
# longer than its cap, gives ranks without GPU hints; --nccl-hints=off and a step without a layout get
# nothing; a missing topology file or a hash that differs from the one given by
# SPANK_TOPOAWARE_TOPO_HASH gives no hints and a warning; srun inside sbatch --tp inherits the
# layout; --gpus-per-task=1 keeps Slurm's binding. The admin's override_env= replaces exactly the
# variables it names. The hostfile: with a topology whose order is not Slurm's (n0002 before
# n0001), a batch job run as uid nobody finds $TOPOAWARE_HOSTFILE in its private folder (owned by
# it, 0700), in the order of TOPOAWARE_NODE_RANK, and `SLURM_HOSTFILE=$TOPOAWARE_HOSTFILE srun
# --distribution=arbitrary` gives SLURM_PROCID = RANK; the folder is gone after the job. Then with
# select/cons_tres_topoaware and PrologFlags=Alloc: the hash channel (job prolog file, root's) and a
# stale copy on the nodes, for root's jobs and nobody's; and with no topology= argument and no topoaware.conf, slurm.conf outside
# /etc/slurm, the tasks read the topology slurmctld read (beside slurm.conf).
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
ta_require_daemon_tests
ta_require_cmd slurmctld slurmctld
ta_require_cmd slurmd slurmd
ta_require_cmd srun slurm-client
src=${top_srcdir:-$(dirname "$0")/..}
src=$(cd "$src" && pwd)
b=${top_builddir:-.}
b=$(cd "$b" && pwd)
spank=$b/plugins/spank/.libs/spank_topoaware.so
[ -f "$spank" ] || ta_skip "spank_topoaware.so not built (no Slurm headers)"
[ -x "$b/topoaware" ] || ta_fail "topoaware (the command) not built"
jrc=$src/tests/fixtures/hwloc/jrc0323-4gpu-4mlx5.xml
lassen=$src/tests/fixtures/hwloc/lassen-power9-4xv100-4mlx5.xml

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-taskenv.XXXXXX")
ta_on_exit "rm -rf '$work'"
chmod 755 "$work"
"$b/topoaware" generate fat-tree --leaves 2 --hosts-per-leaf 2 --json "$work/topology.json" >/dev/null ||
  ta_fail "topoaware generate failed"
grep -q '"n0002"' "$work/topology.json" || ta_fail "generated topology has no host n0002"
# Every plugstack.conf of this test names its own state folder (the default /run/topoaware is
# shared by every test cluster on this machine, whose job ids all start at 1).
state=$work/state
echo "required $spank topology=$work/topology.json state_dir=$state" >"$work/plugstack.conf"

cluster_start --nodes 2 --width 4 --gpus 4 --plugstack "$work/plugstack.conf" \
  --hwloc-xml-node "n0001=$jrc" --hwloc-xml-node "n0002=$lassen"
plugstack=$CLUSTER_DIR/plugstack.conf

# One line per task, sorted by SLURM_PROCID; unset variables print as "-".
VARS="SLURMD_NODENAME SLURM_LOCALID RANK LOCAL_RANK WORLD_SIZE TOPOAWARE_NODE_RANK TOPOAWARE_TP_RANK
TOPOAWARE_CP_RANK TOPOAWARE_EP_RANK TOPOAWARE_DP_RANK TOPOAWARE_PP_RANK TOPOAWARE_WORLD_SIZE TOPOAWARE_LAYOUT
MASTER_ADDR MASTER_PORT CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER TOPOAWARE_GPU TOPOAWARE_NIC NCCL_IB_HCA"
script='for v in SLURM_PROCID '$(echo $VARS)'; do eval "x=\${$v-"-"}"; printf "%s=%s " "$v" "$x"; done; echo'
step() {  # step OUTFILE [srun options...]
  local out=$1; shift
  cluster_run srun -N2 --ntasks-per-node=4 --gpus-per-node=4 "$@" bash -c "$script" >"$out.raw" 2>"$out.err" ||
    { cat "$out.err" >&2; ta_fail "srun $* failed"; }
  sort -t= -k2 -n "$out.raw" >"$out"
}
field() { sed -n "s/.* $2=\([^ ]*\) .*/\1/p" <<<" $1 "; }

# 1. The layout: ranks 4k..4k+3 on node k; tp-cp-ep-dp-pp: rank = tp + 2*dp + 4*pp.
step "$work/a" --tp=2 --pp=2 --dp=2 --nccl-hints=print
[ "$(wc -l <"$work/a")" = 8 ] && grep -q " TOPOAWARE_TP_RANK=[0-9]" "$work/a" ||
  ta_fail "expected 8 tasks with hints: $(cat "$work/a" "$work/a.err")"
declare -A gpu=([n0001,0]=0000:03:00.0 [n0001,1]=0000:44:00.0 [n0001,2]=0000:84:00.0 [n0001,3]=0000:c4:00.0
  [n0002,0]=0004:04:00.0 [n0002,1]=0004:05:00.0 [n0002,2]=0035:03:00.0 [n0002,3]=0035:04:00.0)
declare -A nic=([0]=mlx5_0 [1]=mlx5_1 [2]=mlx5_2 [3]=mlx5_3)
master=""
while read -r line; do
  host=$(field "$line" SLURMD_NODENAME) lid=$(field "$line" SLURM_LOCALID) rank=$(field "$line" RANK)
  nr=$(field "$line" TOPOAWARE_NODE_RANK)
  [ "$rank" = $((4 * nr + lid)) ] || ta_fail "task $line: RANK is not 4*node_rank+local_id"
  [ "$(field "$line" TOPOAWARE_TP_RANK)" = $((rank % 2)) ] || ta_fail "task $line: wrong TP rank"
  [ "$(field "$line" TOPOAWARE_DP_RANK)" = $((rank / 2 % 2)) ] || ta_fail "task $line: wrong DP rank"
  [ "$(field "$line" TOPOAWARE_PP_RANK)" = $((rank / 4)) ] || ta_fail "task $line: wrong PP rank"
  [ "$(field "$line" TOPOAWARE_CP_RANK)" = 0 ] && [ "$(field "$line" TOPOAWARE_EP_RANK)" = 0 ] ||
    ta_fail "task $line: cp/ep ranks not 0"
  [ "$(field "$line" LOCAL_RANK)" = "$lid" ] || ta_fail "task $line: LOCAL_RANK"
  [ "$(field "$line" WORLD_SIZE)" = 8 ] && [ "$(field "$line" TOPOAWARE_WORLD_SIZE)" = 8 ] ||
    ta_fail "task $line: WORLD_SIZE"
  [ "$(field "$line" TOPOAWARE_LAYOUT)" = "tp=2,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp" ] ||
    ta_fail "task $line: TOPOAWARE_LAYOUT"
  [ "$(field "$line" CUDA_VISIBLE_DEVICES)" = 0,1,2,3 ] || ta_fail "task $line: CUDA_VISIBLE_DEVICES"
  [ "$(field "$line" CUDA_DEVICE_ORDER)" = PCI_BUS_ID ] || ta_fail "task $line: CUDA_DEVICE_ORDER"
  [ "$(field "$line" TOPOAWARE_GPU)" = "${gpu[$host,$lid]}" ] || ta_fail "task $line: expected GPU ${gpu[$host,$lid]}"
  [ "$(field "$line" TOPOAWARE_NIC)" = "${nic[$lid]}" ] || ta_fail "task $line: expected NIC ${nic[$lid]}"
  [ "$(field "$line" NCCL_IB_HCA)" = "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1" ] || ta_fail "task $line: NCCL_IB_HCA"
  [ "$rank" != 0 ] || master=$host
  [ -z "$master" ] || [ "$(field "$line" MASTER_ADDR)" = "$master" ] ||
    ta_fail "task $line: MASTER_ADDR is not rank 0's node $master"
done <"$work/a"
jobid_port=$(field "$(head -1 "$work/a")" MASTER_PORT)
[ "$jobid_port" -ge 20000 ] && [ "$jobid_port" -lt 32000 ] || ta_fail "MASTER_PORT $jobid_port out of 20000..31999"
[ "$(grep -c '^topoaware: rank=' "$work/a.err")" = 8 ] ||
  ta_fail "--nccl-hints=print: expected 8 rank map lines: $(cat "$work/a.err")"
msg="tp=2 pp=2 dp=2 on n0001 (JURECA-DC) + n0002 (Lassen): coordinates,"
msg+=" launcher variables, GPUs, NICs and NCCL_IB_HCA per task"
ta_pass "$msg"
ta_note "$(head -1 "$work/a")"

# 1b. Each node's GPUs and NICs are probed once and kept for the boot: node.<NODE>.devices in the
# state folder (root's, 0600, written by slurmstepd before the tasks); later steps read it back
# instead of probing hwloc again. Shown by editing n0001's file (its key kept): the next step's
# tasks on n0001 get the edited NIC names, n0002's the probed ones; a removed file is probed again.
for n in n0001 n0002; do
  f=$state/node.$n.devices
  [ -f "$f" ] && [ ! -L "$f" ] && [ "$(stat -c '%u %a' "$f")" = "0 600" ] ||
    ta_fail "no root-owned file $f of mode 0600 after a layout step: $(ls -la "$state")"
done
sed -i 's/"mlx5_\([0-3]\)"/"mlx5_9\1"/' "$state/node.n0001.devices"
step "$work/a2" --tp=2 --pp=2 --dp=2
edited="=mlx5_90:1,mlx5_91:1,mlx5_92:1,mlx5_93:1" probed="=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"
[ "$(grep -c " SLURMD_NODENAME=n0001 .* TOPOAWARE_NIC=mlx5_9[0-3] NCCL_IB_HCA=$edited " "$work/a2")" = 4 ] ||
  ta_fail "n0001's tasks did not take the NICs of its devices file: $(cat "$work/a2" "$work/a2.err")"
[ "$(grep -c " SLURMD_NODENAME=n0002 .* TOPOAWARE_NIC=mlx5_[0-3] NCCL_IB_HCA=$probed " "$work/a2")" = 4 ] ||
  ta_fail "n0002's tasks changed: $(cat "$work/a2")"
rm -f "$state/node.n0001.devices"
step "$work/a3" --tp=2 --pp=2 --dp=2
[ "$(grep -c " NCCL_IB_HCA=$probed " "$work/a3")" = 8 ] && [ -f "$state/node.n0001.devices" ] ||
  ta_fail "a removed devices file was not probed again: $(cat "$work/a3"; ls -la "$state")"
ta_pass "GPUs and NICs probed once per node, kept in <state_dir>/node.<NODE>.devices, read back by later steps"

# 2. The user's own values are kept.
NCCL_IB_HCA==mlx5_9:1 RANK=77 step "$work/b" --tp=2 --pp=2 --dp=2
grep -v 'NCCL_IB_HCA==mlx5_9:1 ' "$work/b" && ta_fail "a user's NCCL_IB_HCA was replaced"
grep -v ' RANK=77 ' "$work/b" && ta_fail "a user's RANK was replaced"
grep -q ' TOPOAWARE_RANK\| TOPOAWARE_TP_RANK=1 ' "$work/b" || ta_fail "TOPOAWARE_* missing when the user set RANK"
[ "$(grep -c "^topoaware: kept the job's own RANK, NCCL_IB_HCA " "$work/b.err")" = 2 ] ||
  ta_fail "expected one 'kept the job's own RANK, NCCL_IB_HCA' line per node: $(cat "$work/b.err")"
ta_pass "a user's NCCL_IB_HCA and RANK are kept, said once per node on stderr; TOPOAWARE_* still set"

# 2a. The user's CUDA_DEVICE_ORDER. Another order than PCI_BUS_ID renumbers Slurm's GPUs: the ranks
# still, no GPU or NIC hints, said once per node. One longer than its 256-byte cap (slurmstepd
# reads what the client sent, and only up to a bound): not read, logged in slurmd's log and on the
# step's stderr, the ranks still, no GPU or NIC hints.
CUDA_DEVICE_ORDER=FASTEST_FIRST step "$work/o1" --tp=2 --pp=2 --dp=2
[ "$(grep -c ' TOPOAWARE_TP_RANK=[01] .* CUDA_VISIBLE_DEVICES=0,1,2,3 CUDA_DEVICE_ORDER=FASTEST_FIRST TOPOAWARE_GPU=- TOPOAWARE_NIC=- NCCL_IB_HCA=- ' \
  "$work/o1")" = 8 ] || ta_fail "CUDA_DEVICE_ORDER=FASTEST_FIRST: $(cat "$work/o1" "$work/o1.err")"
[ "$(grep -c '^topoaware: CUDA_DEVICE_ORDER=FASTEST_FIRST is set' "$work/o1.err")" = 2 ] ||
  ta_fail "CUDA_DEVICE_ORDER=FASTEST_FIRST: expected one line per node: $(cat "$work/o1.err")"
# (The tasks print its length, not the value: srun splits output lines that long.)
long=$(head -c 100000 /dev/zero | tr '\0' x)
short_script=${script/ CUDA_DEVICE_ORDER / }
short_script=${short_script%echo}'echo "ORDER_LEN=${#CUDA_DEVICE_ORDER}"'
CUDA_DEVICE_ORDER=$long cluster_run srun -N2 --ntasks-per-node=4 --gpus-per-node=4 --tp=2 --pp=2 --dp=2 \
  bash -c "$short_script" >"$work/o2" 2>"$work/o2.err" || ta_fail "srun with a long CUDA_DEVICE_ORDER failed"
[ "$(grep -c ' TOPOAWARE_TP_RANK=[01] .* TOPOAWARE_GPU=- TOPOAWARE_NIC=- NCCL_IB_HCA=- ORDER_LEN=100000$' "$work/o2")" = 8 ] ||
  ta_fail "a 100,000-byte CUDA_DEVICE_ORDER: $(cut -c1-400 "$work/o2" "$work/o2.err")"
grep -q 'error: topoaware: CUDA_DEVICE_ORDER is longer than 256 bytes: not read' "$work/o2.err" &&
  grep -q 'error: topoaware: CUDA_DEVICE_ORDER is longer than 256 bytes: not read' "$CLUSTER_LOGDIR"/slurmd.*.log ||
  ta_fail "a 100,000-byte CUDA_DEVICE_ORDER was not refused with a message: $(cut -c1-400 "$work/o2.err")"
ta_pass "a user's CUDA_DEVICE_ORDER other than PCI_BUS_ID: ranks, no GPU/NIC hints, said once per node;" \
  "one of 100,000 bytes: not read (256-byte cap), logged, ranks, no GPU/NIC hints"

# 3. --nccl-hints=off, and a step without a layout: nothing set.
step "$work/c" --tp=2 --pp=2 --dp=2 --nccl-hints=off
grep -v ' TOPOAWARE_TP_RANK=- .* NCCL_IB_HCA=- ' "$work/c" && ta_fail "--nccl-hints=off set variables"
step "$work/d"
grep -v ' RANK=- .*TOPOAWARE_TP_RANK=- .* CUDA_DEVICE_ORDER=- .* NCCL_IB_HCA=- ' "$work/d" &&
  ta_fail "a step without a layout got variables"
grep -q ' CUDA_VISIBLE_DEVICES=0,1,2,3 ' "$work/d" ||
  ta_fail "a step without a layout: Slurm's CUDA_VISIBLE_DEVICES changed"
ta_pass "--nccl-hints=off and steps without a layout get no variables"

# 2b. The admin's override_env=: NCCL_IB_HCA replaced, RANK (not listed) still kept; an unknown
# name is reported and ignored. Then override_env=all: RANK replaced too.
echo "required $spank topology=$work/topology.json state_dir=$state override_env=BOGUS,NCCL_IB_HCA" >"$plugstack"
NCCL_IB_HCA==mlx5_9:1 RANK=77 step "$work/b2" --tp=2 --pp=2 --dp=2
[ "$(wc -l <"$work/b2")" = 8 ] || ta_fail "override_env=: expected 8 tasks: $(cat "$work/b2" "$work/b2.err")"
grep -v ' NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1 ' "$work/b2" &&
  ta_fail "override_env=NCCL_IB_HCA: the user's NCCL_IB_HCA was not replaced"
grep -v ' RANK=77 ' "$work/b2" && ta_fail "override_env=NCCL_IB_HCA: the user's RANK (not listed) was replaced"
[ "$(grep -c "^topoaware: replaced the job's own NCCL_IB_HCA " "$work/b2.err")" = 2 ] ||
  ta_fail "expected one 'replaced the job's own NCCL_IB_HCA' line per node: $(cat "$work/b2.err")"
[ "$(grep -c "^topoaware: kept the job's own RANK " "$work/b2.err")" = 2 ] ||
  ta_fail "expected one 'kept RANK' line per node"
grep -q "'BOGUS' is not a variable topoaware sets only when unset" "$work/b2.err" ||
  ta_fail "override_env=BOGUS not reported: $(cat "$work/b2.err")"
echo "required $spank topology=$work/topology.json state_dir=$state override_env=all" >"$plugstack"
NCCL_IB_HCA==mlx5_9:1 RANK=77 MASTER_PORT=1 step "$work/b3" --tp=2 --pp=2 --dp=2
sed 's/ MASTER_PORT=[0-9]* / /' "$work/a" | diff -u - <(sed 's/ MASTER_PORT=[0-9]* / /' "$work/b3") ||
  ta_fail "override_env=all: not the same variables as without the user's values"
grep -q ' MASTER_PORT=1 ' "$work/b3" && ta_fail "override_env=all: the user's MASTER_PORT was kept"
echo "required $spank topology=$work/topology.json state_dir=$state" >"$plugstack"
msg="override_env=NCCL_IB_HCA replaces only the user's NCCL_IB_HCA (RANK kept; unknown"
msg+=" names reported); override_env=all replaces RANK, MASTER_PORT, NCCL_IB_HCA"
ta_pass "$msg"

# 4. A hash that differs from the one the job was placed with: no hints, a warning.
SPANK_TOPOAWARE_TOPO_HASH=sha256:0000 step "$work/e" --tp=2 --pp=2 --dp=2
grep -v ' RANK=- .*TOPOAWARE_TP_RANK=- .* NCCL_IB_HCA=- ' "$work/e" && ta_fail "a stale topology copy still gave hints"
grep -q 'no topoaware hints.*stale' "$work/e.err" || ta_fail "no warning for a stale copy: $(cat "$work/e.err")"
ta_pass "a topology copy whose hash differs gives no hints and a warning"

# 4b. srun inside an sbatch --tp job: the step inherits the job's layout (spank_topoaware(8)).
printf '#!/bin/bash\nsrun bash -c %q\n' "$script" >"$work/job.sh"
id=$(cluster_run sbatch --parsable -N2 --ntasks-per-node=4 --gpus-per-node=4 --tp=2 --pp=2 --dp=2 \
  -o "$work/job.out" -e "$work/job.err" "$work/job.sh")
cluster_wait_job "$id" 120 >/dev/null
[ "$(cluster_job_state "$id")" = COMPLETED ] ||
  ta_fail "batch job $id: $(cluster_job_state "$id"): $(cat "$work/job.err" 2>/dev/null)"
sort -t= -k2 -n "$work/job.out" | sed 's/ MASTER_PORT=[0-9]* / /' >"$work/g"
sed 's/ MASTER_PORT=[0-9]* / /' "$work/a" | diff -u - "$work/g" ||
  ta_fail "srun in an sbatch --tp job: not the same task environment as the srun step"
# The batch step is not a rank: no "no hints" warning there (it gets the hostfile instead, see 4d).
grep 'topoaware: warning' "$work/job.err" && ta_fail "batch job $id: a topoaware warning in the batch step"
msg="srun inside sbatch --tp=2 --pp=2 --dp=2: the same coordinates,"
msg+=" GPUs and NICs per task; no warning from the batch step"
ta_pass "$msg"

# 4c. --gpus-per-task=1: Slurm binds one GPU per task; it is kept, and TOPOAWARE_GPU names it.
cluster_run srun -N2 --ntasks-per-node=4 --gpus-per-task=1 --tp=2 --pp=2 --dp=2 bash -c "$script" \
  >"$work/h.raw" 2>"$work/h.err" || { cat "$work/h.err" >&2; ta_fail "srun --gpus-per-task=1 failed"; }
while read -r line; do
  host=$(field "$line" SLURMD_NODENAME) c=$(field "$line" CUDA_VISIBLE_DEVICES)
  case $c in [0-3]) ;; *) ta_fail "--gpus-per-task=1: CUDA_VISIBLE_DEVICES=$c is not one GPU: $line" ;; esac
  [ "$(field "$line" TOPOAWARE_GPU)" = "${gpu[$host,$c]}" ] ||
    ta_fail "--gpus-per-task=1: TOPOAWARE_GPU is not GPU $c of $host: $line"
done <"$work/h.raw"
[ "$(wc -l <"$work/h.raw")" = 8 ] || ta_fail "--gpus-per-task=1: expected 8 tasks"
ta_pass "--gpus-per-task=1: Slurm's one GPU per task kept, TOPOAWARE_GPU is that GPU"

# 4d. The hostfile for MPI launches. A topology whose order is not Slurm's: the fabric of
# topology.json with hosts renamed so that n0002 shares a leaf with n0000 and n0001 with n0003;
# leaf groups are ordered by their hosts, so the job n[0001-0002] is ordered n0002, n0001.
"$b/topoaware" generate fat-tree --leaves 2 --hosts-per-leaf 2 --ibnetdiscover "$work/fabric.txt" >/dev/null
sed -e 's/"n0002 /"nB /; s/"n0003 /"n0002 /; s/"n0004 /"n0000 /; s/"nB /"n0003 /' \
  "$work/fabric.txt" >"$work/swapped.txt"
"$b/topoaware" discover -q --ibnetdiscover "$work/swapped.txt" --json "$work/swapped.json" ||
  ta_fail "topoaware discover of the renamed fabric failed"
echo "required $spank topology=$work/swapped.json state_dir=$state" >"$plugstack"
# As a user other than root when the system has nobody (root may submit for another uid); the
# job's folders and files must then be readable by it.
user=root group=root
if id -u nobody >/dev/null 2>&1 &&
  getent group "$(id -gn nobody)" >/dev/null; then user=nobody group=$(id -gn nobody); fi
uid=$(id -u "$user") gid=$(getent group "$group" | cut -d: -f3)
chmod 755 "$CLUSTER_DIR"
out=$work/out
mkdir -p "$out" && chmod 1777 "$out"
{
  echo '#!/bin/bash'
  echo 'echo "hostfile=${TOPOAWARE_HOSTFILE-unset} rankmap=${TOPOAWARE_RANKMAP-unset} uid=$(id -u)"'
  echo 'stat -c "stat %n %u %g %a %F" "$(dirname "$TOPOAWARE_HOSTFILE")" "$TOPOAWARE_HOSTFILE" "$TOPOAWARE_RANKMAP"'
  echo "cp \"\$TOPOAWARE_HOSTFILE\" $out/hostfile; cp \"\$TOPOAWARE_RANKMAP\" $out/rankmap"
  # The command spank_topoaware(8) gives for MPI launches.
  fmt='SLURM_HOSTFILE=$TOPOAWARE_HOSTFILE srun --distribution=arbitrary -n $SLURM_NTASKS'
  fmt+=' bash -c %q >%s/arbitrary\n'
  # shellcheck disable=SC2059
  printf "$fmt" "$script" "$out"
  printf 'srun -n 8 bash -c %q >%s/block\n' "$script" "$out"
  echo 'echo "after the steps: $(wc -l <"$TOPOAWARE_HOSTFILE") lines"'
} >"$out/job.sh"
# sbatch itself runs as that user (setpriv; with auth/none the job is theirs): Slurm 26.05's sbatch
# no longer takes --uid.
as_user=()
[ "$user" = root ] || as_user=(setpriv --reuid="$uid" --regid="$gid" --clear-groups)
id=$(cluster_run "${as_user[@]}" sbatch --parsable -N2 --ntasks-per-node=4 --gpus-per-node=4 \
  --tp=2 --pp=2 --dp=2 -o "$out/job.out" -e "$out/job.err" "$out/job.sh")
cluster_wait_job "$id" 120 >/dev/null
[ "$(cluster_job_state "$id")" = COMPLETED ] ||
  ta_fail "batch job $id as $user: $(cluster_job_state "$id"): $(cat "$out/job.out" "$out/job.err" 2>/dev/null)"
ta_note "$(head -1 "$out/job.out")"
grep -q "^hostfile=$state/job.$id/hostfile rankmap=$state/job.$id/rankmap uid=$uid\$" "$out/job.out" ||
  ta_fail "TOPOAWARE_HOSTFILE/TOPOAWARE_RANKMAP in the batch step: $(cat "$out/job.out" "$out/job.err")"
grep -qx "stat $state/job.$id $uid $gid 700 directory" "$out/job.out" ||
  ta_fail "the job folder is not $uid:$gid 0700: $(grep ^stat "$out/job.out")"
grep -qx "stat $state/job.$id/hostfile $uid $gid 600 regular file" "$out/job.out" ||
  ta_fail "the hostfile is not $uid's, 0600: $(grep ^stat "$out/job.out")"
grep -qx "stat $state/job.$id/rankmap $uid $gid 600 regular file" "$out/job.out" ||
  ta_fail "the rank map is not $uid's, 0600"
[ "$(tr '\n' ' ' <"$out/hostfile")" = "n0002 n0002 n0002 n0002 n0001 n0001 n0001 n0001 " ] ||
  ta_fail "hostfile: $(tr '\n' ' ' <"$out/hostfile"), expected n0002 x4 then n0001 x4"
sort -t= -k2 -n "$out/arbitrary" >"$out/arbitrary.sorted"
[ "$(wc -l <"$out/arbitrary.sorted")" = 8 ] ||
  ta_fail "srun --distribution=arbitrary: expected 8 tasks: $(cat "$out/arbitrary" "$out/job.err")"
mapfile -t hosts <"$out/hostfile"
while read -r line; do
  procid=$(field "$line" SLURM_PROCID) host=$(field "$line" SLURMD_NODENAME) nr=$(field "$line" TOPOAWARE_NODE_RANK)
  [ "$procid" = "$(field "$line" RANK)" ] || ta_fail "arbitrary: SLURM_PROCID $procid is not RANK: $line"
  [ "${hosts[$procid]}" = "$host" ] ||
    ta_fail "arbitrary: task $procid on $host, hostfile line $((procid + 1)) says ${hosts[$procid]}"
  for ((k = 4 * nr; k < 4 * nr + 4; k++)); do
    [ "${hosts[$k]}" = "$host" ] ||
      ta_fail "hostfile line $((k + 1)) is ${hosts[$k]}, but TOPOAWARE_NODE_RANK $nr is $host"
  done
  pat="^rank=$procid node=$nr host=$host local=$(field "$line" SLURM_LOCALID) tp=$(field "$line" TOPOAWARE_TP_RANK) .*"
  pat+=" pp=$(field "$line" TOPOAWARE_PP_RANK) .* leaf=[^ ]* leaf_group=[0-9]* pod=[0-9-]*\$"
  grep -q "$pat" "$out/rankmap" ||
    ta_fail "rank map has no line for rank $procid on $host: $(cat "$out/rankmap")"
done <"$out/arbitrary.sorted"
[ "$(grep -c '^rank=' "$out/rankmap")" = 8 ] && head -1 "$out/rankmap" |
  grep -q '^# topoaware rank map: tp=2,cp=1,ep=1,dp=2,pp=2,' ||
  ta_fail "rank map: $(cat "$out/rankmap")"
# Without the hostfile Slurm's own order differs here (the reason for the hostfile).
grep -q '^SLURM_PROCID=0 SLURMD_NODENAME=n0001 .* RANK=4 ' "$out/block" ||
  ta_fail "block distribution: this topology does not reverse Slurm's order: $(cat "$out/block")"
grep -qx 'after the steps: 8 lines' "$out/job.out" ||
  ta_fail "the hostfile did not last the batch script: $(tail -1 "$out/job.out")"
ta_wait_for 20 sh -c "[ ! -e '$state/job.$id' ]" ||
  ta_fail "the job epilog did not remove $state/job.$id: $(ls -la "$state/job.$id")"
msg="hostfile (job run as $user): $state/job.$id/hostfile owned by $uid:$gid in a 0700 folder, lists n0002 x4 then"
msg+=" n0001 x4 (TOPOAWARE_NODE_RANK order); srun --distribution=arbitrary gives SLURM_PROCID = RANK on every task; the"
msg+=" rank map matches; the folder is gone after the job"
ta_pass "$msg"
ta_note "$(sed -n 2p "$out/rankmap")"

# 4e. A batch job without a layout: no job folder, no TOPOAWARE_HOSTFILE.
plain_cmd="echo \"hostfile=\${TOPOAWARE_HOSTFILE-unset}"
plain_cmd+=" folder=\$(ls -d $state/job.\$SLURM_JOB_ID 2>/dev/null || echo none)\""
id=$(cluster_run sbatch --parsable -N1 -o "$out/plain.out" -e "$out/plain.err" \
  --wrap "$plain_cmd")
cluster_wait_job "$id" 120 >/dev/null
grep -qx 'hostfile=unset folder=none' "$out/plain.out" ||
  ta_fail "a job without a layout: $(cat "$out/plain.out" "$out/plain.err")"
ta_pass "a batch job without a layout gets no job folder and no TOPOAWARE_HOSTFILE"

# 4f. Only checked layouts reach the tasks (spank_topoaware(8), CHECKED LAYOUTS): slurmstepd also
# takes _SLURM_SPANK_OPTION_topoaware_* from the step's environment, which srun never checked.
# (1) srun without a layout, the variables exported by hand: no hints, a warning that says why.
_SLURM_SPANK_OPTION_topoaware_tp=2 _SLURM_SPANK_OPTION_topoaware_dp=4 step "$work/u"
grep -v ' RANK=- .*TOPOAWARE_TP_RANK=- .* NCCL_IB_HCA=- ' "$work/u" &&
  ta_fail "an injected _SLURM_SPANK_OPTION_topoaware_tp gave hints"
uwarn="topoaware: warning: the step's layout tp=2,cp=1,ep=1,dp=4,pp=1 comes from _SLURM_SPANK_OPTION_topoaware_\*"
uwarn+=" variables in its environment, not from srun's options (srun checked no layout)"
[ "$(grep -c "^$uwarn" "$work/u.err")" = 2 ] ||
  ta_fail "expected one warning per node about the injected layout: $(cat "$work/u.err")"
grep -q "error: topoaware: the step's layout tp=2,cp=1,ep=1,dp=4,pp=1 comes from" "$CLUSTER_LOGDIR"/slurmd.n0001.log ||
  ta_fail "the injected layout is not in slurmd's log"
# (1b) srun with a layout; an injected option it was not given changes that layout: no hints.
_SLURM_SPANK_OPTION_topoaware_rank_order=tp-pp-dp step "$work/u2" --tp=2 --pp=2 --dp=2
grep -v ' RANK=- .*TOPOAWARE_TP_RANK=- .* NCCL_IB_HCA=- ' "$work/u2" && ta_fail "an injected rank order gave hints"
pat="^topoaware: warning: the step's layout tp=2,cp=1,ep=1,dp=2,pp=2,rank-order=tp-pp-dp"
pat+=" is not the one srun checked (tp=2,cp=1,ep=1,dp=2,pp=2)"
grep -q "$pat" "$work/u2.err" ||
  ta_fail "no warning for a layout changed by an injected option: $(cat "$work/u2.err")"
msg="_SLURM_SPANK_OPTION_topoaware_* exported by hand (srun without a layout, or"
msg+=" one option more than srun's): no hints, a warning per node and in slurmd's log"
ta_pass "$msg"

# (2) sbatch --export=NONE: the batch step still gets the hostfile and rank map of the job's
# checked layout (from SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_*, which --export=NONE keeps).
{
  echo '#!/bin/bash'
  echo 'echo "hostfile=${TOPOAWARE_HOSTFILE-unset} rankmap=${TOPOAWARE_RANKMAP-unset}"'
  echo "/bin/cp \"\$TOPOAWARE_HOSTFILE\" $out/hostfile.none; /bin/cp \"\$TOPOAWARE_RANKMAP\" $out/rankmap.none"
} >"$out/none.sh"
id=$(cluster_run sbatch --parsable --export=NONE -N2 --ntasks-per-node=4 --gpus-per-node=4 --tp=2 --pp=2 --dp=2 \
  -o "$out/none.out" -e "$out/none.err" "$out/none.sh")
cluster_wait_job "$id" 120 >/dev/null
[ "$(cluster_job_state "$id")" = COMPLETED ] ||
  ta_fail "batch job $id --export=NONE: $(cluster_job_state "$id"): $(cat "$out/none.out" "$out/none.err" 2>/dev/null)"
grep -qx "hostfile=$state/job.$id/hostfile rankmap=$state/job.$id/rankmap" "$out/none.out" ||
  ta_fail "sbatch --export=NONE: no TOPOAWARE_HOSTFILE/TOPOAWARE_RANKMAP: $(cat "$out/none.out" "$out/none.err")"
diff -u "$out/hostfile" "$out/hostfile.none" ||
  ta_fail "sbatch --export=NONE: not the hostfile of the same job with --export=ALL"
diff -u <(grep '^rank=' "$out/rankmap") <(grep '^rank=' "$out/rankmap.none") ||
  ta_fail "sbatch --export=NONE: another rank map"
head -1 "$out/rankmap.none" | grep -q '^# topoaware rank map: tp=2,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp' ||
  ta_fail "sbatch --export=NONE: rank map header $(head -1 "$out/rankmap.none")"
grep 'topoaware' "$out/none.err" && ta_fail "sbatch --export=NONE: a topoaware message in the batch step"
msg="sbatch --export=NONE --tp=2 --pp=2 --dp=2: TOPOAWARE_HOSTFILE"
msg+=" and TOPOAWARE_RANKMAP, the same files as with --export=ALL"
ta_pass "$msg"

# (3) A batch job without a layout, _SLURM_SPANK_OPTION_topoaware_tp exported at submit: no
# hostfile, a warning; (3b) a layout job with one injected option more: the checked layout's files.
id=$(_SLURM_SPANK_OPTION_topoaware_tp=2 cluster_run sbatch --parsable -N1 -o "$out/inj.out" -e "$out/inj.err" \
  --wrap 'echo "hostfile=${TOPOAWARE_HOSTFILE-unset}"')
cluster_wait_job "$id" 120 >/dev/null
grep -qx 'hostfile=unset' "$out/inj.out" ||
  ta_fail "an injected layout gave a batch job a hostfile: $(cat "$out/inj.out" "$out/inj.err")"
pat="^topoaware: warning: the batch step's environment gives the layout tp=2,cp=1,ep=1,dp=1,pp=1"
pat+=" (_SLURM_SPANK_OPTION_topoaware_\* variables), which neither sbatch nor slurmctld checked;"
pat+=" ignored, the job's checked layout is none"
grep -q "$pat" "$out/inj.err" ||
  ta_fail "no warning for a batch step's injected layout: $(cat "$out/inj.err")"
id=$(_SLURM_SPANK_OPTION_topoaware_rank_order=tp-pp-dp cluster_run sbatch --parsable -N2 --ntasks-per-node=4 \
  --gpus-per-node=4 --tp=2 --pp=2 --dp=2 -o "$out/inj2.out" -e "$out/inj2.err" \
  --wrap 'head -1 "$TOPOAWARE_RANKMAP"')
cluster_wait_job "$id" 120 >/dev/null
grep -q '^# topoaware rank map: tp=2,cp=1,ep=1,dp=2,pp=2,rank-order=tp-cp-ep-dp-pp' "$out/inj2.out" ||
  ta_fail "an injected rank order reached the batch step's rank map: $(cat "$out/inj2.out" "$out/inj2.err")"
pat="^topoaware: warning: the batch step's environment gives the layout tp=2,cp=1,ep=1,dp=2,pp=2,rank-order=tp-pp-dp"
pat+=" .*; ignored, the job's checked layout is tp=2,cp=1,ep=1,dp=2,pp=2\$"
grep -q "$pat" "$out/inj2.err" ||
  ta_fail "no warning for the injected rank order: $(cat "$out/inj2.err")"
msg="sbatch with _SLURM_SPANK_OPTION_topoaware_* exported by hand: no hostfile"
msg+=" without --tp, the checked layout's rank map with it; a warning each"
ta_pass "$msg"

# 5. A missing topology file (plugstack.conf is read again by each step): no hints, a warning.
echo "required $spank topology=$work/missing.json state_dir=$state" >"$plugstack"
step "$work/f" --tp=2 --pp=2 --dp=2
grep -v ' RANK=- .*TOPOAWARE_TP_RANK=- .* NCCL_IB_HCA=- ' "$work/f" &&
  ta_fail "a missing topology file still gave hints"
grep -q 'no topoaware hints.*missing.json' "$work/f.err" ||
  ta_fail "no warning for a missing topology file: $(cat "$work/f.err")"
grep -q ' CUDA_VISIBLE_DEVICES=0,1,2,3 ' "$work/f" || ta_fail "CUDA_VISIBLE_DEVICES lost without a topology"
ta_pass "a missing topology file gives no hints and a warning; the step runs"

# 6. The hash channel from slurmctld: select/cons_tres_topoaware appends the hash it placed the job
# with; the job prolog writes it to <state_dir>/job.<id>.hash; the tasks compare; the epilog
# removes it. A stale copy on the nodes (another topology file) then gives no hints.
sel=$b/plugins/select/.libs/select_cons_tres_topoaware.so
ta_require_built "$sel" "part 6 (the hash channel from select/cons_tres_topoaware)"
cluster_stop || true
echo "required $spank topology=$work/topology.json state_dir=$state" >"$work/plugstack.conf"
cluster_start --nodes 2 --width 4 --gpus 4 --plugstack "$work/plugstack.conf" \
  --plugin-dir "$(dirname "$sel")" --conf SelectType=select/cons_tres_topoaware --conf PrologFlags=Alloc \
  --file "topology.json=$work/topology.json" \
  --hwloc-xml-node "n0001=$jrc" --hwloc-xml-node "n0002=$lassen"
plugstack=$CLUSTER_DIR/plugstack.conf
want=$(sed -n 's/.*topology .*topology.json loaded ([0-9]* hosts, \(sha256:[0-9a-f]*\)).*/\1/p' \
  "$CLUSTER_LOGDIR/slurmctld.log" | tail -1)
[ -n "$want" ] || ta_fail "slurmctld did not log the topology it loaded"
out=$(cluster_run srun -N2 --ntasks-per-node=4 --gpus-per-node=4 --tp=2 --pp=2 --dp=2 bash -c \
  'f='"$state"'/job.$SLURM_JOB_ID.hash; echo "$SLURM_JOB_ID ${TOPOAWARE_TOPO_HASH-unset} $(head -n1 $f 2>&1) $(stat -c %a:%u $f)"' \
  2>"$work/i.err") ||
  { cat "$work/i.err" >&2; ta_fail "srun with select/cons_tres_topoaware failed"; }
[ "$(sort -u <<<"$out" | wc -l)" = 1 ] || ta_fail "tasks disagree: $out"
read -r job got file mode <<<"$(head -1 <<<"$out")"
[ "$file" = "$want" ] || ta_fail "the prolog's hash file has '$file', slurmctld used $want"
[ "$mode" = "600:0" ] || ta_fail "the prolog's hash file has mode:owner $mode, not root's 600:0"
[ "$got" = "$want" ] || ta_fail "tasks used $got, slurmctld $want"
ta_wait_for 20 sh -c "[ ! -e '$state/job.$job.hash' ]" || ta_fail "the job epilog did not remove $state/job.$job.hash"
ta_wait_for 20 sh -c "[ ! -e '$state/job.$job' ]" ||
  ta_fail "the job epilog did not remove the folder $state/job.$job of an srun-only job"
msg="hash channel: slurmctld's $want reaches the tasks through the"
msg+=" job prolog's file (root's, mode 0600); the epilog removes it (and the job's folder)"
ta_pass "$msg"

"$b/topoaware" generate fat-tree --leaves 2 --hosts-per-leaf 3 --json "$work/other.json" >/dev/null
grep -q '"n0002"' "$work/other.json" || ta_fail "generated topology has no host n0002"
echo "required $spank topology=$work/other.json state_dir=$state" >"$plugstack"
# A step on the job's own nodes with the job's own layout takes slurmctld's node order (kept by the
# job prolog with the hash) and reads no topology file: the same ranks as with the right copy.
step "$work/j" --tp=2 --pp=2 --dp=2
[ "$(wc -l <"$work/j")" = 8 ] || ta_fail "expected 8 tasks: $(cat "$work/j" "$work/j.err")"
diff <(sed 's/ MASTER_PORT=[0-9]* / /' "$work/a") <(sed 's/ MASTER_PORT=[0-9]* / /' "$work/j") >/dev/null ||
  ta_fail "the job's own step with a stale copy on the nodes: not the ranks of the right copy:" \
    "$(diff <(sed 's/ MASTER_PORT=[0-9]* / /' "$work/a") <(sed 's/ MASTER_PORT=[0-9]* / /' "$work/j") | head -4)"
grep -q 'no topoaware hints' "$work/j.err" && ta_fail "the job's own step read the topology file: $(cat "$work/j.err")"
# The same as the user of part 4d (nobody where the system has it): the job prolog's file is root's,
# mode 0600, so the job's own tasks cannot read it; slurmstepd's root side reads it for them. Only
# that read gives these ranks: the copy on the nodes is part 4d's renamed fabric, whose order puts
# n0002 first (read by the tasks, it would give other ranks; with slurmctld's hash known and no
# placed order, no hints).
if [ "$user" != root ]; then
  j3=$work/out/j3
  echo "required $spank topology=$work/swapped.json state_dir=$state" >"$plugstack"
  chmod 755 "$CLUSTER_DIR"  # slurm.conf and plugstack.conf, read by the user's sbatch
  cluster_run "${as_user[@]}" sbatch --wait -N2 --ntasks-per-node=4 --gpus-per-node=4 --tp=2 --pp=2 --dp=2 \
    -o "$j3.raw" -e "$j3.err" --wrap "id -u >$j3.uid; srun bash -c '$script'" >/dev/null ||
    ta_fail "sbatch as $user failed: $(cat "$j3.err" 2>/dev/null)"
  [ "$(cat "$j3.uid")" = "$uid" ] || ta_fail "the batch job ran as uid $(cat "$j3.uid"), not $user's $uid"
  sort -t= -k2 -n "$j3.raw" >"$j3"
  diff <(sed 's/ MASTER_PORT=[0-9]* / /' "$work/a") <(sed 's/ MASTER_PORT=[0-9]* / /' "$j3") >/dev/null ||
    ta_fail "a job of $user with a stale copy on the nodes: not the ranks of the right copy:" \
      "$(diff <(sed 's/ MASTER_PORT=[0-9]* / /' "$work/a") <(sed 's/ MASTER_PORT=[0-9]* / /' "$j3") | head -4)" \
      "$(cat "$j3.err")"
  grep -q 'no topoaware hints' "$j3.err" && ta_fail "the job of $user read the topology file: $(cat "$j3.err")"
  ta_pass "a job of $user (uid $uid) gets slurmctld's ranks from the job prolog's root-only file, read by" \
    "slurmstepd's root side, with a stale topology copy on the nodes that orders them otherwise"
  echo "required $spank topology=$work/other.json state_dir=$state" >"$plugstack"
else
  ta_note "SKIP (part): no user nobody on this system: a job of another user than root not run"
fi
# A step with another layout needs the topology file: the stale copy gives no hints and a warning.
cluster_run sbatch --wait -N2 --ntasks-per-node=4 --gpus-per-node=4 --tp=2 --pp=2 --dp=2 -o "$work/j2.raw" \
  -e "$work/j2.err" --wrap "srun --tp=4 --pp=1 --dp=2 bash -c '$script'" >/dev/null ||
  ta_fail "sbatch failed: $(cat "$work/j2.err")"
[ "$(wc -l <"$work/j2.raw")" = 8 ] || ta_fail "expected 8 tasks: $(cat "$work/j2.raw" "$work/j2.err")"
grep -v ' RANK=- .*TOPOAWARE_TP_RANK=- .* NCCL_IB_HCA=- ' "$work/j2.raw" &&
  ta_fail "a stale topology copy on the nodes still gave hints to a step with another layout"
grep -q 'no topoaware hints.*stale' "$work/j2.err" || ta_fail "no warning for a stale copy: $(cat "$work/j2.err")"
ta_pass "a stale topology copy on the nodes (hash differs from slurmctld's): the job's own step gets slurmctld's" \
  "ranks without reading it; a step with another layout gets no hints and a warning"

# 7. Default paths: no topology= argument and no topoaware.conf, slurm.conf outside /etc/slurm (in
# the cluster folder). The select plugin and the tasks must both read topology.json beside
# slurm.conf (topoaware_default_paths): the tasks get hints whose hash is slurmctld's.
[ ! -e "$CLUSTER_DIR/topoaware.conf" ] || ta_fail "this part needs no topoaware.conf in $CLUSTER_DIR"
case $CLUSTER_CONF in /etc/slurm/*) ta_fail "this part needs slurm.conf outside /etc/slurm" ;; esac
echo "required $spank state_dir=$state" >"$plugstack"
step "$work/k" --tp=2 --pp=2 --dp=2
[ "$(wc -l <"$work/k")" = 8 ] || ta_fail "expected 8 tasks: $(cat "$work/k" "$work/k.err")"
grep ' RANK=- ' "$work/k" && ta_fail "without topology= the tasks got no hints: $(cat "$work/k.err")"
out=$(cluster_run srun -N2 --ntasks-per-node=4 --gpus-per-node=4 --tp=2 --pp=2 --dp=2 bash -c \
  'echo "${TOPOAWARE_TOPO_HASH-unset}"' 2>"$work/k2.err") || { cat "$work/k2.err" >&2; ta_fail "srun failed"; }
[ "$(sort -u <<<"$out")" = "$want" ] ||
  ta_fail "tasks read another topology than slurmctld ($want) by default: $(sort -u <<<"$out" | tr '\n' ' ')"
ta_pass "no topology= and no topoaware.conf, slurm.conf in" \
  "$(dirname "$CLUSTER_CONF"): the tasks read slurmctld's topology ($want)"
