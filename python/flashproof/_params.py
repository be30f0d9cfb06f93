"""What a user's callable is told about the problem besides its tensors."""
from dataclasses import dataclass


class ProblemShapes:
    """Shapes and mask facts derived from batch, heads, seqlens, head_dim and window (Params, Case)."""

    @property
    def causal(self):
        return self.window == (-1, 0)

    @property
    def q_shape(self):
        return (self.batch, self.seqlen_q, self.heads_q, self.head_dim)

    @property
    def kv_shape(self):
        return (self.batch, self.seqlen_k, self.heads_kv, self.head_dim)

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

    @property
    def mask_offset(self):
        return self.seqlen_k - self.seqlen_q

    @property
    def group_size(self):
        return self.heads_q // self.heads_kv

    @classmethod
    def _from_dict(cls, d):
        return cls(d["batch"], d["heads_q"], d["heads_kv"], d["seqlen_q"], d["seqlen_k"], d["head_dim"],
                   d["dtype"], d["softmax_scale"], d["scale"], (d["window_left"], d["window_right"]))
