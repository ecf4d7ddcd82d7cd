#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Both select plugins in a real slurmctld (localhost cluster, 4 nodes x 8 GPUs), each as SelectType
# with both .so files in PluginDir (every select plugin there is loaded: their ids must differ):
# srun -N4 runs on 4 distinct nodes, an sbatch job with a 2-node srun completes, GPUs are handed out,
# slurmctld logs that it wraps cons_tres with the documented plugin id, node reservations work and
# CoreCnt= reservations are refused (the documented limit). The topoaware plugin
# runs here without any topology file: it must say so in the log and behave as cons_tres. A program
# linked to libslurm.so (which loads the SelectType plugin to read jobs) works with either.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
ta_require_daemon_tests
ta_require_cmd slurmctld slurmctld
ta_require_cmd slurmd slurmd
b=${top_builddir:-.}
plugdir=$(cd "$b/plugins/select/.libs" 2>/dev/null && pwd) ||
  ta_skip "select plugins not built (configure --with-slurm-source)"
[ -f "$plugdir/select_cons_tres_topoaware.so" ] || ta_skip "select plugins not built (configure --with-slurm-source)"

run_one() {
  local name=$1 id=$2
  (
    cluster_start --nodes 4 --gpus 8 --plugin-dir "$plugdir" --conf "SelectType=select/$name"
    [ "$(cluster_run scontrol show config | sed -n 's/^SelectType *= *//p')" = "select/$name" ] ||
      ta_fail "$name: slurmctld does not report SelectType=select/$name"
    grep -q "select/$name: wrapping select/cons_tres (plugin id $id)" "$CLUSTER_LOGDIR/slurmctld.log" ||
      ta_fail "$name: slurmctld log lacks 'select/$name: wrapping select/cons_tres (plugin id $id)'"
    out=$(cluster_run srun -N4 --ntasks-per-node=1 sh -c 'echo $SLURMD_NODENAME')
    [ "$(echo "$out" | sort -u | wc -l)" -eq 4 ] ||
      ta_fail "$name: srun -N4 ran on '$(echo $out)', expected 4 distinct nodes"
    ta_pass "$name: srun -N4 hostname on 4 distinct nodes"
    id_job=$(cluster_run sbatch --parsable -N2 --gpus-per-node=2 -o "$CLUSTER_DIR/job.out" \
      --wrap 'srun --ntasks-per-node=1 sh -c "echo \$SLURMD_NODENAME \$CUDA_VISIBLE_DEVICES"')
    st=$(cluster_wait_job "$id_job" 60)
    [ "$st" = COMPLETED ] || ta_fail "$name: sbatch job $id_job ended $st"
    [ "$(awk '{print $1}' "$CLUSTER_DIR/job.out" | sort -u | wc -l)" -eq 2 ] ||
      ta_fail "$name: job output: $(cat "$CLUSTER_DIR/job.out")"
    awk '{print $2}' "$CLUSTER_DIR/job.out" | grep -qvx '0,1' &&
      ta_fail "$name: GPUs in the job: $(cat "$CLUSTER_DIR/job.out")"
    ta_pass "$name: sbatch -N2 --gpus-per-node=2 completed on 2 nodes with CUDA_VISIBLE_DEVICES=0,1"
    # A program linked to libslurm.so (pyslurm, DRMAA, ...) loads the select plugin too: it must
    # load there (no slurmctld-only symbol unresolved) and do nothing.
    if [ "$id" = 109 ]; then
      # 25.05+: only slurmctld loads SelectType (src/interfaces/select.c), so clients never load the
      # plugin; and this harness's cred/none cannot load in the public libslurm there (it needs
      # get_log_level, which only libslurmfull exports): nothing to check, nothing checkable.
      ta_note "$name: libslurm.so client not run: Slurm ${TOPOAWARE_SLURM_RELEASE:-} loads select plugins only in" \
        "slurmctld, and its cred/none plugin does not load in libslurm.so"
    else
      rc=0
      out=$(cluster_run "$b/tests/libslurm_client" 2>&1) || rc=$?
      if [[ $out == *"cred_none.so: undefined symbol: get_log_level"* ]]; then
        # 23.11 .. 24.11: this harness's cred/none (Slurm's own plugin) does not load in libslurm.so
        # (get_log_level is exported by libslurmfull only), so the client stops before it loads any
        # select plugin. tests/slurm_select_symbols.sh checks there that the plugin loads in a
        # libslurm.so client and calls only what libslurm.so exports.
        ta_note "$name: libslurm.so client not run: Slurm ${TOPOAWARE_SLURM_RELEASE:-}'s cred/none plugin does" \
          "not load in libslurm.so ($out)"
      else
        [ "$rc" -eq 0 ] || ta_fail "$name: a libslurm.so client failed with SelectType=select/$name: $out"
        grep -qiE "can't find plugin|undefined symbol|error" <<<"$out" &&
          ta_fail "$name: a libslurm.so client printed errors: $out"
        grep -q "^jobs=[0-9]* nodes=4$" <<<"$out" || ta_fail "$name: libslurm client printed: $out"
        ta_pass "$name: a program linked to libslurm.so loads jobs and nodes ($out)"
      fi
    fi
    # Reservations: by nodes they work; CoreCnt= is refused by Slurm's own check of the plugin id
    # (state_control.c accepts only cons_res/cons_tres ids) -- the documented limit.
    cluster_run scontrol create reservation ReservationName=rn StartTime=now Duration=10 Users=root \
      Nodes=n01 >/dev/null ||
      ta_fail "$name: a node reservation was refused"
    [ "$(cluster_run srun --reservation=rn -N1 sh -c 'echo $SLURMD_NODENAME')" = n01 ] ||
      ta_fail "$name: job in the reservation did not run on n01"
    cluster_run scontrol delete ReservationName=rn
    if [ "$id" = 109 ] || [[ ${TOPOAWARE_SLURM_RELEASE:-22.05} != 22.05* ]]; then
      # 22.05 only checks CoreCnt against cons_res/cons_tres ids (state_control_corecnt_supported, gone
      # from 23.11 on); with cons_tres's id (25.05+) it would pass anyway.
      out=$(cluster_run scontrol create reservation ReservationName=rc StartTime=now Duration=10 Users=root \
        CoreCnt=2 Nodes=n02 2>&1) || ta_fail "$name (id $id): a CoreCnt reservation was refused: $out"
      cluster_run scontrol delete ReservationName=rc
      ta_pass "$name: node reservations and CoreCnt= reservations work (plugin id $id)"
    else
      if out=$(cluster_run scontrol create reservation ReservationName=rc StartTime=now Duration=10 Users=root \
                 CoreCnt=2 Nodes=n02 2>&1); then
        ta_fail "$name: a CoreCnt reservation was accepted; update the KNOWN LIMITS of select_cons_tres_topoaware(8)"
      fi
      ta_pass "$name: node reservations work; CoreCnt= reservations are refused as documented ($out)"
    fi
    if [ "$name" = cons_tres_topoaware ]; then
      grep -q 'select/cons_tres_topoaware: no topology: .*topology.json' "$CLUSTER_LOGDIR/slurmctld.log" ||
        ta_fail "no topology file, but the log does not say so"
      ta_pass "$name: without a topology file the log says so and jobs run as under cons_tres"
    fi
    grep -E 'fatal|Duplicate plugin_id' "$CLUSTER_LOGDIR/slurmctld.log" &&
      ta_fail "$name: slurmctld logged a fatal error"
    cluster_stop
  )
}
# The ids of select_cons_tres_topoaware(8), SLURM RELEASES: from 25.05 slurmctld loads only
# SelectType and takes it for cons_tres only with cons_tres's own id 109.
case ${TOPOAWARE_SLURM_RELEASE:-22.05} in
  2[5-9].*|[3-9]?.*) run_one cons_tres_passthrough 109; run_one cons_tres_topoaware 109 ;;
  *) run_one cons_tres_passthrough 10902; run_one cons_tres_topoaware 10901 ;;
esac
