/* SPDX-License-Identifier: GPL-2.0-or-later */
/* See ta_gres.h. */
#include "ta_gres.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Slurm's suffix_mult() (src/common/slurm_protocol_defs.c): 0 for an unknown suffix. */
static uint64_t ta_suffix_mult(const char *s, size_t n)
{
	static const struct {
		const char *name;
		uint64_t mult;
	} suffixes[] = {
		{ "", 1 },
		{ "k", 1ull << 10 }, { "kib", 1ull << 10 }, { "kb", 1000ull },
		{ "m", 1ull << 20 }, { "mib", 1ull << 20 }, { "mb", 1000000ull },
		{ "g", 1ull << 30 }, { "gib", 1ull << 30 }, { "gb", 1000000000ull },
		{ "t", 1ull << 40 }, { "tib", 1ull << 40 }, { "tb", 1000000000000ull },
		{ "p", 1ull << 50 }, { "pib", 1ull << 50 }, { "pb", 1000000000000000ull },
	};

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (strlen(suffixes[i].name) == n && strncasecmp(s, suffixes[i].name, n) == 0)
			return suffixes[i].mult;
	return 0;
}

/* Slurm's _is_valid_number(): digits, then a suffix; 0 when it is not a number (or overflows). */
static int ta_count(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0, mult;
	size_t i = 0;

	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	if (i == 0)
		return 0;
	mult = ta_suffix_mult(s + i, n - i);
	if (!mult || (v && mult > UINT64_MAX / v))
		return 0;
	*out = v * mult;
	return 1;
}

static enum ta_gres_entry ta_gpu_entry(const char *e, size_t len, uint64_t *count, const char **type,
				       size_t *type_len)
{
	const char *p = e, *end = e + len, *colon, *eq;

	*type = NULL;
	*type_len = 0;

	if (len >= 5 && (!strncmp(p, "gres:", 5) || !strncmp(p, "gres/", 5)))
		p += 5;
	if ((size_t)(end - p) < 3 || strncmp(p, "gpu", 3) != 0)
		return TA_GRES_OTHER;
	p += 3;
	if (p == end) { /* "gpu": one GPU */
		*count = 1;
		return TA_GRES_GPU;
	}
	if (*p == '=') /* "gpu=N" */
		return ta_count(p + 1, (size_t)(end - p - 1), count) ? TA_GRES_GPU : TA_GRES_INVALID;
	if (*p != ':')
		return TA_GRES_OTHER; /* another name that starts with gpu ("gpumem") */
	p++;
	eq = memchr(p, '=', (size_t)(end - p));
	if (eq) { /* "gpu:TYPE=N" */
		if (eq == p || memchr(p, ':', (size_t)(eq - p)))
			return TA_GRES_INVALID;
		*type = p;
		*type_len = (size_t)(eq - p);
		return ta_count(eq + 1, (size_t)(end - eq - 1), count) ? TA_GRES_GPU : TA_GRES_INVALID;
	}
	colon = memchr(p, ':', (size_t)(end - p));
	if (!colon) { /* "gpu:N" or "gpu:TYPE" */
		if (p == end)
			return TA_GRES_INVALID;
		if (!ta_count(p, (size_t)(end - p), count)) {
			*count = 1;
			*type = p;
			*type_len = (size_t)(end - p);
		}
		return TA_GRES_GPU;
	}
	/* "gpu:TYPE:N": the rest after the second ':' must be the count (so "gpu:a:b:2" is not). */
	if (colon == p || colon + 1 == end)
		return TA_GRES_INVALID;
	*type = p;
	*type_len = (size_t)(colon - p);
	return ta_count(colon + 1, (size_t)(end - colon - 1), count) ? TA_GRES_GPU : TA_GRES_INVALID;
}

enum ta_gres_entry ta_gres_gpu_entry(const char *e, size_t len, uint64_t *count, const char **type,
				     size_t *type_len)
{
	const char *t;
	size_t tl;
	uint64_t c = 0;
	enum ta_gres_entry r = ta_gpu_entry(e, len, &c, &t, &tl);

	if (r == TA_GRES_GPU) {
		*count = c;
		if (type)
			*type = t ? t : e + len;
		if (type_len)
			*type_len = t ? tl : 0;
	}
	return r;
}

/* At most max bytes of s (or up to its NUL) as printable ASCII into buf ('?' for any other byte): the
 * request string is the client's, and the message goes to slurmctld's log and the user's terminal. */
static const char *ta_shown(const char *s, size_t max, char *buf)
{
	size_t i = 0;

	for (; i < max && s[i]; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

int ta_tres_gpus(const char *tres, const char *option, uint32_t *gpus, char *err, size_t errlen)
{
	char shown[65];
	const char *p;
	int found = 0;

	*gpus = 0;
	if (!tres || !*tres)
		return 0;
	if (strnlen(tres, TA_GRES_MAX_LEN + 1) > TA_GRES_MAX_LEN) {
		snprintf(err, errlen, "%s is longer than %d bytes", option, TA_GRES_MAX_LEN);
		return -1;
	}
	for (p = tres; *p;) {
		size_t n = strcspn(p, ",;");
		uint64_t c = 0;
		enum ta_gres_entry r = ta_gres_gpu_entry(p, n, &c, NULL, NULL);
		size_t cut = n > 64 ? 64 : n;

		if (r == TA_GRES_INVALID) {
			snprintf(err, errlen,
				 "%s: cannot read the GPU count of '%s'; give a number, optionally after a type "
				 "(e.g. %s=8 or gpu:a100:8)",
				 option, ta_shown(p, cut, shown), option);
			return -1;
		}
		if (r == TA_GRES_GPU) {
			if (c == 0 || c > TA_GRES_MAX_GPUS) {
				snprintf(err, errlen, "%s: '%s' asks for %llu GPUs; a tp/pp/dp layout needs 1 to %u",
					 option, ta_shown(p, cut, shown), (unsigned long long)c, TA_GRES_MAX_GPUS);
				return -1;
			}
			if (found) {
				snprintf(err, errlen,
					 "%s names GPUs twice (%s); a tp/pp/dp layout needs one GPU count per node",
					 option, ta_shown(tres, 64, shown));
				return -1;
			}
			found = 1;
			*gpus = (uint32_t)c;
		}
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

int ta_tres_without_gpu(const char *tres, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return -1;
	buf[0] = '\0';
	for (const char *p = tres; p && *p;) {
		size_t n = strcspn(p, ",;");
		uint64_t c;

		if (n && ta_gres_gpu_entry(p, n, &c, NULL, NULL) == TA_GRES_OTHER) {
			if (used + (used ? 1 : 0) + n + 1 > len) {
				buf[0] = '\0';
				return -1;
			}
			if (used)
				buf[used++] = ',';
			memcpy(buf + used, p, n);
			used += n;
			buf[used] = '\0';
		}
		p += n;
		if (*p)
			p++;
	}
	return (int)used;
}

int ta_tres_gpu_type(const char *tres, char *buf, size_t len)
{
	if (!len)
		return -1;
	buf[0] = '\0';
	for (const char *p = tres; p && *p;) {
		size_t n = strcspn(p, ",;"), tl;
		uint64_t c;
		const char *t;

		if (ta_gres_gpu_entry(p, n, &c, &t, &tl) == TA_GRES_GPU) {
			if (tl + 1 > len)
				return -1;
			memcpy(buf, t, tl);
			buf[tl] = '\0';
			return 0;
		}
		p += n;
		if (*p)
			p++;
	}
	return 0;
}
