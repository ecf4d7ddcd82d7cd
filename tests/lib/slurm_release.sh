# SPDX-License-Identifier: GPL-2.0-or-later
# Upstream Slurm releases built from their source tarballs (tools/lib/slurm_build.sh), for what needs a
# release newer than Debian's (26.05: task layout in topology order). Sourced, not run. Needs root.
#
#   . "$top_srcdir/tests/lib/slurm_release.sh"
#   slurm_release_prepare 26.05.3 || ta_skip "$SLURM_RELEASE_WHY"   # builds once per machine (minutes)
#   slurm_release_cluster_start --nodes 16 --gpus 8 --topology FILE ...
#   cluster_run srun -N4 hostname                                    # that release's srun
#   (cluster_stop runs from the EXIT trap)
#
# slurm_release_prepare returns 0 when the release is ready, 2 when it cannot be built here (no
# tarball, no write access to the cache, no libmunge-dev: SLURM_RELEASE_WHY says why, the test skips)
# and 1 when building failed (SLURM_RELEASE_WHY names the log): a test should fail then.
# slurm_release_cluster_start takes cluster_start's options (tests/lib/slurm_cluster.sh) and runs that
# release's daemons and commands from its prefix, with cgroup.conf saying CgroupPlugin=disabled (no
# cgroup plugin is built, and slurmd of 23.11 and later fails without a cgroup mount otherwise).
#
# SLURM_RELEASE_PREFIX and SLURM_RELEASE_TREE (the configured source tree, for
# configure --with-slurm-source) are set by slurm_release_prepare.

# shellcheck source=tests/lib/slurm_cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurm_cluster.sh"
# shellcheck source=tools/lib/slurm_build.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/lib/slurm_build.sh"

SLURM_RELEASE="" SLURM_RELEASE_WHY="" SLURM_RELEASE_PREFIX="" SLURM_RELEASE_TREE=""

slurm_release_prepare() {
  local v=$1 rc=0
  SLURM_RELEASE=$v SLURM_RELEASE_WHY=""
  if [ "$(id -u)" -ne 0 ] && ! slurm_build_ready "$v"; then
    SLURM_RELEASE_WHY="Slurm $v is not built yet and building it needs root (tools/build-slurm.sh $v)"
    return 2
  fi
  slurm_build_prepare "$v" || rc=$?
  SLURM_RELEASE_WHY=$SLURM_BUILD_WHY
  SLURM_RELEASE_PREFIX=$SLURM_BUILD_PREFIX SLURM_RELEASE_TREE=$SLURM_BUILD_TREE
  return "$rc"
}

# slurm_release_require VERSION: the release built and ready, or the test skips (it cannot be built
# on this machine: no tarball, no root) or fails (the build failed).
slurm_release_require() {
  local rc=0
  slurm_release_prepare "$1" || rc=$?
  case $rc in
    0) ;;
    2) ta_skip "$SLURM_RELEASE_WHY" ;;
    *) ta_fail "could not build Slurm $1: $SLURM_RELEASE_WHY" ;;
  esac
}

# slurm_release_require_yaml: skip unless the release has Slurm's YAML serializer. Without it
# (configure found no libyaml when the release was built) slurmctld stops at start with "fatal:
# serializer_required: could not find plugin for application/x-yaml" as soon as a topology.yaml
# exists.
slurm_release_require_yaml() {
  ls "$SLURM_RELEASE_PREFIX"/lib/slurm/serializer_yaml.so >/dev/null 2>&1 ||
    ta_skip "Slurm $SLURM_RELEASE in $SLURM_RELEASE_PREFIX was built without serializer/yaml (libyaml-dev missing at its configure): it cannot read topology.yaml; rebuild it with tools/build-slurm.sh"
}

# The version the prefix's slurmctld reports, e.g. 26.05.3.
slurm_release_version() {
  "$SLURM_RELEASE_PREFIX/sbin/slurmctld" -V 2>/dev/null | awk '{ print $2 }'
}

slurm_release_cluster_start() {
  [ -n "$SLURM_RELEASE_PREFIX" ] ||
    { echo "slurm_release_cluster_start: call slurm_release_prepare first" >&2; return 1; }
  cluster_start --slurm-prefix "$SLURM_RELEASE_PREFIX" --cgroup-disabled "$@"
}
