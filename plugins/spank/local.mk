# SPDX-License-Identifier: GPL-2.0-or-later
# spank_topoaware.so (spank_topoaware(8)), built against Slurm's public headers only. C, split by
# SPANK context as pyxis is (see spank_topoaware.c); the option names, the plugstack.conf
# arguments and every decision are the core's, reached through capi/ (layout_c.h, task_c.h,
# job_dir_c.h). Exports only what Slurm looks up (spank_topoaware.map). Uses slurmplugindir and
# TA_PLUGIN_LIBS of plugins/local.mk.
EXTRA_DIST += plugins/spank/spank_topoaware.map

if HAVE_SLURM
slurmplugin_LTLIBRARIES += plugins/spank/spank_topoaware.la
plugins_spank_spank_topoaware_la_SOURCES = plugins/spank/spank_topoaware.h plugins/spank/spank_topoaware.c \
  plugins/spank/spank_submit.c plugins/spank/spank_prolog.c plugins/spank/spank_task.c plugins/spank/spank_remote.c \
  plugins/common/ta_env.h plugins/common/ta_env.c
plugins_spank_spank_topoaware_la_CPPFLAGS = $(SLURM_CPPFLAGS) -I$(top_srcdir)/capi -I$(top_srcdir)/plugins/common \
  $(HARDEN_CPPFLAGS)
plugins_spank_spank_topoaware_la_LDFLAGS = -module -avoid-version -shared $(HARDEN_LDFLAGS) \
  -Wl,--version-script=$(top_srcdir)/plugins/spank/spank_topoaware.map
if TA_LAZY_CRYPTO
# libcrypto is loaded when the core first needs it (ta_crypto_lazy.c), not with the plugin: every
# `slurmstepd spank prolog|epilog` loads the plugin (bench/spank_prolog_cost.sh). The core's objects
# are linked as objects, not through its .la, whose dependency_libs would make libcrypto a NEEDED
# library again (libtool puts -Wl,--as-needed after the libraries, where it does nothing).
plugins_spank_spank_topoaware_la_SOURCES += plugins/spank/ta_crypto_lazy.c
plugins_spank_spank_topoaware_la_CPPFLAGS += $(CRYPTO_CFLAGS) -DTA_LIBCRYPTO_SONAME='"$(TA_LIBCRYPTO_SONAME)"'
plugins_spank_spank_topoaware_la_LIBADD = node/libtopoaware_node.la capi/libtopoaware_capi.la \
  $(corelib_libtopoaware_core_la_OBJECTS) -lstdc++
else
plugins_spank_spank_topoaware_la_LIBADD = node/libtopoaware_node.la $(TA_PLUGIN_LIBS)
endif
EXTRA_plugins_spank_spank_topoaware_la_DEPENDENCIES = $(top_srcdir)/plugins/spank/spank_topoaware.map
endif
