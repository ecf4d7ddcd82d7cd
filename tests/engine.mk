# tests: engine (layout, rank order, placement, cost model, C API)
ENGINE_TEST_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib -I$(top_srcdir)/tests
EXTRA_DIST += tests/engine_topologies.hpp

check_PROGRAMS += tests/test_layout
TESTS += tests/test_layout
tests_test_layout_SOURCES = tests/test_layout.cpp
tests_test_layout_CPPFLAGS = $(ENGINE_TEST_CPPFLAGS)
tests_test_layout_LDADD = $(TESTS_LIBS)
