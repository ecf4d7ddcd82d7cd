# SPDX-License-Identifier: GPL-2.0-or-later
# report/: what only the command shows: the summary, DOT/SVG, Slurm topology.conf (tree and block),
# the per-job report shared by `topoaware plan` and `show`, and `show` itself. Uses corelib/ and fmt.
noinst_LTLIBRARIES += report/libtopoaware_report.la
report_libtopoaware_report_la_SOURCES = \
  report/outputs.hpp report/topology_conf.cpp report/topology_yaml.cpp report/dot.cpp report/summary.cpp \
  report/job_report.hpp report/job_report.cpp \
  report/show.hpp report/show_model.hpp report/show_model.cpp report/show_format.hpp report/show_format.cpp \
  report/show_text.cpp report/show_json.cpp report/show_dot.cpp report/metrics.hpp report/metrics.cpp \
  report/defrag.hpp report/defrag.cpp report/congestion_out.hpp report/congestion_out.cpp
report_libtopoaware_report_la_CPPFLAGS = $(TA_BASE_CPPFLAGS) $(TA_CORE_INCLUDES) -I$(top_srcdir)/report $(FMT_CFLAGS)
report_libtopoaware_report_la_LIBADD = $(FMT_LIBS)
