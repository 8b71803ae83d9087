"""prediction_entropy: the mean entropy of softmax(logits), checked by hand and against the plain formula."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import pe_lib


def test_by_hand():
    assert pe_lib.prediction_entropy(np.zeros((3, 4))) == pytest.approx(np.log(4), rel=1e-15)  # uniform over 4
    by_hand = -(0.25 * np.log(0.25) + 0.75 * np.log(0.75))  # probabilities 1/4 and 3/4
    assert pe_lib.prediction_entropy([[0.0, np.log(3.0)]]) == pytest.approx(by_hand)
    assert pe_lib.prediction_entropy([[1000.0, 0.0, 0.0]]) < 1e-300  # sure of the first token; no overflow
    # the mean over rows: one uniform row over 2 (ln 2) and one sure row (0)
    assert pe_lib.prediction_entropy([[0.0, 0.0], [500.0, 0.0]]) == pytest.approx(np.log(2) / 2)


@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(2, 6)), elements=st.floats(-20, 20)))
def test_against_the_plain_formula(z):
    p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    plain = np.mean(-(p * np.log(p)).sum(axis=-1))
    assert pe_lib.prediction_entropy(z) == pytest.approx(plain, rel=1e-9, abs=1e-12)
    assert 0.0 <= pe_lib.prediction_entropy(z) <= np.log(z.shape[-1]) + 1e-12


@pytest.mark.parametrize(("logits", "message"), [
    (np.zeros((2, 1)), "at least 2 entries"),
    ([[0.0, np.nan]], "finite"),
    (3.0, r"\(\.\.\., V\)"),
])
def test_bad_input(logits, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.prediction_entropy(logits)
