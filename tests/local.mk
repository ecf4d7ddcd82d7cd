# SPDX-License-Identifier: GPL-2.0-or-later
# Unit tests (CMocka, C++) and integration tests (bash; exit 77 = skipped, with the reason printed).
TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = bash
TESTS_CPPFLAGS = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS) -DTEST_FIXTURES='"$(abs_top_srcdir)/tests/fixtures"'
TESTS_LIBS = discovery/libtopoaware_discovery.la report/libtopoaware_report.la capi/libtopoaware_capi.la \
  corelib/libtopoaware_core.la $(FMT_LIBS) $(CMOCKA_LIBS)
EXTRA_DIST += tests/fixtures tests/lib

include tests/core.mk
include tests/parser.mk
include tests/outputs.mk
include tests/generator.mk
include tests/discovery.mk
include tests/engine.mk
include tests/slurm.mk
include tests/plugins.mk
include tests/bench.mk
include tests/select.mk
include tests/hwloc.mk
include tests/spank.mk
include tests/select_cluster.mk
include tests/show.mk
include tests/defrag.mk
include tests/demo.mk
include tests/golden.mk
include tests/decisions.mk
include tests/deb.mk
include tests/fuzz/local.mk
