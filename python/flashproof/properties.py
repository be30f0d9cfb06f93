"""The property suite (properties/, docs/properties.md) over a Python implementation: RapidCheck
generates cases, shrinks a failure to a minimal case and saves it as a case file naming the
property; flashproof.replay(forward, case_file, backward=...) re-runs the property on it.

Bitwise properties (query-permutation, batch-independence, gqa-equals-mha, prefix-independence,
forward-determinism, value-scaling in fp16) assume each query row's arithmetic depends only on that
row's inputs and the key order; an implementation that batches rows differently (a BLAS matmul
over a whole tile) may legitimately fail them.
"""
import os

from . import _api, _core
from ._case import Case, _integer


def names():
    """Every property of the suite: [(name, what it checks)]."""
    return list(_core.property_descriptions())


def run(forward, backward=None, names=None, cases=100, seed=None, *, case_dir=None, name="callable",
        model="flash", gqa="group_sum", tensors="numpy", device=None, dtypes=None, support=None):
    """Runs the properties (default: every one that applies; without backward, forward cases only
    and no gradient properties) with `cases` successful cases each. Case sizes are those of the
    suite's non-host implementations (sequences up to 160, work up to 2^20).

    Returns one dict per property: name, passed, cases, why, message (RapidCheck's report),
    case_file (the shrunk counterexample, saved in case_dir, default $FLASHPROOF_CASE_DIR or
    ./failed-cases), reproduce (RC_PARAMS="reproduce=..." re-runs the search when set in the
    environment before the first run), counterexample (a flashproof.Case) and replay (the call).
    support (flashproof.Support): generated cases are fitted into it (the message's class "fitted to
    the declared support" counts them); a case the callable refuses by raising
    flashproof.Unsupported is discarded, not failed.
    """
    impl = _api._implementation(forward, backward, name, tensors, device, dtypes, model, gqa, support)
    has_backward = backward is not None or isinstance(forward, str)
    try:
        if names is None:
            selected = list(_core.property_names(impl, has_backward))
        elif isinstance(names, str):
            selected = [names]
        else:
            selected = list(names)
        cases = _integer("cases", cases, low=1, high=2**31 - 1)
        if seed is not None:
            seed = _integer("seed", seed, high=2**64 - 1)
        saved_dir = os.environ.get("FLASHPROOF_CASE_DIR")
        if case_dir is not None:
            os.environ["FLASHPROOF_CASE_DIR"] = os.fspath(case_dir)
        try:
            results = _core.properties(impl, selected, cases, seed, has_backward, f"python/{name}/")
        finally:
            if case_dir is not None:
                if saved_dir is None:
                    os.environ.pop("FLASHPROOF_CASE_DIR", None)
                else:
                    os.environ["FLASHPROOF_CASE_DIR"] = saved_dir
    finally:
        if not isinstance(impl, str):
            impl.release()
    for r in results:
        if r["counterexample"] is not None:
            r["counterexample"] = Case._wrap(r["counterexample"])
        r["replay"] = (f"flashproof.replay({_callable_name(forward)}, {r['case_file']!r}"
                       f"{', backward=' + _callable_name(backward) if backward is not None else ''})"
                       if r["case_file"] else "")
    return results


def _callable_name(f):
    return repr(f) if isinstance(f, str) else getattr(f, "__qualname__", getattr(f, "__name__", "forward"))
