/* SPDX-License-Identifier: GPL-2.0-or-later */
/* See ta_order_join.h. */
#include "ta_order_join.h"

#include <string.h>

size_t ta_order_join_len(const char *const *names, const uint32_t *order, uint32_t n)
{
	size_t len = n ? n - 1 : 0; /* the commas */

	for (uint32_t k = 0; k < n; k++)
		len += strlen(names[order[k]]);
	return len;
}

void ta_order_join(char *out, const char *const *names, const uint32_t *order, uint32_t n)
{
	char *at = out;

	for (uint32_t k = 0; k < n; k++) {
		size_t len = strlen(names[order[k]]);

		if (k)
			*at++ = ',';
		memcpy(at, names[order[k]], len);
		at += len;
	}
	*at = '\0';
}
