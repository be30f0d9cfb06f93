#!/usr/bin/env bash
# scripts/gpu-check's one-call logic on this machine, with a fake bundle (tests/scripts/CMakeLists.txt):
# stand-in binaries named as `gpu-check --binaries` lists them, and stand-ins for nvidia-smi and
# compute-sanitizer on PATH. Two runs:
#  1. every stage, no budget: each passes, exit 0, and $OUT holds exactly the archive and summary.txt,
#     the archive with every stage's folder;
#  2. `all --budget 45` with the race test hanging: race ends `timeout` at the deadline, the stages
#     that no longer fit are `skipped`, exit 1, and the whole run stays within the budget.
#
#   gpu_check_runs.sh WORK
set -uo pipefail
[ "$#" -eq 1 ] || { echo "usage: gpu_check_runs.sh WORK" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
rm -rf "$work" && mkdir -p "$work/stage/bin" "$work/stage/lib" "$work/stage/scripts" "$work/path"
fail() { echo "FAILED: $*"; exit 1; }

# The stand-ins: each prints its name; test_flash_race_gpu sleeps $FAKE_RACE_SLEEP; flashproof fuzz
# writes one passing record (fuzz-triage reads it) and report makes its folder.
for b in $(bash "$root/scripts/gpu-check" --binaries); do
  cat >"$work/stage/bin/$b" <<STUB
#!/usr/bin/env bash
echo "$b \$*"
[ "$b" = test_flash_race_gpu ] && sleep "\${FAKE_RACE_SLEEP:-0}"
if [ "$b" = flashproof ] && [ "\$1" = fuzz ]; then
  while [ "\$#" -gt 0 ] && [ "\$1" != --out ]; do shift; done
  mkdir -p "\$2" && echo '{"index": 0, "impl": "fa2", "status": "pass"}' >"\$2/cases.jsonl"
fi
if [ "$b" = flashproof ] && [ "\$1" = report ]; then mkdir -p "\$4"; fi
exit 0
STUB
  chmod +x "$work/stage/bin/$b"
done
cp "$root/scripts/fuzz-triage" "$work/stage/scripts/"
echo "test" >"$work/stage/COMMIT"
tar -C "$work/stage" -cJf "$work/bundle.tar.xz" .
printf '#!/usr/bin/env bash\necho "Fake GPU"\n' >"$work/path/nvidia-smi"
# compute-sanitizer --tool T --error-exitcode N PROGRAM ARGS...: runs the program.
printf '#!/usr/bin/env bash\nshift 4\nexec "$@"\n' >"$work/path/compute-sanitizer"
chmod +x "$work/path/"*
export PATH="$work/path:$PATH"

OUT=$work/out1 bash "$root/scripts/gpu-check" all --bundle "$work/bundle.tar.xz" >"$work/run1.log" 2>&1
status=$?
cat "$work/out1/summary.txt" 2>/dev/null
[ "$status" -eq 0 ] || fail "run 1 exited $status (log: $work/run1.log)"
[ "$(ls "$work/out1" | wc -l)" -eq 2 ] || fail "run 1 left $(ls "$work/out1" | tr '\n' ' ') in OUT"
tar -tJf "$work/out1"/gpu-check-*.tar.xz >"$work/out1.list" || fail "run 1: the archive does not read"
for s in env exp2 tests race sanitize bench bounds fuzz; do
  grep -q "^$s  *pass " "$work/out1/summary.txt" || fail "run 1: stage $s did not pass"
  grep -q "/$s/\$" "$work/out1.list" || fail "run 1: no $s/ in the archive"
done

start=$(date +%s)
FAKE_RACE_SLEEP=300 OUT=$work/out2 bash "$root/scripts/gpu-check" all --budget 45 --bundle "$work/bundle.tar.xz" \
  >"$work/run2.log" 2>&1
status=$?
took=$(($(date +%s) - start))
cat "$work/out2/summary.txt" 2>/dev/null
[ "$status" -eq 1 ] || fail "run 2 exited $status, not 1 (log: $work/run2.log)"
[ "$took" -le 45 ] || fail "run 2 took $took s of a 45 s budget"
grep -q "^race  *timeout " "$work/out2/summary.txt" || fail "run 2: the hanging race stage was not cut off"
grep -q "^tests  *skipped " "$work/out2/summary.txt" || fail "run 2: tests (needs 60 s) was not skipped"
grep -q "^fuzz  *skipped " "$work/out2/summary.txt" || fail "run 2: fuzz was not skipped"
ls "$work/out2"/gpu-check-*.tar.xz >/dev/null || fail "run 2: no archive"
echo "gpu_check_runs: every stage passes with stand-ins; a hanging stage is cut off at the deadline ($took s of 45)"
