"""A naive NumPy attention as a user's kernel (forward and backward, float64 inside, rounded to
the problem's dtype), and deliberately broken variants the harness must catch."""
import numpy as np

from flashproof import _arrays

OUTPUT_DTYPES = {"fp16": np.float16, "fp32": np.float32}


def to_float64(x):
    # bf16 without ml_dtypes arrives as uint16 bit patterns
    if x.dtype == np.uint16:
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def to_dtype(x, dtype):
    if dtype == "bf16":
        if _arrays.BFLOAT16 is None:  # round to nearest even on the float32 bits
            bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
            return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        return x.astype(np.float32).astype(_arrays.BFLOAT16)
    return x.astype(OUTPUT_DTYPES[dtype])


def visible(p, top_left=False):
    """[sq, sk] mask: bottom-right aligned window (top_left: the classic misalignment bug)."""
    i = np.arange(p.seqlen_q)[:, None] + (0 if top_left else p.mask_offset)
    j = np.arange(p.seqlen_k)[None, :]
    left, right = p.window
    ok = np.ones((p.seqlen_q, p.seqlen_k), dtype=bool)
    if left >= 0:
        ok &= j >= i - left
    if right >= 0:
        ok &= j <= i + right
    return ok


def score_mod(s, p, alibi_sign=1.0):
    """The soft cap and ALiBi on scaled logits s [b, hq, sq, sk] (docs/spec.md "Soft cap and ALiBi");
    with the cap's derivative 1 - tanh^2 (ones without a cap)."""
    deriv = np.ones_like(s)
    if getattr(p, "softcap", None) is not None:
        t = np.tanh(s / p.softcap)
        s, deriv = p.softcap * t, 1.0 - t * t
    if getattr(p, "alibi_slopes", None) is not None:
        dist = np.abs(np.arange(p.seqlen_q)[:, None] + p.mask_offset - np.arange(p.seqlen_k)[None, :])
        s = s - alibi_sign * np.asarray(p.alibi_slopes)[None, :, None, None] * dist
    return s, deriv


def probabilities(q, k, p, scale=None, top_left=False, alibi_sign=1.0, with_deriv=False):
    """P [b, hq, sq, sk], row max and row sum (float64)."""
    kr = np.repeat(to_float64(k), p.group_size, axis=2)
    s = np.einsum("bihd,bjhd->bhij", to_float64(q), kr) * (p.softmax_scale if scale is None else scale)
    s, deriv = score_mod(s, p, alibi_sign)
    s = np.where(visible(p, top_left), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    l = e.sum(axis=-1, keepdims=True)
    prob = e / np.where(l > 0, l, 1.0)
    return (prob, m[..., 0], l[..., 0], deriv) if with_deriv else (prob, m[..., 0], l[..., 0])


def forward(q, k, v, p, scale=None, top_left=False, drop_log_l=False, alibi_sign=1.0):
    prob, m, l = probabilities(q, k, p, scale, top_left, alibi_sign)
    o = np.einsum("bhij,bjhd->bihd", prob, np.repeat(to_float64(v), p.group_size, axis=2))
    lse = np.where(l > 0, m + (0.0 if drop_log_l else np.log(np.where(l > 0, l, 1.0))), np.inf)
    return to_dtype(o, p.dtype), lse.astype(np.float32)


def group_sum(x, p, first_head_only=False):
    b, s, hq, d = x.shape
    x = x.reshape(b, s, p.heads_kv, p.group_size, d)
    return x[:, :, :, 0, :] if first_head_only else x.sum(axis=3)


def backward(q, k, v, o, lse, dout, p, first_head_dv=False, drop_softcap_derivative=False):
    prob, _, _, deriv = probabilities(q, k, p, with_deriv=True)
    g = p.group_size
    kr, vr = np.repeat(to_float64(k), g, axis=2), np.repeat(to_float64(v), g, axis=2)
    do = to_float64(dout)
    dv = np.einsum("bhij,bihd->bjhd", prob, do)
    dp = np.einsum("bihd,bjhd->bhij", do, vr)
    ds = prob * (dp - (prob * dp).sum(axis=-1, keepdims=True))
    if not drop_softcap_derivative:
        ds = ds * deriv
    dq = np.einsum("bhij,bjhd->bihd", ds, kr) * p.softmax_scale
    dk = np.einsum("bhij,bihd->bjhd", ds, to_float64(q)) * p.softmax_scale
    return (to_dtype(dq, p.dtype), to_dtype(group_sum(dk, p), p.dtype),
            to_dtype(group_sum(dv, p, first_head_dv), p.dtype))


# The broken kernels: each a classic bug.
def forward_missing_scale(q, k, v, p):
    return forward(q, k, v, p, scale=1.0)


def forward_top_left_mask(q, k, v, p):
    return forward(q, k, v, p, top_left=True)


def forward_lse_without_log_l(q, k, v, p):
    return forward(q, k, v, p, drop_log_l=True)


def backward_dv_first_head(q, k, v, o, lse, dout, p):
    return backward(q, k, v, o, lse, dout, p, first_head_dv=True)


def forward_alibi_wrong_sign(q, k, v, p):
    return forward(q, k, v, p, alibi_sign=-1.0)


def backward_without_softcap_derivative(q, k, v, o, lse, dout, p):
    return backward(q, k, v, o, lse, dout, p, drop_softcap_derivative=True)
