#!/usr/bin/env bash
# Installs, from Debian packages, whatever flashproof needs that is missing. Idempotent: when
# everything is present it prints nothing and exits 0. Run as root (or with sudo available).
set -euo pipefail

packages=(
  cmake g++ make            # build
  libgtest-dev libgmock-dev # GoogleTest / GoogleMock
  librapidcheck-dev         # RapidCheck, ships rapidcheck/gtest.h
  libboost-dev              # Boost.Multiprecision (header-only)
  libmpfr-dev libgmp-dev    # MPFR backend of the reference
  libz3-dev z3              # proofs (library and the z3 command for SMT-LIB replay)
  chromium                  # headless browser: tests/report renders the report's index.html
  fonts-dejavu-core         # a font for it
  clang libclang-rt-14-dev  # libFuzzer and its sanitizers: scripts/fuzz-parsers.sh
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >/dev/null
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
