# SPDX-License-Identifier: GPL-2.0-or-later
# Trace-driven placement benchmark (bench/README.md, docs/design.md): simulator library + driver.
noinst_LTLIBRARIES += bench/libtopoaware_sim.la
bench_libtopoaware_sim_la_SOURCES = bench/sim/cluster.cpp bench/sim/cluster.hpp \
	bench/sim/policies.cpp bench/sim/sim.cpp \
	bench/sim/sim.hpp bench/sim/optimum.cpp bench/sim/optimum.hpp bench/sim/replay_trace.cpp \
	bench/sim/replay_trace.hpp
bench_libtopoaware_sim_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/bench/sim
bench_libtopoaware_sim_la_CXXFLAGS = $(AM_CXXFLAGS) -O2
noinst_PROGRAMS += bench/placement_sim
bench_placement_sim_SOURCES = bench/sim/main.cpp
bench_placement_sim_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/bench/sim -I$(top_srcdir)/bench/netsim
bench_placement_sim_CXXFLAGS = $(AM_CXXFLAGS) -O2
bench_placement_sim_LDADD = bench/libtopoaware_sim.la discovery/libtopoaware_discovery.la corelib/libtopoaware_core.la
EXTRA_DIST += bench/run-placement-bench.sh bench/README.md bench/RESULTS.md
