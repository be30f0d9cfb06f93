#!/usr/bin/env bash
# scripts/python-package.sh on a build tree that did not make the Python module (a CMakeCache.txt
# without FLASHPROOF_PYTHON_EXECUTABLE): with --require, as CI runs it, exit 1; without, "skipped"
# and exit 0; an unknown argument, exit 2.
#
#   python_package_required.sh WORK
set -uo pipefail
[ "$#" -eq 1 ] || { echo "usage: python_package_required.sh WORK" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work/build"
printf 'CMAKE_BUILD_TYPE:STRING=Release\n' >"$work/build/CMakeCache.txt"
BUILD_DIR="$work/build" bash "$root/scripts/python-package.sh" --require >"$work/required.log" 2>&1
status=$?
[ "$status" -eq 1 ] || fail "--require without the module exited $status, not 1: $(cat "$work/required.log")"
BUILD_DIR="$work/build" bash "$root/scripts/python-package.sh" >"$work/plain.log" 2>&1
status=$?
[ "$status" -eq 0 ] && grep -q skipped "$work/plain.log" || fail "without --require: exit $status, $(cat "$work/plain.log")"
BUILD_DIR="$work/build" bash "$root/scripts/python-package.sh" --requir >/dev/null 2>&1
status=$?
[ "$status" -eq 2 ] || fail "an unknown argument exited $status, not 2"
echo "python_package_required: a missing module fails CI's run (exit 1) and is skipped otherwise"
