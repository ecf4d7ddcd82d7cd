# SPDX-License-Identifier: GPL-2.0-or-later
# The topoaware command (cli/): discover, convert, generate, plan, show, metrics, monitor, diff, node and defrag, over
# discovery/, report/, corelib/ and (node: the node's GPUs and NICs, the task plan) node/ and capi/.
bin_PROGRAMS += topoaware
topoaware_SOURCES = cli/main.cpp cli/cli_commands.hpp cli/svg.cpp cli/plan.cpp cli/show.cpp cli/diff.cpp cli/route.cpp \
  cli/metrics.cpp cli/node.cpp cli/defrag.cpp cli/defrag_parse.hpp cli/defrag_parse.cpp cli/nvml_probe.cpp \
  cli/monitor.cpp
topoaware_CPPFLAGS = $(TA_BASE_CPPFLAGS) $(TA_CORE_INCLUDES) -I$(top_srcdir)/report -I$(top_srcdir)/discovery \
  -I$(top_srcdir)/node -I$(top_srcdir)/capi $(IBNETDISC_CFLAGS) $(FMT_CFLAGS)
topoaware_LDADD = discovery/libtopoaware_discovery.la report/libtopoaware_report.la node/libtopoaware_node.la \
  capi/libtopoaware_capi.la corelib/libtopoaware_core.la $(FMT_LIBS) -ldl
