"""Bad input from Python: one-line ValueError/TypeError, never a crash."""
import os
import subprocess
import sys

import numpy as np
import pytest

import flashproof
import kernels

CASE = flashproof.Case(seqlen_q=4, head_dim=8)


def one_line(excinfo):
    text = str(excinfo.value)
    assert text and "\n" not in text, text
    return text


@pytest.mark.parametrize("kwargs,error,words", [
    (dict(seqlen_q=0), ValueError, "seqlen_q"),
    (dict(heads_q=6, heads_kv=4), ValueError, "multiple"),
    (dict(dtype="fp8"), ValueError, "dtype"),
    (dict(dtype=16), TypeError, "dtype"),
    (dict(seqlen_q="8"), TypeError, "seqlen_q"),
    (dict(seqlen_q=2**70), ValueError, "seqlen_q"),
    (dict(head_dim=300), ValueError, "head_dim"),
    (dict(distribution="cauchy"), ValueError, "distribution"),
    (dict(window=3), TypeError, "window"),
    (dict(causal=True, window=(2, 1)), ValueError, "causal"),
    (dict(scale="x"), TypeError, "scale"),
])
def test_bad_case(kwargs, error, words):
    with pytest.raises(error) as e:
        flashproof.Case(**kwargs)
    assert words in one_line(e)


def wrong_shape(q, k, v, p):
    o, lse = kernels.forward(q, k, v, p)
    return o[:, :-1], lse


def wrong_dtype(q, k, v, p):
    o, lse = kernels.forward(q, k, v, p)
    return o.astype(np.float32), lse


def wrong_lse_dtype(q, k, v, p):
    o, lse = kernels.forward(q, k, v, p)
    return o, lse.astype(np.float64)


def one_output(q, k, v, p):
    return kernels.forward(q, k, v, p)[0]


def not_arrays(q, k, v, p):
    return [1.0, 2.0]


def raises(q, k, v, p):
    raise RuntimeError("kernel exploded\nwith a second line")


@pytest.mark.parametrize("forward,error,words", [
    (wrong_shape, ValueError, "shape"),
    (wrong_dtype, TypeError, "float32"),
    (wrong_lse_dtype, TypeError, "lse"),
    (one_output, TypeError, "expected a tuple"),
    (not_arrays, TypeError, "float"),
    (raises, flashproof.CallableError, "RuntimeError: kernel exploded with a second line"),
])
def test_bad_callable(forward, error, words):
    with pytest.raises(error) as e:
        flashproof.check(forward, CASE)
    assert words in one_line(e)


def test_callable_error_is_a_value_error_keeping_the_cause():
    with pytest.raises(ValueError) as e:
        flashproof.check(raises, CASE)
    assert isinstance(e.value.__cause__, RuntimeError)


def test_bad_backward_output():
    def backward_wrong_shape(q, k, v, o, lse, dout, p):
        dq, dk, dv = kernels.backward(q, k, v, o, lse, dout, p)
        return dq, dk, dv[..., :1]
    with pytest.raises(ValueError) as e:
        flashproof.check(kernels.forward, CASE.with_backward(), backward=backward_wrong_shape)
    assert "dv" in one_line(e)


@pytest.mark.parametrize("call,error,words", [
    (lambda: flashproof.check(kernels.forward, CASE.with_backward()), ValueError, "backward"),
    (lambda: flashproof.check("no-such-kernel", CASE), ValueError, "unknown implementation"),
    (lambda: flashproof.check(42, CASE), TypeError, "forward"),
    (lambda: flashproof.check(kernels.forward, CASE, backward=3), TypeError, "backward"),
    (lambda: flashproof.check(kernels.forward, CASE, model="exact"), ValueError, "model"),
    (lambda: flashproof.check(kernels.forward, CASE, gqa="sum"), ValueError, "gqa"),
    (lambda: flashproof.check(kernels.forward, CASE, tensors="jax"), ValueError, "tensors"),
    (lambda: flashproof.check(kernels.forward, CASE, reference="exact"), ValueError, "reference"),
    (lambda: flashproof.check(kernels.forward, CASE, dtypes=["bf16"]), ValueError, "does not support"),
    (lambda: flashproof.check(kernels.forward, "/nonexistent/case.json"), ValueError, "case file"),
    (lambda: flashproof.check(kernels.forward, 5), TypeError, "case"),
    (lambda: flashproof.generate_case(1, -1), ValueError, "index"),
    (lambda: flashproof.generate_case(1, 0, dtype="fp64"), ValueError, "dtype"),
    (lambda: flashproof.fuzz(kernels.forward, out="/tmp/x", cases=1, minutes=1), ValueError, "one of"),
    (lambda: flashproof.fuzz(kernels.forward, out="/tmp/x", cases=1, name="a b"), ValueError, "name"),
    (lambda: flashproof.properties.run(kernels.forward, names=["no-such"]), ValueError, "unknown property"),
    (lambda: CASE.inputs("jax"), ValueError, "format"),
])
def test_bad_arguments(call, error, words):
    with pytest.raises(error) as e:
        call()
    assert words in one_line(e)


def test_bad_case_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "flashproof-case", "version": 1}')
    with pytest.raises(ValueError) as e:
        flashproof.replay(kernels.forward, bad)
    assert "bad.json" in one_line(e)


# A case past check's cost limits is refused before anything runs (the callable would fail the test
# if it were called), as `flashproof check` refuses it; a larger limit lets a small case through.
def test_cost_limits():
    def must_not_run(*args):
        raise AssertionError("the callable ran")

    huge = flashproof.Case(seqlen_q=2**20, seqlen_k=2**20, head_dim=256, heads_q=64)
    with pytest.raises(ValueError) as e:
        flashproof.check(must_not_run, huge)
    assert "max_work" in one_line(e)
    with pytest.raises(ValueError) as e:
        huge.reference()
    assert "max_work" in one_line(e)
    with pytest.raises(ValueError) as e:
        flashproof.check(must_not_run, CASE, max_work=10)
    assert "more than max_work=10" in one_line(e)
    with pytest.raises(ValueError) as e:
        flashproof.check(must_not_run, CASE, max_memory_gib=1e-9)
    assert "max_memory_gib" in one_line(e)
    with pytest.raises(ValueError) as e:
        flashproof.check(must_not_run, CASE, max_work=-1)
    assert "positive" in one_line(e)
    assert flashproof.check(kernels.forward, CASE, max_work=4 * 4 * 8)["verdict"] == "pass"


# A user's suite: parametrized cases whose checks fail by the callable's exception, the properties
# and a campaign. At exit nanobind saw every parametrized Case still held by pytest and printed one
# "leaked instance" line each; none is a leak of flashproof's.
SUITE = """
import sys
sys.path.insert(0, {here!r})
import pytest
import flashproof, flashproof.testing as ft
import kernels

def bad_forward(q, k, v, p):
    if p.seqlen_k > 20:
        raise ValueError("boom")
    return kernels.forward(q, k, v, p)

@pytest.mark.parametrize("case", ft.cases(40, seed=1), ids=str)
def test_check(case):
    ft.assert_check(bad_forward, case)

def test_properties():
    ft.assert_properties(bad_forward, names=["differential"], cases=20)

def test_fuzz(tmp_path):
    flashproof.fuzz(bad_forward, out=tmp_path / "f", cases=6, max_seqlen=48, max_work=2**15, progress=False)
"""


def test_no_leak_messages_at_exit(tmp_path):
    suite = tmp_path / "test_suite.py"
    suite.write_text(SUITE.format(here=os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, FLASHPROOF_CASE_DIR=str(tmp_path / "failed"))
    env.pop("FLASHPROOF_LEAK_WARNINGS", None)

    def run(**extra):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite)],
                              capture_output=True, text=True, env=dict(env, **extra), cwd=tmp_path)

    quiet = run()
    assert "failed" in quiet.stdout, quiet.stdout[-2000:]  # the suite ran, and its checks failed
    assert "leaked" not in quiet.stdout + quiet.stderr, (quiet.stdout + quiet.stderr)[-2000:]
    # Its twin: with nanobind's report turned back on, the same suite prints them.
    loud = run(FLASHPROOF_LEAK_WARNINGS="1")
    assert "leaked instance" in loud.stdout + loud.stderr, (loud.stdout + loud.stderr)[-2000:]
