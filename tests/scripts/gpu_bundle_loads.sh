#!/usr/bin/env bash
# scripts/gpu-bundle's load check on this build (tests/scripts/CMakeLists.txt): the bundle's binaries
# staged from BUILD must load with only the staged lib/ and the base system libraries. With --twin,
# one carried library is taken out again and the check must fail naming it (the 9e977a8 bundle lacked
# libboost_context and libbenchmark, and every binary but one failed to load on the GPU machine).
#
#   gpu_bundle_loads.sh [--twin] BUILD WORK
set -uo pipefail
twin=0
[ "${1:-}" = --twin ] && { twin=1; shift; }
[ "$#" -eq 2 ] || { echo "usage: gpu_bundle_loads.sh [--twin] BUILD WORK" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1 stage=$2/stage
bash "$root/scripts/gpu-bundle" --stage "$build" "$stage" || exit 1
if [ "$twin" -eq 0 ]; then
  exec bash "$root/scripts/gpu-bundle" --check-stage "$stage"
fi
victim=$(cd "$stage/lib" && ls libboost_context.so.* 2>/dev/null | head -1)
[ -n "$victim" ] || { echo "twin: the stage carries no libboost_context to take out" >&2; exit 1; }
rm "$stage/lib/$victim"
out=$(bash "$root/scripts/gpu-bundle" --check-stage "$stage" 2>&1)
status=$?
echo "$out"
if [ "$status" -eq 1 ] && grep -q "$victim" <<<"$out"; then
  echo "twin: the load check failed on the bundle without $victim, as it must"
  exit 0
fi
echo "twin: the load check did not report the missing $victim (exit $status)" >&2
exit 1
