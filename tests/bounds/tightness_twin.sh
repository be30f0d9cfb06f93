#!/usr/bin/env bash
# The tightness band's twin: bound_tightness against a committed band, with every rigorous bound
# deliberately scaled, must exit 1 and say why. Usage:
#   tightness_twin.sh BOUND_TIGHTNESS BAND SCALE PATTERN -- ARGS...
# where PATTERN is what its output must contain (the band's or the bound's complaint).
set -uo pipefail
bin=$1 band=$2 scale=$3 pattern=$4
shift 5
out=$("$bin" "$@" --band "$band" --bound-scale "$scale" 2>&1)
status=$?
if [ "$status" -ne 1 ]; then
  printf '%s\n' "$out"
  echo "tightness_twin: bounds scaled by $scale: exit $status, expected 1" >&2
  exit 1
fi
if ! grep -q -- "$pattern" <<<"$out"; then
  printf '%s\n' "$out"
  echo "tightness_twin: bounds scaled by $scale: exit 1 but no '$pattern' in the output" >&2
  exit 1
fi
echo "tightness_twin: bounds scaled by $scale fail the band as they must ($pattern)"
