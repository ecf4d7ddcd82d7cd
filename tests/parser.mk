# tests: parser
# Unit tests of the ibnetdiscover parser and the node-name map (fixtures in tests/fixtures/ib and
# tests/fixtures/bad).
check_PROGRAMS += tests/test_parser
TESTS += tests/test_parser
tests_test_parser_SOURCES = tests/test_parser.cpp
tests_test_parser_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_parser_LDADD = $(TESTS_LIBS)

# The libFuzzer target is built and run by tests/fuzz/run-fuzz.sh with clang (it is slow and
# needs -fsanitize=fuzzer), never by make check: `tests/fuzz/run-fuzz.sh [seconds]`.
EXTRA_DIST += tests/fuzz/fuzz_parser.cpp tests/fuzz/run-fuzz.sh tests/fuzz/ibnetdiscover.dict
