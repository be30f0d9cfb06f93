#!/usr/bin/env bash
# scripts/fuzz-triage on real records (fuzz_triage/): documented.jsonl holds fp16 backward failures of
# the documented dS overflow (naive and fa2, from an emulated campaign) and a pass, which must leave
# exit status 0; outside.jsonl adds a wrong answer and a crash of the 9e977a8 GPU run and a
# documented record doctored twice: dV with NaN too (only dQ and dK belong to the class), and dQ
# wrong by finite values above its bound instead of non-finite ones; each must be reported (exit 1).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
triage=$here/../../scripts/fuzz-triage
out=$(python3 "$triage" "$here/fuzz_triage/documented.jsonl")
status=$?
echo "$out"
[ "$status" -eq 0 ] && grep -q "1 pass, 3 documented, 0 other failure, 0 crash" <<<"$out" ||
  { echo "FAILED: the documented class was not passed (exit $status)"; exit 1; }
out=$(python3 "$triage" "$here/fuzz_triage/outside.jsonl")
status=$?
echo "$out"
[ "$status" -eq 1 ] && [ "$(grep -c OUTSIDE <<<"$out")" -eq 4 ] &&
  grep -q "OUTSIDE case 2 fa2: fail" <<<"$out" && grep -q "OUTSIDE case 5 fa2: crash" <<<"$out" &&
  grep -q "OUTSIDE case 9008 fa2: fail" <<<"$out" && grep -q "OUTSIDE case 9009 fa2: fail" <<<"$out" ||
  { echo "FAILED: a failure outside the class was not reported (exit $status)"; exit 1; }
echo "fuzz_triage: the documented class passes, the four others are reported"
