# SPDX-License-Identifier: GPL-2.0-or-later
# tests: benchmark simulator (Slurm replicas, scheduler, optimum, workload)
check_PROGRAMS += tests/test_sim_replicas
TESTS += tests/test_sim_replicas
tests_test_sim_replicas_SOURCES = tests/test_sim_replicas.cpp
tests_test_sim_replicas_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib -I$(top_srcdir)/bench/sim
tests_test_sim_replicas_LDADD = bench/libtopoaware_sim.la $(TESTS_LIBS)
TESTS += tests/test_sim_replay_workload.sh
EXTRA_DIST += tests/test_sim_replay_workload.sh
