# core/: the model and every decision: the switch graph and its classification, topology.json,
# host lists, layouts, rank order, the placement engine, the cost model, topoaware.conf and the
# status book. Pure C++17: no Slurm, no hwloc, no libibnetdisc, no formatting library; OpenSSL's
# libcrypto only for the topology hash (SHA-256). Everything else in the tree links it.
noinst_LTLIBRARIES += core/libtopoaware_core.la
core_libtopoaware_core_la_SOURCES = \
  core/fabric.hpp core/fabric.cpp \
  core/topology.hpp core/classify.cpp \
  core/topology_json.hpp core/topology_json.cpp \
  core/hostlist.hpp core/hostlist.cpp \
  core/layout.hpp core/layout.cpp \
  core/rank_order.hpp core/rank_order.cpp \
  core/placement.hpp core/placement.cpp \
  core/select_policy.hpp core/select_policy.cpp \
  core/cost.hpp core/cost.cpp \
  core/config.hpp core/config.cpp \
  core/status.hpp core/status.cpp \
  core/text.hpp core/text.cpp
core_libtopoaware_core_la_CPPFLAGS = $(TA_BASE_CPPFLAGS) $(TA_CORE_INCLUDES) $(CRYPTO_CFLAGS)
core_libtopoaware_core_la_LIBADD = $(CRYPTO_LIBS)
