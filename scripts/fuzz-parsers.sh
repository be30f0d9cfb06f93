#!/usr/bin/env bash
# libFuzzer over the input parsers (tests/parsers/): the JSON reader, case files, cases.jsonl lines
# as `report` reads them, campaign.json as a resumed campaign and `report` read it, an exchange
# backend's info.json, the command line (argv split at NUL bytes; parsed, never run). Built with clang (-fsanitize=fuzzer,address,undefined) into
# build-fuzz/, each target run for SECONDS (default 10; CI) from its committed seed corpus
# (tests/parsers/corpus/<target>/, copied: new inputs stay in build-fuzz/). Fails on a crash, an
# exception other than the one-line std::invalid_argument of bad input, a sanitizer report, or an
# input taking over 1 s. Longer: scripts/fuzz-parsers.sh 600. Some targets only:
# FUZZ_TARGETS="cli json"; another output directory: FUZZ_PARSERS_OUT=DIR. Each source is compiled
# once for all targets, on every core (results/fuzz_parsers_2026-11-27.txt: 0.51x the time).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
out=${FUZZ_PARSERS_OUT:-build-fuzz}
mkdir -p "$out"
cxx=(clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I.)
core=(core/json.cpp core/problem.cpp core/dtype.cpp core/generators.cpp core/tensor.cpp)
declare -A sources=(
  [json]="tests/parsers/fuzz_json.cpp core/json.cpp"
  [case_file]="tests/parsers/fuzz_case_file.cpp harness/case_file.cpp reference/backend_name.cpp ${core[*]}"
  [record_line]="tests/parsers/fuzz_record_line.cpp report/fuzz_record.cpp report/json_values.cpp core/json.cpp"
  [campaign_meta]="tests/parsers/fuzz_campaign_meta.cpp fuzz/campaign_meta.cpp report/campaign_merge.cpp report/fuzz_record.cpp report/json_values.cpp core/json.cpp core/dtype.cpp"
  [exchange_info]="tests/parsers/fuzz_exchange_info.cpp harness/exchange_info.cpp core/json.cpp"
  # The parse only (cli/*_options.cpp, not the verbs' runs); report's options come with report/.
  [cli]="tests/parsers/fuzz_cli.cpp cli/command_line.cpp cli/option_syntax.cpp cli/help_format.cpp
         cli/case_limits.cpp cli/generator_options.cpp cli/check_options.cpp cli/replay_options.cpp cli/prove_options.cpp
         cli/fuzz_options.cpp cli/export_options.cpp fuzz/shard.cpp $(ls report/*.cpp | tr '\n' ' ') ${core[*]}"
)
targets=(${FUZZ_TARGETS:-json case_file record_line campaign_meta exchange_info cli})
for target in "${targets[@]}"; do
  [ -n "${sources[$target]:-}" ] || { echo "fuzz-parsers: unknown target '$target'" >&2; exit 2; }
done
# Each source once, whichever targets share it (core/json.cpp is in all of them), all at once on
# every core; then each target linked from its objects. One flag set for all, so objects are shared.
mkdir -p "$out/obj"
object_of() { echo "$out/obj/$(tr '/' '_' <<<"${1%.cpp}").o"; }
# shellcheck disable=SC2086  # the source lists split on purpose
unique=$(for target in "${targets[@]}"; do printf '%s\n' ${sources[$target]}; done | sort -u)
export out
export -f object_of
printf '%s\n' $unique | xargs -P "$(nproc)" -I{} bash -c 'exec "$@" -c {} -o "$(object_of {})"' _ "${cxx[@]}" ||
  { echo "fuzz-parsers: compiling the parsers failed" >&2; exit 1; }
status=0
for target in "${targets[@]}"; do
  objects=()
  # shellcheck disable=SC2086
  for src in ${sources[$target]}; do objects+=("$(object_of "$src")"); done
  "${cxx[@]}" "${objects[@]}" -o "$out/fuzz_$target" -lpthread
  rm -rf "$out/corpus_$target" && cp -r "tests/parsers/corpus/$target" "$out/corpus_$target"
  echo "fuzz-parsers: $target for $seconds s"
  if ! ASAN_OPTIONS=detect_leaks=0 "$out/fuzz_$target" -max_total_time="$seconds" -timeout=1 -seed=1 \
      -rss_limit_mb=2048 -artifact_prefix="$out/${target}-" "$out/corpus_$target" >"$out/fuzz_$target.log" 2>&1; then
    tail -30 "$out/fuzz_$target.log"
    echo "fuzz-parsers: $target FAILED (log: $out/fuzz_$target.log; the input: $out/${target}-crash-* or -timeout-*)"
    status=1
  fi
done
exit $status
