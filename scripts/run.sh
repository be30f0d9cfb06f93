#!/usr/bin/env bash
# The main job: installs what is missing, builds, runs every Z3 proof with its twin, and checks the
# naive baseline on the default case (forward and backward) against the certified reference.
# Prints the table; writes the JSON record to out/check.json and the proofs' SMT-LIB queries to
# out/smt2/. Extra arguments are passed to `flashproof check`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
cmake --build build -j "$(nproc)" --target flashproof
mkdir -p out
build/cli/flashproof prove --smt2 out/smt2
build/cli/flashproof check --backward "$@"
build/cli/flashproof check --backward --json "$@" >out/check.json
echo "record: out/check.json"
