# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark through real slurmctld: the same synthetic trace replayed on a
# localhost cluster of 64 slurmd (8 leaves x 8, 8 GPUs each) under stock select/cons_tres +
# topology/tree, select/cons_tres_topoaware and select/cons_tres_passthrough; allocations scored
# with `topoaware plan`, stock decisions checked against the simulator's Slurm tree replica,
# select_p_job_test time per call compared (bench/README.md; results in bench/RESULTS.md).
# Needs root, Debian's slurmctld/slurmd and the select plugins (configure --with-slurm-source).
# Opt-in, about 20 minutes: `make bench-slurm` (never part of `make check`);
# `make bench-slurm BENCH_SLURM_ARGS=--quick` for a short smoke run.
noinst_PROGRAMS += bench/slurm_replay_tool
bench_slurm_replay_tool_SOURCES = bench/slurm_replay/replay_tool.cpp
bench_slurm_replay_tool_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/bench/sim
bench_slurm_replay_tool_CXXFLAGS = $(AM_CXXFLAGS) -O2
bench_slurm_replay_tool_LDADD = bench/libtopoaware_sim.la discovery/libtopoaware_discovery.la \
  corelib/libtopoaware_core.la
dist_noinst_SCRIPTS += bench/slurm_replay.sh
EXTRA_DIST += bench/slurm_replay/analyze.py

bench-slurm: topoaware$(EXEEXT) bench/slurm_replay_tool$(EXEEXT) bench/placement_latency$(EXEEXT) \
	$(taselect_LTLIBRARIES) $(slurmplugin_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  bash $(abs_top_srcdir)/bench/slurm_replay.sh $(BENCH_SLURM_ARGS)
.PHONY: bench-slurm

# What spank_topoaware adds to a step's launch (plain, --nccl-hints=off, hints) on 8 localhost
# slurmd; prints medians, spreads and ratios (bench/README.md, bench/RESULTS.md). Root; `make bench-step-launch`.
dist_noinst_SCRIPTS += bench/step_launch.sh
bench-step-launch: topoaware$(EXEEXT) $(slurmplugin_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  bash $(abs_top_srcdir)/bench/step_launch.sh $(BENCH_STEP_ARGS)
.PHONY: bench-step-launch

# What a SPANK job prolog/epilog costs each node of every job (`slurmstepd spank prolog|epilog`): no
# SPANK plugin, an empty one, spank_topoaware, on 16 localhost slurmd; CPU ms per node per job
# (bench/README.md, bench/RESULTS.md). Root; `make bench-spank-cost BENCH_SPANK_COST_ARGS="--repeat 3"`.
dist_noinst_SCRIPTS += bench/spank_prolog_cost.sh
bench-spank-cost: $(slurmplugin_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  bash $(abs_top_srcdir)/bench/spank_prolog_cost.sh $(BENCH_SPANK_COST_ARGS)
.PHONY: bench-spank-cost

# What a large topology costs slurmctld at scontrol reconfigure (reconfigure time, slowest squeue
# meanwhile, time until the topology is in), against another build and the pass-through
# (bench/README.md, bench/RESULTS.md). Root; `make bench-topology-reload BENCH_RELOAD_ARGS="--hosts N"`.
dist_noinst_SCRIPTS += bench/topology_reload.sh
bench-topology-reload: topoaware$(EXEEXT) $(taselect_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  bash $(abs_top_srcdir)/bench/topology_reload.sh $(BENCH_RELOAD_ARGS)
.PHONY: bench-topology-reload

# A deep queue (10,000 jobs by default) through real slurmctld: all complete; sdiag cycle times
# against the pass-through (bench/README.md, bench/RESULTS.md). Root; `make bench-queue-load BENCH_QUEUE_ARGS="--runs 3"`.
dist_noinst_SCRIPTS += bench/queue_load.sh
bench-queue-load: topoaware$(EXEEXT) $(taselect_LTLIBRARIES) $(slurmplugin_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  bash $(abs_top_srcdir)/bench/queue_load.sh $(BENCH_QUEUE_ARGS)
.PHONY: bench-queue-load

# Faults on the whole install (64 localhost slurmd): slurmctld killed -9 in a burst of layout
# submissions, a slurmd killed under a running job, a truncated then a new topology with 1,000 jobs
# pending, discovery while ibsim cables flap; a table, exit 1 if an invariant fails (bench/README.md,
# bench/RESULTS.md). Root, ibsim for the last; `make bench-fault BENCH_FAULT_ARGS="--only a,c"`.
dist_noinst_SCRIPTS += bench/fault_run.sh
bench-fault: topoaware$(EXEEXT) $(taselect_LTLIBRARIES) $(slurmplugin_LTLIBRARIES)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  bash $(abs_top_srcdir)/bench/fault_run.sh $(BENCH_FAULT_ARGS)
.PHONY: bench-fault
