# SPDX-License-Identifier: GPL-2.0-or-later
# Memory a topology costs where the plugins load it (C API, as slurmctld and slurmstepd call it).
noinst_PROGRAMS += bench/topology_memory
bench_topology_memory_SOURCES = bench/topology_memory.c
bench_topology_memory_CPPFLAGS = $(TA_BASE_CPPFLAGS) -I$(top_srcdir)/capi
bench_topology_memory_LDADD = capi/libtopoaware_capi.la corelib/libtopoaware_core.la
bench_topology_memory_LINK = $(CXXLINK)

# make bench-topology-memory [MEMORY_HOSTS=102400]: a generated 3-level fat tree of that many hosts
# (64 per leaf, 100 leaves per pod), loaded as slurmctld loads it.
MEMORY_HOSTS = 102400
bench-topology-memory: topoaware$(EXEEXT) bench/topology_memory$(EXEEXT)
	@set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	leaves=$$(( ($(MEMORY_HOSTS) + 6399) / 6400 * 100 )); \
	./topoaware$(EXEEXT) generate fat-tree --levels 3 --leaves $$leaves --hosts-per-leaf 64 --leaves-per-pod 100 \
	  --uplinks 16 --spines 16 --cores 64 --json "$$d/topology.json" >/dev/null; \
	echo "# $$((leaves * 64)) hosts, topology.json $$(du -m "$$d/topology.json" | cut -f1) MB"; \
	bench/topology_memory$(EXEEXT) "$$d/topology.json" $$((leaves * 64))
.PHONY: bench-topology-memory
