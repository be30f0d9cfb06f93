"""flashproof: judge any attention implementation against a certified reference.

The harness is the C++ one of `flashproof check` / `fuzz` / `replay` / `report` (module
flashproof._core), so verdicts, bounds and case files are the same; the package's console command
`flashproof` is that command line itself (flashproof._cli). See python/README.md.
"""
from ._api import CallableError, check, fuzz, implementations, replay
from ._case import Case, CertifiedTensor, Reference, generate_case, read_case
from ._params import Params
from ._report import report
from ._support import Support, Unsupported
from . import properties


def standard_alibi_slopes(heads):
    """ALiBi's slopes as the models set them (docs/spec.md "Soft cap and ALiBi"): a tuple of floats."""
    from . import _core
    return tuple(_core.standard_alibi_slopes(heads))


__all__ = ["Case", "CallableError", "CertifiedTensor", "Params", "Reference", "check", "fuzz", "generate_case",
           "implementations", "properties", "read_case", "replay", "report", "standard_alibi_slopes", "Support", "Unsupported"]
