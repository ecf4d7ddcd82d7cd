#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Parse speed: `topoaware discover --ibnetdiscover` on a generated dump of 10,240 hosts and 704
# switches (3-level fat tree: 20 pods of 16 leaves x 32 hosts, 16 spines per pod, 64 cores).
# Prints wall time and peak memory of N runs (default 5; median and max), and the same for
# reading the dump with `wc -l` and for `topoaware convert` of the resulting topology.json, as
# baselines from the same run (this machine is shared: compare ratios). Aim: under 1 s, 200 MB.
#
#   bench/parse_speed.sh [RUNS]     (make bench-parse)
set -euo pipefail
runs=${1:-5}
bin=${top_builddir:?}/topoaware
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-parse.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$bin" generate fat-tree --levels 3 --leaves 320 --leaves-per-pod 16 --hosts-per-leaf 32 --spines 16 \
  --uplinks 32 --cores 64 --core-uplinks 32 --ibnetdiscover "$work/dump.txt"
echo "dump: $(wc -l <"$work/dump.txt") lines, $(du -h "$work/dump.txt" | cut -f1)," \
  "$(grep -c '^Switch' "$work/dump.txt") switches, $(grep -c '^Ca' "$work/dump.txt") CAs"
"$bin" discover --ibnetdiscover "$work/dump.txt" -o "$work/topology.json" -f json

# Wall time suffers from whatever else runs on the machine; CPU time (user + system) much less.
measure() {  # measure LABEL CMD...: median wall and CPU seconds, peak resident memory
  local label=$1; shift
  local walls=() cpus=() mem=0 w u s m
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$work/time" -f '%e %U %S %M' "$@" >/dev/null 2>&1
    read -r w u s m <"$work/time"
    walls+=("$w"); cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')"); [ "$m" -gt "$mem" ] && mem=$m
  done
  median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
  printf '%-36s wall %6.3f s   cpu %6.3f s   peak %6.1f MB\n' "$label" \
    "$(median "${walls[@]}")" "$(median "${cpus[@]}")" "$(awk -v m="$mem" 'BEGIN{print m / 1024}')"
}
echo "runs: $runs"
measure "wc -l (reading the dump)" wc -l "$work/dump.txt"
measure "topoaware discover --ibnetdiscover" "$bin" discover --ibnetdiscover "$work/dump.txt" -f json
measure "topoaware convert (json -> json)" "$bin" convert "$work/topology.json" -f json
echo "aim: discover under 1 s and 200 MB on this machine (2 cores, shared)"
