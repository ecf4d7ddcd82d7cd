# SPDX-License-Identifier: GPL-2.0-or-later
# tests: parser
# Unit tests of the ibnetdiscover parser and the node-name map (fixtures in tests/fixtures/ib and
# tests/fixtures/bad).
check_PROGRAMS += tests/test_parser
TESTS += tests/test_parser
tests_test_parser_SOURCES = tests/test_parser.cpp
tests_test_parser_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_parser_LDADD = $(TESTS_LIBS)

# Its libFuzzer target (tests/fuzz/fuzz_ibnetdiscover.cpp) is built by `make fuzz` (tests/fuzz/local.mk).
