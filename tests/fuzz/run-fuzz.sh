#!/bin/bash
# Builds the ibnetdiscover parser's libFuzzer target with clang (ASan + UBSan) and runs it.
#
#   tests/fuzz/run-fuzz.sh [seconds]       default 60
#
# Environment: FUZZ_DIR (work folder: binary, corpus, crash files; default
# ${TMPDIR:-/tmp}/topoaware-fuzz), CXX_FUZZ (default clang++), FUZZ_JOBS (parallel workers in
# libFuzzer's fork mode, default 1), FUZZ_MAX_LEN (longest input in bytes, default 8192).
# Needs clang and libclang-rt-14-dev (Debian 12). The corpus grows across runs; the fixtures in
# tests/fixtures/ib and tests/fixtures/bad are its seeds. A crash leaves crash-* in FUZZ_DIR and
# makes this script exit non-zero; replay one with "$FUZZ_DIR/fuzz_parser FILE".
set -euo pipefail

seconds=${1:-60}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
work=${FUZZ_DIR:-${TMPDIR:-/tmp}/topoaware-fuzz}
cxx=${CXX_FUZZ:-clang++}
jobs=${FUZZ_JOBS:-1}
max_len=${FUZZ_MAX_LEN:-8192}

command -v "$cxx" >/dev/null ||
  { echo "run-fuzz.sh: $cxx not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }
mkdir -p "$work/corpus"

# Rebuild only when a source is newer than the binary.
bin=$work/fuzz_parser
srcs=("$here/fuzz_parser.cpp" "$top/discovery/ibnetdiscover_parser.cpp" "$top/corelib/fabric.cpp")
rebuild=no
[ -x "$bin" ] || rebuild=yes
for s in "${srcs[@]}" "$top/discovery/ibnetdiscover_parser.hpp" "$top/corelib/fabric.hpp"; do
  [ "$s" -nt "$bin" ] && rebuild=yes
done
if [ $rebuild = yes ]; then
  echo "run-fuzz.sh: building $bin"
  "$cxx" -std=c++17 -g -O1 -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$top/corelib" -I"$top/discovery" "${srcs[@]}" -o "$bin"
fi

seeds=$work/seeds
rm -rf "$seeds" && mkdir -p "$seeds"
cp "$top"/tests/fixtures/ib/*.ibnetdiscover* "$top"/tests/fixtures/bad/*.ibnetdiscover* "$seeds"/

echo "run-fuzz.sh: fuzzing for ${seconds}s in $work"
cd "$work"
"$bin" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
  -dict="$here/ibnetdiscover.dict" -artifact_prefix="$work/" -print_final_stats=1 \
  $([ "$jobs" -gt 1 ] && echo "-fork=$jobs") \
  "$work/corpus" "$seeds"
