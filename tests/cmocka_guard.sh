#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An exception that escapes a CMocka case (C++ tests, tests/lib/cmocka_cxx.hpp) fails that case
# with its message, and the other cases of the binary still run and report.
set -uo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/common.sh"
probe=${top_builddir:-.}/tests/cmocka_guard_probe
[ -x "$probe" ] || ta_fail "$probe not built (make check builds it)"
out=$("$probe" 2>&1)
rc=$?
echo "$out"
[ "$rc" -ne 0 ] || ta_fail "a binary with throwing cases exited 0"
[ "$rc" -lt 128 ] || ta_fail "the binary died of a signal ($rc): the exception was not caught"
grep -q 'uncaught exception: hwloc_topology_load failed: Invalid argument' <<<"$out" ||
  ta_fail "the std::exception's message is not in the report"
grep -q 'FAILED  \] throws_runtime_error' <<<"$out" || ta_fail "throws_runtime_error not reported failed"
grep -q 'not derived from std::exception' <<<"$out" || ta_fail "a thrown int is not reported"
grep -q 'OK \] runs_after' <<<"$out" || ta_fail "the case after the throwing ones did not run"
grep -q '2 FAILED TEST' <<<"$out" || ta_fail "expected exactly two failed cases"
ta_pass "throwing cases fail with their message; the case after them runs and passes"
