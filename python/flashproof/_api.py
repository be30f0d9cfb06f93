"""check, replay and fuzz over Python callables, through the C++ harness (run_check, the fuzz
campaign, the property suite) with the same reference, bounds and verdict rules as the CLI."""
import json
import os

from . import _arrays, _core
from ._case import Case, _integer, read_case
from ._params import Params
from ._support import Unsupported, _support_json

_TENSORS = ("numpy", "torch")


class CallableError(ValueError):
    """The user's forward or backward raised; the original exception is its __cause__."""


def _one_line(text):
    return " ".join(str(text).split())


def _make_runner(forward, backward, tensors, device, label):
    """The function the C++ implementation calls: bytes in, the callable in between, bytes out."""

    def run(direction, params_dict, inputs):
        params = Params._from_dict(params_dict)
        dtype = params.dtype
        appended = {}
        if direction == "forward":
            specs = [("q", dtype, params.q_shape), ("k", dtype, params.kv_shape), ("v", dtype, params.kv_shape)]
            outputs = [("o", dtype, params.q_shape), ("lse", "fp32", params.lse_shape)]
            function = forward
            if params.seqlen_new > 0:  # appended keys: passed by keyword, the cache read back after
                appended = {name: _arrays.to_user(_arrays.bits_array(data, dtype, params.new_kv_shape), dtype, tensors,
                                                  device)
                            for name, data in zip(("k_new", "v_new"), inputs[3:5])}
        else:
            specs = [("q", dtype, params.q_shape), ("k", dtype, params.kv_shape), ("v", dtype, params.kv_shape),
                     ("o", dtype, params.q_shape), ("lse", "fp32", params.lse_shape), ("dout", dtype, params.q_shape)]
            outputs = [("dq", dtype, params.q_shape), ("dk", dtype, params.kv_shape), ("dv", dtype, params.kv_shape)]
            function = backward
        arrays = [_arrays.to_user(_arrays.bits_array(data, t, shape), t, tensors, device)
                  for data, (_, t, shape) in zip(inputs, specs)]
        try:
            result = function(*arrays, params, **appended)
        except Unsupported:  # a refusal, not an error of the callable: unsupported, never a crash
            raise
        except Exception as e:
            raise CallableError(f"{label} {direction} raised {type(e).__name__}: {_one_line(e)}") from e
        names = ", ".join(name for name, _, _ in outputs)
        if not isinstance(result, (tuple, list)) or len(result) != len(outputs):
            raise TypeError(f"{label} {direction} returned {type(result).__name__}"
                            f"{' of length ' + str(len(result)) if isinstance(result, (tuple, list)) else ''}, "
                            f"expected a tuple ({names})")
        returned = tuple(_arrays.output_bytes(value, t, shape, f"{label} {direction}'s {name}")
                         for value, (name, t, shape) in zip(result, outputs))
        if appended:  # the cache as the callable left it (written in place)
            returned += tuple(_arrays.output_bytes(array, dtype, params.kv_shape, f"{label} forward's {name} cache")
                              for array, name in zip(arrays[1:3], ("k", "v")))
        return returned

    return run


def _settings(forward, backward, tensors, device, dtypes, model, gqa):
    if not callable(forward):
        raise TypeError(f"forward must be a callable or the name of a built-in implementation, "
                        f"got {type(forward).__name__}")
    if backward is not None and not callable(backward):
        raise TypeError(f"backward must be a callable or None, got {type(backward).__name__}")
    if tensors not in _TENSORS:
        raise ValueError(f"tensors must be 'numpy' or 'torch', got {tensors!r}")
    if tensors == "torch":
        try:
            import torch  # noqa: F401
        except ImportError:
            raise ValueError("tensors='torch' needs torch, which is not importable") from None
    if dtypes is None:
        dtypes = []
    elif isinstance(dtypes, str):
        dtypes = [dtypes]
    else:
        dtypes = list(dtypes)
    for d in dtypes:
        if d not in _arrays.DTYPES:
            raise ValueError(f"unsupported dtype {d!r} (fp16, bf16, fp32)")
    for value, allowed, what in ((model, ("flash", "naive"), "model"), (gqa, ("group_sum", "per_head_rounded"), "gqa")):
        if value not in allowed:
            raise ValueError(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
    return dtypes


def _implementation(forward, backward, name, tensors, device, dtypes, model, gqa, support=None):
    """A built-in implementation's name, or a fresh C++ implementation wrapping the callables."""
    if isinstance(forward, str):
        if backward is not None:
            raise ValueError("backward must be None when forward names a built-in implementation")
        if support is not None:
            raise ValueError("support is declared by a built-in implementation itself")
        return forward
    dtypes = _settings(forward, backward, tensors, device, dtypes, model, gqa)
    label = f"python:{name}"
    return _core.Implementation(label, backward is not None, dtypes, model, gqa, _support_json(support),
                                _make_runner(forward, backward, tensors, device, label))


def _as_case(case):
    if isinstance(case, Case):
        return case
    if isinstance(case, (str, os.PathLike)):
        return read_case(case)
    raise TypeError(f"case must be a flashproof.Case or a case file path, got {type(case).__name__}")


def check(forward, case, backward=None, *, model="flash", gqa="group_sum", tensors="numpy", device=None,
          dtypes=None, reference="fast", threads=0, name="callable", max_work=None, max_memory_gib=None,
          support=None):
    """Checks an implementation on one case; returns the record `flashproof check --json` prints.

    forward(q, k, v, params) -> (o, lse); backward(q, k, v, o, lse, dout, params) -> (dq, dk, dv),
    or forward as the name of a built-in implementation ("naive", "fa2", "fa1", ...). model and gqa
    choose the arithmetic the rigorous bound assumes (core/attention_impl.h). A case costing more than
    max_work multiply-adds (default 2^36) or max_memory_gib (default: this machine's memory) is
    refused with ValueError before anything runs, as `flashproof check` refuses it. support: what
    the kernel computes (flashproof.Support); a case outside it is refused with ValueError, and
    flashproof.Unsupported raised by the callable reaches the caller.
    """
    case = _as_case(case)
    _core.check_case_cost(case._box, case.backward, max_work, max_memory_gib)
    if case.backward and backward is None and not isinstance(forward, str):
        raise ValueError("the case runs the backward: give backward=... (or case.with_backward(False))")
    impl = _implementation(forward, backward, name, tensors, device, dtypes, model, gqa, support)
    try:
        text = _core.check(case._box, impl, False, reference, _integer("threads", threads, high=4096))
    finally:
        if not isinstance(impl, str):
            impl.release()
    return json.loads(text)


def replay(forward, file, backward=None, *, model="flash", gqa="group_sum", tensors="numpy", device=None,
           threads=0, max_work=None, max_memory_gib=None, support=None):
    """Re-runs a saved case file on the implementation with its saved check options.

    A plain case gives check's record; a property's failure (properties.run, testing) gives
    {"property", "holds", "why"} for that property on the case.
    """
    case = read_case(file)
    _core.check_case_cost(case._box, case.backward, max_work, max_memory_gib)
    if case.backward and backward is None and not isinstance(forward, str):
        raise ValueError(f"case file {file} runs the backward: give backward=...")
    impl = _implementation(forward, backward, case.impl.removeprefix("python:") or "callable", tensors, device,
                           None, model, gqa, support)
    try:
        if case.property:
            holds, why = _core.replay_property(case._box, impl)
            return {"property": case.property, "holds": holds, "why": why, "case_file": str(file)}
        return json.loads(_core.check(case._box, impl, True, "fast", _integer("threads", threads, high=4096)))
    finally:
        if not isinstance(impl, str):
            impl.release()


def fuzz(forward, backward=None, *, out, seed=0, cases=None, minutes=None, dtypes=("fp16", "bf16"), name="callable",
         max_seqlen=512, max_work=2**21, case_timeout=600, shrink=True, progress=True, model="flash",
         gqa="group_sum", tensors="numpy", device=None, support=None):
    """A fuzz campaign (docs/fuzz.md) over the implementation, registered as "python:<name>".

    Each case runs in a forked child (one at a time); a crash, a hang past case_timeout or an
    exception of the callable is a crash record. Failures are shrunk and saved as case files
    (returned in failure_files; flashproof.replay re-runs them). `flashproof report OUT --out DIR`
    reads the directory. Returns the counts over all records of OUT, with "fitted" (cases moved into
    the declared support, flashproof.Support) and "unsupported" (cases the callable refused by
    raising flashproof.Unsupported, or outside the support after fitting: no record) of this run.
    """
    if (cases is None) == (minutes is None):
        raise ValueError("give exactly one of cases=N and minutes=M")
    if cases is not None:
        cases = _integer("cases", cases, low=1, high=2**63 - 1)
    if minutes is not None:
        if isinstance(minutes, bool) or not isinstance(minutes, (int, float)):
            raise TypeError(f"minutes must be a number, got {type(minutes).__name__}")
        minutes = float(minutes)
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    dtypes = list(dtypes)
    if isinstance(forward, str):
        if backward is not None:
            raise ValueError("backward must be None when forward names a built-in implementation")
        impl = forward
        direction = "both"
    else:
        if not isinstance(name, str) or not name or any(c.isspace() or c in "/," for c in name):
            raise ValueError(f"name must be a non-empty word without spaces, '/' or ',', got {name!r}")
        _settings(forward, backward, tensors, device, dtypes, model, gqa)
        label = f"python:{name}"
        impl = _core.register(label, backward is not None, dtypes, model, gqa, _support_json(support),
                              _make_runner(forward, backward, tensors, device, label))
        direction = "forward" if backward is None else "both"
    try:
        result = _core.fuzz(impl, _integer("seed", seed, high=2**64 - 1), cases, minutes, os.fspath(out), dtypes,
                            direction, _integer("max_seqlen", max_seqlen, low=1), _integer("max_work", max_work, low=1),
                            float(case_timeout), bool(shrink), bool(progress))
    finally:
        if not isinstance(impl, str):
            impl.release()
    result["out"] = os.fspath(out)
    return result


def implementations():
    """The built-in implementations of this build: [(name, where)], where = host, gpu or emulated."""
    return [(n, w) for n, w in _core.implementations() if not n.startswith("python:")]
