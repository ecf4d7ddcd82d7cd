# SPDX-License-Identifier: GPL-2.0-or-later
# Network judge (docs/design.md "How placement is judged"): SimGrid flow-level simulation of a snapshot of
# running jobs on the fabric of topology.json. Built only when configure finds SimGrid >= 3.32.
EXTRA_DIST += bench/netsim/README.md
# Which jobs are MoE and their ep: drawn by the simulator (bench/sim) with its workload, read by the judge.
EXTRA_DIST += bench/netsim/moe_draw.hpp
# A routed topology.json (OpenSM's tables under ibsim) for a generated fabric, for netsim's as-routed mode.
dist_noinst_SCRIPTS += bench/netsim/routes.sh
if HAVE_SIMGRID
noinst_PROGRAMS += bench/netsim/netsim
bench_netsim_netsim_SOURCES = bench/netsim/netsim.cpp bench/netsim/model.cpp bench/netsim/model.hpp
bench_netsim_netsim_CPPFLAGS = $(AM_CPPFLAGS) $(SIMGRID_CFLAGS)
bench_netsim_netsim_CXXFLAGS = $(AM_CXXFLAGS) -O2
bench_netsim_netsim_LDADD = corelib/libtopoaware_core.la $(SIMGRID_LIBS)
endif
# The network judge's tests are registered in every build: they skip (77) when configure did not find SimGrid.
TESTS += tests/test_netsim.sh tests/test_netsim_report.sh tests/test_replay_judge.sh
EXTRA_DIST += tests/test_netsim.sh tests/test_netsim_report.sh tests/test_replay_judge.sh
# The network judge over the trace simulator's snapshots, per policy and fabric family
# (bench/README.md, bench/RESULTS.md); opt-in, never part of `make check`.
# `make bench-netsim BENCH_NETSIM_ARGS="--seeds 3"`, `BENCH_NETSIM_ARGS=--target` for the full size.
dist_noinst_SCRIPTS += bench/netsim_report.sh
EXTRA_DIST += bench/netsim_report.py bench/netsim_spread.py bench/netsim_losers.py bench/netsim_order_only.py
if HAVE_SIMGRID
bench-netsim: bench/placement_sim$(EXEEXT) bench/netsim/netsim$(EXEEXT)
	top_builddir='$(abs_top_builddir)' bash $(abs_top_srcdir)/bench/netsim_report.sh $(BENCH_NETSIM_ARGS)
else
bench-netsim:
	@echo "bench-netsim: configure did not find SimGrid >= 3.32 (Debian libsimgrid-dev)"; exit 1
endif
# The NVL72 family (bench/RESULTS.md, "Do NVLink domains need placement?"): about 5 min.
if HAVE_SIMGRID
bench-nvl72: bench/placement_sim$(EXEEXT) bench/netsim/netsim$(EXEEXT)
	top_builddir='$(abs_top_builddir)' bash $(abs_top_srcdir)/bench/netsim_report.sh --nvl72 --parallel 2 \
	  --out '$(abs_top_builddir)/bench/nvl72-results' $(BENCH_NETSIM_ARGS)
else
bench-nvl72:
	@echo "bench-nvl72: configure did not find SimGrid >= 3.32 (Debian libsimgrid-dev)"; exit 1
endif
.PHONY: bench-netsim bench-nvl72
