# SPDX-License-Identifier: GPL-2.0-or-later
# tests: the submit-time C API (layout_c.h), topoaware.conf, the plugins' exported symbols and a
# real localhost cluster with spank_topoaware.so and job_submit/topoaware.
check_PROGRAMS += tests/test_layout_c tests/test_config tests/dlopen_plugin tests/test_gres tests/test_cons_start \
  tests/test_order_join tests/test_log_gate
TESTS += tests/test_layout_c tests/test_config tests/test_gres tests/test_cons_start tests/test_order_join \
  tests/test_log_gate tests/test_plugin_symbols.sh tests/slurm_options.sh tests/slurm_submit_api.sh
EXTRA_DIST += tests/test_plugin_symbols.sh tests/slurm_options.sh tests/slurm_submit_api.sh
tests_test_layout_c_SOURCES = tests/test_layout_c.c plugins/common/ta_env.h plugins/common/ta_env.c
tests_test_layout_c_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib -I$(top_srcdir)/plugins/common
tests_test_layout_c_LDADD = $(TESTS_LIBS) -lstdc++
tests_test_config_SOURCES = tests/test_config.cpp
tests_test_config_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/tests/lib
tests_test_config_LDADD = $(TESTS_LIBS)
# A small C client that dlopen()s a plugin (used by tests/test_plugin_symbols.sh).
tests_dlopen_plugin_SOURCES = tests/dlopen_plugin.c
tests_dlopen_plugin_LDADD = -ldl
# The GPU counts of Slurm's TRES strings, as job_submit/topoaware reads them (plain C, no Slurm).
tests_test_gres_SOURCES = tests/test_gres.c plugins/common/ta_gres.h plugins/common/ta_gres.c
tests_test_gres_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/plugins/common
tests_test_gres_LDADD = $(CMOCKA_LIBS)
# The start cons_tres of 22.05 .. 24.11 gives in a will-run (batches of job ends; plain C, no Slurm).
tests_test_cons_start_SOURCES = tests/test_cons_start.c plugins/common/ta_cons_start.h plugins/common/ta_cons_start.c
tests_test_cons_start_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/plugins/common
tests_test_cons_start_LDADD = $(CMOCKA_LIBS)
# A job's node names joined in rank order, linear in the text (plain C, no Slurm).
tests_test_order_join_SOURCES = tests/test_order_join.c plugins/common/ta_order_join.h plugins/common/ta_order_join.c
tests_test_order_join_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/plugins/common
tests_test_order_join_LDADD = $(CMOCKA_LIBS)
# The rate limit of the select plugin's per-job log lines, bounded for any number of jobs (plain C, no Slurm).
tests_test_log_gate_SOURCES = tests/test_log_gate.c plugins/common/ta_log_gate.h plugins/common/ta_log_gate.c
tests_test_log_gate_CPPFLAGS = $(TESTS_CPPFLAGS) -I$(top_srcdir)/plugins/common
tests_test_log_gate_LDADD = $(CMOCKA_LIBS)
