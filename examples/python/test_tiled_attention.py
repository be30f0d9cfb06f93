import pytest

import flashproof.testing as ft
from tiled_attention import SUPPORT, backward, forward

CASES = ft.cases(12, seed=2, backward=True, max_seqlen=256, support=SUPPORT)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_tiled_attention(case):
    ft.assert_check(forward, case, backward=backward, model="naive", support=SUPPORT)


def test_cases_were_fitted_into_the_support():
    assert any(case.fitted for case in CASES)  # windows and odd lengths, moved rather than dropped
