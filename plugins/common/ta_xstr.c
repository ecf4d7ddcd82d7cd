/* SPDX-License-Identifier: GPL-2.0-or-later */
/* See ta_xstr.h. */
#include "config.h" /* Slurm's own config.h (its source tree is first on the include path) */

#include <stdarg.h>
#include <stdio.h>

#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "ta_xstr.h"

void ta_xstr_set(char **field, const char *fmt, ...)
{
	va_list ap, again;
	char *text;
	int n;

	/* Measured first, never cut: a field handed to Slurm (a job's tres_per_node rewritten from a
	 * user's --gres list) must not change its meaning by losing its tail. */
	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0)
		n = 0;
	text = xmalloc((size_t)n + 1);
	if (n > 0)
		vsnprintf(text, (size_t)n + 1, fmt, ap);
	va_end(ap);
	xfree(*field);
	*field = text;
}
