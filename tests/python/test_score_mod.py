"""The soft cap and ALiBi (docs/spec.md "Soft cap and ALiBi", FlashAttention-2's softcap and
alibi_slopes) through the Python route: Case, Params and the case file carry them; a correct kernel
passes, the same kernel without the cap's 1 - tanh^2 or with the bias's sign flipped fails; a
kernel that does not declare them is never handed them; bad values are one line."""
import numpy as np
import pytest

import flashproof
import kernels

BOTH = flashproof.Support(softcap=True, alibi=True)


def modded_case(dtype="fp16", **extra):
    shape = {"seqlen_q": 9, "seqlen_k": 21, "heads_q": 4, "heads_kv": 2, "head_dim": 16, "seed": 5,
             "softcap": 2.5, "alibi_slopes": "standard", "distribution": "scaled:8", **extra}
    return flashproof.Case(dtype=dtype, backward=True, **shape)


def test_a_case_carries_its_cap_and_slopes():
    case = modded_case()
    assert case.softcap == 2.5 and case.alibi_slopes == (0.25, 0.0625, 0.015625, 0.00390625)
    assert flashproof.standard_alibi_slopes(4) == case.alibi_slopes
    text = case.to_json()
    assert '"softcap": 2.5' in text and '"alibi_slopes"' in text
    plain = flashproof.Case(seqlen_q=4)
    assert plain.softcap is None and plain.alibi_slopes is None
    assert '"softcap"' not in plain.to_json() and '"alibi_slopes"' not in plain.to_json()
    record = {"batch": 1, "heads_q": 2, "heads_kv": 1, "seqlen_q": 3, "seqlen_k": 5, "head_dim": 8, "dtype": "fp16",
              "softmax_scale": 0.25, "scale": None, "window_left": -1, "window_right": -1}
    p = flashproof.Params._from_dict({**record, "softcap": 30.0, "alibi_slopes": [0.5, 0.25]})
    assert p.softcap == 30.0 and p.alibi_slopes == (0.5, 0.25)
    assert flashproof.Params._from_dict(record).softcap is None


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("mods", [{"alibi_slopes": None}, {"softcap": None}, {}])
def test_a_correct_kernel_passes(dtype, mods):
    seen = []

    def forward(q, k, v, p):
        seen.append(p)
        return kernels.forward(q, k, v, p)

    case = modded_case(dtype, causal=True, **mods)
    record = flashproof.check(forward, case, backward=kernels.backward, model="naive", support=BOTH)
    assert record["verdict"] == "pass", record
    assert seen and all(p.softcap == case.softcap and p.alibi_slopes == case.alibi_slopes for p in seen)


def test_the_twins_fail():
    case = modded_case()
    no_derivative = flashproof.check(kernels.forward, case, backward=kernels.backward_without_softcap_derivative,
                                     model="naive", support=BOTH)
    assert no_derivative["verdict"] == "fail", no_derivative
    failed = {t["name"] for t in no_derivative["tensors"] if t["verdict"] == "fail"}
    assert failed and failed <= {"dQ", "dK"}, no_derivative
    wrong_sign = flashproof.check(kernels.forward_alibi_wrong_sign, case.with_backward(False), model="naive",
                                  support=BOTH)
    assert wrong_sign["verdict"] == "fail", wrong_sign


def test_a_kernel_that_does_not_declare_them_is_never_handed_them():
    seen = []

    def forward(q, k, v, p):
        seen.append(p)
        return kernels.forward(q, k, v, p)

    case = modded_case().with_backward(False)
    with pytest.raises(ValueError, match="does not support this case: the soft cap is not declared") as e:
        flashproof.check(forward, case)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="ALiBi is not declared"):
        flashproof.check(forward, case, support=flashproof.Support(softcap=True))
    assert seen == []
    assert repr(BOTH) == "flashproof.Support(soft cap; ALiBi)"


@pytest.mark.parametrize("kwargs, message", [
    ({"softcap": 0}, r"softcap \(0.000000\) must be a finite number > 0"),
    ({"softcap": -2}, r"softcap \(-2.000000\) must be a finite number > 0"),
    ({"softcap": float("inf")}, r"softcap \(inf\) must be a finite number > 0"),
    ({"heads_q": 2, "alibi_slopes": [0.5]}, r"alibi_slopes must hold one slope per query head \(2\), not 1"),
    ({"heads_q": 2, "alibi_slopes": [0.5, float("nan")]}, r"alibi_slopes\[1\] must be finite"),
    ({"alibi_slopes": "models"}, r"alibi_slopes must be a sequence of numbers or 'standard'"),
])
def test_bad_values_are_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message) as e:
        flashproof.Case(seqlen_q=4, **kwargs)
    assert "\n" not in str(e.value)


def test_bad_types_are_type_errors():
    with pytest.raises(TypeError, match="softcap must be a number"):
        flashproof.Case(seqlen_q=4, softcap="30")
    with pytest.raises(TypeError, match="alibi_slopes must be a sequence"):
        flashproof.Case(seqlen_q=4, alibi_slopes=0.5)
    assert np.isclose(flashproof.Case(seqlen_q=4, softcap=np.float32(30)).softcap, 30)
