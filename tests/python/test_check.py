"""flashproof.check on callables: the naive NumPy kernel passes, broken ones fail, and the record
is the CLI's for the same implementation."""
import json
import os
import subprocess

import numpy as np
import pytest

import flashproof
import flashproof.testing as ft
import kernels

SHAPES = [
    dict(seqlen_q=17, seqlen_k=33, head_dim=16, heads_q=4, heads_kv=2, causal=True),
    dict(seqlen_q=40, seqlen_k=24, head_dim=8, batch=2, window=(5, 3)),
    dict(seqlen_q=9, seqlen_k=9, head_dim=32, heads_q=3, heads_kv=1, scale=0.3),
]


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("shape", SHAPES, ids=["causal-gqa", "window-batch", "mqa-scale"])
def test_naive_numpy_kernel_passes_forward_and_backward(dtype, shape):
    case = flashproof.Case(dtype=dtype, backward=True, seed=3, **shape)
    record = flashproof.check(kernels.forward, case, backward=kernels.backward)
    assert record["verdict"] == "pass", record
    assert [t["name"] for t in record["tensors"]] == ["O", "LSE", "dQ", "dK", "dV"]
    assert record["case"]["impl"] == "python:callable"


def cli_record(case, impl):
    p = case
    args = [os.environ["FLASHPROOF_CLI"], "check", "--json", "--impl", impl, "--dtype", p.dtype,
            "--batch", str(p.batch), "--heads", str(p.heads_q), "--kv-heads", str(p.heads_kv),
            "--seqlen-q", str(p.seqlen_q), "--seqlen-k", str(p.seqlen_k), "--head-dim", str(p.head_dim),
            "--window", f"{p.window[0]},{p.window[1]}", "--seed", str(p.seed), "--dist", p.distribution]
    if p.backward:
        args.append("--backward")
    return json.loads(subprocess.run(args, capture_output=True, text=True, check=False).stdout)


def without_timings(record):
    text = json.dumps(record, sort_keys=True)
    record = json.loads(text)
    record.pop("seconds", None)
    for key in [k for k in record if k.startswith("seconds")]:
        record.pop(key)
    return record


@pytest.mark.skipif(not os.environ.get("FLASHPROOF_CLI"), reason="FLASHPROOF_CLI not set (ctest sets it)")
def test_builtin_name_gives_the_cli_record():
    case = flashproof.Case(seqlen_q=20, seqlen_k=31, head_dim=16, heads_q=2, heads_kv=1, causal=True,
                           dtype="bf16", seed=5, backward=True)
    ours = without_timings(flashproof.check("naive", case))
    cli = without_timings(cli_record(case, "naive"))
    assert ours == cli


@pytest.mark.skipif(not os.environ.get("FLASHPROOF_CLI"), reason="FLASHPROOF_CLI not set (ctest sets it)")
def test_callable_is_judged_like_the_builtin_with_the_same_model():
    # The same arithmetic model gives the same reference and the same rigorous bounds.
    case = flashproof.Case(seqlen_q=12, seqlen_k=12, head_dim=16, dtype="fp16", seed=2)
    ours = flashproof.check(kernels.forward, case, model="naive")
    cli = cli_record(case, "naive")
    for a, b in zip(ours["tensors"], cli["tensors"]):
        assert a["name"] == b["name"]
        assert a["rigorous_bound"]["max_bound"] == b["rigorous_bound"]["max_bound"]
        assert a["tolerance"] == b["tolerance"]


BROKEN_FORWARD = [
    (kernels.forward_missing_scale, dict(seqlen_q=16, head_dim=64, scale=0.125)),
    (kernels.forward_top_left_mask, dict(seqlen_q=8, seqlen_k=24, head_dim=16, causal=True)),
    (kernels.forward_lse_without_log_l, dict(seqlen_q=16, head_dim=16)),
]


@pytest.mark.parametrize("broken,shape", BROKEN_FORWARD, ids=lambda x: getattr(x, "__name__", ""))
def test_broken_forward_fails(broken, shape):
    record = flashproof.check(broken, flashproof.Case(**shape))
    assert record["verdict"] == "fail"


def test_broken_dv_fails_and_the_good_one_passes_the_same_case():
    case = flashproof.Case(seqlen_q=16, head_dim=16, heads_q=4, heads_kv=2, backward=True)
    bad = flashproof.check(kernels.forward, case, backward=kernels.backward_dv_first_head)
    assert bad["verdict"] == "fail"
    failing = [t["name"] for t in bad["tensors"] if t["verdict"] == "fail"]
    assert failing == ["dV"]
    assert flashproof.check(kernels.forward, case, backward=kernels.backward)["verdict"] == "pass"


def test_replay_of_a_saved_case(tmp_path):
    case = flashproof.Case(seqlen_q=8, seqlen_k=24, head_dim=16, causal=True, seed=9)
    file = tmp_path / "case.json"
    case.save(file, note="top-left mask")
    assert flashproof.replay(kernels.forward_top_left_mask, file)["verdict"] == "fail"
    assert flashproof.replay(kernels.forward, file)["verdict"] == "pass"
    assert flashproof.read_case(file).note == "top-left mask"


def test_assert_check_fails_with_a_replay_line(tmp_path, monkeypatch):
    monkeypatch.setenv("FLASHPROOF_CASE_DIR", str(tmp_path))
    case = flashproof.Case(seqlen_q=16, head_dim=16)
    with pytest.raises(pytest.fail.Exception) as failure:
        ft.assert_check(kernels.forward_lse_without_log_l, case)
    message = str(failure.value)
    assert "flashproof.replay(forward_lse_without_log_l, " in message
    saved = [f for f in os.listdir(tmp_path) if f.endswith(".json")]
    assert len(saved) == 1
    assert flashproof.replay(kernels.forward_lse_without_log_l, tmp_path / saved[0])["verdict"] == "fail"
    assert ft.assert_check(kernels.forward, case)["verdict"] == "pass"


# What a user's test looks like (the README's example).
@pytest.mark.parametrize("case", ft.cases(6, seed=1, backward=True, max_seqlen=48, max_work=2**16), ids=str)
def test_user_style_parametrised(case):
    ft.assert_check(kernels.forward, case, backward=kernels.backward)


def test_assert_check_skips_a_not_judged_case_with_the_reason():
    # fp16 logits near 1e5: the flash model's dV bound is vacuous, and the dtype computation's scores
    # overflow fp16, so neither tier judges dV: a skip, never a pass.
    case = flashproof.Case(seqlen_q=16, head_dim=32, dtype="fp16", distribution="large-logits:1e5", backward=True)
    record = flashproof.check(kernels.forward, case, backward=kernels.backward)
    assert record["verdict"] == "not-judged", record["verdict"]
    with pytest.raises(pytest.skip.Exception, match=r"not-judged on .*dV: \d+ elements without a finite bound, \d+ with a vacuous one"):
        ft.assert_check(kernels.forward, case, backward=kernels.backward)
    assert ft.assert_check(kernels.forward, case, backward=kernels.backward, allow_unjudged=True)["verdict"] == "not-judged"


def test_a_pass_by_the_baseline_rule_returns_or_skips_when_only_certified_verdicts_count():
    # bf16 logits near 1e15, judged by the naive model (no LSE recomputed): dQ, dK, dV and O not
    # judged by their bounds; the second tier passes them.
    case = flashproof.Case(seqlen_q=16, head_dim=32, dtype="bf16", distribution="large-logits:1e15", backward=True)
    record = ft.assert_check(kernels.forward, case, backward=kernels.backward, model="naive")
    assert record["verdict"] == "pass (baseline rule)", record["verdict"]
    with pytest.raises(pytest.skip.Exception, match=r"pass \(baseline rule\) on .*no rigorous bound judged"):
        ft.assert_check(kernels.forward, case, backward=kernels.backward, model="naive", certified_only=True)


def test_a_failure_of_the_baseline_rule_fails_the_test(tmp_path, monkeypatch):
    # The same case with dV doubled: its bound is vacuous, but twice dV is far past three times the
    # dtype computation's error.
    monkeypatch.setenv("FLASHPROOF_CASE_DIR", str(tmp_path))
    case = flashproof.Case(seqlen_q=16, head_dim=32, dtype="bf16", distribution="large-logits:1e15", backward=True)

    def doubled_dv(q, k, v, o, lse, dout, p):
        dq, dk, dv = kernels.backward(q, k, v, o, lse, dout, p)
        return dq, dk, kernels.to_dtype(kernels.to_float64(dv) * 2, p.dtype)

    with pytest.raises(pytest.fail.Exception, match=r"fail \(baseline rule\)"):
        ft.assert_check(kernels.forward, case, backward=doubled_dv, model="naive")
