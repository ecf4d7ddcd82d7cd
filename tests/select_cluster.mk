# SPDX-License-Identifier: GPL-2.0-or-later
# tests: select/cons_tres_topoaware on 64 nodes (8 leaves x 8) with a fabric discovered live under
# ibsim, against stock select/cons_tres + topology/tree (root and daemons; skipped otherwise).
TA_SELECT_CLUSTER_TESTS = tests/slurm_select_fabric64.sh
TESTS += $(TA_SELECT_CLUSTER_TESTS)
EXTRA_DIST += $(TA_SELECT_CLUSTER_TESTS) tests/lib/select_fabric64.sh
