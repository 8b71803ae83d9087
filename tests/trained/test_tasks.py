"""The synthetic tasks of pe_lib.trained.tasks: targets written out by hand, masks, shapes, bad input."""

import numpy as np
import pytest

import pe_lib
from pe_lib.trained.tasks import is_causal


def test_lookback_targets_by_hand():
    tokens = np.array([[5, 1, 4, 1, 5, 9, 2]])
    targets = pe_lib.task_targets("lookback", tokens, offset=3)
    # i = 3..6 copy the token 3 places back: tokens[0..3] = 5, 1, 4, 1; i < 3 are not scored (0)
    np.testing.assert_array_equal(targets, [[0, 0, 0, 5, 1, 4, 1]])
    np.testing.assert_array_equal(pe_lib.scored_positions("lookback", 7, offset=3), [0, 0, 0, 1, 1, 1, 1])


def test_lookback_offset_one_is_the_previous_token():
    np.testing.assert_array_equal(pe_lib.task_targets("lookback", np.array([7, 8, 9]), offset=1), [0, 7, 8])


def test_reverse_targets_by_hand():
    tokens = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    np.testing.assert_array_equal(pe_lib.task_targets("reverse", tokens), [[5, 1, 4, 1, 3], [3, 5, 6, 2, 9]])
    assert pe_lib.scored_positions("reverse", 5).all()


def test_causal_only_for_lookback():
    assert is_causal("lookback") and not is_causal("reverse")


def test_batch_shapes_range_and_determinism():
    tokens, targets, counts = pe_lib.task_batch("lookback", 6, 10, vocab_size=5, offset=2, seed=3)
    assert tokens.shape == targets.shape == (6, 10) and counts.shape == (10,)
    assert tokens.dtype == np.int32 and tokens.min() >= 0 and tokens.max() <= 4
    assert len(np.unique(tokens)) == 5  # 60 draws from 5 tokens use them all
    np.testing.assert_array_equal(targets[:, 2:], tokens[:, :-2])
    again, _, _ = pe_lib.task_batch("lookback", 6, 10, vocab_size=5, offset=2, seed=3)
    np.testing.assert_array_equal(tokens, again)
    other, _, _ = pe_lib.task_batch("lookback", 6, 10, vocab_size=5, offset=2, seed=4)
    assert not np.array_equal(tokens, other)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pe_lib.task_batch("sort", 2, 8), "task must be one of 'lookback', 'reverse'"),
        (lambda: pe_lib.task_batch("reverse", 0, 8), "n_sequences must be an integer >= 1"),
        (lambda: pe_lib.task_batch("reverse", 2, 0), "seq_len must be an integer >= 1"),
        (lambda: pe_lib.task_batch("reverse", 2, 8, vocab_size=1), "vocab_size must be an integer >= 2"),
        (lambda: pe_lib.task_batch("lookback", 2, 3, offset=3), "needs seq_len > k"),
        (lambda: pe_lib.scored_positions("lookback", 8, offset=0), "offset must be an integer >= 1"),
        (lambda: pe_lib.task_targets("reverse", np.array([0.5, 1.0])), "integer array"),
        (lambda: pe_lib.task_targets("reverse", np.int64(3)), "integer array"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_first_copies_the_first_token():
    tokens = np.array([[4, 1, 2, 3], [7, 7, 0, 5]])
    assert pe_lib.task_targets("first", tokens).tolist() == [[4, 4, 4, 4], [7, 7, 7, 7]]
    assert pe_lib.scored_positions("first", 4).tolist() == [False, True, True, True]
    tokens, targets, counts = pe_lib.task_batch("first", 5, 6, seed=2)
    np.testing.assert_array_equal(targets[:, counts], np.repeat(tokens[:, :1], 5, axis=1))
    with pytest.raises(ValueError, match="first needs seq_len >= 2"):
        pe_lib.scored_positions("first", 1)
