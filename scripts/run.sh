#!/usr/bin/env bash
# The main job: installs what is missing, builds, runs every Z3 proof with its twin, then a short
# fuzz campaign over every implementation available here (naive on the host; fa1, fa2 and
# fa2-deterministic on the GPU when one is usable, else on the emulator) and writes its report.
# Outputs: out/smt2/ (the proofs' SMT-LIB queries), out/campaign/ (the campaign's records and
# failing cases), out/report/index.html (the report; also results.json and summary.md).
# Extra arguments go to `flashproof fuzz` (e.g. --cases 200 --seed 7).
# Exit status: 1 when a proof fails or a campaign case fails or crashes (the report is written
# first), 0 otherwise.
# It builds what it runs: with a usable GPU (nvidia-smi lists one) the full build in build/, the
# kernels' sm_90 objects included; without one the host build in build-host/ (no CUDA: the kernels
# run on the emulator either way, and nvcc's objects would be compiled for nothing). scripts/test.sh
# and CI always build build/ with CUDA, for the `sass` and `link` labels.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  build=build cuda=ON
else
  build=build-host cuda=OFF
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFLASHPROOF_ENABLE_CUDA=$cuda >build-configure.log 2>&1 ||
  { cat build-configure.log; exit 1; }
cmake --build "$build" -j "$(nproc)" --target flashproof
flashproof=$build/cli/flashproof
mkdir -p out
# A failing proof (status 1) still lets the campaign and the report run; anything else (bad input,
# a crash of the prover) stops here.
proved=0
"$flashproof" prove --smt2 out/smt2 || proved=$?
[ "$proved" -le 1 ] || exit "$proved"
rm -rf out/campaign
status=0
# Small shapes: the emulated kernels are thousands of times slower than a GPU.
"$flashproof" fuzz --impl all --dtype fp16,bf16 --cases 24 --seed 1 --max-seqlen 128 \
  --max-work 262144 --jobs "$(nproc)" --out out/campaign "$@" || status=$?
[ "$status" -le 1 ] || exit "$status"
"$flashproof" report out/campaign --out out/report
# What two of the counts above mean (docs/spec.md, "Verdicts"); neither is a failure.
cat <<'LEGEND'
not judged: nothing failed, but some element's certified bound was missing or vacuous, so only its
  bound-free envelope judged it. out-of-domain: inputs outside the valid domain (NaN/inf, scaled logits
  past 2^64) or an exact result past the dtype's range, and nothing failed. docs/spec.md, "Verdicts".
LEGEND
echo "report: $PWD/out/report/index.html"
[ "$proved" -eq 0 ] || echo "run: a proof failed (see flashproof prove's output above)" >&2
exit $((status | proved))
