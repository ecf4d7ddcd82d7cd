# SPDX-License-Identifier: GPL-2.0-or-later
# capi/: the C boundary the plugins call (Slurm's headers need C). One header per audience:
#   layout_c.h    the layout options, topoaware.conf and default paths (all three plugins)
#   topoaware_c.h the topology, the placement engine and the rank order (select; spank via node/)
#   status_c.h    the status book and file (select)
#   part_topo_c.h the partitions' Slurm topologies against topology.json (select, Slurm 25.05+)
#   task_c.h, job_dir_c.h  the task plan and job folders (spank; implemented in node/)
# c_api_util.hpp is the one place where C++ exceptions become C error codes and messages.
noinst_LTLIBRARIES += capi/libtopoaware_capi.la
capi_libtopoaware_capi_la_SOURCES = \
  capi/c_api_util.hpp \
  capi/layout_c.h capi/layout_c.cpp \
  capi/topoaware_c.h capi/c_api.cpp \
  capi/status_c.h capi/status_c.cpp \
  capi/part_topo_c.h capi/part_topo_c.cpp \
  capi/task_c.h capi/job_dir_c.h
capi_libtopoaware_capi_la_CPPFLAGS = $(TA_BASE_CPPFLAGS) $(TA_CORE_INCLUDES) -I$(top_srcdir)/capi
