# SPDX-License-Identifier: GPL-2.0-or-later
# tests/fuzz/: libFuzzer targets, one per parser that reads outside input (see tests/fuzz/FUZZING.md).
# Built with clang (-fsanitize=fuzzer,address,undefined) by `make fuzz` only: never by `make all`,
# `make check` or `make distcheck` (their sources are distributed, their binaries never built there).
# The library sources they need are compiled again here with the sanitizers and libFuzzer's coverage
# instrumentation, into tests/fuzz/obj/ (the normal build's objects have neither).
#   make fuzz                       build every target (tests/fuzz/fuzz_<name>)
#   make fuzz-smoke [FUZZ_SECONDS=60]   build, then run each for FUZZ_SECONDS (tests/fuzz/run-fuzz.sh)
# FUZZ_CXX and FUZZ_CC name the compilers (default clang++ and clang: Debian's clang and
# libclang-rt-14-dev packages, in tools/setup.sh's list).
FUZZ_CXX = clang++
FUZZ_CC = clang
FUZZ_SECONDS = 60
FUZZ_NAMES = ibnetdiscover topology_json config options status hostlist lft_dump gres task placement nvlink
FUZZ_BINS = tests/fuzz/fuzz_ibnetdiscover tests/fuzz/fuzz_topology_json tests/fuzz/fuzz_config \
  tests/fuzz/fuzz_options tests/fuzz/fuzz_status tests/fuzz/fuzz_hostlist tests/fuzz/fuzz_lft_dump \
  tests/fuzz/fuzz_gres tests/fuzz/fuzz_task tests/fuzz/fuzz_placement tests/fuzz/fuzz_nvlink
FUZZ_OBJDIR = tests/fuzz/obj
# Objects: -fsanitize=fuzzer-no-link instruments for coverage without libFuzzer's main().
FUZZ_SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CPPOPTS = -I$(top_builddir) -I$(top_srcdir)/corelib -I$(top_srcdir)/capi -I$(top_srcdir)/discovery \
  -I$(top_srcdir)/plugins/common -I$(top_srcdir)/node -I$(top_srcdir)/tests/fuzz -I$(top_srcdir)/tests \
  -D_GLIBCXX_ASSERTIONS -DFUZZ_TOP_SRCDIR='"$(abs_top_srcdir)"' $(CRYPTO_CFLAGS) $(HWLOC_CFLAGS)
FUZZ_COMMON_OPTS = -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SANITIZE)
FUZZ_CXXOPTS = -std=c++17 $(FUZZ_COMMON_OPTS)
FUZZ_COPTS = -std=gnu11 $(FUZZ_COMMON_OPTS)
FUZZ_LINKOPTS = -fsanitize=fuzzer $(FUZZ_SANITIZE)
FUZZ_LINKLIBS = $(CRYPTO_LIBS) $(HWLOC_LIBS)

# What the targets reach: the core (all of it, from corelib/local.mk's list), the C API the plugins
# call, the ibnetdiscover parser, the plugins' plain-C environment and TRES readers, and what
# spank_topoaware runs in slurmstepd (node/: the task plan, the job's placement file, hwloc).
FUZZ_LIB_CXX_SRCS = $(filter %.cpp,$(corelib_libtopoaware_core_la_SOURCES)) \
  capi/layout_c.cpp capi/c_api.cpp capi/status_c.cpp \
  discovery/ibnetdiscover_parser.cpp discovery/lft_dump.cpp discovery/generator.cpp \
  $(filter %.cpp,$(node_libtopoaware_node_la_SOURCES))
FUZZ_LIB_C_SRCS = plugins/common/ta_env.c plugins/common/ta_gres.c
FUZZ_LIB_OBJS = $(FUZZ_LIB_CXX_SRCS:%.cpp=$(FUZZ_OBJDIR)/%.o) $(FUZZ_LIB_C_SRCS:%.c=$(FUZZ_OBJDIR)/%.o)
FUZZ_LIB = $(FUZZ_OBJDIR)/libtopoaware_fuzz.a
# Every header they may include: a changed header rebuilds everything (coarse, but always right).
FUZZ_HDRS = $(wildcard $(top_srcdir)/corelib/*.hpp $(top_srcdir)/capi/*.h $(top_srcdir)/capi/*.hpp \
  $(top_srcdir)/discovery/ibnetdiscover_parser.hpp $(top_srcdir)/discovery/lft_dump.hpp \
  $(top_srcdir)/discovery/generator.hpp $(top_srcdir)/plugins/common/ta_env.h \
  $(top_srcdir)/plugins/common/ta_gres.h $(top_srcdir)/node/*.hpp \
  $(top_srcdir)/tests/fuzz/*.hpp $(top_srcdir)/tests/empty_leaf.hpp)

fuzz:
	@command -v '$(FUZZ_CXX)' >/dev/null 2>&1 && command -v '$(FUZZ_CC)' >/dev/null 2>&1 || { \
	  echo "make fuzz: $(FUZZ_CXX) or $(FUZZ_CC) not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2; \
	  exit 1; }
	@$(MAKE) $(AM_MAKEFLAGS) $(FUZZ_BINS)

fuzz-smoke: fuzz
	bash $(top_srcdir)/tests/fuzz/run-fuzz.sh --build-dir '$(abs_top_builddir)' --smoke $(FUZZ_SECONDS)

$(FUZZ_OBJDIR)/%.o: $(top_srcdir)/%.cpp $(FUZZ_HDRS)
	@$(MKDIR_P) $(@D)
	$(AM_V_CXX)$(FUZZ_CXX) $(FUZZ_CPPOPTS) $(FUZZ_CXXOPTS) -c -o $@ $<

$(FUZZ_OBJDIR)/%.o: $(top_srcdir)/%.c $(FUZZ_HDRS)
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CPPOPTS) $(FUZZ_COPTS) -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	$(AM_V_AR)rm -f $@ && $(AR) cr $@ $(FUZZ_LIB_OBJS)

# A target's own link options, FUZZ_LINK_<name>. task keeps the generated topology parsed across
# inputs (its file never changes): it wraps the C API's load and free (see fuzz_task.cpp).
FUZZ_LINK_task = -Wl,--wrap=topoaware_topo_load,--wrap=topoaware_topo_free

tests/fuzz/fuzz_%: $(FUZZ_OBJDIR)/tests/fuzz/fuzz_%.o $(FUZZ_LIB)
	$(AM_V_CXXLD)$(FUZZ_CXX) $(FUZZ_LINKOPTS) $(FUZZ_LINK_$*) -o $@ $< $(FUZZ_LIB) $(FUZZ_LINKLIBS)

fuzz-clean:
	rm -rf $(FUZZ_OBJDIR) $(FUZZ_BINS)
clean-local: fuzz-clean
.PHONY: fuzz fuzz-smoke fuzz-clean

EXTRA_DIST += tests/fuzz/FUZZING.md tests/fuzz/ledger.tsv tests/fuzz/corpus-coverage.tsv tests/fuzz/run-fuzz.sh tests/fuzz/fuzz_common.hpp \
  tests/fuzz/fuzz_ibnetdiscover.cpp tests/fuzz/fuzz_topology_json.cpp tests/fuzz/fuzz_config.cpp \
  tests/fuzz/fuzz_options.cpp tests/fuzz/fuzz_status.cpp tests/fuzz/fuzz_hostlist.cpp tests/fuzz/fuzz_lft_dump.cpp \
  tests/fuzz/fuzz_gres.cpp tests/fuzz/fuzz_task.cpp tests/fuzz/fuzz_placement.cpp tests/fuzz/fuzz_nvlink.cpp tests/fuzz/corpus \
  tests/fuzz/dict tests/fuzz/seeds tests/fuzz/regressions
