// SPDX-License-Identifier: GPL-2.0-or-later
// Helper of tests/cmocka_guard.sh: a CMocka binary whose first case throws. Through the guard of
// tests/lib/cmocka_cxx.hpp that case fails with the exception's message and the cases after it
// still run; without the guard std::terminate would abort the binary at the first case.
#include <stdexcept>

#include "cmocka_cxx.hpp"

namespace {
void throws_runtime_error(void **) { throw std::runtime_error("hwloc_topology_load failed: Invalid argument"); }
void throws_int(void **) { throw 42; }
void runs_after(void **) { assert_int_equal(1 + 1, 2); }
}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(throws_runtime_error),
      cmocka_unit_test(throws_int),
      cmocka_unit_test(runs_after),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
