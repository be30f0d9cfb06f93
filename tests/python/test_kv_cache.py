"""KV caches through the Python route (docs/spec.md "KV caches"): Case and Params carry the cache,
its pages and appended keys; a NumPy kernel that reads the cache through its block table and writes
the appended keys in place passes; one that attends right but never stores the appended keys, or
that reads the cache to its capacity, fails; a kernel that does not declare caches is never handed
one."""
from types import SimpleNamespace

import numpy as np
import pytest

import flashproof
import kernels

DECLARED = flashproof.Support(kv_cache=True, paged=True, kv_append=True)


def cache_case(dtype="fp16", **extra):
    shape = {"seqlen_q": 2, "seqlen_k": 64, "heads_q": 4, "heads_kv": 2, "head_dim": 16, "causal": True, "seed": 3,
             "cache_seqlens": [5, 0, 40], "page_size": 16, "num_pages": 13, "seqlen_new": 2, **extra}
    if "block_table" not in extra and shape["page_size"]:  # a permutation of the pool, one spare page
        shape["block_table"] = [int(x) for x in np.random.default_rng(7).permutation(13)[:12]]
    return flashproof.Case(dtype=dtype, **shape)


def cache_forward(q, k, v, p, k_new=None, v_new=None, store=True, to_capacity=False):
    """The attention of each sequence over its cache read through the table (kernels.forward on it)."""
    per_sequence = p.seqlen_k // p.page_size if p.page_size else 0
    stored = p.cache_seqlens or (p.seqlen_k,) * p.batch

    def slot(b, j):
        return (p.block_table[b * per_sequence + j // p.page_size], j % p.page_size) if p.page_size else (b, j)

    appended = {}
    for b in range(p.batch):
        for t in range(p.seqlen_new):
            appended[(b, stored[b] + t)] = (k_new[b, t], v_new[b, t])
            if store:  # in place, as flash_attn_with_kvcache does
                k[slot(b, stored[b] + t)] = k_new[b, t]
                v[slot(b, stored[b] + t)] = v_new[b, t]
    o = np.zeros(q.shape, dtype=q.dtype)
    lse = np.full((p.batch, p.heads_q, p.seqlen_q), np.inf, dtype=np.float32)
    for b in range(p.batch):
        n = p.seqlen_k if to_capacity else stored[b] + p.seqlen_new
        if n == 0:
            continue
        rows = [appended.get((b, j), (k[slot(b, j)], v[slot(b, j)])) for j in range(n)]
        kb = np.stack([r[0] for r in rows])[None]
        vb = np.stack([r[1] for r in rows])[None]
        one = SimpleNamespace(seqlen_q=p.seqlen_q, seqlen_k=n, mask_offset=n - p.seqlen_q, window=p.window,
                              group_size=p.group_size, softmax_scale=p.softmax_scale, dtype=p.dtype)
        o[b:b + 1], lse[b] = kernels.forward(q[b:b + 1], kb, vb, one)
    return o, lse


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("paged", [True, False])
def test_a_kernel_reading_the_cache_and_appending_passes(dtype, paged):
    case = cache_case(dtype) if paged else cache_case(dtype, page_size=0, num_pages=None, block_table=None)
    seen = []

    def forward(q, k, v, p, k_new=None, v_new=None):
        seen.append((p.kv_cache, k.shape, k_new.shape, p.block_table is not None))
        return cache_forward(q, k, v, p, k_new, v_new)

    record = flashproof.check(forward, case, model="naive", support=DECLARED)
    assert record["verdict"] == "pass", record
    kv = (13, 16, 2, 16) if paged else (3, 64, 2, 16)
    assert seen == [(True, kv, (3, 2, 2, 16), paged)]


def test_the_case_and_its_inputs_carry_the_cache(tmp_path):
    case = cache_case()
    assert case.cache_seqlens == (5, 0, 40) and case.page_size == 16 and case.num_pages == 13
    assert case.seqlen_new == 2 and case.batch == 3 and case.kv_cache and len(case.block_table) == 12
    inputs = case.inputs()
    assert inputs["k"].shape == (13, 16, 2, 16) and inputs["k_new"].shape == (3, 2, 2, 16)
    assert np.isnan(inputs["k"].astype(np.float32)).any()  # unused slots and pages
    ref = case.reference()
    assert ref.o.value.shape == (1, 6, 4, 16) and ref.lse.value.shape == (1, 4, 6)
    path = tmp_path / "cache.json"
    case.save(path)
    again = flashproof.read_case(path)
    assert again.cache_seqlens == case.cache_seqlens and again.block_table == case.block_table
    assert again.seqlen_new == 2
    p = flashproof.Params._from_dict({"batch": 1, "heads_q": 1, "heads_kv": 1, "seqlen_q": 1, "seqlen_k": 32,
                                      "head_dim": 8, "dtype": "fp16", "softmax_scale": 0.25, "scale": None,
                                      "window_left": -1, "window_right": 0, "cache_seqlens": [3], "page_size": 16,
                                      "num_pages": 2, "block_table": [1, 0], "seqlen_new": 1})
    assert p.kv_shape == (2, 16, 1, 8) and p.new_kv_shape == (1, 1, 1, 8) and p.block_table == (1, 0)


def test_appended_keys_never_stored_or_a_cache_read_to_its_capacity_fail():
    never_stored = flashproof.check(
        lambda q, k, v, p, k_new=None, v_new=None: cache_forward(q, k, v, p, k_new, v_new, store=False),
        cache_case(), model="naive", support=DECLARED)
    assert never_stored["verdict"] == "fail"
    cache = [t for t in never_stored["tensors"] if t["name"] == "KV cache"]
    assert cache and "appended keys" in cache[0]["reasons"][0]
    assert [t for t in never_stored["tensors"] if t["name"] == "O"][0]["verdict"] == "pass"
    to_capacity = flashproof.check(
        lambda q, k, v, p, k_new=None, v_new=None: cache_forward(q, k, v, p, k_new, v_new, to_capacity=True),
        cache_case(), model="naive", support=DECLARED)
    assert to_capacity["verdict"] == "fail"


def test_an_undeclared_cache_is_refused_and_generated_ones_are_fitted():
    with pytest.raises(ValueError, match="KV caches .* are not declared"):
        flashproof.check(lambda q, k, v, p: None, cache_case(), support=flashproof.Support())
    with pytest.raises(ValueError, match="appended keys \\(seqlen_new\\) are not declared"):
        flashproof.check(lambda q, k, v, p: None, cache_case(),
                         support=flashproof.Support(kv_cache=True, paged=True))
    with pytest.raises(ValueError, match="appended keys \\(kv_append\\) need kv_cache"):
        flashproof.Support(kv_append=True)
    with pytest.raises(ValueError, match="exceeds the cache's capacity"):
        cache_case(cache_seqlens=[5, 0, 63])
