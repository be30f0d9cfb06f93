#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds and runs every ctest test.
# JUnit XML lands in build/ctest-junit.xml. Extra arguments go to ctest (e.g. -L reference).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The Python that install-deps.sh filled (scripts/venv.sh), for the build, the tests and the scripts below.
source scripts/venv.sh
venv_activate
python_arg=()
[ -n "${VIRTUAL_ENV:-}" ] && python_arg=(-DPython_EXECUTABLE="$VIRTUAL_ENV/bin/python")
jobs=$(nproc)
# A new build folder gets Ninja where it is installed: it schedules every target's files at once,
# where Makefiles build target by target and leave cores idle; an existing folder keeps its generator.
generator=()
[ ! -f build/CMakeCache.txt ] && command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${python_arg[@]}" >build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
cmake --build build -j "$jobs"
cd build
# Without arguments every label but `slow` runs; with arguments they choose (e.g. -L slow).
if [ "$#" -eq 0 ]; then
  ctest --output-on-failure -j "$jobs" --timeout 600 --output-junit ctest-junit.xml -LE slow
  # The representative subset under ASan + UBSan (scripts/sanitized.sh; `all` runs every test),
  # then libFuzzer over the input parsers for 10 s each (scripts/fuzz-parsers.sh SECONDS: longer).
  cd ..
  # The packages a user consumes: the Python package installed by pip and its tests, and an
  # out-of-tree CMake project built against `cmake --install` into a temporary prefix.
  bash scripts/python-package.sh --require
  bash scripts/out-of-tree.sh
  bash scripts/sanitized.sh
  exec bash scripts/fuzz-parsers.sh 10
fi
ctest --output-on-failure -j "$jobs" --timeout 600 --output-junit ctest-junit.xml "$@"
