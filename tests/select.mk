# SPDX-License-Identifier: GPL-2.0-or-later
# tests: the select plugins (select_cons_tres_topoaware(8)): exported symbols, and real localhost
# clusters (root; skipped otherwise) with slurmctld running the build tree's plugins.
TA_SELECT_TESTS = tests/slurm_select_symbols.sh tests/slurm_select_wrapper.sh tests/slurm_select_place.sh \
  tests/slurm_select_faults.sh tests/slurm_ibsim_fabric_change.sh \
  tests/slurm_select_topology_file.sh tests/slurm_select_switch.sh tests/slurm_select_config.sh \
  tests/slurm_select_nvlink.sh tests/slurm_select_reload_large.sh tests/slurm_select_ring_book.sh
TESTS += $(TA_SELECT_TESTS)
# A Slurm upgrade (24.11.5 in the trixie root to a newer release built under a prefix) under running and
# queued layout jobs: not in make check (it needs the newer release), one of tools/release-tests.sh's.
EXTRA_DIST += $(TA_SELECT_TESTS) tests/lib/select_fabric.sh tests/slurm_upgrade_trixie.sh

# A client of Slurm's public library (libslurm.so) for tests/slurm_select_wrapper.sh: libslurm loads
# the select plugin of SelectType in it, so the plugin must load outside slurmctld.
if HAVE_SLURM
check_PROGRAMS += tests/libslurm_client
tests_libslurm_client_SOURCES = tests/libslurm_client.c
tests_libslurm_client_CPPFLAGS = $(SLURM_CPPFLAGS)
tests_libslurm_client_LDFLAGS = $(SLURM_LDFLAGS)
tests_libslurm_client_LDADD = -lslurm
# The same library submitting a job with a SPANK environment of its own choosing, for
# tests/slurm_submit_api.sh: what job_submit/topoaware must refuse without sbatch in between.
check_PROGRAMS += tests/libslurm_submit
tests_libslurm_submit_SOURCES = tests/libslurm_submit.c
tests_libslurm_submit_CPPFLAGS = $(SLURM_CPPFLAGS)
tests_libslurm_submit_LDFLAGS = $(SLURM_LDFLAGS)
tests_libslurm_submit_LDADD = -lslurm
endif
