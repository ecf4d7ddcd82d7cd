#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The topology/block topology.conf that `topoaware` writes loads in a real Slurm 24.11 slurmctld
# (Debian trixie root) and places a job inside one block: for a 2-level fat tree, a 3-level tree
# with pods and a rail-optimized fabric, each generated, written as ibnetdiscover text, discovered
# from it and converted. The loading itself is tests/slurm_block_trixie.sh.
set -euo pipefail
. "$top_srcdir/tests/lib/common.sh"
ta_require_daemon_tests
bin="$top_builddir/topoaware"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-blockgen.XXXXXX")
ta_on_exit "rm -rf '$work'"
run_case() {
  local name=$1; shift
  "$bin" generate "$@" --ibnetdiscover "$work/$name.txt"
  "$bin" discover --ibnetdiscover "$work/$name.txt" --block "$work/$name.conf"
  ta_note "$name: $(grep -c '^BlockName=' "$work/$name.conf") blocks, $(grep '^BlockSizes=' "$work/$name.conf")"
  bash "$top_srcdir/tests/slurm_block_trixie.sh" "$work/$name.conf" ||
    ta_fail "$name: Slurm 24.11 did not accept topoaware's block topology.conf"
}
run_case fat-tree fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 4
run_case pods fat-tree --levels 3 --leaves 4 --leaves-per-pod 2 --hosts-per-leaf 4 --spines 2 --uplinks 2 \
  --cores 2 --core-uplinks 2
run_case rail rail --rails 2 --units 4 --hosts-per-unit 4 --spines-per-rail 1 --uplinks 4
ta_pass "topoaware's block topology.conf loads in Slurm 24.11 for fat tree, pods and rails"
