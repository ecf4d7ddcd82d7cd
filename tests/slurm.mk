# SPDX-License-Identifier: GPL-2.0-or-later
# tests: slurm — the localhost Slurm cluster harness (tests/lib/slurm_cluster.sh, tests/lib/trixie.sh,
# tests/lib/slurm_release.sh) and the tests of the harness itself. They need root and start daemons:
# run by tools/run-tests.sh, skipped (exit 77, reason printed) when not root, and inside make distcheck.
TESTS += tests/slurm_cluster_smoke.sh tests/slurm_block_trixie.sh tests/slurm_block_generated.sh \
  tests/slurm_2605_stock.sh tests/slurm_2605_topology_yaml.sh tests/slurm_2605_part_topology.sh
EXTRA_DIST += tests/slurm_cluster_smoke.sh tests/slurm_block_trixie.sh tests/slurm_block_generated.sh \
  tests/slurm_2605_stock.sh tests/slurm_2605_topology_yaml.sh tests/slurm_2605_part_topology.sh
