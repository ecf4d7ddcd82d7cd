# SPDX-License-Identifier: GPL-2.0-or-later
# tests: decisions as data. tests/decisions/<fabric>.requests (recorded dumps of tests/fixtures/ib
# and generated fabrics) and the .expected decisions beside them: placement and rank order of the
# select decision (corelib/select_policy.hpp), compared by tests/check_decisions.sh. After an intended
# change of decisions, `make regen-decisions` rewrites the .expected files (review the diff).
check_PROGRAMS += tests/decision_run
tests_decision_run_SOURCES = tests/decision_run.cpp
tests_decision_run_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_decision_run_LDADD = corelib/libtopoaware_core.la

TESTS += tests/check_decisions.sh
EXTRA_DIST += tests/decisions tests/check_decisions.sh

regen-decisions: topoaware$(EXEEXT) tests/decision_run$(EXEEXT)
	TOPOAWARE_UPDATE_DECISIONS=yes top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  bash $(abs_top_srcdir)/tests/check_decisions.sh
.PHONY: regen-decisions
