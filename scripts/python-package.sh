#!/usr/bin/env bash
# CI's check of the Python package's user path (python/README.md): a wheel built once with
# `pip wheel` from the tree scripts/test.sh built in build/ (same build type and options, so nothing
# recompiles), installed into a fresh virtual environment with `pip install --no-index
# --find-links` (timed: seconds, no compiler), then, against the installed package and not the
# build tree: the package's pytest, the examples of examples/python/ (their pytest files and a
# campaign and report made from Python), and the console command `flashproof` the wheel installs.
# BUILD_DIR=DIR (or --build-dir DIR) reuses another build tree; WHEEL_DIR=DIR keeps the wheel there
# (default: a temporary directory, removed). Without the module in the build (no Python or
# nanobind) it says so and exits 0, or, with --require (CI: scripts/test.sh), exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
require=0
build_dir=${BUILD_DIR:-build}
while [ "$#" -gt 0 ]; do
  case "$1" in
    --require) require=1 ;;
    --build-dir) [ "$#" -ge 2 ] || { echo "python-package: --build-dir needs a directory" >&2; exit 2; }
                 build_dir=$2; shift ;;
    *) echo "python-package: unknown argument '$1' (usage: python-package.sh [--require] [--build-dir DIR])" >&2
       exit 2 ;;
  esac
  shift
done
build_dir=$(realpath "$build_dir")
start=$(date +%s)
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  echo "python-package: $build_dir is not configured (run scripts/test.sh first)" >&2
  exit 1
fi
python=$(sed -n 's/^FLASHPROOF_PYTHON_EXECUTABLE:INTERNAL=//p' "$build_dir/CMakeCache.txt")
if [ -z "$python" ]; then
  if [ "$require" -eq 1 ]; then
    echo "python-package: the build did not make the Python module (no Python or nanobind)" >&2
    exit 1
  fi
  echo "python-package: the build did not make the Python module (no Python or nanobind); skipped"
  exit 0
fi
install_prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build_dir/CMakeCache.txt")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
venv=$work/venv
wheel_dir=${WHEEL_DIR:-$work/wheel}
mkdir -p "$wheel_dir"
wheel_dir=$(realpath "$wheel_dir")
rm -f "$wheel_dir"/flashproof-*.whl

# 1. The wheel, built once by the interpreter the module was built for (scripts/venv.sh's, which
# has nanobind and scikit-build-core): --no-build-isolation keeps the same nanobind, and
# build-dir, the generator and BUILD_TESTING as scripts/test.sh left them keep the tree's flags, so
# only the package's files are staged, nothing recompiles.
CMAKE_GENERATOR=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build_dir/CMakeCache.txt") \
  "$python" -m pip wheel --disable-pip-version-check --no-build-isolation --no-deps -w "$wheel_dir" \
  -C build-dir="$build_dir" -C cmake.define.BUILD_TESTING=ON -C cmake.define.Python_EXECUTABLE="$python" \
  -C cmake.define.Python3_EXECUTABLE="$python" . \
  >"$work/wheel.log" 2>&1 || { cat "$work/wheel.log"; exit 1; }
# scikit-build-core leaves its wheel staging prefix and SKBUILD* in the cache: put the tree back as
# scripts/test.sh configured it, for the steps after this one (cmake --install, out-of-tree.sh).
cmake -S . -B "$build_dir" -DCMAKE_INSTALL_PREFIX="$install_prefix" -U 'SKBUILD*' >"$work/reconfigure.log" 2>&1 \
  || { cat "$work/reconfigure.log"; exit 1; }
if grep -q "Building CXX object [^p]" "$work/wheel.log"; then
  echo "python-package: pip recompiled the harness's libraries (the build flags differ from $build_dir's):" >&2
  grep "Building CXX object" "$work/wheel.log" | head -5 >&2
fi
wheel=$(ls "$wheel_dir"/flashproof-*.whl)
wheel_built=$(date +%s)

# 2. A fresh virtual environment, the wheel installed into it from the directory alone. numpy,
# ml_dtypes and pytest come from the site of the interpreter the module was built for
# (scripts/install-deps.sh's environment): a venv made from a venv's python does not see that
# venv's packages, so a .pth file adds its site (after the new venv's own, where the package goes).
"$python" -m venv --system-site-packages "$venv"
site_of() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
deps_site=$(site_of "$python") own_site=$(site_of "$venv/bin/python")
[ "$deps_site" = "$own_site" ] || echo "$deps_site" >"$own_site/flashproof-build-deps.pth"
install_start=$(date +%s.%N)
"$venv/bin/python" -m pip install --disable-pip-version-check --no-index --find-links "$wheel_dir" flashproof \
  >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
install_seconds=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" \
  "$install_start" "$(date +%s.%N)")
if grep -qiE "building wheel|running setup|cmake" "$work/install.log"; then
  echo "python-package: installing the wheel built something:" >&2
  cat "$work/install.log" >&2
  exit 1
fi
[ -x "$venv/bin/flashproof" ] || { echo "python-package: the wheel installed no flashproof command" >&2; exit 1; }

# 3. From a directory where the checkout's python/ is not on the path: the installed package is tested.
root=$PWD
cd "$work"
"$venv/bin/python" -c 'import flashproof, sys; sys.exit(not flashproof.__file__.startswith(sys.prefix))' \
  || { echo "python-package: flashproof was not imported from the installed package" >&2; exit 1; }
export PATH="$venv/bin:$PATH" FLASHPROOF_CASE_DIR="$work/failed-cases"
# The console command: its list, and a check with check's record and exit status.
flashproof list >"$work/list.txt"
grep -q "^naive	host" "$work/list.txt" || { echo "python-package: flashproof list lacks naive:" >&2; cat "$work/list.txt" >&2; exit 1; }
flashproof check --impl naive --seqlen-q 32 --head-dim 16 --backward | tail -1
status=0; flashproof check --bogus 2>/dev/null || status=$?
[ "$status" -eq 2 ] || { echo "python-package: flashproof check --bogus exited $status, not 2" >&2; exit 1; }
FLASHPROOF_CLI="$build_dir/cli/flashproof" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  "$root/tests/python/test_check.py" "$root/tests/python/test_fuzz.py" "$root/tests/python/test_command.py" \
  "$root/tests/python/test_report.py"
# The user's route of README.md: the pytest files of examples/python/ (a NumPy kernel; a kernel with
# declared limits), then a campaign and its report made from Python, which the command reads too.
(cd "$root/examples/python" && "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  test_my_attention.py test_tiled_attention.py)
(cd "$root/examples/python" && "$venv/bin/python" campaign.py "$work/tiled")
flashproof report "$work/tiled/campaign" --out "$work/tiled/report-command" >/dev/null
cmp -s <(sed 's/report-command/report/g' "$work/tiled/report-command/summary.md") "$work/tiled/report/summary.md" \
  || { echo "python-package: flashproof report and flashproof.report wrote different summaries" >&2; exit 1; }
end=$(date +%s)
echo "python-package: wheel $(basename "$wheel") built in $(( wheel_built - start )) s, installed in" \
     "${install_seconds} s; the installed package's tests, examples and command took $(( end - wheel_built )) s" \
     "($(( end - start )) s in all)"
