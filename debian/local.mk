# SPDX-License-Identifier: GPL-2.0-or-later
# Debian packages: `make deb` builds them from this tree with dpkg-buildpackage (debian/rules), for the
# Slurm release configure was given (--with-slurm-source), and leaves them in $(DEB_OUTDIR):
#   topoaware_<version>_<arch>.deb                 the command and its man pages
#   slurm-topoaware-plugins_<version>_<arch>.deb   the three plugins (depends on that Slurm release)
# The sources are `make distdir`'s copy (what a release tarball holds), so a file missing from the
# distribution fails here too. DEB_BUILD_OPTIONS defaults to "nocheck parallel=N": the tree's own
# `make check` runs the tests; set DEB_BUILD_OPTIONS=parallel=2 to run the unit tests in the build too.

EXTRA_DIST += debian/changelog debian/control debian/rules debian/copyright debian/source/format \
  debian/topoaware.install debian/slurm-topoaware-plugins.install debian/slurm-topoaware-plugins.README.Debian \
  debian/local.mk debian/topoaware.lintian-overrides debian/slurm-topoaware-plugins.lintian-overrides

DEB_OUTDIR = $(abs_top_builddir)/deb
DEB_JOBS = 2

deb:
	@if test -z '$(SLURM_SRC)'; then \
	  echo 'make deb: configure had no --with-slurm-source; the plugins package needs it' >&2; exit 1; fi
	@command -v dpkg-buildpackage >/dev/null || { echo 'make deb: install dpkg-dev and debhelper' >&2; exit 1; }
	rm -rf '$(DEB_OUTDIR)' && mkdir -p '$(DEB_OUTDIR)'
	$(MAKE) $(AM_MAKEFLAGS) distdir distdir='$(DEB_OUTDIR)/$(PACKAGE)-$(VERSION)'
	@echo "dpkg-buildpackage in $(DEB_OUTDIR)/$(PACKAGE)-$(VERSION) for Slurm $(SLURM_SRC)" \
	  "(log $(DEB_OUTDIR)/build.log)"
	@cd '$(DEB_OUTDIR)/$(PACKAGE)-$(VERSION)' && \
	  TOPOAWARE_SLURM_SOURCE='$(SLURM_SRC)' DEB_BUILD_OPTIONS="$${DEB_BUILD_OPTIONS-nocheck parallel=$(DEB_JOBS)}" \
	  dpkg-buildpackage -b -us -uc >'$(DEB_OUTDIR)/build.log' 2>&1 || \
	  { tail -n 40 '$(DEB_OUTDIR)/build.log' >&2; echo "make deb: dpkg-buildpackage failed" \
	    "(log $(DEB_OUTDIR)/build.log)" >&2; exit 1; }
	rm -rf '$(DEB_OUTDIR)/$(PACKAGE)-$(VERSION)'
	@ls -1 '$(DEB_OUTDIR)'/*.deb
.PHONY: deb
