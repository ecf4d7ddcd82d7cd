# SPDX-License-Identifier: GPL-2.0-or-later
# select_cons_tres_topoaware(8): the select plugins (plugins/select/)
dist_man_MANS += man/select_cons_tres_topoaware.8
