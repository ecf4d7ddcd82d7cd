# SPDX-License-Identifier: GPL-2.0-or-later
# tests: engine (layout, rank order, placement, cost model, C API)
ENGINE_TEST_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib -I$(top_srcdir)/tests
EXTRA_DIST += tests/engine_topologies.hpp

check_PROGRAMS += tests/test_layout
TESTS += tests/test_layout
tests_test_layout_SOURCES = tests/test_layout.cpp
tests_test_layout_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_layout_LDADD = $(TESTS_LIBS)

check_PROGRAMS += tests/test_placement_nvlink
TESTS += tests/test_placement_nvlink
tests_test_placement_nvlink_SOURCES = tests/test_placement_nvlink.cpp
tests_test_placement_nvlink_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_placement_nvlink_LDADD = $(TESTS_LIBS)

check_PROGRAMS += tests/test_rank_order
TESTS += tests/test_rank_order
tests_test_rank_order_SOURCES = tests/test_rank_order.cpp
tests_test_rank_order_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_rank_order_LDADD = $(TESTS_LIBS)

check_PROGRAMS += tests/test_placement
TESTS += tests/test_placement
tests_test_placement_SOURCES = tests/test_placement.cpp
tests_test_placement_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_placement_LDADD = $(TESTS_LIBS)

# Parts of a fabric that no path joins, and placing jobs inside one.
check_PROGRAMS += tests/test_islands
TESTS += tests/test_islands
tests_test_islands_SOURCES = tests/test_islands.cpp
tests_test_islands_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_islands_LDADD = $(TESTS_LIBS)

# The engine against its code before the speed work (tests/placement_reference.*): same decisions.
check_PROGRAMS += tests/test_placement_differential
TESTS += tests/test_placement_differential
tests_test_placement_differential_SOURCES = tests/test_placement_differential.cpp tests/placement_reference.cpp \
  tests/placement_reference.hpp
tests_test_placement_differential_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_placement_differential_LDADD = $(TESTS_LIBS)

check_PROGRAMS += tests/test_cost
TESTS += tests/test_cost
tests_test_cost_SOURCES = tests/test_cost.cpp
tests_test_cost_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_cost_LDADD = $(TESTS_LIBS)

check_PROGRAMS += tests/test_c_api
TESTS += tests/test_c_api
tests_test_c_api_SOURCES = tests/test_c_api.cpp
tests_test_c_api_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_c_api_LDADD = $(TESTS_LIBS)

check_PROGRAMS += tests/test_status
TESTS += tests/test_status
tests_test_status_SOURCES = tests/test_status.cpp
tests_test_status_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_status_LDADD = $(TESTS_LIBS)

# The select plugin's decision (corelib/select_policy.hpp) against a stand-in for cons_tres.
check_PROGRAMS += tests/test_select_policy
TESTS += tests/test_select_policy
tests_test_select_policy_SOURCES = tests/test_select_policy.cpp
tests_test_select_policy_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_select_policy_LDADD = $(TESTS_LIBS)

# corelib's named placement policies (first-fit, slurm-tree, slurm-block, topoaware)
check_PROGRAMS += tests/test_policies
TESTS += tests/test_policies
tests_test_policies_SOURCES = tests/test_policies.cpp
tests_test_policies_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_policies_LDADD = $(TESTS_LIBS)

# The same decision on other shapes: pods, rails, 4-GPU nodes, shared nodes, PP chains.
check_PROGRAMS += tests/test_select_policy_shapes
TESTS += tests/test_select_policy_shapes
tests_test_select_policy_shapes_SOURCES = tests/test_select_policy_shapes.cpp
tests_test_select_policy_shapes_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_select_policy_shapes_LDADD = $(TESTS_LIBS)
