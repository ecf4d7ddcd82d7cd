# SPDX-License-Identifier: GPL-2.0-or-later
# benchmarks: live discovery speed (walk_fabric vs ibnetdiscover under ibsim). Needs root and ibsim;
# run with `make bench-discovery` (builds tests/walk_dump and topoaware first).
dist_noinst_SCRIPTS += bench/discovery_speed.sh

bench-discovery: tests/walk_dump$(EXEEXT) topoaware$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' bash $(abs_top_srcdir)/bench/discovery_speed.sh
.PHONY: bench-discovery

# Parse speed of a 10,240-host dump (no root needed).
dist_noinst_SCRIPTS += bench/parse_speed.sh
bench-parse: topoaware$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' bash $(abs_top_srcdir)/bench/parse_speed.sh
.PHONY: bench-parse

# Reading every switch port's counters (topoaware monitor) on a 10,000-host fabric under ibsim, by
# the number of queries in flight. Needs root and ibsim.
dist_noinst_SCRIPTS += bench/monitor_speed.sh
bench-monitor: topoaware$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' bash $(abs_top_srcdir)/bench/monitor_speed.sh
.PHONY: bench-monitor
