#!/usr/bin/env bash
# The cluster recipes of docs/cluster run as written, with the schedulers played by this script:
# - fuzz-array.sbatch: run by hand it submits itself as the array and the merge job (a stub
#   `sbatch` records both); then every array task of its `#SBATCH --array` range runs with the
#   variables Slurm sets, and the recorded merge command runs last.
# - fuzz-indexed-job.yaml: the shard Job's command runs once per index below `completions`, with
#   JOB_COMPLETION_INDEX set, then the report Job's command.
# Each must give a report of exactly the campaign's cases, with no warning (no shard missing or
# unfinished). Only the campaign's size and implementation are made small (the manifest's paths
# and sizes are substituted; the Slurm script takes them from the environment).
# Usage: cluster_recipes_test.sh FLASHPROOF_BINARY SOURCE_DIR
set -euo pipefail
flashproof=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "cluster_recipes_test: $*" >&2; exit 1; }

# The report at $1 holds exactly $2 records, none twice, and no warning (results.json's top-level
# members, two spaces in), and its command printed none ($3: its stderr).
expect_report() {
  local report=$1 records=$2 stderr=$3 json=$1/results.json
  [ -f "$report/index.html" ] || fail "no report at $report"
  grep -q "^  \"records\": $records,\$" "$json" || fail "$json: not $records records: $(grep '^  "records"' "$json")"
  grep -q '^  "duplicates": 0,$' "$json" || fail "$json: $(grep '^  "duplicates"' "$json")"
  grep -q '^  "warnings": \[\],$' "$json" || fail "$json: warnings: $(grep -A3 '^  "warnings"' "$json")"
  [ ! -s "$stderr" ] || fail "the report warned: $(cat "$stderr")"
}

# ---- Slurm ----
script=$src/docs/cluster/fuzz-array.sbatch
mkdir -p "$work/bin"
cat >"$work/bin/sbatch" <<'EOF'
#!/usr/bin/env bash
printf '%s\n' "$*" >>"$SBATCH_LOG"
echo 4242
EOF
chmod +x "$work/bin/sbatch"
export SBATCH_LOG=$work/sbatch.log
cases=40
(
  export PATH="$work/bin:$PATH" FLASHPROOF=$flashproof CAMPAIGN=$work/slurm CASES=$cases SEED=3 IMPLS=naive DTYPES=fp32
  bash "$script" >/dev/null
  [ "$(wc -l <"$SBATCH_LOG")" -eq 2 ] || fail "expected two submissions, got: $(cat "$SBATCH_LOG")"
  head -1 "$SBATCH_LOG" | grep -q -- "--parsable $script" || fail "the array was not submitted: $(head -1 "$SBATCH_LOG")"
  tail -1 "$SBATCH_LOG" | grep -q -- "--dependency=afterany:4242" || fail "the merge does not wait for the array"
  range=$(sed -n 's/^#SBATCH --array=\([0-9]*-[0-9]*\)$/\1/p' "$script")
  [ -n "$range" ] || fail "no '#SBATCH --array=LO-HI' line in $script"
  lo=${range%-*} hi=${range#*-}
  for ((id = lo; id <= hi; id++)); do
    SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=$lo SLURM_ARRAY_TASK_MAX=$hi \
      SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1)) SLURM_CPUS_PER_TASK=1 bash "$script" >/dev/null 2>&1 ||
      fail "array task $id failed"
  done
  merge=$(tail -1 "$SBATCH_LOG" | sed -n 's/.*--wrap=//p')
  [ -n "$merge" ] || fail "the merge job has no --wrap command"
  sh -c "$merge" >/dev/null 2>"$work/slurm-report.err" || fail "the merge failed: $(cat "$work/slurm-report.err")"
)
expect_report "$work/slurm/report" $cases "$work/slurm-report.err"

# ---- Kubernetes ----
manifest=$src/docs/cluster/fuzz-indexed-job.yaml
completions=$(sed -n 's/^ *completions: *\([0-9]*\)$/\1/p' "$manifest")
[ -n "$completions" ] || fail "no completions in $manifest"
# The shard container's folded command (the lines after '- >-'), and the report container's.
shard_command=$(awk '/- >-/ {on = 1; next} on && /^ *[a-z]+:/ {on = 0} on {printf "%s ", $0}' "$manifest")
report_command=$(sed -n 's/^ *args: \["\(exec .* report .*\)"\]$/\1/p' "$manifest")
[ -n "$shard_command" ] && [ -n "$report_command" ] || fail "cannot find the containers' commands in $manifest"
grep -q -- "--shard-count $completions " <<<"$shard_command" || fail "--shard-count is not completions ($completions)"
small() {
  sed -e "s#/opt/flashproof/flashproof#$flashproof#g" -e "s#/campaign#$work/k8s#g" \
    -e "s#--impl [^ ]*#--impl naive#" -e "s#--dtype [^ ]*#--dtype fp32#" -e "s#--cases [0-9]*#--cases $cases#" \
    -e "s#--jobs [0-9]*#--jobs 1#" <<<"$1"
}
mkdir -p "$work/k8s"
for ((index = 0; index < completions; index++)); do
  JOB_COMPLETION_INDEX=$index sh -c "$(small "$shard_command")" >/dev/null 2>&1 || fail "pod $index failed"
done
sh -c "$(small "$report_command")" >/dev/null 2>"$work/k8s-report.err" || fail "the report Job failed: $(cat "$work/k8s-report.err")"
expect_report "$work/k8s/report" $cases "$work/k8s-report.err"
echo "cluster_recipes_test: Slurm array and Kubernetes Indexed Job each gave a report of $cases cases"
