# SPDX-License-Identifier: GPL-2.0-or-later
# tests: benchmark simulator (Slurm replicas, scheduler, optimum, workload)
check_PROGRAMS += tests/test_sim_replicas
TESTS += tests/test_sim_replicas
tests_test_sim_replicas_SOURCES = tests/test_sim_replicas.cpp
tests_test_sim_replicas_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib -I$(top_srcdir)/bench/sim
tests_test_sim_replicas_LDADD = bench/libtopoaware_sim.la $(TESTS_LIBS)
TESTS += tests/test_sim_replay_workload.sh
EXTRA_DIST += tests/test_sim_replay_workload.sh
# netsim's as-routed mode on a shuffled fat tree routed by OpenSM under ibsim, against ibroute and
# ibtracert (root, ibsim, opensm and SimGrid; skips with the reason otherwise).
TESTS += tests/ibsim_netsim_routes.sh
EXTRA_DIST += tests/ibsim_netsim_routes.sh
# netsim's routed fabric (as-routed, D-mod-K) on hand-written forwarding tables; bench/netsim/model.cpp
# needs no SimGrid, so this runs in every build.
check_PROGRAMS += tests/test_netsim_model
TESTS += tests/test_netsim_model
tests_test_netsim_model_SOURCES = tests/test_netsim_model.cpp bench/netsim/model.cpp
tests_test_netsim_model_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib -I$(top_srcdir)/bench/netsim
tests_test_netsim_model_LDADD = $(TESTS_LIBS)
