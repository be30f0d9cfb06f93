"""What a kernel declares it computes (core/support.h, docs/plugging-in.md "Declaring what a kernel
supports"), and the exception a kernel raises for a case it refuses when it runs."""
import json

_MASKS = ("none", "causal", "window")
_ALIGNMENTS = ("bottom-right", "top-left")


class Unsupported(Exception):
    """Raise it from forward or backward for a case the kernel does not compute: the case is
    `unsupported` (not a crash, not a pass) in campaigns and properties; check() re-raises it and
    flashproof.testing.assert_check skips the test with its message."""


class Support:
    """The problems a kernel computes; every argument optional (default: no constraint).

    dtypes: "fp16", "bf16", "fp32" (one or a list); head_dims: the head dims it takes;
    max_head_dim; masks: among "none", "causal" (bottom-right, flashproof's), "window";
    mask_alignment: "top-left" for a kernel whose causal or window mask is anchored at the first
    key (it then computes flashproof's mask only where seqlen_q == seqlen_k); gqa: False when
    heads_q must equal heads_kv; backward: False for a forward-only kernel; seqlen_multiple and
    seqlen_free_up_to: both sequence lengths above seqlen_free_up_to are multiples of
    seqlen_multiple; max_seqlen_q, max_seqlen_k; packed: True when the kernel takes packed batches
    (flash_attn_varlen_func's layout: Params.cu_seqlens_q/k, docs/spec.md "Packed batches"; the
    length rules then apply to each sequence). Off by default, so that a kernel written for dense
    batches is never handed one: a generated packed case is fitted to one dense sequence of its
    longest lengths, and check() refuses a packed case. softcap, alibi: True when the kernel takes
    a soft cap or ALiBi slopes (Params.softcap, Params.alibi_slopes; docs/spec.md "Soft cap and
    ALiBi"); off by default likewise: a generated case's cap or slopes are dropped, and check()
    refuses a case with them. kv_cache, paged, kv_append: True when the kernel reads a KV cache
    (Params.cache_seqlens, forward only), a paged one (Params.page_size, block_table) and appends
    new keys to it (Params.seqlen_new; docs/spec.md "KV caches"); off by default likewise.

    Generated problems (generate_case, testing.cases, fuzz, properties.run) are fitted into it
    (lengths rounded down to the multiple, the head dim moved to a declared one, the mask to a
    declared kind; each fitted case says so: Case.fitted, the campaign's "fitted" count, the
    properties' "fitted to the declared support" class); check() refuses a case outside it.
    """

    def __init__(self, *, dtypes=None, head_dims=None, max_head_dim=None, masks=_MASKS,
                 mask_alignment="bottom-right", gqa=True, backward=True, seqlen_multiple=1,
                 seqlen_free_up_to=0, max_seqlen_q=None, max_seqlen_k=None, packed=False, softcap=False,
                 alibi=False, kv_cache=False, paged=False, kv_append=False):
        record = {}
        if dtypes is not None:
            record["dtypes"] = [dtypes] if isinstance(dtypes, str) else list(dtypes)
        if head_dims is not None:
            record["head_dims"] = [head_dims] if isinstance(head_dims, int) else list(head_dims)
        if max_head_dim is not None:
            record["max_head_dim"] = max_head_dim
        record["masks"] = [masks] if isinstance(masks, str) else list(masks)
        record["mask_alignment"] = mask_alignment
        record["gqa"] = gqa
        record["backward"] = backward
        record["seqlen_multiple"] = seqlen_multiple
        record["seqlen_free_up_to"] = seqlen_free_up_to
        if max_seqlen_q is not None:
            record["max_seqlen_q"] = max_seqlen_q
        if max_seqlen_k is not None:
            record["max_seqlen_k"] = max_seqlen_k
        record["packed"] = packed
        record["softcap"] = softcap
        record["alibi"] = alibi
        record["kv_cache"] = kv_cache
        record["paged"] = paged
        record["kv_append"] = kv_append
        self._json = json.dumps(record)
        from . import _core
        self._text = _core.describe_support(self._json)  # validates: ValueError with one line

    def __repr__(self):
        return f"flashproof.Support({self._text})"

    def __eq__(self, other):
        return isinstance(other, Support) and self._json == other._json


def _support_json(support):
    """The JSON the C++ side reads, from a Support, a dict of its arguments or None."""
    if support is None:
        return ""
    if isinstance(support, dict):
        support = Support(**support)
    if not isinstance(support, Support):
        raise TypeError(f"support must be a flashproof.Support, a dict of its arguments or None, "
                        f"got {type(support).__name__}")
    return support._json
