"""The console command `flashproof` of the package (flashproof._cli, [project.scripts]): the C++
command line inside the extension module, with the native binary's output and exit statuses."""
import json
import os
import subprocess
import sys

import pytest

import flashproof
from flashproof import _core


def command():
    """The console script the package installed (the wheel's, scripts/python-package.sh) when the
    package under test is an installed one, else the same entry point through `python -m` (a build
    tree's package on PYTHONPATH: ctest)."""
    script = os.path.join(os.path.dirname(sys.executable), "flashproof")
    if os.path.abspath(flashproof.__file__).startswith(os.path.abspath(sys.prefix) + os.sep) and os.path.exists(script):
        return [script]
    return [sys.executable, "-m", "flashproof._cli"]


def run(*args):
    return subprocess.run(command() + list(args), capture_output=True, text=True, timeout=300)


def test_list_names_the_built_in_implementations():
    r = run("list")
    assert r.returncode == 0, r.stderr
    names = [line.split("\t")[0] for line in r.stdout.splitlines()]
    assert "naive" in names
    assert {n for n, _ in flashproof.implementations()} <= set(names)


@pytest.mark.skipif(not os.environ.get("FLASHPROOF_CLI"), reason="FLASHPROOF_CLI not set (ctest sets it)")
def test_same_output_as_the_native_binary():
    for args in (["list"], ["check", "--impl", "naive", "--seqlen-q", "16", "--head-dim", "16", "--json"]):
        native = subprocess.run([os.environ["FLASHPROOF_CLI"], *args], capture_output=True, text=True, timeout=300)
        ours = run(*args)
        assert ours.returncode == native.returncode
        if "--json" in args:  # the same record, but for the run's timings
            ours_record, native_record = json.loads(ours.stdout), json.loads(native.stdout)
            ours_record.pop("seconds"), native_record.pop("seconds")
            assert ours_record == native_record
        else:
            assert ours.stdout == native.stdout


def test_check_passes_with_status_0_and_prints_the_record():
    r = run("check", "--impl", "naive", "--seqlen-q", "16", "--head-dim", "16", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == "pass"


@pytest.mark.parametrize("args,words", [(["check", "--bogus"], "flashproof: "),
                                        (["check", "--impl", "nosuch"], "flashproof: "),
                                        (["frobnicate"], "flashproof: "),
                                        (["report", "--out", "x"], "flashproof report: ")])
def test_bad_input_is_one_line_and_status_2(args, words):
    r = run(*args)
    assert r.returncode == 2
    assert r.stderr.startswith(words) and r.stderr.count("\n") == 1, r.stderr


def test_help_is_status_0():
    r = run("--help")
    assert r.returncode == 0 and "report" in r.stdout


def test_replay_of_a_python_implementations_case_is_one_line_status_2(tmp_path):
    # A failure saved by flashproof.fuzz names python:NAME, which only its user's program can load:
    # the command says so in one line (reports print the flashproof.replay(...) call instead).
    import kernels
    result = flashproof.fuzz(kernels.forward_missing_scale, out=tmp_path / "bad", seed=4, cases=2, name="noscale",
                             max_seqlen=48, max_work=2**15, progress=False, shrink=False)
    assert result["failure_files"], result
    r = run("replay", result["failure_files"][0])
    assert r.returncode == 2 and "python:noscale" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_core_main_returns_the_status_in_process(capfd):
    assert _core.main(["list"]) == 0
    assert "naive" in capfd.readouterr().out
    assert _core.main(["check", "--bogus"]) == 2
    assert capfd.readouterr().err.startswith("flashproof: ")
