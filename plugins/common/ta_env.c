/* See ta_env.h. */
#include "ta_env.h"

#include <stdio.h>
#include <string.h>

static const char *const ta_option_names[] = {
    "tp", "cp", "ep", "dp", "pp", "rank-order", "topo-mode", "topo-max-wait", "nccl-hints",
};

/* At most n bytes of s (fewer at a NUL) as printable ASCII, '?' for every other byte, into out:
 * the entries quoted in messages come from a user's job environment, and the messages go to
 * slurmctld's log and the user's terminal. Returns out. */
static const char *ta_shown(const char *s, size_t n, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; i < n && s[i] && i + 1 < outlen; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	out[i] = '\0';
	return out;
}

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
	char why[TOPOAWARE_ERR_LEN], shown[128];
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
			snprintf(err, errlen, "job environment entry %s has no value", ta_shown(e, 80, shown, sizeof(shown)));
			return -1;
		}
		name = ta_option_from_env_name(e + plen, (size_t)(eq - (e + plen)));
		if (!name) {
			snprintf(err, errlen,
				 "unknown topoaware option '%s' in the job's SPANK environment; the options are "
				 "--tp, --cp, --ep, --dp, --pp, --rank-order, --topo-mode, --topo-max-wait and --nccl-hints",
				 ta_shown(e + plen, (size_t)(eq - (e + plen)) > 64 ? 64 : (size_t)(eq - (e + plen)), shown,
					  sizeof(shown)));
			return -1;
		}
		bit = topoaware_option_bit(name);
		if (opts->set & bit) {
			snprintf(err, errlen, "--%s is given twice in the job's SPANK environment; give it once", name);
			return -1;
		}
		if (topoaware_options_set(opts, name, eq + 1, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "--%s=%s: %s", name, ta_shown(eq + 1, 64, shown, sizeof(shown)), why);
			return -1;
		}
	}
	return 0;
}
