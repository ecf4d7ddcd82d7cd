# SPDX-License-Identifier: GPL-2.0-or-later
# Shell helpers of the ibsim route tests (tests/ibsim_routes.sh, tests/ibsim_netsim_routes.sh): a
# topology.json's routes (discover --routes) checked against infiniband-diags' own readings of the
# simulated fabric, ibroute (a switch's table) and ibtracert (a path), parsed here independently.
# Sourced after tests/lib/common.sh and tools/lib/ibsim.sh (IBSIM_SOCKNAME, UMAD2SIM_LIB); the
# caller sets work (a scratch folder) and bin (the topoaware command).

# A command against the simulated fabric (libibumad through umad2sim).
ib_sim() { timeout 120 env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" LD_PRELOAD="$UMAD2SIM_LIB" "$@"; }

# The base LIDs of hosts' first ports, from topology.json's routes ("ports": [guid, port, LID, LMC]).
ib_lids() {  # topology.json host...
  python3 - "$@" <<'EOF'
import json, sys
topo = json.load(open(sys.argv[1]))
lid = {(p[0], p[1]): p[2] for sn in topo["routes"]["subnets"] for p in sn["ports"]}
port = {h["name"]: h["ports"][0] for h in topo["hosts"]}
print(*(lid[(port[n]["ca_guid"], port[n]["port"])] for n in sys.argv[2:]))
EOF
}

# ibtracert's path, one line per switch: "GUID OUT" (with a third argument "in": "GUID IN OUT").
# ibtracert writes "[out] -> switch port {guid}[in]": a switch is left by the [out] of the next line.
ib_tracert_hops() {  # slid dlid [in]
  ib_sim ibtracert "$1" "$2" 2>/dev/null | python3 -c '
import re, sys
outs = re.findall(r"^\[(\d+)\] -> (switch|ca) port \{0x([0-9a-f]+)\}\[(\d+)\]", sys.stdin.read(), re.M)
assert outs and outs[-1][1] == "ca", "ibtracert did not reach a CA"
for i, (_, kind, guid, inp) in enumerate(outs[:-1]):
    if sys.argv[1:] == ["in"]:
        print("0x%016x %d %d" % (int(guid, 16), int(inp), int(outs[i + 1][0])))
    else:
        print("0x%016x %d" % (int(guid, 16), int(outs[i + 1][0])))' ${3:+"$3"}
}

# Every switch's table in topology.json against `ibroute <switch LID>`: the same (LID, port) pairs
# and the same top LID. With a count: that many switch tables. Prints what differs, returns 1.
ib_check_ibroute() {  # topology.json [switch count]
  local t=$1 want=${2:-} guid lid
  python3 -c '
import json, sys
for sn in json.load(open(sys.argv[1]))["routes"]["subnets"]:
    for s in sn["switches"]:
        print(s["guid"], s["lid"])' "$t" >"$work/switches"
  if [ -n "$want" ] && [ "$(wc -l <"$work/switches")" -ne "$want" ]; then
    echo "expected $want switch tables, got $(wc -l <"$work/switches")"
    return 1
  fi
  while read -r guid lid; do
    ib_sim ibroute "$lid" >"$work/ibroute.$lid" 2>/dev/null || { echo "ibroute $lid failed"; return 1; }
    python3 - "$t" "$guid" "$work/ibroute.$lid" <<'EOF' || return 1
import base64, json, re, sys
topo, guid, text = json.load(open(sys.argv[1])), int(sys.argv[2], 16), open(sys.argv[3]).read()
lft = next(base64.b64decode(s["lft"]) for sn in topo["routes"]["subnets"] for s in sn["switches"]
           if int(s["guid"], 16) == guid)
head = re.search(r"Unicast lids \[0x([0-9a-f]+)-0x([0-9a-f]+)\] of switch .* guid 0x([0-9a-f]+)", text)
assert head and int(head.group(3), 16) == guid, "ibroute answered for another switch"
# ibroute lists the LIDs a switch routes, "0x0021 005 : (Channel Adapter portguid ...)"; 255 = none.
theirs = {int(l, 16): int(p) for l, p in re.findall(r"^0x([0-9a-f]{4}) (\d{3}) ", text, re.M)}
ours = {l: p for l, p in enumerate(lft) if p != 255}
if not theirs or theirs != ours or int(head.group(2), 16) != len(lft) - 1:
    diff = sorted(set(theirs.items()) ^ set(ours.items()))[:5]
    sys.exit("switch %s: ibroute and topology.json differ (LID, port): %s" % (sys.argv[2], diff))
EOF
  done <"$work/switches"
}

# `topoaware route --format json` between two hosts against ibtracert between their LIDs: the same
# switches, entered and left by the same ports. Prints what differs, returns 1.
ib_check_pair() {  # topology.json src dst
  local t=$1 slid dlid
  read -r slid dlid < <(ib_lids "$t" "$2" "$3")
  ib_tracert_hops "$slid" "$dlid" in >"$work/theirs" || { echo "ibtracert $slid $dlid failed"; return 1; }
  "$bin" route -t "$t" "$2" "$3" --format json >"$work/route.json" || { echo "route $2 $3 failed"; return 1; }
  python3 -c '
import json, sys
mine = ["0x%016x %d %d" % (int(h["guid"], 16), h["in"], h["out"]) for h in json.load(open(sys.argv[1]))["hops"]]
theirs = open(sys.argv[2]).read().split("\n")[:-1]
sys.exit(0 if mine == theirs else "ibtracert %s, topoaware route %s" % (theirs, mine))' "$work/route.json" "$work/theirs"
}
