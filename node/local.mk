# SPDX-License-Identifier: GPL-2.0-or-later
# node/: what runs on compute nodes, inside slurmstepd for spank_topoaware: the node's GPUs and NICs
# through hwloc, the task plan (coordinates and environment of one task, the job's hostfile and
# rank map; C API capi/task_c.h), spank_topoaware's plugstack.conf arguments (task_c.h) and the
# per-job folders and hash files (capi/job_dir_c.h). No libibnetdisc.
noinst_LTLIBRARIES += node/libtopoaware_node.la
node_libtopoaware_node_la_SOURCES = \
  node/hwloc_probe.hpp node/hwloc_probe.cpp node/devices_cache.hpp node/devices_cache.cpp \
  node/task_c.cpp node/spank_args.cpp node/job_dir.cpp node/job_hash.cpp
node_libtopoaware_node_la_CPPFLAGS = $(TA_BASE_CPPFLAGS) $(TA_CORE_INCLUDES) -I$(top_srcdir)/node \
  -I$(top_srcdir)/capi $(HWLOC_CFLAGS)
node_libtopoaware_node_la_LIBADD = $(HWLOC_LIBS)
