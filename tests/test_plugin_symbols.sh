#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The built Slurm plugins against Slurm's ABI (plugins/local.mk; docs/design.md, "Slurm releases
# and the ABI"):
# - every symbol Slurm looks up is exported (nm -D), and nothing else (linker version scripts);
# - no Slurm function is referenced in C++-mangled form (that would load lazily and fail at the
#   first call), and every mangled reference is provided by a C++ library the plugin links;
# - every other undefined symbol is provided by a library the plugin links, by libslurmfull or (for
#   job_submit) by slurmctld itself;
# - spank_topoaware.so dlopen()s with RTLD_NOW in a client that has libslurmfull loaded, as srun,
#   sbatch and slurmstepd have. job_submit_topoaware.so refers to slurmctld's own symbols
#   (find_part_record, default_part_loc): outside slurmctld, dlopen must fail on exactly such a
#   symbol and on nothing else (data symbols are bound at load time even with RTLD_LAZY, so no
#   client program can load it); tests/slurm_options.sh loads it in a real slurmctld.
# Built against another Slurm release than the installed one (tools/slurm-matrix.sh): the libraries
# are that release's (TOPOAWARE_SLURMFULL, built from the tree), or, without them, every undefined
# name must be defined by the tree (objects or sources, tests/lib/slurm_defs.sh) or a linked library.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/common.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_defs.sh"
b=${top_builddir:-.}
spank=$b/plugins/spank/.libs/spank_topoaware.so
jobsub=$b/plugins/job_submit/.libs/job_submit_topoaware.so
client=$b/tests/dlopen_plugin
ta_require_cmd nm binutils
[ -f "$spank" ] || ta_skip "spank_topoaware.so not built (no Slurm headers: install libslurm-dev)"
[ -x "$client" ] || ta_fail "$client not built"

rel=$(sed -n 's/^SLURM_SRC_VERSION = //p' "$b/Makefile")
src=$(sed -n 's/^SLURM_SRC = //p' "$b/Makefile")
installed=$(sed -n 's/^SLURM_INSTALLED_VERSION = //p' "$b/Makefile")
slurmfull=${TOPOAWARE_SLURMFULL:-}
slurmctld=""
if [ -z "$rel" ] || [ "$rel" = "$installed" ]; then
  for d in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/slurm-wlm /usr/lib64/slurm /usr/lib/slurm; do
    [ -f "$d/libslurmfull.so" ] && { slurmfull=$d/libslurmfull.so; break; }
  done
  [ -n "$slurmfull" ] || ta_skip "libslurmfull.so not found (package slurm-wlm-basic-plugins or slurm-client)"
  slurmctld=$(command -v slurmctld || true)
fi

# Defined symbols of every library the plugin needs (ldd), one per line.
needed_defs() {
  ldd "$1" | awk '/=>/ && $3 ~ /^\// {print $3}' | while read -r lib; do
    nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//'
  done | sort -u
}

check_plugin() {
  local so=$1 want=$2 extra_providers=$3 exported undef mangled missing defs
  exported=$(nm -D --defined-only "$so" | awk '{print $NF}' | sort)
  for s in $want; do
    grep -qx "$s" <<<"$exported" || ta_fail "$(basename "$so") does not export $s (Slurm looks it up)"
  done
  local unexpected
  unexpected=$(echo "$exported" | grep -vxF -f <(tr ' ' '\n' <<<"$want") || true)
  [ -z "$unexpected" ] || ta_fail "$(basename "$so") exports more than Slurm needs: $(echo $unexpected)"
  ta_pass "$(basename "$so") exports exactly: $(echo $exported)"

  undef=$(nm -D --undefined-only "$so" | awk '$1 == "U" {print $2}' | sed 's/@.*//' | sort -u)
  mangled=$(echo "$undef" | grep '^_Z' || true)
  local bad
  re='(^| )(slurm|spank|bit_|xmalloc|xfree|xstr|list_|hostlist|gres_|node_|part_|log_|error|info|debug|verbose)'
  bad=$(echo "$mangled" | c++filt | grep -E "$re" || true)
  [ -z "$bad" ] || ta_fail "$(basename "$so") refers to Slurm functions in C++-mangled form: $bad"
  defs=$(needed_defs "$so"
         for p in $extra_providers; do nm -D --defined-only "$p" | awk '{print $NF}' | sed 's/@.*//'; done)
  defs=$(echo "$defs" | sort -u)
  missing=$(comm -23 <(echo "$undef") <(echo "$defs") | grep -vE '^(_ITM_|__gmon_start__|_Jv_RegisterClasses)' || true)
  [ -z "$missing" ] || ta_fail "$(basename "$so"): undefined symbols nobody provides: $(echo $missing)"
  ta_pass "$(basename "$so"): $(echo "$undef" | wc -l) undefined symbols, all provided" \
    "(C++ ones by libstdc++/libfmt, Slurm ones by ${extra_providers// /, })"
}

# Exports and mangled names as check_plugin does, and every undefined name defined by Slurm $rel's
# tree or a library the plugin links (no libslurmfull.so of that release to load with).
nm_only() {
  local so=$1 want=$2 exported unexpected bad missing
  exported=$(nm -D --defined-only "$so" | awk '{print $NF}' | sort)
  for s in $want; do
    grep -qx "$s" <<<"$exported" || ta_fail "$(basename "$so") does not export $s (Slurm looks it up)"
  done
  unexpected=$(echo "$exported" | grep -vxF -f <(tr ' ' '\n' <<<"$want") || true)
  [ -z "$unexpected" ] || ta_fail "$(basename "$so") exports more than Slurm needs: $(echo $unexpected)"
  bad=$(nm -D --undefined-only "$so" | awk '{print $2}' | grep '^_Z' | c++filt |
    grep -E '(^| )(slurm|spank|bit_|xmalloc|xfree|xstr|list_|gres_)' || true)
  [ -z "$bad" ] || ta_fail "$(basename "$so") refers to Slurm functions in C++-mangled form: $bad"
  missing=$(ta_slurm_undefined_missing "$so" "$src")
  [ -z "$missing" ] || ta_fail "$(basename "$so") refers to names that Slurm $rel does not define: $(echo $missing)"
  ta_slurm_defined_names "$src" >/dev/null
  ta_pass "$(basename "$so") (Slurm $rel): exports exactly what Slurm looks up; every undefined name is" \
    "defined by that release ($TA_SLURM_DEFS_HOW) or a linked library (nm-level: no libslurmfull.so of $rel)"
}

# Every `slurmstepd spank prolog|epilog` loads spank_topoaware.so: configured with libcrypto's SONAME,
# the plugin loads libcrypto only when the core first hashes (plugins/spank/ta_crypto_lazy.c), so it
# must not be a NEEDED library, and the core's OpenSSL calls must be the plugin's own forwarders.
crypto_soname=$(sed -n 's/^TA_LIBCRYPTO_SONAME = //p' "$b/Makefile")
if [ -n "$crypto_soname" ]; then
  ta_require_cmd objdump binutils
  ! objdump -p "$spank" | grep -q "NEEDED *libcrypto" ||
    ta_fail "spank_topoaware.so needs libcrypto at load time (TA_LIBCRYPTO_SONAME=$crypto_soname): it should load it lazily"
  undef_evp=$(nm -D --undefined-only "$spank" | awk '{print $2}' | grep '^EVP_' || true)
  [ -z "$undef_evp" ] || ta_fail "spank_topoaware.so leaves OpenSSL functions to the loader: $(echo $undef_evp)"
  ta_pass "spank_topoaware.so does not load libcrypto with the plugin ($crypto_soname when first needed)"
fi

spank_syms="plugin_name plugin_type plugin_version slurm_spank_init slurm_spank_init_post_opt"
spank_syms+=" slurm_spank_local_user_init slurm_spank_user_init slurm_spank_task_init slurm_spank_job_prolog"
spank_syms+=" slurm_spank_job_epilog"
if [ -z "$slurmfull" ]; then
  nm_only "$spank" "$spank_syms"
  ta_require_built "$jobsub" "the checks of job_submit_topoaware.so"
  nm_only "$jobsub" "plugin_name plugin_type plugin_version init fini job_submit job_modify"
  exit 0
fi
check_plugin "$spank" "$spank_syms" "$slurmfull"
"$client" now "$spank" -p "$slurmfull" plugin_name plugin_version slurm_spank_init slurm_spank_init_post_opt \
  slurm_spank_local_user_init slurm_spank_user_init slurm_spank_task_init slurm_spank_job_prolog \
  slurm_spank_job_epilog || ta_fail "spank_topoaware.so does not load with RTLD_NOW"
ta_pass "spank_topoaware.so: dlopen(RTLD_NOW) in a client with libslurmfull loaded"
# And not without Slurm's library: proves the check above is not vacuous.
if "$client" now "$spank" 2>/dev/null; then
  ta_fail "spank_topoaware.so loaded without libslurmfull: it should need it"
fi

ta_require_built "$jobsub" "the checks of job_submit_topoaware.so"
if [ -z "$slurmctld" ] && [ -n "$rel" ] && [ "$rel" != "$installed" ]; then
  nm_only "$jobsub" "plugin_name plugin_type plugin_version init fini job_submit job_modify"
  exit 0
fi
[ -n "$slurmctld" ] || ta_skip "slurmctld not installed: cannot check job_submit_topoaware.so's slurmctld symbols"
check_plugin "$jobsub" "plugin_name plugin_type plugin_version init fini job_submit job_modify" "$slurmfull $slurmctld"
out=$("$client" lazy "$jobsub" -p "$slurmfull" 2>&1) &&
  ta_fail "job_submit_topoaware.so loaded outside slurmctld; expected it to need slurmctld's symbols"
sym=$(echo "$out" | sed -n 's/.*undefined symbol: \([A-Za-z0-9_]*\).*/\1/p')
[ -n "$sym" ] || ta_fail "dlopen of job_submit_topoaware.so failed for another reason: $out"
ctld_defs=$(nm -D --defined-only "$slurmctld" | awk '{print $NF}')
full_defs=$(nm -D --defined-only "$slurmfull" | awk '{print $NF}')
grep -qx "$sym" <<<"$ctld_defs" ||
  ta_fail "dlopen of job_submit_topoaware.so stops at '$sym', which slurmctld does not provide"
grep -qx "$sym" <<<"$full_defs" &&
  ta_fail "dlopen stops at '$sym', which libslurmfull provides: the failure is not about slurmctld"
ta_pass "job_submit_topoaware.so: outside slurmctld, dlopen stops only at slurmctld's own symbol '$sym'"
