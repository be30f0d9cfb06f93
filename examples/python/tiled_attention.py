"""A kernel with limits, as most real ones have: keys in tiles of 64 with an online softmax (the
FlashAttention recurrence, in float64 here), so lengths above 64 must be multiples of 64; the
causal mask or none, no sliding window. SUPPORT declares exactly that (python/README.md, "What your
kernel supports"): flashproof fits every generated case into it, so the kernel never sees a case it
cannot compute, and `check` refuses one outside it."""
import numpy as np

import flashproof

TILE = 64
SUPPORT = flashproof.Support(masks=("none", "causal"), seqlen_multiple=TILE, seqlen_free_up_to=TILE, backward=True)


def _limits(p):
    if p.window not in ((-1, -1), (-1, 0)):
        raise ValueError(f"tiled_attention: no sliding window (got {p.window})")
    for n in (p.seqlen_q, p.seqlen_k):
        if n > TILE and n % TILE:
            raise ValueError(f"tiled_attention: lengths above {TILE} must be multiples of {TILE} (got {n})")


def _scores(q, k, p, j0, j1):
    """Scaled, masked logits of key tile [j0, j1): [b, hq, sq, j1 - j0], float64."""
    kt = np.repeat(k[:, j0:j1].astype(np.float64), p.group_size, axis=2)
    s = np.einsum("bihd,bjhd->bhij", q.astype(np.float64), kt) * p.softmax_scale
    if p.window == (-1, 0):  # causal, bottom-right aligned
        i = np.arange(p.seqlen_q)[:, None] + p.mask_offset
        s = np.where(np.arange(j0, j1)[None, :] <= i, s, -np.inf)
    return s


def _online_softmax(q, k, v, p):
    """One tile of keys at a time, rescaling what came before: the row max m, the row sum l and
    the unnormalised output acc [b, hq, sq, d], float64."""
    b, sq, hq, d = q.shape
    m = np.full((b, hq, sq), -np.inf)
    l = np.zeros((b, hq, sq))
    acc = np.zeros((b, hq, sq, d))
    for j0 in range(0, p.seqlen_k, TILE):
        j1 = min(j0 + TILE, p.seqlen_k)
        s = _scores(q, k, p, j0, j1)
        m_new = np.maximum(m, s.max(axis=-1))
        base = np.where(np.isfinite(m_new), m_new, 0.0)
        alpha = np.exp(m - base)
        e = np.exp(s - base[..., None])
        vt = np.repeat(v[:, j0:j1].astype(np.float64), p.group_size, axis=2)
        acc = acc * alpha[..., None] + np.einsum("bhij,bjhd->bhid", e, vt)
        l = l * alpha + e.sum(axis=-1)
        m = m_new
    return m, l, acc


def forward(q, k, v, p):
    _limits(p)
    m, l, acc = _online_softmax(q, k, v, p)
    seen = l > 0
    o = np.where(seen[..., None], acc / np.where(seen, l, 1.0)[..., None], 0.0)
    lse = np.where(seen, m + np.log(np.where(seen, l, 1.0)), np.inf)
    return o.transpose(0, 2, 1, 3).astype(q.dtype), lse.astype(np.float32)


def backward(q, k, v, o, lse, dout, p):
    """Recomputes P tile by tile, as FlashAttention's backward does, but from the row statistics
    recomputed in float64 (the stored fp32 LSE would lose P's accuracy for logits of 1e8 and up)."""
    _limits(p)
    g = p.group_size
    dout64 = dout.astype(np.float64)
    m, l, acc = _online_softmax(q, k, v, p)
    seen = (l > 0)[..., None]
    lse64 = np.where(seen, m[..., None] + np.log(np.where(seen, l[..., None], 1.0)), np.inf)
    o64 = np.where(seen, acc / np.where(seen, l[..., None], 1.0), 0.0)  # [b, hq, sq, d]
    delta = np.einsum("bhid,bhid->bhi", dout64.transpose(0, 2, 1, 3), o64)[..., None]  # rowsum(dO * O)
    dq = np.zeros(q.shape)
    dk = np.zeros(k.shape[:2] + (q.shape[2], q.shape[3]))
    dv = np.zeros_like(dk)
    for j0 in range(0, p.seqlen_k, TILE):
        j1 = min(j0 + TILE, p.seqlen_k)
        s = _scores(q, k, p, j0, j1)
        prob = np.where(np.isfinite(lse64), np.exp(s - np.where(np.isfinite(lse64), lse64, 0.0)), 0.0)
        vt = np.repeat(v[:, j0:j1].astype(np.float64), g, axis=2)
        kt = np.repeat(k[:, j0:j1].astype(np.float64), g, axis=2)
        ds = prob * (np.einsum("bihd,bjhd->bhij", dout64, vt) - delta)
        dq += np.einsum("bhij,bjhd->bihd", ds, kt) * p.softmax_scale
        dk[:, j0:j1] = np.einsum("bhij,bihd->bjhd", ds, q.astype(np.float64)) * p.softmax_scale
        dv[:, j0:j1] = np.einsum("bhij,bihd->bjhd", prob, dout64)

    def group_sum(x):  # dK, dV of a kv head: the sum over its group of query heads
        b, s, _, d = x.shape
        return x.reshape(b, s, p.heads_kv, g, d).sum(axis=3)

    return dq.astype(q.dtype), group_sum(dk).astype(k.dtype), group_sum(dv).astype(v.dtype)
