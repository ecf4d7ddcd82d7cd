/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A job's node names joined in rank order ("n1,n2,..."), the text select/cons_tres_topoaware keeps
 * in the job's environment, the status file and the log. Built in select_p_job_begin, under
 * slurmctld's job and node write locks, for jobs of up to the whole cluster: so in time linear in
 * the text, each name copied once. (Appending name after name with Slurm's xstrfmtcat seeks to the
 * end of the text at every call: quadratic in the node count.) Plain C, no Slurm headers. */
#ifndef TA_ORDER_JOIN_H
#define TA_ORDER_JOIN_H

#include <stddef.h>
#include <stdint.h>

/* The length (without the NUL) of names[order[0]], names[order[1]], ..., names[order[n - 1]]
 * joined with commas. */
size_t ta_order_join_len(const char *const *names, const uint32_t *order, uint32_t n);

/* Writes that text and its NUL into out, which holds ta_order_join_len() + 1 bytes. */
void ta_order_join(char *out, const char *const *names, const uint32_t *order, uint32_t n);

#endif
