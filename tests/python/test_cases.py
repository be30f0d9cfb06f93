"""Cases, their inputs (exactly what check feeds a kernel) and their certified reference."""
import numpy as np
import pytest

import flashproof
from flashproof import _arrays
import kernels


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_inputs_are_bit_for_bit_what_the_kernel_gets(dtype):
    case = flashproof.Case(seqlen_q=5, seqlen_k=7, head_dim=8, heads_q=2, heads_kv=1, dtype=dtype, seed=11)
    seen = {}

    def recording_forward(q, k, v, p):
        seen.update(q=q.copy(), k=k.copy(), v=v.copy())
        return kernels.forward(q, k, v, p)

    assert flashproof.check(recording_forward, case)["verdict"] == "pass"
    bits = case.inputs("bits")
    native = case.inputs()
    exact = case.inputs("float32")
    width = np.uint32 if dtype == "fp32" else np.uint16
    for name in ("q", "k", "v"):
        assert np.array_equal(seen[name].view(width), bits[name])
        assert np.array_equal(native[name].view(width), bits[name])
        assert np.array_equal(native[name].astype(np.float32), exact[name])
    assert bits["q"].shape == (1, 5, 2, 8) and bits["k"].shape == (1, 7, 1, 8) and bits["dout"].shape == (1, 5, 2, 8)
    expected = {"fp16": np.float16, "fp32": np.float32}.get(dtype, _arrays.BFLOAT16)
    assert native["q"].dtype == expected


def test_bf16_without_ml_dtypes_is_uint16_bits(monkeypatch):
    monkeypatch.setattr(_arrays, "BFLOAT16", None)
    case = flashproof.Case(seqlen_q=6, head_dim=8, dtype="bf16", backward=True)
    q = case.inputs()["q"]
    assert q.dtype == np.uint16
    assert np.array_equal(case.inputs("float32")["q"], (q.astype(np.uint32) << 16).view(np.float32))
    # A kernel working on the bit patterns (returning uint16 bits) is judged like any other.
    assert flashproof.check(kernels.forward, case, backward=kernels.backward)["verdict"] == "pass"


def test_torch_inputs_when_importable():
    torch = pytest.importorskip("torch")
    case = flashproof.Case(seqlen_q=4, head_dim=8, dtype="bf16")
    t = case.inputs("torch")["q"]
    assert t.dtype == torch.bfloat16
    assert np.array_equal(t.view(torch.int16).numpy().view(np.uint16), case.inputs("bits")["q"])


def test_reference_values_and_bounds():
    case = flashproof.Case(seqlen_q=6, seqlen_k=10, head_dim=16, heads_q=2, heads_kv=1, causal=True, dtype="fp32",
                           seed=4, backward=True)
    ref = case.reference()
    x = case.inputs()
    params = flashproof.Params(case.batch, case.heads_q, case.heads_kv, case.seqlen_q, case.seqlen_k, case.head_dim,
                               case.dtype, case.softmax_scale, case.scale, case.window)
    prob, m, l = kernels.probabilities(x["q"], x["k"], params)
    o = np.einsum("bhij,bjhd->bihd", prob, np.repeat(x["v"].astype(np.float64), 2, axis=2))
    assert ref.o.value.shape == (1, 6, 2, 16) and ref.lse.value.shape == (1, 2, 6)
    assert ref.dk.value.shape == (1, 10, 1, 16)
    assert np.allclose(ref.o.value, o, rtol=1e-12, atol=1e-12)
    assert np.allclose(ref.lse.value, m + np.log(l), rtol=1e-12)
    assert (ref.o.bound >= 0).all() and (ref.o.bound < 1e-9).all() and ref.o.checked.all()
    assert ref.inputs_in_domain and ref.domain_note == ""
    assert flashproof.Case(seqlen_q=4, head_dim=8).reference().dq is None


def test_generated_cases_are_the_campaigns():
    a = flashproof.generate_case(7, 3, max_seqlen=64)
    b = flashproof.generate_case(7, 3, max_seqlen=64)
    assert a.describe() == b.describe() and a.kind == b.kind
    assert a.dtype in ("fp16", "bf16") and max(a.seqlen_q, a.seqlen_k) <= 64
    kinds = {flashproof.generate_case(1, i, dtype="fp32", backward=False).kind for i in range(40)}
    assert len(kinds) > 3
    assert all(not flashproof.generate_case(1, i, backward=False).backward for i in range(10))
