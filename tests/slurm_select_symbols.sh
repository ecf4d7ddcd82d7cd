#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The select plugins against Slurm's ABI (plugins/select/local.mk; docs/design.md, "Slurm releases
# and the ABI"):
# - each exports exactly what Slurm looks up: plugin_name/type/version/id, init, fini and the
#   select_p_* of node_select_syms in the Slurm source tree it was built against (read from that
#   tree's src/common/select.c (22.05) or src/interfaces/select.c (23.11+): 36, 31, 13 or 14 calls,
#   so a Slurm release that changes the table fails here);
# - no Slurm function is referenced in C++-mangled form, and none of fatal()/abort() (nothing may
#   stop slurmctld);
# - every Slurm command loads all select plugins of PluginDir: each .so dlopen()s with RTLD_NOW in a
#   client that has only libslurmfull loaded, and not without it (so the check is not vacuous);
# - so does every program linked to the public libslurm.so (pyslurm, DRMAA): each .so dlopen()s
#   there as Slurm loads plugins (RTLD_LAZY), which needs every Slurm name it uses under its slurm_*
#   export (slurm_xlator.h) and no slurmctld variable left undefined (the topoaware build defines
#   node_record_count and node_record_table_ptr, as Slurm's own select plugins do, and exports
#   them so that slurmctld's bind).
# Built against another release than the installed one (tools/slurm-matrix.sh): the dlopen checks
# need that release's libslurmfull.so (TOPOAWARE_SLURMFULL, built from the tree) and its libslurm.so
# (TOPOAWARE_LIBSLURM); without them every undefined name of the plugin must be defined by the tree
# (its objects, else its C sources: tests/lib/slurm_defs.sh) or by a library the plugin links.
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/common.sh"
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_defs.sh"
b=${top_builddir:-.}
client=$b/tests/dlopen_plugin
ta_require_cmd nm binutils
src=$(sed -n 's/^SLURM_SRC = //p' "$b/Makefile")
rel=$(sed -n 's/^SLURM_SRC_VERSION = //p' "$b/Makefile")
installed=$(sed -n 's/^SLURM_INSTALLED_VERSION = //p' "$b/Makefile")
[ -n "$src" ] && [ -d "$src/src" ] || ta_skip "built without --with-slurm-source: no select plugins"
[ -x "$client" ] || ta_fail "$client not built"
select_c=$src/src/interfaces/select.c
[ -r "$select_c" ] || select_c=$src/src/common/select.c
# The same Slurm installed: its libraries; another: the tree's (TOPOAWARE_SLURMFULL/_LIBSLURM), or
# only the nm-level check.
slurmfull=${TOPOAWARE_SLURMFULL:-}
libslurm=${TOPOAWARE_LIBSLURM:-}
if [ -z "$slurmfull" ] && [ "$rel" = "$installed" ]; then
  for d in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/slurm-wlm /usr/lib64/slurm /usr/lib/slurm; do
    [ -f "$d/libslurmfull.so" ] && { slurmfull=$d/libslurmfull.so; break; }
  done
  [ -n "$slurmfull" ] || ta_skip "libslurmfull.so not found (package slurm-wlm-basic-plugins)"
  libslurm=$(ls /usr/lib/x86_64-linux-gnu/libslurm.so.[0-9]* /usr/lib64/libslurm.so.[0-9]* 2>/dev/null |
    head -n1 || true)
  [ -n "$libslurm" ] || ta_skip "libslurm.so not found (package libslurm38 or similar)"
fi
ta_note "Slurm $rel (tree $src), installed ${installed:-none}; libslurmfull: ${slurmfull:-none, nm-level check}"

syms=$(sed -n '/^\(static \)\{0,1\}const char \*node_select_syms\[\] = {/,/^};/p' "$select_c" |
  grep -o '"[a-z_]*"' | tr -d '"')
[ "$(echo "$syms" | wc -l)" -ge 13 ] || ta_fail "could not read node_select_syms from $select_c"
ta_note "node_select_syms of $select_c: $(echo "$syms" | wc -l) names"
want=$(printf '%s\n' plugin_name plugin_type plugin_version init fini $syms | sort -u)

# Without that release's libslurmfull.so: every undefined name of $1 is defined by a library it links
# or by the Slurm tree (its objects, or its sources when not built: tests/lib/slurm_defs.sh).
nm_check() {
  local so=$1 missing
  missing=$(ta_slurm_undefined_missing "$so" "$src")
  [ -z "$missing" ] || ta_fail "$(basename "$so") refers to names that Slurm $rel does not define: $(echo $missing)"
  ta_slurm_defined_names "$src" >/dev/null
  ta_pass "$(basename "$so"): every undefined name is defined by Slurm $rel ($TA_SLURM_DEFS_HOW) or a" \
    "linked library (nm-level check: no libslurmfull.so of $rel to dlopen with)"
}

for name in topoaware passthrough; do
  so=$b/plugins/select/.libs/select_cons_tres_$name.so
  [ -f "$so" ] || ta_fail "$so not built"
  exported=$(nm -D --defined-only "$so" | awk '{print $NF}' | sort -u)
  want_so=$want
  [ "$name" = passthrough ] || want_so=$(printf '%s\n' $want node_record_count node_record_table_ptr | sort -u)
  diff <(echo "$want_so") <(echo "$exported") >/dev/null ||
    ta_fail "$(basename "$so") exports differ from what Slurm looks up:" \
      "$(diff <(echo "$want_so") <(echo "$exported") | grep '^[<>]' | tr '\n' ' ')"
  ta_pass "$(basename "$so") exports exactly the $(echo "$want" | wc -l) symbols Slurm looks up"

  undef=$(nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' | sort -u)
  re='(^| )(slurm_|bit_|xmalloc|xfree|xstr|list_|hostlist|gres_|node_|part_|log_|error|info|debug|verbose|plugin_)'
  bad=$(echo "$undef" | grep '^_Z' | c++filt | grep -E "$re" || true)
  [ -z "$bad" ] || ta_fail "$(basename "$so") refers to Slurm functions in C++-mangled form: $bad"
  bad=$(echo "$undef" | grep -xE 'fatal|slurm_fatal|abort|exit|fatal_abort' || true)
  [ -z "$bad" ] || ta_fail "$(basename "$so") can stop slurmctld: it refers to $(echo $bad)"
  ta_pass "$(basename "$so"): no mangled Slurm references, no fatal()/abort()/exit()"

  if [ -z "$slurmfull" ]; then
    nm_check "$so"
    continue
  fi
  "$client" now "$so" -p "$slurmfull" $want >/dev/null ||
    ta_fail "$(basename "$so") does not dlopen(RTLD_NOW) in a client"
  if "$client" now "$so" 2>/dev/null; then
    ta_fail "$(basename "$so") loaded without libslurmfull: it should need it"
  fi
  ta_pass "$(basename "$so"): dlopen(RTLD_NOW) in a client with libslurmfull, fails without it"
  if [ -z "$libslurm" ]; then
    ta_note "no libslurm.so of Slurm $rel: the libslurm.so client check is left out"
    continue
  fi
  out=$("$client" lazy "$so" -p "$libslurm" 2>&1) ||
    ta_fail "$(basename "$so") does not load in a libslurm.so client: $out"
  missing=$(nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' | sort -u |
    comm -23 - <(nm -D --defined-only "$libslurm" "$slurmfull" | awk '{print $NF}' | sed 's/@.*//' | sort -u) |
    grep -E '^(slurm_|bit_|list_|hostlist_|xstr|log_|error|info|debug|verbose|running_in|node_|gres_|plugin_)' || true)
  [ -z "$missing" ] || ta_fail "$(basename "$so") calls Slurm functions that no library defines: $(echo $missing)"
  in_full_only=$(nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' | sort -u |
    comm -23 - <(nm -D --defined-only "$libslurm" | awk '{print $NF}' | sed 's/@.*//' | sort -u) |
    grep -E '^(slurm_|bit_|list_|hostlist_|xstr|log_|error$|info$|running_in|plugin_)' || true)
  [ -z "$in_full_only" ] ||
    ta_fail "$(basename "$so") calls Slurm functions that libslurm.so lacks (include slurm_xlator.h):" \
      "$(echo $in_full_only)"
  ta_pass "$(basename "$so"): loads in a libslurm.so client; every Slurm function it calls is exported there"
done
# The pass-through must not carry the C++ core (it is the cost baseline).
if ldd "$b/plugins/select/.libs/select_cons_tres_passthrough.so" | grep -q 'libstdc++'; then
  ta_fail "select_cons_tres_passthrough.so links libstdc++: the baseline must only forward"
fi
ta_pass "select_cons_tres_passthrough.so is forwarding only (no C++ core)"
