# SPDX-License-Identifier: GPL-2.0-or-later
# benchmarks (bench/)
include bench/engine.mk
include bench/memory.mk
include bench/sim.mk
include bench/discovery.mk
include bench/slurm.mk
include bench/netsim/local.mk
