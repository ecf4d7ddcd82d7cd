#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the libFuzzer targets (`make fuzz` in the build folder) and runs them, one per core at a
# time (FUZZ_PARALLEL), each nice'd and single-process: replays tests/fuzz/regressions/<target>/
# first, then fuzzes from the minimised corpus kept in the repository (tests/fuzz/corpus/<target>/),
# the seeds (tests/fuzz/seeds/<target>/ and the fixtures named below) and a corpus kept in the
# work folder.
#
#   tests/fuzz/run-fuzz.sh [--build-dir DIR] [--smoke SECONDS | --runs N [--fork J]] [--work DIR]
#                          [--update-corpus] [TARGET ...]
#
#   --smoke S   run each target for S seconds (default: --smoke 60); CI runs this. Also fails a
#               target without a stored corpus or whose stored corpus's replay gives no coverage;
#               whose coverage at the end of the run is below what its stored corpus alone gives
#               (libFuzzer's "cov:" of a -runs=0 replay of tests/fuzz/corpus/<target>), less 0.2%
#               (at least 2 edges) of slack; and whose stored corpus now covers more than 10% fewer
#               edges than it did when it was stored (tests/fuzz/corpus-coverage.tsv, compared
#               only under the clang version that recorded it)
#   --runs N    run each target for N executions (the long runs of FUZZING.md: --runs 10000000).
#               Each long run that ends by itself (its N, its --max-seconds or a finding; not
#               one killed by hand) adds a line to the ledger (FUZZ_LEDGER, default
#               tests/fuzz/ledger.tsv, kept in the repository): the time, the target, the first 16
#               hex digits of the fuzz binary's SHA-256, executions, seconds, ok or FAIL, the
#               commit; then it prints the executions of every run of that same binary in the
#               ledger. A binary built from other code has another checksum, so runs on unchanged
#               code (one after another from the same work corpus, side by side, or on another
#               machine that builds the same bytes) add up and others do not
#   --max-seconds S  with --runs: stop a target after S seconds all the same
#   --fork J    with --runs: one libFuzzer run over J worker processes (-fork=J), its executions
#               summed over them, so that one target has J cores; its cov/ft columns count as
#               libFuzzer's fork mode does, not comparable with a single process's
#   --update-corpus  after the run, minimise the stored corpus, the run's corpus and the seeds
#               (libFuzzer -merge=1 into an empty folder) into tests/fuzz/corpus/<target>/, and
#               record what it covers in tests/fuzz/corpus-coverage.tsv
#   TARGET      ibnetdiscover topology_json config options status hostlist lft_dump gres task
#               placement nvlink (default: all)
#
# Prints one line per target (executions, exec/s, coverage and features, corpus; base: the stored
# corpus's coverage) and exits 1 if a target crashed, leaked, hit a sanitizer or an invariant (the input is kept as
# WORK/artifacts/<target>/crash-*; replay with "tests/fuzz/fuzz_<target> FILE" in the build folder).
# Without clang it prints SKIP and exits 77, except under CI=true, where it fails (the packages are
# in tools/setup.sh's list). Environment: FUZZ_WORK (work folder, default BUILD/fuzz-work),
# FUZZ_PARALLEL (targets at a time, default the number of cores), FUZZ_LEDGER (the long runs'
# ledger, default tests/fuzz/ledger.tsv in the repository, committed with the results; two runs
# of one target side by side, each in a work folder of its own, share it).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$top/_build
mode=time amount=60 work="" cap="" update=0 fork=""
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$2; shift ;;
    --smoke) mode=time amount=$2; shift ;;
    --runs) mode=runs amount=$2; shift ;;
    --max-seconds) cap=$2; shift ;;
    --fork) fork=$2; shift ;;
    --work) work=$2; shift ;;
    --update-corpus) update=1 ;;
    -h|--help) awk 'NR >= 3 && !/^#/ { exit } NR >= 3' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run-fuzz.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=(ibnetdiscover topology_json config options status hostlist lft_dump gres task placement nvlink)
build=$(cd "$build" 2>/dev/null && pwd) ||
  { echo "run-fuzz.sh: no build folder $build (run tools/setup.sh)" >&2; exit 2; }
work=${work:-${FUZZ_WORK:-$build/fuzz-work}}
ledger=${FUZZ_LEDGER:-$here/ledger.tsv}
# What each stored corpus covered when it was stored: target, edges, the clang version of the
# build that counted them (edge counts are a compiler's: another version counts otherwise).
covfile=$here/corpus-coverage.tsv

skip() {
  if [ "${CI:-}" = true ]; then echo "run-fuzz.sh: FAIL: $1 (CI installs clang and libclang-rt-14-dev)" >&2; exit 1; fi
  echo "SKIP: $1"
  exit 77
}
command -v clang++ >/dev/null 2>&1 || skip "clang++ not found (apt-get install clang libclang-rt-14-dev)"
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }\n' |
  clang++ -x c++ -fsanitize=fuzzer,address,undefined -o /dev/null - >/dev/null 2>&1 ||
  skip "clang++ cannot link -fsanitize=fuzzer,address,undefined (apt-get install libclang-rt-14-dev)"

log=$work/logs
mkdir -p "$log"
echo "run-fuzz.sh: make fuzz in $build (log $log/build.log)"
if ! nice -n 19 make -C "$build" -j"${FUZZ_MAKE_JOBS:-2}" fuzz >"$log/build.log" 2>&1; then
  tail -n 30 "$log/build.log" >&2
  echo "run-fuzz.sh: FAIL: make fuzz" >&2
  exit 1
fi
sym=$(command -v llvm-symbolizer || command -v llvm-symbolizer-14 || true)
[ -n "$sym" ] && export ASAN_SYMBOLIZER_PATH=$sym
# Leaks are caught input by input: libFuzzer runs an input again under LeakSanitizer whenever it
# allocated more than it freed. LeakSanitizer's own check at exit walks the heap the whole run used,
# and the process's RSS grows while it does (a 100,000-run hostlist run: from 110 MB to 431 MB in
# the 4 s after its "Done"; no growth without that check). libFuzzer still watches -rss_limit_mb
# then, so a long run ended in an out-of-memory report with 36 MB live (2,269 MB after 4.5 million
# hostlist runs). Long runs (--runs) leave the exit check out; smoke runs keep it.
asan_default=detect_leaks=1:abort_on_error=1
[ "$mode" = runs ] && asan_default=$asan_default:leak_check_at_exit=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-$asan_default}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Per target: longest input, dictionary, and seed folders (fixtures are read in place).
max_len() {
  case $1 in
    topology_json|lft_dump) echo 16384 ;; ibnetdiscover|status) echo 8192 ;; config) echo 4096 ;;
    options|gres|task|nvlink) echo 1024 ;; placement) echo 2048 ;; hostlist) echo 512 ;;
  esac
}
# Per-input wall-time limit (libFuzzer -timeout). The host list expands at the production cap
# (131,072 names): 0.1 s under ASan on a free core with short names, 0.7 s of CPU with 122-byte
# names (16 MB), which took more than 30 s of wall time at nice 19 beside a CI run, so it gets the
# 120 s of the others (see the comment at the run below); gres and placement inputs are small.
time_limit() {
  case $1 in gres|placement) echo 30 ;; *) echo 120 ;; esac
}
# libFuzzer's coverage ("cov: N" of its last status line) in a log; empty if none.
cov_of() { grep -E '^#[0-9]+.*cov: ' "$1" | tail -n1 | sed -n 's/.* cov: \([0-9]*\).*/\1/p'; }
clang_version=$(clang++ -dumpversion 2>/dev/null || echo unknown)
# The edges a target's stored corpus covered when it was stored, under this clang; empty if none.
stored_cov() {
  [ -f "$covfile" ] && awk -F'\t' -v t="$1" -v c="$clang_version" '{ sub(/\r$/, "") } $1 == t && $3 == c { v = $2 } END { print v }' "$covfile"
}
# Replays the stored corpus alone (-runs=0) into LOG; prints its coverage, empty if none.
replay_stored() {
  nice -n 19 "$bin" -runs=0 -max_len="$(max_len "$t")" -timeout="$(time_limit "$t")" -rss_limit_mb=2048 \
    "$stored" >"$1" 2>&1
  cov_of "$1"
}
dict() {
  case $1 in
    ibnetdiscover) echo ibnetdiscover ;; topology_json|status) echo json ;; *) echo "$1" ;;
  esac
}
seed_dirs() {
  local t=$1 s
  s=$work/seeds/$t
  rm -rf "$s" && mkdir -p "$s"
  [ -d "$here/seeds/$t" ] && cp "$here/seeds/$t"/* "$s"/
  case $t in
    ibnetdiscover) echo "$top/tests/fixtures/ib" "$top/tests/fixtures/bad" ;;
    topology_json)
      # The input's first byte sets the engine's parameters (see fuzz_topology_json.cpp).
      local f k
      for f in "$top"/tests/golden/ib/*.topology.json; do
        [ "$(stat -c %s "$f")" -le "$(max_len topology_json)" ] || continue
        for k in 00 43 86; do
          { printf "\\x$k"; cat "$f"; } >"$s/$k-$(basename "$f")"
        done
      done ;;
  esac
  echo "$s"
}

# One target: regressions, base coverage, the run, the optional corpus update. Prints its lines;
# returns 1 on any failure.
run_target() {
  local t=$1 bin sum corpus art stored base limit t0 rc secs execs rate last cov ft corp result lowcov fresh failed=0
  local was why=""
  bin=$build/tests/fuzz/fuzz_$t
  [ -x "$bin" ] || { echo "run-fuzz.sh: no $bin" >&2; return 1; }
  sum=$(sha256sum "$bin" | cut -c1-16)
  corpus=$work/corpus/$t art=$work/artifacts/$t
  mkdir -p "$corpus" "$art"
  # 1. the regressions: each must run clean.
  if [ -d "$here/regressions/$t" ] && ls "$here/regressions/$t"/* >/dev/null 2>&1; then
    if ! "$bin" -runs=1 "$here/regressions/$t"/* >"$log/$t.regressions.log" 2>&1; then
      printf '%-14s %-6s (a regression input crashes again: %s)\n' "$t" FAIL "$log/$t.regressions.log"
      tail -n 20 "$log/$t.regressions.log" | sed 's/^/    /'
      return 1
    fi
  fi
  # 2. what the stored corpus alone covers: the run must end at or above it, and it must not have
  # fallen far below what it covered when it was stored. A smoke run (CI) fails without it: the
  # check below would have nothing to compare with.
  stored=$here/corpus/$t base=""
  if [ -d "$stored" ] && ls "$stored"/* >/dev/null 2>&1; then
    base=$(replay_stored "$log/$t.base.log")
    [ -n "$base" ] || why="the stored corpus's replay gave no coverage (log: $log/$t.base.log)"
  else
    why="no stored corpus in $stored"
  fi
  was=$(stored_cov "$t")
  # More than 10% fewer edges than when it was stored: the target no longer reaches what its inputs
  # reached (a changed input format, a check that now stops them early). Ordinary changes to the
  # code move a target's count by far less; one that shrinks it on purpose stores the corpus again.
  if [ -z "$why" ] && [ -n "$was" ] && [ "$base" -lt $((was - was / 10)) ]; then
    why="the stored corpus covers $base edges, $was when it was stored (clang $clang_version): more than 10% fewer"
    why+=" (a target that no longer reaches its inputs' code; after a deliberate change, store the corpus"
    why+=" again: run-fuzz.sh --runs 100000 --update-corpus $t)"
  fi
  if [ -n "$why" ] && [ "$mode" = time ]; then
    printf '%-14s %-6s (%s)\n' "$t" FAIL "$why"
    return 1
  fi
  # Said, not failed: a long run goes on, and its --update-corpus stores a corpus and its coverage.
  [ -n "$why" ] && echo "    note: $why"
  [ -z "$why" ] && [ -z "$was" ] &&
    echo "    note: no coverage recorded for this corpus under clang $clang_version in $covfile: not compared"
  # 3. fuzz.
  limit=-max_total_time=$amount
  [ "$mode" = runs ] && limit="-runs=$amount${cap:+ -max_total_time=$cap}${fork:+ -fork=$fork}"
  t0=$SECONDS
  # One process (no -jobs/-workers: with them libFuzzer forks a worker that logs to ./fuzz-N.log);
  # --fork J is libFuzzer's fork mode, whose workers log to a temporary folder of their own.
  # -timeout is wall time: at nice 19 beside other work, a legal but large input (a topology
  # naming 200,000 hosts takes 0.4-0.8 s under ASan) took 12 s while a CI run had both cores; a hang
  # is still caught.
  # shellcheck disable=SC2046
  (cd "$work" && nice -n 19 "$bin" $limit -max_len="$(max_len "$t")" -timeout="$(time_limit "$t")" -rss_limit_mb=2048 \
    -dict="$here/dict/$(dict "$t").dict" -artifact_prefix="$art/" -print_final_stats=1 \
    "$corpus" $([ -d "$stored" ] && echo "$stored") $(seed_dirs "$t")) >"$log/$t.log" 2>&1
  rc=$?
  secs=$((SECONDS - t0))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log/$t.log" | tail -n1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log/$t.log" | tail -n1)
  if [ -z "$execs" ] && [ -n "$fork" ]; then  # fork mode: the parent's "#N: cov: ..." lines
    execs=$(grep -E '^#[0-9]+: cov: ' "$log/$t.log" | tail -n1 | sed 's/^#\([0-9]*\):.*/\1/')
    [ -n "$execs" ] && [ "$secs" -gt 0 ] && rate=$((execs / secs))
  fi
  last=$(grep -E '^#[0-9]+.*cov: ' "$log/$t.log" | tail -n1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
  result=ok
  [ $rc -eq 0 ] || { result=FAIL; failed=1; }
  # A smoke run that ends below its stored corpus's coverage did not start from it (a corpus cut by
  # -max_len, a target that no longer reaches what it did): coverage lost, not a crash, still a FAIL.
  # A few edges of slack: the task target's coverage depends on the order its inputs run in (its
  # first topology load is the real one, later ones are the cached handle), and a CI smoke run ended
  # at 3,044 against a stored-corpus replay of 3,045. A corpus that no longer reaches the code loses
  # hundreds or thousands of edges (1,281 against 5,470 once): 0.2% of the base, at least 2, keeps that.
  lowcov=0 slack=0
  [ -n "$base" ] && slack=$(( base / 500 > 2 ? base / 500 : 2 ))
  if [ "$mode" = time ] && [ $rc -eq 0 ] && [ -n "$base" ] && { [ -z "$cov" ] || [ "$cov" -lt $((base - slack)) ]; }; then
    result=FAIL failed=1 lowcov=1
  fi
  printf '%-14s %-6s %12s %8s %7s %10s %7s %9s %6s\n' "$t" "$result" "${execs:-?}" "$secs" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "${corp:-?}" "${base:--}"
  if [ "$mode" = runs ]; then
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$sum" "${execs:-0}" "$secs" "$result" \
      "$(git -C "$top" describe --always --dirty 2>/dev/null || echo -)" >>"$ledger"
    awk -F'\t' -v t="$t" -v s="$sum" '$2 == t && $3 == s { n++; e += $4; d += $5; if ($6 != "ok") f++ }
      END { printf "    binary %s: %d executions in %d s over %d long runs in the ledger, %d of them FAIL\n", s, e, d, n, f }' \
      "$ledger"
  fi
  [ $lowcov -eq 1 ] && echo "    coverage ${cov:-?} at the end is below the stored corpus's $base less $slack edges of slack (log: $log/$t.log)"
  if [ $rc -ne 0 ]; then
    grep -E 'ERROR: |invariant failed|runtime error|SUMMARY' "$log/$t.log" | head -n 5 | sed 's/^/    /'
    echo "    log: $log/$t.log; inputs: $(ls "$art" | head -n 3 | tr '\n' ' ')"
  fi
  # 4. the stored corpus, minimised again with what this run found (only after a clean run).
  if [ $update -eq 1 ] && [ $rc -eq 0 ]; then
    fresh=$work/merge/$t
    rm -rf "$fresh" && mkdir -p "$fresh"
    # shellcheck disable=SC2046
    if (cd "$work" && nice -n 19 "$bin" -merge=1 -max_len="$(max_len "$t")" -timeout="$(time_limit "$t")" \
          -rss_limit_mb=2048 "$fresh" $([ -d "$stored" ] && echo "$stored") "$corpus" $(seed_dirs "$t")) \
          >"$log/$t.merge.log" 2>&1; then
      rm -rf "$stored" && mkdir -p "$stored" && cp "$fresh"/* "$stored"/ 2>/dev/null
      was=$(replay_stored "$log/$t.stored.log")
      # Targets run side by side: each leaves its row here, and the main shell writes them all.
      [ -n "$was" ] && printf '%s\t%s\t%s\n' "$t" "$was" "$clang_version" >"$log/$t.cov"
      echo "    corpus: $(ls "$stored" | wc -l) inputs, $(du -sk "$stored" | cut -f1) KB in $stored, ${was:-?} edges"
    else
      echo "    corpus: merge failed (log: $log/$t.merge.log)"; failed=1
    fi
  fi
  return $failed
}

# Targets run side by side, one per core (FUZZ_PARALLEL, default the number of cores): each is a
# single libFuzzer process, so a smoke run of every target takes its seconds times the targets over
# the cores. Each target's lines are printed in the order of the list, once all have ended.
par=${FUZZ_PARALLEL:-$(nproc 2>/dev/null || echo 1)}
[ "$par" -ge 1 ] 2>/dev/null || par=1
failed=0
declare -A pid_of=()
running=0
for t in "${targets[@]}"; do
  while [ "$running" -ge "$par" ]; do wait -n 2>/dev/null || true; running=$(jobs -rp | wc -l); done
  rm -f "$log/$t.rc" "$log/$t.cov"
  { run_target "$t"; echo $? >"$log/$t.rc"; } >"$log/$t.summary" 2>&1 &
  pid_of[$t]=$!
  running=$(jobs -rp | wc -l)
done
printf '%-14s %-6s %12s %8s %7s %10s %7s %9s %6s\n' target result execs seconds exec/s cov ft corpus base
for t in "${targets[@]}"; do
  wait "${pid_of[$t]}" 2>/dev/null
  cat "$log/$t.summary"
  [ "$(cat "$log/$t.rc" 2>/dev/null)" = 0 ] || failed=1
done
# The stored corpora's coverage (--update-corpus): each target's new row replaces its row for this
# clang, in one write, under a lock on the folder (two runs side by side share the file).
rows=()
for t in "${targets[@]}"; do [ -s "$log/$t.cov" ] && rows+=("$log/$t.cov"); done
if [ $update -eq 1 ] && [ ${#rows[@]} -gt 0 ]; then
  (
    flock 9
    { if [ -f "$covfile" ]; then
        awk -F'\t' -v c="$clang_version" 'NR == FNR { sub(/\r$/, ""); fresh[$1] = 1; next }
          { sub(/\r$/, "") } !($1 in fresh && $3 == c)' <(cat "${rows[@]}") "$covfile"
      else
        printf '# target\tedges its stored corpus covers (-runs=0)\tclang version (run-fuzz.sh --update-corpus writes this)\n'
      fi
      cat "${rows[@]}"; } >"$covfile.new.$BASHPID" && mv "$covfile.new.$BASHPID" "$covfile"
  ) 9<"$here"
fi
exit $failed
