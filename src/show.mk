# topoaware show (the running jobs on the fabric) and what it shares with topoaware plan (added to
# the core library).
src_libtopoaware_core_la_SOURCES += src/job_report.hpp src/job_report.cpp
src_libtopoaware_core_la_SOURCES += src/show.hpp src/show.cpp
