# SPDX-License-Identifier: GPL-2.0-or-later
# The names a Slurm source tree defines, for the symbol tests of a plugin built against a release
# whose libslurmfull.so is not at hand (tools/slurm-matrix.sh), read from its C sources (a tree need
# not be built, and a partly built one has only some objects): every function definition (Slurm
# writes the return type and the name on the line that starts the definition, or the name at the
# start of the line after the return type), every
# strong_alias(name, slurm_name) target (the slurm_* names of slurm_xlator.h) and every global
# variable definition, outside src/plugins. A superset of what a build defines (#ifdef'd code
# counts): it finds a name that release lacks or renamed, not one it compiles out.
# ta_slurm_defined_names TREE -> sorted names on stdout; TA_SLURM_DEFS_HOW says which way.
ta_slurm_defined_names() {
  local tree=$1
  TA_SLURM_DEFS_HOW="definitions in the tree's C sources"
  find "$tree/src" -name '*.c' -not -path '*/plugins/*' -not -path '*/testsuite/*' -print0 >"${TMPDIR:-/tmp}/ta_defs.$$"
  {
    xargs -0 sed -nE \
      -e 's/^(extern |static inline |inline )?[A-Za-z_][A-Za-z0-9_ ]*[ *]+\**([A-Za-z_][A-Za-z0-9_]*) ?\(.*/\2/p' \
      -e 's/^([A-Za-z_][A-Za-z0-9_]*) ?\(.*/\1/p' \
      -e 's/^[A-Za-z_][A-Za-z0-9_ ]*[ *]+\**([A-Za-z_][A-Za-z0-9_]*)(\[[^]]*\])?[[:space:]]*(=[^;]*)?;.*$/\1/p' \
      <"${TMPDIR:-/tmp}/ta_defs.$$"
    # strong_alias(name, slurm_name) may span two lines.
    xargs -0 perl -0777 -ne 'print "$1\n" while /strong_alias\(\s*\w+\s*,\s*(\w+)\s*\)/g' <"${TMPDIR:-/tmp}/ta_defs.$$"
  } | sort -u
  rm -f "${TMPDIR:-/tmp}/ta_defs.$$"
}

# ta_slurm_undefined_missing SO TREE -> the undefined names of SO that neither a library it links
# (ldd) nor the Slurm tree defines, one per line (empty: all resolved).
ta_slurm_undefined_missing() {
  local so=$1 tree=$2
  comm -23 <(nm -D --undefined-only "$so" | awk '$1 == "U" {print $2}' | sed 's/@.*//' | sort -u) \
    <( { ta_slurm_defined_names "$tree"
         ldd "$so" | awk '/=>/ && $3 ~ /^\// {print $3}' | while read -r lib; do
           nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//'
         done; } | sort -u) |
    grep -vE '^(_ITM_|__gmon_start__|_Jv_RegisterClasses)' || true
}
