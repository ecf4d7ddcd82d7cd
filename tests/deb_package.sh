#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages (`make deb`, debian/): built from this build tree for the host's Slurm, checked
# (the plugins package depends on exactly that Slurm release and puts the plugins into Debian's
# PluginDir), unpacked with dpkg -x into a scratch folder (not installed: the host's Slurm is shared
# with other test clusters), then a localhost cluster runs from the unpacked files: PluginDir names the
# unpacked plugin folder, plugstack.conf its spank_topoaware.so, and the unpacked command writes the
# topology. Checked there: job_submit refuses a bad layout, a tp/pp/dp job is placed by the select
# plugin on 2 + 2 nodes (stock cons_tres takes 3 + 1: tests/slurm_select_place.sh), tasks get their
# coordinates. The package build takes minutes: `make check-deb` runs this test and tests/deb_trixie.sh.
#
# TOPOAWARE_DEB_DIR=DIR checks the packages already in DIR instead of building them.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/select_fabric.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/deb_checks.sh"
ta_require_daemon_tests
ta_require_cmd slurmctld slurmctld
ta_require_cmd dpkg-buildpackage dpkg-dev
ta_require_cmd dh debhelper
[ -n "${TOPOAWARE_SLURM_SOURCE:-}" ] || ta_skip "configure had no --with-slurm-source: make deb needs it"
b=$(cd "${top_builddir:-.}" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-deb.XXXXXX")
ta_on_exit "rm -rf '$work'"
chmod 755 "$work"
version=$(sed -n 's/^#define SLURM_VERSION_STRING "\(.*\)"/\1/p' "$TOPOAWARE_SLURM_SOURCE/config.h")
# Debian's PluginDir: where the package holding select_cons_tres.so put it.
plugindir=$(dirname "$(dpkg -L slurm-wlm-basic-plugins | grep '/select_cons_tres\.so$')")

if [ -n "${TOPOAWARE_DEB_DIR:-}" ]; then
  debs=$TOPOAWARE_DEB_DIR
else
  debs=$work/deb
  t0=$SECONDS
  make -C "$b" --no-print-directory deb DEB_OUTDIR="$debs" >"$work/make-deb.log" 2>&1 ||
    { tail -n 40 "$work/make-deb.log" >&2; ta_fail "make deb failed"; }
  ta_note "make deb: $((SECONDS - t0)) s"
fi
deb_check_packages "$debs" "$plugindir" "$version"

# Packages for another release than the host's Slurm (configure takes any release's tree) are built
# and checked, but neither install nor load here.
installed=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins | sed 's/-[^-]*$//')
[ "$installed" = "$version" ] ||
  ta_skip "packages built for Slurm $version and checked; the host's Slurm is $installed: no cluster run"

# dpkg would take them on this host (dependencies satisfied), without installing anything.
out=$(apt-get -s install "$DEB_CMD" "$DEB_PLUGINS" 2>&1) ||
  { echo "$out" >&2; ta_fail "apt-get -s install of the packages failed (above)"; }
grep -q '^Inst slurm-topoaware-plugins' <<<"$out" || ta_fail "apt-get -s would not install the plugins: $out"
ta_pass "apt-get -s install: both packages install here, dependencies satisfied"

root=$work/root
dpkg -x "$DEB_CMD" "$root"
dpkg -x "$DEB_PLUGINS" "$root"
"$root/usr/bin/topoaware" --help >/dev/null || ta_fail "the packaged topoaware does not run"
deb_fabric "" "$work/fabric" "$root/usr/bin/topoaware" "$root$plugindir"
f=$work/fabric

cluster_start --nodes 16 --width 4 --gpus 8 --plugin-dir "$root$plugindir" --plugstack "$f/plugstack.conf" \
  --topology "$f/topology.conf" --file "topology.json=$f/topology.json" \
  --conf SelectType=select/cons_tres_topoaware --conf JobSubmitPlugins=topoaware
grep -q 'select/cons_tres_topoaware: topology .*topology.json loaded (16 hosts' "$CLUSTER_LOGDIR/slurmctld.log" ||
  ta_fail "slurmctld did not load the topology with the packaged select plugin"
deb_refuse
deb_place "$work/B"
[ "$(deb_leaf_counts "$work/B")" = "2 2" ] ||
  ta_fail "packaged select plugin gave the tp=8 pp=2 dp=2 job $(echo $(cat "$work/B")), expected 2 + 2 leaves"
ta_pass "packaged select/cons_tres_topoaware: tp=8 pp=2 dp=2 job on 2 + 2 nodes ($(echo $(cat "$work/B")))"
deb_task_env
