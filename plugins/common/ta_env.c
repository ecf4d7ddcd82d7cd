/* SPDX-License-Identifier: GPL-2.0-or-later */
/* See ta_env.h. */
#include "ta_env.h"

#include <stdio.h>
#include <string.h>

const char *ta_option_from_env_name(const char *env_name, size_t len)
{
	const topoaware_option_info_t *o;
	uint32_t i;
	size_t k;

	for (i = 0; (o = topoaware_option_info(i)) != NULL; i++) {
		const char *n = o->name;
		if (strlen(n) != len)
			continue;
		for (k = 0; k < len; k++) {
			char c = n[k] == '-' ? '_' : n[k];
			if (env_name[k] != c)
				break;
		}
		if (k == len)
			return n;
	}
	return NULL;
}

int ta_option_env_name(const char *name, char *buf, size_t len)
{
	size_t plen = strlen(TA_ENV_PREFIX), k;

	if (!name || !topoaware_option_bit(name) || plen + strlen(name) >= len)
		return -1;
	memcpy(buf, TA_ENV_PREFIX, plen);
	for (k = 0; name[k]; k++)
		buf[plen + k] = name[k] == '-' ? '_' : name[k];
	buf[plen + k] = '\0';
	return 0;
}

/* "--tp, --pp, ... and --nccl-hints" (for messages). */
static void ta_option_list(char *buf, size_t len)
{
	const topoaware_option_info_t *o;
	uint32_t i;
	size_t n = 0;

	buf[0] = '\0';
	for (i = 0; (o = topoaware_option_info(i)) != NULL && n < len; i++) {
		const char *sep = i == 0 ? "" : topoaware_option_info(i + 1) ? ", " : " and ";
		snprintf(buf + n, len - n, "%s--%s", sep, o->name);
		n += strlen(buf + n);
	}
}

int ta_options_from_env(topoaware_options_t *opts, char *const *env, uint32_t count, char *err, size_t errlen)
{
	const size_t plen = strlen(TA_ENV_PREFIX);
	char why[TOPOAWARE_ERR_LEN], shown[256], names[256];
	uint32_t i;

	topoaware_options_init(opts);
	if (!env)
		return 0;
	if (count > TA_ENV_MAX_ENTRIES) {
		snprintf(err, errlen,
			 "the job's SPANK environment has %u entries; at most %u are read, so its topoaware "
			 "options cannot be checked; submit it with fewer",
			 count, (unsigned)TA_ENV_MAX_ENTRIES);
		return -1;
	}
	for (i = 0; i < count; i++) {
		const char *e = env[i], *eq, *name;
		unsigned bit;

		if (!e || strncmp(e, TA_ENV_PREFIX, plen) != 0)
			continue;
		eq = strchr(e + plen, '=');
		if (!eq) {
			snprintf(err, errlen, "job environment entry %s has no value",
				 topoaware_printable(e, 80, shown, sizeof(shown)));
			return -1;
		}
		name = ta_option_from_env_name(e + plen, (size_t)(eq - (e + plen)));
		if (!name) {
			size_t n = (size_t)(eq - (e + plen));
			ta_option_list(names, sizeof(names));
			snprintf(err, errlen,
				 "unknown topoaware option '%s' in the job's SPANK environment; the options are %s",
				 topoaware_printable(e + plen, n > 64 ? 64 : n, shown, sizeof(shown)), names);
			return -1;
		}
		bit = topoaware_option_bit(name);
		if (opts->set & bit) {
			snprintf(err, errlen, "--%s is given twice in the job's SPANK environment; give it once", name);
			return -1;
		}
		if (topoaware_options_set(opts, name, eq + 1, why, sizeof(why)) != 0) {
			topoaware_printable(eq + 1, 64, shown, sizeof(shown));
			snprintf(err, errlen, "--%s=%s: %s", name, shown, why);
			return -1;
		}
	}
	return 0;
}

int ta_env_check_reserved(char *const *env, uint32_t count, char *err, size_t errlen)
{
	const size_t plen = strlen(TA_RESERVED_PREFIX);
	char shown[256];
	uint32_t i;

	if (!env)
		return 0;
	if (count > TA_ENV_MAX_ENTRIES)
		count = TA_ENV_MAX_ENTRIES; /* ta_options_from_env refuses the rest */
	for (i = 0; i < count; i++) {
		const char *e = env[i], *eq;

		if (!e || strncmp(e, TA_RESERVED_PREFIX, plen) != 0)
			continue;
		eq = strchr(e, '=');
		topoaware_printable(e, eq && eq - e < 80 ? (size_t)(eq - e) : 80, shown, sizeof(shown));
		snprintf(err, errlen,
			 "%s in the job's SPANK environment: names starting with %s are written by "
			 "select/cons_tres_topoaware when the job starts and cannot be given with it; "
			 "remove it and give the layout with --tp, --pp and --dp",
			 shown, TA_RESERVED_PREFIX);
		return -1;
	}
	return 0;
}

int ta_options_from_vars(topoaware_options_t *opts, const char *prefix, ta_var_fn get, void *ctx, char *err,
			 size_t errlen)
{
	const topoaware_option_info_t *o;
	char var[256], value[256], why[TOPOAWARE_ERR_LEN], shown[256];
	size_t plen = prefix ? strlen(prefix) : 0;
	uint32_t i;

	topoaware_options_init(opts);
	for (i = 0; (o = topoaware_option_info(i)) != NULL; i++) {
		int rc;

		if (plen >= sizeof(var) || ta_option_env_name(o->name, var + plen, sizeof(var) - plen) != 0) {
			snprintf(err, errlen, "internal error: no variable name for --%s", o->name);
			return -1;
		}
		memcpy(var, prefix, plen);
		rc = get(ctx, var, value, sizeof(value));
		if (rc == 0)
			continue;
		if (rc < 0) {
			snprintf(err, errlen, "%s cannot be read (longer than %zu bytes?)", var, sizeof(value) - 1);
			return -1;
		}
		if (topoaware_options_set(opts, o->name, value, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "%s=%s: %s", var, topoaware_printable(value, 64, shown, sizeof(shown)),
				 why);
			return -1;
		}
	}
	return 0;
}

int ta_options_key(const topoaware_options_t *opts, char *buf, size_t len)
{
	const topoaware_layout_t *l = &opts->layout;
	int n;

	if (!topoaware_options_has_layout(opts))
		n = snprintf(buf, len, "none");
	else if (opts->set & TOPOAWARE_OPT_RANK_ORDER)
		n = snprintf(buf, len, "tp=%u,cp=%u,ep=%u,dp=%u,pp=%u,rank-order=%s", l->tp, l->cp, l->ep, l->dp, l->pp,
			     topoaware_order_name(l->order));
	else
		n = snprintf(buf, len, "tp=%u,cp=%u,ep=%u,dp=%u,pp=%u", l->tp, l->cp, l->ep, l->dp, l->pp);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int ta_options_same_layout(const topoaware_options_t *checked, const topoaware_options_t *got)
{
	const topoaware_layout_t *a = &checked->layout, *b = &got->layout;
	int la = topoaware_options_has_layout(checked), lb = topoaware_options_has_layout(got);

	if (!la || !lb)
		return la == lb;
	if (a->tp != b->tp || a->cp != b->cp || a->ep != b->ep || a->dp != b->dp || a->pp != b->pp)
		return 0;
	return !(got->set & TOPOAWARE_OPT_RANK_ORDER) || a->order == b->order;
}
