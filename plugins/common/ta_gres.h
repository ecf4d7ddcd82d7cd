/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GPU counts in Slurm's TRES request strings (job_desc->tres_per_node, tres_per_job, ...), read by
 * the rules of Slurm's own parser (_get_next_gres in src/common/gres.c of 22.05-26.05) so that
 * job_submit/topoaware sees the count slurmctld will schedule. Plain C, no Slurm headers.
 *
 * An entry is "[gres:|gres/]NAME[:TYPE][:COUNT]" or "[gres/]NAME[:TYPE]=COUNT"; entries are
 * separated by ',' (and ';'). For NAME "gpu":
 *   gpu            1 GPU               gpu:TYPE:COUNT  COUNT GPUs of TYPE
 *   gpu:COUNT      COUNT GPUs          gpu:TYPE        1 GPU of TYPE (TYPE is not a number)
 *   gpu=COUNT, gpu:TYPE=COUNT          (the TRES "name=count" spelling)
 * COUNT is decimal digits with an optional suffix as Slurm's suffix_mult() reads it, any case:
 * k/kib 1024, kb 1000, m/mib, mb, g/gib, gb, t/tib, tb, p/pib, pb. "gpu:", "gpu::2", "gpu:a100:",
 * "gpu:a:b:2" and a count with another suffix or beyond 2^64 are invalid (Slurm refuses them). */
#ifndef TA_GRES_H
#define TA_GRES_H

#include <stddef.h>
#include <stdint.h>

enum ta_gres_entry {
  TA_GRES_OTHER = 0,   /* not a GPU entry ("gres:nic:1", "cpu=4", "gpumem:1G") */
  TA_GRES_GPU = 1,     /* a GPU entry; *count set (0 is possible: Slurm then ignores the entry) */
  TA_GRES_INVALID = -1 /* names GPUs but does not parse as Slurm would accept it */
};

/* One entry e[0..len) (no separator inside). For a GPU entry, *type and *type_len (when not NULL) are
 * set to its TYPE inside e ("a100" of "gres:gpu:a100:8"), or to an empty one. */
enum ta_gres_entry ta_gres_gpu_entry(const char *e, size_t len, uint64_t *count, const char **type,
				     size_t *type_len);

/* The GPU count of a whole TRES string: 0 and *gpus = the count of its one GPU entry (0 if it has
 * none, or if tres is NULL or empty). -1 with a message in err naming `option` (e.g.
 * "--gpus-per-node") when an entry names GPUs but does not parse, when the count is 0 or above
 * TA_GRES_MAX_GPUS, when several entries name GPUs (a layout needs one count per node, not one
 * per type), or when tres is longer than TA_GRES_MAX_LEN bytes. */
#define TA_GRES_MAX_LEN 4096
#define TA_GRES_MAX_GPUS 1000000u
int ta_tres_gpus(const char *tres, const char *option, uint32_t *gpus, char *err, size_t errlen);

/* The TYPE of the GPU entry of tres into buf ("" if none or untyped); -1 if buf is too small. */
int ta_tres_gpu_type(const char *tres, char *buf, size_t len);

/* tres without its GPU entries, written to buf (entries joined by ','): returns the length
 * written, 0 when nothing is left, -1 when buf is too small (buf then holds ""). */
int ta_tres_without_gpu(const char *tres, char *buf, size_t len);

#endif
