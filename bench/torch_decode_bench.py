#!/usr/bin/env python3
"""Decode steps in PyTorch: the peer of bench_flash's decode rows (bench/flash_decode_rows.h).

The same grid: one query token, 32 query and 8 KV heads, head_dim 128, batches 1, 4, 16 and 64,
every sequence's cache full at 1k to 128k keys, fp16 and bf16 (--tiny: batches 1 and 2, caches 256
and 1024, 4 and 2 heads). Kernels, each where it runs:
- torch-sdpa: scaled_dot_product_attention(q, k, v, enable_gqa=True) on a contiguous cache
  [batch, 8, cache, 128] (SDPA has no block table; its choice of backend);
- fa2-kvcache: flash_attn.flash_attn_with_kvcache on a paged cache (pages of 256, a shuffled block
  table, cache_seqlens, num_splits 0: its heuristic), where the flash_attn package is installed;
  FlashAttention-2 takes pages that are multiples of 256 only, so pages of 16 are "unsupported".
Rows carry bench_flash's decode fields (kernel, dtype, batch, cache_seqlen, page_size, heads_q,
heads_kv, head_dim, status, reason, median_ms, min_ms, spread_pct, kv_bytes, gb_per_s, device) so
the two JSON files sit side by side. Warm-up calls, then timed calls each between two CUDA events.
torch is imported only when measuring: --help and --list-shapes work without it.
"""

import argparse
import json
import statistics
import sys

FULL = dict(batches=[1, 4, 16, 64], caches=[1024, 4096, 16384, 32768, 65536, 131072], pages=[16, 256], hq=32, hkv=8)
TINY = dict(batches=[1, 2], caches=[256, 1024], pages=[16], hq=4, hkv=2)
HEAD_DIM = 128


def shapes(tiny, batches=None, caches=None):
    g = TINY if tiny else FULL
    return [dict(batch=b, cache=c, page=p, hq=g["hq"], hkv=g["hkv"]) for p in g["pages"]
            for c in (caches or g["caches"]) for b in (batches or g["batches"])]


def int_list(text):
    try:
        items = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers, got '{text}'")
    if any(x < 1 for x in items):
        raise argparse.ArgumentTypeError(f"expected positive integers, got '{text}'")
    return items


def kv_bytes(s):
    return 2 * 2 * s["batch"] * s["cache"] * s["hkv"] * HEAD_DIM


def timed(torch, call, repeats, warmup):
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    q1, q3 = times[len(times) // 4], times[(3 * len(times)) // 4]
    median = statistics.median(times)
    return median, times[0], 100 * (q3 - q1) / median


def measure(torch, kernel, dtype, s, args):
    row = dict(tool="torch_decode_bench", kernel=kernel, direction="decode", dtype=dtype, head_dim=HEAD_DIM,
               batch=s["batch"], cache_seqlen=s["cache"], page_size=s["page"] if kernel == "fa2-kvcache" else 0,
               heads_q=s["hq"], heads_kv=s["hkv"], status="ok", reason=None, median_ms=None, min_ms=None,
               spread_pct=None, kv_bytes=kv_bytes(s), gb_per_s=None, device=torch.cuda.get_device_name())
    t = torch.float16 if dtype == "fp16" else torch.bfloat16
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    b, n, hq, hkv = s["batch"], s["cache"], s["hq"], s["hkv"]
    try:
        if kernel == "torch-sdpa":
            q = torch.randn(b, hq, 1, HEAD_DIM, device="cuda", dtype=t, generator=gen)
            k = torch.randn(b, hkv, n, HEAD_DIM, device="cuda", dtype=t, generator=gen)
            v = torch.randn(b, hkv, n, HEAD_DIM, device="cuda", dtype=t, generator=gen)
            f = torch.nn.functional.scaled_dot_product_attention
            call = lambda: f(q, k, v, enable_gqa=True)
        else:
            try:
                from flash_attn import flash_attn_with_kvcache
            except ImportError as e:
                row.update(status="unsupported", reason=f"flash_attn not installed ({e})")
                return row
            if s["page"] % 256:
                row.update(status="unsupported", reason="FlashAttention-2 takes pages of multiples of 256 only")
                return row
            pages = b * (n // s["page"])
            q = torch.randn(b, 1, hq, HEAD_DIM, device="cuda", dtype=t, generator=gen)
            k = torch.randn(pages, s["page"], hkv, HEAD_DIM, device="cuda", dtype=t, generator=gen)
            v = torch.randn(pages, s["page"], hkv, HEAD_DIM, device="cuda", dtype=t, generator=gen)
            table = torch.randperm(pages, device="cuda", generator=gen).to(torch.int32).reshape(b, n // s["page"])
            lengths = torch.full((b,), n, device="cuda", dtype=torch.int32)
            call = lambda: flash_attn_with_kvcache(q, k, v, cache_seqlens=lengths, block_table=table, num_splits=0)
        out = call()
        out = out[0] if isinstance(out, tuple) else out
        if not torch.isfinite(out).all():
            row.update(status="failed", reason="non-finite output")
            return row
        median, lo, spread = timed(torch, call, args.repeats, args.warmup)
        row.update(median_ms=median, min_ms=lo, spread_pct=spread, gb_per_s=row["kv_bytes"] / (median * 1e-3) / 1e9)
    except torch.cuda.OutOfMemoryError as e:
        row.update(status="failed", reason=f"out of memory: {str(e).splitlines()[0]}")
    except RuntimeError as e:
        row.update(status="unsupported", reason=str(e).splitlines()[0])
    finally:
        torch.cuda.empty_cache()
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtypes", default="fp16,bf16", help="fp16 and/or bf16")
    p.add_argument("--kernels", default="torch-sdpa,fa2-kvcache", help="torch-sdpa and/or fa2-kvcache")
    p.add_argument("--tiny", action="store_true", help="the small grid")
    p.add_argument("--batches", type=int_list, help="batches (default 1,4,16,64)")
    p.add_argument("--caches", type=int_list, help="cache lengths, multiples of 256 (default 1k to 128k)")
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=20250609)
    p.add_argument("--json", help="write the rows as a JSON array")
    p.add_argument("--list-shapes", action="store_true", help="print the grid and exit")
    args = p.parse_args()
    dtypes, kernels = args.dtypes.split(","), args.kernels.split(",")
    for d in dtypes:
        if d not in ("fp16", "bf16"):
            p.error(f"unknown dtype '{d}' (choose from fp16, bf16)")
    for k in kernels:
        if k not in ("torch-sdpa", "fa2-kvcache"):
            p.error(f"unknown kernel '{k}' (choose from torch-sdpa, fa2-kvcache)")
    if args.caches and any(c % 256 for c in args.caches):
        p.error("--caches must be multiples of 256")
    if args.repeats < 1 or args.warmup < 0:
        p.error("--repeats must be >= 1 and --warmup >= 0")
    if args.list_shapes:
        for s in shapes(args.tiny, args.batches, args.caches):
            print(json.dumps(s))
        return 0
    import torch
    if not torch.cuda.is_available():
        print("torch_decode_bench: no CUDA device", file=sys.stderr)
        return 1
    rows = []
    for dtype in dtypes:
        for s in shapes(args.tiny, args.batches, args.caches):
            for kernel in kernels:
                if kernel == "torch-sdpa" and s["page"] != shapes(args.tiny)[0]["page"]:
                    continue  # a contiguous cache: one row per batch and cache, not per page size
                row = measure(torch, kernel, dtype, s, args)
                rows.append(row)
                gbs = f"{row['gb_per_s']:.1f} GB/s" if row["gb_per_s"] else row["status"]
                print(f"{kernel} {dtype} b={s['batch']} cache={s['cache']} page={row['page_size']}: "
                      f"{row['median_ms'] or float('nan'):.4f} ms, {gbs}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            f.write("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")
    return 1 if any(r["status"] == "failed" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
