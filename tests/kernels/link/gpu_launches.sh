#!/usr/bin/env bash
# The GPU build's launch paths under the stub runtime (stub_cudart.cpp; test
# kernels.gpu_launches_are_configured): `flashproof check` of every flash implementation, both
# directions, both dtypes, two head dims, and bench_flash, all with FLASHPROOF_TARGET=gpu. Every
# kernel the stub saw must have come through a configured launch (<<<>>> then the host stub), none
# through a bare call of a host stub, and each run must have launched its family's kernels.
#
#   gpu_launches.sh STUB_DIR FLASHPROOF BENCH_FLASH WORK_DIR [HEAD_DIMS]
# HEAD_DIMS: comma-separated, default 64,128 (a narrowed build passes those it built; empty: skip,
# exit 77). Exit status 1 on the first run that breaks the rule (what the stub saw is printed), 2 bad usage.
set -uo pipefail
[ "$#" -eq 4 ] || [ "$#" -eq 5 ] ||
  { echo "usage: gpu_launches.sh STUB_DIR FLASHPROOF BENCH_FLASH WORK_DIR [HEAD_DIMS]" >&2; exit 2; }
stub_dir=$1 flashproof=$2 bench_flash=$3 work=$4 dims=${5-64,128}
if [ -z "$dims" ]; then
  echo "gpu_launches: skipped: neither head dim 64 nor 128 is built for both FA2 and FA1 (FLASHPROOF_FA*_HEAD_DIMS)"
  exit 77
fi
[ -e "$stub_dir/libcudart.so.13" ] || { echo "gpu_launches: no libcudart.so.13 in $stub_dir" >&2; exit 2; }
mkdir -p "$work"
log=$work/stub.log
export LD_LIBRARY_PATH=$stub_dir FLASHPROOF_STUB_CUDART_LOG=$log FLASHPROOF_TARGET=gpu
runs=0

# run EXPECTED_KERNEL... -- COMMAND...: the command may pass or fail its own check (the stub computes
# nothing, so outputs stay poisoned), but must not crash, and the stub must have seen every
# EXPECTED_KERNEL launched, configured, and nothing else.
run() {
  local expected=()
  while [ "$1" != -- ]; do expected+=("$1"); shift; done
  shift
  : >"$log"
  "$@" >"$work/out.txt" 2>&1
  local s=$?
  local seen
  seen=$(tail -1 "$log")
  runs=$((runs + 1))
  if [ "$s" -gt 1 ] || [[ "$seen" != "stub-cudart configured="[1-9]*" unconfigured=0 unregistered=0 kernels="* ]]; then
    echo "gpu_launches: $* (exit $s)"
    echo "  stub saw: ${seen:-nothing (was the stub runtime loaded?)}"
    tail -5 "$work/out.txt" | sed 's/^/  /'
    exit 1
  fi
  for k in "${expected[@]}"; do
    [[ "$seen" == *"$k"* ]] || { echo "gpu_launches: $*: no $k launched"; echo "  stub saw: $seen"; exit 1; }
  done
}

for impl in fa2 fa2-deterministic fa1; do
  family=${impl%%-*}
  for dtype in fp16 bf16; do
    for d in ${dims//,/ }; do
      shape=(--dtype "$dtype" --head-dim "$d" --seqlen-q 70 --seqlen-k 90 --heads 2 --kv-heads 1 --causal)
      run "${family}_forward_kernel" -- "$flashproof" check --impl "$impl" "${shape[@]}"
      run backward_preprocess_kernel backward_convert_kernel -- "$flashproof" check --impl "$impl" "${shape[@]}" --backward
    done
  done
done
run fa2_forward_kernel fa1_forward_kernel backward_preprocess_kernel backward_convert_kernel -- \
  "$bench_flash" --target gpu --tiny --kernels fa2,fa1 --directions fwd,bwd --dtypes fp16,bf16 --head-dims "$dims" \
  --seqlens 64 --causal both --warmup 0 --repeats 1
echo "gpu_launches: $runs runs, every launch configured"
