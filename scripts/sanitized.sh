#!/usr/bin/env bash
# The harness under AddressSanitizer + UndefinedBehaviorSanitizer (-DFLASHPROOF_SANITIZE=ON, any UB
# aborts) in build-asan/. Without arguments: the representative subset CI runs (scripts/test.sh
# calls it): the check pipeline with the emulated FA1/FA2 kernels, the reference, the bounds and
# envelopes, case files and the exchange format, the JSON parser and metrics, the mask predicate,
# and the command line's tests against the sanitized binary. With `all`: every test but `slow`.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1 -DFLASHPROOF_SANITIZE=ON \
  -DFLASHPROOF_FA2_HEAD_DIMS="32;64" -DFLASHPROOF_FA1_HEAD_DIMS="64" >build-asan-configure.log 2>&1 ||
  { cat build-asan-configure.log; exit 1; }
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ "${1:-}" = all ]; then
  cmake --build build-asan -j "$jobs"
  cd build-asan
  exec ctest --output-on-failure -j "$jobs" --timeout 1800 -LE slow --output-junit ctest-junit.xml
fi
targets=(test_core test_mask test_harness test_exchange test_cli flashproof)
cmake --build build-asan -j "$jobs" --target "${targets[@]}"
status=0
for t in core/test_core kernels/test_mask harness/test_harness harness/test_exchange cli/test_cli; do
  echo "sanitized: $t"
  build-asan/tests/$t --gtest_brief=1 || status=1
done
exit $status
