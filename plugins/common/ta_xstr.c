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
	char buf[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	xfree(*field);
	*field = xstrdup(buf);
}
