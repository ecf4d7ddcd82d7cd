/* See ta_env.h. */
#include "ta_env.h"

#include <stdio.h>
#include <string.h>

static const char *const ta_option_names[] = {
    "tp", "cp", "ep", "dp", "pp", "rank-order", "topo-mode", "topo-max-wait", "nccl-hints",
};

const char *ta_option_from_env_name(const char *env_name, size_t len)
{
	size_t i, k;

	for (i = 0; i < sizeof(ta_option_names) / sizeof(ta_option_names[0]); i++) {
		const char *n = ta_option_names[i];
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

int ta_options_from_env(topoaware_options_t *opts, char *const *env, uint32_t count, char *err, size_t errlen)
{
	const size_t plen = strlen(TA_ENV_PREFIX);
	char why[TOPOAWARE_ERR_LEN];
	uint32_t i;

	topoaware_options_init(opts);
	if (!env)
		return 0;
	if (count > TA_ENV_MAX_ENTRIES)
		count = TA_ENV_MAX_ENTRIES;
	for (i = 0; i < count; i++) {
		const char *e = env[i], *eq, *name;
		unsigned bit;

		if (!e || strncmp(e, TA_ENV_PREFIX, plen) != 0)
			continue;
		eq = strchr(e + plen, '=');
		if (!eq) {
			snprintf(err, errlen, "job environment entry %.80s has no value", e);
			return -1;
		}
		name = ta_option_from_env_name(e + plen, (size_t)(eq - (e + plen)));
		if (!name) {
			snprintf(err, errlen,
				 "unknown topoaware option '%.*s' in the job's SPANK environment; the options are "
				 "--tp, --cp, --ep, --dp, --pp, --rank-order, --topo-mode, --topo-max-wait and --nccl-hints",
				 (int)((eq - (e + plen)) > 64 ? 64 : (eq - (e + plen))), e + plen);
			return -1;
		}
		bit = topoaware_option_bit(name);
		if (opts->set & bit) {
			snprintf(err, errlen, "--%s is given twice in the job's SPANK environment; give it once", name);
			return -1;
		}
		if (topoaware_options_set(opts, name, eq + 1, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "--%s=%.64s: %s", name, eq + 1, why);
			return -1;
		}
	}
	return 0;
}
