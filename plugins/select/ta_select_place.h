/* SPDX-License-Identifier: GPL-2.0-or-later */
/* select_p_job_test of select/cons_tres_topoaware (ta_select_place.c). */
#ifndef TA_SELECT_PLACE_H
#define TA_SELECT_PLACE_H

#include "ta_select_ctx.h"
#include "ta_select_family.h"

/* Placement for layout jobs, cons_tres for everything else. *layout = 1 if the placement ran (a
 * layout-job call, counted apart). Takes ctx->lock for layout jobs. */
int ta_place_job_test(ta_ctx_t *ctx, const ta_job_test_t *t, int *layout);

#endif
