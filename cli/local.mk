# The topoaware command.
bin_PROGRAMS += topoaware
topoaware_SOURCES = cli/main.cpp cli/cli_commands.hpp cli/svg.cpp cli/plan.cpp cli/show.cpp
topoaware_CPPFLAGS = $(AM_CPPFLAGS) $(IBNETDISC_CFLAGS) $(FMT_CFLAGS)
topoaware_LDADD = topology/libtopoaware_discovery.la src/libtopoaware_core.la $(FMT_LIBS)
