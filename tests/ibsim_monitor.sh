#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# topoaware monitor as a closed loop on a live ibsim fabric (the real libibumad/libibmad stack
# through umad2sim), with the expected answer known before the run:
#   4 leaves x 4 hosts, 2 spines, 2 uplinks per leaf, HDR 4x (200 Gb/s), cabling shuffled (seed 1),
#   routed once by OpenSM's ftree (opensm -o), discovered with --routes.
# A snapshot of running jobs (in the select plugin's status file):
#   101: dp ring n0001 n0005 n0002 n0006 (leaves 1 and 2 alternate: every edge leaves its leaf);
#   102: dp ring n0009 n0013 n0010 n0014 (leaves 3 and 4);
#   103: dp pair n0003 n0004 (inside leaf 1: no cross-leaf bytes);
#   104: placed without a layout (unknown traffic), on n0011 n0012 (leaf 3).
# The network judge (bench/netsim --link-loads, as-routed: it follows the same tables, but is its
# own model of the flows) gives the bytes every switch port sends in one step of all jobs, and of
# each job alone. Those loads, scaled so the busiest direction runs at 95% of 200 Gb/s over 10 s,
# are written into ibsim's PortCountersExtended PortXmitData; one direction no job takes gets a
# little traffic and 0.5 PortXmitWait tick per word. Then `monitor --once --state` (first run saves, second reports, the
# saved reading's time moved 10 s back) must report:
#   - congested: exactly the directions at >= 80% of the busiest (>= 0.8 utilization) and the one
#     with the wait ratio; each named with exactly the jobs the judge puts on it (none on the last);
#   - every job's share: 103 none (no cross-leaf bytes), 104 unknown traffic;
#   - the SymbolErrorCounter set to 25 on one port, as that port's only error;
# and after that: a counter reset (lower values) is a note, not a negative load; a spine unlinked
# mid-series is reported as ports not read, never a crash; Prometheus output parses; a link or a FIFO
# another user planted at --state or -o is refused, never read or written through, never read forever.
set -u
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tools/lib/ibsim.sh"
. "$top_srcdir/tests/lib/ib_routes.sh"
ta_require_daemon_tests
grep -q '^#define HAVE_SIMGRID 1' "$top_builddir/config.h" 2>/dev/null ||
  ta_skip "libsimgrid-dev not installed (bench/netsim, the judge this test takes its loads from, is not built)"
ta_require_cmd ibsim ibsim-utils
ta_require_cmd opensm opensm
ta_require_cmd python3 python3
[ -r "$UMAD2SIM_LIB" ] || ta_skip "$UMAD2SIM_LIB missing (package libumad2sim0)"
bin="$top_builddir/topoaware"
netsim="$top_builddir/bench/netsim/netsim"
[ -x "$netsim" ] || ta_fail "$netsim not built"
work=$(mktemp -d "${TMPDIR:-/tmp}/ta-ibmonitor.XXXXXX")
ta_on_exit "ibsim_stop; rm -rf '$work'"

"$bin" generate fat-tree --leaves 4 --hosts-per-leaf 4 --spines 2 --uplinks 2 --shuffle-cabling 1 \
  --net "$work/ft.net" >/dev/null || ta_fail "topoaware generate failed"
ibsim_start "$work/ft.net" "$work/sim" || ta_fail "ibsim did not start"
ib_sim opensm -o -R ftree -f "$work/opensm.log" >"$work/opensm.out" 2>&1 || ta_fail "opensm -o failed: $(tail -3 "$work/opensm.out")"
t="$work/topology.json"
ib_sim "$bin" discover --quiet --routes --json "$t" 2>"$work/discover.err" || ta_fail "discover --routes failed: $(tail -3 "$work/discover.err")"

# A topology without routes is refused before anything is read: no LIDs to ask, no paths to follow.
ib_sim "$bin" discover --quiet --json "$work/plain.json" 2>/dev/null || ta_fail "discover (no routes) failed"
rc=0
ib_sim "$bin" monitor --once --no-slurm -t "$work/plain.json" --status /dev/null 2>"$work/plain.err" >/dev/null || rc=$?
[ "$rc" -ne 0 ] && grep -q 'no forwarding tables' "$work/plain.err" ||
  ta_fail "a topology without routes: rc $rc, $(cat "$work/plain.err")"
ta_pass "a topology without routes is refused with the reason (rc $rc)"

now=$(date +%s)
status_job() {  # id layout nodes order
  printf '{"job_id": %s, "phase": "placed", "layout": "%s", "mode": "prefer", "gpus_per_node": 1, "placement": "ideal", "nodes": "%s", "node_order": "%s", "reason": "", "since": %s, "updated": %s}' \
    "$1" "$2" "$3" "$4" "$((now - 60))" "$now"
}
cat >"$work/status.json" <<JSON
{"schema": "topoaware-status/1", "plugin": "select/cons_tres_topoaware", "written_at": $now,
 "topology": {"file": "$t", "hash": "", "error": ""},
 "job_test": {"calls": 0, "total_us": 0, "max_us": 0, "layout_calls": 0, "layout_total_us": 0, "layout_max_us": 0},
 "jobs": [$(status_job 101 "tp=1,cp=1,ep=1,dp=4,pp=1,rank-order=tp-cp-ep-dp-pp" "n[0001-0002,0005-0006]" "n0001,n0005,n0002,n0006"),
          $(status_job 102 "tp=1,cp=1,ep=1,dp=4,pp=1,rank-order=tp-cp-ep-dp-pp" "n[0009-0010,0013-0014]" "n0009,n0013,n0010,n0014"),
          $(status_job 103 "tp=1,cp=1,ep=1,dp=2,pp=1,rank-order=tp-cp-ep-dp-pp" "n[0003-0004]" "n0003,n0004"),
          $(status_job 104 "" "n[0011-0012]" "")]}
JSON

# The judge's loads: all jobs at once, and each alone (which jobs cross which direction).
snap() {  # name nodes... -> netsim snapshot of one dp ring
  local name=$1
  shift
  local nodes
  nodes=$(printf '"%s",' "$@")
  echo "{\"name\": \"$name\", \"layout\": \"tp=1,dp=$#\", \"nodes\": [${nodes%,}], \"dp_bytes\": 1e9}"
}
j101=$(snap 101 n0001 n0005 n0002 n0006)
j102=$(snap 102 n0009 n0013 n0010 n0014)
j103=$(snap 103 n0003 n0004)
echo "{\"jobs\": [$j101, $j102, $j103]}" >"$work/all.json"
for j in 101 102 103; do
  v=j$j
  echo "{\"jobs\": [${!v}]}" >"$work/job$j.json"
done
for s in all job101 job102 job103; do
  "$netsim" --topology "$t" --snapshot "$work/$s.json" --routing as-routed --link-loads --format json \
    >"$work/loads-$s.json" 2>"$work/netsim-$s.err" || ta_fail "netsim $s failed: $(tail -3 "$work/netsim-$s.err")"
done

# Counter values (and the expected answer) from the judge's loads.
python3 - "$work" "$t" "$work/ft.net" <<'EOF' || ta_fail "cannot derive counters from the judge's loads"
import json, re, sys
work, topo_path, net = sys.argv[1:4]
ids = dict(re.findall(r'^Switch\s+\d+\s+"([^"]+)"\s*#\s*"([^"]+)"', open(net).read(), re.M))
sim_id = {name: i for i, name in ids.items()}
def loads(name):  # (switch, port) -> bytes it sends per step
    out = {}
    for l in json.load(open(f"{work}/loads-{name}.json"))["link_loads"]["as-routed"]:
        ends = l["link"].split(":", 1)[1]
        if "-" not in ends:
            continue  # a host's cable: its switch end is not one of the leaf-to-spine directions tested
        lo, hi = ends.split("-")
        for (sw, port), k in ((lo.split(":"), "up_bytes"), (hi.split(":"), "down_bytes")):
            if l[k] > 0:
                out[(sw, int(port))] = out.get((sw, int(port)), 0) + l[k]
    return out
total = loads("all")
peak = max(total.values())
words = {k: int(v / peak * 0.95 * 200e9 * 10 / 32) for k, v in total.items()}
hot = {k for k, v in total.items() if v >= 0.8 * peak}
# One direction that carries little (or nothing) gets waits: congested by the wait ratio alone.
# A switch-to-switch direction the judge puts no job on gets unknown traffic (1.6% of its rate)
# with half a PortXmitWait tick per word: congested by the wait ratio alone, with no job behind it.
topo = json.load(open(topo_path))
name = {s["guid"]: s["name"] for s in topo["switches"]}
idle = sorted((name[l[e]], p[i]) for l in topo["links"] if l["a"] in name and l["b"] in name
              for p in l["ports"] for i, e in enumerate("ab") if (name[l[e]], p[i]) not in total)
if not idle:
    sys.exit("the judge loads every switch-to-switch direction: none left for the wait ratio")
wait_dir = idle[0]
words[wait_dir] = 10**9
wait = words[wait_dir] // 2
jobs = {k: sorted(j for j in ("101", "102", "103") if k in loads("job" + j)) for k in hot | {wait_dir}}
assert not jobs[wait_dir]
with open(f"{work}/set.console", "w") as f:
    for (sw, port), w in sorted(words.items()):
        f.write(f'PerformanceSet "{sim_id[sw]}"[{port}] PortCountersExtended.PortXmitData={w}\n')
    sw, port = wait_dir
    f.write(f'PerformanceSet "{sim_id[sw]}"[{port}] PortCounters.PortXmitWait={wait}\n')
    # And a cable going bad on the first hot direction: its SymbolErrorCounter rises by 25.
    bad = sorted(hot)[0]
    f.write(f'PerformanceSet "{sim_id[bad[0]]}"[{bad[1]}] PortCounters.SymbolErrorCounter=25\n')
json.dump({"hot": sorted(f"{s}:{p}" for s, p in hot | {wait_dir}),
           "jobs": {f"{s}:{p}": v for (s, p), v in jobs.items()},
           "wait": f"{wait_dir[0]}:{wait_dir[1]}", "errored": f"{bad[0]}:{bad[1]}", "wait_ratio": wait / words[wait_dir]}, open(f"{work}/expect.json", "w"), indent=1)
print(len(hot), "hot directions by load, 1 by wait")
EOF

mon() { ib_sim "$bin" monitor --once --no-slurm -q -t "$t" --status "$work/status.json" --state "$work/state.json" "$@"; }
mon 2>"$work/first.err" >"$work/first.out" || ta_fail "monitor --once (first reading) failed: $(cat "$work/first.err")"
[ -s "$work/state.json" ] && grep -q 'first reading saved' "$work/first.err" ||
  ta_fail "the first --once run saved no state: $(cat "$work/first.err")"
ta_pass "first --once run saves the counters and reports nothing yet"

# The counters move as the judge says, over 10 s.
while IFS= read -r line; do ibsim_console "$line" >/dev/null; done <"$work/set.console"
back10() { python3 -c 'import json,sys,time; s=json.load(open(sys.argv[1])); s["time"]=time.time()-10; json.dump(s, open(sys.argv[1],"w"))' "$work/state.json"; }
back10
mon --format json >"$work/report.json" 2>"$work/report.err" || ta_fail "monitor --once failed: $(cat "$work/report.err")"
python3 - "$work/report.json" "$work/expect.json" <<'EOF' || ta_fail "the report does not match the judge's loads"
import json, sys
r, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
key = lambda d: f'{d["switch"]}:{d["port"]}'
got = {key(d): d for d in r["directions"] if d.get("congested")}
if sorted(got) != want["hot"]:
    sys.exit(f"congested {sorted(got)}, judge says {want['hot']}")
for k, d in got.items():
    named = sorted(str(j["job"]) for j in d.get("jobs", []))
    if named != want["jobs"][k]:
        sys.exit(f"{k}: jobs {named}, judge says {want['jobs'][k]}")
# A ratio of two counters: exact whatever the interval (MAD traffic of the test itself aside).
if abs(got[want["wait"]]["wait_ratio"] - want["wait_ratio"]) > 0.01 * want["wait_ratio"]:
    sys.exit(f"wait ratio {got[want['wait']]['wait_ratio']} on {want['wait']}, set {want['wait_ratio']}")
bad = [d for d in r["directions"] if not d["measured"]]
if bad or r["ports_measured"] != r["ports_sampled"]:
    sys.exit(f"{len(bad)} directions not measured: {bad[:2]}")
errs = {key(d): d["errors"] for d in r["directions"] if d.get("errors")}
if errs != {want["errored"]: {"SymbolErrorCounter": 25}} or r["ports_with_errors"] != 1:
    sys.exit(f"error counters: {errs}")
jobs = {j["job"]: j for j in r["jobs"]}
if jobs[103]["cross_leaf_bytes"] != 0 or jobs[103]["congested_share"] != 0:
    sys.exit(f"job 103 (inside a leaf): {jobs[103]}")
if jobs[104]["known"]:
    sys.exit(f"job 104 has no layout, yet: {jobs[104]}")
hot_jobs = {j for v in want["jobs"].values() for j in v}
for j in (101, 102):
    share = jobs[j]["congested_share"]
    if (str(j) in hot_jobs) != (share > 0) or not 0 <= share <= 1:
        sys.exit(f"job {j}: share {share}, on the judge's hot directions: {str(j) in hot_jobs}")
print(len(got))
EOF
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["hot"]))' "$work/expect.json")
ta_pass "the congested directions ($n) and the jobs named on each are the judge's; job shares agree;" \
  "the job inside a leaf has none, the job without a layout is unknown traffic"

# Text and Prometheus forms of the same reading.
back10
mon --format prometheus >"$work/m.prom" 2>"$work/m.err" || ta_fail "monitor --format prometheus failed: $(cat "$work/m.err")"
python3 - "$work/m.prom" <<'EOF' || ta_fail "Prometheus text: $(head -5 "$work/m.prom")"
import re, sys
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (\S+)$')
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("#"):
        continue
    m = sample.match(line)
    if not m:
        sys.exit(f"not a sample: {line}")
    float(m.group(4))
EOF
# The counters did not move since the last run: nothing is congested (each run compares with the last).
grep -q '^topoaware_fabric_congested_directions 0$' "$work/m.prom" ||
  ta_fail "counters that did not move since the last reading still show congestion: $(grep congested "$work/m.prom" | head -3)"
ta_pass "Prometheus exposition parses; counters that did not move since the last run show no congestion"

# The long-running form: two reports half a second apart into one file, rewritten each time.
ib_sim "$bin" monitor --no-slurm -q -t "$t" --status "$work/status.json" --interval 0.5 --count 2 --format json \
  -o "$work/live.json" 2>"$work/live.err" || ta_fail "monitor --count 2 failed: $(cat "$work/live.err")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ports_measured"] == r["ports_sampled"] > 0, r["ports_measured"]; assert 0.4 < r["interval_s"] < 5, r["interval_s"]' \
  "$work/live.json" || ta_fail "monitor --count 2: $(head -c 300 "$work/live.json")"
ta_pass "the long-running form reports every --interval into -o FILE and stops after --count reports"

# A counter reset: lower values than the saved ones are a note, never a negative load.
for line in $(sed -n 's/^PerformanceSet "\([^"]*\)"\[\([0-9]*\)\] PortCountersExtended.PortXmitData=.*/\1:\2/p' "$work/set.console" | head -3); do
  ibsim_console "PerformanceSet \"${line%%:*}\"[${line##*:}] PortCountersExtended.PortXmitData=1" >/dev/null
done
back10
mon >"$work/reset.txt" 2>"$work/reset.err" || ta_fail "monitor after a reset failed: $(cat "$work/reset.err")"
[ "$(grep -c 'counter reset' "$work/reset.txt")" -ge 3 ] || ta_fail "a reset is not reported: $(cat "$work/reset.txt")"
ta_pass "a counter reset is reported per port, not measured as a load"

# A spine vanishes between two readings: its ports are not read, and say so.
ibsim_console 'Unlink "'"$(sed -n 's/^Switch.*"\(S-[0-9a-f]*\)".*# "spine02".*/\1/p' "$work/ft.net")"'"' >/dev/null
back10
rc=0
mon --mad-timeout 100 --retries 0 >"$work/gone.txt" 2>"$work/gone.err" || rc=$?
[ "$rc" -eq 0 ] || ta_fail "monitor with a vanished switch exited $rc: $(tail -3 "$work/gone.err")"
grep -q 'not read: .*no answer' "$work/gone.txt" || ta_fail "the vanished switch's ports are not reported: $(head -20 "$work/gone.txt")"
ta_pass "a switch gone mid-series: its ports reported as not read, the rest measured, exit 0"

# show --congestion draws that report on the fabric: stand-in squeue and sinfo (first in PATH) list
# the snapshot's jobs and one more (105, on n0007 n0008) that the status file does not know.
mkdir -p "$work/bin"
cat >"$work/bin/squeue" <<SH
#!/bin/sh
printf '%s\n' '101|RUNNING|a|gpu|4|None|n[0001-0002,0005-0006]|ring1' '102|RUNNING|b|gpu|4|None|n[0009-0010,0013-0014]|ring2' \
  '103|RUNNING|c|gpu|2|None|n[0003-0004]|pair' '104|RUNNING|d|gpu|2|None|n[0011-0012]|other' '105|RUNNING|e|gpu|2|None|n[0007-0008]|new'
SH
cat >"$work/bin/sinfo" <<SH
#!/bin/sh
for i in \$(seq 1 16); do printf 'n%04d|allocated|none\n' \$i; done
SH
chmod +x "$work/bin/"*
PATH="$work/bin:$PATH" "$bin" show --topology "$t" --status "$work/status.json" --congestion "$work/report.json" \
  >"$work/show.txt" 2>"$work/show.err" || ta_fail "show --congestion failed: $(cat "$work/show.err")"
grep -q "^Congested cables ($work/report.json, over 10 s): $n$" "$work/show.txt" ||
  ta_fail "show --congestion text: $(grep -A3 Congested "$work/show.txt")"
[ "$(grep -cE '^  [a-z0-9]+ p[0-9]+ -> [a-z0-9]+: [0-9]+% of line rate' "$work/show.txt")" = "$n" ] ||
  ta_fail "show --congestion does not list the $n directions: $(grep -A9 Congested "$work/show.txt")"
PATH="$work/bin:$PATH" "$bin" show --topology "$t" --status "$work/status.json" --congestion "$work/report.json" \
  --format dot >"$work/show.dot" 2>/dev/null || ta_fail "show --congestion --format dot failed"
[ "$(grep -c 'color="#d02020", penwidth=3' "$work/show.dot")" = "$n" ] ||
  ta_fail "show --congestion draws $(grep -c 'color="#d02020", penwidth=3' "$work/show.dot") red cables, not $n"
rc=0
PATH="$work/bin:$PATH" "$bin" show --topology "$t" --status "$work/status.json" --congestion "$work/status.json" >/dev/null 2>"$work/bad.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q 'not a report of topoaware monitor' "$work/bad.err" ||
  ta_fail "show --congestion with a file that is not a report: rc $rc, $(cat "$work/bad.err")"
ta_pass "show --congestion lists and draws the $n congested directions; another file is refused"

# With squeue: job 105 runs without an entry in the status file: unknown traffic, not ignored.
back10
PATH="$work/bin:$PATH" ib_sim "$bin" monitor --once -q -t "$t" --status "$work/status.json" --state "$work/state.json" \
  --format json >"$work/sq.json" 2>"$work/sq.err" || ta_fail "monitor with squeue failed: $(cat "$work/sq.err")"
python3 -c '
import json, sys
jobs = {j["job"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
assert sorted(jobs) == [101, 102, 103, 104, 105], sorted(jobs)
assert not jobs[105]["known"] and jobs[101]["known"], (jobs[105], jobs[101])
' "$work/sq.json" || ta_fail "monitor with squeue: the jobs it reports: $(head -c 600 "$work/sq.json")"
ta_pass "with squeue, a running job the status file does not know is reported as unknown traffic"

# From cron into a folder another user may write to (here a sticky folder of uid 65534's, writable by
# all, so that the kernel's protected_symlinks does not hide a bug): a link or a FIFO that user
# planted at --state or -o is refused with a message naming it; nothing is written through the
# link, nothing reads the FIFO forever (ib_sim's 120 s bound), the file the link names is unchanged.
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
  pub=$work/pub victim=$work/victim
  for kind in symlink fifo; do
    for which in state output; do
      rm -rf "$pub" && mkdir "$pub" && chown 65534:65534 "$pub" && chmod 1777 "$pub" && chmod 755 "$work"
      printf 'precious\n' >"$victim"
      at=$pub/$which.json
      case $kind in
        symlink) setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$victim" "$at" ;;
        fifo) setpriv --reuid=65534 --regid=65534 --clear-groups mkfifo "$at" ;;
      esac
      args=(--state "$pub/state.json")
      [ "$which" = output ] && args+=(-o "$at") && cp "$work/state.json" "$pub/state.json"
      rc=0
      ib_sim "$bin" monitor --once --no-slurm -q -t "$t" --status "$work/status.json" "${args[@]}" \
        >"$work/pub.out" 2>"$work/pub.err" || rc=$?
      [ "$rc" -ne 124 ] || ta_fail "monitor with a $kind at --$which hung"
      [ "$rc" -ne 0 ] && grep -q "$at" "$work/pub.err" ||
        ta_fail "monitor with a $kind at --$which: exit $rc, $(cat "$work/pub.err")"
      [ "$(cat "$victim")" = precious ] || ta_fail "monitor wrote through a link at --$which"
      [ "$kind" = symlink ] && { [ -L "$at" ] || ta_fail "the link at --$which was replaced"; }
      [ "$kind$which" = symlinkstate ] && ! grep -q "$at: is a symbolic link (never read" "$work/pub.err" &&
        ta_fail "monitor read the saved counters through a link: $(cat "$work/pub.err")"
      [ "$kind" = fifo ] && { [ -p "$at" ] || ta_fail "the FIFO at --$which was replaced"; }
    done
  done
  ta_pass "a link or a FIFO planted by another user at --state or -o: refused and named, nothing written through it, no hang"
else
  ta_note "SKIP (part): planted files at --state and -o need root and setpriv"
fi
