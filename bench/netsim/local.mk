# Network judge (DESIGN.md "Judging placement"): SimGrid flow-level simulation of a snapshot of
# running jobs on the fabric of topology.json. Built only when configure finds SimGrid >= 3.32.
EXTRA_DIST += bench/netsim/README.md
if HAVE_SIMGRID
noinst_PROGRAMS += bench/netsim/netsim
bench_netsim_netsim_SOURCES = bench/netsim/netsim.cpp bench/netsim/model.cpp bench/netsim/model.hpp
bench_netsim_netsim_CPPFLAGS = $(AM_CPPFLAGS) $(SIMGRID_CFLAGS)
bench_netsim_netsim_CXXFLAGS = $(AM_CXXFLAGS) -O2
bench_netsim_netsim_LDADD = corelib/libtopoaware_core.la $(SIMGRID_LIBS)
endif
# tests/test_netsim.sh is registered in every build: it skips (77) when configure did not find SimGrid.
TESTS += tests/test_netsim.sh
EXTRA_DIST += tests/test_netsim.sh
