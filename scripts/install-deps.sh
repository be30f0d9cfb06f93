#!/usr/bin/env bash
# Installs, from Debian packages, whatever flashproof needs that is missing, and PyPI's packages into
# a virtual environment these scripts own (FLASHPROOF_VENV, default ~/.cache/flashproof/venv; the
# system's Python is never pip-installed into). Idempotent: when everything is present it prints
# nothing and exits 0. Run as root (or with sudo available). scripts/test.sh then builds and tests
# with that environment's python (scripts/venv.sh).
set -euo pipefail

packages=(
  cmake g++ make            # build
  ninja-build               # Ninja: scripts/test.sh and sanitized.sh configure new build folders with it
  libgtest-dev libgmock-dev # GoogleTest / GoogleMock
  librapidcheck-dev         # RapidCheck, ships rapidcheck/gtest.h
  libboost-dev              # Boost.Multiprecision (header-only)
  libboost-context-dev      # Boost.Context: the emulator's fibers (kernels/emu/)
  libcli11-dev              # CLI11: every command line (cli/, bench/)
  nlohmann-json3-dev        # nlohmann-json: every JSON record, case file and report
  libbenchmark-dev          # Google Benchmark: the micro-benchmarks (bench/)
  libmpfr-dev libgmp-dev    # MPFR backend of the reference
  libz3-dev z3              # proofs (library and the z3 command for SMT-LIB replay)
  chromium                  # headless browser: tests/report renders the report's index.html
  fonts-dejavu-core         # a font for it
  clang libclang-rt-14-dev  # libFuzzer and its sanitizers: scripts/fuzz-parsers.sh
  python3-dev python3-pip python3-venv  # the Python package (python/): headers, pip, venv
)

# The Python package (python/, pyproject.toml) and its tests: module name to import -> pip package.
python_modules=(nanobind:nanobind scikit_build_core:scikit-build-core numpy:numpy ml_dtypes:ml_dtypes pytest:pytest)

source "$(dirname "$0")/venv.sh"

# The environment, created on first use from the python3 on PATH.
make_venv() {
  command -v python3 >/dev/null || { echo "install-deps: no python3; the Python package is skipped" >&2; return 1; }
  [ -x "$FLASHPROOF_VENV/bin/python" ] && return 0
  echo "install-deps: creating the virtual environment $FLASHPROOF_VENV"
  mkdir -p "$(dirname "$FLASHPROOF_VENV")"
  python3 -m venv "$FLASHPROOF_VENV"
}

# pip install PACKAGE... into the environment.
pip_install() {
  echo "install-deps: pip installing $* into $FLASHPROOF_VENV"
  "$FLASHPROOF_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}

install_python_packages() {
  make_venv || return 0
  local wanted=() entry
  for entry in "${python_modules[@]}"; do
    "$FLASHPROOF_VENV/bin/python" -c "import ${entry%%:*}" 2>/dev/null || wanted+=("${entry#*:}")
  done
  [ ${#wanted[@]} -eq 0 ] && return 0
  pip_install "${wanted[@]}"
}

# With CUDA: cuobjdump and the nvdisasm it runs for -sass, which the CUDA toolkit here lacks, from
# PyPI's wheels (tests/kernels/sass disassembles the kernels with them; scripts/sass-report finds
# them in the nvidia package). Newer cuobjdump wheels no longer carry nvdisasm.
install_disassembler() {
  [ -x "$FLASHPROOF_VENV/bin/python" ] || return 0
  [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null || return 0
  local wanted=()
  for tool in cuobjdump nvdisasm; do
    command -v "$tool" >/dev/null && continue
    "$FLASHPROOF_VENV/bin/python" - "$tool" <<'PY' 2>/dev/null && continue
import importlib.util, os, sys
spec = importlib.util.find_spec("nvidia")
dirs = list(spec.submodule_search_locations) if spec else []
tool = sys.argv[1]
sys.exit(not any(os.access(os.path.join(d, sub, "bin", tool), os.X_OK)
                 for d in dirs for sub in ("cu13", "cuda_" + tool)))
PY
    wanted+=("nvidia-cuda-$tool")
  done
  [ ${#wanted[@]} -eq 0 ] && return 0
  pip_install "${wanted[@]}"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  install_python_packages
  install_disassembler
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >/dev/null
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_python_packages
install_disassembler
echo "install-deps: done"
