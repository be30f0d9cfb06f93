"""Cases: explicit ones, the fuzz campaign's generated ones, and case files; their inputs and
their certified reference."""
import collections
import operator

import numpy as np

from . import _arrays, _core
from ._params import ProblemShapes

_INT64_MAX = 2**63 - 1
_UINT64_MAX = 2**64 - 1

CertifiedTensor = collections.namedtuple("CertifiedTensor", "value bound magnitude checked")
CertifiedTensor.__doc__ = """A reference tensor: float64 values, each within `bound` of the exact result.

magnitude: the size of the element's summands (the scale relative errors are measured against
where sums cancel); checked: False where sampling left an element out (value NaN there)."""


def _integer(name, value, low=0, high=_INT64_MAX):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = operator.index(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {value}")
    return value


def _window_side(name, value):
    if value is None:
        return -1
    value = _integer(name, value, low=-_INT64_MAX)
    return -1 if value < 0 else value


def _number(name, value):
    """A real number (not a bool) as a float; its finiteness and sign are Problem::validate's."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def _offsets(name, value):
    """A packed batch's offsets as a list of ints ([] for None); their rules are Problem::validate's."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a sequence of integers or None, got {type(value).__name__}")
    return [_integer(f"{name}[{i}]", x, low=-_INT64_MAX) for i, x in enumerate(value)]


def _tensor_shapes(case):
    if case.kv_cache:  # judged in the logical layout: the packed batch of its sequences (forward only)
        return {"o": (1, case.batch * case.seqlen_q, case.heads_q, case.head_dim),
                "lse": (1, case.heads_q, case.batch * case.seqlen_q)}
    return {"o": case.q_shape, "lse": case.lse_shape, "dq": case.q_shape, "dk": case.kv_shape, "dv": case.kv_shape}


class _PerTensor:
    """o, lse, dq, dk, dv looked up in self.tensors (None where not computed)."""

    def __getattr__(self, name):
        if name in ("o", "lse", "dq", "dk", "dv"):
            return self.tensors.get(name)
        raise AttributeError(name)


class Reference(_PerTensor):
    """The certified reference of a case (what `check` judges against), per tensor."""

    def __init__(self, raw, case):
        self.tensors = {}
        for name, shape in _tensor_shapes(case).items():
            if name in raw:
                value, bound, magnitude, checked = (np.frombuffer(b, dtype=np.float64).reshape(shape).copy()
                                                    for b in raw[name])
                self.tensors[name] = CertifiedTensor(value, bound, magnitude, checked != 0)
        self.inputs_in_domain = raw["inputs_in_domain"]
        self.domain_note = raw["domain_note"]



class Bounds(_PerTensor):
    """The rigorous per-element bounds of an implementation's arithmetic model on a case (what
    `check` holds its outputs to, rule 2), per tensor: o, lse, dq, dk, dv (float64 arrays in the
    tensor's shape; None where not computed). An implementation of that model returns x^ with
    |x^ - x| <= bound at each element (x the exact result); `check` fails an element when
    |x^ - reference| - reference bound > bound. +inf where the model gives no finite bound (every
    element when the inputs are outside the valid domain, and outside a sampled case's sample).

    dq_conditional, dk_conditional: True where the bound holds only when no intermediate overflowed
    (a finite result certifies it). inputs_in_domain, domain_note: as Reference's.
    """

    def __init__(self, raw, case):
        self.tensors = {name: np.frombuffer(raw[name], dtype=np.float64).reshape(shape).copy()
                        for name, shape in _tensor_shapes(case).items() if name in raw}
        self.dq_conditional = self.dk_conditional = None
        if "dq_conditional" in raw:
            self.dq_conditional = np.frombuffer(raw["dq_conditional"], dtype=np.uint8).reshape(case.q_shape) != 0
            self.dk_conditional = np.frombuffer(raw["dk_conditional"], dtype=np.uint8).reshape(case.kv_shape) != 0
        self.inputs_in_domain = raw["inputs_in_domain"]
        self.domain_note = raw["domain_note"]



class Case(ProblemShapes):
    """One check case: problem, input distribution and seed (inputs are a pure function of them).

    Case(seqlen_q=None, seqlen_k=None, head_dim=64, batch=1, heads_q=1, heads_kv=None, dtype="fp16",
         causal=False, window=None, scale=None, distribution="normal", seed=0, backward=False,
         cu_seqlens_q=None, cu_seqlens_k=None, softcap=None, alibi_slopes=None)
    seqlen_q defaults to 128, seqlen_k to seqlen_q, heads_kv to heads_q, scale to 1/sqrt(head_dim) in
    fp32 (a given scale is rounded to fp32); window=(left, right) with None or -1 for an unbounded side.

    cu_seqlens_q, cu_seqlens_k (both or neither): a packed batch, as flash_attn_varlen_func takes
    it (docs/spec.md "Packed batches"): the B + 1 cumulative offsets of its sequences' query and key
    lengths, from 0, non-decreasing. Its tensors have batch 1 and the totals as lengths, so seqlen_q
    and seqlen_k default to the last offsets (given, they must equal them). Sequence s is rows
    cu_seqlens_q[s]:cu_seqlens_q[s+1] against keys cu_seqlens_k[s]:cu_seqlens_k[s+1], its mask
    aligned to its own bottom right. Bad offsets raise ValueError with one line.

    softcap (a number > 0) and alibi_slopes (one per query head, or "standard" for the models'
    2^(-8 h / heads)): FlashAttention-2's soft cap and ALiBi (docs/spec.md "Soft cap and ALiBi"),
    fp32 values (rounded to fp32 when given). Bad values raise ValueError with one line.

    cache_seqlens, page_size, num_pages, block_table, num_splits, seqlen_new: a KV cache
    (docs/spec.md "KV caches"; forward only; Params documents the layout): each sequence's stored
    keys of the seqlen_k it holds (batch defaults to their count), pages of page_size keys (a multiple
    of 16 up to 256; num_pages defaults to one per table entry, block_table to those pages in order),
    a split count asked of a split-KV kernel, and keys appended before attending. Its reference and
    bounds are in the logical layout: o [1, batch * seqlen_q, heads_q, head_dim], lse
    [1, heads_q, batch * seqlen_q] (sequence b's rows b * seqlen_q ...).
    """

    def __init__(self, seqlen_q=None, seqlen_k=None, head_dim=64, batch=None, heads_q=1, heads_kv=None, dtype="fp16",
                 causal=False, window=None, scale=None, distribution="normal", seed=0, backward=False,
                 cu_seqlens_q=None, cu_seqlens_k=None, softcap=None, alibi_slopes=None, cache_seqlens=None,
                 page_size=0, num_pages=None, block_table=None, num_splits=0, seqlen_new=0):
        cu_q = _offsets("cu_seqlens_q", cu_seqlens_q)
        cu_k = _offsets("cu_seqlens_k", cu_seqlens_k)
        lengths = _offsets("cache_seqlens", cache_seqlens)
        table = _offsets("block_table", block_table)
        if batch is None:
            batch = len(lengths) if lengths else 1
        # A packed batch's lengths are its totals; a mismatch given explicitly is left to the
        # problem's own validation, which names both numbers.
        if seqlen_q is None:
            seqlen_q = cu_q[-1] if cu_q else 128
        seqlen_q = _integer("seqlen_q", seqlen_q)
        if seqlen_k is None:
            seqlen_k = cu_k[-1] if cu_k else seqlen_q
        seqlen_k = _integer("seqlen_k", seqlen_k)
        heads_q = _integer("heads_q", heads_q)
        heads_kv = heads_q if heads_kv is None else _integer("heads_kv", heads_kv)
        if not isinstance(dtype, str):
            raise TypeError(f"dtype must be a string (fp16, bf16, fp32), got {type(dtype).__name__}")
        left, right = -1, -1
        if window is not None:
            if not isinstance(window, (tuple, list)) or len(window) != 2:
                raise TypeError("window must be a (left, right) pair")
            left, right = _window_side("window left", window[0]), _window_side("window right", window[1])
        if causal:
            if window is not None and right != 0:
                raise ValueError(f"causal means a right window side of 0, but window gives {right}")
            right = 0
        if scale is not None:
            if isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer)):
                raise TypeError(f"scale must be a number, got {type(scale).__name__}")
            scale = float(np.float32(scale))
        if not isinstance(distribution, str):
            raise TypeError(f"distribution must be a string, got {type(distribution).__name__}")
        if softcap is not None:
            softcap = float(np.float32(_number("softcap", softcap)))
        if isinstance(alibi_slopes, str):
            if alibi_slopes != "standard":
                raise ValueError(f"alibi_slopes must be a sequence of numbers or 'standard', got '{alibi_slopes}'")
            alibi_slopes = _core.standard_alibi_slopes(heads_q)
        elif alibi_slopes is None:
            alibi_slopes = []
        elif not hasattr(alibi_slopes, "__iter__"):
            raise TypeError(f"alibi_slopes must be a sequence of numbers, 'standard' or None, got {type(alibi_slopes).__name__}")
        else:
            alibi_slopes = [float(np.float32(_number(f"alibi_slopes[{i}]", x))) for i, x in enumerate(alibi_slopes)]
        self._box = _core.make_case(
            batch=_integer("batch", batch), heads_q=heads_q, heads_kv=heads_kv, seqlen_q=seqlen_q, seqlen_k=seqlen_k,
            head_dim=_integer("head_dim", head_dim), dtype=dtype, window_left=left, window_right=right, scale=scale,
            distribution=distribution, seed=_integer("seed", seed, high=_UINT64_MAX), backward=bool(backward),
            cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, softcap=softcap, alibi_slopes=alibi_slopes, cache_seqlens=lengths,
            page_size=_integer("page_size", page_size, low=0),
            num_pages=None if num_pages is None else _integer("num_pages", num_pages, low=0), block_table=table,
            num_splits=_integer("num_splits", num_splits, low=0), seqlen_new=_integer("seqlen_new", seqlen_new, low=0))

    @classmethod
    def _wrap(cls, box):
        case = cls.__new__(cls)
        case._box = box
        return case

    def __getattr__(self, name):
        if name in ("batch", "heads_q", "heads_kv", "seqlen_q", "seqlen_k", "head_dim", "dtype", "scale", "softmax_scale",
                    "distribution", "seed", "backward", "kind", "note", "property", "impl", "fitted", "page_size",
                    "num_pages", "num_splits", "seqlen_new"):
            return getattr(self._box, name)
        raise AttributeError(name)

    @property
    def window(self):
        return (self._box.window_left, self._box.window_right)

    @property
    def cu_seqlens_q(self):
        """A packed batch's query offsets (a tuple), None for a dense problem."""
        return tuple(self._box.cu_seqlens_q) or None

    @property
    def cu_seqlens_k(self):
        """A packed batch's key offsets (a tuple), None for a dense problem."""
        return tuple(self._box.cu_seqlens_k) or None

    @property
    def softcap(self):
        """The soft cap (a float), None without one."""
        return self._box.softcap

    @property
    def alibi_slopes(self):
        """ALiBi's slopes (a tuple, one per query head), None without ALiBi."""
        return tuple(self._box.alibi_slopes) or None

    @property
    def cache_seqlens(self):
        """A KV cache's stored lengths (a tuple), None without."""
        return tuple(self._box.cache_seqlens) or None

    @property
    def block_table(self):
        """A paged cache's block table (a tuple), None without pages."""
        return tuple(self._box.block_table) or None

    def describe(self):
        """One line, e.g. "fp16 b=1 hq=2 hkv=1 sq=5 sk=7 d=64 causal normal seed 3 backward"."""
        text = f"{self._box.describe()} {self.distribution} seed {self.seed}"
        return text + (" backward" if self.backward else "")

    def __str__(self):
        return self.describe()

    def __repr__(self):
        return f"<flashproof.Case {self.describe()}>"

    def with_backward(self, backward=True):
        """The same case with the backward run (or not)."""
        return Case._wrap(self._box.with_backward(bool(backward)))

    def inputs(self, format="numpy", device=None):
        """q, k, v, dout exactly as `check` feeds a kernel, in the problem's layout [b, s, h, d]
        (a KV cache: k and v the cache, and k_new, v_new when it appends).

        format: "numpy" (float16, bf16 as ml_dtypes.bfloat16 or else uint16 bit patterns, float32),
        "torch" (torch.float16/bfloat16/float32, on device when given), "float32" (exact float32
        values) or "bits" (uint16/uint32 bit patterns).
        """
        raw = _core.inputs(self._box)
        shapes = {"q": self.q_shape, "k": self.kv_shape, "v": self.kv_shape, "dout": self.q_shape}
        if self.seqlen_new > 0:  # a KV cache's appended keys (k and v are then the cache before them)
            shapes.update(k_new=self.new_kv_shape, v_new=self.new_kv_shape)
        out = {}
        for name, shape in shapes.items():
            bits = _arrays.bits_array(raw[name], self.dtype, shape)
            if format == "bits":
                out[name] = bits
            elif format == "float32":
                out[name] = _arrays.exact_float32(bits, self.dtype)
            elif format in ("numpy", "torch"):
                out[name] = _arrays.to_user(bits, self.dtype, format, device)
            else:
                raise ValueError(f"format must be numpy, torch, float32 or bits, got {format!r}")
        return out

    def reference(self, backward=None, threads=0):
        """The certified reference (values and bounds as float64 arrays) that `check` judges with.

        backward: also dQ, dK, dV (default: the case's own setting).
        """
        backward = self.backward if backward is None else bool(backward)
        _core.check_case_cost(self._box, backward, None, None)  # check's default limits
        return Reference(_core.reference(self._box, backward, _integer("threads", threads, high=4096)), self)

    def bounds(self, model="flash", gqa="group_sum", backward=None, threads=0):
        """The rigorous per-element bounds (a Bounds: float64 arrays) that `check` holds an
        implementation of this arithmetic model to on the case's inputs, computed by the same code.

        model: "flash" or "naive", gqa: "group_sum" or "per_head_rounded" (check's arguments);
        backward: also dQ, dK, dV (default: the case's own setting). The bounds depend on the inputs
        alone, not on what an implementation returns: a flash-model backward forms D = rowsum(dO * O)
        from its own O, and its dQ and dK bounds already cover any O within O's bound. (That O's
        actual error enters only rule 3's tolerance, the record's d_error_share, not given here.)
        A case read from a case file uses its saved check options (a sampled case: +inf outside
        its sample); a record's rigorous_bound.worst_element.bound is the value at that index.
        """
        for value, allowed, what in ((model, ("flash", "naive"), "model"),
                                     (gqa, ("group_sum", "per_head_rounded"), "gqa")):
            if value not in allowed:
                raise ValueError(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
        backward = self.backward if backward is None else bool(backward)
        _core.check_case_cost(self._box, backward, None, None)  # check's default limits
        raw = _core.bounds(self._box.to_json(""), model, gqa, backward, _integer("threads", threads, high=4096))
        return Bounds(raw, self)

    def save(self, path, note=""):
        """Writes the case as a case file (`flashproof replay` / `flashproof.replay` re-run it)."""
        _core.write_case_file(self._box, str(path), note)

    def to_json(self, note=""):
        return self._box.to_json(note)


def generate_case(seed, index, dtype=None, backward=None, max_seqlen=512, max_work=2**21, support=None):
    """Case `index` of the fuzz campaign with this seed (fuzz/case_generator.h): the same case
    `flashproof fuzz --seed SEED` runs at that index with the same settings.

    dtype: one dtype or a list (default fp16 and bf16, the campaign's); backward: None lets the
    generator choose as a campaign over both directions does, True/False forces it. support
    (flashproof.Support): the case is fitted into it; Case.fitted says whether it moved.
    """
    from ._support import _support_json
    if dtype is None:
        dtypes = ["fp16", "bf16"]
    elif isinstance(dtype, str):
        dtypes = [dtype]
    else:
        dtypes = list(dtype)
    direction = "both" if backward is None else ("backward" if backward else "forward")
    box = _core.generate_case(_integer("seed", seed, high=_UINT64_MAX), _integer("index", index, high=_UINT64_MAX),
                              dtypes, direction, _integer("max_seqlen", max_seqlen, low=1),
                              _integer("max_work", max_work, low=1), _support_json(support))
    return Case._wrap(box)


def read_case(path):
    """A case file (with its saved check options and, for a property's failure, the property)."""
    return Case._wrap(_core.read_case_file(str(path)))
