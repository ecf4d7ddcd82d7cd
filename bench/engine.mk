# SPDX-License-Identifier: GPL-2.0-or-later
# Engine micro benchmark: placement decision latency against node count, with first-fit beside it.
noinst_PROGRAMS += bench/placement_latency
bench_placement_latency_SOURCES = bench/placement_latency.cpp
bench_placement_latency_CXXFLAGS = $(AM_CXXFLAGS) -O2
bench_placement_latency_LDADD = corelib/libtopoaware_core.la
