// SPDX-License-Identifier: GPL-2.0-or-later
// CMocka from C++: its header needs these C headers first. Include this file LAST, after all
// C++ headers: cmocka defines macros such as fail() that clash with std::basic_ios::fail.
#pragma once
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

#include <exception>
#include <string>

// Every case runs inside a guard: an exception that escapes a test function fails that case with
// its message, and the cases after it still run (CMocka alone would see std::terminate abort the
// whole binary). The message is copied out of the handler before fail_msg() longjmps away.
template <void (*Test)(void **)>
void ta_guarded_test(void **state) {
  static std::string what;
  what.clear();
  try {
    Test(state);
    return;
  } catch (const std::exception &e) {
    what = std::string("uncaught exception: ") + e.what();
  } catch (...) {
    what = "uncaught exception of a type not derived from std::exception";
  }
  fail_msg("%s", what.c_str());
}
#undef cmocka_unit_test
#define cmocka_unit_test(f) {#f, ta_guarded_test<f>, nullptr, nullptr, nullptr}

// Fails, naming both texts, when `needle` is not part of `hay` (assert_true(...find...) says neither).
#define assert_contains(hay, needle)                                                      \
  do {                                                                                    \
    const std::string ta_hay_(hay), ta_needle_(needle);                                   \
    if (ta_hay_.find(ta_needle_) == std::string::npos)                                    \
      fail_msg("'%s' lacks '%s'", ta_hay_.c_str(), ta_needle_.c_str());                   \
  } while (0)
