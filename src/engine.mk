# Placement engine, layouts, rank order and cost model (added to the core library).
src_libtopoaware_core_la_SOURCES += \
  src/layout.hpp src/layout.cpp \
  src/rank_order.hpp src/rank_order.cpp
src_libtopoaware_core_la_SOURCES += src/placement.hpp src/placement.cpp
src_libtopoaware_core_la_SOURCES += src/cost.hpp src/cost.cpp
src_libtopoaware_core_la_SOURCES += src/topoaware_c.h src/c_api.cpp src/c_api_util.hpp
src_libtopoaware_core_la_SOURCES += src/status.hpp src/status.cpp src/status_c.h src/status_c.cpp
