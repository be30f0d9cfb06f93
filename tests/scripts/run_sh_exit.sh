#!/usr/bin/env bash
# scripts/run.sh's promise (README, "The two commands"): a failing proof exits 1 after the campaign and
# its report are written. Run on a copy of the script in WORK with stand-ins: install-deps.sh and
# cmake do nothing, and flashproof (build/ or build-host/, as run.sh picks) `prove` exits PROVE_STATUS, `fuzz` writes its folder
# and `report` its index.html. Three runs: a failing proof (exit 1, report written), every proof
# passing (exit 0) and a prover that dies (its status, no campaign).
#
#   run_sh_exit.sh WORK
set -uo pipefail
[ "$#" -eq 1 ] || { echo "usage: run_sh_exit.sh WORK" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
fail() { echo "FAILED: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work/tree/scripts" "$work/tree/build/cli" "$work/tree/build-host/cli" "$work/path"
cp "$root/scripts/run.sh" "$work/tree/scripts/"
printf '#!/usr/bin/env bash\nexit 0\n' >"$work/tree/scripts/install-deps.sh"
printf '#!/usr/bin/env bash\nexit 0\n' >"$work/path/cmake"
cat >"$work/tree/build/cli/flashproof" <<'STUB'
#!/usr/bin/env bash
case "$1" in
  prove) echo "prove: stand-in"; exit "${PROVE_STATUS:-0}" ;;
  fuzz) while [ "$#" -gt 0 ] && [ "$1" != --out ]; do shift; done; mkdir -p "$2"; exit 0 ;;
  report) mkdir -p "$4" && echo "<html></html>" >"$4/index.html"; exit 0 ;;
esac
exit 2
STUB
cp "$work/tree/build/cli/flashproof" "$work/tree/build-host/cli/flashproof"
chmod +x "$work/tree/build/cli/flashproof" "$work/tree/build-host/cli/flashproof" "$work/path/cmake"
export PATH="$work/path:$PATH"
run() {  # PROVE_STATUS -> exit status of run.sh; the report is removed first
  rm -rf "$work/tree/out"
  PROVE_STATUS=$1 bash "$work/tree/scripts/run.sh" >"$work/run_$1.log" 2>&1
}

run 1; status=$?
[ "$status" -eq 1 ] || fail "a failing proof: run.sh exited $status, not 1 (log: $work/run_1.log)"
[ -f "$work/tree/out/report/index.html" ] || fail "a failing proof: the report was not written (log: $work/run_1.log)"
run 0; status=$?
[ "$status" -eq 0 ] || fail "every proof passing: run.sh exited $status, not 0 (log: $work/run_0.log)"
[ -f "$work/tree/out/report/index.html" ] || fail "every proof passing: no report"
run 3; status=$?
[ "$status" -eq 3 ] || fail "a prover that dies: run.sh exited $status, not 3 (log: $work/run_3.log)"
[ ! -d "$work/tree/out/campaign" ] || fail "a prover that dies: the campaign ran anyway"
echo "run_sh_exit: a failing proof exits 1 with the report written; passing exits 0; a dying prover stops"
