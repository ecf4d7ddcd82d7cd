# SPDX-License-Identifier: GPL-2.0-or-later
# The select plugins (select_cons_tres_topoaware(8)), built only against a configured Slurm source
# tree of exactly the running version (--with-slurm-source): select plugins use Slurm's internal
# API. Both are C (Slurm's headers have no extern "C") and export only what Slurm looks up
# (select.map). select_cons_tres_topoaware.c holds the release-neutral half of the entry points,
# ta_select_entry_<family>.c the select_p_* calls of the Slurm release family configure detected
# (forwarding to cons_tres: 2205 = 22.05, 2311 = 23.11 .. 24.11, 2505 = 25.05 .. 26.05) and
# ta_select_counters.c the job_test counters, all in both builds;
# the topoaware build adds ta_select_state.c (topoaware.conf, topology), ta_select_load.c (the
# topology parsed and mapped off slurmctld's locks), ta_select_job.c (a job's layout options),
# ta_select_place.c (job_test of layout jobs), ta_select_ends.c (when nodes free up, for will-run),
# ta_select_book.c (the status book) and ta_select_writer.c (its writer):
#   select_cons_tres_passthrough.so  forwards every call to select/cons_tres (benchmark baseline)
#   select_cons_tres_topoaware.so    the same plus placement of tp/pp/dp jobs (C++ core via C API)
EXTRA_DIST += plugins/select/select.map plugins/select/ta_select_entry_2205.c plugins/select/ta_select_entry_2311.c \
  plugins/select/ta_select_entry_2505.c plugins/common/ta_slurm_release.h

# The select_p_* entry points of the Slurm release family (configure: SLURM_FAMILY).
if SLURM_FAMILY_2205
TA_SELECT_ENTRY = plugins/select/ta_select_entry_2205.c
endif
if SLURM_FAMILY_2311
TA_SELECT_ENTRY = plugins/select/ta_select_entry_2311.c
endif
if SLURM_FAMILY_2505
TA_SELECT_ENTRY = plugins/select/ta_select_entry_2505.c
endif

taselectdir = $(SLURM_PLUGINSDIR)
taselect_LTLIBRARIES =

if HAVE_SLURM_SOURCE
# Slurm's config.h and tree first, so that "config.h" and "slurm/slurm.h" are the tree's.
TA_SELECT_CPPFLAGS = -I$(SLURM_SRC) -I$(SLURM_SRC)/slurm -I$(top_srcdir)/plugins/select -I$(top_srcdir)/plugins/common \
  $(HARDEN_CPPFLAGS)
TA_SELECT_LDFLAGS = -module -avoid-version -shared $(HARDEN_LAZY_LDFLAGS) \
  -Wl,--version-script=$(top_srcdir)/plugins/select/select.map

taselect_LTLIBRARIES += plugins/select/select_cons_tres_passthrough.la
plugins_select_select_cons_tres_passthrough_la_SOURCES = plugins/select/select_cons_tres_topoaware.c \
  $(TA_SELECT_ENTRY) plugins/select/ta_select.h plugins/select/ta_select_counters.c
plugins_select_select_cons_tres_passthrough_la_CPPFLAGS = $(TA_SELECT_CPPFLAGS) -DTA_SELECT_PASSTHROUGH
plugins_select_select_cons_tres_passthrough_la_LDFLAGS = $(TA_SELECT_LDFLAGS)
EXTRA_plugins_select_select_cons_tres_passthrough_la_DEPENDENCIES = $(top_srcdir)/plugins/select/select.map
endif

if HAVE_SLURM_SOURCE
taselect_LTLIBRARIES += plugins/select/select_cons_tres_topoaware.la
plugins_select_select_cons_tres_topoaware_la_SOURCES = plugins/select/select_cons_tres_topoaware.c \
  $(TA_SELECT_ENTRY) plugins/select/ta_select.h plugins/select/ta_select_counters.c plugins/select/ta_select_int.h \
  plugins/select/ta_select_state.c plugins/select/ta_select_load.c plugins/select/ta_select_job.c \
  plugins/select/ta_select_place.c plugins/select/ta_select_ends.h plugins/select/ta_select_ends.c \
  plugins/select/ta_select_book.c plugins/select/ta_select_writer.c \
  plugins/common/ta_env.h plugins/common/ta_env.c plugins/common/ta_gres.h plugins/common/ta_gres.c \
  plugins/common/ta_cons_start.h plugins/common/ta_cons_start.c
plugins_select_select_cons_tres_topoaware_la_CPPFLAGS = $(TA_SELECT_CPPFLAGS) -I$(top_srcdir)/capi
plugins_select_select_cons_tres_topoaware_la_LDFLAGS = $(TA_SELECT_LDFLAGS)
plugins_select_select_cons_tres_topoaware_la_LIBADD = capi/libtopoaware_capi.la corelib/libtopoaware_core.la -lstdc++
EXTRA_plugins_select_select_cons_tres_topoaware_la_DEPENDENCIES = $(top_srcdir)/plugins/select/select.map
endif
