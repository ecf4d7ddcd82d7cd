# SPDX-License-Identifier: GPL-2.0-or-later
# tests: outputs (host lists, topology.conf tree/block, DOT, summary)
check_PROGRAMS += tests/test_hostlist tests/test_outputs tests/gen_topology_conf
TESTS += tests/test_hostlist tests/test_outputs tests/slurm_topology_conf.sh
dist_noinst_SCRIPTS += tests/slurm_topology_conf.sh

tests_test_hostlist_SOURCES = tests/test_hostlist.cpp
tests_test_hostlist_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_hostlist_LDADD = $(TESTS_LIBS)

# DOT is the path of graphviz's dot found by configure ("" if absent: the SVG check is skipped).
tests_test_outputs_SOURCES = tests/test_outputs.cpp tests/outputs_fixtures.hpp
tests_test_outputs_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib -DDOT_PROGRAM='"$(DOT)"'
tests_test_outputs_LDADD = $(TESTS_LIBS) $(FMT_LIBS)

# Helper of tests/slurm_topology_conf.sh: writes slurm.conf node lines and topology.conf of
# hand-built topologies (until `topoaware discover --format topology-conf` can do it from a dump).
tests_gen_topology_conf_SOURCES = tests/gen_topology_conf.cpp tests/outputs_fixtures.hpp
tests_gen_topology_conf_CPPFLAGS = $(AM_CPPFLAGS)
tests_gen_topology_conf_LDADD = report/libtopoaware_report.la corelib/libtopoaware_core.la $(FMT_LIBS)
