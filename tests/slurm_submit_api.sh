#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# job_submit/topoaware against a client that is not sbatch: a program linked to Slurm's public
# library (tests/libslurm_submit) submits jobs with a SPANK environment of its own choosing, as any
# user may through the API. On a real localhost cluster (4 nodes x 8 GPUs): a plain job and a
# layout given as the SPANK option sbatch would send are accepted (and the layout completed), so
# the client's environment does reach the plugin; a job naming the select plugin's own
# TOPOAWARE_* variables, and one with more SPANK entries than the plugin reads, are refused with
# their message and create no job.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
ta_require_daemon_tests
ta_require_cmd slurmctld slurmctld
b=${top_builddir:-.}
b=$(cd "$b" && pwd)
jobsub=$b/plugins/job_submit/.libs/job_submit_topoaware.so
client=$b/tests/libslurm_submit
[ -f "$jobsub" ] || ta_skip "job_submit_topoaware.so not built (configure --with-slurm-source=DIR)"
[ -x "$client" ] || ta_skip "tests/libslurm_submit not built (no Slurm headers)"

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-submit-api.XXXXXX")
ta_on_exit "rm -rf '$work'"
mkdir -p "$work/plugins"
ln -s "$jobsub" "$work/plugins/job_submit_topoaware.so"
cluster_start --nodes 4 --gpus 8 --plugin-dir "$work/plugins" --conf JobSubmitPlugins=topoaware

njobs() { cluster_run squeue -h | wc -l; }

# 1. The client works, and what it puts in the SPANK environment reaches job_submit/topoaware.
rc=0
out=$(cluster_run "$client" 2>&1) || rc=$?
if [[ $out == *"undefined symbol"* ]]; then
  # 23.11 .. 24.11: this harness's cred/none does not load in libslurm.so (tests/slurm_select_wrapper.sh).
  ta_skip "a libslurm.so client cannot run against this Slurm's plugins: $out"
fi
[ "$rc" -eq 0 ] || ta_fail "a plain job through libslurm was refused: $out"
ta_pass "a plain job through libslurm: accepted ($out)"
out=$(cluster_run "$client" _SLURM_SPANK_OPTION_topoaware_tp=8 _SLURM_SPANK_OPTION_topoaware_dp=2 2>"$work/err") ||
  ta_fail "a layout job (tp=8 dp=2) through libslurm was refused: $out $(cat "$work/err")"
id=${out#job=}
rec=$(cluster_run scontrol -o show job "$id")
grep -qE " NumNodes=2(-2)? " <<<"$rec" && grep -qE " NumTasks=16 " <<<"$rec" ||
  ta_fail "the layout given in the SPANK environment was not completed (2 nodes, 16 tasks): $rec"
ta_pass "a layout given as the SPANK option sbatch sends: completed to 2 nodes, 16 tasks"

# 2. What sbatch never sends: refused with the message, no job.
refuse() {
  local want=$1 before out
  shift
  before=$(njobs)
  out=$(cluster_run "$client" "$@" 2>&1) && ta_fail "accepted through libslurm: $1 ... -> $out"
  grep -qF -- "$want" <<<"$out" || ta_fail "refused without the message '$want': $out"
  [ "$(njobs)" = "$before" ] || ta_fail "refused but a job exists: $(cluster_run squeue -h)"
  ta_pass "refused through libslurm: $(grep -m1 -F -- "$want" <<<"$out" | cut -c1-160)"
}
refuse "TOPOAWARE_NODE_ORDER in the job's SPANK environment: names starting with TOPOAWARE_ are written by select/cons_tres_topoaware" \
  _SLURM_SPANK_OPTION_topoaware_tp=8 TOPOAWARE_NODE_ORDER=node4,node3,node2,node1
refuse "TOPOAWARE_TOPO_HASH in the job's SPANK environment" TOPOAWARE_TOPO_HASH=sha256:0
refuse "the job's SPANK environment has 65537 entries; at most 65536 are read" \
  --fill 65536 _SLURM_SPANK_OPTION_topoaware_tp=8
# At the bound the options are read whole: accepted and completed.
out=$(cluster_run "$client" --fill 65535 _SLURM_SPANK_OPTION_topoaware_tp=8 2>"$work/err") ||
  ta_fail "a layout job with 65,536 SPANK entries was refused: $out $(cat "$work/err")"
rec=$(cluster_run scontrol -o show job "${out#job=}")
grep -qE " NumTasks=8 " <<<"$rec" || ta_fail "the layout after 65,535 other entries was not read: $rec"
ta_pass "65,536 SPANK entries, the layout last: read and completed"

kill -0 "$CLUSTER_CTLD_PID" || ta_fail "slurmctld died"
if grep -E 'fatal|segfault|double free|corrupt' "$CLUSTER_LOGDIR/slurmctld.log" "$CLUSTER_LOGDIR/slurmctld.out"; then
  ta_fail "slurmctld logged a fatal error"
fi
ta_pass "slurmctld still running, no fatal errors"
