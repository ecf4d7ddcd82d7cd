# SPDX-License-Identifier: GPL-2.0-or-later
# discovery/: where a fabric comes from: the ibnetdiscover text parser, node-name maps, the live
# libibnetdisc walk (and its cache), and the fabric generators of tests and benchmarks.
noinst_LTLIBRARIES += discovery/libtopoaware_discovery.la
discovery_libtopoaware_discovery_la_SOURCES = \
  discovery/ibnetdiscover_parser.hpp discovery/ibnetdiscover_parser.cpp \
  discovery/node_name_map.hpp discovery/node_name_map.cpp \
  discovery/ibnd_walk.hpp discovery/ibnd_walk.cpp \
  discovery/lft_dump.hpp discovery/lft_dump.cpp \
  discovery/pma_sampler.hpp discovery/pma_sampler.cpp \
  discovery/generator.hpp discovery/generator.cpp
discovery_libtopoaware_discovery_la_CPPFLAGS = $(TA_BASE_CPPFLAGS) $(TA_CORE_INCLUDES) -I$(top_srcdir)/discovery \
  $(IBNETDISC_CFLAGS)
discovery_libtopoaware_discovery_la_LIBADD = $(IBNETDISC_LIBS) -lpthread
