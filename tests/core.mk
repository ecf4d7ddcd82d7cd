# SPDX-License-Identifier: GPL-2.0-or-later
# tests: classification and topology.json
check_PROGRAMS += tests/test_classify tests/test_topology_json tests/test_nvlink
TESTS += tests/test_classify tests/test_topology_json tests/test_nvlink
tests_test_classify_SOURCES = tests/test_classify.cpp tests/empty_leaf.hpp
tests_test_classify_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_classify_LDADD = $(TESTS_LIBS)
tests_test_topology_json_SOURCES = tests/test_topology_json.cpp
tests_test_topology_json_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_topology_json_LDADD = $(TESTS_LIBS)
tests_test_nvlink_SOURCES = tests/test_nvlink.cpp
tests_test_nvlink_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_nvlink_LDADD = $(TESTS_LIBS)
TESTS += tests/cli_help_matches_man.sh
EXTRA_DIST += tests/cli_help_matches_man.sh
TESTS += tests/cli_discover.sh tests/cli_nvlink.sh tests/cli_topology_yaml.sh
EXTRA_DIST += tests/cli_discover.sh tests/cli_nvlink.sh tests/cli_topology_yaml.sh
TESTS += tests/cli_plan.sh tests/cli_metrics.sh tests/cli_rail_shared_spines.sh
EXTRA_DIST += tests/cli_plan.sh tests/cli_metrics.sh tests/cli_rail_shared_spines.sh
# Every file the command writes, as root into a folder another user may write to (SKIP unless root).
TESTS += tests/cli_safe_write.sh
EXTRA_DIST += tests/cli_safe_write.sh
TESTS += tests/ibsim_discover.sh tests/ibsim_diff.sh tests/ibsim_counters.sh tests/ibsim_degraded.sh tests/ibsim_routes.sh tests/ibsim_monitor.sh
EXTRA_DIST += tests/ibsim_discover.sh tests/ibsim_diff.sh tests/ibsim_counters.sh tests/ibsim_degraded.sh tests/ibsim_routes.sh \
  tests/ibsim_monitor.sh tests/lib/ib_routes.sh
# The guard around every C++ CMocka case (tests/lib/cmocka_cxx.hpp): a throwing case fails alone.
check_PROGRAMS += tests/cmocka_guard_probe
TESTS += tests/cmocka_guard.sh
EXTRA_DIST += tests/cmocka_guard.sh
tests_cmocka_guard_probe_SOURCES = tests/cmocka_guard_probe.cpp
tests_cmocka_guard_probe_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_cmocka_guard_probe_LDADD = $(CMOCKA_LIBS)
# Printable text of messages that quote input (corelib/text.hpp) through the C API and the status file.
check_PROGRAMS += tests/test_text
TESTS += tests/test_text
tests_test_text_SOURCES = tests/test_text.cpp
tests_test_text_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib -DDOT_PROGRAM='"$(DOT)"'
tests_test_text_LDADD = $(TESTS_LIBS)
# The one way the command writes a file (corelib/safe_folder.hpp): links, FIFOs and folders refused.
check_PROGRAMS += tests/test_safe_write
TESTS += tests/test_safe_write
tests_test_safe_write_SOURCES = tests/test_safe_write.cpp
tests_test_safe_write_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_safe_write_LDADD = $(TESTS_LIBS)
# topoaware diff's core: generated fabrics changed as real ones change (corelib/topology_diff.hpp).
check_PROGRAMS += tests/test_topology_diff
TESTS += tests/test_topology_diff
tests_test_topology_diff_SOURCES = tests/test_topology_diff.cpp
tests_test_topology_diff_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_topology_diff_LDADD = $(TESTS_LIBS)
# The partition rule: a partition's Slurm topology kind and topology.json (corelib/part_topology.hpp).
check_PROGRAMS += tests/test_part_topology
TESTS += tests/test_part_topology
tests_test_part_topology_SOURCES = tests/test_part_topology.cpp
tests_test_part_topology_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_part_topology_LDADD = $(TESTS_LIBS)
# Routes: saved forwarding tables read and resolved, kept in topology.json, followed hop by hop.
check_PROGRAMS += tests/test_routes
TESTS += tests/test_routes
tests_test_routes_SOURCES = tests/test_routes.cpp
tests_test_routes_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_routes_LDADD = $(TESTS_LIBS)
# plan --flows on a routed fabric from saved ibnetdiscover and dump_fts output (tests/fixtures/routes).
TESTS += tests/cli_plan_flows.sh
EXTRA_DIST += tests/cli_plan_flows.sh

check_PROGRAMS += tests/test_congestion
TESTS += tests/test_congestion
tests_test_congestion_SOURCES = tests/test_congestion.cpp
tests_test_congestion_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_congestion_LDADD = $(TESTS_LIBS)
