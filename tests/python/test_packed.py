"""Packed batches (docs/spec.md "Packed batches", flash_attn_varlen_func's layout) through the Python
route: the offsets reach Case, Params and the case file; a correct per-sequence kernel passes, the
same kernel over the whole packed storage fails; a kernel that does not declare packed batches is
never handed one; bad offsets are one line."""
import dataclasses

import numpy as np
import pytest

import flashproof
import kernels

PACKED = flashproof.Support(packed=True)

# Three sequences: 3 rows / 5 keys, 0 rows / 4 keys (an empty query side), 7 rows / 3 keys.
CU_Q, CU_K = (0, 3, 3, 10), (0, 5, 9, 12)
# A sequence with rows but no keys (its rows: o = 0, lse = +inf, dq = 0).
CU_Q_NO_KEYS, CU_K_NO_KEYS = (0, 4, 6, 9), (0, 6, 6, 11)


def sequences(p):
    """(query rows, keys, the sequence's own dense Params) of each sequence of a packed batch."""
    for s in range(len(p.cu_seqlens_q) - 1):
        rows = slice(p.cu_seqlens_q[s], p.cu_seqlens_q[s + 1])
        keys = slice(p.cu_seqlens_k[s], p.cu_seqlens_k[s + 1])
        own = dataclasses.replace(p, seqlen_q=rows.stop - rows.start, seqlen_k=keys.stop - keys.start,
                                  cu_seqlens_q=None, cu_seqlens_k=None)
        yield rows, keys, own


def packed_forward(q, k, v, p):
    """kernels.forward (float64, rounded to the dtype) on each sequence on its own."""
    assert p.packed and p.batch == 1
    o = np.zeros(q.shape, dtype=q.dtype)
    lse = np.full((1, p.heads_q, p.seqlen_q), np.inf, dtype=np.float32)
    for rows, keys, own in sequences(p):
        if own.seqlen_q == 0 or own.seqlen_k == 0:  # no rows, or rows that see no key
            continue
        o[:, rows], lse[:, :, rows] = kernels.forward(q[:, rows], k[:, keys], v[:, keys], own)
    return o, lse


def packed_backward(q, k, v, o, lse, dout, p):
    dq, dk, dv = (np.zeros(x.shape, dtype=x.dtype) for x in (q, k, v))
    for rows, keys, own in sequences(p):
        if own.seqlen_q == 0 or own.seqlen_k == 0:
            continue
        dq[:, rows], dk[:, keys], dv[:, keys] = kernels.backward(
            q[:, rows], k[:, keys], v[:, keys], o[:, rows], lse[:, :, rows], dout[:, rows], own)
    return dq, dk, dv


def packed_case(dtype="fp16", cu_q=CU_Q, cu_k=CU_K, **shape):
    shape = {"heads_q": 2, "heads_kv": 1, "head_dim": 16, "causal": True, "seed": 3, **shape}
    return flashproof.Case(dtype=dtype, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, backward=True, **shape)


def test_a_case_carries_its_offsets():
    case = packed_case()
    assert case.packed and case.cu_seqlens_q == CU_Q and case.cu_seqlens_k == CU_K
    assert (case.batch, case.seqlen_q, case.seqlen_k) == (1, 10, 12)  # the totals
    assert case.inputs()["q"].shape == (1, 10, 2, 16) and case.inputs()["k"].shape == (1, 12, 1, 16)
    assert '"cu_seqlens_q"' in case.to_json()
    dense = flashproof.Case(seqlen_q=10, seqlen_k=12)
    assert not dense.packed and dense.cu_seqlens_q is None and dense.cu_seqlens_k is None
    assert '"cu_seqlens_q"' not in dense.to_json()  # dense records keep the fields written before


def test_params_from_a_record_with_and_without_offsets():
    record = {"batch": 1, "heads_q": 2, "heads_kv": 1, "seqlen_q": 10, "seqlen_k": 12, "head_dim": 16,
              "dtype": "fp16", "softmax_scale": 0.25, "scale": None, "window_left": -1, "window_right": 0}
    dense = flashproof.Params._from_dict(record)
    assert dense.cu_seqlens_q is None and dense.cu_seqlens_k is None and not dense.packed
    packed = flashproof.Params._from_dict({**record, "cu_seqlens_q": [0, 3, 10], "cu_seqlens_k": [0, 5, 12]})
    assert packed.packed and packed.cu_seqlens_q == (0, 3, 10) and packed.cu_seqlens_k == (0, 5, 12)


@pytest.mark.parametrize("cu_q, cu_k", [(CU_Q, CU_K), (CU_Q_NO_KEYS, CU_K_NO_KEYS)])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_a_correct_packed_kernel_passes(dtype, cu_q, cu_k):
    seen = []

    def forward(q, k, v, p):
        seen.append(p)
        return packed_forward(q, k, v, p)

    case = packed_case(dtype, cu_q, cu_k)
    record = flashproof.check(forward, case, backward=packed_backward, model="naive", support=PACKED)
    assert record["verdict"] == "pass", record
    assert seen and all(p.cu_seqlens_q == cu_q and p.cu_seqlens_k == cu_k for p in seen)
    if cu_k == CU_K_NO_KEYS:  # the rows of the sequence without keys: lse +inf in the reference too
        assert np.isinf(case.reference().lse.value[0, :, 4:6]).all()


def test_the_same_kernel_over_the_whole_storage_fails():
    """The twin: one dense attention over the packed storage lets rows see other sequences' keys."""
    case = packed_case()
    forward_only = case.with_backward(False)
    ignoring = flashproof.check(kernels.forward, forward_only, model="naive", support=PACKED, name="ignoring")
    assert ignoring["verdict"] == "fail", ignoring
    # and in the backward alone: a correct forward, the gradients over the whole storage
    record = flashproof.check(packed_forward, case, backward=kernels.backward, model="naive", support=PACKED)
    assert record["verdict"] == "fail", record
    failed = {t["name"] for t in record["tensors"] if t["verdict"] == "fail"}
    assert failed and failed <= {"dQ", "dK", "dV"}, record


def test_a_kernel_that_does_not_declare_packed_batches_is_never_handed_one(tmp_path):
    seen = []

    def forward(q, k, v, p):
        seen.append(p)
        return packed_forward(q, k, v, p) if p.packed else kernels.forward(q, k, v, p)

    case = packed_case().with_backward(False)
    for support in (None, flashproof.Support(dtypes="fp16")):
        with pytest.raises(ValueError, match=r"does not support this case: packed batches .* are not declared") as e:
            flashproof.check(forward, case, support=support)
        assert "\n" not in str(e.value)
    case.save(tmp_path / "packed.json")
    with pytest.raises(ValueError, match="packed batches"):
        flashproof.replay(forward, tmp_path / "packed.json")
    assert seen == []
    # The twin: declared, the same case reaches the callable, packed.
    assert flashproof.check(forward, case, model="naive", support=PACKED)["verdict"] == "pass"
    assert seen and all(p.packed for p in seen)


def test_the_support_declares_packed_batches():
    assert repr(PACKED) == "flashproof.Support(packed batches)"
    assert repr(flashproof.Support()) == "flashproof.Support(every dense problem)"
    assert "packed batches" in repr(flashproof.Support(dtypes="fp16", packed=True))
    assert "packed" not in repr(flashproof.Support(dtypes="fp16"))
    assert PACKED != flashproof.Support()
    with pytest.raises(ValueError, match="packed"):
        flashproof.Support(packed="yes")


@pytest.mark.parametrize("arguments, message", [
    (dict(cu_seqlens_q=[0, 3, 10]), "cu_seqlens_q and cu_seqlens_k must be given together"),
    (dict(cu_seqlens_q=[0, 3, 10], cu_seqlens_k=[0, 12]),
     r"cu_seqlens_q \(3 offsets\) and cu_seqlens_k \(2\) must describe as many sequences"),
    (dict(cu_seqlens_q=[2, 3, 10], cu_seqlens_k=[0, 5, 12]), "cu_seqlens_q must start at 0, not 2"),
    (dict(cu_seqlens_q=[0, 3, 10], cu_seqlens_k=[0, 5, 3]),
     r"cu_seqlens_k must not decrease \(offset 2 is 3 after 5\)"),
    (dict(cu_seqlens_q=[0, 3, 10], cu_seqlens_k=[0, 5, 12], seqlen_q=12),
     r"cu_seqlens_q must end at seqlen_q \(12\), not 10"),
    (dict(cu_seqlens_q=[0, 3, 10], cu_seqlens_k=[0, 5, 12], batch=2), "a packed batch is stored as batch 1"),
    (dict(cu_seqlens_q=[10], cu_seqlens_k=[12]), r"cu_seqlens_q must hold at least 2 offsets"),
])
def test_bad_offsets_are_one_line(arguments, message):
    with pytest.raises(ValueError, match=message) as e:
        flashproof.Case(**arguments)
    assert "\n" not in str(e.value)


def test_offsets_that_are_not_integers_are_a_type_error():
    with pytest.raises(TypeError, match="cu_seqlens_q must be a sequence of integers"):
        flashproof.Case(cu_seqlens_q=10, cu_seqlens_k=[0, 12])
    with pytest.raises(TypeError, match=r"cu_seqlens_k\[1\] must be an integer"):
        flashproof.Case(cu_seqlens_q=[0, 10], cu_seqlens_k=[0, 12.0])
    # The twin: consistent lengths given with the offsets, and NumPy integers, are accepted.
    case = flashproof.Case(cu_seqlens_q=np.array([0, 10]), cu_seqlens_k=[0, 12], seqlen_q=10, seqlen_k=12)
    assert case.cu_seqlens_q == (0, 10)
