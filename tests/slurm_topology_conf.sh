#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A real slurmctld (Debian's 22.05) must accept our topology/tree topology.conf: for each
# hand-built topology (fat tree with a stray host and an unreached switch, 3 levels with pods,
# rail-optimized, dragonfly, and a wide tree with long uncompressible lines), start slurmctld with
# TopologyPlugin=topology/tree, then check its log has no topology error and that
# `scontrol show topology` lists every switch we wrote, with the nodes we wrote under the leaves.
# Needs root (SlurmUser=root, no munge) and slurmctld; skipped (77) otherwise.
set -u

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
gen="$top_builddir/tests/gen_topology_conf"
slurmctld=${SLURMCTLD:-/usr/sbin/slurmctld}
scontrol=${SCONTROL:-$(command -v scontrol || echo /usr/bin/scontrol)}

. "$top_srcdir/tests/lib/common.sh"
ta_require_daemon_tests  # root, not inside make distcheck
if [ ! -x "$slurmctld" ]; then echo "SKIP: $slurmctld not installed (apt-get install slurmctld)"; exit 77; fi
if [ ! -x "$scontrol" ]; then echo "SKIP: scontrol not installed (apt-get install slurm-client)"; exit 77; fi
if [ ! -x "$gen" ]; then echo "FAIL: $gen not built (make check builds it)"; exit 1; fi
plugdir=$(dirname "$(find /usr/lib -name topology_tree.so -path '*slurm*' 2>/dev/null | head -1)")
if [ -z "$plugdir" ] || [ "$plugdir" = . ]; then echo "SKIP: topology_tree.so not found"; exit 77; fi

work=$(mktemp -d /tmp/topoaware-slurmtopo.XXXXXX)
pid=""
stop() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  pid=""
}
trap 'stop; rm -rf "$work"' EXIT

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# A free controller port in a range unlikely to clash with other tests (17xxx is used by slurmd).
pick_port() {
  local p
  for p in $(seq $((26000 + $$ % 500)) 26999); do
    if port_free "$p"; then echo "$p"; return 0; fi
  done
  return 1
}

# scontrol expands host lists only with some configuration to read.
cat > "$work/expand.conf" <<EOF
ClusterName=expand
SlurmctldHost=localhost
AuthType=auth/none
CredType=cred/none
NodeName=x1
PartitionName=p Nodes=x1
EOF
expand() { SLURM_CONF="$work/expand.conf" "$scontrol" show hostnames "$1" 2>/dev/null; }

failures=0
check() {  # kind, warnings expected for this topology (regex or ""), one of them required
  local kind=$1 allowed=$2 required=${3:-} d="$work/$1"
  mkdir -p "$d/state" "$d/spool"
  if [ ! -f "$d/topology.conf" ]; then
    "$gen" "$kind" "$d" || { echo "FAIL $kind: generator failed"; failures=$((failures + 1)); return; }
  fi
  # From a topology.conf alone (topoaware's output): the hosts are those of the Nodes= lists.
  if [ ! -f "$d/hosts" ]; then
    sed -n 's/^SwitchName=[^ ]* Nodes=\([^ ]*\).*/\1/p' "$d/topology.conf" | paste -sd, - > "$d/hosts"
    sed -n 's/^SwitchName=\([^ ]*\).*/\1/p' "$d/topology.conf" > "$d/switches"
  fi
  local port nodes count
  port=$(pick_port) || { echo "FAIL: no free port"; failures=$((failures + 1)); return; }
  nodes=$(cat "$d/hosts")
  count=$(expand "$nodes" | wc -l)
  if [ "$count" -lt 1 ]; then echo "FAIL $kind: no hosts in $d/topology.conf"; failures=$((failures + 1)); return; fi
  cat > "$d/slurm.conf" <<EOF
ClusterName=topotest
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1000))
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmctldDebug=debug
ReturnToService=2
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
TopologyPlugin=topology/tree
PluginDir=$plugdir
NodeName=$nodes NodeHostname=localhost NodeAddr=127.0.0.1 Port=17001-$((17000 + count)) CPUs=1 State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES State=UP
EOF
  "$slurmctld" -D -i -f "$d/slurm.conf" > "$d/stdout" 2>&1 &
  pid=$!
  local up=""
  for _ in $(seq 100); do
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    if SLURM_CONF="$d/slurm.conf" "$scontrol" ping 2>/dev/null | grep -q 'is UP'; then up=1; break; fi
    sleep 0.1
  done
  if [ -z "$up" ]; then
    echo "FAIL $kind: slurmctld did not come up"; tail -20 "$d/slurmctld.log" "$d/stdout" 2>/dev/null
    failures=$((failures + 1)); stop; return
  fi
  SLURM_CONF="$d/slurm.conf" "$scontrol" show topology > "$d/show" 2>&1
  stop
  # Topology problems slurmctld reports (topology_tree.c and the config parser).
  local bad
  bad=$(grep -iE 'topology|switch|block|parse|line .*too long|fatal' "$d/slurmctld.log" "$d/stdout" |
        grep -iE 'error|fatal|warning|not a tree|lack access|multiple leaf|no switch can reach' |
        { if [ -n "$allowed" ]; then grep -vE "$allowed"; else cat; fi })
  if [ -n "$bad" ]; then
    echo "FAIL $kind: slurmctld reported:"; echo "$bad"; failures=$((failures + 1)); return
  fi
  if [ -n "$required" ] && ! grep -qE "$required" "$d/slurmctld.log" "$d/stdout"; then
    echo "FAIL $kind: expected a warning matching /$required/ (what our comment lines say Slurm logs)"
    failures=$((failures + 1)); return
  fi
  local name missing=0
  while read -r name; do
    if ! grep -qE "^SwitchName=$name( |$)" "$d/show"; then
      echo "FAIL $kind: switch $name missing from scontrol show topology"; missing=1
    fi
  done < "$d/switches"
  # Each leaf line's nodes as Slurm expanded them equal ours.
  while read -r line; do
    name=${line#SwitchName=}; name=${name%% *}
    local ours theirs
    ours=$(SLURM_CONF="$d/slurm.conf" "$scontrol" show hostnames "${line##*Nodes=}" 2>/dev/null | sort)
    theirs=$(grep -E "^SwitchName=$name " "$d/show" | sed -n 's/.*Nodes=\([^ ]*\).*/\1/p')
    theirs=$(SLURM_CONF="$d/slurm.conf" "$scontrol" show hostnames "$theirs" 2>/dev/null | sort)
    if [ "$ours" != "$theirs" ] || [ -z "$ours" ]; then echo "FAIL $kind: nodes of $name differ"; missing=1; fi
  done < <(grep '^SwitchName=.* Nodes=' "$d/topology.conf")
  if [ "$missing" != 0 ]; then failures=$((failures + 1)); sed 's/^/  show: /' "$d/show" | head -20; return; fi
  echo "ok $kind: $(wc -l < "$d/switches") switches accepted by slurmctld $("$slurmctld" -V | awk '{print $2}')"
}

# The fat tree has a host under no leaf (lost1): Slurm warns about it, as our comment line says.
check fat 'lack access to 1 nodes: lost1|no switch can reach all nodes' 'lack access to 1 nodes: lost1'
check pods ''
check rail ''
check dragonfly ''
check wide ''

# Real dumps through the topoaware command (when it is built): every saved ibnetdiscover fixture.
topoaware="$top_builddir/topoaware"
fixtures="${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/fixtures/ib"
if [ -x "$topoaware" ]; then
  for dump in "$fixtures"/*.ibnetdiscover "$fixtures"/*.ibnetdiscover-p; do
    [ -f "$dump" ] || continue
    kind=$(basename "$dump"); d="$work/$kind"; mkdir -p "$d"
    map=(); [ -f "${dump%.*}.node-name-map" ] && map=(--node-name-map "${dump%.*}.node-name-map")
    # Unnamed HCAs kept and partial dumps accepted: what matters here is what Slurm makes of the
    # tree, for as many real fabrics as possible (the parser's own tests judge the dumps).
    if ! "$topoaware" discover -q --keep-unnamed --allow-partial --ibnetdiscover "$dump" "${map[@]}" -f tree \
        -o "$d/topology.conf" 2> "$d/err"; then
      echo "# $kind: topoaware gives no tree for it: $(head -1 "$d/err")"; continue
    fi
    # A fabric in parts (as our comment says) makes Slurm warn that no switch reaches all nodes.
    allowed=''
    grep -q '^# The fabric is in .* parts' "$d/topology.conf" && allowed='no switch can reach all nodes'
    check "$kind" "$allowed" "$allowed"
  done
else
  echo "# $topoaware not built: fixtures not checked"
fi

[ "$failures" = 0 ] || exit 1
exit 0
