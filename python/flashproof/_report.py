"""flashproof.report: the report of `flashproof report DIR... --out OUT` (docs/reports.md), from
Python."""
import json
import os
import sys

from . import _core


def report(campaigns, *, out, progress=True):
    """Merges campaign directories (flashproof.fuzz's out=, or `flashproof fuzz --out`) into one
    report in out: index.html, summary.md, results.json and cases/, as `flashproof report CAMPAIGNS
    --out OUT` does.

    campaigns: one directory or a list of them (shards of one campaign, or several campaigns).
    progress: print the command's lines (the path of index.html and a one-line summary) on stdout.
    Warnings (a campaign that did not end, skipped lines) go to stderr. Bad input (a directory
    without cases.jsonl, say) raises ValueError with the command's one line.

    Returns {"out", "index_html", "summary_md", "results_json": paths; "results": results.json
    parsed; "printed": what the command printed}. For a record of a Python implementation
    (python:NAME) the replay lines read `flashproof.replay(<your forward>, "FILE", ...)`.
    """
    if isinstance(campaigns, (str, os.PathLike)):
        campaigns = [campaigns]
    try:
        dirs = [os.fspath(d) for d in campaigns]
    except TypeError:
        raise TypeError(f"campaigns must be a directory or a list of directories, "
                        f"got {type(campaigns).__name__}") from None
    if not dirs:
        raise ValueError("give at least one campaign directory")
    out = os.fspath(out)
    status, printed, errors = _core.report(dirs, out)
    if status != 0:
        lines = [line for line in errors.splitlines() if line.strip()]
        message = lines[-1] if lines else f"flashproof report exited with status {status}"
        raise ValueError(message.removeprefix("flashproof report: "))
    if errors:
        sys.stderr.write(errors)
    if progress and printed:
        sys.stdout.write(printed)
    results_json = os.path.join(out, "results.json")
    with open(results_json, encoding="utf-8") as f:
        results = json.load(f)
    return {"out": out, "index_html": os.path.join(out, "index.html"), "summary_md": os.path.join(out, "summary.md"),
            "results_json": results_json, "results": results, "printed": printed}
