#!/usr/bin/env bash
# CI's check of the Python package's user path (python/README.md): `pip install .` into a fresh
# virtual environment, reusing the tree scripts/test.sh built in build/ (same build type and
# options, so nothing recompiles), then pytest against the installed package, not the build tree.
# BUILD_DIR=DIR reuses another build tree. Without the module in the build (no Python or nanobind)
# it says so and exits 0, or, with --require (CI: scripts/test.sh), exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
require=0
case "${1:-}" in
  --require) require=1 ;;
  '') ;;
  *) echo "python-package: unknown argument '$1' (usage: python-package.sh [--require])" >&2; exit 2 ;;
esac
build_dir=$(realpath "${BUILD_DIR:-build}")
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
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
# nanobind, scikit-build-core, numpy, ml_dtypes and pytest come from the site of the interpreter the
# module was built for (scripts/install-deps.sh's environment, scripts/venv.sh): a venv made from a
# venv's python does not see that venv's packages, so a .pth file adds its site (after the new
# venv's own, where the package is installed); --no-build-isolation keeps the same nanobind, so the
# module is not rebuilt against another copy of it.
"$python" -m venv --system-site-packages "$venv"
site_of() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
deps_site=$(site_of "$python") own_site=$(site_of "$venv/bin/python")
[ "$deps_site" = "$own_site" ] || echo "$deps_site" >"$own_site/flashproof-build-deps.pth"
# The generator build/ was configured with; BUILD_TESTING as scripts/test.sh left it.
CMAKE_GENERATOR=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build_dir/CMakeCache.txt") \
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
  -C build-dir="$build_dir" -C cmake.define.BUILD_TESTING=ON -C cmake.define.Python_EXECUTABLE="$python" \
  -C cmake.define.Python3_EXECUTABLE="$python" . \
  >"$venv/pip.log" 2>&1 || { cat "$venv/pip.log"; exit 1; }
# scikit-build-core leaves its wheel staging prefix and SKBUILD* in the cache: put the tree back as
# scripts/test.sh configured it, for the steps after this one (cmake --install, out-of-tree.sh).
cmake -S . -B "$build_dir" -DCMAKE_INSTALL_PREFIX="$install_prefix" -U 'SKBUILD*' >"$venv/reconfigure.log" 2>&1 \
  || { cat "$venv/reconfigure.log"; exit 1; }
if grep -q "Building CXX object [^p]" "$venv/pip.log"; then
  echo "python-package: pip recompiled the harness's libraries (the build flags differ from $build_dir's):" >&2
  grep "Building CXX object" "$venv/pip.log" | head -5 >&2
fi
# From a directory where the checkout's python/ is not on the path: the installed package is tested.
cd "$venv"
"$venv/bin/python" -c 'import flashproof, sys; sys.exit(not flashproof.__file__.startswith(sys.prefix))' \
  || { echo "python-package: flashproof was not imported from the installed package" >&2; exit 1; }
FLASHPROOF_CLI="$build_dir/cli/flashproof" FLASHPROOF_CASE_DIR="$venv/failed-cases" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/tests/python/test_check.py" \
  "$OLDPWD/tests/python/test_fuzz.py"
# The user's route of README.md: the ten-line pytest file of examples/python/ on its NumPy kernel.
(cd "$OLDPWD/examples/python" && FLASHPROOF_CASE_DIR="$venv/failed-cases" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider test_my_attention.py)
echo "python-package: pip install and the installed package's tests took $(( $(date +%s) - start )) s"
