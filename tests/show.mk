# SPDX-License-Identifier: GPL-2.0-or-later
# tests: topoaware show (report/show.hpp, cli/show.cpp): units over generated fabrics with hand-made
# status files and Slurm lists, the command against fake squeue/sinfo/scontrol, and a real
# 16-node cluster running select/cons_tres_topoaware (root; skipped otherwise).
check_PROGRAMS += tests/test_show
TESTS += tests/test_show
tests_test_show_SOURCES = tests/test_show.cpp
tests_test_show_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS) $(FMT_CFLAGS)
tests_test_show_LDADD = $(TESTS_LIBS)

TA_SHOW_TESTS = tests/cli_show.sh tests/slurm_show.sh
TESTS += $(TA_SHOW_TESTS)
EXTRA_DIST += $(TA_SHOW_TESTS)
CLEANFILES += tests/slurm_show.example.txt tests/slurm_show.example.svg tests/slurm_show.example-job.svg
