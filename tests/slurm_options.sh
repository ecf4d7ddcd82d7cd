#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# spank_topoaware.so + job_submit/topoaware on a real localhost cluster (4 nodes x 8 GPUs):
# good layouts are accepted and completed (scontrol show job: NumNodes, NumTasks, TresPerNode);
# every bad case is refused with its message and no job is created; sbatch --help lists the
# options; environment settings get the same checks; srun inside an sbatch --tp job behaves as
# spank_topoaware(8) says (also with --export=NONE); plugstack.conf arguments (a bad one is an
# error in the output, not a failure); a job without a layout is the same request as on a
# cluster without the plugins.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
ta_require_daemon_tests
ta_require_cmd slurmctld slurmctld
ta_require_cmd sbatch slurm-client
b=${top_builddir:-.}
b=$(cd "$b" && pwd)
spank=$b/plugins/spank/.libs/spank_topoaware.so
jobsub=$b/plugins/job_submit/.libs/job_submit_topoaware.so
[ -f "$spank" ] || ta_skip "spank_topoaware.so not built (no Slurm headers)"
[ -f "$jobsub" ] || ta_skip "job_submit_topoaware.so not built (configure --with-slurm-source=DIR)"

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-options.XXXXXX")
ta_on_exit "rm -rf '$work'"
mkdir -p "$work/plugins"
ln -s "$jobsub" "$work/plugins/job_submit_topoaware.so"
# A private state_dir: concurrent test clusters all number jobs from 1 (spank_topoaware(8)).
mkdir -m 0755 "$work/state"
echo "required $spank state_dir=$work/state" >"$work/plugstack.conf"
cd "$work"

# Fields of a job's request that must not change for a job without a layout.
FIELDS='NumNodes|NumCPUs|NumTasks|CPUs/Task|ReqB:S:C:T|TRES|TresPerNode|TresPerJob|TresPerTask|MinCPUsNode'
FIELDS+='|MinMemoryNode|MinTmpDiskNode|Socks/Node|NtasksPerN:B:S:C|CoreSpec|OverSubscribe|Contiguous|Features'
FIELDS+='|Partition|TimeLimit|Priority|Requeue'
job_fields() {
  cluster_run scontrol -o show job "$1" | tr ' ' '\n' | grep -E "^($FIELDS)=" | sort
}
PLAIN_REQUESTS=("-N2 --gpus-per-node=4" "-n3" "-N1 --ntasks-per-node=2 --gres=gpu:2" "--gpus=3")
plain_jobs() {
  local r id
  for r in "${PLAIN_REQUESTS[@]}"; do
    # shellcheck disable=SC2086
    id=$(cluster_run sbatch --parsable --hold $r --wrap true)
    echo "== $r"
    job_fields "$id"
  done
}

# 1. The reference: the same plain requests on a cluster without the plugins.
cluster_start --nodes 4 --gpus 8
plain_jobs >"$work/plain.without"
cluster_stop || true  # set -e is off inside it this way: it is written for the EXIT trap

cluster_start --nodes 4 --gpus 8 --plugin-dir "$work/plugins" --plugstack "$work/plugstack.conf" \
  --conf JobSubmitPlugins=topoaware --conf SlurmctldDebug=debug
plain_jobs >"$work/plain.with"
if ! diff -u "$work/plain.without" "$work/plain.with"; then
  ta_fail "jobs without a layout differ with the plugins installed (diff above)"
fi
ta_pass "jobs without a layout: the same request with and without the plugins" \
  "($(grep -c '^==' "$work/plain.with") requests, $(grep -vc '^==' "$work/plain.with") fields)"
cluster_run scancel --quiet --user=root
ta_wait_for 30 sh -c "[ -z \"\$(${CLUSTER_PREFIX[*]} squeue -h)\" ]" || ta_fail "jobs left after scancel"

njobs() { cluster_run squeue -h | wc -l; }

# 2. --help lists every option.
help=$(cluster_run sbatch --help)
for o in tp pp dp cp ep rank-order topo-mode topo-max-wait nccl-hints; do
  grep -qE -- "--$o=" <<<"$help" || ta_fail "sbatch --help does not list --$o"
done
help=$(cluster_run srun --help)
grep -q -- '--tp=' <<<"$help" || ta_fail "srun --help does not list --tp"
help=$(cluster_run salloc --help)
grep -q -- '--tp=' <<<"$help" || ta_fail "salloc --help does not list --tp"
ta_pass "sbatch, srun and salloc --help list the topoaware options"

# 3. Good layouts: accepted and completed. expect_job "OPTIONS" NODES TASKS TRES_PER_NODE [NTASKS_PER_NODE]
# 23.11+ spells a GPU request gres/gpu:N (22.05: gres:gpu:N); the expectations below are 22.05's.
gres_gpu=gres:gpu:
case ${TOPOAWARE_SLURM_RELEASE:-22.05} in 2[0-2].*|23.0*) ;; *) gres_gpu=gres/gpu: ;; esac
expect_job() {
  local opts=$1 nodes=$2 tasks=$3 tpn=${4/gres:gpu:/$gres_gpu} id rec
  # shellcheck disable=SC2086
  id=$(cluster_run sbatch --parsable --hold $opts --wrap true) || ta_fail "sbatch $opts was refused"
  rec=$(cluster_run scontrol -o show job "$id")
  grep -qE " NumNodes=$nodes(-$nodes)? " <<<"$rec" ||
    ta_fail "sbatch $opts: expected NumNodes=$nodes: $(grep -o 'NumNodes=[^ ]*' <<<"$rec")"
  grep -q " NumTasks=$tasks " <<<"$rec" ||
    ta_fail "sbatch $opts: expected NumTasks=$tasks: $(grep -o 'NumTasks=[^ ]*' <<<"$rec")"
  grep -q " TresPerNode=$tpn\( \|$\)" <<<"$rec" ||
    ta_fail "sbatch $opts: expected TresPerNode=$tpn: $(grep -o 'TresPerNode=[^ ]*' <<<"$rec")"
  if [ -n "${5:-}" ]; then
    grep -q " NtasksPerN:B:S:C=$5:" <<<"$rec" ||
      ta_fail "sbatch $opts: expected $5 tasks per node: $(grep -o 'NtasksPerN[^ ]*' <<<"$rec")"
  fi
  ta_pass "sbatch $opts -> NumNodes=$nodes NumTasks=$tasks TresPerNode=$tpn"
  cluster_run scancel "$id"
}
expect_job "--tp=8 --pp=4" 4 32 gres:gpu:8 8
expect_job "--tp=8 --pp=2 --dp=2" 4 32 gres:gpu:8 8
expect_job "--tp=4" 1 4 gres:gpu:4 4
expect_job "--tp=4 --dp=3" 3 12 gres:gpu:4 4
expect_job "--tp=2 --dp=4 -N 2" 2 8 gres:gpu:4 4
expect_job "--tp=4 --dp=2 --gpus-per-node=4" 2 8 gres:gpu:4 4
expect_job "--tp=8 --dp=2 --ntasks=16" 2 16 gres:gpu:8 8
expect_job "--tp=8 --dp=2 --gpus=16" 2 16 gres:gpu:8 8
long_opts="--tp=2 --cp=2 --dp=2 --ep=4 --rank-order=tp-pp-dp --topo-mode=strict --topo-max-wait=30m"
long_opts+=" --nccl-hints=print"
expect_job "$long_opts" 1 8 gres:gpu:8 8
expect_job "--tp=8 --dp=2 --gres=gpu:8" 2 16 gres:gpu:8 8
expect_job "--tp=8 --dp=2 -N 1-4" 2 16 gres:gpu:8 8
# -n equal to --ntasks-per-node on one node is what sbatch itself counts when -n is not given, so
# job_submit cannot tell an explicit -n 8 from it: the layout's 16 tasks apply, and the user is told.
# From Slurm 24.11 (seen on 24.11.5 and 26.05.3; 23.11 and 24.05 are not run here) job_submit also
# sees -N 1 derived from them as given: the request is then refused with the fix (never a job that
# silently runs other than asked).
if out=$(cluster_run sbatch --parsable --hold --tp=8 --dp=2 -n8 --ntasks-per-node=8 --wrap true 2>&1); then
  id=$(tail -n1 <<<"$out")
  grep -q " NumTasks=16 " <<<"$(cluster_run scontrol -o show job "$id")" ||
    ta_fail "-n8 --ntasks-per-node=8: not 16 tasks"
  pat="topoaware: layout tp=8,cp=1,ep=1,dp=2,pp=1,rank-order=tp-cp-ep-dp-pp runs 16 tasks (2 nodes x 8);"
  pat+=" the 8 tasks counted from --ntasks-per-node=8 on 1 node do not apply."
  pat+=" If you gave -n 8, it did not fit the layout: use -n 16 or leave -n out"
  grep -qF "$pat" <<<"$out" ||
    ta_fail "-n8 --ntasks-per-node=8: the user is not told that 16 tasks run: $out"
  cluster_run scancel "$id"
  ta_pass "sbatch --tp=8 --dp=2 -n8 --ntasks-per-node=8: 16 tasks, and sbatch says why"
else
  case ${TOPOAWARE_SLURM_RELEASE:-22.05} in
    2[4-9].*) ;;
    *) ta_fail "sbatch --tp=8 --dp=2 -n8 --ntasks-per-node=8 was refused: $out" ;;
  esac
  grep -q "topoaware: layout tp=8,.*: -N 1 would need 16 GPUs per node .*use -N 2" <<<"$out" ||
    ta_fail "-n8 --ntasks-per-node=8 refused without the fix: $out"
  ta_pass "sbatch --tp=8 --dp=2 -n8 --ntasks-per-node=8 (Slurm ${TOPOAWARE_SLURM_RELEASE:-}: -N 1 derived by sbatch):" \
    "refused with the fix (use -N 2)"
fi
# The environment is a source too.
id=$(SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_tp=8 SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_dp=3 \
  cluster_run sbatch --parsable --hold --wrap true)
rec=$(cluster_run scontrol -o show job "$id")
grep -qE " NumNodes=3(-3)? .*NumTasks=24 " <<<"$rec" || ta_fail "layout from the environment was not completed"
cluster_run scancel "$id"
# Last source wins: #SBATCH line, then the environment, then the command line.
printf '#!/bin/sh\n#SBATCH --tp=2 --dp=2\ntrue\n' >"$work/job.sh"
id=$(SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_dp=4 cluster_run sbatch --parsable --hold --tp=8 "$work/job.sh")
rec=$(cluster_run scontrol -o show job "$id")
grep -qE " NumNodes=4(-4)? .*NumTasks=32 " <<<"$rec" ||
  ta_fail "script tp=2 dp=2, environment dp=4, command line tp=8: expected tp=8 dp=4 (4 nodes, 32" \
    "tasks): $(cluster_run scontrol -o show job "$id" | grep -o 'NumNodes=[^ ]* .*NumTasks=[^ ]*')"
cluster_run scancel "$id"
ta_pass "environment settings are a source; the last source wins (script < environment < command line)"

# 4. Bad cases: refused with the message, exit non-zero, no job.
refuse() {
  local want=$1 out rc before
  shift
  before=$(njobs)
  set +e
  out=$(cluster_run "$@" 2>&1)
  rc=$?
  set -e
  [ "$rc" -ne 0 ] || ta_fail "'$*' was accepted; expected a refusal with '$want'"
  grep -qF -- "$want" <<<"$out" || ta_fail "'$*' failed without '$want': $out"
  [ "$(njobs)" = "$before" ] || ta_fail "'$*' was refused but a job exists: $(cluster_run squeue -h)"
  ta_pass "refused: $* -> $(grep -m1 -F -- "$want" <<<"$out" | sed 's/^sbatch: error: //')"
}
refuse "tp=3 does not divide the 8 GPUs per node" sbatch --tp=3 --gpus-per-node=8 --wrap true
refuse "Invalid generic resource" sbatch --tp=3 --gpus-per-node=8 --wrap true
refuse "tp=16 needs 16 GPUs in one NVLink domain but nodes have 8 GPUs; use tp=8 or less" sbatch --tp=16 --wrap true
refuse "tp=abc is not a whole number" sbatch --tp=abc --wrap true
refuse "tp=0: must be at least 1" sbatch --tp=0 --wrap true
refuse "pp=-2 is not a whole number" sbatch --pp=-2 --wrap true
refuse "is too large; each of tp, cp, ep, dp, pp is at most 65536" sbatch --dp=99999999999 --wrap true
refuse "unknown rank order 'dp-tp'" sbatch --tp=8 --rank-order=dp-tp --wrap true
refuse "topo-mode 'fast' is not known" sbatch --tp=8 --topo-mode=fast --wrap true
refuse "unknown unit" sbatch --tp=8 --topo-mode=strict --topo-max-wait=5y --wrap true
refuse "--topo-mode=prefer never waits" sbatch --tp=8 --topo-mode=prefer --topo-max-wait=5m --wrap true
refuse "nccl-hints 'yes' is not known" sbatch --tp=8 --nccl-hints=yes --wrap true
refuse "--topo-mode describes how to place a parallel layout, but no layout is given" \
  sbatch --topo-mode=strict --wrap true
refuse "ep=4 must divide cp*dp = 6" sbatch --tp=8 --dp=6 --ep=4 --wrap true
refuse "exceeds the limit of 16777216" sbatch --tp=8 --dp=65536 --pp=64 --wrap true
refuse "-N 3 but the layout needs 16 GPUs = 2 nodes x 8 GPUs; use -N 2" \
  sbatch --tp=8 --dp=2 -N 3 --gpus-per-node=8 --wrap true
refuse "Node count specification invalid" sbatch --tp=8 --dp=2 -N 3 --gpus-per-node=8 --wrap true
refuse "--ntasks=10 but the layout has 16 ranks" sbatch --tp=8 --dp=2 --ntasks=10 --wrap true
refuse "Task count specification invalid" sbatch --tp=8 --dp=2 --ntasks=10 --wrap true
refuse "--ntasks-per-node=4 but the layout puts 8 ranks on each node" \
  sbatch --tp=8 --dp=2 --gpus-per-node=8 --ntasks-per-node=4 --wrap true
# (from 24.11, seen on 24.11.5 and 26.05.3, -N 2 is derived from -n8 and --ntasks-per-node=4: the tasks
# per node are what does not fit)
case ${TOPOAWARE_SLURM_RELEASE:-22.05} in
  2[4-9].*)
    want="--ntasks-per-node=4 but the layout puts 8 ranks on each node (one task per GPU);"
    want+=" use --ntasks-per-node=8" ;;
  *) want="but the job asks for 4 GPUs per node (--ntasks-per-node=4)" ;;
esac
refuse "$want" sbatch --tp=8 --dp=2 -n8 --ntasks-per-node=4 --wrap true
refuse "--ntasks=8 but the layout has 16 ranks" sbatch --tp=8 --dp=2 -n8 -N2 --wrap true
refuse "--gpus=8 but the layout needs 16 GPUs" sbatch --tp=8 --dp=2 --gpus=8 --wrap true
refuse "--gpus-per-node=16 but the partition's nodes have 8 GPUs" sbatch --tp=8 --dp=2 --gpus-per-node=16 --wrap true
refuse "not a whole number of nodes of 8 GPUs; use dp=2 or dp=4" sbatch --tp=4 --dp=3 --gpus-per-node=8 --wrap true
refuse "-N 1-3 but the layout needs 4 nodes" sbatch --tp=8 --pp=4 -N 1-3 --wrap true
refuse "--gpus-per-task above 1 contradicts the layout" sbatch --tp=8 --gpus-per-task=2 -n 4 --wrap true
refuse "tp=x is not a whole number" env SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_tp=x sbatch --wrap true
refuse "Invalid argument (x) for environment variable" \
  env SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_tp=x sbatch --wrap true
refuse "tp=3 does not divide" salloc --tp=3 true
refuse "tp=abc is not a whole number" srun --tp=abc true
[ "$(njobs)" = 0 ] || ta_fail "jobs exist after the refusals: $(cluster_run squeue -h)"
ta_pass "squeue is empty after every refusal"

# 5. srun inside an sbatch --tp job (spank_topoaware(8), STEPS INSIDE A JOB).
cat >"$work/steps.sh" <<'SH'
#!/bin/bash
echo "job: tp=${SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_tp:-none}" \
  "pp=${SLURM_SPANK__SLURM_SPANK_OPTION_topoaware_pp:-none} ntasks=${SLURM_NTASKS:-none}"
echo "inherit: $(srun /bin/sh -c 'echo $SLURM_PROCID' | wc -l) tasks"
echo "smaller: $(srun -N1 -n8 --pp=1 /bin/sh -c 'echo $SLURM_PROCID' | wc -l) tasks"
srun --pp=1 /bin/true 2>&1 | grep -o 'the step has 16 tasks but its layout.*has tp\*cp\*dp\*pp = 8 ranks' |
  sed 's/^/mismatch: /'
echo "mismatch rc=${PIPESTATUS[0]}"
SH
# The cluster's own srun by its path: with --export=NONE the script runs with the system's PATH,
# which on a test cluster of another Slurm release (TOPOAWARE_SLURM_PREFIX) finds the host's srun.
srun_bin=$(cluster_run sh -c 'command -v srun')
sed -i "s|\$(srun |\$($srun_bin |g; s|^srun |$srun_bin |" "$work/steps.sh"
run_job() {
  local id
  id=$(cluster_run sbatch --parsable "$@" "$work/steps.sh")
  cluster_wait_job "$id" 120 >/dev/null
  cat "$work/slurm-$id.out"
}
out=$(run_job --tp=8 --pp=2)
echo "$out" | sed 's/^/  sbatch --tp=8 --pp=2: /'
grep -qx "job: tp=8 pp=2 ntasks=16" <<<"$out" || ta_fail "the batch script does not see the job's layout"
grep -qx "inherit: 16 tasks" <<<"$out" || ta_fail "srun without options did not run the job's 16 tasks"
grep -qx "smaller: 8 tasks" <<<"$out" || ta_fail "srun -N1 -n8 --pp=1 inside the job did not run its own layout"
grep -q "^mismatch: the step has 16 tasks" <<<"$out" || ta_fail "srun --pp=1 with the job's 16 tasks was not refused"
grep -qx "mismatch rc=1" <<<"$out" || ta_fail "srun --pp=1 (mismatch) did not fail"
msg="srun inside sbatch --tp=8 --pp=2: inherits the layout, may"
msg+=" use its own if the step fits it, refuses a step that does not"
ta_pass "$msg"
out=$(run_job --export=NONE --tp=8 --pp=2)
echo "$out" | sed 's/^/  sbatch --export=NONE --tp=8 --pp=2: /'
# Slurm itself gives the batch step the SLURM_SPANK_* variables of its job even with
# --export=NONE (they are SLURM_* variables), so steps behave exactly as without it.
grep -qx "job: tp=8 pp=2 ntasks=16" <<<"$out" || ta_fail "with --export=NONE the script does not see the job's layout"
grep -qx "inherit: 16 tasks" <<<"$out" || ta_fail "srun in an --export=NONE job did not run 16 tasks"
grep -qx "smaller: 8 tasks" <<<"$out" || ta_fail "srun -N1 -n8 --pp=1 in an --export=NONE job failed"
grep -q "^mismatch: the step has 16 tasks" <<<"$out" || ta_fail "srun --pp=1 in an --export=NONE job was not refused"
ta_pass "sbatch --export=NONE: steps still inherit the job's layout (Slurm exports SLURM_SPANK_* to the batch step)"

# srun that creates its own job: with -n it runs the layout on the GPUs job_submit asked for.
out=$(cluster_run srun --tp=4 -n4 /bin/sh -c 'echo "$SLURM_PROCID $CUDA_VISIBLE_DEVICES"' | sort)
[ "$(echo "$out" | awk '{print $2}' | sort -u)" = "0,1,2,3" ] ||
  ta_fail "srun --tp=4 -n4: expected 4 GPUs per task set, got: $out"
[ "$(echo "$out" | wc -l)" = 4 ] || ta_fail "srun --tp=4 -n4 ran $(echo "$out" | wc -l) tasks"
ta_pass "srun --tp=4 -n4 (its own job): 4 tasks with CUDA_VISIBLE_DEVICES=0,1,2,3"

# 6. plugstack.conf arguments: a default order is sent with the job; a bad argument is an error
#    message, not a failure. sbatch reads plugstack.conf at every start.
echo "required $spank state_dir=$work/state default_order=tp-pp-dp default_mode=strict bogus=1 default_order=x" \
  "bell=$(printf '\a')x" >"$CLUSTER_DIR/plugstack.conf"
out=$(cluster_run sbatch --parsable --hold --tp=8 --wrap true 2>&1) ||
  ta_fail "sbatch failed with a bad plugstack argument: $out"
grep -q "unknown plugstack.conf argument 'bogus=1' ignored" <<<"$out" ||
  ta_fail "no error for the unknown plugstack argument: $out"
grep -q "plugstack.conf argument 'default_order=x': unknown rank order" <<<"$out" ||
  ta_fail "no error for default_order=x: $out"
# Arguments are quoted as printable text (corelib/text.hpp): the BEL byte reads '?'.
grep -q "unknown plugstack.conf argument 'bell=?x' ignored" <<<"$out" ||
  ta_fail "bell=<BEL>x not quoted printably: $out"
id=$(tail -n1 <<<"$out")
ta_wait_for 10 grep -q "layout tp=8,cp=1,ep=1,dp=1,pp=1,rank-order=tp-pp-dp:" "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "default_order=tp-pp-dp did not reach job_submit/topoaware with the job"
rec=$(cluster_run scontrol -o show job "$id")
grep -qE " NumNodes=1(-1)? " <<<"$rec" || ta_fail "job with plugstack defaults not completed"
ta_pass "plugstack.conf: bad arguments are reported (printable) and ignored, sbatch still works"
echo "required $spank" >"$CLUSTER_DIR/plugstack.conf"
cluster_run scancel "$id"
# A user's bad value is quoted as printable text too: no escape sequence reaches the terminal or a log.
out=$(cluster_run sbatch --parsable --hold --tp="8$(printf '\033')[31m" --wrap true 2>&1) &&
  ta_fail "sbatch accepted --tp=8<ESC>[31m: $out"
grep -q -- "--tp=8?\[31m: " <<<"$out" || ta_fail "--tp=8<ESC>[31m not quoted printably: $out"
# (Slurm's own "Invalid --tp argument" line is Slurm's: only topoaware's lines are checked.)
grep "topoaware: " <<<"$out" | grep -q "$(printf '\033')" && ta_fail "topoaware printed an escape byte: $out"
ta_pass "a bad option value with an escape sequence is quoted printably"

kill -0 "$CLUSTER_CTLD_PID" || ta_fail "slurmctld died"
if grep -E 'fatal|segfault|double free|corrupt' "$CLUSTER_LOGDIR/slurmctld.log" "$CLUSTER_LOGDIR/slurmctld.out"; then
  ta_fail "slurmctld logged a fatal error"
fi
ta_pass "slurmctld still running, no fatal errors"
