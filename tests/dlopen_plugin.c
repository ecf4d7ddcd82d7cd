/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dlopen_plugin now|lazy FILE [-p LIB]... [SYMBOL...]: loads each LIB with RTLD_NOW|RTLD_GLOBAL
 * (e.g. libslurmfull.so, which srun, sbatch and slurmstepd have loaded when Slurm opens a plugin),
 * then opens FILE with dlopen (now = RTLD_NOW, lazy = RTLD_LAZY) as Slurm's plugin loader does,
 * and checks with dlsym that each SYMBOL is there. Prints dlerror() and exits 1 on failure. Used
 * by tests/test_plugin_symbols.sh. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	void *h;
	int i, rc = 0, nsym = 0;

	if (argc < 3 || (strcmp(argv[1], "now") && strcmp(argv[1], "lazy"))) {
		fprintf(stderr, "usage: %s now|lazy FILE [-p LIB]... [SYMBOL...]\n", argv[0]);
		return 2;
	}
	for (i = 3; i + 1 < argc && !strcmp(argv[i], "-p"); i += 2) {
		if (!dlopen(argv[i + 1], RTLD_NOW | RTLD_GLOBAL)) {
			fprintf(stderr, "preload %s: %s\n", argv[i + 1], dlerror());
			return 2;
		}
	}
	h = dlopen(argv[2], (strcmp(argv[1], "now") ? RTLD_LAZY : RTLD_NOW) | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "dlopen(%s, %s): %s\n", argv[2], argv[1], dlerror());
		return 1;
	}
	for (; i < argc; i++, nsym++) {
		dlerror();
		if (!dlsym(h, argv[i])) {
			const char *e = dlerror();
			fprintf(stderr, "%s: no symbol %s (%s)\n", argv[2], argv[i], e ? e : "NULL value");
			rc = 1;
		}
	}
	if (rc == 0)
		printf("dlopen(%s, %s): ok, %d symbols found\n", argv[2], argv[1], nsym);
	return rc;
}
