"""Declared support (flashproof.Support) and refusals at run time (flashproof.Unsupported): the
cases a kernel is handed lie inside what it declares, none is dropped silently, and a refused case
is unsupported, never a crash or a pass."""
import pytest

import flashproof
import flashproof.testing as ft
import kernels

SMALL = dict(max_seqlen=48, max_work=2**15, progress=False)

# A kernel with the limits of docs/plugging-in.md's example: top-left causal, no windows, no GQA, lengths
# above 16 multiples of 16.
TOP_LEFT = flashproof.Support(masks=("none", "causal"), mask_alignment="top-left", gqa=False, seqlen_multiple=16,
                              seqlen_free_up_to=16)


def inside(p):
    """The declaration above, checked on the params the kernel is handed."""
    masked = p.window != (-1, -1)
    return (p.window in ((-1, -1), (-1, 0)) and (not masked or p.seqlen_q == p.seqlen_k)
            and p.heads_q == p.heads_kv and all(n <= 16 or n % 16 == 0 for n in (p.seqlen_q, p.seqlen_k)))


def strict_top_left_forward(q, k, v, p):
    assert inside(p), f"handed a case outside the declared support: {p}"
    return kernels.forward_top_left_mask(q, k, v, p)


def test_support_is_validated_and_described():
    with pytest.raises(ValueError, match="seqlen_multiple"):
        flashproof.Support(seqlen_multiple=0)
    with pytest.raises(ValueError, match="masks"):
        flashproof.Support(masks=("sliding",))
    assert "lengths above 16 multiples of 16" in repr(TOP_LEFT)
    assert "no GQA" in repr(TOP_LEFT)


def test_cases_are_fitted_not_dropped():
    drawn = ft.cases(40, seed=5)
    assert any(not inside(c) for c in drawn)  # not vacuous: the generator draws outside it
    fitted = ft.cases(40, seed=5, support=TOP_LEFT)
    assert len(fitted) == 40
    assert all(inside(c) for c in fitted)
    assert sum(c.fitted for c in fitted) == sum(not inside(c) for c in drawn)


def test_campaign_judges_a_top_left_kernel_only_where_it_is_right(tmp_path):
    declared = flashproof.fuzz(strict_top_left_forward, out=tmp_path / "declared", seed=2, cases=12, name="tl",
                               support=TOP_LEFT, **SMALL)
    assert declared["crash"] == 0 and declared["fail"] == 0, declared
    assert declared["run"] == 12 and declared["fitted"] > 0, declared
    # Its twin without the declaration: the top-left mask is a failure wherever seqlen_q != seqlen_k.
    undeclared = flashproof.fuzz(kernels.forward_top_left_mask, out=tmp_path / "undeclared", seed=2, cases=12,
                                 name="tl_undeclared", shrink=False, **SMALL)
    assert undeclared["fail"] > 0, undeclared


def refusing_forward(q, k, v, p):
    if p.seqlen_k > 24:
        raise flashproof.Unsupported("seqlen_k above 24")
    return kernels.forward(q, k, v, p)


def test_a_refusal_at_run_time_is_unsupported(tmp_path):
    result = flashproof.fuzz(refusing_forward, out=tmp_path / "refusing", seed=4, cases=12, name="refusing", **SMALL)
    assert result["crash"] == 0 and result["fail"] == 0, result
    assert result["unsupported"] > 0 and result["run"] + result["unsupported"] == 12, result
    long_case = flashproof.Case(seqlen_q=8, seqlen_k=40, head_dim=16)
    with pytest.raises(flashproof.Unsupported, match="above 24"):
        flashproof.check(refusing_forward, long_case)
    runs = flashproof.properties.run(refusing_forward, names=["differential"], cases=20, seed=3)
    assert runs[0]["passed"], runs[0]["message"]


def test_check_refuses_a_case_outside_the_support():
    with pytest.raises(ValueError, match="does not support this case: GQA"):
        flashproof.check(strict_top_left_forward, flashproof.Case(seqlen_q=16, head_dim=16, heads_q=2, heads_kv=1),
                         support=TOP_LEFT)
    record = flashproof.check(strict_top_left_forward, flashproof.Case(seqlen_q=16, head_dim=16, causal=True),
                              support=TOP_LEFT)
    assert record["verdict"] in ("pass", "not-judged"), record


def test_properties_draw_inside_the_support():
    runs = flashproof.properties.run(strict_top_left_forward, names=["differential"], cases=30, seed=1,
                                     support=TOP_LEFT)
    assert runs[0]["passed"], runs[0]["message"]
    assert "fitted to the declared support" in runs[0]["message"]


def test_assert_check_skips_a_refused_case():
    with pytest.raises(pytest.skip.Exception, match="unsupported"):
        ft.assert_check(refusing_forward, flashproof.Case(seqlen_q=8, seqlen_k=40, head_dim=16))
