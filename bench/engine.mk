# SPDX-License-Identifier: GPL-2.0-or-later
# Engine micro benchmark: placement decision latency against node count, with first-fit beside it.
noinst_PROGRAMS += bench/placement_latency
bench_placement_latency_SOURCES = bench/placement_latency.cpp
bench_placement_latency_CXXFLAGS = $(AM_CXXFLAGS) -O2
bench_placement_latency_LDADD = corelib/libtopoaware_core.la
# What the select plugin does under a lock job_test waits on: the status writer's hand-over and a
# job's node order, before and now.
noinst_PROGRAMS += bench/lock_hold
bench_lock_hold_SOURCES = bench/lock_hold.cpp plugins/common/ta_order_join.h plugins/common/ta_order_join.c
bench_lock_hold_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common
bench_lock_hold_CFLAGS = $(AM_CFLAGS) -O2
bench_lock_hold_CXXFLAGS = $(AM_CXXFLAGS) -O2
bench_lock_hold_LDADD = corelib/libtopoaware_core.la
