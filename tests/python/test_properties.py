"""flashproof.properties.run over callables: the naive NumPy kernel holds, broken ones fail with a
shrunk counterexample saved as a case file that flashproof.replay re-runs."""
import os

import pytest

import flashproof
import flashproof.testing as ft
import kernels

# Not bitwise: the NumPy kernel's matmuls need not treat every row alike (see properties.py).
ACCURACY = ["differential", "accuracy-regression", "empty-rows", "key-value-permutation"]


def test_naive_numpy_kernel_holds(tmp_path):
    results = flashproof.properties.run(kernels.forward, kernels.backward, names=ACCURACY, cases=12, seed=1,
                                        case_dir=tmp_path)
    assert [r["name"] for r in results] == ACCURACY
    for r in results:
        assert r["passed"] and r["cases"] == 12, r["message"]


def test_naive_numpy_kernel_gradients_match_finite_differences():
    [r] = flashproof.properties.run(kernels.forward, kernels.backward, names=["gradient-finite-differences"], cases=4,
                                    seed=2)
    assert r["passed"], r["message"]


def test_broken_lse_fails_differential_and_replays(tmp_path):
    [r] = flashproof.properties.run(kernels.forward_lse_without_log_l, names=["differential"], cases=30, seed=1,
                                    case_dir=tmp_path, name="nolog")
    assert not r["passed"] and r["why"]
    assert r["case_file"].startswith(str(tmp_path)) and os.path.exists(r["case_file"])
    assert r["reproduce"].startswith('RC_PARAMS="reproduce=')
    assert r["counterexample"].property == "differential"
    assert "flashproof.replay(forward_lse_without_log_l, " in r["replay"]
    replayed = flashproof.replay(kernels.forward_lse_without_log_l, r["case_file"])
    assert replayed["property"] == "differential" and not replayed["holds"]
    assert flashproof.replay(kernels.forward, r["case_file"])["holds"]


def test_broken_dv_fails_differential(tmp_path):
    [r] = flashproof.properties.run(kernels.forward, kernels.backward_dv_first_head, names=["differential"], cases=40,
                                    seed=1, case_dir=tmp_path)
    assert not r["passed"] and "dV" in r["why"], r["message"]


def test_default_names_without_backward_skip_gradient_properties():
    every = [n for n, _ in flashproof.properties.names()]
    assert "gradient-finite-differences" in every
    results = {r["name"]: r for r in flashproof.properties.run(kernels.forward, cases=3, seed=3)}
    assert "differential" in results and "empty-rows" in results
    assert "gradient-finite-differences" not in results and "backward-determinism" not in results
    assert "fa1-matches-fa2" not in results  # applies to FA1 only
    assert all(results[n]["passed"] for n in ACCURACY), [results[n]["message"] for n in ACCURACY]


def test_assert_properties_reports_the_replay(tmp_path, monkeypatch):
    monkeypatch.setenv("FLASHPROOF_CASE_DIR", str(tmp_path))
    with pytest.raises(pytest.fail.Exception) as failure:
        ft.assert_properties(kernels.forward_missing_scale, names=["differential"], cases=20, seed=1)
    assert "case file: " + str(tmp_path) in str(failure.value)
    assert "flashproof.replay(forward_missing_scale, " in str(failure.value)
