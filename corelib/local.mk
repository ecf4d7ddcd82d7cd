# SPDX-License-Identifier: GPL-2.0-or-later
# core/: the model and every decision: the switch graph and its classification, topology.json,
# host lists, layouts, rank order, the placement engine, the cost model, defrag's plan, topoaware.conf, the
# status book, spank_topoaware's plugstack.conf arguments and hash file. Pure C++17: no Slurm, no
# hwloc, no libibnetdisc, no formatting library; OpenSSL's libcrypto only for the topology hash
# (SHA-256). Everything else in the tree links it.
noinst_LTLIBRARIES += corelib/libtopoaware_core.la
corelib_libtopoaware_core_la_SOURCES = \
  corelib/fabric.hpp corelib/fabric.cpp \
  corelib/topology.hpp corelib/classify.cpp \
  corelib/topology_json.hpp corelib/topology_json.cpp \
  corelib/nvlink.hpp corelib/nvlink.cpp \
  corelib/topology_diff.hpp corelib/topology_diff.cpp \
  corelib/routes.hpp corelib/routes.cpp \
  corelib/route_trace.hpp corelib/route_trace.cpp \
  corelib/port_counters.hpp corelib/port_counters.cpp \
  corelib/hostlist.hpp corelib/hostlist.cpp \
  corelib/layout.hpp corelib/layout.cpp \
  corelib/rank_order.hpp corelib/rank_order.cpp \
  corelib/placement.hpp corelib/placement.cpp \
  corelib/policies.hpp corelib/policies.cpp corelib/slurm_tree.cpp corelib/slurm_block.cpp \
  corelib/select_policy.hpp corelib/select_policy.cpp \
  corelib/part_topology.hpp corelib/part_topology.cpp \
  corelib/cost.hpp corelib/cost.cpp \
  corelib/defrag_plan.hpp corelib/defrag_plan.cpp \
  corelib/traffic.hpp corelib/traffic.cpp \
  corelib/congestion.hpp corelib/congestion.cpp \
  corelib/config.hpp corelib/config.cpp \
  corelib/status.hpp corelib/status.cpp \
  corelib/safe_folder.hpp corelib/safe_folder.cpp \
  corelib/file_read.hpp corelib/file_read.cpp \
  corelib/text.hpp corelib/text.cpp \
  corelib/spank_settings.hpp corelib/spank_settings.cpp
corelib_libtopoaware_core_la_CPPFLAGS = $(TA_BASE_CPPFLAGS) $(TA_CORE_INCLUDES) $(CRYPTO_CFLAGS)
corelib_libtopoaware_core_la_LIBADD = $(CRYPTO_LIBS)
