"""flashproof.fuzz: campaigns over callables (forked child per case, shrinking, case files) whose
directories `flashproof report` reads."""
import faulthandler
import json
import os
import subprocess
import time

import pytest

import flashproof
import kernels

SMALL = dict(max_seqlen=48, max_work=2**15, progress=False)


def records(out):
    with open(os.path.join(out, "cases.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def test_naive_numpy_kernel_passes_a_campaign(tmp_path):
    out = tmp_path / "good"
    result = flashproof.fuzz(kernels.forward, kernels.backward, out=out, seed=3, cases=8, name="naive_np", **SMALL)
    assert result["run"] == 8 and result["fail"] == 0 and result["crash"] == 0, result
    assert result["pass"] + result["out_of_domain"] + result["not_judged"] == 8
    lines = records(out)
    assert {r["impl"] for r in lines} == {"python:naive_np"}
    # Each record's case is the generator's case of that index.
    for r in lines:
        case = flashproof.generate_case(3, r["index"], **{k: SMALL[k] for k in ("max_seqlen", "max_work")})
        assert (r["case"]["seqlen_q"], r["case"]["seqlen_k"], r["case"]["head_dim"], r["case"]["dtype"]) == \
               (case.seqlen_q, case.seqlen_k, case.head_dim, case.dtype)
    # Running again resumes: nothing new.
    again = flashproof.fuzz(kernels.forward, kernels.backward, out=out, seed=3, cases=8, name="naive_np", **SMALL)
    assert again["run"] == 0 and again["resumed"] == 8


def test_broken_kernel_fails_shrinks_and_replays(tmp_path):
    result = flashproof.fuzz(kernels.forward_lse_without_log_l, out=tmp_path / "bad", seed=1, cases=3, name="nolog",
                             **SMALL)
    assert result["fail"] >= 1 and result["failure_files"], result
    file = result["failure_files"][0]
    shrunk = flashproof.read_case(file)
    assert shrunk.impl == "python:nolog"
    assert flashproof.replay(kernels.forward_lse_without_log_l, file)["verdict"] == "fail"
    assert flashproof.replay(kernels.forward, file)["verdict"] == "pass"
    # The record's replay line is the Python call (the command cannot load a callable), and the
    # command, given the file, says so in one line with exit status 2.
    failed = [r for r in records(tmp_path / "bad") if r["status"] == "fail"]
    assert failed and all(r["replay"].startswith('flashproof.replay(<your forward>, "') for r in failed), failed
    cli = os.environ.get("FLASHPROOF_CLI")
    if cli:
        run = subprocess.run([cli, "replay", file], capture_output=True, text=True)
        assert run.returncode == 2 and "re-run it in Python: flashproof.replay(<your forward>" in run.stderr, run


def raising_forward(q, k, v, p):
    raise RuntimeError("boom")


def aborting_forward(q, k, v, p):
    faulthandler.disable()  # pytest's handler would print the child's stack on the terminal
    os.abort()


def wrong_dtype_forward(q, k, v, p):
    o, lse = kernels.forward(q, k, v, p)
    return o.astype("float64"), lse


@pytest.mark.parametrize("forward,words", [(raising_forward, "RuntimeError: boom"), (aborting_forward, "signal"),
                                           (wrong_dtype_forward, "TypeError")])
def test_callable_crash_or_exception_is_a_crash_record(tmp_path, forward, words):
    result = flashproof.fuzz(forward, out=tmp_path / "c", seed=2, cases=2, name="crashy", shrink=False, **SMALL)
    assert result["crash"] == 2, result
    assert all(r["status"] == "crash" and words in r["error"] for r in records(tmp_path / "c"))


def test_hanging_callable_is_stopped(tmp_path):
    def hanging(q, k, v, p):
        time.sleep(60)
    start = time.monotonic()
    result = flashproof.fuzz(hanging, out=tmp_path / "h", seed=2, cases=1, name="hangs", shrink=False,
                             case_timeout=1, **SMALL)
    assert result["crash"] == 1 and time.monotonic() - start < 30


def test_parent_interpreter_still_works_after_children(tmp_path):
    flashproof.fuzz(kernels.forward, out=tmp_path / "p", seed=5, cases=2, name="naive_fwd", **SMALL)
    case = flashproof.Case(seqlen_q=8, head_dim=8)
    assert flashproof.check(kernels.forward, case)["verdict"] == "pass"


@pytest.mark.skipif(not os.environ.get("FLASHPROOF_CLI"), reason="FLASHPROOF_CLI not set (ctest sets it)")
def test_flashproof_report_reads_the_campaign(tmp_path):
    flashproof.fuzz(kernels.forward, kernels.backward, out=tmp_path / "good", seed=4, cases=4, name="naive_np", **SMALL)
    flashproof.fuzz(kernels.forward_missing_scale, out=tmp_path / "bad", seed=4, cases=2, name="noscale", **SMALL)
    report = tmp_path / "report"
    run = subprocess.run([os.environ["FLASHPROOF_CLI"], "report", str(tmp_path / "good"), str(tmp_path / "bad"),
                          "--out", str(report)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    results = (report / "results.json").read_text()
    assert "python:naive_np" in results and "python:noscale" in results
    assert (report / "index.html").exists() and (report / "summary.md").exists()
