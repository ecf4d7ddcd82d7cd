# The core library: no Slurm, no libibnetdisc. Linked into the command, the plugins and the tests
# (a libtool convenience library, so it is built position-independent for the plugins).
noinst_LTLIBRARIES += src/libtopoaware_core.la
src_libtopoaware_core_la_SOURCES = \
  src/fabric.hpp src/fabric.cpp \
  src/topology.hpp src/classify.cpp \
  src/topology_json.hpp src/topology_json.cpp \
  src/hostlist.hpp src/hostlist.cpp \
  src/outputs.hpp src/topology_conf.cpp src/dot.cpp src/summary.cpp
src_libtopoaware_core_la_CPPFLAGS = $(AM_CPPFLAGS) $(FMT_CFLAGS) $(CRYPTO_CFLAGS)
src_libtopoaware_core_la_LIBADD = $(FMT_LIBS) $(CRYPTO_LIBS)

include src/engine.mk
include src/show.mk
