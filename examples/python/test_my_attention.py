import pytest

import flashproof.testing as ft
from my_attention import backward, forward


@pytest.mark.parametrize("case", ft.cases(12, seed=1, backward=True), ids=str)
def test_my_attention(case):
    ft.assert_check(forward, case, backward=backward, model="naive")


def test_my_attention_properties():
    ft.assert_properties(forward, backward=backward, names=["differential", "key-value-permutation"], cases=10)
