#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention backends at FlashAttention's benchmark shapes.

The peer of bench_flash (flash_bench.cpp): the same shape grid, FLOP counts, timing rules and JSON
fields, so that compare_flash_torch.py can put the two side by side.

- Shapes: hidden size 2048 (heads = 2048 / head_dim), batch = 16384 / seqlen; layout
  [batch, heads, seqlen, head_dim] as SDPA wants; random normal inputs.
- FLOPs: forward 4 * batch * heads * seqlen^2 * head_dim, halved when causal; backward 2.5x.
- Each backend alone, under torch.nn.attention.sdpa_kernel. The forward runs with
  requires_grad inputs (so it saves the log-sum-exp, as our kernels always write it); the backward
  is timed alone: torch.autograd.grad of one retained forward graph.
- Warm-up calls, then timed calls each between two CUDA events; median, min, spread.
- A backend that refuses a shape is recorded as "unsupported" with the reason torch gives.

torch is imported only when measuring, so --help and --list-shapes work without it.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HIDDEN = 2048
TOKENS = 16384
BACKENDS = {  # our name -> torch.nn.attention.SDPBackend member
    "flash": "FLASH_ATTENTION",
    "efficient": "EFFICIENT_ATTENTION",
    "cudnn": "CUDNN_ATTENTION",
}
DEFAULT_SEQLENS = [512, 1024, 2048, 4096, 8192, 16384]
TINY_SEQLENS = [64, 128]


def name_list(allowed):
    def parse(text):
        items = text.split(",")
        for item in items:
            if item not in allowed:
                raise argparse.ArgumentTypeError(f"unknown '{item}' (choose from {', '.join(allowed)})")
        return list(dict.fromkeys(items))
    return parse


def int_list(lo, hi, multiple_of=1):
    def parse(text):
        try:
            numbers = [int(item) for item in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected integers, got '{text}'")
        for n in numbers:
            if not lo <= n <= hi or n % multiple_of:
                raise argparse.ArgumentTypeError(
                    f"{n} is not in [{lo}, {hi}]" + (f" or not a multiple of {multiple_of}" if multiple_of > 1 else ""))
        return list(dict.fromkeys(numbers))
    return parse


def positive_int(lo):
    def parse(text):
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got '{text}'")
        if n < lo:
            raise argparse.ArgumentTypeError(f"expected at least {lo}, got {n}")
        return n
    return parse


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Time torch.nn.functional.scaled_dot_product_attention backends at FlashAttention's "
                    "benchmark shapes (heads = 2048 / head_dim, batch = 16384 / seqlen).")
    p.add_argument("--backends", type=name_list(list(BACKENDS)), default=list(BACKENDS),
                   help="SDPA backends to time (default flash,efficient,cudnn; missing ones are reported)")
    p.add_argument("--directions", type=name_list(["fwd", "bwd"]), default=["fwd", "bwd"])
    p.add_argument("--dtypes", type=name_list(["fp16", "bf16"]), default=["fp16", "bf16"])
    p.add_argument("--head-dims", type=int_list(8, 256, 8), default=[64, 128, 256])
    p.add_argument("--seqlens", type=int_list(1, 1 << 20), default=None,
                   help="default 512,1024,2048,4096,8192,16384 (tiny: 64,128)")
    p.add_argument("--causal", choices=["yes", "no", "both"], default="both")
    p.add_argument("--repeats", type=positive_int(1), default=30, help="timed calls per measurement (default 30)")
    p.add_argument("--warmup", type=positive_int(0), default=5, help="untimed calls first (default 5)")
    p.add_argument("--tiny", action="store_true", help="batch 1, 2 heads, seqlens 64,128 unless --seqlens is given")
    p.add_argument("--seed", type=positive_int(0), default=20250609)
    p.add_argument("--json", metavar="FILE", help="write every measurement as a JSON array of objects")
    p.add_argument("--list-shapes", action="store_true",
                   help="print the planned shapes and FLOPs as JSON and exit (needs no torch)")
    args = p.parse_args(argv)
    if args.seqlens is None:
        args.seqlens = TINY_SEQLENS if args.tiny else DEFAULT_SEQLENS
    if not args.tiny and max(args.seqlens) > TOKENS:
        p.error(f"--seqlens: {max(args.seqlens)} exceeds {TOKENS} tokens (batch would be 0); use --tiny")
    return args


def bench_shape(seqlen, head_dim, tiny):
    if tiny:
        return {"batch": 1, "heads": 2, "seqlen": seqlen, "head_dim": head_dim}
    return {"batch": TOKENS // seqlen, "heads": HIDDEN // head_dim, "seqlen": seqlen, "head_dim": head_dim}


def bench_flops(direction, shape, causal):
    forward = 4 * shape["batch"] * shape["heads"] * shape["seqlen"] ** 2 * shape["head_dim"]
    if causal:
        forward /= 2
    return 2.5 * forward if direction == "bwd" else float(forward)


def planned_cases(args):
    """One dict per (dtype, shape, causal, direction), in bench_flash's order."""
    causal_values = {"yes": [True], "no": [False], "both": [False, True]}[args.causal]
    cases = []
    for dtype in args.dtypes:
        for head_dim in args.head_dims:
            for seqlen in args.seqlens:
                for causal in causal_values:
                    for direction in args.directions:
                        shape = bench_shape(seqlen, head_dim, args.tiny)
                        cases.append(dict(direction=direction, dtype=dtype, causal=causal, **shape,
                                          flops=bench_flops(direction, shape, causal)))
    return cases


# ---- what was run where ----

def source_commit():
    if os.environ.get("FLASHPROOF_COMMIT"):
        return os.environ["FLASHPROOF_COMMIT"]
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def driver_version():
    """The CUDA version the driver supports, as bench_flash reports it (cudaDriverGetVersion)."""
    import ctypes
    try:
        version = ctypes.c_int()
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0:
            return f"{version.value // 1000}.{version.value % 1000 // 10}"
    except OSError:
        pass
    return "unknown"


def run_info(torch):
    return {"tool": "torch_sdpa_bench", "target": "gpu", "device": torch.cuda.get_device_name(0),
            "driver_version": driver_version(), "runtime_version": torch.version.cuda or "unknown",
            "torch_version": torch.__version__, "commit": source_commit()}


# ---- measuring ----

def summarize(times_ms):
    ordered = sorted(times_ms)

    def quantile(q):  # nearest rank, as bench_flash
        rank = min(max(math.ceil(q * len(ordered)), 1), len(ordered))
        return ordered[rank - 1]

    median = statistics.median(ordered)
    return {"median_ms": median, "min_ms": ordered[0], "max_ms": ordered[-1],
            "spread_pct": 100 * (quantile(0.75) - quantile(0.25)) / median}


def timed_runs(torch, call, warmup, repeats):
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return times


def one_line(text):
    return " ".join(str(text).split())


class Refused(Exception):
    """The backend does not run this shape; the message says why."""


def first_call(torch, sdpa, q, k, v, causal):
    """The first forward of a measurement: the reasons torch warns about when it refuses become Refused."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return sdpa(q, k, v, is_causal=causal)
        except torch.cuda.OutOfMemoryError:
            raise
        except RuntimeError as error:
            reasons = [one_line(w.message) for w in caught] + [one_line(error)]
            raise Refused("; ".join(reasons)) from None


def time_forward(torch, sdpa, q, k, v, causal, args):
    last = []

    def forward():
        last[:] = [sdpa(q, k, v, is_causal=causal)]
    return timed_runs(torch, forward, args.warmup, args.repeats), last


def time_backward(torch, out, q, k, v, grad, args):
    def backward():
        return torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
    try:
        backward()
    except torch.cuda.OutOfMemoryError:
        raise
    except RuntimeError as error:
        raise Refused("backward: " + one_line(error)) from None
    return timed_runs(torch, backward, args.warmup, args.repeats), list(backward())


def measure(torch, backend, case, inputs, args):
    """Times one case with only `backend` allowed (the context is entered once, outside the timed calls)."""
    from torch.nn.attention import sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa
    q, k, v, grad = inputs
    with sdpa_kernel([backend]):
        out = first_call(torch, sdpa, q, k, v, case["causal"])
        if case["direction"] == "fwd":
            times, results = time_forward(torch, sdpa, q, k, v, case["causal"], args)
        else:
            times, results = time_backward(torch, out, q, k, v, grad, args)
    for tensor in results:
        if not bool(torch.isfinite(tensor).all()):
            raise RuntimeError("output not finite after the runs")
    return summarize(times)


def make_inputs(torch, case):
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[case["dtype"]]
    size = (case["batch"], case["heads"], case["seqlen"], case["head_dim"])
    q, k, v = (torch.randn(size, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
    return q, k, v, torch.randn(size, device="cuda", dtype=dtype)


def measurement_record(torch, name, backend, case, args, info):
    record = dict(info, kernel="torch-" + name, status="ok", reason=None, median_ms=None, min_ms=None, max_ms=None,
                  spread_pct=None, tflops=None, repeats=args.repeats, warmup=args.warmup, **case)
    if backend is None:
        record.update(status="unsupported", reason=f"torch {torch.__version__} has no SDPBackend.{BACKENDS[name]}")
        return record
    try:
        stats = measure(torch, backend, case, make_inputs(torch, case), args)
        record.update(stats, tflops=case["flops"] / (stats["median_ms"] * 1e-3) / 1e12)
    except Refused as why:
        record.update(status="unsupported", reason=str(why))
    except RuntimeError as error:  # out of memory, a kernel fault, a non-finite output
        record.update(status="failed", reason=one_line(error))
    torch.cuda.empty_cache()
    return record


def progress_line(r):
    text = (f"{r['kernel']} {r['direction']} {r['dtype']} d={r['head_dim']} seqlen={r['seqlen']}"
            f"{' causal' if r['causal'] else ''}: ")
    if r["status"] != "ok":
        return text + f"{r['status']} ({r['reason']})"
    return text + f"{r['median_ms']:.4f} ms, {r['tflops']:.2f} TFLOP/s"


def print_table(records):
    print(f"\n{'kernel':<16} {'dir':<4} {'dtype':<5} {'causal':<6} {'hdim':>5} {'seqlen':>7} {'batch':>6} "
          f"{'heads':>6} {'median_ms':>11} {'min_ms':>11} {'spread':>7} {'TFLOP/s':>9}")
    for r in records:
        row = (f"{r['kernel']:<16} {r['direction']:<4} {r['dtype']:<5} {'yes' if r['causal'] else 'no':<6} "
               f"{r['head_dim']:>5} {r['seqlen']:>7} {r['batch']:>6} {r['heads']:>6} ")
        if r["status"] == "ok":
            row += f"{r['median_ms']:>11.4f} {r['min_ms']:>11.4f} {r['spread_pct']:>6.1f}% {r['tflops']:>9.2f}"
        else:
            row += r["status"]
        print(row)


def run(args):
    try:
        import torch
        from torch.nn.attention import SDPBackend
    except ImportError as error:
        sys.exit(f"torch_sdpa_bench: needs PyTorch >= 2.3 with torch.nn.attention ({error})")
    if not torch.cuda.is_available():
        sys.exit("torch_sdpa_bench: torch sees no CUDA device")
    torch.manual_seed(args.seed)
    info = run_info(torch)
    print(f"torch_sdpa_bench: {info['device']}, torch {info['torch_version']}, CUDA runtime "
          f"{info['runtime_version']}, driver {info['driver_version']}, commit {info['commit']}")
    print(f"timing: {args.warmup} warm-up + {args.repeats} timed calls per row, CUDA events; median, min, "
          "spread = IQR / median", flush=True)
    records = []
    for case in planned_cases(args):
        for name in args.backends:
            backend = getattr(SDPBackend, BACKENDS[name], None)
            records.append(measurement_record(torch, name, backend, case, args, info))
            print(f"[{len(records)}] {progress_line(records[-1])}", file=sys.stderr, flush=True)
    if args.json:
        with open(args.json, "w") as out:
            out.write("[\n" + ",\n".join("  " + json.dumps(r) for r in records) + "\n]\n")
    print_table(records)
    return 1 if any(r["status"] == "failed" for r in records) else 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.list_shapes:
        print(json.dumps(planned_cases(args), indent=1))
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
