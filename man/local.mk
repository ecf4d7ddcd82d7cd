# SPDX-License-Identifier: GPL-2.0-or-later
# man pages
dist_man_MANS += man/topoaware.1
include man/plugins.mk
include man/select.mk
