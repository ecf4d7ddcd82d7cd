# SPDX-License-Identifier: GPL-2.0-or-later
# tests: golden files. Every recorded fabric in tests/fixtures/ib has its topoaware outputs in
# tests/golden/ib (<dump>.topology.json, .summary, .tree.conf, .block.conf, or <dump>.error when
# the command refuses it), every recorded node in tests/fixtures/hwloc its GPU/NIC pairs in
# tests/golden/hwloc/<name>.pairs; tests/golden.sh regenerates them all and diffs.
# After an intended change of the outputs, `make regen-golden` rewrites the golden files (review
# the diff before committing it).
# golden_node_pairs prints what node/hwloc_probe finds in one XML in a stable text form.
check_PROGRAMS += tests/golden_node_pairs
tests_golden_node_pairs_SOURCES = tests/golden_node_pairs.cpp
tests_golden_node_pairs_CPPFLAGS = $(TESTS_CPPFLAGS) $(HWLOC_CFLAGS)
tests_golden_node_pairs_LDADD = node/libtopoaware_node.la capi/libtopoaware_capi.la corelib/libtopoaware_core.la \
  $(HWLOC_LIBS)

TESTS += tests/golden.sh
# The two folders, not tests/golden itself: make would take that name for a program to build from
# tests/golden.sh with its built-in %: %.sh rule whenever golden.sh is newer than the folder.
EXTRA_DIST += tests/golden/ib tests/golden/hwloc tests/golden.sh

regen-golden: topoaware$(EXEEXT) tests/golden_node_pairs$(EXEEXT)
	TOPOAWARE_REGEN_GOLDEN=yes top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  bash $(abs_top_srcdir)/tests/golden.sh
.PHONY: regen-golden
