"""A user's attention kernel in NumPy, as flashproof sees any Python implementation: float64
inside, outputs rounded to the inputs' dtype. Layouts and the window convention: python/README.md."""
import numpy as np


def _probabilities(q, k, p):
    """Softmax weights [b, hq, sq, sk], row max and row sum, in float64."""
    k = np.repeat(k.astype(np.float64), p.group_size, axis=2)  # query head h reads kv head h // group
    s = np.einsum("bihd,bjhd->bhij", q.astype(np.float64), k) * p.softmax_scale
    i = np.arange(p.seqlen_q)[:, None] + p.mask_offset  # bottom-right aligned
    j = np.arange(p.seqlen_k)[None, :]
    left, right = p.window  # -1: unbounded
    s = np.where(((left < 0) | (j >= i - left)) & ((right < 0) | (j <= i + right)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)  # a row that sees no key
    e = np.exp(s - m)
    l = e.sum(axis=-1, keepdims=True)
    return e / np.where(l > 0, l, 1.0), m[..., 0], l[..., 0]


def forward(q, k, v, p):
    prob, m, l = _probabilities(q, k, p)
    o = np.einsum("bhij,bjhd->bihd", prob, np.repeat(v.astype(np.float64), p.group_size, axis=2))
    lse = np.where(l > 0, m + np.log(np.where(l > 0, l, 1.0)), np.inf)
    return o.astype(q.dtype), lse.astype(np.float32)


def backward(q, k, v, o, lse, dout, p):
    prob, _, _ = _probabilities(q, k, p)
    g = p.group_size
    dout64 = dout.astype(np.float64)
    dp = np.einsum("bihd,bjhd->bhij", dout64, np.repeat(v.astype(np.float64), g, axis=2))
    ds = prob * (dp - (prob * dp).sum(axis=-1, keepdims=True))
    dq = np.einsum("bhij,bjhd->bihd", ds, np.repeat(k.astype(np.float64), g, axis=2)) * p.softmax_scale
    dk = np.einsum("bhij,bihd->bjhd", ds, q.astype(np.float64)) * p.softmax_scale
    dv = np.einsum("bhij,bihd->bjhd", prob, dout64)

    def group_sum(x):  # dK, dV of a kv head: the sum over its group of query heads
        b, s, _, d = x.shape
        return x.reshape(b, s, p.heads_kv, g, d).sum(axis=3)

    return dq.astype(q.dtype), group_sum(dk).astype(k.dtype), group_sum(dv).astype(v.dtype)
