# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers shared by the bash integration tests. Sourced, not run.
# Exit status convention (automake): 0 pass, 77 skip (reason printed), 99 hard error, else fail.

ta_skip() { echo "SKIP: $*"; exit 77; }
ta_fail() { echo "FAIL: $*" >&2; exit 1; }
ta_pass() { echo "PASS: $*"; }
ta_note() { echo "# $*"; }

# EXIT handlers, run last-registered first (like destructors), so that several helpers (ibsim, a
# cluster, a chroot's /proc mount) each clean up after themselves whatever way the test ends.
TA_EXIT_HANDLERS=()
ta_on_exit() {
  if [ ${#TA_EXIT_HANDLERS[@]} -eq 0 ]; then
    trap _ta_run_exit_handlers EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
  fi
  TA_EXIT_HANDLERS+=("$*")
}
_ta_run_exit_handlers() {
  local rc=$? i
  TA_EXIT_STATUS=$rc  # handlers may report more when the test is failing
  for ((i = ${#TA_EXIT_HANDLERS[@]} - 1; i >= 0; i--)); do
    eval "${TA_EXIT_HANDLERS[i]}" || true
  done
  TA_EXIT_HANDLERS=()
  exit "$rc"
}

# Tests that start daemons need root (slurmd, mknod) and are not run by `make distcheck`: distcheck
# must not need root or leave daemons behind. automake's distcheck always builds in
# $(distdir)/_build/sub, which is how a test can tell; TOPOAWARE_DAEMON_TESTS=no skips them anywhere.
ta_require_daemon_tests() {
  case ${TOPOAWARE_DAEMON_TESTS:-yes} in
    no|0|false) ta_skip "daemon tests disabled (TOPOAWARE_DAEMON_TESTS=${TOPOAWARE_DAEMON_TESTS})" ;;
  esac
  case ${top_builddir:-$PWD} in
    */_build/sub) ta_skip "inside make distcheck: tests that need root and daemons run from tools/run-tests.sh" ;;
  esac
  [ "$(id -u)" -eq 0 ] ||
    ta_skip "needs root (starts slurmctld/slurmd, makes device nodes); run tools/run-tests.sh as root"
}

# ta_require_built FILE WHAT: a part of a test that needs a plugin only built against a Slurm
# source tree. Configured with one (TOPOAWARE_SLURM_SOURCE, from configure --with-slurm-source, as
# tools/setup.sh does), a missing FILE is a failure; configured without one, the rest of the test is
# skipped with the reason (the parts before it ran and passed, which the reason says).
ta_require_built() {
  [ -f "$1" ] && return 0
  [ -z "${TOPOAWARE_SLURM_SOURCE:-}" ] ||
    ta_fail "$1 not built although configure had --with-slurm-source=$TOPOAWARE_SLURM_SOURCE ($2 cannot run)"
  ta_skip "$2 not run: $(basename "$1") is built only with configure --with-slurm-source (the parts above passed)"
}

# ta_require_cmd CMD [PACKAGE]
ta_require_cmd() {
  command -v "$1" >/dev/null 2>&1 || ta_skip "$1 not installed${2:+ (package $2)}"
}

# ta_wait_for TIMEOUT_S CMD...: poll CMD every 0.25 s until it succeeds; fails after TIMEOUT_S.
ta_wait_for() {
  local timeout=$1 deadline; shift
  deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.25
  done
}

# Paths given by automake's test environment, with fallbacks for running a test by hand.
: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$PWD}"

# ta_hostnames LIST: expand a Slurm host list ("n[01-03,07],gpu[1-2]x[1-2]") one name per line, as
# `scontrol show hostnames` does; in bash because scontrol needs a configured cluster to start.
ta_hostnames() {
  local list=$1 item="" depth=0 c i
  for ((i = 0; i < ${#list}; i++)); do
    c=${list:i:1}
    case $c in
      '[') depth=$((depth + 1)); item+=$c ;;
      ']') depth=$((depth - 1)); item+=$c ;;
      ',') if [ "$depth" -eq 0 ]; then _ta_expand_one "$item"; item=""; else item+=$c; fi ;;
      *) item+=$c ;;
    esac
  done
  [ -z "$item" ] || _ta_expand_one "$item"
}
_ta_expand_one() {
  local s=$1
  if [[ $s != *'['* ]]; then [ -z "$s" ] || echo "$s"; return 0; fi
  local pre=${s%%\[*} rest=${s#*\[}
  local body=${rest%%\]*} post=${rest#*\]} r a b n
  local IFS=,
  for r in $body; do
    if [[ $r == *-* ]]; then
      a=${r%-*} b=${r#*-}
      for ((n = 10#$a; n <= 10#$b; n++)); do _ta_expand_one "$pre$(printf '%0*d' "${#a}" "$n")$post"; done
    else
      _ta_expand_one "$pre$r$post"
    fi
  done
}
