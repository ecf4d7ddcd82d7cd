#!/bin/bash
# The select plugins against Slurm's ABI (plugins/select/local.mk, PLATFORM.md):
# - each exports exactly what Slurm looks up: plugin_name/type/version/id, init, fini and the 36
#   select_p_* of node_select_syms in the Slurm source tree it was built against (read from that
#   tree's src/common/select.c, so a Slurm upgrade that changes the table fails here);
# - no Slurm function is referenced in C++-mangled form, and none of fatal()/abort() (nothing may
#   stop slurmctld);
# - every Slurm command loads all select plugins of PluginDir: each .so dlopen()s with RTLD_NOW in a
#   client that has only libslurmfull loaded, and not without it (so the check is not vacuous).
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/common.sh"
b=${top_builddir:-.}
client=$b/tests/dlopen_plugin
ta_require_cmd nm binutils
src=$(sed -n 's/^SLURM_SRC = //p' "$b/Makefile")
[ -n "$src" ] && [ -r "$src/src/common/select.c" ] || ta_skip "built without --with-slurm-source: no select plugins"
[ -x "$client" ] || ta_fail "$client not built"
slurmfull=""
for d in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/slurm-wlm /usr/lib64/slurm /usr/lib/slurm; do
  [ -f "$d/libslurmfull.so" ] && { slurmfull=$d/libslurmfull.so; break; }
done
[ -n "$slurmfull" ] || ta_skip "libslurmfull.so not found (package slurm-wlm-basic-plugins)"

syms=$(sed -n '/^const char \*node_select_syms\[\] = {/,/^};/p' "$src/src/common/select.c" | grep -o '"[a-z_]*"' | tr -d '"')
[ "$(echo "$syms" | wc -l)" -ge 30 ] || ta_fail "could not read node_select_syms from $src/src/common/select.c"
want=$(printf '%s\n' plugin_name plugin_type plugin_version init fini $syms | sort -u)

for name in topoaware passthrough; do
  so=$b/plugins/select/.libs/select_cons_tres_$name.so
  [ -f "$so" ] || ta_fail "$so not built"
  exported=$(nm -D --defined-only "$so" | awk '{print $NF}' | sort -u)
  diff <(echo "$want") <(echo "$exported") >/dev/null ||
    ta_fail "$(basename "$so") exports differ from what Slurm looks up: $(diff <(echo "$want") <(echo "$exported") | grep '^[<>]' | tr '\n' ' ')"
  ta_pass "$(basename "$so") exports exactly the $(echo "$want" | wc -l) symbols Slurm looks up"

  undef=$(nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' | sort -u)
  bad=$(echo "$undef" | grep '^_Z' | c++filt | grep -E '(^| )(slurm_|bit_|xmalloc|xfree|xstr|list_|hostlist|gres_|node_|part_|log_|error|info|debug|verbose|plugin_)' || true)
  [ -z "$bad" ] || ta_fail "$(basename "$so") refers to Slurm functions in C++-mangled form: $bad"
  bad=$(echo "$undef" | grep -xE 'fatal|slurm_fatal|abort|exit|fatal_abort' || true)
  [ -z "$bad" ] || ta_fail "$(basename "$so") can stop slurmctld: it refers to $(echo $bad)"
  ta_pass "$(basename "$so"): no mangled Slurm references, no fatal()/abort()/exit()"

  "$client" now "$so" -p "$slurmfull" $want >/dev/null || ta_fail "$(basename "$so") does not dlopen(RTLD_NOW) in a client"
  if "$client" now "$so" 2>/dev/null; then ta_fail "$(basename "$so") loaded without libslurmfull: it should need it"; fi
  ta_pass "$(basename "$so"): dlopen(RTLD_NOW) in a client with libslurmfull, fails without it"
done
# The pass-through must not carry the C++ core (it is the cost baseline).
if ldd "$b/plugins/select/.libs/select_cons_tres_passthrough.so" | grep -q 'libstdc++'; then
  ta_fail "select_cons_tres_passthrough.so links libstdc++: the baseline must only forward"
fi
ta_pass "select_cons_tres_passthrough.so is forwarding only (no C++ core)"
