# SPDX-License-Identifier: GPL-2.0-or-later
# tests: spank_topoaware's plugstack.conf arguments and the job's hash file (corelib/spank_settings.hpp
# and its C API in capi/task_c.h and capi/job_dir_c.h, implemented in node/).
check_PROGRAMS += tests/test_spank_settings
TESTS += tests/test_spank_settings
tests_test_spank_settings_SOURCES = tests/test_spank_settings.cpp
tests_test_spank_settings_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_spank_settings_LDADD = node/libtopoaware_node.la $(TESTS_LIBS) $(HWLOC_LIBS)
