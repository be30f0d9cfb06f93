#!/usr/bin/env bash
# find_package(flashproof) as a user meets it: installs an already-built tree (default build/) into
# a temporary prefix, configures and builds examples/out-of-tree/ against it, runs its ctest.
# Fails on any failure. Usage: scripts/out-of-tree.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -f "$build/CMakeCache.txt" ] || { echo "out-of-tree: $build is not a configured build tree" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/flashproof-out-of-tree.XXXXXX")
# Kept when something fails: the logs, the campaign's records and the shrunk failing cases.
trap 'if [ $? -eq 0 ]; then rm -rf "$work"; else echo "out-of-tree: failed; files kept in $work" >&2; fi' EXIT
start=$SECONDS
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
# Configured from a copy, so that nothing of the source tree's own build state can leak in.
cp -r examples/out-of-tree "$work/src"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j "$(nproc)"
# The campaigns' directories (GoogleTest's TEST_TMPDIR) and failing cases stay in the temporary one.
(cd "$work/build" && TEST_TMPDIR="$work" FLASHPROOF_CASE_DIR="$work/failed-cases" \
  ctest --output-on-failure -j "$(nproc)" --timeout 300)
echo "out-of-tree: examples/out-of-tree built against 'cmake --install $build' and its tests passed ($((SECONDS - start)) s)"
