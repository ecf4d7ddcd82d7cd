# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by tests/deb_package.sh (the host's Slurm) and tests/deb_trixie.sh (Slurm 24.11 in the trixie
# root): what the built Debian packages must hold, and a cluster run from their installed files.
# Sourced after slurm_cluster.sh and select_fabric.sh (sel_busy, sel_job_nodes, sel_leaf).

# deb_check_packages DEBDIR PLUGINDIR SLURM_VERSION: both packages exist, the plugins package depends
# on exactly that Slurm release (what Slurm checks: major.minor.micro) and holds the three plugins in
# PLUGINDIR, nothing else of Slurm's; the command package holds the command and its man pages.
# Sets DEB_CMD and DEB_PLUGINS to the two files.
deb_check_packages() {
  local dir=$1 plugindir=$2 version=$3 next dep files f
  DEB_CMD=$(ls "$dir"/topoaware_*.deb 2>/dev/null | head -n1)
  DEB_PLUGINS=$(ls "$dir"/slurm-topoaware-plugins_*.deb 2>/dev/null | head -n1)
  [ -n "$DEB_CMD" ] && [ -n "$DEB_PLUGINS" ] ||
    ta_fail "no topoaware or slurm-topoaware-plugins .deb in $dir: $(ls "$dir")"
  next=$(echo "$version" | awk -F. '{ printf "%s.%s.%d~", $1, $2, $3 + 1 }')
  dep=$(dpkg-deb -f "$DEB_PLUGINS" Depends)
  ta_note "slurm-topoaware-plugins Depends: $dep"
  case ", $dep," in
    *", slurm-wlm-basic-plugins (>= $version), slurm-wlm-basic-plugins (<< $next),"*) ;;
    *) ta_fail "slurm-topoaware-plugins does not depend on Slurm $version exactly (>= $version, << $next): $dep" ;;
  esac
  case ", $dep," in
    *", libhwloc-plugins,"*) ;;
    *) ta_fail "slurm-topoaware-plugins lacks libhwloc-plugins: $dep" ;;
  esac
  # ${shlibs:Depends} was filled: the plugins link libstdc++ and hwloc.
  echo "$dep" | grep -q 'libstdc++6' || ta_fail "slurm-topoaware-plugins: no shared library dependencies: $dep"
  files=$(dpkg-deb -c "$DEB_PLUGINS" | awk '{ print $NF }' | sed 's|^\./|/|' | grep -v '/$')
  for f in spank_topoaware.so job_submit_topoaware.so select_cons_tres_topoaware.so; do
    echo "$files" | grep -qx "$plugindir/$f" || ta_fail "slurm-topoaware-plugins has no $plugindir/$f: $files"
  done
  if echo "$files" | grep -E '\.la$|passthrough'; then
    ta_fail "slurm-topoaware-plugins holds files it should not (above)"
  fi
  [ "$(echo "$files" | grep -c "^$plugindir/")" = 3 ] ||
    ta_fail "slurm-topoaware-plugins: expected 3 files in $plugindir: $(echo "$files" | grep "^$plugindir/")"
  for f in /usr/share/man/man8/spank_topoaware.8.gz /usr/share/man/man8/select_cons_tres_topoaware.8.gz; do
    echo "$files" | grep -qx "$f" || ta_fail "slurm-topoaware-plugins has no $f"
  done
  files=$(dpkg-deb -c "$DEB_CMD" | awk '{ print $NF }' | sed 's|^\./|/|' | grep -v '/$')
  for f in /usr/bin/topoaware /usr/share/man/man1/topoaware.1.gz /usr/share/man/man5/topoaware.conf.5.gz; do
    echo "$files" | grep -qx "$f" || ta_fail "topoaware package has no $f: $files"
  done
  if echo "$files" | grep -q '\.so$'; then ta_fail "the topoaware package holds a plugin"; fi
  ta_pass "packages: $(basename "$DEB_CMD") (command, man pages), $(basename "$DEB_PLUGINS") (3 plugins in" \
    "$plugindir, depends on slurm-wlm-basic-plugins >= $version, << $next)"
  deb_lintian "$DEB_CMD" "$DEB_PLUGINS"
}

# deb_lintian DEB...: Debian's package checker finds no error and no warning, except one that stays
# until the project names its license (debian/copyright says so). (initial-upload-closes-no-bugs, which
# only means something for an upload to Debian, is overridden in the packages.)
deb_lintian() {
  local out tags
  command -v lintian >/dev/null || { ta_note "lintian not installed: packages not checked by it"; return 0; }
  out=$(lintian --tag-display-limit 0 "$@" 2>&1 | grep -v '^running with root privileges' || true)
  tags=$(echo "$out" | grep -E '^[EW]: ' | grep -v ': copyright-without-copyright-notice$' || true)
  [ -z "$tags" ] || { echo "$out" >&2; ta_fail "lintian: $(echo "$tags" | wc -l) errors or warnings (above)"; }
  ta_pass "lintian: no error or warning$(echo "$out" | grep -q copyright-without-copyright-notice &&
    echo ' (but copyright-without-copyright-notice: no license named yet)')"
}

# deb_fabric ROOT DIR TOPOAWARE: in ROOT's folder DIR (DIR as seen inside ROOT; ROOT empty on the host),
# the 4 leaves x 4 hosts fat tree of tests/lib/select_fabric.sh as topology.json (written by the
# packaged command TOPOAWARE, run inside ROOT), topology.conf for topology/tree and for
# topology/block, and a plugstack.conf naming the installed SPANK plugin with a private state_dir.
deb_fabric() {
  local root=$1 dir=$2 cmd=$3 plugindir=$4 k run=()
  [ -z "$root" ] || run=(chroot "$root")
  mkdir -p "$root$dir" && chmod 755 "$root$dir"
  mkdir -m 0755 "$root$dir/state"
  "${run[@]}" "$cmd" generate fat-tree --leaves 4 --hosts-per-leaf 4 --json "$dir/topology.json" >/dev/null ||
    ta_fail "the packaged topoaware generate failed"
  grep -q '"n0016"' "$root$dir/topology.json" || ta_fail "generated topology has no host n0016"
  {
    for k in 0 1 2 3; do printf 'SwitchName=leaf%d Nodes=n[%04d-%04d]\n' $((k + 1)) $((4 * k + 1)) $((4 * k + 4)); done
    echo "SwitchName=spine Switches=leaf[1-4]"
  } >"$root$dir/topology.conf"
  {
    for k in 0 1 2 3; do printf 'BlockName=b%d Nodes=n[%04d-%04d]\n' $((k + 1)) $((4 * k + 1)) $((4 * k + 4)); done
    echo "BlockSizes=4,8,16"
  } >"$root$dir/block.conf"
  echo "required $plugindir/spank_topoaware.so state_dir=$dir/state" >"$root$dir/plugstack.conf"
}

deb_leaf_counts() { # node names in file $1 -> "3 1" (nodes per leaf, descending)
  local n; while read -r n; do sel_leaf "$n"; done <"$1" |
    sort | uniq -c | awk '{print $1}' | sort -rn | tr '\n' ' ' | sed 's/ $//'
}

# deb_place OUT [idle]: with nodes busy so that leaves keep 3, 3, 2 and 0 free nodes (none with "idle"),
# a --tp=8 --pp=2 --dp=2 job of 4 nodes (two DP rings of 2 nodes); its nodes go to OUT, one per line.
# Sets DEB_JOB. Every step checks itself: callers run it in a subshell on the left of ||, where set -e
# does not act.
deb_place() {
  local out=$1
  [ "${2:-}" = idle ] || sel_busy n0001 n0005 n0009 n0010 n0013 n0014 n0015 n0016
  DEB_JOB=$(cluster_run sbatch --parsable --exclusive -N4 --gpus-per-node=8 --ntasks-per-node=8 --tp=8 --pp=2 \
    --dp=2 -o /dev/null --wrap 'sleep 600') || ta_fail "sbatch of the tp=8 pp=2 dp=2 job was refused"
  cluster_wait_job "$DEB_JOB" 60 RUNNING >/dev/null || ta_fail "the tp=8 pp=2 dp=2 job did not start"
  sel_job_nodes "$DEB_JOB" >"$out"
  [ -s "$out" ] || ta_fail "no nodes for job $DEB_JOB: $(cluster_run scontrol -o show job "$DEB_JOB")"
}

# deb_refuse: job_submit/topoaware refuses bad layouts with its message, and no job is made:
# --tp=abc (the option itself), and --tp=3 with --gpus-per-node=8 (which needs the GPU count read from
# the request: "gres:gpu:8" in 22.05, "gres/gpu:8" from 23.11 on).
deb_refuse() {
  local out rc before args want
  before=$(cluster_run squeue -h | wc -l)
  for args in "--tp=abc|tp=abc is not a whole number" "--tp=3 --gpus-per-node=8|tp=3 does not divide the 8 GPUs"; do
    want=${args#*|} args=${args%%|*} rc=0
    # shellcheck disable=SC2086
    out=$(cluster_run sbatch $args --wrap true 2>&1) || rc=$?
    [ "$rc" -ne 0 ] || ta_fail "sbatch $args was accepted: $out"
    grep -qF "$want" <<<"$out" || ta_fail "sbatch $args: no '$want' from topoaware: $out"
    [ "$(cluster_run squeue -h | wc -l)" = "$before" ] || ta_fail "sbatch $args was refused but a job exists"
    ta_pass "job_submit/topoaware refuses sbatch $args: $(grep -m1 -F "$want" <<<"$out" | sed 's/^sbatch: error: //')"
  done
}

# deb_task_env: every task of a tp=8 dp=2 step on 2 nodes gets its coordinates from the SPANK plugin.
deb_task_env() {
  local out script
  script='echo "$SLURM_LOCALID ${TOPOAWARE_TP_RANK--} ${TOPOAWARE_DP_RANK--} ${TOPOAWARE_NODE_RANK--} ${WORLD_SIZE--}"'
  # Standard output only: the plugin warns on standard error that the harness's GPUs (character
  # devices) are not seen by hwloc, and leaves CUDA_VISIBLE_DEVICES as Slurm set it.
  out=$(cluster_run srun -N2 --ntasks-per-node=8 --gpus-per-node=8 --tp=8 --dp=2 bash -c "$script") ||
    ta_fail "srun --tp=8 --dp=2 failed: $out"
  [ "$(echo "$out" | wc -l)" = 16 ] || ta_fail "srun --tp=8 --dp=2: expected 16 tasks: $out"
  # tp is the fastest coordinate and fills a node: TP rank = local id, DP rank = node rank (0 or 1,
  # 8 tasks each), world size 16.
  echo "$out" | awk '$2 != $1 || $3 != $4 || ($3 != 0 && $3 != 1) || $5 != 16 { bad = 1; print "bad task: " $0 }
                     { n[$3]++ }
                     END { if (n[0] != 8 || n[1] != 8) { bad = 1; print "DP ranks not 8 + 8" }; exit bad }' >&2 ||
    ta_fail "wrong TOPOAWARE_* coordinates in tasks (above): $out"
  ta_pass "SPANK task environment: 16 tasks with TOPOAWARE_TP_RANK, TOPOAWARE_DP_RANK and WORLD_SIZE"
}

# deb_stage_in_root ROOT DIR: the .deb files of DIR copied to ROOT/build (an overlay of the trixie
# root); sets DEB_PLUGINDIR to Slurm's plugin folder in ROOT (where the plugins package installs).
deb_stage_in_root() {
  local root=$1 dir=$2
  mkdir -p "$root/build"
  cp "$dir"/*.deb "$root/build/"
  DEB_PLUGINDIR=$(dirname "$(chroot "$root" dpkg -L slurm-wlm-basic-plugins | grep '/select_cons_tres\.so$')")
}

# deb_install_in_root ROOT: the topoaware and slurm-topoaware-plugins packages found in ROOT/build
# installed there with apt-get (ROOT: an overlay of the trixie root, tests/lib/trixie.sh, which the
# packages' dependencies are already in).
deb_install_in_root() {
  local root=$1 cmd plugins out
  cmd=$(cd "$root/build" && ls topoaware_*.deb 2>/dev/null | head -n1)
  plugins=$(cd "$root/build" && ls slurm-topoaware-plugins_*.deb 2>/dev/null | head -n1)
  [ -n "$cmd" ] && [ -n "$plugins" ] || ta_fail "no topoaware or slurm-topoaware-plugins .deb in $root/build"
  out=$(chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get -y -q install --no-install-recommends \
    "/build/$cmd" "/build/$plugins" 2>&1) ||
    { echo "$out" >&2; ta_fail "apt-get install of the packages in the root failed (above)"; }
}
