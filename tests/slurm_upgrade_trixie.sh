#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Upgrading Slurm under running and queued layout jobs, as SchedMD documents it (slurmctld first; its
# slurmd may be up to three releases older): a Slurm 24.11.5 cluster (Debian trixie's daemons, in an
# overlay of the trixie root of tests/lib/trixie.sh, with topoaware's packages for 24.11 installed by
# apt-get) holds a placed layout job, a pending strict one and a pending prefer one (and 8 busy
# single-node jobs); its slurmctld stops (SIGTERM: the state is saved) and the newer release's
# slurmctld, with topoaware's plugins built for that release, starts on the same state folder while
# the 24.11 slurmd keep running.
#
# What this checks is what the plugin ids of the two release families mean for saved state
# (select_cons_tres_topoaware(8), SLURM RELEASES): 24.11 saves every job with the id of the select
# plugin that made its select data (10901 here), 25.05 and later read that field and ignore it, so no
# job may be lost; the new slurmctld's status book is rebuilt from the recovered jobs (the placed job
# as it was placed, the strict job with its deadline); the slurmd of 24.11 re-register; and the
# strict job starts on an ideal block once the busy nodes are free, placed by the new plugin.
#
#   TOPOAWARE_SLURM_PREFIX=DIR make -C BUILD check TESTS=tests/slurm_upgrade_trixie.sh
#
# DIR: the newer Slurm installed under a prefix (tools/build-slurm.sh), BUILD: topoaware configured
# against that release (--with-slurm-source): one of the tests of `tools/release-tests.sh 26.05.3`.
# Without a newer release (e.g. in the host's make check) it skips.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/trixie.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/deb_checks.sh"
ta_require_daemon_tests
ta_require_cmd debootstrap debootstrap
ta_require_cmd python3 python3
src=$(cd "${top_srcdir:-$(dirname "$0")/..}" && pwd)
b=$(cd "${top_builddir:-.}" && pwd)

new_prefix=${TOPOAWARE_SLURM_PREFIX:-}
[ -n "$new_prefix" ] ||
  ta_skip "no newer Slurm to upgrade to: run with TOPOAWARE_SLURM_PREFIX (tools/release-tests.sh 26.05.3)"
[ -x "$new_prefix/sbin/slurmctld" ] || ta_fail "no slurmctld in $new_prefix/sbin"
new_version=$("$new_prefix/sbin/slurmctld" -V | awk '{print $2}')
[ "${TOPOAWARE_SLURM_RELEASE:-$new_version}" = "$new_version" ] ||
  ta_skip "this build's plugins are for Slurm $TOPOAWARE_SLURM_RELEASE, $new_prefix holds $new_version"
new_select=$b/plugins/select/.libs new_js=$b/plugins/job_submit/.libs
new_spank=$b/plugins/spank/.libs/spank_topoaware.so
for f in "$new_select/select_cons_tres_topoaware.so" "$new_js/job_submit_topoaware.so" "$new_spank"; do
  [ -f "$f" ] || ta_skip "$f not built (configure --with-slurm-source for Slurm $new_version)"
done

rc=0
trixie_topoaware_build "$src" "$b" || rc=$?
case $rc in
  0) ;;
  2) ta_skip "$TRIXIE_WHY" ;;
  *) ta_fail "topoaware for the trixie root: $TRIXIE_WHY" ;;
esac
old_version=$(trixie_slurm_version)
ta_note "upgrade: Slurm $old_version (trixie root, build $TRIXIE_TA_BUILD) -> $new_version ($new_prefix)"
dpkg --compare-versions "$new_version" gt "$old_version" ||
  ta_skip "Slurm $new_version is not newer than the trixie root's $old_version: no upgrade to test"
export TOPOAWARE_SLURM_RELEASE=$old_version

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-upgrade.XXXXXX")
ta_on_exit "rm -rf '$work'"
trixie_overlay "$work" || ta_fail "$TRIXIE_WHY"
root=$TRIXIE_ROOT
deb_stage_in_root "$root" "$TRIXIE_TA_BUILD"
deb_install_in_root "$root"
deb_fabric "$root" /tmp/ta-fabric /usr/bin/topoaware "$DEB_PLUGINDIR"
f=$root/tmp/ta-fabric
printf '%s\n' "StatusInterval=1" >"$f/topoaware.conf"

# The mount made below for the newer slurmctld goes after the cluster has stopped (handlers run last
# registered first).
mounted=""
ta_on_exit '[ -z "$mounted" ] || { umount "$mounted" || umount -l "$mounted"; rmdir "$mounted"; }'

# ---- Slurm 24.11: the jobs
trixie_cluster_start --nodes 16 --width 4 --gpus 8 --plugstack "$f/plugstack.conf" --topology "$f/topology.conf" \
  --file "topology.json=$f/topology.json" --file "topoaware.conf=$f/topoaware.conf" \
  --conf SelectType=select/cons_tres_topoaware --conf JobSubmitPlugins=topoaware
SEL_STATUS=$CLUSTER_DIR/state/topoaware-status.json
sel_three_jobs
ta_pass "Slurm $old_version: B placed ($SEL_B0), strict C and prefer P waiting"

# ---- slurmctld stops; the newer one starts on the same state folder and files
pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid")
kill -TERM "$pid"
ta_wait_for 30 sh -c "! kill -0 $pid 2>/dev/null" || ta_fail "slurmctld $old_version did not end on SIGTERM"
wait "$CLUSTER_CTLD_PID" 2>/dev/null || true
# Its files, at the paths slurm.conf names (the cluster folder as the root sees it), for a slurmctld
# outside the root: the folder mounted there on this side too, for the test's life (a bind mount, not
# a symbolic link, which the plugin's status writer refuses on its path, as it should).
[ ! -e "$CLUSTER_VDIR" ] || ta_fail "$CLUSTER_VDIR exists outside the root too"
mkdir -m 0700 "$CLUSTER_VDIR"
mount --bind "$CLUSTER_DIR" "$CLUSTER_VDIR" || { rmdir "$CLUSTER_VDIR"; ta_fail "cannot bind-mount $CLUSTER_DIR"; }
# shellcheck disable=SC2034  # read by the exit handler above
mounted=$CLUSTER_VDIR
# What the status file says from now on, the new slurmctld wrote.
rm -f "$SEL_STATUS"
# slurm.conf and the files beside it, for the new release: its own plugin folder after ours, its
# own SPANK plugin for its commands; every other line (ports, state and spool folders, nodes) as the
# running slurmd have it.
conf_dir=$CLUSTER_DIR/ctld-$new_version
mkdir "$conf_dir"
cp "$CLUSTER_DIR"/{topology.conf,topology.json,topoaware.conf,gres.conf,cgroup.conf} "$conf_dir/"
echo "required $new_spank" >"$conf_dir/plugstack.conf"
sed -e "s|^PluginDir=.*|PluginDir=$new_select:$new_js:$new_prefix/lib/slurm|" \
  -e "s|^PlugStackConfig=.*|PlugStackConfig=$CLUSTER_VDIR/ctld-$new_version/plugstack.conf|" \
  "$CLUSTER_DIR/slurm.conf" >"$conf_dir/slurm.conf"
log=$CLUSTER_LOGDIR/slurmctld.log
log_from=$(($(wc -l <"$log") + 1))
CLUSTER_PREFIX=(/usr/bin/env "SLURM_CONF=$CLUSTER_VDIR/ctld-$new_version/slurm.conf"
  "PATH=$new_prefix/sbin:$new_prefix/bin:$PATH")
"${CLUSTER_PREFIX[@]}" slurmctld -D >>"$CLUSTER_LOGDIR/slurmctld-$new_version.out" 2>&1 &
CLUSTER_CTLD_PID=$!
ta_wait_for 60 cluster_run scontrol ping >/dev/null || {
  tail -n 30 "$CLUSTER_LOGDIR/slurmctld-$new_version.out" "$log" >&2
  ta_fail "slurmctld $new_version does not answer on the 24.11 cluster's state"
}
new_log() { tail -n +"$log_from" "$log"; }
recovered=$(new_log | grep -m1 -E 'Recovered information about [0-9]+ jobs' || echo 'no recovery line')
ta_note "slurmctld $new_version: $recovered"
bad=$(new_log | grep -E 'fatal|Incomplete job|select plugin .* not found|unpack error|[Ee]rror.*JobId=' || true)
[ -z "$bad" ] || ta_fail "slurmctld $new_version, reading the 24.11 state: $bad"
grep -q 'Recovered information about 11 jobs' <(new_log) ||
  ta_fail "slurmctld $new_version did not recover the 11 jobs: $(new_log | grep -m3 -i 'recovered\|job' || true)"
grep -q 'select/cons_tres_topoaware: topology .*topology.json loaded (16 hosts' <(new_log) ||
  ta_fail "slurmctld $new_version did not load the topology with the select plugin built for it"

# The 24.11 slurmd answer the new slurmctld: every node up, and each says it runs 24.11.
nodes_up() { ! cluster_run sinfo -h -N -o '%t' | grep -qvE '^(idle|alloc|mix)$'; }
ta_wait_for 90 nodes_up ||
  ta_fail "not every 24.11 slurmd answers slurmctld $new_version: $(cluster_run sinfo -h -N -o '%N %t')"
v=$(cluster_run scontrol -o show node | sed -n 's/.* Version=\([^ ]*\) .*/\1/p' | sort -u | paste -sd,)
[ "$v" = "$old_version" ] || ta_fail "the nodes report Slurm '$v', expected the old slurmd ($old_version) on all"
sel_same_jobs_after "the upgrade to $new_version"
ta_pass "Slurm $old_version -> $new_version (slurmctld only, slurmd $v): 11 jobs as before; B's entry" \
  "unchanged ($SEL_B1); C waits until the same deadline; P waits"

# The new plugin places on the old slurmd: busy nodes freed, strict C starts on an ideal block.
cluster_run scancel "$SEL_P" "${SEL_BUSY_IDS[@]}"
cluster_wait_job "$SEL_C" 90 RUNNING >/dev/null || ta_fail "strict job $SEL_C did not start once nodes were free"
c1=$(sel_entry_wait 30 "$SEL_C" 'ideal|n*|n*|8|*') || ta_fail "strict job $SEL_C has no ideal placement entry"
[ "$(cluster_job_state "$SEL_B")" = RUNNING ] || ta_fail "job $SEL_B placed under $old_version no longer runs"
ta_pass "slurmctld $new_version placed strict job $SEL_C ideally on the $old_version slurmd ($c1); B still runs"
