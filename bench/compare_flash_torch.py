#!/usr/bin/env python3
"""Side by side: bench_flash's JSON (our fa2, fa1) and torch_sdpa_bench.py's (PyTorch's SDPA
backends), as a Markdown table of TFLOP/s per shape, the ratios ours / theirs, and the kernels'
performance targets marked met or missed:

- FA2 forward >= 1.0x torch-flash at every shape with seqlen >= 1024;
- FA2 backward >= 0.9x torch-flash at every shape with seqlen >= 1024;
- FA1 forward >= 0.5x our FA2 forward at every shape.

A target with a side missing (not measured, unsupported, failed) is marked "no data". Ratios are
of TFLOP/s, that is of the inverse median times, since both tools count FLOPs the same way.
Standard library only.

    compare_flash_torch.py OURS.json TORCH.json [-o TABLE.md]
"""

import argparse
import json
import sys
from collections import namedtuple

Target = namedtuple("Target", "label direction ours theirs threshold min_seqlen")
TARGETS = [
    Target("FA2 fwd >= 1.0x torch-flash (seqlen >= 1024)", "fwd", "fa2", "torch-flash", 1.0, 1024),
    Target("FA2 bwd >= 0.9x torch-flash (seqlen >= 1024)", "bwd", "fa2", "torch-flash", 0.9, 1024),
    Target("FA1 fwd >= 0.5x our FA2", "fwd", "fa1", "fa2", 0.5, 0),
]
OUR_KERNELS = ["fa2", "fa1"]
TORCH_KERNELS = ["torch-flash", "torch-efficient", "torch-cudnn"]
SHAPE_FIELDS = ("direction", "dtype", "causal", "head_dim", "seqlen")


def load(path):
    with open(path) as f:
        records = json.load(f)
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a JSON array of measurements")
    return records


def index(records):
    """{(kernel, shape key): record}; a later record of the same measurement wins."""
    return {(r["kernel"], tuple(r[f] for f in SHAPE_FIELDS)): r for r in records}


def tflops(measurements, kernel, shape):
    r = measurements.get((kernel, shape))
    return r["tflops"] if r is not None and r.get("status") == "ok" and r.get("tflops") else None


def cell(measurements, kernel, shape):
    r = measurements.get((kernel, shape))
    if r is None:
        return "-"
    if r.get("status") != "ok":
        return r.get("status", "?")
    return f"{r['tflops']:.1f}" if r["tflops"] >= 1 else f"{r['tflops']:.3g}"  # tiny shapes: keep digits


def ratio_text(ratio):
    return "-" if ratio is None else f"{ratio:.2f}x"


def ratio(measurements, ours, theirs, shape):
    a, b = tflops(measurements, ours, shape), tflops(measurements, theirs, shape)
    return None if a is None or b is None else a / b


def verdict(measurements, target, shape):
    """'met', 'missed', 'no data', or None where the target does not apply to the shape."""
    direction, seqlen = shape[0], shape[4]
    if direction != target.direction or seqlen < target.min_seqlen:
        return None, None
    r = ratio(measurements, target.ours, target.theirs, shape)
    if r is None:
        return "no data", None
    return ("met" if r >= target.threshold else "missed"), r


def describe(records, name):
    if not records:
        return f"- {name}: no measurements"
    r = records[0]
    extra = f", torch {r['torch_version']}" if "torch_version" in r else ""
    return (f"- {name}: {r.get('tool', '?')} on {r.get('device', '?')} (driver {r.get('driver_version', '?')}, "
            f"runtime {r.get('runtime_version', '?')}{extra}), commit {r.get('commit', '?')}, "
            f"{r.get('warmup', '?')} warm-up + {r.get('repeats', '?')} timed calls, median")


def sorted_shapes(measurements):
    shapes = {shape for (_, shape) in measurements}
    order = {"fwd": 0, "bwd": 1}
    return sorted(shapes, key=lambda s: (order.get(s[0], 2), s[1], s[2], s[3], s[4]))


def summary_lines(measurements, shapes):
    lines = ["## Targets", "", "| target | met | missed | no data |", "|---|---|---|---|"]
    misses = []
    for target in TARGETS:
        counts = {"met": 0, "missed": 0, "no data": 0}
        for shape in shapes:
            mark, r = verdict(measurements, target, shape)
            if mark is not None:
                counts[mark] += 1
            if mark == "missed":
                misses.append(f"- {target.label}: {shape_label(shape)}: {ratio_text(r)}")
        lines.append(f"| {target.label} | {counts['met']} | {counts['missed']} | {counts['no data']} |")
    if misses:
        lines += ["", "Missed:", ""] + misses
    return lines


def shape_label(shape):
    direction, dtype, causal, head_dim, seqlen = shape
    return f"{direction} {dtype} {'causal' if causal else 'non-causal'} d={head_dim} seqlen={seqlen}"


def table_lines(measurements, shapes, direction, dtype):
    ours = [k for k in OUR_KERNELS if any(key[0] == k for key in measurements)]
    theirs = [k for k in TORCH_KERNELS if any(key[0] == k for key in measurements)]
    pairs = [(a, b) for a in ours for b in theirs] + ([("fa1", "fa2")] if "fa1" in ours and "fa2" in ours else [])
    header = (["causal", "head_dim", "seqlen"] + [f"{k} TFLOP/s" for k in ours + theirs]
              + [f"{a}/{b.replace('torch-', '')}" for a, b in pairs] + ["targets"])
    lines = [f"## {'Forward' if direction == 'fwd' else 'Backward'}, {dtype}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for shape in shapes:
        if shape[0] != direction or shape[1] != dtype:
            continue
        marks = []
        for target in TARGETS:
            mark, r = verdict(measurements, target, shape)
            if mark is not None:
                marks.append(f"{target.ours} vs {target.theirs}: {mark}" + (f" ({ratio_text(r)})" if r is not None else ""))
        row = (["yes" if shape[2] else "no", str(shape[3]), str(shape[4])]
               + [cell(measurements, k, shape) for k in ours + theirs]
               + [ratio_text(ratio(measurements, a, b, shape)) for a, b in pairs]
               + ["; ".join(marks) or "-"])
        lines.append("| " + " | ".join(row) + " |")
    return lines + [""]


def unsupported_lines(records):
    notes = sorted({(r["kernel"], r.get("status"), r.get("reason") or "") for r in records if r.get("status") != "ok"})
    if not notes:
        return []
    return ["## Not measured", ""] + [f"- {k} ({status}): {reason}" for k, status, reason in notes] + [""]


def comparison(ours_records, torch_records):
    measurements = index(ours_records + torch_records)
    shapes = sorted_shapes(measurements)
    lines = ["# FlashAttention kernels against PyTorch SDPA", "",
             describe(ours_records, "ours"), describe(torch_records, "torch")]
    devices = {r.get("device") for r in ours_records + torch_records}
    if len(devices) > 1:
        lines.append(f"- WARNING: measured on different devices ({', '.join(sorted(map(str, devices)))}); "
                     "the ratios mean nothing")
    lines += ["", "TFLOP/s = FLOPs / median time; forward FLOPs 4 * batch * heads * seqlen^2 * head_dim, "
              "halved when causal; backward 2.5x. Ratios: ours / theirs.", ""]
    lines += summary_lines(measurements, shapes) + [""]
    for direction in ("fwd", "bwd"):
        for dtype in sorted({s[1] for s in shapes if s[0] == direction}):
            lines += table_lines(measurements, shapes, direction, dtype)
    return "\n".join(lines + unsupported_lines(ours_records + torch_records))


def main(argv=None):
    p = argparse.ArgumentParser(description="Markdown comparison of bench_flash and torch_sdpa_bench.py results")
    p.add_argument("ours", help="bench_flash --json output")
    p.add_argument("torch", help="torch_sdpa_bench.py --json output")
    p.add_argument("-o", "--output", help="write the Markdown here (default: standard output)")
    args = p.parse_args(argv)
    try:
        text = comparison(load(args.ours), load(args.torch))
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"compare_flash_torch: {error}")
    if args.output:
        with open(args.output, "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
