# SPDX-License-Identifier: GPL-2.0-or-later
# Slurm plugins: spank_topoaware.so (public headers only; its own fragment plugins/spank/local.mk)
# and job_submit_topoaware.so (needs the configured Slurm source tree). Both are C adapters over the
# C++ core, reached through the C API in capi/ (Slurm's headers have no extern "C"); each exports
# only the symbols Slurm looks up (linker version scripts) and links libstdc++ for the core. Each
# links what it needs: spank node/ + capi/ + corelib/, job_submit and select capi/ + corelib/
# (never report/ or discovery/).

EXTRA_DIST += plugins/job_submit/job_submit_topoaware.map

slurmplugindir = $(SLURM_PLUGINSDIR)
slurmplugin_LTLIBRARIES =
TA_PLUGIN_LIBS = capi/libtopoaware_capi.la corelib/libtopoaware_core.la -lstdc++

if HAVE_SLURM_SOURCE
slurmplugin_LTLIBRARIES += plugins/job_submit/job_submit_topoaware.la
plugins_job_submit_job_submit_topoaware_la_SOURCES = plugins/job_submit/job_submit_topoaware.c \
  plugins/job_submit/ta_submit_nvlink.h plugins/job_submit/ta_submit_nvlink.c \
  plugins/common/ta_env.h plugins/common/ta_env.c plugins/common/ta_xstr.h plugins/common/ta_xstr.c \
  plugins/common/ta_gres.h plugins/common/ta_gres.c
# Slurm's config.h and tree first, so that "config.h" and "slurm/slurm.h" are the tree's.
plugins_job_submit_job_submit_topoaware_la_CPPFLAGS = -I$(SLURM_SRC) -I$(SLURM_SRC)/slurm \
  -I$(top_srcdir)/capi -I$(top_srcdir)/plugins/common $(HARDEN_CPPFLAGS)
plugins_job_submit_job_submit_topoaware_la_LDFLAGS = -module -avoid-version -shared $(HARDEN_LDFLAGS) \
  -Wl,--version-script=$(top_srcdir)/plugins/job_submit/job_submit_topoaware.map
plugins_job_submit_job_submit_topoaware_la_LIBADD = $(TA_PLUGIN_LIBS)
EXTRA_plugins_job_submit_job_submit_topoaware_la_DEPENDENCIES = \
  $(top_srcdir)/plugins/job_submit/job_submit_topoaware.map
endif
include plugins/spank/local.mk
include plugins/select/local.mk

# `make install` installs the plugins stripped: every srun, sbatch, slurmd and slurmstepd loads them,
# and their debug information is most of their size (the build tree keeps it for gdb).
TA_INSTALLED_PLUGINS = spank_topoaware.so job_submit_topoaware.so select_cons_tres_topoaware.so \
  select_cons_tres_passthrough.so
install-data-hook: strip-installed-plugins
strip-installed-plugins:
	@dirs='$(DESTDIR)$(slurmplugindir)'; \
	test '$(taselectdir)' = '$(slurmplugindir)' || dirs="$$dirs $(DESTDIR)$(taselectdir)"; \
	for f in $(TA_INSTALLED_PLUGINS); do \
	  for d in $$dirs; do \
	    if test -f "$$d/$$f"; then \
	      echo " $(STRIP) --strip-unneeded $$d/$$f"; \
	      $(STRIP) --strip-unneeded "$$d/$$f" || exit 1; \
	    fi; \
	  done; \
	done
.PHONY: strip-installed-plugins

# The plugins built against every Slurm release of tools/slurm-releases.txt, each with its symbol
# tests (tools/slurm-matrix.sh; ~10 min on a warm cache, so not part of make check).
check-releases:
	TOPOAWARE_JOBS=$${TOPOAWARE_JOBS:-2} TOPOAWARE_MATRIX_DIR=$${TOPOAWARE_MATRIX_DIR:-$(abs_top_builddir)/releases} \
	  bash $(top_srcdir)/tools/slurm-matrix.sh
.PHONY: check-releases
