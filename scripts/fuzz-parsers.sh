#!/usr/bin/env bash
# libFuzzer over the input parsers (tests/parsers/): the JSON reader, case files, cases.jsonl lines
# as `report` reads them, campaign.json as a resumed campaign and `report` read it, an exchange
# backend's info.json, the command line (argv split at NUL bytes; parsed, never run). The targets
# are built in the clang sanitizer build (build-asan/, scripts/sanitized.sh configures it;
# -fsanitize=fuzzer,address,undefined), from the same objects the sanitized tests run, so after
# scripts/sanitized.sh only the six small target sources compile here. Each target runs for
# SECONDS (default 10; CI) from its committed seed corpus (tests/parsers/corpus/<target>/, copied:
# new inputs stay in the output folder), as many at once as there are cores. Fails on a crash, an
# exception other than the one-line std::invalid_argument of bad input, a sanitizer report, or an
# input taking over 1 s. Longer: scripts/fuzz-parsers.sh 600. Some targets only:
# FUZZ_TARGETS="cli json"; another output folder: FUZZ_PARSERS_OUT=DIR (default build-asan/fuzz-parsers).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
case "$seconds" in '' | *[!0-9]* | 0*) echo "fuzz-parsers: SECONDS must be a positive integer, got '$seconds'" >&2; exit 2 ;; esac
known=(json case_file record_line campaign_meta exchange_info cli)
targets=(${FUZZ_TARGETS:-${known[*]}})
for target in "${targets[@]}"; do
  [[ " ${known[*]} " == *" $target "* ]] || { echo "fuzz-parsers: unknown target '$target'" >&2; exit 2; }
done
bash scripts/sanitized.sh configure
cmake --build build-asan -j "$(nproc)" --target "${targets[@]/#/fuzz_}" >build-asan/fuzz-build.log 2>&1 ||
  { cat build-asan/fuzz-build.log; echo "fuzz-parsers: building the targets failed" >&2; exit 1; }
out=$(realpath -m "${FUZZ_PARSERS_OUT:-build-asan/fuzz-parsers}")
mkdir -p "$out"
fuzz_one() {
  local target=$1 seconds=$2 out=$3
  rm -rf "$out/corpus_$target" && cp -r "tests/parsers/corpus/$target" "$out/corpus_$target"
  echo "fuzz-parsers: $target for $seconds s"
  if ! ASAN_OPTIONS=detect_leaks=0 "build-asan/tests/parsers/fuzz_$target" -max_total_time="$seconds" -timeout=1 \
      -seed=1 -rss_limit_mb=2048 -artifact_prefix="$out/${target}-" "$out/corpus_$target" >"$out/fuzz_$target.log" 2>&1; then
    tail -30 "$out/fuzz_$target.log"
    echo "fuzz-parsers: $target FAILED (log: $out/fuzz_$target.log; the input: $out/${target}-crash-* or -timeout-*)"
    return 1
  fi
}
export -f fuzz_one
printf '%s\n' "${targets[@]}" | xargs -P "$(nproc)" -I{} bash -c 'fuzz_one "$@"' _ {} "$seconds" "$out" || exit 1
