# SPDX-License-Identifier: GPL-2.0-or-later
# tests: topoaware defrag (corelib/defrag_plan.hpp, report/defrag.hpp, cli/defrag.cpp): the plan on small fat trees with
# hand-made status files and Slurm lists, and the core's plan alone on a 3-level tree; the parsers of squeue's output, the --topo-migrate option;
# and --apply end to end on a real 16-node cluster (root; skipped otherwise).
check_PROGRAMS += tests/test_defrag
TESTS += tests/test_defrag
tests_test_defrag_SOURCES = tests/test_defrag.cpp cli/defrag_parse.cpp
tests_test_defrag_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS) -I$(top_srcdir)/cli -I$(top_srcdir)/capi $(FMT_CFLAGS)
tests_test_defrag_LDADD = $(TESTS_LIBS)

TA_DEFRAG_TESTS = tests/slurm_defrag.sh
TESTS += $(TA_DEFRAG_TESTS)
EXTRA_DIST += $(TA_DEFRAG_TESTS)
