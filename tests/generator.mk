# SPDX-License-Identifier: GPL-2.0-or-later
# tests: generator (fat tree, rail, dragonfly generators; ibsim net and ibnetdiscover writers)
check_PROGRAMS += tests/test_generator tests/gen_fabric
TESTS += tests/test_generator tests/ibsim_generated.sh
tests_test_generator_SOURCES = tests/test_generator.cpp tests/fabric_diff.hpp
tests_test_generator_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_generator_LDADD = $(TESTS_LIBS)
# Helper for tests/ibsim_generated.sh (writes net files, compares live dumps with the generator).
tests_gen_fabric_SOURCES = tests/gen_fabric.cpp tests/fabric_diff.hpp tests/empty_leaf.hpp
tests_gen_fabric_CPPFLAGS = $(TESTS_CPPFLAGS)
tests_gen_fabric_LDADD = $(TESTS_LIBS)
EXTRA_DIST += tests/ibsim_generated.sh
