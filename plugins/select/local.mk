# SPDX-License-Identifier: GPL-2.0-or-later
# The select plugins (select_cons_tres_topoaware(8)), built only against a configured Slurm source
# tree of exactly the running version (--with-slurm-source): select plugins use Slurm's internal
# API. Both are C (Slurm's headers have no extern "C") and export only what Slurm looks up
# (select.map). Every file has its own header; the plugin's state is one context (ta_select_ctx.c)
# that the entry points hand down. In both builds: ta_select_entry.c (init, fini, every select_p_*
# call, the same for every Slurm release family), ta_select_family_<family>.c (what the family
# configure detected differs in: 2205 = 22.05, 2311 = 23.11 .. 24.11, 2505 = 25.05 .. 26.05; its
# plugin id and job_test's arguments), ta_select_cons.c (cons_tres's functions), ta_select_ctx.c
# and ta_select_counters.c (the job_test counters); the topoaware build adds
# ta_select_settings.c (topoaware.conf), ta_select_loader.c and ta_select_load.c (the topology
# loaded and mapped off slurmctld's locks), ta_select_job.c (a job's layout options),
# ta_select_memo.c (the log's rate limit and run-now's decision), ta_select_place.c (job_test of
# layout jobs), ta_select_ends.c (when nodes free up, for will-run), ta_select_book.c (the status
# book) and ta_select_writer.c (its writer):
#   select_cons_tres_passthrough.so  forwards every call to select/cons_tres (benchmark baseline)
#   select_cons_tres_topoaware.so    the same plus placement of tp/pp/dp jobs (C++ core via C API)
EXTRA_DIST += plugins/select/select.map plugins/select/ta_select_family_2205.c plugins/select/ta_select_family_2311.c \
  plugins/select/ta_select_family_2505.c plugins/common/ta_slurm_release.h

# What differs in the Slurm release family (configure: SLURM_FAMILY); TA_SLURM_FAMILY selects the
# calls a family has in the shared files.
if SLURM_FAMILY_2205
TA_SELECT_FAMILY = plugins/select/ta_select_family_2205.c
endif
if SLURM_FAMILY_2311
TA_SELECT_FAMILY = plugins/select/ta_select_family_2311.c
endif
if SLURM_FAMILY_2505
TA_SELECT_FAMILY = plugins/select/ta_select_family_2505.c
endif

taselectdir = $(SLURM_PLUGINSDIR)
taselect_LTLIBRARIES =

# Both builds: the entry points, the family's differences, cons_tres, the context, the counters.
TA_SELECT_COMMON = plugins/select/ta_select_slurm.h plugins/select/ta_select_entry.h plugins/select/ta_select_entry.c \
  plugins/select/ta_select_family.h $(TA_SELECT_FAMILY) plugins/select/ta_select_cons.h plugins/select/ta_select_cons.c \
  plugins/select/ta_select_ctx.h plugins/select/ta_select_ctx.c plugins/select/ta_select_counters.h \
  plugins/select/ta_select_counters.c

if HAVE_SLURM_SOURCE
# Slurm's config.h and tree first, so that "config.h" and "slurm/slurm.h" are the tree's.
TA_SELECT_CPPFLAGS = -I$(SLURM_SRC) -I$(SLURM_SRC)/slurm -I$(top_srcdir)/plugins/select -I$(top_srcdir)/plugins/common \
  -DTA_SLURM_FAMILY=$(SLURM_FAMILY) $(HARDEN_CPPFLAGS)
TA_SELECT_LDFLAGS = -module -avoid-version -shared $(HARDEN_LAZY_LDFLAGS) \
  -Wl,--version-script=$(top_srcdir)/plugins/select/select.map

taselect_LTLIBRARIES += plugins/select/select_cons_tres_passthrough.la
plugins_select_select_cons_tres_passthrough_la_SOURCES = $(TA_SELECT_COMMON)
plugins_select_select_cons_tres_passthrough_la_CPPFLAGS = $(TA_SELECT_CPPFLAGS) -DTA_SELECT_PASSTHROUGH
plugins_select_select_cons_tres_passthrough_la_LDFLAGS = $(TA_SELECT_LDFLAGS)
EXTRA_plugins_select_select_cons_tres_passthrough_la_DEPENDENCIES = $(top_srcdir)/plugins/select/select.map
endif

if HAVE_SLURM_SOURCE
taselect_LTLIBRARIES += plugins/select/select_cons_tres_topoaware.la
plugins_select_select_cons_tres_topoaware_la_SOURCES = $(TA_SELECT_COMMON) \
  plugins/select/ta_select_settings.h plugins/select/ta_select_settings.c \
  plugins/select/ta_select_loader.h plugins/select/ta_select_loader.c plugins/select/ta_select_load.h \
  plugins/select/ta_select_load.c plugins/select/ta_select_job.h plugins/select/ta_select_job.c \
  plugins/select/ta_select_memo.h plugins/select/ta_select_memo.c plugins/select/ta_select_place.h \
  plugins/select/ta_select_place.c plugins/select/ta_select_ends.h plugins/select/ta_select_ends.c \
  plugins/select/ta_select_book.h plugins/select/ta_select_book.c plugins/select/ta_select_writer.h \
  plugins/select/ta_select_writer.c \
  plugins/common/ta_env.h plugins/common/ta_env.c plugins/common/ta_gres.h plugins/common/ta_gres.c \
  plugins/common/ta_cons_start.h plugins/common/ta_cons_start.c \
  plugins/common/ta_order_join.h plugins/common/ta_order_join.c \
  plugins/common/ta_log_gate.h plugins/common/ta_log_gate.c
plugins_select_select_cons_tres_topoaware_la_CPPFLAGS = $(TA_SELECT_CPPFLAGS) -I$(top_srcdir)/capi
plugins_select_select_cons_tres_topoaware_la_LDFLAGS = $(TA_SELECT_LDFLAGS)
plugins_select_select_cons_tres_topoaware_la_LIBADD = capi/libtopoaware_capi.la corelib/libtopoaware_core.la -lstdc++
EXTRA_plugins_select_select_cons_tres_topoaware_la_DEPENDENCIES = $(top_srcdir)/plugins/select/select.map
endif
