"""What a user's callable is told about the problem besides its tensors."""
from dataclasses import dataclass


class ProblemShapes:
    """Shapes and mask facts derived from batch, heads, seqlens, head_dim, window and the offsets (Params, Case)."""

    @property
    def causal(self):
        return self.window == (-1, 0)

    @property
    def packed(self):
        """A packed batch (cu_seqlens_q/k given), docs/spec.md "Packed batches"."""
        return self.cu_seqlens_q is not None

    @property
    def q_shape(self):
        return (self.batch, self.seqlen_q, self.heads_q, self.head_dim)

    @property
    def kv_cache(self):
        """A KV cache (cache_seqlens or pages given), docs/spec.md "KV caches"."""
        return self.cache_seqlens is not None or self.page_size > 0

    @property
    def kv_shape(self):
        """K and V as the callable receives them: a paged cache's pool, else [b, sk, hkv, d]."""
        if self.page_size > 0:
            return (self.num_pages, self.page_size, self.heads_kv, self.head_dim)
        return (self.batch, self.seqlen_k, self.heads_kv, self.head_dim)

    @property
    def new_kv_shape(self):
        """The appended keys' and values' shape (seqlen_new > 0)."""
        return (self.batch, self.seqlen_new, self.heads_kv, self.head_dim)

    @property
    def lse_shape(self):
        return (self.batch, self.heads_q, self.seqlen_q)


@dataclass(frozen=True)
class Params(ProblemShapes):
    """The problem of a forward/backward call.

    softmax_scale is the exact fp32 softmax scale every implementation uses (a Python float); scale is
    the scale the case gave, or None for the default 1/sqrt(head_dim) rounded to fp32 (the same
    two fields as every record, docs/case-files.md). window is (left, right), -1 for an
    unbounded side, aligned to the bottom right: query i sees key j when
    i + mask_offset - left <= j <= i + mask_offset + right, mask_offset = seqlen_k - seqlen_q.
    Causal is (-1, 0). Query head h reads key/value head h // group_size.

    cu_seqlens_q, cu_seqlens_k: None for a dense batch; for a packed batch (`packed` is True:
    FlashAttention-2's flash_attn_varlen_func layout, docs/spec.md "Packed batches") the B + 1
    cumulative offsets of its B sequences, as tuples of ints. A callable is handed one only when it
    declares flashproof.Support(packed=True). The tensors then have batch 1: q, o, dout, dq are
    [1, seqlen_q, heads_q, head_dim] with seqlen_q the total of the query lengths, k, v, dk, dv
    [1, seqlen_k, heads_kv, head_dim], lse [1, heads_q, seqlen_q]. Sequence s holds query rows
    cu_seqlens_q[s]:cu_seqlens_q[s+1] and keys cu_seqlens_k[s]:cu_seqlens_k[s+1]; a row sees only
    its own sequence's keys, and the window is aligned to each sequence's own bottom right
    (mask_offset = that sequence's key count - its query count). A sequence may be empty on
    either side; rows that see no key get o = 0 and lse = +inf, keys no row sees dk = dv = 0.

    softcap, alibi_slopes: the score modification (docs/spec.md "Soft cap and ALiBi"), as
    FlashAttention-2's softcap and alibi_slopes: each scaled logit s of query head h, row i, key j
    becomes softcap * tanh(s / softcap) (when softcap is not None), then minus
    alibi_slopes[h] * |i + mask_offset - j| (when alibi_slopes is not None; per sequence in a packed
    batch), before the mask and the softmax. A callable is handed them only when it declares
    flashproof.Support(softcap=True) or Support(alibi=True).

    cache_seqlens, page_size, num_pages, block_table, num_splits, seqlen_new: a KV cache (docs/spec.md
    "KV caches"; forward only, FlashAttention-2's flash_attn_with_kvcache). k and v are the cache:
    [batch, seqlen_k, heads_kv, head_dim], or with page_size > 0 the pool [num_pages, page_size,
    heads_kv, head_dim] and block_table (a tuple of batch * seqlen_k // page_size page indices,
    row-major) mapping sequence b's key j to page block_table[b * (seqlen_k // page_size) + j //
    page_size], slot j % page_size. Sequence b attends over its first cache_seqlens[b] keys (None:
    all seqlen_k) plus seqlen_new appended ones, its query rows aligned to their end; every other
    slot holds NaN. With seqlen_new > 0 the forward is called with keyword arguments k_new and v_new
    ([batch, seqlen_new, heads_kv, head_dim]) and must write them into k and v in place at slots
    cache_seqlens[b] .. + seqlen_new - 1 before attending (the check compares the cache it leaves).
    num_splits: a split count asked of a split-KV kernel (0: its choice). Handed over only when the
    callable declares flashproof.Support(kv_cache=True) (paged=True, kv_append=True likewise).
    """

    batch: int
    heads_q: int
    heads_kv: int
    seqlen_q: int
    seqlen_k: int
    head_dim: int
    dtype: str
    softmax_scale: float
    scale: object  # float or None
    window: tuple
    cu_seqlens_q: object = None  # tuple of ints or None (dense)
    cu_seqlens_k: object = None
    softcap: object = None       # float or None (no cap)
    alibi_slopes: object = None  # tuple of floats, one per query head, or None (no ALiBi)
    cache_seqlens: object = None  # tuple of ints or None (no KV cache, or every key used)
    page_size: int = 0
    num_pages: int = 0
    block_table: object = None    # tuple of ints or None (contiguous)
    num_splits: int = 0
    seqlen_new: int = 0

    @property
    def mask_offset(self):
        """seqlen_k - seqlen_q: a dense problem's; a packed batch's is per sequence (above)."""
        return self.seqlen_k - self.seqlen_q

    @property
    def group_size(self):
        return self.heads_q // self.heads_kv

    @classmethod
    def _from_dict(cls, d):
        return cls(d["batch"], d["heads_q"], d["heads_kv"], d["seqlen_q"], d["seqlen_k"], d["head_dim"],
                   d["dtype"], d["softmax_scale"], d["scale"], (d["window_left"], d["window_right"]),
                   _offsets(d.get("cu_seqlens_q")), _offsets(d.get("cu_seqlens_k")), d.get("softcap"),
                   _offsets(d.get("alibi_slopes")), _offsets(d.get("cache_seqlens")), d.get("page_size", 0),
                   d.get("num_pages", 0), _offsets(d.get("block_table")), d.get("num_splits", 0),
                   d.get("seqlen_new", 0))


def _offsets(value):
    """A record's array (offsets, slopes) as a tuple; absent is None."""
    return None if value is None else tuple(value)
