/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a topology costs in memory where the plugins load it, measured through the same C API calls:
 * slurmctld loads the file (topoaware_topo_load) and maps its node table onto it
 * (topoaware_placer_create, Slurm's node names in table order); each node's slurmstepd loads it and
 * asks for its ranks. Prints, after each step, the seconds it took, the heap in use (glibc's
 * mallinfo2: what the topology holds), the process's resident memory (freed heap that malloc kept
 * included) and its peak (VmHWM: what the load needs at its height), in MB.
 *
 *   bench/topology_memory TOPOLOGY.json HOSTS [PREFIX [WIDTH]]
 *
 * HOSTS node names PREFIX<zero-padded number> (default "n", width max(4, digits of HOSTS), as
 * `topoaware generate` names them) stand for Slurm's node table; the names the topology lacks are
 * counted (0 expected with a generated file). Then the select plugin's last good copy is saved
 * (topoaware_topo_save) and its own peak printed. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topoaware_c.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* VmRSS or VmHWM of this process in MB, from /proc/self/status; -1 if unreadable. */
static double status_mb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  double mb = -1;
  size_t n = strlen(key);
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, n) == 0 && line[n] == ':') mb = strtod(line + n + 1, NULL) / 1024.0;
  fclose(f);
  return mb;
}

static void report(const char *step, double t0) {
  struct mallinfo2 mi = mallinfo2();
  printf("%-28s %8.2f s  in use %8.1f MB  rss %8.1f MB  peak %8.1f MB\n", step, now() - t0,
         (double)(mi.uordblks + mi.hblkhd) / 1048576.0, status_mb("VmRSS"), status_mb("VmHWM"));
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s TOPOLOGY.json HOSTS [PREFIX [WIDTH]]\n", argv[0]);
    return 2;
  }
  const char *path = argv[1], *prefix = argc > 3 ? argv[3] : "n";
  unsigned long hosts = strtoul(argv[2], NULL, 10);
  int width = 4;
  for (unsigned long h = hosts; h >= 10000; h /= 10) width++;
  if (argc > 4) width = atoi(argv[4]);
  char err[1024];
  report("start", now());

  double t0 = now();
  topoaware_topo_t *topo = topoaware_topo_load(path, err, sizeof err);
  if (!topo) {
    fprintf(stderr, "topoaware_topo_load: %s\n", err);
    return 1;
  }
  report("topology loaded", t0);

  char **names = calloc(hosts, sizeof *names);
  if (!names) return 1;
  for (unsigned long i = 0; i < hosts; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "%s%0*lu", prefix, width, i + 1);
    names[i] = strdup(buf);
  }
  report("node table names", now());
  t0 = now();
  topoaware_placer_t *placer = topoaware_placer_create(topo, (const char *const *)names, (uint32_t)hosts, err,
                                                       sizeof err);
  if (!placer) {
    fprintf(stderr, "topoaware_placer_create: %s\n", err);
    return 1;
  }
  report("placer (node table mapped)", t0);
  printf("hosts in topology %u, node names missing from it %u\n", topoaware_topo_hosts(topo),
         topoaware_placer_missing(placer));
  /* The last good copy the select plugin keeps after each load. The peak is reset first (Linux's
   * clear_refs 5), so the peak printed is the save's own, the loaded topology included. */
  char dir[] = "/tmp/ta-memory-XXXXXX", copy[64];
  if (!mkdtemp(dir)) return 1;
  snprintf(copy, sizeof copy, "%s/last-good.json", dir);
  FILE *cr = fopen("/proc/self/clear_refs", "w");
  if (cr) {
    fputs("5", cr);
    fclose(cr);
  }
  const double rss_before = status_mb("VmRSS");
  t0 = now();
  if (topoaware_topo_save(topo, copy, err, sizeof err)) {
    fprintf(stderr, "topoaware_topo_save: %s\n", err);
    return 1;
  }
  report("last good copy saved", t0);
  printf("the save's peak above the resident memory before it: %.1f MB\n", status_mb("VmHWM") - rss_before);
  unlink(copy);
  rmdir(dir);
  topoaware_placer_free(placer);
  topoaware_topo_free(topo);
  for (unsigned long i = 0; i < hosts; i++) free(names[i]);
  free(names);
  report("freed", now());
  return 0;
}
