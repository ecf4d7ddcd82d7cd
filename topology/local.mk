# Discovery: dump parser, node-name map, live libibnetdisc walk, fabric generators.
noinst_LTLIBRARIES += topology/libtopoaware_discovery.la
topology_libtopoaware_discovery_la_SOURCES = \
  topology/ibnetdiscover_parser.hpp topology/ibnetdiscover_parser.cpp \
  topology/node_name_map.hpp topology/node_name_map.cpp \
  topology/ibnd_walk.hpp topology/ibnd_walk.cpp \
  topology/generator.hpp topology/generator.cpp
topology_libtopoaware_discovery_la_CPPFLAGS = $(AM_CPPFLAGS) $(IBNETDISC_CFLAGS) $(FMT_CFLAGS)
topology_libtopoaware_discovery_la_LIBADD = src/libtopoaware_core.la $(IBNETDISC_LIBS) $(FMT_LIBS) -lpthread
include topology/hwloc.mk
