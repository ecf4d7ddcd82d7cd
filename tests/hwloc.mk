# SPDX-License-Identifier: GPL-2.0-or-later
# tests: node/hwloc_probe over the recorded GPU nodes, the task plan (capi/task_c.h), and the
# task environment of spank_topoaware on a real localhost cluster.
check_PROGRAMS += tests/test_hwloc_probe
TESTS += tests/test_hwloc_probe
tests_test_hwloc_probe_SOURCES = tests/test_hwloc_probe.cpp
tests_test_hwloc_probe_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib -I$(top_srcdir)/tests $(HWLOC_CFLAGS)
tests_test_hwloc_probe_LDADD = node/libtopoaware_node.la $(TESTS_LIBS) $(HWLOC_LIBS)


TESTS += tests/slurm_task_env.sh
EXTRA_DIST += tests/slurm_task_env.sh
# topoaware node: the probe and the task plan from the command line (man topoaware, NODE).
TESTS += tests/cli_node.sh
EXTRA_DIST += tests/cli_node.sh
