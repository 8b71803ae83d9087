"""The order-blind baseline (pe_lib.order_blind_accuracy), against loops over Counters and by hand."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def brute(task, tokens, offset):
    n, L = tokens.shape
    out = np.full(L, np.nan)
    for i in range(L):
        if task == "lookback" and i < offset:
            continue
        scores = []
        for row in tokens.tolist():
            if task == "reverse":
                if i == L - 1 - i:
                    scores.append(1.0)
                    continue
                candidates = row[:i] + row[i + 1:]  # every token but the query's own
            else:
                candidates = row[:i]  # the tokens before the query
            scores.append(max(Counter(candidates).values()) / len(candidates))
        out[i] = np.mean(scores)
    return out


@given(st.sampled_from(["lookback", "reverse"]), st.integers(1, 5), st.integers(1, 12), st.integers(2, 6),
       st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_matches_a_loop_over_counters(task, n, L, vocab, offset, seed):
    tokens = np.random.default_rng(seed).integers(0, vocab, size=(n, L))
    if task == "lookback" and offset >= L:
        with pytest.raises(ValueError, match="seq_len > k"):
            pe_lib.order_blind_accuracy(task, tokens, offset=offset)
        return
    np.testing.assert_allclose(pe_lib.order_blind_accuracy(task, tokens, offset=offset), brute(task, tokens, offset),
                               rtol=0, atol=1e-12)


def test_by_hand():
    tokens = np.array([[5, 5, 2, 7]])
    # reverse: position 0 sees 5, 2, 7 -> 1/3; position 2 sees 5, 5, 7 -> 2/3
    assert pe_lib.order_blind_accuracy("reverse", tokens).tolist() == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3])
    # lookback k=1: position 1 sees [5] -> 1; 2 sees [5, 5] -> 1; 3 sees [5, 5, 2] -> 2/3
    got = pe_lib.order_blind_accuracy("lookback", tokens, offset=1)
    assert np.isnan(got[0]) and got[1:].tolist() == pytest.approx([1, 1, 2 / 3])
    # odd length: the middle position's target is its own token
    assert pe_lib.order_blind_accuracy("reverse", np.array([[1, 2, 3]])).tolist() == pytest.approx([0.5, 1, 0.5])
    assert pe_lib.order_blind_accuracy("reverse", np.array([[4]])).tolist() == [1.0]


def test_more_candidates_make_the_guess_worse():
    tokens = np.random.default_rng(0).integers(0, 16, size=(2000, 64))
    short = np.nanmean(pe_lib.order_blind_accuracy("reverse", tokens[:, :16]))
    long = np.nanmean(pe_lib.order_blind_accuracy("reverse", tokens))
    assert 1 / 16 < long < short < 0.5


@pytest.mark.parametrize(
    "tokens, message",
    [(np.zeros(4, int), "shape"), (np.zeros((2, 3)), "integers"), (np.zeros((0, 3), int), "non-empty"),
     (np.array([[0, -1]]), "non-negative")],
)
def test_bad_input_is_refused_with_a_message(tokens, message):
    with pytest.raises(ValueError, match=message):
        pe_lib.order_blind_accuracy("reverse", tokens)
    with pytest.raises(ValueError, match="task"):
        pe_lib.order_blind_accuracy("sort", np.zeros((2, 3), int))
