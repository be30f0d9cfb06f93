"""The case entries of a `flashproof export` directory's index.json (docs/exchange.md), checked
before any path is built from them: each "directory" must be one plain name inside the export and
each "index" a non-negative integer, so that a hostile index.json cannot make the scripts read or
write outside the export ("../x", "/abs", "a/b" are refused)."""

import re

_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def checked_entries(index):
    """index: the parsed index.json. Returns its case entries; raises ValueError (one line)."""
    cases = index.get("cases") if isinstance(index, dict) else None
    if not isinstance(cases, list):
        raise ValueError('index.json: "cases" must be a list')
    for n, entry in enumerate(cases):
        if not isinstance(entry, dict):
            raise ValueError(f"index.json: case entry {n} is not an object")
        directory, number = entry.get("directory"), entry.get("index")
        if not isinstance(directory, str) or not _NAME.fullmatch(directory) or directory in (".", ".."):
            raise ValueError(f'index.json: case entry {n}: "directory" must be one name inside the export, '
                             f"got {directory!r}")
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise ValueError(f'index.json: case entry {n}: "index" must be a non-negative integer, got {number!r}')
    return cases
