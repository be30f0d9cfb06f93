"""A failure names its element: assert_check's message names the element past its bound
(coordinates, exact and returned values, the bound), the record's rigorous_bound.worst_element
carries it, and Case.bounds() gives the bound the check held it to."""
import numpy as np
import pytest

import flashproof
import flashproof.testing as ft
import kernels

AT = (1, 4, 0, 3)  # dK [b, s, h, d]


def small_case():
    return flashproof.Case(seqlen_q=6, seqlen_k=9, head_dim=16, batch=2, heads_q=2, heads_kv=1, dtype="fp16",
                           backward=True, seed=5)


def step_up(v):
    return float(np.nextafter(np.float16(v), np.float16(np.inf)))


def exact_at(case, name, at):
    ref = getattr(case.reference(), name)
    bound = getattr(case.bounds(), name)
    return float(ref.value[at]), float(ref.bound[at]), float(bound[at])


def planted_backward(value, name="dk", at=AT):
    def backward(q, k, v, o, lse, dout, p):
        grads = dict(zip(("dq", "dk", "dv"), (g.copy() for g in kernels.backward(q, k, v, o, lse, dout, p))))
        grads[name][at] = value
        return grads["dq"], grads["dk"], grads["dv"]
    return backward


def past_bound(r, ref_bound, bound):
    v = float(np.float16(r + 3 * (bound + ref_bound)))
    while not abs(v - r) - ref_bound > bound:
        v = step_up(v)
    return v


def test_assert_check_names_the_element_past_its_bound():
    case = small_case()
    r, ref_bound, bound = exact_at(case, "dk", AT)
    assert 0 < bound < np.inf
    value = past_bound(r, ref_bound, bound)
    with pytest.raises(pytest.fail.Exception) as failure:
        ft.assert_check(kernels.forward, case, backward=planted_backward(value))
    message = str(failure.value)
    assert "dK: 1 elements above the rigorous bound" in message, message
    assert (f"at dK[1, 4, 0, 3]: exact {r:.9g}, returned {value:.9g}, bound {bound:.3g}, "
            f"reference bound {ref_bound:.3g})") in message, message


def test_record_names_the_element_and_bounds_match_it():
    case = small_case()
    r, ref_bound, bound = exact_at(case, "dk", AT)
    value = past_bound(r, ref_bound, bound)
    record = flashproof.check(kernels.forward, case, backward=planted_backward(value))
    dk = next(t for t in record["tensors"] if t["name"] == "dK")
    assert dk["verdict"] == "fail"
    worst = dk["rigorous_bound"]["worst_element"]
    assert worst["index"] == list(AT)
    assert worst["exact"] == r and worst["returned"] == value
    assert worst["bound"] == bound and worst["reference_bound"] == ref_bound
    assert worst["error_over_bound"] == dk["rigorous_bound"]["max_error_over_bound"] > 1
    assert dk["first_nan"] is None and dk["first_inf"] is None


@pytest.mark.parametrize("model", ["flash", "naive"])
def test_bounds_are_the_checks_bounds_at_every_worst_element(model):
    case = small_case()
    bounds = case.bounds(model=model)
    record = flashproof.check(kernels.forward, case, backward=kernels.backward, model=model)
    assert record["verdict"] == "pass", record
    for t in record["tensors"]:
        worst = t["rigorous_bound"]["worst_element"]
        array = getattr(bounds, t["name"].lower())
        assert array.dtype == np.float64
        assert array.shape == (case.lse_shape if t["name"] == "LSE" else
                               case.q_shape if t["name"] in ("O", "dQ") else case.kv_shape)
        assert len(worst["index"]) == array.ndim
        assert array[tuple(worst["index"])] == worst["bound"], t["name"]
        assert worst["error_over_bound"] <= 1
    assert bounds.dq_conditional.shape == case.q_shape and bounds.dq_conditional.dtype == bool
    assert bounds.inputs_in_domain and bounds.domain_note == ""


def test_within_the_bound_no_element_is_named():
    case = small_case()
    r, ref_bound, bound = exact_at(case, "dk", AT)
    value = float(np.float16(r + bound / 2))
    while not abs(value - r) + ref_bound <= bound:
        value = float(np.nextafter(np.float16(value), np.float16(r)))
    record = ft.assert_check(kernels.forward, case, backward=planted_backward(value))
    assert record["verdict"] != "fail"
    assert all(not t["reasons"] for t in record["tensors"])


def test_nan_names_the_first_nan():
    case = small_case().with_backward(False)
    exact = float(case.reference().o.value[0, 2, 1, 5])

    def forward(q, k, v, p):
        o, lse = kernels.forward(q, k, v, p)
        o = o.copy()
        o[1, 0, 0, 0] = np.nan
        o[0, 2, 1, 5] = np.nan
        return o, lse

    with pytest.raises(pytest.fail.Exception) as failure:
        ft.assert_check(forward, case)
    message = str(failure.value)
    assert f"O: 2 NaN where the reference is not NaN (first at O[0, 2, 1, 5]: exact {exact:.9g}, returned nan)" \
        in message, message


def test_bounds_arguments():
    case = small_case()
    forward_only = case.bounds(backward=False)
    assert forward_only.o.shape == case.q_shape and forward_only.dq is None
    with pytest.raises(ValueError, match="model must be one of flash, naive"):
        case.bounds(model="exact")
    with pytest.raises(ValueError, match="gqa must be one of"):
        case.bounds(gqa="mean")
    outside = flashproof.Case(seqlen_q=4, head_dim=8, scale=1e20).bounds()  # logits past 2^64
    assert not outside.inputs_in_domain and np.all(outside.o == np.inf)
