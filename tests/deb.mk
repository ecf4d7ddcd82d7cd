# SPDX-License-Identifier: GPL-2.0-or-later
# tests: the Debian packages (debian/, `make deb`), built and checked for the host's Slurm and, in the
# Debian trixie root, for Slurm 24.11, then run on a localhost cluster from their files. Each builds the
# whole project again inside dpkg-buildpackage (minutes), so they are not part of `make check`:
# `make check-deb` runs them (tools/run-tests.sh does, after make check).
TA_DEB_TESTS = tests/deb_package.sh tests/deb_trixie.sh
EXTRA_DIST += $(TA_DEB_TESTS)

check-deb:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(TA_DEB_TESTS)'
.PHONY: check-deb

# The cluster tests on Slurm 24.11.5 (Debian trixie's daemons), run inside the trixie root in the
# build made there for the packages (tools/trixie-tests.sh; the same build as tests/deb_trixie.sh's).
check-trixie:
	bash $(top_srcdir)/tools/trixie-tests.sh --build-dir $(abs_top_builddir)
.PHONY: check-trixie
