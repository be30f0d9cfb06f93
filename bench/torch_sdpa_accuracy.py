#!/usr/bin/env python3
"""Run PyTorch's scaled_dot_product_attention backends on the cases of a `flashproof export`
directory and write their outputs in the exchange format (docs/exchange.md), so that
`FLASHPROOF_IMPORT=ROOT flashproof ...` judges them as imported:torch-flash, imported:torch-efficient
and imported:torch-cudnn exactly like flashproof's own kernels.

For every case directory under ROOT (one holding meta.json) and every backend:
  inputs   q.bin k.bin v.bin dout.bin: raw little-endian bits of the case's dtype in flashproof's
           layouts (Q/dO [b, sq, hq, d], K/V [b, sk, hkv, d]), viewed as torch.float16/bfloat16;
           SDPA gets [b, h, s, d] views (transposes, no copies)
  run      forward (and, for backward cases, backward with dO) under
           torch.nn.attention.sdpa_kernel(<that backend only>), in the case's dtype, with
           scale = meta.json's exact fp32 softmax_scale and is_causal = meta.json's sdpa_is_causal
  LSE      from the backend's own aten op (_scaled_dot_product_flash_attention /
           _scaled_dot_product_efficient_attention(compute_log_sumexp=True) /
           _scaled_dot_product_cudnn_attention): fp32, natural log; the efficient kernel pads the
           query dimension to a multiple of 32 (cut off here); units are checked against a float64
           logsumexp and log2 units would be converted (noted in info.json)
  outputs  ROOT/<case>/<backend>/o.bin lse.bin [dq.bin dk.bin dv.bin] and info.json, or
           ROOT/<case>/<backend>/refused.txt (one line: why) and no o.bin when the backend refuses

GQA: enable_gqa=True where the torch version and backend accept it; otherwise K/V heads are
repeated for the backend and dK, dV summed over each group in fp32 and rounded once (one rounding
more than a native GQA kernel; info.json says which was used). Masks: SDPA's is_causal is top-left
aligned, flashproof's causal bottom-right; they agree only when seqlen_q == seqlen_k, so other masked
cases (meta.json "sdpa_is_causal": null) are refused; export with --masks causal-square or none.

Needs torch with CUDA and numpy; --help works without them.
"""
import argparse
import json
import math
import os
import sys
import time
import traceback
import warnings

from exchange_index import checked_entries

BACKENDS = {"torch-flash": "FLASH_ATTENTION", "torch-efficient": "EFFICIENT_ATTENTION",
            "torch-cudnn": "CUDNN_ATTENTION"}


class Refused(Exception):
    """The backend does not run this case; the message goes to refused.txt."""


def case_dirs(root):
    index = os.path.join(root, "index.json")
    if os.path.exists(index):
        with open(index, encoding="utf-8") as f:
            names = [c["directory"] for c in checked_entries(json.load(f))]
        return [os.path.join(root, n) for n in dict.fromkeys(names)]
    return sorted(os.path.join(root, n) for n in os.listdir(root)
                  if os.path.exists(os.path.join(root, n, "meta.json")))


class Io:
    """Raw little-endian element bits <-> torch tensors (numpy has no bfloat16: go through ints)."""

    def __init__(self, torch, np):
        self.torch, self.np = torch, np
        self.dtypes = {"fp16": (torch.float16, np.int16, torch.int16, "<i2"),
                       "bf16": (torch.bfloat16, np.int16, torch.int16, "<i2"),
                       "fp32": (torch.float32, np.int32, torch.int32, "<i4")}

    def load(self, path, shape, dtype):
        tdtype, native, _, little = self.dtypes[dtype]
        bits = self.np.fromfile(path, dtype=little)
        if bits.size != math.prod(shape):
            raise ValueError(f"{path}: {bits.size} elements, expected {math.prod(shape)} for {shape}")
        return self.torch.from_numpy(bits.astype(native)).view(tdtype).reshape(shape)

    def save(self, path, tensor, dtype):
        tdtype, _, tint, little = self.dtypes[dtype]
        t = tensor.detach().to(tdtype).contiguous().cpu().view(tint)
        t.numpy().astype(little).tofile(path)


def load_case(io, case_dir, meta, device):
    def tensor(name, shape):
        return io.load(os.path.join(case_dir, name), shape, meta["dtype"]).to(device)
    return (tensor("q.bin", meta["q_shape"]), tensor("k.bin", meta["kv_shape"]),
            tensor("v.bin", meta["kv_shape"]), tensor("dout.bin", meta["q_shape"]))


def reference_lse(torch, q, k, meta):
    """float64 logsumexp of the scaled logits, [b, hq, sq]: only to recognise the LSE's units."""
    group = meta["heads_q"] // meta["heads_kv"]
    qd = q.double().transpose(1, 2)
    kd = k.double().transpose(1, 2).repeat_interleave(group, dim=1)
    logits = meta["softmax_scale"] * (qd @ kd.transpose(-1, -2))
    if meta["sdpa_is_causal"]:
        sq, sk = meta["seqlen_q"], meta["seqlen_k"]
        visible = torch.ones(sq, sk, dtype=torch.bool, device=q.device).tril()
        logits = logits.masked_fill(~visible, float("-inf"))
    return torch.logsumexp(logits, dim=-1)


class Backend:
    def __init__(self, torch, name):
        self.torch, self.name = torch, name
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError as e:
            raise Refused(f"this torch ({torch.__version__}) has no torch.nn.attention.sdpa_kernel") from e
        if not hasattr(SDPBackend, BACKENDS[name]):
            raise Refused(f"this torch ({torch.__version__}) has no SDPBackend.{BACKENDS[name]}")
        self.backend, self.sdpa_kernel = getattr(SDPBackend, BACKENDS[name]), sdpa_kernel

    def sdpa(self, q, k, v, is_causal, scale, gqa):
        """SDPA on [b, h, s, d] tensors; gqa: pass enable_gqa=True."""
        F = self.torch.nn.functional
        extra = {"enable_gqa": True} if gqa else {}
        with self.sdpa_kernel(self.backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=scale, **extra)

    def lse(self, q, k, v, is_causal, scale):
        """The aten op's (O, LSE) on [b, h, s, d] tensors with equal head counts."""
        ops = self.torch.ops.aten
        if self.name == "torch-flash":
            r = ops._scaled_dot_product_flash_attention(q, k, v, 0.0, is_causal, False, scale=scale)
        elif self.name == "torch-efficient":
            r = ops._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, is_causal, scale=scale)
        else:
            try:  # torch >= 2.5: (q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, ...)
                r = ops._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, is_causal, False,
                                                            scale=scale)
            except (RuntimeError, TypeError):  # torch 2.3-2.4: (q, k, v, dropout_p, is_causal, ...)
                r = ops._scaled_dot_product_cudnn_attention(q, k, v, 0.0, is_causal, False, scale=scale)
        b, h, sq = q.shape[0], q.shape[1], q.shape[2]
        return r[0], r[1].reshape(b, h, -1)[:, :, :sq].float()


def run_case(torch, be, q, k, v, dout, meta):
    """The backend's outputs in flashproof's layouts, and notes for info.json."""
    is_causal = meta["sdpa_is_causal"]
    if is_causal is None:
        raise Refused("mask not expressible with SDPA's is_causal (top-left aligned): window "
                      f"({meta['window_left']},{meta['window_right']}) with seqlen_q {meta['seqlen_q']}, "
                      f"seqlen_k {meta['seqlen_k']}")
    scale, group, backward = float(meta["softmax_scale"]), meta["heads_q"] // meta["heads_kv"], meta["backward"]
    notes = {"gqa": "none" if group == 1 else "enable_gqa"}
    if group > 1:
        # Both paths below round each query head's dK, dV to the dtype before the group is summed
        # (repeat_interleave's gradient; FlashAttention's expanded dK, dV): flashproof's bound must
        # allow one rounding per head (docs/exchange.md, gqa_gradients).
        notes["gqa_gradients"] = "per-head-rounded"
    q_leaf = q.clone().requires_grad_(backward)
    k_leaf = k.clone().requires_grad_(backward)
    v_leaf = v.clone().requires_grad_(backward)
    qt, kt, vt = (x.transpose(1, 2) for x in (q_leaf, k_leaf, v_leaf))
    o = None
    with warnings.catch_warnings(record=True) as caught, torch.set_grad_enabled(backward):
        warnings.simplefilter("always")
        try:
            o = be.sdpa(qt, kt, vt, is_causal, scale, gqa=group > 1)
        except (RuntimeError, TypeError) as e:
            if group == 1:
                raise Refused(refusal(e, caught)) from e
        if o is None:  # no native GQA here: repeat K/V heads, sum their gradients in fp32
            notes["gqa"] = "repeated K/V heads; dK, dV summed over each group in fp32, rounded once"
            k_rep = kt.detach().repeat_interleave(group, dim=1).requires_grad_(backward)
            v_rep = vt.detach().repeat_interleave(group, dim=1).requires_grad_(backward)
            try:
                o = be.sdpa(qt, k_rep, v_rep, is_causal, scale, gqa=False)
            except RuntimeError as e:
                raise Refused(refusal(e, caught)) from e
    with torch.no_grad():
        kr, vr = (kt, vt) if group == 1 else (kt.repeat_interleave(group, dim=1), vt.repeat_interleave(group, dim=1))
        try:
            o_aten, lse = be.lse(qt.detach(), kr.detach(), vr.detach(), is_causal, scale)
        except RuntimeError as e:
            raise Refused("the LSE's aten op refused: " + str(e).splitlines()[0]) from e
        notes["aten_o_matches_sdpa"] = same_bits(torch, o_aten, o.detach())
        notes["lse_units"], lse = lse_in_natural_log(torch, lse, reference_lse(torch, q, k, meta))
    out = {"o": o.detach().transpose(1, 2), "lse": lse}
    if backward:
        o.backward(dout.transpose(1, 2))
        out["dq"] = q_leaf.grad
        if notes["gqa"].startswith("repeated"):
            b, hkv, sk, d = kt.shape
            out["dk"] = k_rep.grad.float().reshape(b, hkv, group, sk, d).sum(2).to(q.dtype).transpose(1, 2)
            out["dv"] = v_rep.grad.float().reshape(b, hkv, group, sk, d).sum(2).to(q.dtype).transpose(1, 2)
        else:
            out["dk"], out["dv"] = k_leaf.grad, v_leaf.grad
    return out, notes


def same_bits(torch, a, b):
    """Bitwise equality (NaN patterns included), for the aten op's O against SDPA's."""
    as_int = torch.int16 if a.element_size() == 2 else torch.int32
    return a.shape == b.shape and bool(torch.equal(a.view(as_int), b.view(as_int)))


def refusal(error, caught):
    reasons = [str(w.message).splitlines()[0] for w in caught]
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    return "; ".join([first] + reasons)[:2000]


def lse_in_natural_log(torch, lse, ref):
    """('natural' | 'log2', LSE in natural log): the units that match the float64 logsumexp."""
    finite = torch.isfinite(ref)
    if not bool(finite.any()):
        return "natural (no finite row to check)", lse
    scale = ref[finite].abs().clamp(min=1.0)
    natural = ((lse.double()[finite] - ref[finite]).abs() / scale).max().item()
    log2 = ((lse.double()[finite] * math.log(2) - ref[finite]).abs() / scale).max().item()
    if natural <= min(log2, 1e-2):
        return "natural", lse
    if log2 <= 1e-2:
        return "log2, converted (x ln 2 in float64, rounded to fp32)", (lse.double() * math.log(2)).float()
    raise Refused(f"LSE units not recognised (relative error {natural:.3g} as natural log, {log2:.3g} as log2)")


def environment(torch):
    return {"torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
            "device": torch.cuda.get_device_name(0)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="details: docs/exchange.md",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", help="a directory written by `flashproof export`")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="comma-separated subset of " + ", ".join(BACKENDS) + " (default: all)")
    parser.add_argument("--force", action="store_true", help="run cases that already have outputs again")
    args = parser.parse_args()
    names = [n for n in args.backends.split(",") if n]
    for n in names:
        if n not in BACKENDS:
            parser.error(f"unknown backend {n!r} ({', '.join(BACKENDS)})")
    if not os.path.isdir(args.root):
        parser.error(f"{args.root} is not a directory")
    try:
        dirs = case_dirs(args.root)
    except ValueError as e:
        print(f"torch_sdpa_accuracy: {args.root}/{e}", file=sys.stderr)
        return 2

    import numpy as np  # lazily: --help works without them
    import torch
    if not torch.cuda.is_available():
        print("torch_sdpa_accuracy: no CUDA device", file=sys.stderr)
        return 2
    io, env = Io(torch, np), environment(torch)
    counts = {n: {"written": 0, "refused": 0, "kept": 0} for n in names}
    for case_dir in dirs:
        with open(os.path.join(case_dir, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        q, k, v, dout = load_case(io, case_dir, meta, "cuda")
        for name in names:
            out_dir = os.path.join(case_dir, name)
            done = any(os.path.exists(os.path.join(out_dir, f)) for f in ("o.bin", "refused.txt"))
            if done and not args.force:
                counts[name]["kept"] += 1
                continue
            os.makedirs(out_dir, exist_ok=True)
            for f in ("o.bin", "lse.bin", "dq.bin", "dk.bin", "dv.bin", "refused.txt", "info.json"):
                if os.path.exists(os.path.join(out_dir, f)):
                    os.remove(os.path.join(out_dir, f))
            start = time.monotonic()
            try:
                outputs, notes = run_case(torch, Backend(torch, name), q, k, v, dout, meta)
                torch.cuda.synchronize()
            except Refused as r:
                with open(os.path.join(out_dir, "refused.txt"), "w", encoding="utf-8") as f:
                    f.write(str(r).replace("\n", " ") + "\n")
                counts[name]["refused"] += 1
                continue
            except Exception as e:  # a crash of the backend: kept as a refusal with its type
                with open(os.path.join(out_dir, "refused.txt"), "w", encoding="utf-8") as f:
                    f.write(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n")
                traceback.print_exc()
                counts[name]["refused"] += 1
                continue
            # o.bin last: its presence means the backend's outputs are complete.
            for key in ("lse", "dq", "dk", "dv", "o"):
                if key in outputs:
                    io.save(os.path.join(out_dir, key + ".bin"), outputs[key],
                            "fp32" if key == "lse" else meta["dtype"])
            with open(os.path.join(out_dir, "info.json"), "w", encoding="utf-8") as f:
                json.dump(dict(env, backend=name, seconds=time.monotonic() - start, **notes), f, indent=2)
                f.write("\n")
            counts[name]["written"] += 1
    for name, c in counts.items():
        print(f"{name}: {c['written']} written, {c['refused']} refused, {c['kept']} kept from an earlier run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
