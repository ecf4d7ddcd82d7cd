# Task-side library for spank_topoaware: the node's GPUs and NICs through hwloc
# (topology/hwloc_probe), the task plan (src/task_c: coordinates and environment of one task, the
# job's hostfile and rank map) and the per-job folders on the nodes (src/job_dir_c.h).
# No libibnetdisc: the SPANK plugin links this and the core only.
noinst_LTLIBRARIES += topology/libtopoaware_task.la
topology_libtopoaware_task_la_SOURCES = \
  topology/hwloc_probe.hpp topology/hwloc_probe.cpp \
  src/task_c.h src/task_c.cpp \
  src/job_dir_c.h src/job_dir.cpp
topology_libtopoaware_task_la_CPPFLAGS = $(AM_CPPFLAGS) $(HWLOC_CFLAGS) -I$(top_srcdir)/src -I$(top_srcdir)/topology
# The core (src/libtopoaware_core.la) is linked by the users of this library, not embedded here.
topology_libtopoaware_task_la_LIBADD = $(HWLOC_LIBS)
