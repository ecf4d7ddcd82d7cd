# SPDX-License-Identifier: GPL-2.0-or-later
# The demo of the README's first command (tools/demo.sh), run and checked.
TESTS += tests/demo_main_job.sh
EXTRA_DIST += tests/demo_main_job.sh
