#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Multi-node NVLink domains on a real slurmctld: a generated fabric of 2 leaves x 2 NVLink domains x
# 4 trays of 4 GPUs (topoaware generate --nvlink-domain-size 4 --nvlink-gpus-per-node 4; n0001-n0004,
# n0005-n0008 under leaf 1, n0009-n0012, n0013-n0016 under leaf 2), GPUs as character devices, with
# select/cons_tres_topoaware, job_submit/topoaware and spank_topoaware:
#   n0001 busy (its domain keeps 3 free trays: one whole TP group of 2 only);
#   A: --tp=8 --dp=2 (4 trays) gets one whole domain, each TP group of 2 trays inside it;
#   B: --tp=16 (4 trays, one TP group) gets another whole domain;
#   D: --tp=8 (2 trays) gets a pair of the busy node's domain (the tightest that holds it);
#   tp=32 (8 trays) is refused at submit with the sizes that fit (a domain has 16 GPUs);
#   the tasks of A get NCCL_MNNVL_ENABLE=1 and their domain in TOPOAWARE_NVLINK_DOMAIN.
# The TP groups are read from each job's rank map (TOPOAWARE_RANKMAP).
set -euo pipefail
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib/slurm_cluster.sh"
ta_require_daemon_tests
ta_require_cmd slurmctld slurmctld
ta_require_cmd slurmd slurmd
b=${top_builddir:-.}
b=$(cd "$b" && pwd)
[ -f "$b/plugins/select/.libs/select_cons_tres_topoaware.so" ] ||
  ta_skip "select plugins not built (configure --with-slurm-source)"
[ -f "$b/plugins/job_submit/.libs/job_submit_topoaware.so" ] ||
  ta_skip "job_submit_topoaware.so not built (configure --with-slurm-source=DIR)"
[ -f "$b/plugins/spank/.libs/spank_topoaware.so" ] || ta_skip "spank_topoaware.so not built"
[ -x "$b/topoaware" ] || ta_fail "topoaware (the command) not built"

work=$(mktemp -d "${TMPDIR:-/tmp}/ta-nvlink.XXXXXX")
ta_on_exit "rm -rf '$work'"
mkdir -p "$work/plugins" "$work/out"
chmod 1777 "$work/out"
for so in "$b"/plugins/select/.libs/*.so "$b/plugins/job_submit/.libs/job_submit_topoaware.so"; do
  ln -s "$so" "$work/plugins/$(basename "$so")"
done
# A private state_dir: concurrent test clusters all number jobs from 1 (spank_topoaware(8)).
mkdir -m 0755 "$work/state"
echo "required $b/plugins/spank/.libs/spank_topoaware.so state_dir=$work/state" >"$work/plugstack.conf"
"$b/topoaware" generate fat-tree --leaves 2 --hosts-per-leaf 8 --nvlink-domain-size 4 --nvlink-gpus-per-node 4 \
  --json "$work/topology.json" >/dev/null || ta_fail "topoaware generate failed"
grep -q nvlink_domains "$work/topology.json" || ta_fail "generated topology has no NVLink domains"
printf '%s\n' 'SwitchName=leaf1 Nodes=n[0001-0008]' 'SwitchName=leaf2 Nodes=n[0009-0016]' \
  'SwitchName=spine Switches=leaf[1-2]' >"$work/topology.conf"
cluster_start --nodes 16 --width 4 --gpus 4 --plugin-dir "$work/plugins" --plugstack "$work/plugstack.conf" \
  --topology "$work/topology.conf" --conf "SelectType=select/cons_tres_topoaware" \
  --conf "JobSubmitPlugins=topoaware" --file "topology.json=$work/topology.json"

domain() { local n=$((10#${1#n})); echo $(((n - 1) / 4)); }  # the NVLink domain of nNNNN (0..3)

# job TAG SBATCH-ARGS...: a layout job whose batch script keeps its rank map and runs one step
# printing each task's host, TP rank and NVLink hints; waits until it runs; prints its id.
job() {
  local tag=$1 id
  shift
  cat >"$work/out/$tag.sh" <<SH
#!/bin/bash
cp "\$TOPOAWARE_RANKMAP" $work/out/$tag.rankmap
srun -n \$SLURM_NTASKS bash -c 'echo "\$SLURMD_NODENAME \${TOPOAWARE_TP_RANK-} \${NCCL_MNNVL_ENABLE-unset} \${NCCL_CUMEM_ENABLE-unset} \${TOPOAWARE_NVLINK_DOMAIN-unset}"' >$work/out/$tag.env
sleep 600
SH
  id=$(cluster_run sbatch --parsable --exclusive "$@" -o "$work/out/$tag.out" "$work/out/$tag.sh")
  cluster_wait_job "$id" 60 RUNNING >/dev/null || ta_fail "job $tag ($*) did not start: $(cluster_run scontrol -o show job "$id")"
  echo "$id"
}

# tp_groups TAG: every TP group of the rank map (ranks with the same cp, dp, pp) on one domain's
# nodes; prints "domains: D..." (the domains the job uses).
tp_groups() {
  local f=$work/out/$1.rankmap deadline=$((SECONDS + 30)) key hosts h d0 d
  until [ -s "$f" ]; do
    [ "$SECONDS" -lt "$deadline" ] || ta_fail "job $1 wrote no rank map: $(cat "$work/out/$1.out" 2>/dev/null)"
    sleep 0.5
  done
  while read -r key hosts; do
    d0=""
    for h in ${hosts//,/ }; do
      d=$(domain "$h")
      [ -z "$d0" ] || [ "$d" = "$d0" ] || ta_fail "job $1: TP group $key spans NVLink domains: $hosts"
      d0=$d
    done
  done < <(awk '!/^#/ {
      for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      k = "cp=" v["cp"] ",dp=" v["dp"] ",pp=" v["pp"]; g[k] = g[k] (g[k] ? "," : "") v["host"]
    } END { for (k in g) print k, g[k] }' "$f")
  echo "domains: $(awk '!/^#/ { for (i = 1; i <= NF; i++) if ($i ~ /^host=/) print substr($i, 6) }' "$f" |
    while read -r h; do domain "$h"; done | sort -u | tr '\n' ' ')"
}

busy=$(cluster_run sbatch --parsable --exclusive -w n0001 -N1 -o /dev/null --wrap 'sleep 600')
cluster_wait_job "$busy" 60 RUNNING >/dev/null

# tp=32 is 8 trays: no domain (4 trays, 16 GPUs) holds it.
if out=$(cluster_run sbatch --tp=32 -o /dev/null --wrap true 2>&1); then
  ta_fail "sbatch --tp=32 was accepted: $out"
fi
grep -q 'tp=32 spans 8 nodes of 4 GPUs, which must lie in one NVLink domain' <<<"$out" &&
  grep -q 'the largest NVLink domain here has 16 GPUs (4 nodes of 4): use tp=1, 2 or 4, or a multiple of 4 up to 16' <<<"$out" ||
  ta_fail "sbatch --tp=32: $out"
ta_pass "tp=32 refused at submit: $(grep -o 'tp=32 spans.*' <<<"$out" | head -1)"

a=$(job A --tp=8 --dp=2)
da=$(tp_groups A)
[ "$da" = "domains: 1 " ] || ta_fail "A (tp=8 dp=2, 4 trays) got $da, expected the first whole free domain (1)"
ta_pass "A tp=8 dp=2: one whole domain, each TP group of 2 trays inside it ($da)"
deadline=$((SECONDS + 30))
until [ "$(wc -l <"$work/out/A.env" 2>/dev/null || echo 0)" -ge 16 ]; do
  [ "$SECONDS" -lt "$deadline" ] || ta_fail "A's step printed no task environment: $(cat "$work/out/A.out")"
  sleep 0.5
done
awk '$3 != "1" || $4 != "1" || $5 !~ /^00000000-0000-4000-8000-[0-9a-f]+:1$/' "$work/out/A.env" | grep -q . &&
  ta_fail "A's tasks lack the MNNVL hints: $(cat "$work/out/A.env")"
ta_pass "A's tasks: NCCL_MNNVL_ENABLE=1, NCCL_CUMEM_ENABLE=1, TOPOAWARE_NVLINK_DOMAIN=$(awk 'NR == 1 {print $5}' "$work/out/A.env")"

bjob=$(job B --tp=16)
db=$(tp_groups B)
[ "$db" = "domains: 2 " ] || ta_fail "B (tp=16, one TP group of 4 trays) got $db, expected domain 2"
ta_pass "B tp=16: its TP group on one whole domain ($db)"

d=$(job D --tp=8)
dd=$(tp_groups D)
[ "$dd" = "domains: 0 " ] || ta_fail "D (tp=8, 2 trays) got $dd, expected the busy node's domain (0, 3 trays free)"
ta_pass "D tp=8: a pair of the partly busy domain, leaving domain 3 whole ($dd)"
cluster_run scancel "$a" "$bjob" "$d" "$busy"
