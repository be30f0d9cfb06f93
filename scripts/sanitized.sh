#!/usr/bin/env bash
# The harness under AddressSanitizer + UndefinedBehaviorSanitizer (-DFLASHPROOF_SANITIZE=ON, any UB
# aborts) in build-asan/, built with clang so that the parsers' libFuzzer targets
# (scripts/fuzz-parsers.sh) link the same objects (-DFLASHPROOF_FUZZ_PARSERS=ON: the parsers'
# sources also carry libFuzzer's coverage, tests/parsers/CMakeLists.txt). Without arguments: the representative subset CI runs
# (scripts/test.sh calls it): the check pipeline with the emulated FA1/FA2 kernels, the reference,
# the bounds and envelopes, case files and the exchange format, the JSON parser and metrics, the
# mask predicate, and the command line's tests against the sanitized binary, two suites at a time.
# With `all`: every test but `slow`, every file compiled alone. With `configure`: only configure build-asan/.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# A build-asan/ from before the switch to clang cannot change its compiler in place.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' build-asan/CMakeCache.txt; then
  echo "sanitized: build-asan/ was configured with another compiler; starting it afresh"
  rm -rf build-asan
fi
# CI's subset builds with the unity batches and precompiled headers (cmake/build_speed.cmake); `all`
# without them, every file alone on its own includes, so that a missing include fails there.
speedups=ON
[ "${1:-}" = all ] && speedups=OFF
# A new build folder gets Ninja where it is installed (scripts/test.sh says why).
generator=()
[ ! -f build-asan/CMakeCache.txt ] && command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build-asan "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1 \
  -DFLASHPROOF_SANITIZE=ON -DFLASHPROOF_FUZZ_PARSERS=ON -DFLASHPROOF_PYTHON=OFF -DFLASHPROOF_BUILD_SPEEDUPS=$speedups \
  -DFLASHPROOF_FA2_HEAD_DIMS="32;64" -DFLASHPROOF_FA1_HEAD_DIMS="64" >build-asan-configure.log 2>&1 ||
  { cat build-asan-configure.log; exit 1; }
[ "${1:-}" = configure ] && exit 0
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ "${1:-}" = all ]; then
  cmake --build build-asan -j "$jobs"
  cd build-asan
  exec ctest --output-on-failure -j "$jobs" --timeout 1800 -LE slow --output-junit ctest-junit.xml
fi
targets=(test_core test_mask test_harness test_exchange test_cli flashproof)
cmake --build build-asan -j "$jobs" --target "${targets[@]}"
# Longest first, so that the others run beside it; each suite's output is printed whole. The
# harness suite (about 90 s under the sanitizers, three times all the others) runs as three
# GoogleTest shards: SUITE:INDEX/COUNT.
suites=(harness/test_harness:0/3 harness/test_harness:1/3 harness/test_harness:2/3 cli/test_cli core/test_core
        harness/test_exchange kernels/test_mask)
run_suite() {
  local log status=0 suite=${1%%:*} shard=
  [ "$suite" != "$1" ] && shard=${1#*:}
  log=$(mktemp)
  if [ -n "$shard" ]; then
    GTEST_SHARD_INDEX=${shard%/*} GTEST_TOTAL_SHARDS=${shard#*/} "build-asan/tests/$suite" --gtest_brief=1 >"$log" 2>&1 || status=1
  else
    "build-asan/tests/$suite" --gtest_brief=1 >"$log" 2>&1 || status=1
  fi
  echo "sanitized: $1"
  cat "$log"
  rm -f "$log"
  return $status
}
export -f run_suite
printf '%s\n' "${suites[@]}" | xargs -P "$jobs" -I{} bash -c 'run_suite {}' || exit 1
