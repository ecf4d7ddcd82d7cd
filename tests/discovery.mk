# SPDX-License-Identifier: GPL-2.0-or-later
# tests: discovery (live libibnetdisc walk, ibnd cache)
# walk_dump prints what walk_fabric() found in a stable text form for the shell tests.
check_PROGRAMS += tests/walk_dump
tests_walk_dump_SOURCES = tests/walk_dump.cpp
tests_walk_dump_CPPFLAGS = $(AM_CPPFLAGS)
tests_walk_dump_LDADD = discovery/libtopoaware_discovery.la corelib/libtopoaware_core.la

# Needs root and ibsim (skips with the reason otherwise).
TESTS += tests/test_walk_live.sh
EXTRA_DIST += tests/test_walk_live.sh
