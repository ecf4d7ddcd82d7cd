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
