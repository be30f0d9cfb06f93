"""pytest helpers: a user's test of a kernel in a few lines.

    import pytest, flashproof.testing as ft

    @pytest.mark.parametrize("case", ft.cases(20, seed=1, backward=True), ids=str)
    def test_kernel(case):
        ft.assert_check(my_forward, case, backward=my_backward)

    def test_kernel_properties():
        ft.assert_properties(my_forward, backward=my_backward, names=["differential"], cases=30)

A failure saves the case as a case file (in $FLASHPROOF_CASE_DIR, default ./failed-cases) and
prints the flashproof.replay(...) call that re-runs it. Also a pytest plugin (entry point
`flashproof`): the fixture `flashproof_case_dir` is that directory.
"""
import os
import re

import pytest

from . import _api, properties
from ._case import generate_case
from ._support import Unsupported


def case_dir():
    return os.environ.get("FLASHPROOF_CASE_DIR") or "failed-cases"


def cases(count, seed=0, dtype=None, backward=None, max_seqlen=128, max_work=2**18, support=None):
    """The first `count` cases of the fuzz campaign with this seed, small by default (for
    pytest.mark.parametrize; ids=str gives each its description). support (flashproof.Support):
    each case is fitted into it, never dropped (Case.fitted says which moved: count them with
    sum(c.fitted for c in cases))."""
    return [generate_case(seed, index, dtype=dtype, backward=backward, max_seqlen=max_seqlen, max_work=max_work,
                          support=support)
            for index in range(count)]


def _name(f):
    return repr(f) if isinstance(f, str) else getattr(f, "__qualname__", getattr(f, "__name__", "forward"))


def _unjudged_reason(record):
    """Why a not-judged or out-of-domain record judged nothing, per tensor, in one line."""
    parts = []
    for t in record.get("tensors", []):
        bound = t.get("rigorous_bound", {})
        unbounded, vacuous = bound.get("unbounded", 0), bound.get("vacuous", 0)
        if t.get("verdict") in ("not-judged", "pass (baseline rule)", "fail (baseline rule)"):
            parts.append(f"{t['name']}: {unbounded} elements without a finite bound, {vacuous} with a vacuous one")
        elif t.get("verdict") == "out-of-domain":
            parts.append(f"{t['name']}: out of the domain")
    if record.get("domain_note"):
        parts.insert(0, record["domain_note"])
    return "; ".join(parts) or "see the record"


def assert_check(forward, case, backward=None, *, allow_regression=True, allow_unjudged=False, certified_only=False,
                 **options):
    """flashproof.check on the case; fails the test (saving the case) when the verdict is fail or
    fail (baseline rule), or on an accuracy regression (rule 3) with allow_regression=False; skips it
    when the callable raises flashproof.Unsupported (the case is unsupported, never a pass), and when
    the verdict is not-judged or out-of-domain (no rigorous bound judged some tensor: the case judged
    nothing there, so it is never a pass; allow_unjudged=True returns the record instead). A pass by
    the second tier (pass (baseline rule): FlashAttention's own rule judged what no rigorous bound
    could) returns the record, or skips with certified_only=True. Returns the record."""
    try:
        record = _api.check(forward, case, backward=backward, **options)
    except Unsupported as e:
        pytest.skip(f"unsupported by {_name(forward)}: {e}")
    regression = not allow_regression and record.get("regression", False)
    if record["verdict"] in ("not-judged", "out-of-domain") and not regression and not allow_unjudged:
        pytest.skip(f"flashproof check: {record['verdict']} on {case.describe()}: {_unjudged_reason(record)}")
    if record["verdict"] == "pass (baseline rule)" and certified_only and not regression:
        pytest.skip(f"flashproof check: pass (baseline rule) on {case.describe()}: no rigorous bound judged "
                    f"{_unjudged_reason(record)}")
    if record["verdict"] not in ("fail", "fail (baseline rule)") and not regression:
        return record
    reasons = [f"{t['name']}: {r}" for t in record.get("tensors", []) for r in t.get("reasons", [])]
    os.makedirs(case_dir(), exist_ok=True)
    file = os.path.join(case_dir(), re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{_name(forward)}-{case.describe()}") + ".json")
    case.save(file, note="; ".join(reasons)[:2000])
    call = (f"flashproof.replay({_name(forward)}, {file!r}"
            f"{', backward=' + _name(backward) if backward is not None else ''})")
    pytest.fail(f"flashproof check: {record['verdict']}{' (accuracy regression)' if regression else ''} on "
                f"{case.describe()}: {'; '.join(reasons) or 'see the record'}\n"
                f"case file: {file}\nreplay: {call}", pytrace=False)


def assert_properties(forward, backward=None, names=None, cases=50, seed=None, **options):
    """flashproof.properties.run; fails the test listing each failing property with its shrunk
    case file and replay call. Returns the results."""
    options.setdefault("case_dir", case_dir())
    results = properties.run(forward, backward=backward, names=names, cases=cases, seed=seed, **options)
    failed = [r for r in results if not r["passed"]]
    if failed:
        lines = [f"{r['name']}: {r['why'] or 'ran ' + str(r['cases']) + ' cases'}"
                 + (f"\n  case file: {r['case_file']}\n  replay: {r['replay']}" if r["case_file"] else "")
                 for r in failed]
        pytest.fail("flashproof properties failed:\n" + "\n".join(lines), pytrace=False)
    return results


@pytest.fixture
def flashproof_case_dir():
    """Where failing cases are saved ($FLASHPROOF_CASE_DIR or ./failed-cases)."""
    return case_dir()
