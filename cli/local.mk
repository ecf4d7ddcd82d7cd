# The topoaware command: discovery, outputs, plan and show (cli/), over discovery/, report/ and corelib/.
bin_PROGRAMS += topoaware
topoaware_SOURCES = cli/main.cpp cli/cli_commands.hpp cli/svg.cpp cli/plan.cpp cli/show.cpp cli/diff.cpp cli/metrics.cpp
topoaware_CPPFLAGS = $(TA_BASE_CPPFLAGS) $(TA_CORE_INCLUDES) -I$(top_srcdir)/report -I$(top_srcdir)/discovery \
  $(IBNETDISC_CFLAGS) $(FMT_CFLAGS)
topoaware_LDADD = discovery/libtopoaware_discovery.la report/libtopoaware_report.la corelib/libtopoaware_core.la \
  $(FMT_LIBS)
