#!/usr/bin/env python3
"""Judge outside attention implementations that run on a CPU through the `flashproof` Python
package, beside flashproof's own built-ins, on the same generated cases.

Implementations (--impls, default all):
  torch-flash-cpu  torch.ops.aten._scaled_dot_product_flash_attention_for_cpu (the fused CPU kernel
                   behind scaled_dot_product_attention; returns O and an fp32 natural-log LSE) and
                   its backward op ..._for_cpu_backward fed the forward's own O and LSE. Judged
                   with the `flash` arithmetic model (P unnormalised, rounded to the dtype before
                   P V; backward recomputes P from the stored LSE, D = rowsum(dO * O)). GQA: the
                   op takes fewer K/V heads natively; declared gqa=per_head_rounded (see --help-notes).
  torch-math       torch.nn.functional.scaled_dot_product_attention under
                   sdpa_kernel([SDPBackend.MATH]) (aten::_scaled_dot_product_attention_math), backward
                   through autograd. On the CPU it computes fp16/bf16 in fp32 and rounds
                   once. It returns no LSE: this script supplies torch.logsumexp of the fp32
                   logits (`lse_source` = script), which is not torch's output and is not counted
                   as a judgement of torch. Model `naive`, gqa=group_sum (enable_gqa repeats the
                   fp32 K/V, so the group's gradients are summed in fp32 and rounded once).
  jax-xla          jax.nn.dot_product_attention(implementation="xla"), eager, backward via
                   jax.vjp. Its only LSE (return_residual) is rounded to the input dtype by design,
                   so the LSE judged is jax.nn.logsumexp of the fp32 logits computed here with the
                   same jax ops (`lse_source` = script). Model `naive` (fp32 logits and softmax,
                   normalised P rounded to the dtype, P V), gqa=group_sum (grouped einsum).
  fa2, fa1, naive  flashproof's built-ins by name (fa2/fa1 on the emulator without a GPU).

Masks: flashproof's windows are bottom-right aligned (query i sees key j when
i + sk - sq - left <= j <= i + sk - sq + right). The outside implementations get their native
is_causal only where it means the same (causal with seqlen_q == seqlen_k); every other mask is an
explicit one (torch-flash-cpu: additive 0/-inf in the dtype, as the op requires; torch-math and jax:
boolean). Rows that see no key: flashproof's semantics are O = 0, LSE = +inf, zero gradients.
torch-flash-cpu returns O = 0 and LSE = 0 there: its 0 is mapped to +inf (counted per case,
`lse_empty_rows_mapped`) and back for its backward; the scripts' LSEs give -inf there, mapped the
same way. jax gives such rows uniform weights over the masked keys (its mask fill is a large finite
negative number), so cases with such rows are `unsupported` for jax-xla.

Metrics, per implementation and tensor over the checked cases whose verdict is pass or fail (out of
domain and not judged cases have no finite bound to compare with):
  err/bound   the record's rigorous_bound.max_error_over_bound (max over elements of
              |actual - reference| / the implementation model's rigorous bound): max and 99th
              percentile over cases. Every implementation; depends on the declared model.
  ulps        the record's errors.max_ulps (against the correctly rounded exact value): max and
              p99 over cases. Every implementation.
  err/(u*mag) elementwise |actual - reference| / (u * magnitude + tiny), u the output's unit
              roundoff (fp16 2^-11, bf16 2^-8, LSE fp32 2^-24), magnitude the reference's size of the
              element's summands (flashproof.CertifiedTensor.magnitude), tiny half the dtype's
              smallest subnormal (underflow): max and p99 over all
              compared elements of all those cases. Outside implementations only (the script
              holds their outputs; the built-ins' outputs are not exposed by the package).

Failures of an outside implementation are re-computed independently with mpmath (unless
--no-repro): the worst elements of each failing tensor (ranked by error / (u * magnitude)) are
evaluated at 320 bits directly from the case's exact input values (exact dot products, mpmath
exp/log), without flashproof's reference. Failing cases are saved as case files (OUT_cases/);
--replay CASE_FILE --impls A,B re-checks one and prints the reproduction; --report-from OUT.jsonl
rebuilds the report.

Needs the flashproof package (PYTHONPATH), numpy, ml_dtypes, mpmath; torch and jax for their
implementations (an implementation whose library is missing is reported as unsupported). Not run by
CI. Output: OUT.jsonl (one line per case and implementation) and OUT.md (the report).
"""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
import traceback

OUTSIDE = ("torch-flash-cpu", "torch-math", "jax-xla")
BUILTIN = ("fa2", "fa1", "naive")
ALL_IMPLS = OUTSIDE + BUILTIN
UNIT = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8, "fp32": 2.0 ** -24}
# Half the smallest subnormal: the rounding error below the normal range (an exact value of 1e-30
# rounds to 0 in fp16; that is not an error in units of its magnitude).
TINY = {"fp16": 2.0 ** -25, "bf16": 2.0 ** -134, "fp32": 2.0 ** -150}
TENSOR_KEYS = {"O": "o", "LSE": "lse", "dQ": "dq", "dK": "dk", "dV": "dv"}


# ----------------------------------------------------------------------------------------------
# Masks and small helpers


def visible_mask(np, params):
    """[sq, sk] booleans: query i sees key j (flashproof's bottom-right aligned window)."""
    sq, sk = params.seqlen_q, params.seqlen_k
    left, right = params.window
    i = np.arange(sq)[:, None] + (sk - sq)
    j = np.arange(sk)[None, :]
    vis = np.ones((sq, sk), dtype=bool)
    if left >= 0:
        vis &= j >= i - left
    if right >= 0:
        vis &= j <= i + right
    return vis


def has_mask(params):
    return params.window[0] >= 0 or params.window[1] >= 0


def native_causal(params):
    """True where the libraries' top-left is_causal equals flashproof's mask."""
    return params.window == (-1, 0) and params.seqlen_q == params.seqlen_k


class Unsupported(Exception):
    """The implementation does not run this case (the message says why)."""


# ----------------------------------------------------------------------------------------------
# Outside implementations. Each has forward(q, k, v, params) -> (o, lse) and
# backward(q, k, v, o, lse, dout, params) -> (dq, dk, dv) in flashproof's layouts
# (Q/O/dO [b, sq, hq, d], K/V [b, sk, hkv, d], LSE [b, hq, sq] fp32), and keeps its last outputs
# in self.last for the elementwise metrics.


class _TorchImpl:
    """What the PyTorch implementations share: the aten ops, the last outputs, no refused case."""

    def __init__(self, torch, np):
        self.torch, self.np = torch, np
        self.ops = torch.ops.aten
        self.last = {}
        self.mapped = 0

    def unsupported(self, case, empty_rows):
        return None


class TorchFlashCpu(_TorchImpl):
    name = "torch-flash-cpu"
    model, gqa, tensors, lse_source = "flash", "per_head_rounded", "torch", "implementation"

    def _mask(self, params, dtype):
        if not has_mask(params) or native_causal(params):
            return None
        vis = self.torch.from_numpy(visible_mask(self.np, params))
        zero = self.torch.zeros(vis.shape, dtype=dtype)
        return zero.masked_fill(~vis, float("-inf"))

    def forward(self, q, k, v, params):
        t = self.torch
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        o, lse = self.ops._scaled_dot_product_flash_attention_for_cpu(
            qt, kt, vt, 0.0, native_causal(params), attn_mask=self._mask(params, q.dtype), scale=params.softmax_scale)
        lse = lse.float().contiguous()
        self.mapped = 0
        if has_mask(params):
            empty = t.from_numpy(~visible_mask(self.np, params).any(axis=1))  # [sq]
            if bool(empty.any()):
                sel = empty.view(1, 1, -1).expand_as(lse)
                self.mapped = int(sel.sum())
                lse = lse.masked_fill(sel, float("inf"))
        o = o.transpose(1, 2)
        self.last = {"o": o, "lse": lse}
        return o, lse

    def backward(self, q, k, v, o, lse, dout, params):
        t = self.torch
        lse_in = lse.masked_fill(t.isposinf(lse), 0.0) if has_mask(params) else lse  # torch's own convention
        tr = lambda x: x.transpose(1, 2)
        dq, dk, dv = self.ops._scaled_dot_product_flash_attention_for_cpu_backward(
            tr(dout), tr(q), tr(k), tr(v), tr(o), lse_in, 0.0, native_causal(params),
            attn_mask=self._mask(params, q.dtype), scale=params.softmax_scale)
        dq, dk, dv = tr(dq), tr(dk), tr(dv)
        self.last.update({"dq": dq, "dk": dk, "dv": dv})
        return dq, dk, dv


class TorchMath(_TorchImpl):
    name = "torch-math"
    model, gqa, tensors, lse_source = "naive", "group_sum", "torch", "script"

    def _args(self, params):
        if not has_mask(params) or native_causal(params):
            return {"is_causal": native_causal(params)}
        return {"attn_mask": self.torch.from_numpy(visible_mask(self.np, params))}

    def _run(self, q, k, v, params):
        # The public SDPA under the math backend: it turns a boolean mask into the additive one the
        # aten op expects (the aten op itself would add a boolean mask as 0/1).
        from torch.nn.attention import SDPBackend, sdpa_kernel
        tr = lambda x: x.transpose(1, 2)
        with sdpa_kernel([SDPBackend.MATH]):
            o = self.torch.nn.functional.scaled_dot_product_attention(
                tr(q), tr(k), tr(v), scale=params.softmax_scale, enable_gqa=params.heads_q != params.heads_kv,
                **self._args(params))
        return tr(o)

    def _lse(self, q, k, params):
        t = self.torch
        g = params.heads_q // params.heads_kv
        qf = q.float().transpose(1, 2)
        kf = k.float().transpose(1, 2).repeat_interleave(g, dim=1)
        s = (qf @ kf.transpose(-1, -2)) * t.tensor(params.softmax_scale, dtype=t.float32)
        if has_mask(params):
            vis = t.from_numpy(visible_mask(self.np, params))
            s = s.masked_fill(~vis, float("-inf"))
        lse = t.logsumexp(s, dim=-1)
        self.mapped = int(t.isneginf(lse).sum())
        return lse.masked_fill(t.isneginf(lse), float("inf")).contiguous()

    def forward(self, q, k, v, params):
        with self.torch.no_grad():
            o = self._run(q, k, v, params)
            lse = self._lse(q, k, params)
        self.last = {"o": o, "lse": lse}
        return o, lse

    def backward(self, q, k, v, o, lse, dout, params):
        leaves = [x.detach().clone().requires_grad_(True) for x in (q, k, v)]
        with self.torch.enable_grad():
            out = self._run(*leaves, params)
            dq, dk, dv = self.torch.autograd.grad(out, leaves, dout)
        self.last.update({"dq": dq, "dk": dk, "dv": dv})
        return dq, dk, dv


class JaxXla:
    name = "jax-xla"
    model, gqa, tensors, lse_source = "naive", "group_sum", "numpy", "script"

    def __init__(self, jax, np):
        self.jax, self.np = jax, np
        self.jnp = jax.numpy
        self.last = {}
        self.mapped = 0

    def unsupported(self, case, empty_rows):
        if empty_rows:
            return ("rows that see no key: jax.nn.dot_product_attention fills masked logits with a large "
                    "finite negative number, so such rows average the masked values (flashproof: O = 0)")
        return None

    def _kwargs(self, params):
        if not has_mask(params):
            return {}
        if native_causal(params):
            return {"is_causal": True}
        return {"mask": self.jnp.asarray(visible_mask(self.np, params)[None, None])}

    def _attention(self, params):
        kw = self._kwargs(params)
        scale = float(params.softmax_scale)
        return lambda q, k, v: self.jax.nn.dot_product_attention(q, k, v, scale=scale, implementation="xla", **kw)

    def _lse(self, q, k, params):
        jnp = self.jnp
        g = params.heads_q // params.heads_kv
        kr = jnp.repeat(k, g, axis=2)
        s = jnp.einsum("BTNH,BSNH->BNTS", q, kr, preferred_element_type=jnp.float32)
        s = s * jnp.asarray(params.softmax_scale, dtype=jnp.float32)
        if has_mask(params):
            s = jnp.where(jnp.asarray(visible_mask(self.np, params))[None, None], s, -jnp.inf)
        lse = self.np.asarray(self.jax.nn.logsumexp(s, axis=-1), dtype=self.np.float32)
        self.mapped = int(self.np.isneginf(lse).sum())
        return self.np.where(self.np.isneginf(lse), self.np.float32(self.np.inf), lse).astype(self.np.float32)

    def forward(self, q, k, v, params):
        jnp = self.jnp
        qj, kj, vj = (jnp.asarray(x) for x in (q, k, v))
        o = self.np.asarray(self._attention(params)(qj, kj, vj))
        lse = self._lse(qj, kj, params)
        self.last = {"o": o, "lse": lse}
        return o, lse

    def backward(self, q, k, v, o, lse, dout, params):
        jnp = self.jnp
        qj, kj, vj, dj = (jnp.asarray(x) for x in (q, k, v, dout))
        _, vjp = self.jax.vjp(self._attention(params), qj, kj, vj)
        dq, dk, dv = (self.np.asarray(x) for x in vjp(dj))
        self.last.update({"dq": dq, "dk": dk, "dv": dv})
        return dq, dk, dv


def make_outside(name, np):
    """(implementation object, None) or (None, why it cannot run here)."""
    try:
        if name.startswith("torch"):
            import torch
            return (TorchFlashCpu if name == "torch-flash-cpu" else TorchMath)(torch, np), None
        import jax
        jax.config.update("jax_platforms", "cpu")
        return JaxXla(jax, np), None
    except ImportError as e:
        return None, f"{name}: library not importable ({e})"


def versions():
    out = {"python": platform.python_version()}
    for mod in ("numpy", "torch", "jax", "jaxlib", "ml_dtypes", "mpmath"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - absent or odd module: reported as such
            out[mod] = "absent"
    return out


# ----------------------------------------------------------------------------------------------
# Independent reproduction (mpmath, from the case's exact input values)


class Exact:
    """Exact attention quantities of one case at 320 bits, rows computed on demand."""

    def __init__(self, mp, np, inputs_f32, params):
        self.mp, self.np, self.p = mp, np, params
        mp.mp.prec = 320
        self.q, self.k, self.v, self.do = (inputs_f32[n] for n in ("q", "k", "v", "dout"))
        self.vis = visible_mask(np, params)
        self.scale = mp.mpf(float(params.softmax_scale))
        self.rows = {}

    def _vec(self, a):
        return [self.mp.mpf(float(x)) for x in a]

    def row(self, b, h, i):
        """(keys, P_j, LSE, dP_j, D) of query row i of head h, batch b."""
        key = (b, h, i)
        if key in self.rows:
            return self.rows[key]
        mp, g = self.mp, self.p.heads_q // self.p.heads_kv
        hk = h // g
        keys = [j for j in range(self.p.seqlen_k) if self.vis[i, j]]
        qv = self._vec(self.q[b, i, h])
        s = [self.scale * mp.fdot(qv, self._vec(self.k[b, j, hk])) for j in keys]
        if not keys:
            r = (keys, [], mp.inf, [], mp.mpf(0))
        else:
            m = max(s)
            l = mp.fsum(mp.exp(x - m) for x in s)
            lse = m + mp.log(l)
            pr = [mp.exp(x - lse) for x in s]
            dov = self._vec(self.do[b, i, h])
            dp = [mp.fdot(dov, self._vec(self.v[b, j, hk])) for j in keys]
            d = mp.fdot(pr, dp)
            r = (keys, pr, lse, dp, d)
        self.rows[key] = r
        return r

    def value(self, tensor, index):
        """Exact value of one element; index in flashproof's layout of that tensor."""
        mp, p = self.mp, self.p
        g = p.heads_q // p.heads_kv
        if tensor == "LSE":
            b, h, i = index[:3]
            return self.row(b, h, i)[2]
        if tensor in ("O", "dQ"):
            b, i, h, c = index
            keys, pr, _, dp, d = self.row(b, h, i)
            if tensor == "O":
                return mp.fsum(pj * mp.mpf(float(self.v[b, j, h // g, c])) for j, pj in zip(keys, pr))
            return self.scale * mp.fsum(pj * (dpj - d) * mp.mpf(float(self.k[b, j, h // g, c]))
                                        for j, pj, dpj in zip(keys, pr, dp))
        b, j, hk, c = index  # dK, dV: sum over the group's heads and every query that sees key j
        total = []
        for h in range(hk * g, (hk + 1) * g):
            for i in range(p.seqlen_q):
                if not self.vis[i, j]:
                    continue
                keys, pr, _, dp, d = self.row(b, h, i)
                t = keys.index(j)
                if tensor == "dV":
                    total.append(pr[t] * mp.mpf(float(self.do[b, i, h, c])))
                else:
                    total.append(pr[t] * (dp[t] - d) * mp.mpf(float(self.q[b, i, h, c])))
        s = mp.fsum(total)
        return s if tensor == "dV" else self.scale * s


def reproduce(np, case, params, impl, reference, record, max_elements=2, max_terms=4_000_000):
    """For each failing tensor, its worst elements recomputed independently with mpmath.

    dK and dV need every query row of the group: skipped (with a note) when that is more than
    max_terms products, to bound the run time."""
    import mpmath
    inputs = case.inputs(format="float32")
    exact = Exact(mpmath, np, inputs, params)
    out = []
    for t in record["tensors"]:
        if t["verdict"] != "fail":
            continue
        work = (params.seqlen_q * (params.heads_q // params.heads_kv) if t["name"] in ("dK", "dV") else 1) \
            * params.seqlen_k * params.head_dim * 2
        if work > max_terms:
            out.append({"tensor": t["name"], "note": f"not reproduced here: {work} exact products needed",
                        "reasons": t["reasons"]})
            continue
        key = TENSOR_KEYS[t["name"]]
        actual = impl.last.get(key)
        ref = reference.tensors.get(key) if reference is not None else None
        if actual is None or ref is None:
            out.append({"tensor": t["name"], "note": "outputs or reference not at hand", "reasons": t["reasons"]})
            continue
        a = as_float64(np, actual).reshape(ref.value.shape)
        # Ranked by |actual - reference| / (u * magnitude + tiny), a stand-in for err/bound (the
        # bounds are not exposed): tiny elements returned as 0 rank high, non-finite ones highest.
        dtype = "fp32" if t["name"] == "LSE" else case.dtype
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(a - ref.value) / (UNIT[dtype] * np.abs(ref.magnitude) + TINY[dtype])
        err = np.where(~np.isfinite(a) & np.isfinite(ref.value), np.inf, err)
        err = np.where(ref.checked, err, -1.0)
        order = np.argsort(-np.nan_to_num(err, nan=-1.0, posinf=np.finfo(np.float64).max), axis=None)
        for flat in order[:max_elements]:
            idx = tuple(int(x) for x in np.unravel_index(flat, err.shape))
            t0 = time.time()
            try:
                exact_value = exact.value(t["name"], idx)
                ev = float(exact_value)
            except Exception as e:  # noqa: BLE001 - reported, not hidden
                ev, exact_value = None, None
                note = f"mpmath failed: {type(e).__name__}: {e}"
            else:
                note = ""
            out.append({"tensor": t["name"], "index": list(idx), "actual": float(a[idx]),
                        "flashproof_reference": float(ref.value[idx]), "reference_bound": float(ref.bound[idx]),
                        "mpmath_320bit": ev,
                        "mpmath_minus_reference": (None if exact_value is None or not math.isfinite(ev)
                                                   else float(exact_value - mpmath.mpf(float(ref.value[idx])))),
                        "actual_minus_mpmath": (None if ev is None else float(a[idx]) - ev),
                        "seconds": round(time.time() - t0, 2), "note": note, "reasons": t["reasons"]})
    return out


# ----------------------------------------------------------------------------------------------
# Elementwise metrics


def as_float64(np, x):
    if hasattr(x, "detach"):  # torch
        x = x.detach().float().numpy()
    return np.asarray(x).astype(np.float64)


# Pooled percentiles come from histograms of err/(u*mag) over every element of a table row's cases,
# kept in the JSONL's footer (so the report can be rebuilt from it): bin 0 holds exact zeros, bin i >= 1 the values in
# [10^((i-1)/50 - 12), 10^(i/50 - 12)) (4.7% wide), clamped to [1, 2400]. A percentile is reported
# as its bin's upper edge.
HIST_PER_DECADE, HIST_LOW, HIST_BINS = 50, -12.0, 2400


def histogram(np, e):
    idx = np.zeros(e.shape, dtype=np.int64)
    pos = e > 0
    idx[pos] = np.clip(np.floor((np.log10(e[pos]) - HIST_LOW) * HIST_PER_DECADE).astype(np.int64) + 1, 1, HIST_BINS)
    values, counts = np.unique(idx, return_counts=True)
    return {str(int(v)): int(c) for v, c in zip(values, counts)}


def merge_hist(into, h):
    for k, c in h.items():
        into[k] = into.get(k, 0) + c


def hist_percentile(hists, q):
    total = {}
    for h in hists:
        for k, c in h.items():
            total[int(k)] = total.get(int(k), 0) + c
    n = sum(total.values())
    if n == 0:
        return None
    need, seen = q / 100.0 * n, 0
    for k in sorted(total):
        seen += total[k]
        if seen >= need:
            return 0.0 if k == 0 else 10.0 ** (k / HIST_PER_DECADE + HIST_LOW)
    return None


def flushed_subnormals(np, actual, ref, dtype):
    """Elements returned as 0 whose exact value is below 2^-126 (fp32's and bf16's smallest normal)
    but would round to a non-zero subnormal of the output dtype: what flushing subnormals to zero
    does (0 in fp16, whose subnormals are fp32 normals)."""
    a = as_float64(np, actual).reshape(ref.value.shape)
    r = np.abs(ref.value)
    return int(np.sum(ref.checked & (a == 0) & (r > 1.01 * TINY[dtype]) & (r < 2.0 ** -126)))


def elementwise_units(np, actual, ref, dtype):
    """|actual - reference| / (u * magnitude + tiny) over the compared finite elements, flat."""
    a = as_float64(np, actual).reshape(ref.value.shape)
    ok = ref.checked & np.isfinite(ref.value) & np.isfinite(a) & np.isfinite(ref.magnitude)
    if not ok.any():
        return np.zeros(0)
    return np.abs(a[ok] - ref.value[ok]) / (UNIT[dtype] * ref.magnitude[ok] + TINY[dtype])


# ----------------------------------------------------------------------------------------------
# Running


def git_commit(root):
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def empty_rows(np, params):
    return has_mask(params) and not visible_mask(np, params).any(axis=1).all()


def case_fields(case, index):
    return {"index": index, "dtype": case.dtype, "backward": bool(case.backward),
            "kind": getattr(case, "kind", "") or "grid",
            "batch": case.batch, "heads_q": case.heads_q, "heads_kv": case.heads_kv, "seqlen_q": case.seqlen_q,
            "seqlen_k": case.seqlen_k, "head_dim": case.head_dim, "scale": case.scale,
            "window": list(case.window), "distribution": case.distribution, "seed": str(case.seed)}


def summarize_record(rec):
    tensors = {}
    for t in rec["tensors"]:
        tensors[t["name"]] = {
            "verdict": t["verdict"].replace("-", "_"), "err_over_bound": t["rigorous_bound"]["max_error_over_bound"],
            "max_bound": t["rigorous_bound"]["max_bound"], "above_bound": t["rigorous_bound"]["above"],
            "unbounded": t["rigorous_bound"]["unbounded"], "max_abs": t["errors"]["max_abs"],
            "max_ulps": t["errors"]["max_ulps"], "nan_mismatch": t["errors"]["nan_mismatch"],
            "inf_mismatch": t["errors"]["inf_mismatch"], "regression": t["regression"],
            "baseline_max_abs": t["baseline_errors"]["max_abs"], "reasons": t["reasons"]}
    failing = [n for n, t in tensors.items() if t["verdict"] == "fail"]
    return {"verdict": rec["verdict"].replace("-", "_"), "regression": rec.get("regression", False),
            "in_domain": rec["in_domain"],
            "domain_note": rec["domain_note"], "failing_tensors": failing, "tensors": tensors}

# The grid suite: plain and mildly extreme inputs at head dim 64 (the bucket every build of fa2 and
# fa1 has), the masks each library meets in practice. (seqlen_q, seqlen_k, heads_q, heads_kv, window,
# distribution); batch 1, head_dim 64, default scale, seed = position.
GRID = [
    (128, 128, 2, 2, None, "normal"),
    (128, 128, 2, 2, (-1, 0), "normal"),        # causal, seqlen_q == seqlen_k: native is_causal
    (64, 200, 4, 2, (-1, 0), "normal"),         # causal, bottom-right: an explicit mask
    (200, 64, 2, 1, (-1, 0), "normal"),         # rows that see no key
    (96, 96, 4, 1, (32, 0), "normal"),          # sliding window, MQA
    (128, 128, 2, 2, (16, 16), "uniform"),      # local window
    (1, 256, 8, 2, None, "normal"),             # decoding step, GQA 4
    (128, 128, 2, 2, None, "scaled:4"),
    (128, 128, 2, 1, None, "large-logits:100"),
    (77, 130, 2, 2, None, "growing-max:16"),
    (64, 64, 2, 2, None, "dominant-key"),
    (100, 100, 3, 1, (-1, 0), "normal"),
]


def case_specs(fp, args, dtypes, directions):
    """(suite, index, dtype, direction, case): the grid, then fuzz indices 0..cases-1."""
    if "grid" in args.suites:
        for i, (sq, sk, hq, hkv, window, dist) in enumerate(GRID):
            for dtype in dtypes:
                for direction in directions:
                    yield "grid", i, dtype, direction, fp.Case(
                        seqlen_q=sq, seqlen_k=sk, head_dim=64, heads_q=hq, heads_kv=hkv, dtype=dtype,
                        window=window, distribution=dist, seed=i, backward=direction == "bwd")
    if "fuzz" in args.suites:
        for index in range(args.cases):
            for dtype in dtypes:
                for direction in directions:
                    yield "fuzz", index, dtype, direction, fp.generate_case(
                        args.seed, index, dtype=dtype, backward=direction == "bwd", max_seqlen=args.max_seqlen,
                        max_work=args.max_work)


def run(args):
    import numpy as np
    import flashproof as fp

    impls = [s for s in args.impls.split(",") if s]
    for name in impls:
        if name not in ALL_IMPLS:
            sys.exit(f"unknown implementation {name!r} (known: {', '.join(ALL_IMPLS)})")
    dtypes = args.dtypes.split(",")
    directions = args.directions.split(",")
    outside, missing = {}, {}
    for name in impls:
        if name in OUTSIDE:
            obj, why = make_outside(name, np)
            if obj is None:
                missing[name] = why
            else:
                outside[name] = obj
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(args.threads)
    builtins_here = {n for n, _ in fp.implementations()}

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    commit = git_commit(root)
    started = datetime.datetime.now(datetime.timezone.utc)
    header = {"type": "header", "date": started.strftime("%Y-%m-%d %H:%M:%S UTC"), "commit": commit,
              "cpu": cpu_model(), "cores": os.cpu_count(), "load_average_start": os.getloadavg(),
              "versions": versions(), "builtins": fp.implementations(), "impls": impls,
              "settings": {"suites": args.suites, "seed": args.seed, "cases": args.cases, "dtypes": dtypes,
                           "directions": directions,
                           "max_seqlen": args.max_seqlen, "max_work": args.max_work, "threads": args.threads,
                           "minutes": args.minutes, "repro": not args.no_repro},
              "declared": {n: {"model": o.model, "gqa": o.gqa, "lse_source": o.lse_source}
                           for n, o in outside.items()}}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)) or ".", exist_ok=True)
    jsonl_path, md_path = args.out + ".jsonl", args.out + ".md"
    deadline = time.time() + 60 * args.minutes if args.minutes else None
    rows = []
    pooled = {}  # "suite|impl|dtype|direction|tensor" -> histogram of err/(u*mag) over all elements
    case_dir = args.out + "_cases"
    with open(jsonl_path, "w", encoding="utf-8") as log:
        log.write(json.dumps(header) + "\n")
        n_done = {"grid": 0, "fuzz": 0}
        for suite, index, dtype, direction, case in case_specs(fp, args, dtypes, directions):
            first_of_index = (dtype, direction) == (dtypes[0], directions[0])
            if deadline and time.time() > deadline and suite == "fuzz" and first_of_index:
                print(f"time budget reached after {n_done['fuzz']} fuzz indices", file=sys.stderr)
                break
            if first_of_index:
                n_done[suite] += 1
            params = fp.Params(case.batch, case.heads_q, case.heads_kv, case.seqlen_q, case.seqlen_k,
                               case.head_dim, case.dtype, case.softmax_scale, case.scale, tuple(case.window))
            t0 = time.time()
            reference = case.reference(threads=args.threads)
            t_ref = time.time() - t0
            has_empty = empty_rows(np, params)
            for name in impls:
                row = {"type": "case", "suite": suite, "impl": name, **case_fields(case, index),
                       "empty_rows": has_empty}
                row["direction"] = direction
                t1 = time.time()
                try:
                    if name in missing:
                        raise Unsupported(missing[name])
                    if name in BUILTIN:
                        if name not in builtins_here:
                            raise Unsupported(f"{name} is not built here")
                        try:
                            rec = fp.check(name, case, threads=args.threads)
                        except ValueError as e:
                            if "does not support" in str(e):  # e.g. a head-dim bucket not built
                                raise Unsupported(str(e)) from e
                            raise
                        impl = None
                    else:
                        impl = outside[name]
                        why = impl.unsupported(case, has_empty)
                        if why:
                            raise Unsupported(why)
                        impl.last, impl.mapped = {}, 0
                        rec = fp.check(impl.forward, case, impl.backward if case.backward else None,
                                       model=impl.model, gqa=impl.gqa, tensors=impl.tensors,
                                       dtypes=["fp16", "bf16"], threads=args.threads, name=name)
                        row["lse_source"] = impl.lse_source
                        row["lse_empty_rows_mapped"] = impl.mapped
                except Unsupported as e:
                    row.update(status="unsupported", reason=str(e))
                except fp.CallableError as e:
                    row.update(status="error", reason=str(e))
                except Exception as e:  # noqa: BLE001 - a harness error is recorded, the run goes on
                    row.update(status="error", reason=f"{type(e).__name__}: {e}",
                               traceback=traceback.format_exc()[-2000:])
                else:
                    row["status"] = "checked"
                    row.update(summarize_record(rec))
                    row["where"] = rec["case"].get("where", "")
                    if impl is not None:
                        row["ftz_elements"] = sum(flushed_subnormals(np, impl.last[TENSOR_KEYS[t]],
                                                                     reference.tensors[TENSOR_KEYS[t]],
                                                                     "fp32" if t == "LSE" else case.dtype)
                                                  for t in row["tensors"] if TENSOR_KEYS[t] in impl.last
                                                  and reference.tensors.get(TENSOR_KEYS[t]) is not None)
                    if impl is not None and row["verdict"] in ("pass", "fail"):
                        units = {}
                        for tname, tsum in row["tensors"].items():
                            key = TENSOR_KEYS[tname]
                            if key in impl.last and reference.tensors.get(key) is not None:
                                e = elementwise_units(np, impl.last[key], reference.tensors[key],
                                                      "fp32" if tname == "LSE" else case.dtype)
                                if e.size:
                                    units[tname] = {"n": int(e.size), "max": float(e.max()),
                                                    "p99": float(np.percentile(e, 99))}
                                    merge_hist(pooled.setdefault(f"{suite}|{name}|{dtype}|{direction}|{tname}", {}),
                                               histogram(np, e))
                        row["err_units"] = units
                    if row["verdict"] == "fail":
                        os.makedirs(case_dir, exist_ok=True)
                        path = os.path.join(case_dir, f"{name}_{suite}{index}_{dtype}_{direction}.json")
                        case.save(path, note=f"third_party_accuracy: {name} failed ({commit})")
                        row["case_file"] = os.path.relpath(path, root)
                        row["record"] = rec
                        if impl is not None and not args.no_repro:
                            row["repro"] = reproduce(np, case, params, impl, reference, rec)
                row["seconds"] = round(time.time() - t1, 3)
                row["seconds_reference_here"] = round(t_ref, 3)
                rows.append(row)
                log.write(json.dumps(row) + "\n")
                log.flush()
                verdict = row.get("verdict", row["status"])
                print(f"[{suite} {index}] {dtype} {direction} {name}: {verdict} ({row['seconds']} s) "
                      f"{case.describe()}", file=sys.stderr)
        footer = {"type": "footer", "grid_cases": n_done["grid"], "fuzz_indices": n_done["fuzz"],
                  "pooled_err_units_hist": pooled,
                  "seconds": round((datetime.datetime.now(datetime.timezone.utc) - started).total_seconds(), 1),
                  "load_average_end": os.getloadavg()}
        log.write(json.dumps(footer) + "\n")
    with open(md_path, "w", encoding="utf-8") as f:
        f.write(report(np, header, footer, rows, impls, dtypes, directions, jsonl_path))
    print(f"wrote {jsonl_path} and {md_path}", file=sys.stderr)
    return 1 if any(r.get("verdict") == "fail" and r["impl"] in OUTSIDE for r in rows) else 0


# ----------------------------------------------------------------------------------------------
# Report


def script_lse_only(r):
    """A failing case whose only failing tensor is the LSE this script supplied, not the library."""
    return r.get("lse_source") == "script" and r.get("failing_tensors") == ["LSE"]


def pct(np, values, q):
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return None
    return float(np.percentile(np.asarray(values), q)) if q < 100 else float(max(values))


def fmt(x, digits=3):
    if x is None:
        return "-"
    if x == 0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def failure_class(r):
    """Why an outside implementation's case failed, from its record (first match)."""
    ts = r["tensors"]
    if any(ts[t]["nan_mismatch"] or ts[t]["inf_mismatch"] for t in r["failing_tensors"]):
        return "NaN/inf where the exact value is finite"
    if r["failing_tensors"] == ["LSE"]:
        return "LSE beyond its bound (finite)"
    if r.get("ftz_elements"):
        return "subnormal results returned as 0 (flushed)"
    return f"finite {'/'.join(r['failing_tensors'])} beyond the bound"


def report(np, header, footer, rows, impls, dtypes, directions, jsonl_path):
    v = header["versions"]
    s = header["settings"]
    lines = [
        "# Outside attention implementations on the CPU, judged by flashproof",
        "",
        f"- date: {header['date']}; commit: `{header['commit']}`",
        f"- device: {header['cpu']} ({header['cores']} cores, shared; load average "
        f"{', '.join(f'{x:.2f}' for x in header['load_average_start'])} at the start, "
        f"{', '.join(f'{x:.2f}' for x in footer['load_average_end'])} at the end)",
        f"- versions: python {v['python']}, torch {v['torch']}, jax {v['jax']} (jaxlib {v['jaxlib']}), "
        f"numpy {v['numpy']}, ml_dtypes {v['ml_dtypes']}, mpmath {v['mpmath']}",
        f"- built-ins here: {', '.join(f'{n} ({w})' for n, w in header['builtins'])}",
        f"- cases, each in {' and '.join(dtypes)} and {' and '.join(directions)}, the same for every "
        f"implementation: suite `grid`, {footer['grid_cases']} explicit cases at head dim 64 (`GRID` in "
        f"bench/third_party_accuracy.py: plain and mildly extreme inputs, causal, bottom-right causal, local "
        f"windows, GQA/MQA, rows that see no key); suite `fuzz`, `flashproof.generate_case(seed={s['seed']}, "
        f"index, dtype, backward, max_seqlen={s['max_seqlen']}, max_work={s['max_work']})` for index "
        f"0..{footer['fuzz_indices'] - 1}: the fuzz campaign's cases (odd shapes and head dims, GQA, masks, "
        f"extreme values up to and past the domain's edge)",
        f"- threads: {s['threads']} (torch, reference); run time {footer['seconds']} s; raw records: "
        f"`{os.path.basename(jsonl_path)}`",
        "",
        "Declared arithmetic models (the rigorous bound each is held to) and LSE sources:",
        "",
    ]
    for name, d in header["declared"].items():
        lines.append(f"- {name}: model `{d['model']}`, gqa `{d['gqa']}`, LSE from {d['lse_source']}"
                     + (" (not the library's output: its LSE row is not a judgement of it)"
                        if d["lse_source"] == "script" else ""))
    lines += [
        "- fa2, fa1: model `flash`, gqa `group_sum`; naive: model `naive` (built-ins' own declarations)",
        "",
        "Verdicts (flashproof's rules: docs/error-bounds.md, harness/check.h): pass; fail (NaN/inf where "
        "the reference is finite, an element beyond the rigorous bound of the declared model, or a finite "
        "value outside its bound-free envelope); out_of_domain (inputs or exact results outside "
        "flashproof's valid domain, docs/spec.md); not_judged (some element has no finite bound, or a "
        "vacuous one: at least the size of its tensor, so 0 and twice the answer would pass); unsupported "
        "(the implementation does not run the case; reasons below); error (the call raised).",
        "",
    ]
    for suite, dtype, direction in [(a, b, c) for a in ("grid", "fuzz") for b in dtypes for c in directions]:
        sel = [r for r in rows if r["suite"] == suite and r["dtype"] == dtype and r["direction"] == direction]
        if not sel:
            continue
        tensors = ["O", "LSE"] if direction == "fwd" else ["dQ", "dK", "dV"]
        lines += [f"## {suite}: {dtype}, {'forward' if direction == 'fwd' else 'backward'}", "",
                  "| implementation | cases | pass | fail | of which script LSE only | out_of_domain | not_judged "
                  "| unsupported | error | rule 3 reported | max err/bound | p99 err/bound |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for name in impls:
            rs = [r for r in sel if r["impl"] == name]
            count = lambda pred: sum(1 for r in rs if pred(r))
            judged = [r for r in rs if r.get("verdict") in ("pass", "fail")]
            ratios = [max((r["tensors"][t]["err_over_bound"] for t in tensors if t in r["tensors"]
                           and not (t == "LSE" and r.get("lse_source") == "script")), default=None)
                      for r in judged]
            lines.append(
                f"| {name} | {len(rs)} | {count(lambda r: r.get('verdict') == 'pass')} | "
                f"{count(lambda r: r.get('verdict') == 'fail')} | "
                f"{count(lambda r: r.get('verdict') == 'fail' and script_lse_only(r))} | "
                f"{count(lambda r: r.get('verdict') == 'out_of_domain')} | "
                f"{count(lambda r: r.get('verdict') == 'not_judged')} | "
                f"{count(lambda r: r['status'] == 'unsupported')} | {count(lambda r: r['status'] == 'error')} | "
                f"{count(lambda r: r.get('regression'))} | {fmt(pct(np, ratios, 100))} | {fmt(pct(np, ratios, 99))} |")
        lines += ["", f"Errors per tensor ({' and '.join(tensors)}; over the pass and fail cases):", "",
                  "| implementation | tensor | cases | max err/bound | p99 err/bound | max ulps | p99 ulps "
                  "| max err/(u*mag) | p99 err/(u*mag) |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for name in impls:
            for t in tensors:
                rs = [r for r in sel if r["impl"] == name and r.get("verdict") in ("pass", "fail")
                      and t in r.get("tensors", {})]
                if not rs:
                    continue
                ratios = [r["tensors"][t]["err_over_bound"] for r in rs]
                ulps = [r["tensors"][t]["max_ulps"] for r in rs]
                units = [r["err_units"][t] for r in rs if t in r.get("err_units", {})]
                el_max = max((u["max"] for u in units), default=None)
                hist = footer.get("pooled_err_units_hist", {}).get(f"{suite}|{name}|{dtype}|{direction}|{t}")
                el_p99 = hist_percentile([hist], 99) if hist else None
                note = " (script's LSE)" if t == "LSE" and any(r.get("lse_source") == "script" for r in rs) else ""
                lines.append(
                    f"| {name} | {t}{note} | {len(rs)} | {fmt(pct(np, ratios, 100))} | {fmt(pct(np, ratios, 99))} | "
                    f"{fmt(pct(np, ulps, 100))} | {fmt(pct(np, ulps, 99))} | "
                    f"{fmt(el_max)} | {fmt(el_p99)} |")
        lines.append("")
    lines += ["## Metrics", "",
              "- err/bound: per case, the largest |actual - reference| / (rigorous bound of the declared model) "
              "over the tensor's elements (`rigorous_bound.max_error_over_bound`); max and 99th percentile over "
              "cases. Above 1 only in a failing case. In the verdict table: the largest over the direction's "
              "tensors, a script-supplied LSE left out.",
              "- ulps: per case the tensor's largest distance in ulps from the correctly rounded exact value "
              "(`errors.max_ulps`; elements near zero can have large ulp counts); max and p99 over cases.",
              "- err/(u*mag): per element |actual - reference| / (u * magnitude + tiny), u the output's unit "
              "roundoff (fp16 2^-11, bf16 2^-8, LSE fp32 2^-24), magnitude the size of the element's summands "
              "(`CertifiedTensor.magnitude`), tiny half the dtype's smallest subnormal (what underflow loses); "
              "max and p99 (the upper edge of its 4.7%-wide histogram bin) over all compared finite elements of "
              "the cases. About 0.5 is one correct rounding. The LSE's magnitude is |LSE| itself, so an LSE "
              "near 0 whose logit is a sum of large cancelling products (the extreme-logits cases), which any "
              "fp32 evaluation gets wrong by about 2^-24 of those products, gives very large values: the "
              "LSE's max is that, its p99 is typical. Only "
              "for the outside implementations, whose outputs this script holds.",
              ""]
    unsupported = {}
    for r in rows:
        if r["status"] in ("unsupported", "error"):
            unsupported.setdefault((r["impl"], r["status"], r["reason"][:300]), []).append(f"{r['suite']} {r['index']}")
    if unsupported:
        lines += ["## Unsupported and errors", ""]
        for (name, status, reason), idx in sorted(unsupported.items()):
            lines.append(f"- {name}, {status} ({len(idx)} cases, e.g. {idx[0]}): {reason}")
        lines.append("")
    mapped = [r for r in rows if r.get("lse_empty_rows_mapped")]
    if mapped:
        lines += [f"Rows that see no key: {len(mapped)} checked case runs had their LSE there mapped to +inf "
                  "(torch-flash-cpu returns 0, the scripts' LSEs -inf; flashproof's semantics: +inf).", ""]
    fails = [r for r in rows if r.get("verdict") == "fail"]
    classes = {}
    for r in fails:
        key = (r["impl"], r["dtype"], r["direction"],
               failure_class(r) if r["impl"] in OUTSIDE else "built-in: " + "/".join(r["failing_tensors"]))
        classes.setdefault(key, []).append(f"{r['suite']} {r['index']}")
    if classes:
        lines += ["## Failure classes", "",
                  "| implementation | dtype | direction | class | cases | which |",
                  "| --- | --- | --- | --- | ---: | --- |"]
        for (name, dtype, direction, cls), which in sorted(classes.items()):
            shown = ", ".join(which[:12]) + (", ..." if len(which) > 12 else "")
            lines.append(f"| {name} | {dtype} | {direction} | {cls} | {len(which)} | {shown} |")
        lines.append("")
    lines += ["## Failures", ""]
    if not fails:
        lines.append("None.")
    for r in fails:
        lines.append(f"- {r['impl']} {r['dtype']} {r['direction']} {r['suite']} {r['index']} ({r['kind']}, "
                     f"b={r['batch']} hq={r['heads_q']} hkv={r['heads_kv']} sq={r['seqlen_q']} sk={r['seqlen_k']} "
                     f"d={r['head_dim']} window={tuple(r['window'])} {r['distribution']}): case file "
                     f"`{r.get('case_file', '-')}`" + (" (only the script's LSE fails)" if script_lse_only(r) else ""))
        for tname, t in r["tensors"].items():
            if t["verdict"] == "fail":
                lines.append(f"  - {tname}: " + "; ".join(t["reasons"])[:600])
        for rp in r.get("repro", []):
            if "index" not in rp:
                lines.append(f"  - {rp['tensor']}: {rp['note']}")
            else:
                lines.append(f"  - mpmath (320 bits, from the inputs) at {rp['tensor']}{tuple(rp['index'])}: exact "
                             f"{fmt(rp['mpmath_320bit'], 8)}, "
                             f"flashproof reference {fmt(rp['flashproof_reference'], 8)}, "
                             f"returned {fmt(rp['actual'], 8)}")
    lines.append("")
    return "\n".join(lines)


def replay(args):
    """Re-check one case file with the named implementations; print the verdicts and, for a failing
    outside implementation, the mpmath reproduction of its worst elements."""
    import numpy as np
    import flashproof as fp
    case = fp.read_case(args.replay)
    scale = case.scale if case.scale is not None else float(np.float32(1.0 / math.sqrt(case.head_dim)))
    params = fp.Params(case.batch, case.heads_q, case.heads_kv, case.seqlen_q, case.seqlen_k, case.head_dim,
                       case.dtype, float(scale), tuple(case.window))
    print(case.describe())
    status = 0
    for name in [s for s in args.impls.split(",") if s]:
        if name in BUILTIN:
            rec, impl = fp.check(name, case, threads=args.threads), None
        else:
            impl, why = make_outside(name, np)
            if impl is None:
                print(f"{name}: {why}")
                continue
            if "torch" in sys.modules:
                sys.modules["torch"].set_num_threads(args.threads)
            why = impl.unsupported(case, empty_rows(np, params))
            if why:
                print(f"{name}: unsupported: {why}")
                continue
            rec = fp.check(impl.forward, case, impl.backward if case.backward else None, model=impl.model,
                           gqa=impl.gqa, tensors=impl.tensors, dtypes=["fp16", "bf16"], threads=args.threads,
                           name=name)
        print(f"{name}: {rec['verdict']}")
        for t in rec["tensors"]:
            print(f"  {t['name']}: {t['verdict']}, err/bound {t['rigorous_bound']['max_error_over_bound']:.3g}"
                  + (f"; {'; '.join(t['reasons'])}" if t["reasons"] else ""))
        if rec["verdict"] == "fail":
            status = 1
            if impl is not None:
                for rp in reproduce(np, case, params, impl, case.reference(threads=args.threads), rec):
                    print("  mpmath:", json.dumps({k: v for k, v in rp.items() if k != "reasons"}))
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=20261124)
    ap.add_argument("--cases", type=int, default=40, help="case indices 0..N-1 (each in every dtype and direction)")
    ap.add_argument("--minutes", type=float, default=0, help="stop starting new indices after this many minutes")
    ap.add_argument("--suites", default="grid,fuzz", help="grid (fixed plain cases, head dim 64) and/or fuzz")
    ap.add_argument("--dtypes", default="fp16,bf16")
    ap.add_argument("--directions", default="fwd,bwd")
    ap.add_argument("--impls", default=",".join(ALL_IMPLS))
    ap.add_argument("--max-seqlen", type=int, default=128)
    ap.add_argument("--max-work", type=int, default=2 ** 17)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-repro", action="store_true", help="skip the mpmath reproduction of failures")
    ap.add_argument("--out", default=None, help="output prefix (default results/third_party_<date>_<commit>)")
    ap.add_argument("--replay", metavar="CASE_FILE", help="re-check one case file with --impls and exit")
    ap.add_argument("--report-from", metavar="JSONL", help="rebuild the Markdown report of a run (next to it)")
    args = ap.parse_args()
    if args.replay:
        sys.exit(replay(args))
    if args.report_from:
        import numpy as np
        with open(args.report_from, encoding="utf-8") as f:
            records = [json.loads(line) for line in f]
        header = next(r for r in records if r["type"] == "header")
        footer = next(r for r in records if r["type"] == "footer")
        rows = [r for r in records if r["type"] == "case"]
        s = header["settings"]
        stem = args.report_from[:-len(".jsonl")] if args.report_from.endswith(".jsonl") else args.report_from
        md = stem + ".md"
        with open(md, "w", encoding="utf-8") as f:
            f.write(report(np, header, footer, rows, header["impls"], s["dtypes"], s["directions"], args.report_from))
        print(f"wrote {md}", file=sys.stderr)
        sys.exit(0)
    if args.out is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        short = git_commit(root)[:7]
        args.out = os.path.join(root, "results", f"third_party_{datetime.date.today().isoformat()}_{short}")
    sys.exit(run(args))


if __name__ == "__main__":
    main()
