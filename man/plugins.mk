# SPDX-License-Identifier: GPL-2.0-or-later
# man pages of the Slurm plugins and of topoaware.conf
dist_man_MANS += man/spank_topoaware.8 man/job_submit_topoaware.8 man/topoaware.conf.5
